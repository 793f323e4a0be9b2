"""Many games at once: worker threads, each with its own judge engine, and a game store.

Finished games are stored in SQLite (committed one by one) under their key, so a rerun skips
them; a game cut short resumes from the answer cache, move by move. Workers are daemon
threads, so Ctrl-C ends a run at once.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lib.benchmark.game import GameAborted, GameRecord, Side, Start, play_game
from lib.engine import Engine, EngineSettings
from lib.kvstore import JsonStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GameJob:
    """One game to play."""

    key: str  # unique within the store; the seed of everything random in the game
    white: Side
    black: Side
    start: Start
    ply_cap: int


@dataclass(frozen=True)
class Played:
    """A job's outcome: a record, or why the game was aborted (unrated)."""

    job: GameJob
    record: GameRecord | None
    aborted: str | None
    stored: bool  # the record came from the store


def play_all(jobs: list[GameJob], games: JsonStore, cache: JsonStore, engine: EngineSettings,
             concurrency: int, preflight: Callable[[], None] | None = None) -> Iterator[Played]:
    """Outcomes of all jobs: stored games first, then the rest as they finish. `preflight`
    runs once before the first game that is not stored."""
    todo = []
    for job in jobs:
        hit = games.get(job.key)
        if hit is not None:
            yield Played(job, GameRecord(**hit), None, stored=True)
        else:
            todo.append(job)
    if not todo:
        return
    if preflight is not None:
        preflight()
    jobs_q: queue.SimpleQueue[GameJob] = queue.SimpleQueue()
    for job in todo:
        jobs_q.put(job)
    done: queue.SimpleQueue[Played | BaseException] = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        try:
            with Engine(engine) as judge:
                while not stop.is_set():
                    try:
                        job = jobs_q.get_nowait()
                    except queue.Empty:
                        return
                    done.put(_play(job, judge, games, cache))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            done.put(exc)

    for _ in range(min(concurrency, len(todo))):
        threading.Thread(target=work, daemon=True).start()
    try:
        for _ in todo:
            while True:
                try:
                    item = done.get(timeout=0.5)
                    break
                except queue.Empty:
                    continue
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()


def _play(job: GameJob, judge: Engine, games: JsonStore, cache: JsonStore) -> Played:
    try:
        record = play_game(job.key, job.white, job.black, job.start, judge, cache, job.ply_cap)
    except GameAborted as exc:
        log.warning("game %s aborted, unrated: %s", job.key, exc)
        return Played(job, None, str(exc), stored=False)
    games.put(job.key, record.as_dict())
    games.commit()
    return Played(job, record, None, stored=False)

