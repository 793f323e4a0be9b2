"""Calibrate the ladder: a gauntlet between rungs at play's limits, rated by BTD."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib.benchmark.core.players import Player, make_player
from lib.benchmark.core.progress import Progress
from lib.benchmark.core.turns import ENGINE_TEMPLATE, Side
from lib.benchmark.games.game import PLY_CAP, WHITE_SCORE, standard_start
from lib.benchmark.games.ladder import Ladder, Rung, gauntlet, rate
from lib.benchmark.games.match import GameJob, GamePool
from lib.engine import Engine, EngineSettings
from lib.kvstore import JsonStore

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class CalibrationConfig:
    """How the gauntlet is played."""

    games: int  # games per adjacent pair of rungs (half as many two rungs apart)
    concurrency: int  # games at once (one judge and one engine per rung per game thread)
    seed: int  # seeds the mix and random rungs
    ply_cap: int = PLY_CAP


def engine_range(settings: EngineSettings) -> tuple[int, int, str]:
    """The engine's UCI_Elo limits (read from its options) and its name."""
    with Engine(settings) as engine:
        return (*engine.option_range("UCI_Elo"), engine.name)


def calibrate(rungs: list[Rung], config: CalibrationConfig, settings: EngineSettings,
              store: Path, engine_name: str) -> Ladder:
    """Play (or resume) the gauntlet and rate the rungs."""
    players = [make_player(r.spec, None, settings.path, config.seed, config.concurrency)
               for r in rungs]
    jobs = _jobs(rungs, players, config)
    games = JsonStore(store, "games")
    cache = JsonStore(store, "answers")
    white, black, scores = [], [], []
    index = {p.id: i for i, p in enumerate(players)}
    progress = Progress(len(jobs), "calibrate", kinds=("decisive", "draw", "aborted"),
                        unit="game")
    try:
        with GamePool(games, cache, settings, config.concurrency) as pool:
            for played in pool.play(jobs):
                record = played.record
                if record is None:
                    progress.update("aborted", played.stored)
                    continue
                white.append(index[record.white])
                black.append(index[record.black])
                scores.append(WHITE_SCORE[record.result])
                progress.update("draw" if record.result == "1/2-1/2" else "decisive",
                                played.stored)
    finally:
        progress.close()
        games.close()
        cache.close()
        for player in players:
            player.close()
    rated, nu = rate(rungs, np.array(white), np.array(black), np.array(scores))
    rated.sort(key=lambda r: r.elo)
    return Ladder(rated, nu, engine_name)


def _jobs(rungs: list[Rung], players: list[Player], config: CalibrationConfig) -> list[GameJob]:
    jobs = []
    count: dict[tuple[int, int], int] = {}
    for weak, strong in gauntlet(len(rungs), config.games):
        n = count[(weak, strong)] = count.get((weak, strong), 0) + 1
        pair = (players[weak], players[strong]) if n % 2 else (players[strong], players[weak])
        key = f"cal:{config.seed}:{rungs[weak].name}:{rungs[strong].name}:{n}"
        jobs.append(GameJob(key, Side(pair[0], ENGINE_TEMPLATE), Side(pair[1], ENGINE_TEMPLATE),
                            standard_start(), config.ply_cap))
    return jobs

