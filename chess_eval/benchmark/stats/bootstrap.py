"""The benchmark's one bootstrap: resampling with replacement within groups, and the
percentile interval of the replicates.

Every interval that resamples (the static metrics by source and Elo bucket, the human-Elo
line by Elo bucket, a game Elo by opening within colour, the world-model ratios and paired
differences) draws its indices here. scipy.stats.bootstrap does not fit: it cannot resample
within strata or whole clusters, and the Elo fits need each replicate's indices, not a
statistic of one array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np


def resample(rng: np.random.Generator, groups: Sequence[np.ndarray], boot: int) -> np.ndarray:
    """A (boot, total) array: row b holds replicate b's indices, each group's members drawn
    with replacement from that group alone, group after group (empty groups draw nothing)."""
    draws = [g[rng.integers(0, len(g), (boot, len(g)))] for g in groups if len(g)]
    if not draws:
        return np.empty((boot, 0), dtype=int)
    return np.concatenate(draws, axis=1)


QuantileMethod = Literal["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf"]


def percentile_interval(replicates: np.ndarray, level: float,
                        method: QuantileMethod = "linear") -> tuple[float, float]:
    """The central `level` interval of the replicates (numpy's quantile `method`)."""
    lo, hi = np.quantile(replicates, [0.5 - level / 2, 0.5 + level / 2], method=method)
    return float(lo), float(hi)
