"""Calibrate the ladder: a gauntlet between rungs at play's limits, rated by BTD.

The games run on the Dask cluster (`lib.cluster`): each task carries one game's players and
start and returns its record; the client stores every finished game in SQLite at once, so a
rerun after Ctrl-C or kill -9 plays only the games that were missing. The rating reads the
games in the gauntlet's order, whatever order they finished in.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib.benchmark.core.players import Player, make_player
from lib.benchmark.core.progress import Progress
from lib.benchmark.core.turns import ENGINE_TEMPLATE, Side, Start
from lib.benchmark.games.game import PLY_CAP, WHITE_SCORE, GameRecord, standard_start
from lib.benchmark.games.ladder import Ladder, Rung, gauntlet, rate
from lib.benchmark.games.match import GameJob, play_job
from lib.cluster import ClusterSettings, EngineCluster
from lib.engine import Engine, EngineSettings
from lib.kvstore import JsonStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CalibrationConfig:
    """How the gauntlet is played."""

    games: int  # games per adjacent pair of rungs (half as many two rungs apart)
    cluster: ClusterSettings  # where the games run (one game per worker at a time)
    seed: int  # seeds the mix and random rungs
    ply_cap: int = PLY_CAP
    openings: tuple[Start, ...] = ()  # the book: each pair plays each opening with both
    # colours; none: every game starts from the initial position


def engine_range(settings: EngineSettings) -> tuple[int, int, str]:
    """The engine's UCI_Elo limits (read from its options) and its name."""
    with Engine(settings) as engine:
        return (*engine.option_range("UCI_Elo"), engine.name)


def calibrate(rungs: list[Rung], config: CalibrationConfig, settings: EngineSettings,
              store: Path, engine_name: str) -> Ladder:
    """Play (or resume) the gauntlet and rate the rungs."""
    players = [make_player(r.spec, None, settings.path, config.seed, 1) for r in rungs]
    jobs = _jobs(rungs, players, config)
    games = JsonStore(store, "games")
    records: dict[str, GameRecord] = {}
    progress = Progress(len(jobs), "calibrate", kinds=("decisive", "draw", "aborted"),
                        unit="game")
    try:
        todo = []
        for job in jobs:
            hit = games.get(job.key)
            if hit is None:
                todo.append(job)
            else:
                records[job.key] = GameRecord(**hit)
                progress.update(_kind(records[job.key]), True)
        if todo:
            with EngineCluster(settings, config.cluster) as cluster:
                for job, (record, aborted) in cluster.as_completed(play_job, todo):
                    if record is None:
                        log.warning("game %s aborted, unrated: %s", job.key, aborted)
                        progress.update("aborted", False)
                        continue
                    games.put(job.key, record.as_dict())
                    games.commit()  # one game at a time: an interruption loses none
                    records[job.key] = record
                    progress.update(_kind(record), False)
    finally:
        progress.close()
        games.close()
        for player in players:
            player.close()
    return _rate(rungs, players, [records[j.key] for j in jobs if j.key in records],
                 engine_name)


def _kind(record: GameRecord) -> str:
    return "draw" if record.result == "1/2-1/2" else "decisive"


def _rate(rungs: list[Rung], players: list[Player], records: list[GameRecord],
          engine_name: str) -> Ladder:
    index = {p.id: i for i, p in enumerate(players)}
    white = np.array([index[r.white] for r in records])
    black = np.array([index[r.black] for r in records])
    scores = np.array([WHITE_SCORE[r.result] for r in records])
    rated, nu = rate(rungs, white, black, scores)
    rated.sort(key=lambda r: r.elo)
    return Ladder(rated, nu, engine_name)


def _opening(config: CalibrationConfig, pair: str, index: int) -> Start:
    """The pair's index-th opening: pairs begin at different places in the book."""
    if not config.openings:
        return standard_start()
    offset = int(hashlib.sha256(f"{config.seed}:{pair}".encode()).hexdigest()[:8], 16)
    return config.openings[(offset + index) % len(config.openings)]


def _jobs(rungs: list[Rung], players: list[Player], config: CalibrationConfig) -> list[GameJob]:
    jobs = []
    count: dict[tuple[int, int], int] = {}
    for weak, strong in gauntlet(len(rungs), config.games):
        n = count[(weak, strong)] = count.get((weak, strong), 0) + 1
        pair = (players[weak], players[strong]) if n % 2 else (players[strong], players[weak])
        names = f"{rungs[weak].name}:{rungs[strong].name}"
        start = _opening(config, names, (n - 1) // 2)
        key = f"cal:{config.seed}:{names}:{n}:{start.label}"
        jobs.append(GameJob(key, Side(pair[0], ENGINE_TEMPLATE), Side(pair[1], ENGINE_TEMPLATE),
                            start, config.ply_cap))
    return jobs
