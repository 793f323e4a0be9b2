"""How sure a ranking is: from each model's Elo posterior, the probability that a model is
stronger than the next one down and a 90% interval on its rank, by joint posterior draws."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LEVEL = 0.90
DRAWS = 20_000


@dataclass(frozen=True)
class Rank:
    """One model's place in a ranking by posterior mean."""

    name: str
    place: int  # 1 = strongest by posterior mean
    above_next: float | None  # P(stronger than the next model down); None for the last
    lo: int  # 90% interval of its rank
    hi: int


def ranks(names: list[str], means: list[float], sds: list[float], seed: int = 0,
          draws: int = DRAWS) -> list[Rank]:
    """Ranks of independent normal posteriors, strongest first."""
    order = np.argsort(-np.asarray(means, float), kind="stable")
    mu, sd = np.asarray(means, float)[order], np.asarray(sds, float)[order]
    rng = np.random.default_rng(seed)
    sample = mu + sd * rng.standard_normal((draws, len(mu)))
    # Rank 1 is the highest draw; ties have probability zero for continuous draws.
    place = (-sample).argsort(axis=1).argsort(axis=1) + 1
    lo, hi = np.quantile(place, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0,
                         method="inverted_cdf")
    out = []
    for k, i in enumerate(order):
        above = None if k == len(order) - 1 else float(np.mean(sample[:, k] > sample[:, k + 1]))
        out.append(Rank(names[i], k + 1, above, int(lo[k]), int(hi[k])))
    return out
