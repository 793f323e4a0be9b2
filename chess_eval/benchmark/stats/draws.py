"""BTD with a draw parameter that changes with strength: log nu smooth in the pair's mean Elo.

btd.py gives every game one draw parameter nu. Here a game between players rated R_1 and R_2
has btd.py's weights, win e^(a/2), draw nu, loss e^(-a/2) with a = (R_1 - R_2) ln10 / 400,
but with

    log nu = b_0 + b_1 x + b_2 x^2 + ...,   x = (clip((R_1 + R_2) / 2, low, high) - centre) / scale,

so the odds of a win over a loss are still those of the Elo formula and only how often a
game is drawn depends on the pair's level. One coefficient is btd.py's model exactly. The
reference ladder's games draw most often at both ends of the ladder and least in the middle
(bench/draw_model.py), so the draw model fitted to them is the quadratic: the lowest-order
smooth curve that can rise at both ends, three numbers against the ladder's 67,025 games. The
pair's mean Elo is clipped to the range the fit saw (`low`, `high`): beyond it the quadratic
would be an extrapolation that grows without bound, so nu is held at its value at the edge.

A joint fit of many players' ratings and the coefficients (`fit_pool`, the ratings and the
coefficients at once, since x moves with the ratings), one player's rating against rated
opponents (`fit`) and that rating's derivatives in the opponents' Elos and the coefficients
(`sensitivity`), with which a ladder's covariance gives its part of the player's sd.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from chess_eval.benchmark.stats import btd
from chess_eval.errors import FitError

CENTRE = 1600.0  # Elo x is centred on (the middle of the reference ladder)
SCALE = 1000.0  # Elo per unit of x (keeps the coefficients near one)


@dataclass(frozen=True)
class DrawModel:
    """log nu as a polynomial in the pair's mean Elo (clipped to the range fitted)."""

    coef: tuple[float, ...]  # log nu's coefficients in x, the constant first
    low: float = -np.inf  # the pair's mean Elo is clipped to [low, high] (Elo)
    high: float = np.inf
    centre: float = CENTRE  # Elo x is centred on
    scale: float = SCALE  # Elo per unit of x

    def x(self, mean_elo: np.ndarray | float) -> np.ndarray:
        """The polynomial's variable at these mean Elos (clipped)."""
        out: np.ndarray = (np.clip(np.asarray(mean_elo, float), self.low, self.high)
                           - self.centre) / self.scale
        return out

    def log_nu(self, mean_elo: np.ndarray | float) -> np.ndarray:
        """log nu at these mean Elos."""
        x = self.x(mean_elo)
        out: np.ndarray = sum((c * x ** k for k, c in enumerate(self.coef)),
                              np.zeros_like(x))
        return out

    def nu(self, mean_elo: np.ndarray | float) -> np.ndarray:
        """nu at these mean Elos."""
        out: np.ndarray = np.exp(self.log_nu(mean_elo))
        return out

    def slopes(self, mean_elo: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """d log nu / dx and d^2 log nu / dx^2 at these mean Elos (zero where clipped)."""
        m = np.asarray(mean_elo, float)
        x = self.x(m)
        inside = (m > self.low) & (m < self.high)
        first = sum((k * c * x ** (k - 1) for k, c in enumerate(self.coef) if k),
                    np.zeros_like(x))
        second = sum((k * (k - 1) * c * x ** (k - 2) for k, c in enumerate(self.coef)
                      if k > 1), np.zeros_like(x))
        return np.where(inside, first, 0.0), np.where(inside, second, 0.0)

    def powers(self, mean_elo: np.ndarray | float) -> np.ndarray:
        """x^k for each coefficient k (games x coefficients): d log nu / d b_k."""
        x = self.x(mean_elo)
        return np.stack([x ** k for k in range(len(self.coef))], axis=-1)

    def power_slopes(self, mean_elo: np.ndarray | float) -> np.ndarray:
        """d(x^k)/dx for each coefficient k (zero where clipped): d^2 log nu / dx db_k."""
        m = np.asarray(mean_elo, float)
        x = self.x(m)
        inside = (m > self.low) & (m < self.high)
        cols = [np.zeros_like(x)] + [k * x ** (k - 1) for k in range(1, len(self.coef))]
        return np.where(inside[..., None], np.stack(cols, axis=-1), 0.0)

    def with_coef(self, coef: np.ndarray | tuple[float, ...]) -> DrawModel:
        """The same form with other coefficients."""
        return DrawModel(tuple(float(c) for c in coef), self.low, self.high, self.centre,
                         self.scale)


def constant(nu: float) -> DrawModel:
    """btd.py's one draw parameter as a draw model."""
    return DrawModel((float(np.log(nu)),))


def probabilities(first: np.ndarray | float, second: np.ndarray | float,
                  model: DrawModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(P(win), P(draw), P(loss)) of the player rated `first` against one rated `second`."""
    a = np.asarray(first, float)
    b = np.asarray(second, float)
    return _probabilities(btd.C * (a - b) / 2, model.log_nu((a + b) / 2))


def _probabilities(half: np.ndarray, log_nu: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three outcomes' probabilities from half the log odds and log nu (no overflow)."""
    log_z = np.logaddexp(np.logaddexp(half, -half), log_nu)
    return np.exp(half - log_z), np.exp(log_nu - log_z), np.exp(-half - log_z)


def expected_score(first: np.ndarray | float, second: np.ndarray | float,
                   model: DrawModel) -> np.ndarray:
    """Expected score (win 1, draw 1/2) of the player rated `first` against `second`."""
    win, draw, _ = probabilities(first, second, model)
    out: np.ndarray = win + draw / 2
    return out


def log_likelihood(first: np.ndarray, second: np.ndarray, scores: np.ndarray,
                   model: DrawModel) -> float:
    """log P(the results) of games between players rated `first` and `second` (`scores`
    the first's: 1, 1/2, 0)."""
    a, b = np.asarray(first, float), np.asarray(second, float)
    half = btd.C * (a - b) / 2
    log_nu = model.log_nu((a + b) / 2)
    return _log_likelihood(half, log_nu, np.asarray(scores, float))


def _log_likelihood(half: np.ndarray, log_nu: np.ndarray, scores: np.ndarray) -> float:
    log_z = np.logaddexp(np.logaddexp(half, -half), log_nu)
    own = np.where(scores == btd.WIN, half, np.where(scores == btd.LOSS, -half, log_nu))
    return float(np.sum(own - log_z))


@dataclass(frozen=True)
class _Curvature:
    """Per game: minus the log likelihood's derivatives in a (half the log odds) and u (log
    nu), first and second."""

    g_a: np.ndarray
    g_u: np.ndarray
    h_aa: np.ndarray
    h_au: np.ndarray
    h_uu: np.ndarray


def _curvature(half: np.ndarray, log_nu: np.ndarray, scores: np.ndarray) -> _Curvature:
    """With p the outcomes' probabilities and s = +1, 0, -1 for a win, draw, loss:
    -l = log Z - s a - [draw] u, so d/da = p_w - p_l - s, d/du = p_d - [draw], and the
    second derivatives are p_w + p_l - (p_w - p_l)^2, -(p_w - p_l) p_d and p_d (1 - p_d)."""
    win, draw, loss = _probabilities(half, log_nu)
    sign = np.where(scores == btd.WIN, 1.0, np.where(scores == btd.LOSS, -1.0, 0.0))
    diff = win - loss
    return _Curvature(diff - sign, draw - (scores == btd.DRAW), win + loss - diff ** 2,
                      -diff * draw, draw * (1 - draw))


@dataclass(frozen=True)
class Pool:
    """Joint ratings of several players and the draw model's coefficients."""

    ratings: np.ndarray  # Elo, relative to player 0 (rated `offset`)
    model: DrawModel  # the fitted coefficients
    joint_cov: np.ndarray  # Laplace covariance of (ratings, coefficients); player 0's row 0

    @property
    def cov(self) -> np.ndarray:
        """The ratings' covariance (player 0's row and column zero)."""
        n = len(self.ratings)
        out: np.ndarray = self.joint_cov[:n, :n]
        return out

    @property
    def coef_cov(self) -> np.ndarray:
        """The coefficients' covariance."""
        n = len(self.ratings)
        out: np.ndarray = self.joint_cov[n:, n:]
        return out


def fit_pool(n_players: int, first: np.ndarray, second: np.ndarray, scores: np.ndarray,
             form: DrawModel, prior: btd.PoolPrior | None = None,
             offset: float = 0.0) -> Pool:
    """Joint MAP of every player's rating (player 0 fixed at `offset` Elo) and of the draw
    model's coefficients (as many as `form` has; its range and centre are kept, its
    coefficients are the start), with the Laplace covariance of both.

    `scores` are the first player's results. The prior on the ratings is btd.flat_prior's
    unless one is given (relative to player 0); the coefficients' is flat.
    """
    prior = prior or btd.flat_prior(n_players)
    first, second = np.asarray(first, int), np.asarray(second, int)
    scores = np.asarray(scores, float)
    draws = scores == btd.DRAW
    if draws.all() or not draws.any():
        raise FitError(f"draw-model fit of {n_players} players on {len(scores)} games: the "
                       f"draw model is not identified when {'every' if draws.all() else 'no'} "
                       "game is drawn")
    n, terms = n_players - 1, len(form.coef)
    rows = np.arange(len(scores))
    # The coordinates: ratings of players 1.. in hundreds of Elo (curvatures near one, as
    # btd.fit_pool's), then the coefficients. `pick` adds one game's rating columns.
    pick = np.zeros((len(scores), n))
    np.add.at(pick, (rows[first > 0], first[first > 0] - 1), 1.0)
    np.add.at(pick, (rows[second > 0], second[second > 0] - 1), 1.0)
    sign = np.zeros((len(scores), n))  # +1 at the first player's column, -1 at the second's
    np.add.at(sign, (rows[first > 0], first[first > 0] - 1), 1.0)
    np.add.at(sign, (rows[second > 0], second[second > 0] - 1), -1.0)
    per = 50.0 / form.scale  # dx/dy of either player (y: a rating in hundreds)

    def unpack(z: np.ndarray) -> tuple[np.ndarray, DrawModel]:
        return np.concatenate([[0.0], 100 * z[:n]]) + offset, form.with_coef(z[n:])

    def state(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, DrawModel]:
        ratings, model = unpack(z)
        half = btd.C * (ratings[first] - ratings[second]) / 2
        mean = (ratings[first] + ratings[second]) / 2
        return half, mean, ratings, model

    def negative(z: np.ndarray) -> float:
        half, mean, ratings, model = state(z)
        off = ratings[1:] - offset - prior.mean
        return -_log_likelihood(half, model.log_nu(mean), scores) \
            + 0.5 * float(off @ prior.precision @ off)

    def gradient(z: np.ndarray) -> np.ndarray:
        half, mean, ratings, model = state(z)
        c = _curvature(half, model.log_nu(mean), scores)
        u_x, _ = model.slopes(mean)
        out = np.empty(len(z))
        on_a, on_u = 50 * btd.C * c.g_a, per * u_x * c.g_u
        # By player (bincount: the dense sign.T @ on_a, pick.T @ on_u, ten times as fast).
        out[:n] = (np.bincount(first, on_a + on_u, n + 1)
                   + np.bincount(second, on_u - on_a, n + 1))[1:] \
            + 100 * prior.precision @ (ratings[1:] - offset - prior.mean)
        out[n:] = model.powers(mean).T @ c.g_u
        return out

    def hessian(z: np.ndarray) -> np.ndarray:
        half, mean, _, model = state(z)
        c = _curvature(half, model.log_nu(mean), scores)
        u_x, u_xx = model.slopes(mean)
        j_a = np.concatenate([50 * btd.C * sign, np.zeros((len(scores), terms))], axis=1)
        j_u = np.concatenate([per * u_x[:, None] * pick, model.powers(mean)], axis=1)
        out: np.ndarray = j_a.T @ (c.h_aa[:, None] * j_a) + j_u.T @ (c.h_uu[:, None] * j_u)
        cross = j_a.T @ (c.h_au[:, None] * j_u)
        out += cross + cross.T
        # log nu is not linear in the coordinates: its own second derivatives, times d/du.
        out[:n, :n] += pick.T @ ((c.g_u * u_xx * per ** 2)[:, None] * pick)
        mixed = pick.T @ ((c.g_u * per)[:, None] * model.power_slopes(mean))
        out[:n, n:] += mixed
        out[n:, :n] += mixed.T
        out[:n, :n] += 100 ** 2 * prior.precision
        return out

    start = np.concatenate([prior.mean / 100, np.asarray(form.coef, float)])
    result = optimize.minimize(negative, start, jac=gradient, method="BFGS",
                               options={"gtol": 1e-7})
    z = btd._newton(negative, gradient, hessian, result.x)
    if z is None:
        raise FitError(f"draw-model fit of {n_players} players on {len(scores)} games did "
                       f"not converge: {result.message}")
    cov_z = btd._inverse_of_positive_definite(
        hessian(z), f"draw-model fit of {n_players} players on {len(scores)} games")
    scale = np.concatenate([np.full(n, 100.0), np.ones(terms)])
    joint = np.zeros((n_players + terms, n_players + terms))
    joint[1:, 1:] = scale[:, None] * cov_z * scale[None, :]
    ratings, model = unpack(z)
    return Pool(ratings - offset, model, joint)


def _one_player(rating: float, opponents: np.ndarray, scores: np.ndarray,
                model: DrawModel) -> tuple[_Curvature, np.ndarray, np.ndarray, np.ndarray]:
    """Per game against each opponent: the curvature terms, d log nu/dx, its second
    derivative, and the mean Elos."""
    half = btd.C * (rating - opponents) / 2
    mean = (rating + opponents) / 2
    u_x, u_xx = model.slopes(mean)
    return _curvature(half, model.log_nu(mean), scores), u_x, u_xx, mean


def _gradient(rating: float, opponents: np.ndarray, scores: np.ndarray, model: DrawModel,
              prior: btd.Prior) -> float:
    """The log posterior's derivative in the rating: dR of a is C/2, of x 1/(2 scale)."""
    c, u_x, _, _ = _one_player(rating, opponents, scores, model)
    return float(-np.sum(btd.C / 2 * c.g_a + u_x / (2 * model.scale) * c.g_u)
                 - (rating - prior.mean) / prior.sd ** 2)


def _precision(rating: float, opponents: np.ndarray, scores: np.ndarray, model: DrawModel,
               prior: btd.Prior) -> float:
    """Minus the log posterior's second derivative in the rating (observed information)."""
    c, u_x, u_xx, _ = _one_player(rating, opponents, scores, model)
    da, du = btd.C / 2, u_x / (2 * model.scale)
    return float(np.sum(da ** 2 * c.h_aa + 2 * da * du * c.h_au + du ** 2 * c.h_uu
                        + c.g_u * u_xx / (2 * model.scale) ** 2) + 1 / prior.sd ** 2)


def fit(opponents: np.ndarray, scores: np.ndarray, model: DrawModel,
        prior: btd.Prior) -> btd.Posterior:
    """MAP and Laplace interval of one player's rating against opponents of known rating
    (btd.fit's, with nu at each game's mean Elo)."""
    opponents = np.asarray(opponents, float)
    scores = np.asarray(scores, float)
    lo, hi = prior.mean - 20 * prior.sd, prior.mean + 20 * prior.sd
    rating = float(optimize.brentq(_gradient, lo, hi, args=(opponents, scores, model, prior),
                                   xtol=1e-6))
    precision = _precision(rating, opponents, scores, model, prior)
    if not precision > 0:
        raise FitError(f"draw-model rating from {len(scores)} games: the log posterior is "
                       "not curved down at its stationary point, so there is no interval")
    sd = precision ** -0.5
    return btd.Posterior(rating, sd, rating - btd.Z90 * sd, rating + btd.Z90 * sd,
                         len(scores), "laplace")


def sensitivity(rating: float, opponents: np.ndarray, scores: np.ndarray, model: DrawModel,
                prior: btd.Prior) -> tuple[np.ndarray, np.ndarray]:
    """How far the MAP rating moves per Elo each game's opponent moves (one per game: sum
    them by rung) and per unit of each coefficient: -H_(R,e) / H_(R,R) by the implicit
    function theorem, H the log posterior's Hessian."""
    opponents = np.asarray(opponents, float)
    scores = np.asarray(scores, float)
    c, u_x, u_xx, mean = _one_player(rating, opponents, scores, model)
    da, du = btd.C / 2, u_x / (2 * model.scale)
    # d/de of a is -C/2 and of x 1/(2 scale), as for the rating but for a's sign.
    cross_e = -da ** 2 * c.h_aa + du ** 2 * c.h_uu + c.g_u * u_xx / (2 * model.scale) ** 2
    cross_b = (da * c.h_au + du * c.h_uu)[:, None] * model.powers(mean) \
        + (c.g_u / (2 * model.scale))[:, None] * model.power_slopes(mean)
    precision = _precision(rating, opponents, scores, model, prior)
    return -cross_e / precision, -cross_b.sum(axis=0) / precision


def fit_mcmc(opponents: np.ndarray, scores: np.ndarray, model: DrawModel, prior: btd.Prior,
             seed: int, samples: int = 4000, burn: int = 1000) -> btd.Posterior:
    """btd.fit_mcmc's random-walk Metropolis (the same steps, proposal and quantiles) with
    nu at each game's mean Elo."""
    opponents = np.asarray(opponents, float)
    scores = np.asarray(scores, float)
    start = fit(opponents, scores, model, prior)

    def log_post(r: float) -> float:
        return log_likelihood(np.full(len(opponents), r), opponents, scores, model) \
            - 0.5 * ((r - prior.mean) / prior.sd) ** 2
    rng = np.random.default_rng(seed)
    current, current_lp = start.mean, log_post(start.mean)
    out = np.empty(samples)
    for i in range(burn + samples):
        proposal = current + 2.4 * start.sd * rng.standard_normal()
        lp = log_post(proposal)
        if np.log(rng.random()) < lp - current_lp:
            current, current_lp = proposal, lp
        if i >= burn:
            out[i - burn] = current
    lo, hi = np.quantile(out, [0.5 - btd.LEVEL / 2, 0.5 + btd.LEVEL / 2])
    return btd.Posterior(float(out.mean()), float(out.std()), float(lo), float(hi),
                         len(scores), "mcmc")


def one_sided(opponents: np.ndarray, won: bool, model: DrawModel, level: float) -> float:
    """The Elo at which every game ending as it did (all won or all lost against these
    opponents) has probability `level`."""
    opponents = np.asarray(opponents, float)

    def excess(r: float) -> float:
        win, _, loss = probabilities(r, opponents, model)
        return float(np.sum(np.log(win if won else loss)) - np.log(level))
    return float(optimize.brentq(excess, opponents.min() - 5000, opponents.max() + 5000))
