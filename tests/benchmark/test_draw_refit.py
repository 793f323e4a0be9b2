"""bench/draw_refit.py: the draw-model refit's output held to the committed files, its
readings against play's where the draw model is one nu, the deviance by hand, the criterion,
and a short run of the coverage simulation."""

import json
import math

import numpy as np
import pytest

from bench import draw_refit
from bench.ladder_coverage import read_table
from chess_eval.benchmark.arena.ladder import Ladder, Rung, load_ladder, pairs
from chess_eval.benchmark.core.data import MAP_PLAYERS, REFERENCE_LADDER
from chess_eval.benchmark.games.sampler import PRIOR, SamplerConfig, posterior
from chess_eval.benchmark.human.anchors import HUMAN_DIR, READINGS_FILE
from chess_eval.benchmark.ladders.calibration import Usable
from chess_eval.benchmark.stats import draws
from chess_eval.files import sha256_file


def test_the_committed_refit_is_of_the_committed_ladder_and_readings() -> None:
    """A new version of the ladder, or readings refitted since, without `draw_refit refit
    --write` fails here: the docs' before/after table would be of other files."""
    data = json.loads(draw_refit.REFIT.read_text(encoding="utf-8"))
    assert data["ladder_sha256"] == sha256_file(REFERENCE_LADDER), \
        "run: python -m bench.draw_refit refit --write"
    ladder = load_ladder(REFERENCE_LADDER)
    rungs = [r for r in data["ratings"] if r["kind"] == "rung"]
    assert [(r["name"], r["before"]) for r in rungs] == [(r.name, r.elo) for r in ladder.rungs]
    for kind, table in (("map player", MAP_PLAYERS), ("Maia net", HUMAN_DIR / READINGS_FILE)):
        committed = {r["player"]: float(r["game_elo"]) for r in read_table(table)
                     if r["ladder"] == "ladder@stockfish-17.1.csv"}
        kept = {r["name"]: r["before"] for r in data["ratings"] if r["kind"] == kind}
        assert kept == committed
    assert len(data["gaps"]) == len(ladder.rungs) - 1


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


def _rows(*coverages: float) -> list[dict[str, str]]:
    return [{"coverage": str(c)} for c in coverages]


def _data(*changes: float) -> dict[str, object]:
    return {"ratings": [{"kind": "rung", "name": "anchor", "change": 0.0, "change_in_sd": None}]
            + [{"kind": "rung", "name": f"r{i}", "change": 10 * c, "change_in_sd": c}
               for i, c in enumerate(changes)]}


def test_the_criterion() -> None:
    """One nu stays only with every coverage in 87-93% and every rating within its sd."""
    keep, why = draw_refit.decision(_rows(0.88, 0.91, 0.93), _data(0.5, -0.9))
    assert keep and "2 of 2 ratings" in why and "inside" in why
    assert not draw_refit.decision(_rows(0.88, 0.86), _data(0.5))[0]
    keep, why = draw_refit.decision(_rows(0.90), _data(0.5, -1.2))
    assert not keep and "r1, -12 Elo (-1.2 sd)" in why


def _ladder() -> tuple[Ladder, Usable]:
    names = ["r0", "r1", "r2", "r3", "r4", "r5"]
    true = [0.0, 350.0, 700.0, 1000.0, 1350.0, 1700.0]
    rungs = [Rung(n, "random", 0 if n == "r0" else None, e)
             for n, e in zip(names, true, strict=True)]
    chain = [p for p in pairs(6) for _ in range(400)]
    weak, strong = (np.array(x) for x in zip(*chain, strict=True))
    return Ladder(rungs, 0.4, "sim", np.zeros((6, 6))), Usable(weak, strong,
                                                              np.zeros(len(chain)), 0, 0)


@pytest.mark.parametrize("coef", [(math.log(0.4),), (math.log(0.3), -1.5)])
def test_coverage_runs_rate_players_on_one_nu_remeasures(coef: tuple[float, ...]) -> None:
    """A short simulation on a six-rung ladder: each run's truth drawn from the refit, the
    ladder re-measured with one nu, a player rated at a middle strength. With one nu the
    truth is production's own model and its intervals cover; with nu falling from 1 at the
    bottom pairs to 0.09 at the top, the one-nu ladder squeezes the bottom gaps, reads the
    player low and misses."""
    ladder, use = _ladder()
    joint = np.zeros((6 + len(coef), 6 + len(coef)))
    joint[1:6, 1:6] = 15.0 ** 2 * np.eye(5)
    model = draws.DrawModel(coef, 175.0, 1525.0, centre=850.0, scale=850.0)
    fitted = draw_refit.Refit(ladder.elos, model, joint, {})
    found = draw_refit.coverage_runs(fitted, ladder, use, 40, 70.0, seed=1, elos=(900.0,))
    runs = found[900.0]
    assert len(runs) == 40 and all(r.games >= 9 for r in runs)
    rate = np.mean([r.covered for r in runs])
    error = np.median([r.mean - 900.0 for r in runs])
    if len(coef) == 1:
        assert 0.75 <= rate <= 1.0 and abs(error) < 40
    else:
        assert error < -40 and rate < 0.75
