"""The crosswalk: per Lichess time control, a line through the anchors from the reference
scale to the bots' ratings,

    lichess = a + b * true_reading,    b >= 0 (a stronger player is never placed lower),

fitted with the readings' errors in the model (errors in variables): a reading is its true
value plus its error, and the errors of all readings (the anchors' and the run's) are drawn
together, each reading's own part (its games) independent and the ladder's part shared through
the rungs' covariance (the weights of each rung's Elo in each reading). Each rating is the line
plus the human side's spread (the RD; drift between snapshots; the bots' opening books, which
the net alone does not have). The slope has a prior of 1 (an Elo is an Elo on both scales) with
sd 0.5; the intercept is flat. Given the slope everything is Gaussian (the intercept integrated
out exactly, as in kriging with an unknown mean), so the posterior and a reading's predictive
are exact on a grid of slopes: a mixture of normals, one per slope, with no simulation. What a
run is told from that predictive is statement's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Protocol

import numpy as np
from scipy import special, stats

from chess_eval.benchmark.human.anchors import HUMAN_DIR, ORDER, Anchor, TimeControl, read_anchors
from chess_eval.benchmark.human.reading import Reading, covariance
from chess_eval.benchmark.stats import btd
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.benchmark.stats.draws import DrawModel

SLOPE_PRIOR = (1.0, 0.5)  # the slope's prior, Lichess Elo per Elo here: mean and sd
SLOPES = np.linspace(0.0, 3.0, 151)  # the grid the slope's posterior is computed on (b >= 0;
# every 0.02: twenty points to its sd, the sums over it as good as the finer grid's)
LEVEL_LO, LEVEL_HI = 0.05, 0.95  # the two-sided 90% interval's ends
BOUND_LO, BOUND_HI = 0.10, 0.90  # the one-sided 90% bounds: at least, at most
KEEP = 1e-12  # a slope whose posterior weight is below this share of the largest is dropped
STEPS = 60  # at most this many steps to a quantile (Newton's take a few)
TOLERANCE = 1e-9  # a quantile is found when its level is met to this


class Reference(Protocol):
    """What the crosswalk needs of the reference ladder (arena.ladder.Ladder has it)."""

    @property
    def cov(self) -> np.ndarray:
        """The rungs' Elo covariance: the errors every reading on it shares."""

    @property
    def nu(self) -> float:
        """Its draw parameter: expected scores."""


@dataclass(frozen=True)
class Prediction:
    """A reading's Lichess rating on one crosswalk: median and 90% interval."""

    median: float  # the predictive's median
    lo: float  # its 5th percentile
    hi: float  # its 95th percentile


def mixture_quantiles(means: np.ndarray, sds: np.ndarray, weights: np.ndarray,
                      levels: np.ndarray) -> np.ndarray:
    """The quantiles at `levels` (L) of R mixtures of normals (means, sds: R x S; weights:
    S, summing to 1), R x L: Newton's steps from the moment-matched normal, kept inside a
    bracket that starts between the components' own quantiles (the mixture's lies between
    the lowest and the highest of them) and halved where a step would leave it."""
    levels = np.asarray(levels, float)
    z = special.ndtri(levels)
    own = means[:, None, :] + z[None, :, None] * sds[:, None, :]
    lo, hi = own.min(axis=-1), own.max(axis=-1)
    mean = means @ weights
    sd = np.sqrt((sds ** 2 + means ** 2) @ weights - mean ** 2)
    x = np.clip(mean[:, None] + z[None, :] * sd[:, None], lo, hi)
    inverse = 1 / sds[:, None, :]
    for _ in range(STEPS):
        u = (x[..., None] - means[:, None, :]) * inverse
        miss = (weights * special.ndtr(u)).sum(axis=-1) - levels
        if np.abs(miss).max() < TOLERANCE:
            break
        density = (weights * inverse * np.exp(-u ** 2 / 2)).sum(axis=-1) / math.sqrt(2 * math.pi)
        lo, hi = np.where(miss < 0, x, lo), np.where(miss < 0, hi, x)
        step = x - miss / np.maximum(density, 1e-300)
        x = np.where((step > lo) & (step < hi), step, (lo + hi) / 2)
    return np.asarray(x, float)


def mixture_cdf(means: np.ndarray, sds: np.ndarray, weights: np.ndarray,
                points: np.ndarray) -> np.ndarray:
    """The CDFs of R mixtures of normals (means, sds: R x S; weights: S) at points (R x K)."""
    u = (np.asarray(points, float)[..., None] - means[:, None, :]) / sds[:, None, :]
    return np.asarray((weights * special.ndtr(u)).sum(axis=-1), float)


@dataclass(frozen=True, eq=False)
class Predictive:
    """A reading's Lichess rating under the fit: a mixture of normals, one per slope."""

    slopes: np.ndarray  # the slopes with weight (Lichess Elo per Elo here)
    weights: np.ndarray  # their posterior weights, summing to 1
    means: np.ndarray  # each slope's predictive mean (Elo)
    variances: np.ndarray  # each slope's predictive variance (Elo^2)

    def widened(self, own_sd: float) -> Predictive:
        """The same reading with `own_sd` more independent error (the run's games)."""
        return Predictive(self.slopes, self.weights, self.means,
                          self.variances + self.slopes ** 2 * own_sd ** 2)

    def quantiles(self, levels: tuple[float, ...]) -> tuple[float, ...]:
        """The predictive's quantiles at `levels`."""
        found = mixture_quantiles(self.means[None, :], np.sqrt(self.variances)[None, :],
                                  self.weights, np.array(levels))
        return tuple(float(q) for q in found[0])

    def cdf(self, points: tuple[float, ...]) -> tuple[float, ...]:
        """The chance that the rating is at most each of `points`."""
        found = mixture_cdf(self.means[None, :], np.sqrt(self.variances)[None, :],
                            self.weights, np.array([points]))
        return tuple(float(f) for f in found[0])

    def prediction(self) -> Prediction:
        """Its median and 90% interval."""
        lo, mid, hi = self.quantiles((LEVEL_LO, 0.5, LEVEL_HI))
        return Prediction(mid, lo, hi)


@dataclass(frozen=True, eq=False)
class Fit:
    """The line's fit given each slope on the grid, the intercept integrated out."""

    slopes: np.ndarray  # the grid, S
    log_likelihood: np.ndarray  # the anchors' log likelihood of each slope (flat intercept)
    weights: np.ndarray  # the slope's posterior weights (the prior times the likelihood)
    precision: np.ndarray  # each slope's inverse covariance of y - b x, S x n x n
    total: np.ndarray  # 1' P 1 per slope: the intercept's precision
    intercept: np.ndarray  # the intercept's GLS estimate per slope
    residuals: np.ndarray  # y - b x - intercept per slope, S x n


def fit_line(x: np.ndarray, y: np.ndarray, errors: np.ndarray, human: np.ndarray,
             slopes: np.ndarray = SLOPES,
             prior: tuple[float, float] = SLOPE_PRIOR) -> Fit:
    """The anchors' fit (readings x with error covariance `errors`, ratings y with the
    human spread's covariance `human`) at each slope."""
    b = np.asarray(slopes, float)
    v = b[:, None, None] ** 2 * errors[None] + human[None]
    p = np.linalg.inv(v)
    r = y[None, :] - b[:, None] * x[None, :]
    p1 = p.sum(axis=2)
    total = p1.sum(axis=1)
    intercept = (p1 * r).sum(axis=1) / total
    quad = np.einsum("si,sij,sj->s", r, p, r) - total * intercept ** 2
    log_lik = -0.5 * (np.linalg.slogdet(v)[1] + np.log(total) + quad)
    log_post = log_lik + stats.norm.logpdf(b, *prior)
    w = np.exp(log_post - log_post.max())
    return Fit(b, log_lik, w / w.sum(), p, total, intercept, r - intercept[:, None])


@dataclass(frozen=True)
class Crosswalk:
    """The reference scale to one Lichess time control."""

    time_control: TimeControl  # the rating pool
    anchors: tuple[Anchor, ...]  # by reading, weakest first
    cov: np.ndarray | None = None  # the reference ladder's rung covariance (shared errors)
    nu: float = 0.5  # the reference ladder's draw parameter (expected scores)
    draws: DrawModel | None = None  # its draw model, where it has one: nu at the pair's
    # mean reading (then `nu` is unused)

    @property
    def band(self) -> tuple[float, float]:
        """The weakest and the strongest anchor's readings."""
        return self.anchors[0].reading, self.anchors[-1].reading

    @property
    def ratings(self) -> tuple[float, float]:
        """The lowest and highest anchor rating: no figure or bound is ever outside them."""
        found = [a.rating for a in self.anchors]
        return min(found), max(found)

    @property
    def snapshot(self) -> str:
        """The snapshots' dates."""
        return ", ".join(sorted({a.date for a in self.anchors}))

    @property
    def basis(self) -> str:
        """How many anchors, and whether their ratings were read with an RD or quoted."""
        kind = "quoted, no RD" if any(a.quoted for a in self.anchors) else "profiles with RD"
        return f"{len(self.anchors)} anchors, {kind}, {self.snapshot}"

    def errors(self) -> np.ndarray:
        """The anchors' reading errors' covariance."""
        m = [a.measured for a in self.anchors]
        return np.array([[covariance(x, y, self.cov, i == j) for j, y in enumerate(m)]
                         for i, x in enumerate(m)])

    def human(self) -> np.ndarray:
        """The anchors' ratings' spread about the line (independent)."""
        return np.diag([a.human_sd ** 2 for a in self.anchors])

    @cached_property
    def fit(self) -> Fit:
        """The line's fit, computed once per crosswalk (every statement reads it)."""
        return fit_line(np.array([a.reading for a in self.anchors]),
                        np.array([a.rating for a in self.anchors]), self.errors(),
                        self.human())

    def slope_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """The slope's grid and its posterior weights (the intercept integrated out)."""
        return self.fit.slopes, self.fit.weights

    def slope_likelihood(self) -> tuple[np.ndarray, np.ndarray]:
        """The slope's grid and what the anchors alone say of it (a flat prior on the grid)."""
        log = self.fit.log_likelihood
        w = np.exp(log - log.max())
        return self.fit.slopes, w / w.sum()

    def predictive(self, run: Reading) -> Predictive:
        """A reading's Lichess rating: the fit's posterior predictive, its errors (its own
        and the ladder's part it shares with the anchors) counted."""
        f = self.fit
        keep = f.weights > KEEP * f.weights.max()
        b, p = f.slopes[keep], f.precision[keep]
        shared = np.array([covariance(run, a.measured, self.cov) for a in self.anchors])
        own = covariance(run, run, self.cov, same=True)
        k = b[:, None] ** 2 * shared[None, :]  # the run's error against each anchor's
        pk = np.einsum("sij,sj->si", p, k)
        means = b * run.mean + f.intercept[keep] + (pk * f.residuals[keep]).sum(axis=1)
        # Kriging with an unknown mean: the run's own error, less what the anchors' share
        # tells of it, plus the intercept's error.
        variances = (b ** 2 * own - (k * pk).sum(axis=1)
                     + (1 - pk.sum(axis=1)) ** 2 / f.total[keep])
        w = f.weights[keep]
        return Predictive(b, w / w.sum(), means, np.maximum(variances, 1e-9))

    def predictives(self, means: np.ndarray,
                    sds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Many readings' predictives at once, each reading's error its own (none shared
        with the anchors: `predictive` with no weights): the components' means and sds (R x
        S) and their weights (S)."""
        f = self.fit
        keep = f.weights > KEEP * f.weights.max()
        b = f.slopes[keep]
        mixed = b[None, :] * np.asarray(means, float)[:, None] + f.intercept[keep][None, :]
        variances = (b[None, :] * np.asarray(sds, float)[:, None]) ** 2 + 1 / f.total[keep]
        w = f.weights[keep]
        return mixed, np.sqrt(variances), w / w.sum()

    def predict(self, run: Reading | float, sd: float | None = None) -> Prediction:
        """The Lichess rating of a reading (or of `run` +- `sd`, its error independent):
        the median and 90% interval of the fit's posterior predictive."""
        if not isinstance(run, Reading):
            run = Reading(float(run), float(sd or 0.0), 0.0)
        return self.predictive(run).prediction()

    def expected_score(self, run: Reading, anchor: Anchor) -> tuple[float, float, float]:
        """The run's expected score against an anchor on the reference scale, with both
        readings' errors (the ladder's shared part cancelling): value, 5th and 95th."""
        gap = run.mean - anchor.reading
        var = covariance(run, run, self.cov, True) + covariance(
            anchor.measured, anchor.measured, self.cov, True) - 2 * covariance(
            run, anchor.measured, self.cov)
        sd = math.sqrt(max(var, 0.0))
        nu = self.nu if self.draws is None else float(
            self.draws.nu((run.mean + anchor.reading) / 2))
        value, lo, hi = (float(btd.expected_score(g, nu))
                         for g in (gap, gap - Z90 * sd, gap + Z90 * sd))
        return value, lo, hi

    def nearest(self, reading: float) -> Anchor:
        """The anchor whose reading is nearest `reading` (the weaker on a tie)."""
        return min(self.anchors, key=lambda a: abs(a.reading - reading))


def load_crosswalks(folder: Path = HUMAN_DIR,
                    reference: Reference | None = None) -> list[Crosswalk]:
    """The crosswalks of the committed anchors and readings in `folder` (none where either
    file is missing), blitz first; `reference`: the reference ladder, whose covariance the
    readings share (without it their ladder parts are taken as independent). DataError in
    one line for a file that cannot be read."""
    found = read_anchors(folder)
    cov = None if reference is None else np.asarray(reference.cov, float)
    nu = 0.5 if reference is None else float(reference.nu)
    model = getattr(reference, "draws", None)
    return [Crosswalk(tc, tuple(sorted(found[tc], key=lambda x: x.reading)), cov, nu,
                      model if isinstance(model, DrawModel) else None)
            for tc in ORDER if len(found.get(tc, [])) >= 2]
