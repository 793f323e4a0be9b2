"""Lichess's game accuracy, computed as lila computes it (modules/analyse, AccuracyPercent).

A side's game accuracy is the mean of two means of its move accuracies: one weighted by how
volatile the game was around each move (the standard deviation of White's win% over a window
of positions), one harmonic. Pure functions of the evals (cp for White), nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

CP_CAP = 1000  # an eval counts at most this much either way (lila's winning chances)
WIN_K = 0.00368208  # the slope of lila's win% curve, per cp
# lila's fit of a move's accuracy to the drop in win%: A e^(-K drop) + B, plus one point
# for the analysis's own imperfection.
ACC_A, ACC_K, ACC_B = 103.1668100711649, 0.04354415386753951, -3.166924740191411
UNCERTAINTY_BONUS = 1.0
WEIGHT_MIN, WEIGHT_MAX = 0.5, 12.0  # a window's standard deviation counts within these
WINDOW_MIN, WINDOW_MAX = 2, 8  # the window holds moves / 10 positions, within these


def win_percent(cp: int | float) -> float:
    """White's winning chances in percent (0-100) for an eval of `cp` for White, the eval
    capped to +-CP_CAP: 50 + 50 (2 / (1 + e^(-WIN_K cp)) - 1)."""
    capped = max(-CP_CAP, min(CP_CAP, cp))
    return 50 + 50 * (2 / (1 + math.exp(-WIN_K * capped)) - 1)


def move_accuracy(before: float, after: float) -> float:
    """A move's accuracy (0-100) from the mover's win% before and after it: 100 when it did
    not drop, else ACC_A e^(-ACC_K drop) + ACC_B plus the uncertainty bonus, clamped."""
    if after >= before:
        return 100.0
    raw = ACC_A * math.exp(-ACC_K * (before - after)) + ACC_B + UNCERTAINTY_BONUS
    return max(0.0, min(100.0, raw))


def window_size(moves: int) -> int:
    """How many positions a volatility window holds: moves // 10, within 2..8."""
    return max(WINDOW_MIN, min(WINDOW_MAX, moves // 10))


def windows(wins: Sequence[float]) -> list[list[float]]:
    """One window of win% per move (`wins`: the start's and each move's after it): the
    first window repeated (size - 2) times, then every run of `size` consecutive values."""
    size = window_size(len(wins) - 1)
    first = list(wins[:size])
    repeated = [first] * max(0, min(size, len(wins)) - 2)
    sliding = [list(wins[i:i + size]) for i in range(max(1, len(wins) - size + 1))]
    return repeated + sliding


def volatility(window: Sequence[float]) -> float:
    """A window's weight: the population standard deviation of its values, within
    WEIGHT_MIN..WEIGHT_MAX."""
    mean = sum(window) / len(window)
    sd = math.sqrt(sum((x - mean) ** 2 for x in window) / len(window))
    return max(WEIGHT_MIN, min(WEIGHT_MAX, sd))


def harmonic_mean(values: Sequence[float]) -> float:
    """n / sum(1 / max(1, v)), as lila's Maths.harmonicMean (a 0 counts as 1)."""
    return len(values) / sum(1 / max(1.0, v) for v in values)


def weighted_mean(pairs: Sequence[tuple[float, float]]) -> float | None:
    """sum(v w) / sum(w) over (value, weight) pairs; None when the weights sum to 0."""
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else None


@dataclass(frozen=True)
class GameAccuracy:
    """Each side's game accuracy (None for a side with no move) and its parts."""

    white: float | None
    black: float | None
    moves: tuple[float, ...]  # every move's accuracy, in order
    weights: tuple[float, ...]  # every move's volatility weight, in order


def game_accuracy(evals: Sequence[int], white_first: bool) -> GameAccuracy:
    """Lichess's game accuracy of both sides from the eval (cp for White) of every position:
    evals[0] the start's, evals[i + 1] after move i. Per side, the mean of the volatility-
    weighted mean and the harmonic mean of its move accuracies."""
    wins = [win_percent(cp) for cp in evals]
    weights = [volatility(w) for w in windows(wins)] if len(wins) > 1 else []
    accuracies, sides = [], []
    for i, (prev, nxt) in enumerate(zip(wins, wins[1:], strict=False)):
        white = (i % 2 == 0) == white_first
        # The mover's win% before and after: White's as it is, Black's mirrored.
        accuracies.append(move_accuracy(prev, nxt) if white else move_accuracy(nxt, prev))
        sides.append(white)

    def side(white: bool) -> float | None:
        own = [(a, w) for a, w, s in zip(accuracies, weights, sides, strict=True)
               if s == white]
        if not own:
            return None
        weighted = weighted_mean(own)
        if weighted is None:
            return None
        return (weighted + harmonic_mean([a for a, _ in own])) / 2

    return GameAccuracy(side(True), side(False), tuple(accuracies), tuple(weights))
