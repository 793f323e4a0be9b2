"""Two players rated together: their games against the ladder's rungs and against each other
in one Bradley-Terry-Davidson fit, the rungs' Elos and covariance as the ladder gives them.

Each player's `play` rating comes from its games against rungs of known Elo (btd.fit). A
head-to-head match adds games whose opponent is the other player, so the two ratings are
fitted at once: the joint MAP of (r_A, r_B) under the same model and each player's own prior,
with the rungs held at their measured Elos. The games against the rungs keep the ladder's
draw parameter nu; the match's games get their own, estimated with the ratings (log nu_h with
a prior N(log nu, NU_PRIOR_SD^2): two players of other families need not draw as the rungs
draw one another, and a match with few or no draws still has a finite MAP); its error enters
the ratings' through the joint curvature. Its errors have
two parts, as play's do: the games' (the inverse of the log posterior's curvature, H^-1) and
the ladder's, carried by the ratings' sensitivity to the rungs' Elos (W = H^-1 G, with G the
cross-curvature between a rating and a rung; implicit differentiation of the MAP), W Cov W'.
Without head-to-head games the fit is each player's own play rating (a test holds it to
btd.fit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chess_eval.benchmark.stats import draws as draw_model
from chess_eval.benchmark.stats.btd import DRAW, LOSS, WIN, Z90, C, Prior, game_information
from chess_eval.benchmark.stats.draws import DrawModel
from chess_eval.errors import FitError

MAX_STEPS = 200
TOLERANCE = 1e-6  # Elo: Newton stops when no rating moves by more than this
# The prior sd of the match's log draw parameter about the ladder's: a factor e either way is
# one sd, so the match's draws decide it from a few dozen games on.
NU_PRIOR_SD = 1.0


@dataclass(frozen=True)
class RungGames:
    """A player's games against one rung."""

    rung: int  # the rung's index in the ladder
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        """Games against this rung."""
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """The player's score against it."""
        return self.wins + self.draws / 2


@dataclass(frozen=True)
class JointFit:
    """Both ratings from one fit."""

    means: tuple[float, float]  # MAP ratings of A and B (Elo)
    own: np.ndarray  # the games' covariance of (A, B), Elo^2
    ladder: np.ndarray  # the ladder's covariance of (A, B), Elo^2
    weights: np.ndarray  # dR/dE: each rating's sensitivity to each rung's Elo (2 x rungs)
    nu_match: float | None = None  # the match games' draw parameter (MAP; None: no match)

    @property
    def cov(self) -> np.ndarray:
        """The ratings' whole covariance."""
        total: np.ndarray = self.own + self.ladder
        return total

    def interval(self, player: int) -> tuple[float, float]:
        """A player's 90% interval."""
        sd = float(np.sqrt(self.cov[player, player]))
        return self.means[player] - Z90 * sd, self.means[player] + Z90 * sd

    def difference(self) -> tuple[float, float]:
        """A - B and its sd (the two ratings' covariance, the ladder's shared part, in it)."""
        var = self.cov[0, 0] + self.cov[1, 1] - 2 * self.cov[0, 1]
        return self.means[0] - self.means[1], float(np.sqrt(max(var, 0.0)))


def joint_fit(rung_elos: Sequence[float], ladder_cov: np.ndarray, nu: float | DrawModel,
              games: tuple[Sequence[RungGames], Sequence[RungGames]],
              head_to_head: tuple[int, int, int], priors: tuple[Prior, Prior]) -> JointFit:
    """Ratings of A and B from their games against the rungs (`games`) and against each other
    (`head_to_head`: A's wins, draws and losses), with the ladder's part of their errors; the
    match's own draw parameter is fitted with them. `nu`: the ladder's one nu, or its draw
    model (nu at each game's pair mean Elo, as play reads it); the match's nu_h is centred
    on the model's nu at the mean of the two ladder-only ratings."""
    elos = np.asarray(rung_elos, float)
    if isinstance(nu, DrawModel):
        if any(head_to_head):
            alone = joint_fit(rung_elos, ladder_cov, nu, games, (0, 0, 0), priors)
            level = float(nu.log_nu(sum(alone.means) / 2))
        else:
            level = 0.0
        match = Match(*head_to_head, log_nu0=level)
    else:
        match = Match(*head_to_head, log_nu0=float(np.log(nu)) if nu > 0 else 0.0)
    # (r_A, r_B, log nu_h): the third coordinate only moves when there is a match.
    theta = np.array([priors[0].mean, priors[1].mean, match.log_nu0], float)
    dims = 3 if match.games else 2
    for _ in range(MAX_STEPS):
        gradient, hessian, _ = _curvature(theta, elos, nu, games, match, priors)
        step = np.linalg.solve(hessian[:dims, :dims], gradient[:dims])
        # Newton on a concave log posterior; steps capped (400 Elo, a factor e^2 in nu_h), as
        # a lopsided record starts far from its MAP where the curvature is nearly flat.
        step = np.clip(step, -np.array([400.0, 400.0, 2.0])[:dims],
                       np.array([400.0, 400.0, 2.0])[:dims])
        theta[:dims] = theta[:dims] + step
        if np.max(np.abs(step[:2])) < TOLERANCE and (dims == 2 or abs(step[2]) < 1e-9):
            break
    else:
        raise FitError("the joint fit of the two ratings did not converge")
    _, hessian, cross = _curvature(theta, elos, nu, games, match, priors)
    inverse = np.linalg.inv(hessian[:dims, :dims])
    own = inverse[:2, :2]
    weights = (inverse @ cross[:dims])[:2]
    return JointFit((float(theta[0]), float(theta[1])), own,
                    weights @ np.asarray(ladder_cov, float) @ weights.T, weights,
                    float(np.exp(theta[2])) if match.games else None)


@dataclass(frozen=True)
class Match:
    """The head-to-head games (A's view) and the centre of their draw parameter's prior."""

    wins: int
    draws: int
    losses: int
    log_nu0: float  # the prior's mean of log nu_h: the ladder's log nu

    @property
    def games(self) -> int:
        """Games between the two."""
        return self.wins + self.draws + self.losses


def _curvature(theta: np.ndarray, elos: np.ndarray, nu: float | DrawModel,
               games: tuple[Sequence[RungGames], Sequence[RungGames]], match: Match,
               priors: tuple[Prior, Prior]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log posterior's gradient in (r_A, r_B, log nu_h), minus its Hessian there, and
    the cross curvature G (d2 log posterior / d theta d E, 3 x rungs; its nu_h row is 0)."""
    gradient = np.zeros(3)
    hessian = np.zeros((3, 3))
    cross = np.zeros((3, len(elos)))
    for p in (0, 1):
        if isinstance(nu, DrawModel):
            _add_rung_games(p, theta[p], elos, nu, games[p], gradient, hessian, cross)
            gradient[p] -= (theta[p] - priors[p].mean) / priors[p].sd ** 2
            hessian[p, p] += 1 / priors[p].sd ** 2
            continue
        for g in games[p]:
            delta = theta[p] - elos[g.rung]
            gradient[p] += _residual(delta, g.points, g.games, nu)
            info = g.games * float(game_information(delta, nu))
            hessian[p, p] += info
            cross[p, g.rung] += info
        gradient[p] -= (theta[p] - priors[p].mean) / priors[p].sd ** 2
        hessian[p, p] += 1 / priors[p].sd ** 2
    if match.games:
        _add_match(theta, match, gradient, hessian)
    return gradient, hessian, cross


def _add_rung_games(p: int, rating: float, elos: np.ndarray, model: DrawModel,
                    games: Sequence[RungGames], gradient: np.ndarray, hessian: np.ndarray,
                    cross: np.ndarray) -> None:
    """Player p's games against the rungs under the draw model, added in place: the log
    likelihood's slope in its rating, minus its curvature, and the cross curvature with each
    rung's Elo (draws.sensitivity's terms: a rung's Elo moves the level nu is read at too)."""
    if not games:
        return
    rung = np.concatenate([np.full(g.games, g.rung) for g in games]).astype(int)
    scores = np.concatenate([[WIN] * g.wins + [DRAW] * g.draws + [LOSS] * g.losses
                             for g in games])
    c, u_x, u_xx, _ = draw_model._one_player(rating, elos[rung], scores, model)
    da, du = C / 2, u_x / (2 * model.scale)
    curl = c.g_u * u_xx / (2 * model.scale) ** 2
    gradient[p] -= float(np.sum(da * c.g_a + du * c.g_u))
    hessian[p, p] += float(np.sum(da ** 2 * c.h_aa + 2 * da * du * c.h_au + du ** 2 * c.h_uu
                                  + curl))
    per_game = da ** 2 * c.h_aa - du ** 2 * c.h_uu - curl
    cross[p] += np.bincount(rung, per_game, len(elos))


def _add_match(theta: np.ndarray, match: Match, gradient: np.ndarray,
               hessian: np.ndarray) -> None:
    """The match's games and its draw parameter's prior, added in place. With h = C delta / 2,
    z = 2 cosh h + nu_h, the log likelihood is (W - L) h + D log nu_h - N log z."""
    n, nu_h = match.games, float(np.exp(theta[2]))
    half = C * (theta[0] - theta[1]) / 2
    z = 2 * np.cosh(half) + nu_h
    slope = _residual(theta[0] - theta[1], match.wins + match.draws / 2, n, nu_h)
    to_ratings = np.array([1.0, -1.0])  # d delta / d (r_A, r_B)
    gradient[:2] += slope * to_ratings
    gradient[2] += match.draws - n * nu_h / z - (theta[2] - match.log_nu0) / NU_PRIOR_SD ** 2
    info = n * float(game_information(theta[0] - theta[1], nu_h))
    hessian[:2, :2] += info * np.outer(to_ratings, to_ratings)
    mixed = -C * n * nu_h * np.sinh(half) / z ** 2  # -d2 loglik / d delta d log nu_h
    hessian[:2, 2] += mixed * to_ratings
    hessian[2, :2] += mixed * to_ratings
    hessian[2, 2] += n * nu_h * 2 * np.cosh(half) / z ** 2 + 1 / NU_PRIOR_SD ** 2


def _residual(delta: float, points: float, games: int, nu: float) -> float:
    """The BTD log likelihood's slope (per Elo) in a rating delta Elo above its opponent,
    `points` scored in `games`: C (points - games/2 - games sinh(h) / (2 cosh(h) + nu))."""
    half = C * delta / 2
    return float(C * (points - games / 2 - games * np.sinh(half) / (2 * np.cosh(half) + nu)))
