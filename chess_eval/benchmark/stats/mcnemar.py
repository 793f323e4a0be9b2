"""McNemar's exact test on paired binary outcomes, the one both `compare` and the world-model
tests use."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats


def mcnemar_p(only_a: int, only_b: int) -> float:
    """The exact two-sided p-value of an even split between the pairs that fail (or pass)
    only under A and those only under B. No discordant pair is no evidence: p = 1."""
    n = only_a + only_b
    # Twice the smaller tail of Binomial(n, 1/2) (symmetric): binomtest's two-sided p-value,
    # without its overhead (the world-model bench calls this tens of thousands of times).
    return 1.0 if n == 0 else min(1.0, 2 * float(stats.binom.cdf(min(only_a, only_b), n,
                                                                 0.5)))


def mcnemar(yes_a: np.ndarray, yes_b: np.ndarray) -> dict[str, Any]:
    """The test on two aligned boolean arrays: the discordant pairs (A only, B only) and p."""
    only_a = int(np.sum(yes_a & ~yes_b))
    only_b = int(np.sum(~yes_a & yes_b))
    return {"only_a": only_a, "only_b": only_b, "p": round(mcnemar_p(only_a, only_b), 6)}
