"""The draw model in production: play's estimator, the ladder's part of its interval, the
joint refit and a match's BTD reading, each reading nu at the pair's mean Elo; checked
against finite differences of the model's own log likelihood and against each other, not
against the formulas they use."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from chess_eval.benchmark.arena.ladder import Ladder, Rung, load_ladder, reference_nu, write_ladder
from chess_eval.benchmark.core.data import REFERENCE_LADDER
from chess_eval.benchmark.games import sampler
from chess_eval.benchmark.stats import btd, draws
from chess_eval.benchmark.stats.joint import RungGames, joint_fit
from chess_eval.benchmark.stats.pairs import pair_stats

ELOS = (0.0, 400.0, 800.0, 1200.0, 1600.0)
# nu about 2.1 at the bottom pairs, 0.25 in the middle, 0.5 at the top (as the reference
# ladder's: draws most often at both ends).
MODEL = draws.DrawModel((math.log(0.25), -0.3, 1.2), 100.0, 1500.0, centre=900.0,
                        scale=1000.0)
PRIOR = btd.Prior(1500.0, 1000.0)
RUNGS = [1, 1, 2, 2, 2, 3, 3, 1, 2, 3, 2, 1, 3, 2]
SCORES = [1.0, 0.5, 0.5, 1.0, 0.0, 0.0, 0.5, 1.0, 0.5, 0.0, 1.0, 0.5, 0.5, 0.0]
OPP = [ELOS[i] for i in RUNGS]


def _cov(n: int, k: int) -> np.ndarray:
    root = np.random.default_rng(5).normal(0, 1, (n + k, n + k))
    scale = np.concatenate([[0.0], np.full(n - 1, 20.0), np.full(k, 0.04)])
    cov = (root @ root.T / (n + k) + np.eye(n + k)) * np.outer(scale, scale)
    return cov


def _config(model: draws.DrawModel | None, cov: np.ndarray | None = None
            ) -> sampler.SamplerConfig:
    n = len(ELOS)
    if cov is None:
        return sampler.SamplerConfig(ELOS, 0.5, PRIOR, draws=model)
    return sampler.SamplerConfig(ELOS, 0.5, PRIOR, ladder_cov=tuple(map(tuple, cov[:n, :n])),
                                 draws=model, draws_cov=tuple(map(tuple, cov[n:])))


def _log_post(r: float, opp: list[float], model: draws.DrawModel) -> float:
    return draws.log_likelihood(np.full(len(opp), r), np.asarray(opp), np.asarray(SCORES),
                                model) - 0.5 * ((r - PRIOR.mean) / PRIOR.sd) ** 2


def test_play_reads_nu_at_each_games_level() -> None:
    """The MAP is where the log posterior's slope (by central differences of the model's own
    likelihood) is zero, and its sd is the inverse root of its curvature there."""
    post = sampler.posterior(OPP, SCORES, _config(MODEL))
    h = 0.01
    slope = (_log_post(post.mean + h, OPP, MODEL) - _log_post(post.mean - h, OPP, MODEL)) / (2 * h)
    assert abs(slope) < 1e-6
    h = 1.0
    curve = (_log_post(post.mean + h, OPP, MODEL) - 2 * _log_post(post.mean, OPP, MODEL)
             + _log_post(post.mean - h, OPP, MODEL)) / h ** 2
    assert post.sd == pytest.approx((-curve) ** -0.5, rel=1e-4)
    # The draws at the bottom (nu about 2) weigh less than one nu's would: not btd's reading.
    assert abs(post.mean - sampler.posterior(OPP, SCORES, sampler.SamplerConfig(
        ELOS, 0.5, PRIOR)).mean) > 5


def test_a_constant_draw_model_is_one_nu() -> None:
    """draws.constant(nu) through play's draw-model path gives btd's reading, interval,
    ladder part and weights (the ladder's coefficient rows all zero)."""
    n = len(ELOS)
    cov = _cov(n, 1)
    cov[n:, :] = cov[:, n:] = 0.0
    one = sampler.SamplerConfig(ELOS, 0.5, PRIOR, ladder_cov=tuple(map(tuple, cov[:n, :n])))
    drawn = _config(draws.constant(0.5), cov)
    a, b = sampler.posterior(OPP, SCORES, one), sampler.posterior(OPP, SCORES, drawn)
    assert (b.mean, b.sd, b.lo, b.hi, b.ladder) == pytest.approx(
        (a.mean, a.sd, a.lo, a.hi, a.ladder), rel=1e-6)
    assert sampler.ladder_weights(OPP, a.mean, drawn, SCORES) == pytest.approx(
        sampler.ladder_weights(OPP, a.mean, one), rel=1e-6)


def test_the_ladders_part_is_the_delta_method_by_refitting() -> None:
    """The ladder's sd in play's interval is sqrt(g' Cov g), g the MAP's derivatives in every
    rung's Elo and every coefficient: here g by refitting with each one moved."""
    n, k = len(ELOS), len(MODEL.coef)
    cov = _cov(n, k)
    post = sampler.posterior(OPP, SCORES, _config(MODEL, cov))

    def refit(elos: tuple[float, ...], model: draws.DrawModel) -> float:
        opp = np.array([elos[i] for i in RUNGS])
        return draws.fit(opp, np.array(SCORES), model, PRIOR).mean
    g = np.zeros(n + k)
    for i in range(n):
        up, down = list(ELOS), list(ELOS)
        up[i] += 0.5
        down[i] -= 0.5
        g[i] = refit(tuple(up), MODEL) - refit(tuple(down), MODEL)
    for j in range(k):
        step = np.zeros(k)
        step[j] = 1e-4
        g[n + j] = (refit(ELOS, MODEL.with_coef(np.array(MODEL.coef) + step))
                    - refit(ELOS, MODEL.with_coef(np.array(MODEL.coef) - step))) / 2e-4
    assert post.ladder == pytest.approx(math.sqrt(g @ cov @ g), rel=1e-3)
    own = draws.fit(np.array(OPP), np.array(SCORES), MODEL, PRIOR)
    assert post.sd == pytest.approx(math.hypot(own.sd, post.ladder), rel=1e-6)


def test_joint_refit_without_a_match_is_plays_reading() -> None:
    """Two players rated together with no head-to-head games: each is play's own reading on
    the draw model, and the ladder's part of each the rungs' share of play's (two separate
    implementations of the same derivatives)."""
    n = len(ELOS)
    cov = _cov(n, 0)
    games_b = [RungGames(3, 2, 3, 1), RungGames(4, 0, 2, 3)]
    opp_b = [ELOS[3]] * 6 + [ELOS[4]] * 5
    scores_b = [1.0] * 2 + [0.5] * 3 + [0.0] + [0.5] * 2 + [0.0] * 3
    games_a = [RungGames(r, int(s == 1.0), int(s == 0.5), int(s == 0.0))
               for r, s in zip(RUNGS, SCORES, strict=True)]
    fit = joint_fit(ELOS, cov, MODEL, (games_a, games_b), (0, 0, 0), (PRIOR, PRIOR))
    config = sampler.SamplerConfig(ELOS, 0.5, PRIOR, ladder_cov=tuple(map(tuple, cov)),
                                   draws=MODEL)
    for p, (opp, sc) in enumerate(((OPP, SCORES), (opp_b, scores_b))):
        post = sampler.posterior(opp, sc, config)
        assert fit.means[p] == pytest.approx(post.mean, abs=1e-3)
        assert fit.own[p, p] == pytest.approx(post.sd ** 2 - post.ladder ** 2, rel=1e-4)
        assert fit.ladder[p, p] == pytest.approx(post.ladder ** 2, rel=1e-4)


def _draws_column() -> dict[str, object]:
    with REFERENCE_LADDER.open(newline="", encoding="utf-8") as handle:
        found: dict[str, object] = json.loads(next(csv.DictReader(handle))["draws"])
    return found


def test_the_reference_ladder_reads_nu_by_level() -> None:
    """Version 11's draw model, from its file's draws column by hand: nu at 300 Elo is
    exp(b0 + b1 x + b2 x^2), x = (300 - 1,600) / 1,000; below the pairs fitted it is held at
    the edge; without a level, a match's nu is the model's at its centre."""
    found = _draws_column()
    b0, b1, b2 = (float(c) for c in found["coef"])  # type: ignore[attr-defined]
    x = (300 - 1600) / 1000
    assert reference_nu(mean_elo=300.0) == pytest.approx(math.exp(b0 + b1 * x + b2 * x * x))
    edge = (float(found["low"]) - 1600) / 1000  # type: ignore[arg-type]
    assert reference_nu(mean_elo=-500.0) == pytest.approx(
        math.exp(b0 + b1 * edge + b2 * edge ** 2))
    assert reference_nu() == pytest.approx(math.exp(b0))
    # Both ends draw more than the middle (the games' bands: docs, "One draw parameter").
    assert reference_nu(mean_elo=300.0) > 2 * reference_nu() < reference_nu(mean_elo=3200.0)


def test_a_matchs_btd_reading_depends_on_the_level_its_nu_is_read_at() -> None:
    """A mostly drawn match (6 wins, 18 draws, 2 losses in 13 pairs) read at the reference
    ladder's nu for a pair near 300 Elo and at its centre: each the maximum-likelihood BTD
    difference of those games at that nu (play's estimator under a prior too wide to pull
    it), and the more drawish level reads the same score as the wider gap."""
    totals = [1.0] * 6 + [1.5] * 4 + [0.5] * 2 + [2.0]
    scores = np.array([1.0] * 6 + [0.5] * 18 + [0.0] * 2)
    read = {}
    for level in (300.0, None):
        nu = reference_nu(mean_elo=level)
        s = pair_stats(totals, nu)
        mle = btd.fit(np.zeros(len(scores)), scores, nu, btd.Prior(0.0, 1e4)).mean
        assert s.elo == pytest.approx(mle, abs=0.1) and s.nu == nu
        read[level] = s.elo
    assert read[300.0] > read[None] + 20


def test_a_ladder_with_a_draw_model_round_trips(tmp_path: Path) -> None:
    n = len(ELOS)
    cov = _cov(n, 3)
    rungs = [Rung(f"r{i}", "random", 0 if i == 0 else None, e, e - 10, e + 10, 10, 0.5)
             for i, e in enumerate(ELOS)]
    ladder = Ladder(rungs, float(MODEL.nu(MODEL.centre)), "sim", np.round(cov[:n, :n], 1),
                    draws=MODEL, joint=cov)
    path = tmp_path / "ladder.csv"
    write_ladder(path, ladder)
    back = load_ladder(path)
    assert back.draws is not None and back.nu == pytest.approx(0.25, abs=1e-4)
    assert back.draws.coef == pytest.approx(MODEL.coef, abs=1e-6)  # six decimals kept
    assert (back.draws.low, back.draws.high, back.draws.centre, back.draws.scale) == (
        MODEL.low, MODEL.high, MODEL.centre, MODEL.scale)
    assert back.joint_cov[n:] == pytest.approx(cov[n:], rel=1e-5)
    assert back.joint_cov[:n, :n] == pytest.approx(cov[:n, :n], abs=0.06)
    assert sampler.for_ladder(sampler.SamplerConfig(ELOS, 0.5), back).draws == back.draws
