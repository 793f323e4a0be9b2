"""Game Elo from wins, draws and losses: the Bradley-Terry-Davidson model.

With pi = 10 ** (R / 400), Davidson (1970) gives a game between i and j
    P(i wins) = pi_i / Z,  P(draw) = nu * sqrt(pi_i * pi_j) / Z,  P(j wins) = pi_j / Z,
so the odds of a win over a loss are those of the Elo formula, 10 ** ((R_i - R_j) / 400), and
nu (>= 0) sets how often games are drawn (nu = 0: Bradley-Terry; at equal strength
P(draw) = nu / (2 + nu)). The promptfoo gpt5-chess write-up writes the win weight as 10 **
(delta / 400) against the draw weight nu; read literally that doubles the Elo scale, so the
factor sqrt(pi_i pi_j) is divided out of all three weights here instead: win e^(a/2), draw nu,
loss e^(-a/2), with a = (R_i - R_j) ln10 / 400.

One player's rating against opponents of known rating: MAP by scipy's root finder on the
score (the log posterior is concave), a Laplace interval from the exact curvature, and a
random-walk Metropolis sampler as the exact alternative. Many players at once (calibrating a
ladder): the joint MAP of every rating and log nu, with the Laplace covariance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from chess_eval.errors import FitError

C = np.log(10) / 400  # natural-log units per Elo point
LEVEL = 0.90
Z90 = float(stats.norm.ppf(0.5 + LEVEL / 2))
WIN, DRAW, LOSS = 1.0, 0.5, 0.0
POOL_SD = 4000.0  # the nearly flat prior of a joint fit: keeps a perfect record finite
GRADIENT_TOL = 1e-4  # a joint fit has converged when no coordinate's slope exceeds this


def probabilities(delta: np.ndarray | float, nu: float) -> tuple[np.ndarray, ...]:
    """(P(win), P(draw), P(loss)) of the player rated delta Elo above the opponent."""
    half = C * np.asarray(delta, float) / 2
    z = np.exp(half) + np.exp(-half) + nu
    return np.exp(half) / z, nu / z, np.exp(-half) / z


def expected_score(delta: np.ndarray | float, nu: float) -> np.ndarray:
    """Expected score (win 1, draw 1/2) of the player rated delta Elo above the opponent."""
    win, draw, _ = probabilities(delta, nu)
    return win + draw / 2


def difference_of_score(score: float, nu: float) -> float:
    """The Elo difference whose expected score (expected_score) is `score`: the maximum-
    likelihood difference of games with that mean score, since under the model the wins
    less the losses are sufficient for it (-inf at 0, +inf at 1; nu = 0 gives the logistic
    -400 log10(1/score - 1))."""
    if score <= 0.0:
        return -np.inf
    if score >= 1.0:
        return np.inf
    # With t = e^(a/2) and y = 2 score - 1: (1 - y) t^2 - y nu t - (1 + y) = 0.
    y = 2.0 * score - 1.0
    t = (y * nu + np.sqrt((y * nu) ** 2 + 4.0 * (1.0 - y) * (1.0 + y))) / (2.0 * (1.0 - y))
    return float(2.0 * np.log(t) / C) + 0.0  # never -0.0


def game_information(delta: np.ndarray | float, nu: float) -> np.ndarray:
    """Fisher information (per Elo^2) of one game between players delta Elo apart."""
    half = C * np.asarray(delta, float) / 2
    z = 2 * np.cosh(half) + nu
    info: np.ndarray = C ** 2 * (1 + nu * np.cosh(half) / 2) / z ** 2
    return info


def log_likelihood(rating: float, opponents: np.ndarray, scores: np.ndarray,
                   nu: float) -> float:
    """log P(the results) for a player of `rating` against `opponents` (scores 1, 1/2, 0)."""
    half = C * (rating - np.asarray(opponents, float)) / 2
    scores = np.asarray(scores, float)
    log_z = np.logaddexp(np.logaddexp(half, -half), np.log(nu) if nu > 0 else -np.inf)
    own = np.where(scores == WIN, half, np.where(scores == LOSS, -half,
                                                 np.log(nu) if nu > 0 else -np.inf))
    return float(np.sum(own - log_z))


@dataclass(frozen=True)
class Prior:
    """A normal prior on the rating."""

    mean: float  # Elo
    sd: float  # Elo


def _gradient(rating: float, opponents: np.ndarray, scores: np.ndarray, nu: float,
              prior: Prior) -> float:
    half = C * (rating - opponents) / 2
    z = 2 * np.cosh(half) + nu
    return float(C * np.sum(scores - 0.5 - np.sinh(half) / z)
                 - (rating - prior.mean) / prior.sd ** 2)


def _precision(rating: float, opponents: np.ndarray, nu: float, prior: Prior) -> float:
    """Minus the second derivative of the log posterior (the Fisher information plus prior)."""
    return float(np.sum(game_information(rating - opponents, nu)) + 1 / prior.sd ** 2)


@dataclass(frozen=True)
class Posterior:
    """A normal summary of one player's rating posterior."""

    mean: float  # MAP (Laplace) or posterior mean (MCMC)
    sd: float
    lo: float  # 90% interval
    hi: float
    games: int
    method: str
    ladder: float = 0.0  # the sd (Elo) the opponents' own uncertainty adds, inside sd, lo, hi

    @property
    def half_width(self) -> float:
        """Half the 90% interval's width."""
        return (self.hi - self.lo) / 2

    @property
    def ladder_half_width(self) -> float:
        """Half the width the ladder's uncertainty alone would give the 90% interval."""
        return Z90 * self.ladder

    @property
    def own_half_width(self) -> float:
        """Half the width from the player's own games alone (as if the ladder were exact)."""
        return float(np.sqrt(max(self.half_width ** 2 - self.ladder_half_width ** 2, 0.0)))


def fit(opponents: np.ndarray, scores: np.ndarray, nu: float, prior: Prior) -> Posterior:
    """MAP and Laplace interval of one player's rating against rated opponents."""
    opponents = np.asarray(opponents, float)
    scores = np.asarray(scores, float)
    lo, hi = prior.mean - 20 * prior.sd, prior.mean + 20 * prior.sd
    # The score is strictly decreasing, so its one root is the MAP.
    rating = float(optimize.brentq(_gradient, lo, hi, args=(opponents, scores, nu, prior),
                                   xtol=1e-6))
    sd = _precision(rating, opponents, nu, prior) ** -0.5
    return Posterior(rating, sd, rating - Z90 * sd, rating + Z90 * sd, len(scores), "laplace")


def sample(opponents: np.ndarray, scores: np.ndarray, nu: float, prior: Prior, seed: int,
           draws: int = 4000, burn: int = 1000) -> np.ndarray:
    """Random-walk Metropolis draws of one player's rating posterior."""
    opponents = np.asarray(opponents, float)
    scores = np.asarray(scores, float)
    start = fit(opponents, scores, nu, prior)

    def log_post(r: float) -> float:
        return log_likelihood(r, opponents, scores, nu) - 0.5 * ((r - prior.mean) / prior.sd) ** 2
    rng = np.random.default_rng(seed)
    current, current_lp = start.mean, log_post(start.mean)
    out = np.empty(draws)
    for i in range(burn + draws):
        proposal = current + 2.4 * start.sd * rng.standard_normal()
        lp = log_post(proposal)
        if np.log(rng.random()) < lp - current_lp:
            current, current_lp = proposal, lp
        if i >= burn:
            out[i - burn] = current
    return out


def fit_mcmc(opponents: np.ndarray, scores: np.ndarray, nu: float, prior: Prior,
             seed: int) -> Posterior:
    """Posterior mean and 5-95% quantiles of one player's rating, by MCMC."""
    draws = sample(opponents, scores, nu, prior, seed)
    lo, hi = np.quantile(draws, [0.5 - LEVEL / 2, 0.5 + LEVEL / 2])
    return Posterior(float(draws.mean()), float(draws.std()), float(lo), float(hi),
                     len(scores), "mcmc")


@dataclass(frozen=True)
class Pool:
    """Joint ratings of several players from games among them."""

    ratings: np.ndarray  # Elo, relative to player 0 (rated 0)
    cov: np.ndarray  # Laplace covariance of ratings (row and column 0 are zero)
    nu: float  # the draw parameter's MAP


@dataclass(frozen=True)
class PoolPrior:
    """A Normal prior on the ratings of players 1.. relative to player 0."""

    mean: np.ndarray  # Elo, one per player 1..
    precision: np.ndarray  # the inverse of its covariance (Elo^-2)


def flat_prior(n_players: int) -> PoolPrior:
    """The nearly flat prior: each rating Normal(0, POOL_SD^2) relative to player 0; it only
    keeps a player who won or lost every game finite."""
    return PoolPrior(np.zeros(n_players - 1), np.eye(n_players - 1) / POOL_SD ** 2)


def fit_pool(n_players: int, white: np.ndarray, black: np.ndarray, scores: np.ndarray,
             nu: float | None = None, prior: PoolPrior | None = None) -> Pool:
    """Joint MAP of every player's rating (player 0 fixed at 0) and of nu (unless given).

    `scores` are white's results. The prior is `flat_prior` unless one is given (a ladder
    for a new engine has its prior from another engine's ladder: ladder_prior.py).
    """
    prior = prior or flat_prior(n_players)
    white, black = np.asarray(white, int), np.asarray(black, int)
    scores = np.asarray(scores, float)
    draws = scores == DRAW
    wins = scores == WIN

    def unpack(x: np.ndarray) -> tuple[np.ndarray, float]:
        # Ratings in hundreds of Elo, so that every coordinate has a curvature near one.
        ratings = np.concatenate([[0.0], 100 * x[: n_players - 1]])
        return ratings, (float(np.exp(x[-1])) if nu is None else nu)

    def negative(x: np.ndarray) -> float:
        ratings, nu_ = unpack(x)
        half = C * (ratings[white] - ratings[black]) / 2
        log_nu = np.log(nu_) if nu_ > 0 else -np.inf
        log_z = np.logaddexp(np.logaddexp(half, -half), log_nu)
        own = np.where(draws, log_nu, np.where(wins, half, -half))
        off = ratings[1:] - prior.mean
        return float(-np.sum(own - log_z) + 0.5 * off @ prior.precision @ off)
    if nu is None and (draws.all() or not draws.any()):
        raise FitError(f"joint BTD fit of {n_players} players on {len(scores)} games: the draw "
                       f"parameter is not identified when {'every' if draws.all() else 'no'} "
                       "game is drawn; give nu")
    def gradient(x: np.ndarray) -> np.ndarray:
        ratings, nu_ = unpack(x)
        half = C * (ratings[white] - ratings[black]) / 2
        z = 2 * np.cosh(half) + nu_
        slope = np.where(draws, 0.0, np.where(wins, 1.0, -1.0)) - 2 * np.sinh(half) / z
        out = np.zeros(len(x))
        np.add.at(out, white[white > 0] - 1, -50 * C * slope[white > 0])
        np.add.at(out, black[black > 0] - 1, 50 * C * slope[black > 0])
        out[: n_players - 1] += 100 * prior.precision @ (ratings[1:] - prior.mean)
        if nu is None:
            out[-1] = -float(np.sum(draws - nu_ / z))
        return out

    size = n_players - 1 + (nu is None)
    start = np.zeros(size)
    start[: n_players - 1] = prior.mean / 100  # zeros under the flat prior
    result = optimize.minimize(negative, start, jac=gradient, method="BFGS",
                               options={"gtol": 1e-7})
    # BFGS may stop short where a direction is nearly flat (a rung that won or lost almost
    # every game): Newton steps with the exact Hessian finish the job, or the fit fails.
    x = _newton(negative, gradient,
                lambda x: pool_hessian(*unpack(x), white, black, nu is None, prior), result.x)
    if x is None:
        raise FitError(f"joint BTD fit of {n_players} players on {len(scores)} games did not "
                       f"converge: {result.message}")
    ratings, nu_ = unpack(x)
    cov_x = _inverse_of_positive_definite(
        pool_hessian(ratings, nu_, white, black, nu is None, prior),
        f"joint BTD fit of {n_players} players on {len(scores)} games")
    cov = np.zeros((n_players, n_players))
    cov[1:, 1:] = 100 ** 2 * cov_x[: n_players - 1, : n_players - 1]
    return Pool(ratings, cov, nu_)


def _newton(f: Callable[[np.ndarray], float], gradient: Callable[[np.ndarray], np.ndarray],
            hessian: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
            steps: int = 50) -> np.ndarray | None:
    """Damped Newton steps from x to a point where no coordinate's slope exceeds
    GRADIENT_TOL; None if it gets there in no more than `steps` steps."""
    for _ in range(steps):
        g = gradient(x)
        if np.max(np.abs(g)) < GRADIENT_TOL:
            return x
        try:
            step = np.linalg.solve(hessian(x), g)
        except np.linalg.LinAlgError:
            return None
        value, t = f(x), 1.0
        while f(x - t * step) > value and t > 1e-6:
            t /= 2
        x = x - t * step
    return x if np.max(np.abs(gradient(x))) < GRADIENT_TOL else None


def _inverse_of_positive_definite(matrix: np.ndarray, what: str) -> np.ndarray:
    """The inverse of a Hessian that must be positive definite (a maximum, not a saddle)."""
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        raise FitError(f"{what}: the curvature at the optimum is not positive definite, so "
                       "there is no interval") from None
    return np.linalg.inv(matrix)


def pool_hessian(ratings: np.ndarray, nu: float, white: np.ndarray, black: np.ndarray,
                 free_nu: bool, prior: PoolPrior | None = None) -> np.ndarray:
    """The exact Hessian of fit_pool's negative log posterior in its own coordinates (ratings
    of players 1.. in hundreds of Elo, then log nu when it is fitted).

    Per game, with a = C (R_white - R_black) / 2 and Z = 2 cosh a + nu, minus the
    log-likelihood has second derivatives (4 + 2 nu cosh a) / Z^2 in a, -2 nu sinh a / Z^2 in
    a and log nu, and 2 nu cosh a / Z^2 in log nu (the result's own term is linear in both);
    da/dx is +-50 C for the two players' coordinates. The prior adds 100^2 times its
    precision (flat_prior's unless one is given).
    """
    prior = prior or flat_prior(len(ratings))
    n = len(ratings) - 1
    size = n + free_nu
    half = C * (ratings[white] - ratings[black]) / 2
    z = 2 * np.cosh(half) + nu
    h_aa = (4 + 2 * nu * np.cosh(half)) / z ** 2
    jac = np.zeros((len(half), size))  # da/dx of each game
    rows = np.arange(len(half))
    np.add.at(jac, (rows[white > 0], white[white > 0] - 1), 50 * C)
    np.add.at(jac, (rows[black > 0], black[black > 0] - 1), -50 * C)
    out: np.ndarray = jac.T @ (h_aa[:, None] * jac)
    out[:n, :n] += 100 ** 2 * prior.precision
    if free_nu:
        cross = jac[:, :n].T @ (-2 * nu * np.sinh(half) / z ** 2)
        out[:n, n] += cross
        out[n, :n] += cross
        out[n, n] += float(np.sum(2 * nu * np.cosh(half) / z ** 2))
    return out
