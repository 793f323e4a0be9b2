"""The prior of a new engine's ladder: a measured ladder of another build, shifted smoothly.

A rung is a recipe (random moves, Stockfish at N nodes, a mix of the two), so under another
Stockfish build it is another player, but not an unrelated one: the random mover does not
move at all, a mix rung that is mostly random barely moves, and the engine rungs move
together, by an amount that changes slowly with strength. The prior says exactly that.
A rung's Elo under the new build, relative to the anchor, is

    new = measured on the source ladder + shift(its Elo there) + its own departure,

with the source ladder's covariance (its own error), a shift drawn from a Gaussian process
that is zero at the anchor and grows with strength (correlated over SHIFT_LENGTH Elo) and an
independent departure per rung. Their sizes are not assumed: the fit is averaged over
SHIFT_GRID x RUNG_GRID, each setting weighted by how well it explains the games (`averaged`);
the planner uses the middle setting (SHIFT_SD, RUNG_SD). The new games pin the shift down
(every game informs all rungs near it through the correlation) and the departures. How
wrong this prior may be and still give honest intervals is simulated in
bench/ladder_prior.py, with truths the prior does not expect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chess_eval.benchmark.arena.ladder import Ladder, Rung, anchor_elo, anchor_of
from chess_eval.benchmark.stats import btd, draws
from chess_eval.errors import DataError

VERSION = 2  # of the prior's form and settings below; a ladder records it. 2: a rung the
# source lacks gets a loose prior between its neighbours (1 refused it); the same otherwise
SHIFT_SD = 200.0  # Elo: the shift's sd at SHIFT_AT, for planning (a rung at fixed nodes
# differs by about 150 Elo between Stockfish 15.1 and 19); the fit weighs SHIFT_GRID
SHIFT_AT = 2600.0  # Elo: where SHIFT_SD applies (about Stockfish at 1,000 nodes); the sd
# grows in proportion to the Elo, zero at the anchor
SHIFT_LENGTH = 600.0  # Elo: over this distance two rungs' shifts become loosely related
RUNG_SD = 40.0  # Elo: a rung's own departure from the smooth shift, for planning; the fit
# weighs RUNG_GRID
NEW_RUNG_SD = 300.0  # Elo: the sd, on the source ladder, of a rung it lacks that has a
# measured neighbour on one side only (beyond its strongest or weakest rung)


@dataclass(frozen=True)
class LadderPrior:
    """What is known of a new engine's rungs before its games, in the order of the rungs."""

    source: str  # the engine of the ladder it is taken from
    mean: np.ndarray  # Elo of each rung on that ladder, the anchor's included (fixed)
    source_cov: np.ndarray  # that ladder's covariance, in this order (Elo^2)
    shift_sd: float = SHIFT_SD  # the settings of the shift and the departures (see above)
    rung_sd: float = RUNG_SD

    @property
    def cov(self) -> np.ndarray:
        """The prior covariance relative to the anchor (its row and column zero)."""
        cov: np.ndarray = self.source_cov + shift_cov(self.mean - self.mean[0],
                                                      self.shift_sd) \
            + self.rung_sd ** 2 * np.eye(len(self.mean))
        cov[0, :] = cov[:, 0] = 0.0
        return cov

    def with_settings(self, shift_sd: float, rung_sd: float) -> LadderPrior:
        """The same prior with other sds of the shift and the departures."""
        return LadderPrior(self.source, self.mean, self.source_cov, shift_sd, rung_sd)

    def describe(self) -> str:
        """One line for the ladder file: where the prior comes from and its settings."""
        return (f"v{VERSION}: {self.source} shifted smoothly (sd {self.shift_sd:g} at "
                f"{SHIFT_AT:g}, length {SHIFT_LENGTH:g}) plus {self.rung_sd:g} per rung")

    def pool_prior(self, anchor: int) -> btd.PoolPrior:
        """The prior in btd.fit_pool's terms for rungs ordered with `anchor` first."""
        if anchor != 0:
            raise DataError("a ladder with a prior must list its anchor rung first")
        return btd.PoolPrior(self.mean[1:] - self.mean[0], np.linalg.inv(self.cov[1:, 1:]))

    def information(self) -> np.ndarray:
        """The prior's precision as an information matrix over all rungs (the anchor's row
        and column zero), to add to the games' for planning."""
        out = np.zeros((len(self.mean), len(self.mean)))
        out[1:, 1:] = np.linalg.inv(self.cov[1:, 1:])
        return out


def shift_cov(elos: np.ndarray, sd: float = SHIFT_SD, at: float = SHIFT_AT,
              length: float = SHIFT_LENGTH) -> np.ndarray:
    """The covariance of the smooth shift at these Elos (relative to the anchor's): a squared
    exponential in Elo, scaled by Elo / `at` so that it is zero at the anchor."""
    x = np.asarray(elos, float)
    scale = x / at
    cov: np.ndarray = sd ** 2 * np.outer(scale, scale) * np.exp(
        -((x[:, None] - x[None, :]) ** 2) / (2 * length ** 2))
    return cov


def prior_from(source: Ladder, rungs: list[Rung]) -> LadderPrior:
    """The prior for `rungs` (anchor first, weakest first) from a ladder measured with
    another engine. A rung the source has (same name and spec) takes its measured Elo and
    covariance; one it lacks (a rung added for the new engine) is known only to lie between
    its measured neighbours, loosely and uncorrelated with the rest (`between`)."""
    if anchor_of(rungs) != 0:
        raise DataError("a ladder with a prior must list its anchor rung first")
    index = {r.name: i for i, r in enumerate(source.rungs)}
    known = [r.name in index and source.rungs[index[r.name]].spec == r.spec for r in rungs]
    if not known[0]:
        raise DataError(f"the prior ladder ({source.engine}) lacks the anchor rung "
                        f"{rungs[0].name} (or has it with another spec)")
    at = [index[r.name] if k else 0 for r, k in zip(rungs, known, strict=True)]
    zero = source.elos[at[0]]
    mean = source.elos[at] - zero
    cov = source.cov[np.ix_(at, at)].copy()
    for i in (k for k, is_known in enumerate(known) if not is_known):
        mean[i], sd = between(mean, known, i)
        cov[i, :] = cov[:, i] = 0.0
        cov[i, i] = sd ** 2
    return LadderPrior(source.engine, mean + anchor_elo(rungs), cov)


def between(mean: np.ndarray, known: list[bool], i: int) -> tuple[float, float]:
    """The prior (mean, sd) of rung `i`, which the source lacks, from its nearest known
    neighbours: rungs are listed weakest first, so it lies between them, evenly spaced
    with any other unknown rungs there (sd half the neighbours' gap, which covers the whole
    gap at 2 sd); beyond the last known rung, that rung's Elo with NEW_RUNG_SD."""
    below = [j for j in range(i - 1, -1, -1) if known[j]][:1]
    above = [j for j in range(i + 1, len(mean)) if known[j]][:1]
    if below and above:
        lo, hi = mean[below[0]], mean[above[0]]
        share = (i - below[0]) / (above[0] - below[0])
        return lo + share * (hi - lo), max(abs(hi - lo) / 2, RUNG_SD)
    return float(mean[(below or above)[0]]), NEW_RUNG_SD


# The settings the games weigh (a uniform hyperprior over this grid, evenly spaced in log):
# the sd of the shift at SHIFT_AT, and of a rung's own departure, in Elo. The top settings
# make the prior nearly flat, so a shift larger than any expected still gets honest
# intervals. Chosen with bench/ladder_prior.py (replays of 6,000 games): with a grid of
# 100-800 and 20-80, the intervals covered 81% where the truth's shift had sd 400 (10
# replays); with this one, 85-92% under every shift tried, +-3 to +-5 (48 replays each), and
# 95% with no shift at all (docs/games-and-ladder.md has the table).
SHIFT_GRID = (100.0, 200.0, 400.0, 800.0, 1600.0)
RUNG_GRID = (20.0, 40.0, 80.0)


@dataclass(frozen=True)
class Averaged:
    """A ladder's fit averaged over the prior's settings, each weighted by its evidence."""

    elos: np.ndarray  # relative to the anchor, in the prior's order (the anchor's 0)
    cov: np.ndarray  # Elo^2, relative to the anchor: within and between settings
    nu: float  # the draw parameter, averaged alike
    weights: dict[tuple[float, float], float]  # (shift sd, rung sd) -> posterior weight

    def describe(self, prior: LadderPrior) -> str:
        """One line for the ladder file: the prior and the settings that carry most weight."""
        shift, rung = max(self.weights, key=lambda k: self.weights[k])
        return (f"v{VERSION}: {prior.source} shifted smoothly (length {SHIFT_LENGTH:g}); sd "
                f"at {SHIFT_AT:g} {SHIFT_GRID[0]:g}-{SHIFT_GRID[-1]:g} and per rung "
                f"{RUNG_GRID[0]:g}-{RUNG_GRID[-1]:g} averaged by the games' evidence (most "
                f"weight: {shift:g} and {rung:g}, {self.weights[(shift, rung)]:.0%})")


def evidence(prior: LadderPrior, pool: btd.Pool, weak: np.ndarray, strong: np.ndarray,
             scores: np.ndarray) -> float:
    """The log marginal likelihood of the games under `prior`, from its fit `pool`
    (Laplace's approximation, up to a constant the same for every setting). Rung indices in
    the prior's order (the anchor first); `scores` the first rung's."""
    win, draw, loss = btd.probabilities(pool.ratings[weak] - pool.ratings[strong], pool.nu)
    outcome = np.where(scores == btd.WIN, win, np.where(scores == btd.DRAW, draw, loss))
    off = pool.ratings[1:] - (prior.mean[1:] - prior.mean[0])
    cov = prior.cov[1:, 1:]
    _, log_det_prior = np.linalg.slogdet(cov)
    _, log_det_post = np.linalg.slogdet(pool.cov[1:, 1:])
    return float(np.sum(np.log(outcome)) - 0.5 * off @ np.linalg.solve(cov, off)
                 - 0.5 * log_det_prior + 0.5 * log_det_post)


def averaged(prior: LadderPrior, weak: np.ndarray, strong: np.ndarray,
             scores: np.ndarray) -> Averaged:
    """The fit under every setting of SHIFT_GRID x RUNG_GRID, averaged with weights by
    evidence: the mean of the means, and a covariance that adds the spread between settings
    to each one's own (so the settings' uncertainty is in every interval)."""
    settings = [(s, r) for s in SHIFT_GRID for r in RUNG_GRID]
    n = len(prior.mean)
    pools, logs = [], []
    for shift, rung in settings:
        setting = prior.with_settings(shift, rung)
        pool = btd.fit_pool(n, weak, strong, scores, prior=setting.pool_prior(0))
        pools.append(pool)
        logs.append(evidence(setting, pool, weak, strong, scores))
    w = np.exp(np.array(logs) - max(logs))
    w /= w.sum()
    elos = sum(wk * p.ratings for wk, p in zip(w, pools, strict=True))
    cov = sum(wk * (p.cov + np.outer(p.ratings - elos, p.ratings - elos))
              for wk, p in zip(w, pools, strict=True))
    nu = float(sum(wk * p.nu for wk, p in zip(w, pools, strict=True)))
    return Averaged(np.asarray(elos), np.asarray(cov), nu,
                    {k: float(wk) for k, wk in zip(settings, w, strict=True)})


DRAW_TERMS = 3  # the reference ladder's draw model: log nu quadratic in the pair's mean Elo
# (constant, linear, quadratic; docs/games-and-ladder.md, "The ladder on the draw model")


@dataclass(frozen=True)
class AveragedDraws:
    """`averaged` with the draw model: the ratings and log nu's coefficients fitted together
    under every setting, averaged by evidence alike."""

    elos: np.ndarray  # relative to the anchor, in the prior's order (the anchor's 0)
    model: draws.DrawModel  # the averaged coefficients, clipped to the pairs' mean Elos
    joint_cov: np.ndarray  # (ratings, coefficients): within and between settings
    weights: dict[tuple[float, float], float]  # (shift sd, rung sd) -> posterior weight

    @property
    def cov(self) -> np.ndarray:
        """The ratings' covariance (relative to the anchor)."""
        n = len(self.elos)
        out: np.ndarray = self.joint_cov[:n, :n]
        return out

    def describe(self, prior: LadderPrior) -> str:
        """`Averaged.describe`'s line, with the draw model named."""
        return Averaged(self.elos, self.cov, 0.0, self.weights).describe(prior) + \
            f"; log nu quadratic in the pair's mean Elo ({len(self.model.coef)} coefficients)"


def draws_evidence(prior: LadderPrior, pool: draws.Pool, weak: np.ndarray,
                   strong: np.ndarray, scores: np.ndarray) -> float:
    """`evidence` with the draw model's likelihood (the coefficients' prior flat, the same
    for every setting)."""
    ll = draws.log_likelihood(pool.ratings[weak], pool.ratings[strong], scores, pool.model)
    off = pool.ratings[1:] - (prior.mean[1:] - prior.mean[0])
    cov = prior.cov[1:, 1:]
    _, log_det_prior = np.linalg.slogdet(cov)
    _, log_det_post = np.linalg.slogdet(pool.cov[1:, 1:])
    return float(ll - 0.5 * off @ np.linalg.solve(cov, off) - 0.5 * log_det_prior
                 + 0.5 * log_det_post)


def averaged_draws(prior: LadderPrior, weak: np.ndarray, strong: np.ndarray,
                   scores: np.ndarray, terms: int = DRAW_TERMS) -> AveragedDraws:
    """The draw-model fit under every setting of SHIFT_GRID x RUNG_GRID, averaged with
    weights by evidence (`averaged`'s rule); the model's clip range is the pairs' mean Elos
    on the result. The start: one nu's fit's log nu, the other coefficients 0."""
    start = np.log(btd.fit_pool(len(prior.mean), weak, strong, scores,
                                prior=prior.pool_prior(0)).nu)
    form = draws.DrawModel((float(start),) + (0.0,) * (terms - 1))
    settings = [(s, r) for s in SHIFT_GRID for r in RUNG_GRID]
    pools, logs = [], []
    for shift, rung in settings:
        setting = prior.with_settings(shift, rung)
        pool = draws.fit_pool(len(prior.mean), weak, strong, scores, form,
                              setting.pool_prior(0))
        pools.append(pool)
        logs.append(draws_evidence(setting, pool, weak, strong, scores))
    w = np.exp(np.array(logs) - max(logs))
    w /= w.sum()
    points = [np.concatenate([p.ratings, p.model.coef]) for p in pools]
    mean = np.asarray(sum(wk * x for wk, x in zip(w, points, strict=True)))
    joint = sum(wk * (p.joint_cov + np.outer(x - mean, x - mean))
                for wk, p, x in zip(w, pools, points, strict=True))
    n = len(prior.mean)
    pair_mean = (mean[weak] + mean[strong]) / 2
    model = draws.DrawModel(tuple(float(c) for c in mean[n:]), float(pair_mean.min()),
                            float(pair_mean.max()))
    return AveragedDraws(mean[:n], model, np.asarray(joint),
                         {k: float(wk) for k, wk in zip(settings, w, strict=True)})
