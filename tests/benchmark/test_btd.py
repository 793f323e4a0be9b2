"""The BTD model against hand-computed cases, draws included; MAP, Laplace, MCMC, pools."""

import math

import numpy as np
import pytest

from chess_eval.benchmark.stats import btd
from chess_eval.errors import FitError

PRIOR = btd.Prior(1500.0, 800.0)


def test_probabilities_by_hand() -> None:
    # Equal strength, nu = 1: the three weights are 1, 1, 1.
    assert btd.probabilities(0, 1.0) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    # 200 Elo up, nu = 0.5: weights 10^(1/4) = 1.778279, 0.5, 10^(-1/4) = 0.562341.
    total = 1.778279 + 0.5 + 0.562341
    assert btd.probabilities(200, 0.5) == pytest.approx(
        (1.778279 / total, 0.5 / total, 0.562341 / total), rel=1e-5)
    # nu = 0 is the Elo formula: 400 up scores 10/11.
    assert btd.expected_score(400, 0.0) == pytest.approx(10 / 11)
    # Win over loss odds do not depend on nu.
    win, _, loss = btd.probabilities(300, 2.0)
    assert win / loss == pytest.approx(10 ** (300 / 400))


def test_log_likelihood_by_hand() -> None:
    # A win 200 up, a draw at equal strength and a loss 200 down, nu = 0.5: the win and the
    # loss are both the likely outcome (weight 10^(1/4) of the three).
    total = 1.778279 + 0.5 + 0.562341
    expected = 2 * math.log(1.778279 / total) + math.log(0.5 / 2.5)
    got = btd.log_likelihood(1700, np.array([1500, 1700, 1900]), np.array([1, 0.5, 0]), 0.5)
    assert got == pytest.approx(expected, rel=1e-6)


def _log_post(r: float, opp: np.ndarray, sc: np.ndarray, nu: float) -> float:
    return btd.log_likelihood(r, opp, sc, nu) - 0.5 * ((r - PRIOR.mean) / PRIOR.sd) ** 2


def test_map_is_the_mode_and_laplace_the_curvature() -> None:
    opp = np.array([1200, 1400, 1400, 1600, 1800, 2000], float)
    sc = np.array([1, 1, 0.5, 0.5, 0, 0], float)
    post = btd.fit(opp, sc, 0.7, PRIOR)
    r, h = post.mean, 0.5
    # The mode: the log posterior (computed independently) falls on both sides.
    assert _log_post(r, opp, sc, 0.7) > _log_post(r - 1, opp, sc, 0.7)
    assert _log_post(r, opp, sc, 0.7) > _log_post(r + 1, opp, sc, 0.7)
    second = (_log_post(r + h, opp, sc, 0.7) - 2 * _log_post(r, opp, sc, 0.7)
              + _log_post(r - h, opp, sc, 0.7)) / h ** 2
    assert post.sd == pytest.approx((-second) ** -0.5, rel=1e-3)
    assert post.lo == pytest.approx(r - 1.6449 * post.sd, rel=1e-4)


def test_symmetric_results_at_the_prior_mean_stay_there() -> None:
    post = btd.fit(np.array([1500, 1500]), np.array([1, 0]), 0.5, PRIOR)
    assert post.mean == pytest.approx(1500, abs=1e-3)


def test_mcmc_agrees_with_laplace_on_a_well_informed_posterior() -> None:
    rng = np.random.default_rng(1)
    opp = rng.uniform(1000, 2000, 120)
    sc = np.array([rng.choice([1, 0.5, 0], p=btd.probabilities(1500 - o, 0.6)) for o in opp])
    laplace = btd.fit(opp, sc, 0.6, PRIOR)
    mcmc = btd.fit_mcmc(opp, sc, 0.6, PRIOR, seed=0)
    assert mcmc.mean == pytest.approx(laplace.mean, abs=0.25 * laplace.sd)
    assert mcmc.sd == pytest.approx(laplace.sd, rel=0.2)


def test_pool_recovers_ratings_and_nu() -> None:
    rng = np.random.default_rng(0)
    true, nu = np.array([0, 250, 400, 700.0]), 0.8
    white, black, scores = [], [], []
    for _ in range(3000):
        i, j = rng.choice(4, 2, replace=False)
        white.append(i)
        black.append(j)
        scores.append(rng.choice([1, 0.5, 0], p=btd.probabilities(true[i] - true[j], nu)))
    pool = btd.fit_pool(4, np.array(white), np.array(black), np.array(scores))
    sd = np.sqrt(np.diag(pool.cov))
    assert np.all(np.abs(pool.ratings[1:] - true[1:]) < 3.5 * sd[1:])
    assert pool.nu == pytest.approx(nu, rel=0.15)


def _negative_log_posterior(x: np.ndarray, white: np.ndarray, black: np.ndarray,
                            scores: np.ndarray, free_nu: bool, nu: float) -> float:
    """fit_pool's objective written again from the model's probabilities (not its code)."""
    n = len(x) - free_nu
    ratings = np.concatenate([[0.0], 100 * x[:n]])
    nu = float(np.exp(x[n])) if free_nu else nu
    win, draw, loss = btd.probabilities(ratings[white] - ratings[black], nu)
    p = np.where(scores == 1.0, win, np.where(scores == 0.5, draw, loss))
    return float(-np.log(p).sum() + 0.5 * np.sum((ratings / btd.POOL_SD) ** 2))


def _finite_difference_hessian(f, x: np.ndarray, step: float = 1e-3) -> np.ndarray:
    """Central differences (the fit's Hessian before it was computed exactly)."""
    unit = np.eye(len(x)) * step
    out = np.empty((len(x), len(x)))
    for i in range(len(x)):
        for j in range(len(x)):
            out[i, j] = (f(x + unit[i] + unit[j]) - f(x + unit[i] - unit[j])
                         - f(x - unit[i] + unit[j]) + f(x - unit[i] - unit[j])) / (4 * step ** 2)
    return out


@pytest.mark.parametrize("free_nu", [True, False])
def test_pool_hessian_matches_finite_differences(free_nu: bool) -> None:
    """The exact Hessian of the joint fit agrees with central differences, at the MAP and
    away from it, with nu fitted and given."""
    rng = np.random.default_rng(5)
    white = rng.integers(0, 5, 60)
    black = (white + rng.integers(1, 5, 60)) % 5
    scores = rng.choice([0.0, 0.5, 1.0], 60, p=[0.3, 0.3, 0.4])
    pool = btd.fit_pool(5, white, black, scores, None if free_nu else 0.7)
    at_map = np.concatenate([pool.ratings[1:] / 100, [np.log(pool.nu)] if free_nu else []])
    for x in (at_map, at_map + rng.normal(0, 0.8, len(at_map))):
        nu = float(np.exp(x[-1])) if free_nu else 0.7
        exact = btd.pool_hessian(np.concatenate([[0.0], 100 * x[:4]]), nu, white, black,
                                 free_nu)
        numeric = _finite_difference_hessian(
            lambda y: _negative_log_posterior(y, white, black, scores, free_nu, 0.7), x)
        assert exact.shape == (4 + free_nu, 4 + free_nu)
        np.testing.assert_allclose(exact, numeric, rtol=1e-5, atol=1e-7)


def test_separated_data_give_a_wide_interval_not_a_confident_one() -> None:
    """A player who won every game: finite (the nearly flat prior) but never confident."""
    white, black = np.array([0, 0, 1, 1, 2, 2]), np.array([1, 2, 0, 2, 0, 1])
    scores = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 0.5])  # player 1 won all four of its games
    pool = btd.fit_pool(3, white, black, scores)
    sd = np.sqrt(np.diag(pool.cov))
    assert np.isfinite(pool.ratings).all() and sd[1] > 1000


def test_one_game_or_all_draws_leave_nu_unidentified() -> None:
    """With nu free, one decisive game or nothing but draws cannot place the draw rate: an
    error naming the fit and the data, not a figure; with nu given the interval is wide."""
    with pytest.raises(FitError, match="joint BTD fit of 2 players on 1 games.*no game"):
        btd.fit_pool(2, np.array([0]), np.array([1]), np.array([1.0]))
    with pytest.raises(FitError, match="2 players on 4 games.*every game is drawn"):
        btd.fit_pool(2, np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]), np.full(4, 0.5))
    one = btd.fit_pool(2, np.array([0]), np.array([1]), np.array([1.0]), nu=0.5)
    assert np.sqrt(one.cov[1, 1]) > 1000
    draws = btd.fit_pool(2, np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]), np.full(4, 0.5),
                         nu=0.5)
    assert abs(draws.ratings[1]) < 1 and np.sqrt(draws.cov[1, 1]) > 100


def test_newton_finishes_a_joint_fit_that_bfgs_left_short(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """BFGS can stop short of the optimum where a direction is nearly flat (it did on a
    re-measured 24-rung ladder): the exact-Hessian Newton steps must still reach it."""
    rng = np.random.default_rng(8)
    true = np.array([0.0, 150.0, 300.0, 450.0, 600.0, 900.0])
    white, black = rng.integers(0, 6, 300), rng.integers(0, 6, 300)
    keep = white != black
    white, black = white[keep], black[keep]
    scores = np.array([rng.choice([1, 0.5, 0], p=btd.probabilities(true[w] - true[b], 0.4))
                       for w, b in zip(white, black, strict=True)])
    full = btd.fit_pool(6, white, black, scores)
    real = btd.optimize.minimize

    def short(*args: object, **kwargs: object) -> object:
        kwargs["options"] = {"maxiter": 2}
        return real(*args, **kwargs)
    monkeypatch.setattr(btd.optimize, "minimize", short)
    polished = btd.fit_pool(6, white, black, scores)
    np.testing.assert_allclose(polished.ratings, full.ratings, atol=0.01)
    assert polished.nu == pytest.approx(full.nu, rel=1e-4)
