"""Held-out games: does a fitted ladder predict games between rung pairs its fit never saw?

Calibration pairs rungs at most ladder.MAX_SPAN steps apart. Held-out games pair rungs
SPANS steps apart (in the rungs' own order), which the planner never chooses, and live in a
file of their own that no fit reads. For each pair, the ladder predicts the weaker rung's
mean score (BTD with the ladder's nu), with an interval that has both the games' own
spread (the model's outcome variance, over the pair's games) and the ladder's error in the
pair's Elo difference (its covariance). A ladder that predicts honestly has about 90% of the
pairs inside their 90% intervals, and a pooled z (every held-out game at once, the ladder's
error included) within +-1.645 nine times in ten.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chess_eval.benchmark.arena.ladder import Ladder, Rung
from chess_eval.benchmark.core.turns import Condition
from chess_eval.benchmark.ladders.calibration import CalibrationGame, Usable
from chess_eval.benchmark.stats import btd, draws

SPANS = (5, 6)  # steps apart in the rungs' order: beyond ladder.MAX_SPAN, so never planned


def plan(rungs: list[Rung], games: list[CalibrationGame], engine: str, add: int,
         seed: int, rule: int = 1) -> list[CalibrationGame]:
    """The next `add` held-out games: the SPANS pairs in turn, each numbered on from its
    last game of this seed and adjudication rule (result fields blank); the weaker rung has
    White in odd games."""
    pairs = [(i, i + d) for d in SPANS for i in range(len(rungs) - d)]
    numbers: dict[tuple[str, str], int] = {}
    for g in games:
        if g.seed == seed and g.adjudication == rule:
            key = (g.weak, g.strong)
            numbers[key] = max(numbers.get(key, 0), g.number)
    start = sum(numbers.values())  # where the round left off
    out = []
    for k in range(start, start + add):
        weak, strong = pairs[k % len(pairs)]
        key = (rungs[weak].name, rungs[strong].name)
        numbers[key] = numbers.get(key, 0) + 1
        out.append(CalibrationGame(Condition.STANDARD, *key, seed, numbers[key], "", "", "",
                                   0, engine, rule))
    return out


def unseen(held: list[CalibrationGame], fitted: list[CalibrationGame]) -> list[CalibrationGame]:
    """The held-out games whose pair of rungs (either order) has no game among the `fitted`
    ones of the same engine, adjudication rule and condition. A ladder whose rungs changed
    after its held-out games were played (the 17.1 ladder dropped two) may put an old
    held-out pair within ladder.MAX_SPAN, where the planner can choose it: its games are then
    no longer out of sample."""
    seen = {(g.engine, g.adjudication, g.condition, frozenset((g.weak, g.strong)))
            for g in fitted}
    return [g for g in held if (g.engine, g.adjudication, g.condition,
                                frozenset((g.weak, g.strong))) not in seen]


@dataclass(frozen=True)
class PairCheck:
    """One held-out pair: the ladder's prediction against the games."""

    weak: str  # rung names, the weaker (by the ladder) first
    strong: str
    games: int
    observed: float  # the weaker rung's mean score
    expected: float  # the ladder's prediction of it
    sd: float  # of observed - expected: the games' spread and the ladder's error
    z: float  # (observed - expected) / sd

    @property
    def inside(self) -> bool:
        """The observed score is inside the prediction's 90% interval."""
        return abs(self.z) <= btd.Z90


def check(ladder: Ladder, games: Usable) -> tuple[list[PairCheck], float]:
    """Each held-out pair's check, and the pooled z of all games (`games`: indices into
    ladder.rungs, the first index's score)."""
    low = np.minimum(games.weak, games.strong)
    high = np.maximum(games.weak, games.strong)
    score = np.where(games.weak == low, games.weak_score, 1 - games.weak_score)
    elos = ladder.elos
    out = []
    resid, var_games = 0.0, 0.0
    slope_total = np.zeros(len(elos))
    for a, b in sorted(set(zip(low.tolist(), high.tolist(), strict=True))):
        at = (low == a) & (high == b)
        n = int(at.sum())
        delta = elos[a] - elos[b]
        nu = ladder.nu_at((elos[a] + elos[b]) / 2)  # the draw model's at the pair's level
        win, draw, _ = btd.probabilities(delta, nu)
        mean = float(win + draw / 2)
        var_one = float(win + draw / 4 - mean ** 2)
        # Per Elo of either rung: the gap's slope, and the level's (nu moves with both).
        model = ladder.draw_model
        gap = float(btd.expected_score(delta + 0.5, nu) - btd.expected_score(delta - 0.5, nu))
        # Both rungs up 0.25 Elo: the mean up 0.5, the gap the same; d/dE_a = gap + half of
        # d/d(mean), which is this.
        level = float(draws.expected_score(elos[a] + 0.25, elos[b] + 0.25, model)
                      - draws.expected_score(elos[a] - 0.25, elos[b] - 0.25, model))
        g = np.zeros(len(elos))
        g[a], g[b] = gap + level, -gap + level
        var_ladder = float(g @ ladder.cov @ g)
        sd = float(np.sqrt(var_one / n + var_ladder))
        observed = float(score[at].mean())
        out.append(PairCheck(ladder.rungs[a].name, ladder.rungs[b].name, n, observed, mean, sd,
                             (observed - mean) / sd))
        resid += float(score[at].sum()) - n * mean
        var_games += n * var_one
        slope_total += n * g
    pooled = resid / float(np.sqrt(var_games + slope_total @ ladder.cov @ slope_total)) \
        if out else float("nan")
    return out, pooled
