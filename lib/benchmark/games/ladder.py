"""The opponents' ladder: named, versioned rungs from a random mover to full Stockfish.

Rungs, weakest first: a uniformly random mover; "mix" rungs that play a seeded random move
with a set probability and node-limited Stockfish's best move otherwise (reproducible, and
spanning the gap below Stockfish's weakest setting); UCI_Elo settings across the engine's own
range at a node limit; full-strength Stockfish at a node limit. `calibrate` plays a gauntlet
between rungs at exactly these limits and rates them with the BTD estimator; the scale is
anchored by the one offset that best fits (least squares) the UCI_Elo rungs' nominal values.
UCI_Elo was fitted at 120+1 s against CCRL Blitz engines, so the scale is CCRL-Blitz-like:
not Lichess, not FIDE. UCI_Elo moves use the engine's clock-seeded randomness: they do not
reproduce, but every move played is cached, so a resumed run replays what was played.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lib.benchmark.core import btd
from lib.errors import DataError, FitError

MIX_NODES = 1_000  # the engine half of a mix rung: weak but instant
ELO_NODES = 20_000  # UCI_Elo rungs, searched to this many nodes per move, one thread
TOP_NODES = ELO_NODES  # the full-strength top rung: as the UCI_Elo rungs, unweakened
LADDER_FIELDS = ["rung", "spec", "anchor", "elo", "lo", "hi", "games", "score", "nu", "engine"]


@dataclass(frozen=True)
class Rung:
    """One opponent of the ladder."""

    name: str  # versioned: a changed spec gets a new name
    spec: str  # a player spec that make_player accepts
    anchor: int | None = None  # the nominal UCI_Elo, for the scale's offset
    elo: float = float("nan")  # measured by calibrate
    lo: float = float("nan")  # 90% interval
    hi: float = float("nan")
    games: int = 0
    score: float = float("nan")  # its mean score in the calibration games


MIX_PERCENTS = (95, 90, 80, 70, 60, 50, 40, 30, 20, 10)  # random-move shares of mix rungs


def default_rungs(elo_min: int, elo_max: int, step: int = 150) -> list[Rung]:
    """Random, mix rungs, UCI_Elo from the engine's minimum to its maximum, full strength.

    UCI_Elo rungs are 100 apart at the bottom, then `step` apart, with two more between
    min + 500 and min + 800: there Stockfish 15.1's weakening picks its move two plies
    deeper per rung (UCI_Elo sets a Skill level whose whole part fixes the pick depth), and
    a calibration measured 670 Elo between 1850 and 2000 at these node limits.
    """
    rungs = [Rung("random@1", "random")]
    for percent in MIX_PERCENTS:
        rungs.append(Rung(f"mix{percent}@1", f"mix:random={percent},nodes={MIX_NODES}"))
    elos = [elo_min + d for d in (0, 100, 200, 350, 500, 575, 650, 750, 800)]
    elos += list(range(elo_min + 800 + step, elo_max - step // 2, step)) + [elo_max]
    for elo in sorted({e for e in elos if e <= elo_max}):
        rungs.append(Rung(f"sf{elo}@1", f"stockfish:elo={elo},nodes={ELO_NODES}", anchor=elo))
    rungs.append(Rung("sf-full@1", f"stockfish:nodes={TOP_NODES}"))
    return rungs


def gauntlet(n_rungs: int, games: int) -> list[tuple[int, int]]:
    """The calibration pairs (weaker, stronger): `games` per adjacent pair, half as many
    between rungs two apart (they tie the chain together)."""
    pairs = []
    for i in range(n_rungs - 1):
        pairs += [(i, i + 1)] * games
        if i + 2 < n_rungs:
            pairs += [(i, i + 2)] * (games // 2)
    return pairs


def rate(rungs: list[Rung], white: np.ndarray, black: np.ndarray,
         scores: np.ndarray) -> tuple[list[Rung], float]:
    """The rungs rated by a joint BTD fit, anchored to the UCI_Elo rungs; and nu."""
    pool = btd.fit_pool(len(rungs), white, black, scores)
    anchored = [i for i, r in enumerate(rungs) if r.anchor is not None]
    offset = float(np.mean([rungs[i].anchor - pool.ratings[i] for i in anchored]))  # type: ignore
    out = []
    for i, rung in enumerate(rungs):
        # The spread of the rung's rating relative to the anchors' mean, which sets the scale.
        a = -np.isin(np.arange(len(rungs)), anchored).astype(float) / len(anchored)
        a[i] += 1
        variance = float(a @ pool.cov @ a)
        if variance <= 0 and np.any(a):  # only the anchor itself is known exactly
            raise FitError(f"ladder fit of {len(rungs)} rungs on {len(scores)} games: rung "
                           f"{rung.name} has no positive variance")
        sd = float(np.sqrt(max(variance, 0.0)))
        played = (white == i) | (black == i)
        own = np.where(white == i, scores, 1 - scores)[played]
        elo = float(pool.ratings[i] + offset)
        out.append(Rung(rung.name, rung.spec, rung.anchor, elo, elo - btd.Z90 * sd,
                        elo + btd.Z90 * sd, int(played.sum()),
                        float(own.mean()) if played.any() else float("nan")))
    return out, pool.nu


@dataclass(frozen=True)
class Ladder:
    """A calibrated ladder."""

    rungs: list[Rung]
    nu: float  # BTD draw parameter from the calibration games
    engine: str  # name and version of the engine it was measured with

    @property
    def elos(self) -> np.ndarray:
        """The rungs' measured Elos, weakest first."""
        return np.array([r.elo for r in self.rungs])


def ladder_rows(ladder: Ladder) -> list[dict[str, object]]:
    """The ladder as CSV rows."""
    return [{"rung": r.name, "spec": r.spec, "anchor": "" if r.anchor is None else r.anchor,
             "elo": round(r.elo), "lo": round(r.lo), "hi": round(r.hi), "games": r.games,
             "score": f"{r.score:.3f}", "nu": f"{ladder.nu:.4f}", "engine": ladder.engine}
            for r in ladder.rungs]


def load_ladder(path: Path) -> Ladder:
    """The committed ladder.csv, checked: one line naming the row on any problem."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise DataError(f"cannot read the ladder {path}: {exc.strerror}; run "
                        "'benchmark.py calibrate' to make one") from exc
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8") from exc
    if not rows or set(LADDER_FIELDS) - set(rows[0]):
        raise DataError(f"{path}: not a ladder file (expected columns {LADDER_FIELDS})")
    rungs = []
    for number, row in enumerate(rows, start=2):
        try:
            rungs.append(Rung(row["rung"], row["spec"],
                              int(row["anchor"]) if row["anchor"] else None,
                              float(row["elo"]), float(row["lo"]), float(row["hi"]),
                              int(row["games"]), float(row["score"])))
            nu = float(row["nu"])
        except (TypeError, ValueError) as exc:
            raise DataError(f"{path}: line {number}: {exc}") from exc
        if not np.isfinite(rungs[-1].elo) or not nu >= 0:
            raise DataError(f"{path}: line {number}: Elo and nu must be finite numbers")
    if any(b.elo <= a.elo for a, b in zip(rungs, rungs[1:], strict=False)):
        raise DataError(f"{path}: rungs must be listed weakest first with rising Elo")
    return Ladder(rungs, nu, rows[0]["engine"])
