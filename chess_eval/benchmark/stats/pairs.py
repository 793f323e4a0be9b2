"""The statistics of a match played in colour-reversed pairs: each pair (one opening, each
player White once) scores 0, 1/2, 1, 3/2 or 2 for the first player; the five counts are the
pentanomial, as fishtest counts pairs. The pairs are independent where the games are not
(an opening that favours White favours each player once), so the score's variance is
estimated from the pairs' totals: s = mean(x) / 2, var(s) = var(x) / (4 N) with x a pair's
total and var(x) the variance of the pentanomial frequencies with half a pair added to each
of the five cells (so that a few identical pairs, say every pair drawn 1-1, do not claim a
width of zero; the mean is the pairs' own). The Elo
difference is read through the model every other Elo here is read through, Bradley-Terry-
Davidson with a draw parameter nu (btd.py): the difference whose expected score is s, which
is the games' maximum-likelihood difference under that model, and its interval the score
interval's ends mapped the same way. nu is the reference ladder's (the match result records
which): a match's own draws would give another scale for each match, and near equal strength
the logistic reading (nu = 0) is about 0.82 of the ladder's. A match every game of which one
player won says only how far apart they are at least: a one-sided 95% bound (Clopper-Pearson
on the games)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats

from chess_eval.benchmark.stats.btd import difference_of_score

Z90 = float(stats.norm.ppf(0.95))  # the 90% interval's half-width in sd
ONE_SIDED = 0.05  # a bound's tail
PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)  # a pair's total for the first player
MIN_PAIRS = 5  # pairs before the stop rule may end a match
TARGET = 70.0  # stop when the Elo difference's 90% half-width is at most this
MAX_GAMES = 200  # or at this many games


@dataclass(frozen=True)
class PairStats:
    """A match's score and Elo difference from its pairs (the first player's view)."""

    pairs: int  # complete pairs
    pentanomial: tuple[int, int, int, int, int]  # pairs scoring 0, 1/2, 1, 3/2, 2
    score: float  # mean score a game
    score_lo: float  # its 90% interval
    score_hi: float
    nu: float  # the BTD draw parameter the Elo difference is read with
    elo: float | None  # the Elo difference (None: a bound only)
    elo_lo: float  # the 90% interval's ends, or the bound's: -inf / +inf on the open side
    elo_hi: float

    @property
    def half_width(self) -> float:
        """The Elo interval's half-width (inf for a bound)."""
        return (self.elo_hi - self.elo_lo) / 2


def elo_of(score: float, nu: float) -> float:
    """The BTD Elo difference (draw parameter nu) of a mean score (inf at 0 or 1)."""
    return difference_of_score(score, nu)


def pentanomial(totals: Sequence[float]) -> tuple[int, int, int, int, int]:
    """How many pairs scored each of 0, 1/2, 1, 3/2 and 2."""
    counts = [0] * 5
    for x in totals:
        k = round(x * 2)
        if not 0 <= k <= 4 or abs(k / 2 - x) > 1e-9:
            raise ValueError(f"a pair's total must be one of {PAIR_SCORES}, not {x}")
        counts[k] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def pair_variance(counts: Sequence[int], prior: float = 0.5) -> float:
    """The variance of a pair's total under the pentanomial frequencies, `prior` pairs added
    to each cell."""
    weights = [c + prior for c in counts]
    total = sum(weights)
    mean = sum(w * x for w, x in zip(weights, PAIR_SCORES, strict=True)) / total
    return sum(w * (x - mean) ** 2 for w, x in zip(weights, PAIR_SCORES, strict=True)) / total


def pair_stats(totals: Sequence[float], nu: float) -> PairStats:
    """The score and Elo difference (BTD, draw parameter nu) of pairs with these totals (at
    least one pair)."""
    if not totals:
        raise ValueError("no complete pair: nothing to estimate")
    n = len(totals)
    counts = pentanomial(totals)
    score = sum(totals) / n / 2
    if score in (0.0, 1.0):  # every game won by one side: a bound only
        games = 2 * n
        edge = 1 - ONE_SIDED ** (1 / games)  # Clopper-Pearson, one-sided 95%
        if score == 0.0:
            return PairStats(n, counts, 0.0, 0.0, edge, nu, None, -math.inf, elo_of(edge, nu))
        return PairStats(n, counts, 1.0, 1 - edge, 1.0, nu, None, elo_of(1 - edge, nu),
                         math.inf)
    half = Z90 * math.sqrt(pair_variance(counts) / (4 * n))
    lo, hi = max(score - half, 0.0), min(score + half, 1.0)
    return PairStats(n, counts, score, lo, hi, nu, elo_of(score, nu), elo_of(lo, nu),
                     elo_of(hi, nu))


def totals_of(counts: Sequence[int]) -> list[float]:
    """Pair totals with these pentanomial counts (the statistics depend on nothing else)."""
    return [x for c, x in zip(counts, PAIR_SCORES, strict=True) for _ in range(c)]


def finished(current: PairStats | None, games: int, target: float, max_games: int) -> bool:
    """The stop rule: the Elo difference's 90% interval within +-target (after MIN_PAIRS
    pairs), or max_games games played."""
    if games >= max_games:
        return True
    return current is not None and current.pairs >= MIN_PAIRS and \
        current.half_width <= target
