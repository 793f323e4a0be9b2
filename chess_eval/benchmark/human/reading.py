"""A game Elo on the reference ladder as the crosswalk reads it: its mean and its error, split
into the run's own part (its games, independent of every other reading) and the ladder's part
(shared with every reading on the ladder through the rungs' covariance)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from chess_eval.benchmark.stats.btd import Z90
from chess_eval.benchmark.stats.elo import ABOVE, BELOW, INTERVAL


@dataclass(frozen=True)
class Reading:
    """A game Elo on the reference ladder, its error split into the run's own and the
    ladder's (which every reading on the ladder shares through the rungs)."""

    mean: float  # the estimate (Elo)
    own_sd: float  # the games' part of its error, independent of every other reading
    ladder_sd: float  # the ladder's part (used alone where the weights are unknown)
    weights: tuple[float, ...] = ()  # d(reading)/d(rung Elo), ladder order; () unknown
    games: int | None = None  # the games it rests on, where known (for the games a figure needs)

    @property
    def sd(self) -> float:
        """The whole standard error."""
        return math.hypot(self.own_sd, self.ladder_sd)


def covariance(a: Reading, b: Reading, cov: np.ndarray | None, same: bool = False) -> float:
    """The covariance of two readings' errors: their own parts where they are one reading,
    the ladder's part through the rungs' covariance where both know their weights (else
    independent)."""
    own = a.own_sd ** 2 if same else 0.0
    if cov is not None and len(a.weights) == len(b.weights) == len(cov):
        return own + float(np.asarray(a.weights) @ cov @ np.asarray(b.weights))
    return own + (a.ladder_sd ** 2 if same else 0.0)


def run_reading(elo: dict[str, Any], ladder: dict[str, Any] | None) -> Reading | None:
    """A result's game Elo as a Reading: its mean and sd from the interval (or a one-sided
    bound taken as the mean, for its expected score), the ladder's part from its condition's
    ladder block where given; None where there is no estimate."""
    kind = elo.get("kind", INTERVAL)
    if kind == INTERVAL and None not in (elo.get("mean"), elo.get("lo"), elo.get("hi")):
        mean, sd = float(elo["mean"]), (float(elo["hi"]) - float(elo["lo"])) / (2 * Z90)
    elif kind == BELOW and elo.get("hi") is not None:
        mean, sd = float(elo["hi"]), 0.0  # a 95% bound: its score is a bound too
    elif kind == ABOVE and elo.get("lo") is not None:
        mean, sd = float(elo["lo"]), 0.0
    else:
        return None
    part = ladder or {}
    ladder_sd = min(float(part.get("sd") or 0.0), sd)
    own = math.sqrt(max(sd ** 2 - ladder_sd ** 2, 0.0))
    games = elo.get("n")
    return Reading(mean, own, ladder_sd, tuple(float(w) for w in part.get("weights") or ()),
                   int(games) if isinstance(games, (int, float)) and games > 0 else None)
