"""bench/draw_refit.py: the draw-model refit's output held to version 11 of the reference
ladder, its readings against play's where the draw model is one nu, the deviance by hand, the
goal, and a short run of the coverage simulation on a draw-model ladder."""

import argparse
import json
import math

import numpy as np
import pytest

from bench import draw_refit, ladder_coverage
from bench.ladder_coverage import read_table
from chess_eval.benchmark.arena.ladder import Ladder, Rung, load_ladder, pairs
from chess_eval.benchmark.core.data import MAP_PLAYERS, REFERENCE_LADDER
from chess_eval.benchmark.games.sampler import PRIOR, SamplerConfig, posterior
from chess_eval.benchmark.human.anchors import HUMAN_DIR, READINGS_FILE
from chess_eval.benchmark.ladders.calibration import Usable
from chess_eval.benchmark.stats import draws


def test_the_committed_refit_is_version_11() -> None:
    """bench/data/draw_refit.json compared version 10 (one nu) with its draw-model refit;
    version 11 is that refit, fitted by calibrate: every rung's Elo, and every map player's
    and Maia net's committed reading, is the refit's "after" (to its rounding)."""
    data = json.loads(draw_refit.REFIT.read_text(encoding="utf-8"))
    assert data["version"] == 10
    ladder = load_ladder(REFERENCE_LADDER)
    assert ladder.draws is not None
    assert ladder.draws.coef == pytest.approx(data["coef_full"], abs=1e-5)
    rungs = {r["name"]: r["after"] for r in data["ratings"] if r["kind"] == "rung"}
    assert {r.name: r.elo for r in ladder.rungs} == pytest.approx(rungs, abs=0.11)
    for kind, table in (("map player", MAP_PLAYERS), ("Maia net", HUMAN_DIR / READINGS_FILE)):
        committed = {r["player"]: float(r["game_elo"]) for r in read_table(table)
                     if r["ladder"] == "ladder@stockfish-17.1.csv"}
        after = {r["name"]: r["after"] for r in data["ratings"] if r["kind"] == kind}
        assert committed == pytest.approx(after, abs=0.51)


def test_refit_refuses_a_ladder_on_the_draw_model() -> None:
    with pytest.raises(SystemExit, match="version 10"):
        draw_refit.refit_command(argparse.Namespace(write=False))


ELOS = np.array([0.0, 300.0, 600.0, 900.0, 1200.0])


def _cov() -> np.ndarray:
    root = np.random.default_rng(3).normal(0, 12, (4, 4))
    cov = np.zeros((5, 5))
    cov[1:, 1:] = root @ root.T + 100 * np.eye(4)
    return cov


def test_a_reading_with_one_nu_is_plays() -> None:
    """With one coefficient (no uncertainty in it), the refit's reading, interval and the
    ladder's part of its sd are sampler.posterior's: the sensitivity and the joint covariance
    give play's delta method."""
    cov = _cov()
    joint = np.zeros((6, 6))
    joint[:5, :5] = cov
    fitted = draw_refit.Refit(ELOS, draws.constant(0.45), joint, {})
    rungs = [1, 2, 2, 3, 3, 3, 4, 2, 3, 1]
    scores = [1.0, 0.5, 1.0, 0.0, 0.5, 1.0, 0.0, 0.5, 0.0, 1.0]
    got = draw_refit.rate(rungs, scores, fitted)
    config = SamplerConfig(tuple(ELOS), 0.45, PRIOR, ladder_cov=tuple(map(tuple, cov)))
    post = posterior([float(ELOS[i]) for i in rungs], scores, config)
    assert got["elo"] == pytest.approx(post.mean, abs=1e-4)
    assert got["ladder_sd"] == pytest.approx(post.ladder, rel=1e-6)
    assert (got["lo"], got["hi"]) == pytest.approx((post.lo, post.hi), abs=1e-4)
    assert got["sd"] == pytest.approx(post.sd, rel=1e-6)


def test_pair_deviance_by_hand() -> None:
    # Rungs all at 0 with nu = 1: every outcome 1/3. Pair (0, 1): rung 0 won, drew, and won
    # again (the third game listed from rung 1's side): observed (2, 1, 0) against (1, 1, 1),
    # G^2 = 2 (2 log 2); draw or not: (1, 2) against (1, 2), 0. Pair (1, 2), one draw:
    # G^2 = 2 log 3, and as draw or not 2 log 3 too.
    use = Usable(np.array([0, 0, 1, 2]), np.array([1, 1, 0, 1]),
                 np.array([1.0, 0.5, 0.0, 0.5]), 0, 0)
    got = draw_refit.pair_deviance(np.zeros(3), draws.constant(1.0), use)
    assert got == {"pairs": 2, "deviance": round(4 * math.log(2) + 2 * math.log(3), 1),
                   "draws": round(2 * math.log(3), 1)}


def _rows(*coverages: float, width: float = 70.0) -> list[dict[str, str]]:
    return [{"coverage": str(c), "target": "70", "median_half_width": str(width),
             "median_games": str(100 + i)} for i, c in enumerate(coverages)]


def test_the_goal() -> None:
    """Met only with every coverage in 87-93% and every median half-width at the target."""
    ok, why = draw_refit.decision(_rows(0.88, 0.91, 0.93))
    assert ok and "88.0%-93.0%" in why and "inside" in why and "100-102 games" in why
    assert not draw_refit.decision(_rows(0.88, 0.86))[0]
    assert not draw_refit.decision(_rows(0.90, 0.94))[0]
    assert not draw_refit.decision(_rows(0.90, width=75.0))[0]


def _ladder(model: draws.DrawModel | None) -> tuple[Ladder, Usable]:
    """Six rungs 300-350 apart with a 15 Elo sd each (and a 0.05 sd on each coefficient)."""
    names = ["r0", "r1", "r2", "r3", "r4", "r5"]
    true = [0.0, 350.0, 700.0, 1000.0, 1350.0, 1700.0]
    rungs = [Rung(n, "random", 0 if n == "r0" else None, e)
             for n, e in zip(names, true, strict=True)]
    k = 0 if model is None else len(model.coef)
    joint = np.zeros((6 + k, 6 + k))
    joint[1:6, 1:6] = 15.0 ** 2 * np.eye(5)
    joint[6:, 6:] = 0.05 ** 2 * np.eye(k)
    chain = [p for p in pairs(6) for _ in range(10)]
    weak, strong = (np.array(x) for x in zip(*chain, strict=True))
    ladder = Ladder(rungs, 0.4, "sim", joint[:6, :6], prior="a prior", draws=model,
                    joint=None if model is None else joint)
    return ladder, Usable(weak, strong, np.zeros(len(chain)), 0, 0)


def test_coverage_under_the_draw_model_is_plays_on_it() -> None:
    """A short simulation on a six-rung ladder whose nu falls from about 1.6 at its bottom
    pairs to 0.1 at its top: play on the ladder's own draw model (truth and error drawn from
    its joint covariance, the coefficients' included) covers the true Elo, unbiased."""
    model = draws.DrawModel((math.log(0.4), -1.4), 175.0, 1525.0, centre=850.0, scale=850.0)
    ladder, use = _ladder(model)
    runs = ladder_coverage.coverage(ladder, use, 1100.0, 40, 70.0, seed=1)
    assert len(runs) == 40 and all(r.games >= 9 for r in runs)
    assert 0.75 <= np.mean([r.covered for r in runs]) <= 1.0
    assert abs(np.median([r.mean - 1100.0 for r in runs])) < 30
