"""Which puzzle next, and when to stop: Thompson sampling on the puzzle-Elo posterior.

The posterior is the static run's (stats/elo.py: logistic on Lichess puzzle ratings, prior
Normal(1500, 800^2)). Each step draws an Elo from it and plays an unused puzzle rated near
the draw: among the CANDIDATES nearest, those within WINDOW of the nearest, the one whose
motifs have been played least (so a run spreads over themes), then the nearest. A puzzle
whose rating equals the draw is the most informative for that draw (solve chance 1/2). The
draw is seeded by (seed, puzzles done), so the sequence depends only on the seed and the
results. Stop at a 90% half-width <= target, or at the cap.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chess_eval.benchmark.stats.elo import (
    INTERVAL,
    PRIOR_MEAN,
    PRIOR_SD,
    Estimate,
    puzzle_posterior,
)

TARGET = 50.0
MAX_PUZZLES = 400
TYPICAL_PUZZLES = 140  # a run's puzzles to the stop before any are played (progress estimate)
CANDIDATES = 25  # nearest unused puzzles considered for each draw
WINDOW = 50.0  # ... of which those this close to the nearest compete on themes


@dataclass(frozen=True)
class Pool:
    """The puzzles a run may choose from."""

    ratings: np.ndarray
    motifs: tuple[tuple[str, ...], ...]  # per puzzle, the themes that name a motif


def draw(ratings: Sequence[float], solved: Sequence[bool], seed: int) -> float:
    """A Thompson draw from the posterior after these results (the prior before any)."""
    done = len(ratings)
    mean, sd = (puzzle_posterior(np.asarray(ratings, float), np.asarray(solved, float))
                if done else (PRIOR_MEAN, PRIOR_SD))
    return float(np.random.default_rng([seed, done]).normal(mean, sd))


def pick(pool: Pool, used: np.ndarray, played: Counter[str], target: float) -> int:
    """The unused puzzle to play for a draw at `target` (see the module docstring)."""
    dist = np.abs(pool.ratings - target)
    dist[used] = np.inf
    k = min(CANDIDATES, int((~used).sum()))
    if k == 0:
        raise ValueError("every puzzle of the pool has been played")
    near = np.argpartition(dist, k - 1)[:k]
    near = near[dist[near] <= dist[near].min() + WINDOW]

    def load(i: int) -> float:
        motifs = pool.motifs[i]
        return sum(played[m] for m in motifs) / len(motifs) if motifs else 0.0
    return int(min(near, key=lambda i: (load(int(i)), dist[i], i)))


def puzzles_expected(estimate: Estimate | None, n: int, target: float,
                     max_puzzles: int) -> int:
    """How many puzzles the run will most likely end with: the half-width narrows as
    1/sqrt(n), so it reaches the target near n x (half/target)^2; before a finite interval,
    the median of bench/puzzle_adaptive.py."""
    if finished(estimate, n, target, max_puzzles):
        return n
    if estimate is None or estimate.kind != INTERVAL or n == 0 \
            or not (np.isfinite(estimate.lo) and np.isfinite(estimate.hi)):
        return max(n + 1, min(TYPICAL_PUZZLES, max_puzzles))
    ratio = ((estimate.hi - estimate.lo) / 2 / target) ** 2
    return int(min(max_puzzles, max(n + 1, math.ceil(n * ratio))))


def finished(estimate: Estimate | None, n: int, target: float, max_puzzles: int) -> bool:
    """Stop: a finite 90% interval within +-target, or the cap reached."""
    if n >= max_puzzles:
        return True
    return (estimate is not None and estimate.kind == INTERVAL
            and bool(np.isfinite(estimate.lo) and np.isfinite(estimate.hi))
            and (estimate.hi - estimate.lo) / 2 <= target)
