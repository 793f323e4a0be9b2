"""Two players rated together: their games against the ladder's rungs and against each other
in one Bradley-Terry-Davidson fit, the rungs' Elos and covariance as the ladder gives them.

Each player's `play` rating comes from its games against rungs of known Elo (btd.fit). A
head-to-head match adds games whose opponent is the other player, so the two ratings are
fitted at once: the joint MAP of (r_A, r_B) under the same model (the ladder's draw parameter
nu) and each player's own prior, with the rungs held at their measured Elos. Its errors have
two parts, as play's do: the games' (the inverse of the log posterior's curvature, H^-1) and
the ladder's, carried by the ratings' sensitivity to the rungs' Elos (W = H^-1 G, with G the
cross-curvature between a rating and a rung; implicit differentiation of the MAP), W Cov W'.
Without head-to-head games the fit is each player's own play rating (a test holds it to
btd.fit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lib.benchmark.stats.btd import Z90, C, Prior, game_information
from lib.errors import FitError

MAX_STEPS = 200
TOLERANCE = 1e-6  # Elo: Newton stops when no rating moves by more than this


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


def joint_fit(rung_elos: Sequence[float], ladder_cov: np.ndarray, nu: float,
              games: tuple[Sequence[RungGames], Sequence[RungGames]],
              head_to_head: tuple[int, int, int], priors: tuple[Prior, Prior]) -> JointFit:
    """Ratings of A and B from their games against the rungs (`games`) and against each other
    (`head_to_head`: A's wins, draws and losses), with the ladder's part of their errors."""
    elos = np.asarray(rung_elos, float)
    wins, draws, losses = head_to_head
    h2h_games, h2h_points = wins + draws + losses, wins + draws / 2
    ratings = np.array([p.mean for p in priors], float)
    for _ in range(MAX_STEPS):
        gradient, hessian, _ = _curvature(ratings, elos, nu, games, h2h_games, h2h_points,
                                          priors)
        step = np.linalg.solve(hessian, gradient)
        # Newton on a concave log posterior; steps capped at 400 Elo, as a lopsided record
        # starts far from its MAP where the curvature is nearly flat.
        step = np.clip(step, -400.0, 400.0)
        ratings = ratings + step
        if np.max(np.abs(step)) < TOLERANCE:
            break
    else:
        raise FitError("the joint fit of the two ratings did not converge")
    _, hessian, cross = _curvature(ratings, elos, nu, games, h2h_games, h2h_points, priors)
    own = np.linalg.inv(hessian)
    weights = own @ cross
    return JointFit((float(ratings[0]), float(ratings[1])), own,
                    weights @ np.asarray(ladder_cov, float) @ weights.T, weights)


def _curvature(ratings: np.ndarray, elos: np.ndarray, nu: float,
               games: tuple[Sequence[RungGames], Sequence[RungGames]], h2h_games: int,
               h2h_points: float, priors: tuple[Prior, Prior]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The log posterior's gradient in (r_A, r_B), minus its Hessian there, and the cross
    curvature G (d2 log posterior / d r d E, 2 x rungs)."""
    gradient = np.zeros(2)
    hessian = np.zeros((2, 2))
    cross = np.zeros((2, len(elos)))
    for p in (0, 1):
        for g in games[p]:
            delta = ratings[p] - elos[g.rung]
            gradient[p] += _residual(delta, g.points, g.games, nu)
            info = g.games * float(game_information(delta, nu))
            hessian[p, p] += info
            cross[p, g.rung] += info
        gradient[p] -= (ratings[p] - priors[p].mean) / priors[p].sd ** 2
        hessian[p, p] += 1 / priors[p].sd ** 2
    if h2h_games:
        delta = ratings[0] - ratings[1]
        slope = _residual(delta, h2h_points, h2h_games, nu)
        gradient += [slope, -slope]
        info = h2h_games * float(game_information(delta, nu))
        hessian += info * np.array([[1.0, -1.0], [-1.0, 1.0]])
    return gradient, hessian, cross


def _residual(delta: float, points: float, games: int, nu: float) -> float:
    """The BTD log likelihood's slope (per Elo) in a rating delta Elo above its opponent,
    `points` scored in `games`: C (points - games/2 - games sinh(h) / (2 cosh(h) + nu))."""
    half = C * delta / 2
    return float(C * (points - games / 2 - games * np.sinh(half) / (2 * np.cosh(half) + nu)))
