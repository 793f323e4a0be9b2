"""The draw model (log nu smooth in the pair's mean Elo) against hand-computed cases, btd.py's
one-nu model as its special case, and its fits' curvature against finite differences."""

import math

import numpy as np
import pytest

from chess_eval.benchmark.stats import btd, draws
from chess_eval.errors import FitError

PRIOR = btd.Prior(1500.0, 800.0)
# log nu = log 0.5 + 0.3 x + 0.2 x^2, x = (mean Elo - 1600) / 1000
MODEL = draws.DrawModel((math.log(0.5), 0.3, 0.2))


def test_nu_by_hand() -> None:
    # At the centre x = 0: nu = 0.5. At a mean of 2600, x = 1: 0.5 e^0.5. At 600, x = -1:
    # 0.5 e^(-0.1).
    assert MODEL.nu([1600.0, 2600.0, 600.0]) == pytest.approx(
        [0.5, 0.5 * math.exp(0.5), 0.5 * math.exp(-0.1)])
    # Clipped at 2100 (x = 0.5): any higher mean reads 0.5 e^(0.15 + 0.05), its slope zero.
    clipped = draws.DrawModel(MODEL.coef, high=2100.0)
    assert clipped.nu(3000.0) == pytest.approx(0.5 * math.exp(0.2))
    assert clipped.slopes(3000.0)[0] == 0.0
    # Below the clip the slope is 0.3 + 2 0.2 x and the curvature 0.4, per unit of x.
    assert clipped.slopes(2100.0 - 600.0)[0] == pytest.approx(0.3 + 0.4 * -0.1)
    assert clipped.slopes(1500.0)[1] == pytest.approx(0.4)


def test_probabilities_by_hand() -> None:
    # 1700 against 1500: the mean is the centre (nu 0.5), 200 up: weights 10^(1/4) =
    # 1.778279, 0.5, 10^(-1/4) = 0.562341.
    total = 1.778279 + 0.5 + 0.562341
    assert draws.probabilities(1700.0, 1500.0, MODEL) == pytest.approx(
        (1.778279 / total, 0.5 / total, 0.562341 / total), rel=1e-5)
    # Equal at 2600: nu = 0.5 e^0.5 = 0.824361, so P(draw) = nu / (2 + nu).
    _, draw, _ = draws.probabilities(2600.0, 2600.0, MODEL)
    assert draw == pytest.approx(0.824361 / 2.824361, rel=1e-6)
    # The win/loss odds are the Elo formula's whatever the level.
    win, _, loss = draws.probabilities(3000.0, 2700.0, MODEL)
    assert win / loss == pytest.approx(10 ** (300 / 400))
    assert draws.expected_score(1700.0, 1500.0, MODEL) == pytest.approx(
        (1.778279 + 0.25) / total, rel=1e-5)


def test_one_coefficient_is_btd() -> None:
    model = draws.constant(0.7)
    assert draws.probabilities(1900.0, 1500.0, model) == pytest.approx(
        btd.probabilities(400.0, 0.7))
    opp = np.array([1200, 1400, 1400, 1600, 1800, 2000], float)
    sc = np.array([1, 1, 0.5, 0.5, 0, 0], float)
    assert draws.log_likelihood(np.full(6, 1650.0), opp, sc, model) == pytest.approx(
        btd.log_likelihood(1650.0, opp, sc, 0.7))
    ours, theirs = draws.fit(opp, sc, model, PRIOR), btd.fit(opp, sc, 0.7, PRIOR)
    assert ours.mean == pytest.approx(theirs.mean, abs=1e-5)
    assert ours.sd == pytest.approx(theirs.sd, rel=1e-9)


def test_log_likelihood_by_hand() -> None:
    # A win 1700 v 1500 (nu 0.5), a draw at 2600 v 2600 (nu 0.824361) and a loss 600 v 600
    # (nu 0.5 e^-0.1 = 0.452419).
    total = 1.778279 + 0.5 + 0.562341
    expected = (math.log(1.778279 / total) + math.log(0.824361 / 2.824361)
                + math.log(1 / 2.452419))
    got = draws.log_likelihood(np.array([1700.0, 2600.0, 600.0]),
                               np.array([1500.0, 2600.0, 600.0]), np.array([1, 0.5, 0]), MODEL)
    assert got == pytest.approx(expected, rel=1e-6)


def _log_post(r: float, opp: np.ndarray, sc: np.ndarray, model: draws.DrawModel) -> float:
    """The one player's log posterior written from the probabilities (not the fit's code)."""
    win, draw, loss = draws.probabilities(np.full(len(opp), r), opp, model)
    p = np.where(sc == 1, win, np.where(sc == 0.5, draw, loss))
    return float(np.log(p).sum() - 0.5 * ((r - PRIOR.mean) / PRIOR.sd) ** 2)


OPP = np.array([900, 1200, 1400, 1400, 1600, 1800, 2000, 2400, 2400], float)
SCORES = np.array([1, 1, 0.5, 0.5, 0.5, 0, 0.5, 0, 0.5], float)


def test_map_is_the_mode_and_laplace_the_curvature() -> None:
    post = draws.fit(OPP, SCORES, MODEL, PRIOR)
    r, h = post.mean, 0.5
    assert _log_post(r, OPP, SCORES, MODEL) > _log_post(r - 0.1, OPP, SCORES, MODEL)
    assert _log_post(r, OPP, SCORES, MODEL) > _log_post(r + 0.1, OPP, SCORES, MODEL)
    slope = (_log_post(r + 1e-3, OPP, SCORES, MODEL)
             - _log_post(r - 1e-3, OPP, SCORES, MODEL)) / 2e-3
    assert abs(slope) < 1e-6
    second = (_log_post(r + h, OPP, SCORES, MODEL) - 2 * _log_post(r, OPP, SCORES, MODEL)
              + _log_post(r - h, OPP, SCORES, MODEL)) / h ** 2
    assert post.sd == pytest.approx((-second) ** -0.5, rel=1e-4)
    # With nu rising away from the centre, the many draws say something one nu would not:
    # the rating differs from btd's at nu = 0.5.
    assert abs(post.mean - btd.fit(OPP, SCORES, 0.5, PRIOR).mean) > 5


def test_sensitivity_is_the_refit_per_unit_moved() -> None:
    """Each game's opponent moved by h, and each coefficient, then refitted: the MAP moves by
    the sensitivity times h."""
    post = draws.fit(OPP, SCORES, MODEL, PRIOR)
    per_game, per_coef = draws.sensitivity(post.mean, OPP, SCORES, MODEL, PRIOR)
    h = 0.01
    for i in range(len(OPP)):
        up, down = OPP.copy(), OPP.copy()
        up[i] += h
        down[i] -= h
        moved = (draws.fit(up, SCORES, MODEL, PRIOR).mean
                 - draws.fit(down, SCORES, MODEL, PRIOR).mean) / (2 * h)
        assert per_game[i] == pytest.approx(moved, rel=1e-4, abs=1e-7)
    for k in range(3):
        step = np.eye(3)[k] * 1e-4
        moved = (draws.fit(OPP, SCORES, MODEL.with_coef(np.array(MODEL.coef) + step),
                           PRIOR).mean
                 - draws.fit(OPP, SCORES, MODEL.with_coef(np.array(MODEL.coef) - step),
                             PRIOR).mean) / 2e-4
        assert per_coef[k] == pytest.approx(moved, rel=1e-4)
    # With one nu they are btd's (sampler.ladder_weights): information over information.
    one = draws.constant(0.5)
    r = draws.fit(OPP, SCORES, one, PRIOR).mean
    info = btd.game_information(r - OPP, 0.5)
    assert draws.sensitivity(r, OPP, SCORES, one, PRIOR)[0] == pytest.approx(
        info / (info.sum() + PRIOR.sd ** -2))


def _games(true: np.ndarray, model: draws.DrawModel, n: int, seed: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    first = rng.integers(0, len(true), n)
    second = (first + rng.integers(1, len(true), n)) % len(true)
    win, draw, _ = draws.probabilities(true[first], true[second], model)
    u = rng.random(n)
    return first, second, np.where(u < win, 1.0, np.where(u < win + draw, 0.5, 0.0))


def test_pool_recovers_ratings_and_the_draw_model() -> None:
    true = np.array([0.0, 300.0, 700.0, 1200.0, 1800.0, 2500.0, 3100.0])
    model = draws.DrawModel((math.log(0.3), -0.3, 0.6), low=0.0, high=3100.0)
    first, second, scores = _games(true, model, 12000, 0)
    pool = draws.fit_pool(7, first, second, scores, model.with_coef((0.0, 0.0, 0.0)))
    sd = np.sqrt(np.diag(pool.cov))
    assert np.all(np.abs(pool.ratings[1:] - true[1:]) < 3.5 * sd[1:])
    coef_sd = np.sqrt(np.diag(pool.coef_cov))
    assert np.all(np.abs(np.array(pool.model.coef) - model.coef) < 3.5 * coef_sd)
    # One nu on the same games: btd.fit_pool's fit exactly.
    one = draws.fit_pool(7, first, second, scores, draws.DrawModel((0.0,)))
    theirs = btd.fit_pool(7, first, second, scores)
    np.testing.assert_allclose(one.ratings, theirs.ratings, atol=1e-4)
    assert math.exp(one.model.coef[0]) == pytest.approx(theirs.nu, rel=1e-6)
    np.testing.assert_allclose(one.cov, theirs.cov, rtol=1e-5, atol=1e-6)


def test_pool_covariance_is_the_inverse_curvature_of_the_likelihood() -> None:
    """The Laplace covariance against the inverse of central differences of the negative
    log posterior, written from the model's probabilities (ratings and coefficients), with an
    offset anchor and a prior on the ratings."""
    true = np.array([500.0, 900.0, 1400.0, 2000.0, 2700.0])
    model = draws.DrawModel((math.log(0.4), 0.2, 0.5), low=700.0, high=2400.0)
    first, second, scores = _games(true, model, 3000, 1)
    prior = btd.PoolPrior(np.array([400.0, 900.0, 1500.0, 2200.0]), np.eye(4) / 300.0 ** 2)
    pool = draws.fit_pool(5, first, second, scores, model, prior, offset=500.0)

    def negative(z: np.ndarray) -> float:
        ratings = np.concatenate([[500.0], 500.0 + 100 * z[:4]])
        fitted = model.with_coef(z[4:])
        off = ratings[1:] - 500.0 - prior.mean
        return -draws.log_likelihood(ratings[first], ratings[second], scores, fitted) \
            + 0.5 * float(off @ prior.precision @ off)

    z = np.concatenate([pool.ratings[1:] / 100, pool.model.coef])
    step = 1e-3
    unit = np.eye(7) * step
    grad = np.array([(negative(z + unit[i]) - negative(z - unit[i])) / (2 * step)
                     for i in range(7)])
    assert np.max(np.abs(grad)) < 1e-3  # the MAP
    hess = np.array([[(negative(z + unit[i] + unit[j]) - negative(z + unit[i] - unit[j])
                       - negative(z - unit[i] + unit[j]) + negative(z - unit[i] - unit[j]))
                      / (4 * step ** 2) for j in range(7)] for i in range(7)])
    scale = np.concatenate([np.full(4, 100.0), np.ones(3)])
    np.testing.assert_allclose(pool.joint_cov[1:, 1:],
                               scale[:, None] * np.linalg.inv(hess) * scale[None, :],
                               rtol=2e-3, atol=1e-6)
    assert np.all(pool.joint_cov[0] == 0)


def test_no_draws_leave_the_draw_model_unidentified() -> None:
    with pytest.raises(FitError, match="3 games: the draw model is not identified when no"):
        draws.fit_pool(2, np.array([0, 1, 0]), np.array([1, 0, 1]), np.array([1.0, 0.0, 1.0]),
                       MODEL)
