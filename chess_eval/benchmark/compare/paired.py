"""Paired statistics of two runs on the same questions: bootstrap differences, McNemar's
exact test, and how many questions a paired comparison needs.

Two runs on one question set are not independent samples: a hard position is hard for both.
Resampling the same questions for both runs in every replicate keeps that correlation, so the
difference's interval is as narrow as the pairing allows (Miller, "Adding Error Bars to
Evals", 2024).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from chess_eval.benchmark.core.scoring import ratio
from chess_eval.benchmark.stats.bootstrap import percentile_interval, resample
from chess_eval.benchmark.stats.elo import LEVEL

ALPHA = 0.05  # the verdict's two-sided level
BOOT = 2000  # bootstrap replicates of a paired difference


@dataclass(frozen=True)
class Difference:
    """B minus A in one metric, with its 90% interval and a two-sided p-value."""

    metric: str
    a: float  # the metric's value in each run
    b: float
    diff: float  # b - a
    lo: float
    hi: float
    p: float  # two-sided, for "no difference"
    n: int  # paired questions (or games, puzzles) behind it
    test: str  # how p was computed
    mcnemar: dict[str, Any] | None = None  # binary outcomes: discordant counts and exact p

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {k: (round(v, 4) if isinstance(v, float) else v)
                for k, v in self.__dict__.items()}


def bootstrap_p(replicates: np.ndarray) -> float:
    """Two-sided p-value of 'no difference' from a difference's bootstrap replicates: twice
    the smaller share on either side of zero (at least one replicate's worth)."""
    below = float(np.mean(replicates <= 0))
    above = float(np.mean(replicates >= 0))
    return float(min(1.0, max(2 * min(below, above), 1 / len(replicates))))


def paired_difference(metric: str, num_a: np.ndarray, den_a: np.ndarray, num_b: np.ndarray,
                      den_b: np.ndarray, groups: list[np.ndarray], seed: int = 0,
                      boot: int = BOOT) -> Difference | None:
    """B minus A of a ratio metric (sum of numerators over sum of denominators), both runs
    resampled on the same question indices within each group; None without a value."""
    if den_a.sum() == 0 or den_b.sum() == 0:
        return None
    a, b = float(num_a.sum() / den_a.sum()), float(num_b.sum() / den_b.sum())
    idx = resample(np.random.default_rng(seed), groups, boot)
    reps = ratio(num_b[idx].sum(axis=1), den_b[idx].sum(axis=1)) - \
        ratio(num_a[idx].sum(axis=1), den_a[idx].sum(axis=1))
    reps = reps[np.isfinite(reps)]
    if len(reps) == 0:
        return None
    lo, hi = percentile_interval(reps, LEVEL)
    return Difference(metric, a, b, b - a, lo, hi, bootstrap_p(reps),
                      int(((den_a > 0) & (den_b > 0)).sum()), "paired bootstrap")


def discordant_bound(n: int) -> float:
    """With no discordant pair among n, the exact 90% upper bound on their share (none of n,
    Clopper-Pearson): a paired difference of a binary outcome is within plus or minus it."""
    return float(stats.binomtest(0, n).proportion_ci(LEVEL, method="exact").high)


def questions_needed(delta: float, sd_a: float, sd_b: float, rho: float,
                     power: float = 0.8, alpha: float = ALPHA) -> int:
    """Questions a paired two-sided test at `alpha` needs to detect a true difference `delta`
    with `power`: n = ((z_(1-alpha/2) + z_power) sd_d / delta)^2, sd_d^2 = sd_a^2 + sd_b^2 -
    2 rho sd_a sd_b (the variance of one question's paired difference)."""
    sd_d = float(np.sqrt(max(sd_a ** 2 + sd_b ** 2 - 2 * rho * sd_a * sd_b, 1e-12)))
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return int(np.ceil((z * sd_d / delta) ** 2))


def effective_ratio(sd_a: float, sd_b: float, rho: float) -> float:
    """How many unpaired questions a paired one is worth: the variance of an unpaired
    difference over a paired one's at equal n."""
    paired = sd_a ** 2 + sd_b ** 2 - 2 * rho * sd_a * sd_b
    return float((sd_a ** 2 + sd_b ** 2) / max(paired, 1e-12))


def normal_difference(metric: str, a: dict[str, Any], b: dict[str, Any], sd: float,
                      n: int, test: str) -> Difference:
    """B minus A of two estimates whose difference is normal with this sd."""
    diff = float(b["mean"]) - float(a["mean"])
    z = float(stats.norm.ppf(0.5 + LEVEL / 2))
    p = float(2 * stats.norm.sf(abs(diff) / sd)) if sd > 0 else (0.0 if diff else 1.0)
    return Difference(metric, float(a["mean"]), float(b["mean"]), diff, diff - z * sd,
                      diff + z * sd, p, n, test)
