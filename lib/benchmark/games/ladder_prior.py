"""The prior of a new engine's ladder: a measured ladder of another build, shifted smoothly.

A rung is a recipe (random moves, Stockfish at N nodes, a mix of the two), so under another
Stockfish build it is another player, but not an unrelated one: the random mover does not
move at all, a mix rung that is mostly random barely moves, and the engine rungs move
together, by an amount that changes slowly with strength. The prior says exactly that.
A rung's Elo under the new build, relative to the anchor, is

    new = measured on the source ladder + shift(its Elo there) + its own departure,

with the source ladder's covariance (its own error), a shift drawn from a Gaussian process
that is zero at the anchor and grows with strength (sd SHIFT_SD at SHIFT_AT Elo, correlated
over SHIFT_LENGTH Elo) and an independent departure of sd RUNG_SD per rung. The new games
then pin the shift down (every game informs all rungs near it through the correlation) and
the departures. How wrong this prior may be and still give honest intervals is simulated in
bench/ladder_prior.py, with truths the prior does not expect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lib.benchmark.core import btd
from lib.benchmark.games.ladder import Ladder, Rung, anchor_elo, anchor_of
from lib.errors import DataError

VERSION = 1  # of the prior's form and settings below; a ladder records it
SHIFT_SD = 150.0  # Elo: the shift's sd at SHIFT_AT (a rung at fixed nodes differs by about
# 150 Elo between Stockfish 15.1 and 19, so a nearer build shifts by less)
SHIFT_AT = 2600.0  # Elo: where SHIFT_SD applies (about Stockfish at 1,000 nodes); the sd
# grows in proportion to the Elo, zero at the anchor
SHIFT_LENGTH = 600.0  # Elo: over this distance two rungs' shifts become loosely related
RUNG_SD = 20.0  # Elo: a rung's own departure from the smooth shift


@dataclass(frozen=True)
class LadderPrior:
    """What is known of a new engine's rungs before its games, in the order of the rungs."""

    source: str  # the engine of the ladder it is taken from
    mean: np.ndarray  # Elo of each rung, the anchor's included (its value fixed)
    cov: np.ndarray  # Elo^2, relative to the anchor (its row and column zero)

    def describe(self) -> str:
        """One line for the ladder file: where the prior comes from and its settings."""
        return (f"v{VERSION}: {self.source} shifted smoothly (sd {SHIFT_SD:g} at "
                f"{SHIFT_AT:g}, length {SHIFT_LENGTH:g}) plus {RUNG_SD:g} per rung")

    def pool_prior(self, anchor: int) -> btd.PoolPrior:
        """The prior in btd.fit_pool's terms for rungs ordered with `anchor` first."""
        if anchor != 0:
            raise DataError("a ladder with a prior must list its anchor rung first")
        free = slice(1, None)
        return btd.PoolPrior(self.mean[free] - self.mean[0],
                             np.linalg.inv(self.cov[free, free]))

    def information(self) -> np.ndarray:
        """The prior's precision as an information matrix over all rungs (the anchor's row
        and column zero), to add to the games' for planning."""
        out = np.zeros_like(self.cov)
        out[1:, 1:] = np.linalg.inv(self.cov[1:, 1:])
        return out


def shift_cov(elos: np.ndarray, sd: float = SHIFT_SD, at: float = SHIFT_AT,
              length: float = SHIFT_LENGTH) -> np.ndarray:
    """The covariance of the smooth shift at these Elos (relative to the anchor's): a squared
    exponential in Elo, scaled by Elo / `at` so that it is zero at the anchor."""
    x = np.asarray(elos, float)
    scale = x / at
    return sd ** 2 * np.outer(scale, scale) * np.exp(
        -((x[:, None] - x[None, :]) ** 2) / (2 * length ** 2))


def prior_from(source: Ladder, rungs: list[Rung], shift_sd: float = SHIFT_SD,
               rung_sd: float = RUNG_SD) -> LadderPrior:
    """The prior for `rungs` (anchor first) from a ladder measured with another engine; every
    rung must be on it, with the same spec."""
    if anchor_of(rungs) != 0:
        raise DataError("a ladder with a prior must list its anchor rung first")
    index = {r.name: i for i, r in enumerate(source.rungs)}
    missing = [r.name for r in rungs if r.name not in index
               or source.rungs[index[r.name]].spec != r.spec]
    if missing:
        raise DataError(f"the prior ladder ({source.engine}) lacks rungs {', '.join(missing)}"
                        " (or has them with another spec)")
    order = [index[r.name] for r in rungs]
    rel = source.elos[order] - anchor_elo(rungs)
    cov = source.cov[np.ix_(order, order)] + shift_cov(rel, shift_sd) \
        + rung_sd ** 2 * np.eye(len(rungs))
    cov[0, :] = cov[:, 0] = 0.0
    return LadderPrior(source.engine, source.elos[order], cov)
