"""A player's Elo per start condition, partially pooled (a hierarchical model, as the
promptfoo gpt5-chess write-up proposes).

Each condition's own posterior (mean m_c, sd s_c: its games alone, the ladder's part left out)
is a noisy view of the player's Elo in that condition, theta_c = mu + delta_c, with the
conditions' offsets delta_c ~ Normal(0, tau^2). mu has a flat prior and tau a half-normal
prior of scale TAU_SCALE; the posterior over tau is computed on a grid (for each tau the
model is normal, so mu and the theta_c are integrated out exactly). A condition measured
with few games borrows strength from the others as far as the data say the conditions are
alike; when they differ (tau large) each keeps its own estimate. The ladder's part of the
variance is common to all conditions and is added back to each pooled interval.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from chess_eval.benchmark.stats.btd import LEVEL

TAU_SCALE = 300.0  # Elo: offsets between conditions of a few hundred Elo are plausible
TAU_GRID = np.linspace(0.0, 2000.0, 401)


@dataclass(frozen=True)
class Pooled:
    """One condition's partially pooled Elo."""

    mean: float
    sd: float
    lo: float  # 90% interval
    hi: float
    shrinkage: float  # posterior mean of s^2 / (s^2 + tau^2): 0 own estimate, 1 fully pooled


def pool(means: np.ndarray, sds: np.ndarray, ladder_sds: np.ndarray | None = None,
         draws: int = 20_000, seed: int = 0) -> list[Pooled]:
    """Partially pooled Elos of the conditions (at least two), in their order."""
    m, s = np.asarray(means, float), np.asarray(sds, float)
    ladder = np.zeros_like(m) if ladder_sds is None else np.asarray(ladder_sds, float)
    log_w = np.array([_log_marginal(m, s, t) for t in TAU_GRID])
    log_w += stats.halfnorm.logpdf(TAU_GRID, scale=TAU_SCALE)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    rng = np.random.default_rng(seed)
    taus = rng.choice(TAU_GRID, size=draws, p=w)
    sample = np.empty((draws, len(m)))
    shrink = np.zeros(len(m))
    for tau in np.unique(taus):
        rows = taus == tau
        mu_mean, mu_var, cond_mean, cond_var = _given_tau(m, s, tau)
        mu = mu_mean + np.sqrt(mu_var) * rng.standard_normal(rows.sum())
        b = s ** 2 / (s ** 2 + tau ** 2) if tau > 0 else np.ones_like(s)
        shrink += rows.sum() * b
        sample[rows] = (cond_mean[None, :] + b[None, :] * (mu[:, None] - mu_mean)
                        + np.sqrt(cond_var)[None, :] * rng.standard_normal((rows.sum(), len(m))))
    sample += ladder[None, :] * rng.standard_normal((draws, 1))  # one ladder for all
    lo, hi = np.quantile(sample, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0)
    return [Pooled(float(sample[:, c].mean()), float(sample[:, c].std()), float(lo[c]),
                   float(hi[c]), float(shrink[c] / draws)) for c in range(len(m))]


def _log_marginal(m: np.ndarray, s: np.ndarray, tau: float) -> float:
    """log p(m | tau) with mu integrated out under a flat prior."""
    v = s ** 2 + tau ** 2
    w = 1 / v
    mu = np.sum(w * m) / np.sum(w)
    return float(-0.5 * np.sum(np.log(v)) - 0.5 * np.log(np.sum(w))
                 - 0.5 * np.sum(w * (m - mu) ** 2))


def _given_tau(m: np.ndarray, s: np.ndarray,
               tau: float) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Given tau: mu's posterior mean and variance, and each theta_c's conditional mean at
    mu's mean and conditional variance given mu."""
    v = s ** 2 + tau ** 2
    mu_var = float(1 / np.sum(1 / v))
    mu_mean = float(np.sum(m / v) * mu_var)
    if tau == 0:
        return mu_mean, mu_var, np.full_like(m, mu_mean), np.zeros_like(m)
    b = s ** 2 / v
    return mu_mean, mu_var, b * mu_mean + (1 - b) * m, (1 - b) * s ** 2
