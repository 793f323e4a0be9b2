"""Which calibration games to play next: the pairs that shrink the ladder's worst error most.

The ladder's covariance relative to the anchor is the inverse of the fit's Fisher information,
and one more game between rungs i and j adds w(delta) d d^T to it (d: +1 at i, -1 at j; w:
the BTD information of one game at an Elo gap delta). Greedily, game by game, the next game
goes to the candidate pair (rungs 1 to ladder.MAX_SPAN apart) that most lowers the sum over
rungs of max(ratio, 1) ** LOSS_POWER, the ratio being a rung's variance to its goal's: rungs
that meet their goal stop drawing games, and the worst misses draw hardest (a smooth stand-in
for the largest ratio, which a single game rarely moves). Once every rung meets its goal, the
plain sum of squared ratios spreads further games. Sherman-Morrison keeps each step a few
matrix-vector products. The choice depends only on the games so far and the planning Elos,
never on outcomes to come.
"""

from __future__ import annotations

import numpy as np

from chess_eval.benchmark.stats import btd

GOAL_LOW = 35.0  # the 90% half-width goal of rungs up to GOAL_SPLIT Elo ...
GOAL_HIGH = 60.0  # ... and above it (80 above 2000 until strong models and the Maia anchors,
# 2286-2415, made a +-70 run there cost 60-100% more games than below)
GOAL_SPLIT = 2600.0
PLAN_GAP = 125.0  # planning gap between adjacent rungs before they are measured (the
# default ladder's RUNG_GAP, by which its rungs were chosen)
PLAN_NU = 0.5  # planning draw parameter before it is measured
LOSS_POWER = 4  # measured once, with variants of `choose` not kept: on ladder III at 14,402
# games, the games to every goal were 18,250 with the plain sum of squared ratios, 14,000
# with max(ratio, 1) ** 2, 13,750 with ** 4, 13,500 with ** 8 (from no games: 30,000,
# 25,250, 24,750, 24,250)


def goals(elos: np.ndarray, low: float = GOAL_LOW) -> np.ndarray:
    """Each rung's goal for its 90% half-width relative to the anchor (`low` up to
    GOAL_SPLIT, GOAL_HIGH above)."""
    return np.where(np.asarray(elos) <= GOAL_SPLIT, low, GOAL_HIGH)


def information(elos: np.ndarray, nu: float, weak: np.ndarray, strong: np.ndarray) -> np.ndarray:
    """The Fisher information matrix of games between these rungs (full size, no anchor)."""
    n = len(elos)
    w = btd.game_information(elos[strong] - elos[weak], nu)
    out = np.zeros((n, n))
    np.add.at(out, (weak, weak), w)
    np.add.at(out, (strong, strong), w)
    np.add.at(out, (weak, strong), -w)
    np.add.at(out, (strong, weak), -w)
    return out


def covariance(info: np.ndarray, anchor: int) -> np.ndarray:
    """The covariance relative to the anchor implied by `info` (a nearly flat prior keeps
    rungs without games finite); the anchor's row and column are zero."""
    keep = np.arange(len(info)) != anchor
    reduced = info[np.ix_(keep, keep)] + np.eye(keep.sum()) / btd.POOL_SD ** 2
    cov = np.zeros_like(info)
    cov[np.ix_(keep, keep)] = np.linalg.inv(reduced)
    return cov


def choose(elos: np.ndarray, nu: float, info: np.ndarray, anchor: int,
           candidates: list[tuple[int, int]], n: int, low: float = GOAL_LOW,
           inflate: np.ndarray | None = None) -> list[tuple[int, int]]:
    """The next n games' pairs, in the order chosen (ties go to the earlier candidate).
    `inflate`: each rung's reported variance over the one `info` implies (see
    calibration.inflation); the goals are met on the reported variances."""
    cov = covariance(info, anchor)
    d = np.zeros((len(candidates), len(elos)))
    idx = np.arange(len(candidates))
    weak, strong = np.array(candidates).T
    d[idx, weak], d[idx, strong] = 1.0, -1.0
    d[:, anchor] = 0.0  # the anchor is fixed: its coordinate carries no variance
    w = btd.game_information(elos[strong] - elos[weak], nu)
    scale = (goals(elos, low) / btd.Z90) ** 2 / _ones(inflate, len(elos))  # goal variances
    chosen = []
    for _ in range(n):
        s = d @ cov  # (candidates, rungs)
        q = np.einsum("ij,ij->i", s, d)
        shrink = (w / (1 + w * q))[:, None] * s ** 2
        ratio = (np.diag(cov)[None, :] - shrink) / scale
        if np.max(np.diag(cov) / scale) > 1:
            loss = np.sum(np.maximum(ratio, 1.0) ** LOSS_POWER, axis=1)
        else:
            loss = np.sum(ratio ** 2, axis=1)
        best = int(np.argmin(loss))
        chosen.append(candidates[best])
        u = s[best]
        cov = cov - np.outer(u, u) * (w[best] / (1 + w[best] * q[best]))
    return chosen


def worst_ratio(cov: np.ndarray, elos: np.ndarray, low: float = GOAL_LOW,
                inflate: np.ndarray | None = None) -> float:
    """The largest ratio of a rung's 90% half-width to its goal."""
    var = np.maximum(np.diag(cov), 0) * _ones(inflate, len(elos))
    return float(np.max(btd.Z90 * np.sqrt(var) / goals(elos, low)))


def _ones(inflate: np.ndarray | None, n: int) -> np.ndarray:
    """The variance inflation given, or none (ones)."""
    return np.ones(n) if inflate is None else inflate


def games_to_goal(elos: np.ndarray, nu: float, info: np.ndarray, anchor: int,
                  candidates: list[tuple[int, int]], step: int = 200,
                  cap: int = 200_000, low: float = GOAL_LOW,
                  inflate: np.ndarray | None = None) -> tuple[int, dict[tuple[int, int], int]]:
    """How many more games (chosen as `choose` would) meet every goal, and their pairs."""
    added: dict[tuple[int, int], int] = {}
    total = 0
    while worst_ratio(covariance(info, anchor), elos, low, inflate) > 1 and total < cap:
        for pair in choose(elos, nu, info, anchor, candidates, step, low, inflate):
            added[pair] = added.get(pair, 0) + 1
            info = info + information(elos, nu, np.array([pair[0]]), np.array([pair[1]]))
        total += step
    return total, added
