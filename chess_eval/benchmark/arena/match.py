"""Many games at once: worker threads, each with its own judge engine, and a game store;
and `play_job`, the Dask task of an engine-only (calibration) game.

Finished games are stored in SQLite (committed one by one) under their key, so a rerun skips
them; a game cut short resumes from the answer cache, move by move. Workers are daemon
threads, so Ctrl-C ends a run at once.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol

from chess_eval.benchmark.arena.game import (
    RULE,
    Adjudication,
    FullJudge,
    GameRecord,
    ScreenedJudge,
    play_game,
    side_score,
)
from chess_eval.benchmark.core.turns import Condition, GameAborted, Side, Start
from chess_eval.benchmark.model.interface import Reply
from chess_eval.benchmark.players.player import EnginePlayer
from chess_eval.benchmark.question.questions import Question
from chess_eval.cluster import worker_engine
from chess_eval.engine import Engine, EngineSettings
from chess_eval.errors import EngineError
from chess_eval.kvstore import JsonStore, MemoryStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GameJob:
    """One game to play."""

    key: str  # unique within the store; the seed of everything random in the game
    white: Side
    black: Side
    start: Start
    ply_cap: int
    rule: Adjudication = RULE  # the adjudication rule: the ladder's
    rung: int = -1  # a rated player's game: the ladder index of its opponent
    index: int = 0  # its place in the run's schedule
    first_white: bool = True  # the first player (play's rated one) has White
    condition: str = Condition.STANDARD  # its start condition

    def played(self, record: GameRecord | None, aborted: str | None = None,
               stored: bool = False) -> Played:
        """Its outcome: `record`, or None and why it was aborted."""
        return Played(self.key, record, aborted, stored, self.index, self.first_white,
                      self.rung, self.condition)


@dataclass(frozen=True)
class Played:
    """A game of a run, played or aborted: the one record of both, however it was played (a
    pool's thread, an Inspect sample) or read back (the store, an Inspect log)."""

    key: str  # its key in the store ("" where read back from a log)
    record: GameRecord | None  # None: aborted (unrated; a rerun plays it)
    aborted: str | None = None  # why it was aborted
    stored: bool = False  # the record came from the store
    # Its place in the run's schedule: in a match two a pair, the first player White in the
    # pair's first; in play each start twice, the model White first.
    index: int = 0
    first_white: bool = True  # the first player (play's rated one) has White
    rung: int = -1  # a rated player's game: the ladder index of its opponent
    condition: str = Condition.STANDARD  # its start condition

    @property
    def pair(self) -> int:
        """A match's pair (both games of a pair start from one opening)."""
        return self.index // 2

    @property
    def score(self) -> float:
        """The first player's score."""
        assert self.record is not None
        return side_score(self.record, self.first_white)


class GamePool:
    """`size` daemon worker threads that live as long as the pool, each with its own judge
    engine; engine players keep one engine per thread, so they are reused across batches.
    Ctrl-C in the main thread leaves the daemon threads behind; the process ends at once."""

    def __init__(self, games: JsonStore, cache: JsonStore, engine: EngineSettings,
                 size: int) -> None:
        self.games, self.cache, self.engine, self.size = games, cache, engine, size
        self._jobs: queue.SimpleQueue[GameJob | None] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[Played | BaseException] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> GamePool:
        return self

    def __exit__(self, *exc: object) -> None:
        for _ in self._threads:
            self._jobs.put(None)  # each worker ends after its current game

    def _work(self) -> None:
        try:
            with Engine(self.engine) as judge:
                while (job := self._jobs.get()) is not None:
                    self._done.put(play_one(job, judge, self.games, self.cache))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            self._done.put(exc)

    def play(self, jobs: list[GameJob],
             preflight: Callable[[], None] | None = None) -> Iterator[Played]:
        """Outcomes of all jobs: stored games first, then the rest as they finish.
        `preflight` runs before the first game that is not stored."""
        todo = []
        for job in jobs:
            hit = self.games.get(job.key)
            if hit is not None:
                yield job.played(GameRecord(**hit), stored=True)
            else:
                todo.append(job)
        if not todo:
            return
        if preflight is not None:
            preflight()
        while len(self._threads) < min(self.size, len(todo)):
            thread = threading.Thread(target=self._work, daemon=True)
            thread.start()
            self._threads.append(thread)
        for job in todo:
            self._jobs.put(job)
        for _ in todo:
            item = self._next()
            if isinstance(item, BaseException):
                raise item
            yield item

    def _next(self) -> Played | BaseException:
        while True:  # a bounded wait keeps Ctrl-C deliverable
            try:
                return self._done.get(timeout=0.5)
            except queue.Empty:
                continue


PLAYERS = "players"  # the worker's engine slot the players of engine-only games move on


@dataclass(frozen=True)
class OnEngine:
    """An engine player that moves on a given engine: a Dask worker's, kept across games.
    Its moves are the player's own (each starts from a cleared hash)."""

    player: EnginePlayer
    engine: Engine
    max_concurrency: int | None = 1

    @property
    def id(self) -> str:
        """The player's identity."""
        return self.player.id

    @property
    def answered_by(self) -> str:
        """The player's engine."""
        return self.player.answered_by

    def answer(self, question: Question, prompt: str) -> Reply:
        """The player's move, on this engine."""
        return self.player.answer_with(self.engine, question, prompt)

    def preflight(self) -> None:
        """Nothing to check: an engine."""

    def close(self) -> None:
        """The engine belongs to the worker."""


def on_worker(side: Side) -> Side:
    """The side with its engine player moving on this Dask worker's players' engine."""
    if not isinstance(side.player, EnginePlayer):
        return side  # the random mover needs no engine
    engine = worker_engine(side.player.engine_settings, PLAYERS)
    return replace(side, player=OnEngine(side.player, engine))


def play_job(judge: Engine, job: GameJob) -> tuple[GameRecord | None, str | None]:
    """The task a Dask worker runs for an engine-only game: (record, None), or (None, why
    it was aborted). The players move on the worker's players' engine and the screened judge
    searches on `judge`, both kept across games; a judge that dies has the game redone from
    its start on a fresh engine. Moves are cached for this game only."""
    white, black = on_worker(job.white), on_worker(job.black)
    try:
        return judge.run(job.start.board(), lambda engine: play_game(
            job.key, white, black, job.start, ScreenedJudge(engine, job.rule), MemoryStore(),
            job.ply_cap)), None
    except (GameAborted, EngineError) as exc:  # an engine that failed on a position, again
        return None, str(exc)


def play_one(job: GameJob, judge: Engine, games: JsonStore, cache: JsonStore) -> Played:
    """One game judged on `judge`, its answers through `cache`, stored in `games` when it
    ends (an aborted game is not stored: a rerun plays it)."""
    try:
        record = play_game(job.key, job.white, job.black, job.start,
                           FullJudge(judge, job.rule), cache, job.ply_cap)
    except GameAborted as exc:
        log.warning("game %s aborted, unrated: %s", job.key, exc)
        return job.played(None, str(exc))
    games.put(job.key, record.as_dict())
    games.commit()
    return job.played(record)


def stored_or_played(job: GameJob, settings: EngineSettings, games: JsonStore,
                     cache: JsonStore) -> Played:
    """The game as `games` holds it, else played now on a judge engine of its own (one
    game's whole life on the calling thread: a sample's, in the Inspect tasks)."""
    hit = games.get(job.key)
    if hit is not None:
        return job.played(GameRecord(**hit), stored=True)
    with Engine(settings) as judge:
        return play_one(job, judge, games, cache)


class Pool(Protocol):
    """Where a batch of games is played: `match.GamePool` (worker threads), or the samples
    of the Inspect task."""

    def __enter__(self) -> Pool: ...

    def __exit__(self, *exc: object) -> None: ...

    def play(self, jobs: list[GameJob],
             preflight: Callable[[], None] | None = None) -> Iterator[Played]:
        """Outcomes of all jobs, as they finish."""
        ...


PoolFactory = Callable[[JsonStore, JsonStore, EngineSettings, int], Pool]
