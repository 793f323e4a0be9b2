"""How sure a ranking is: from each model's Elo posterior, the probability that a model is
stronger than the next one down and a 90% interval on its rank, by joint posterior draws.

Game Elos measured against the same ladder share its error: each draw takes one ladder (the
rungs' Elos from their covariance) for all of them, and each model's rating moves with it by
its own weights, so a common shift of the rungs moves every model alike and leaves the
ranking as it was."""

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
    probabilities: tuple[float, ...] = ()  # P(rank = 1), P(rank = 2), ... over the draws


@dataclass(frozen=True)
class Shared:
    """The common part of several posteriors: rating_m += weights[m] @ (ladder draw)."""

    weights: np.ndarray  # (models, rungs); a model rated on nothing shared has a zero row
    cov: np.ndarray  # (rungs, rungs), the ladder's covariance


def ranks(names: list[str], means: list[float], sds: list[float], seed: int = 0,
          draws: int = DRAWS, shared: Shared | None = None) -> list[Rank]:
    """Ranks of normal posteriors, strongest first: independent, or with a shared ladder
    (then `sds` are each model's own part, without the ladder's)."""
    order = np.argsort(-np.asarray(means, float), kind="stable")
    mu, sd = np.asarray(means, float)[order], np.asarray(sds, float)[order]
    rng = np.random.default_rng(seed)
    sample = mu + sd * rng.standard_normal((draws, len(mu)))
    if shared is not None:
        # A square root of the covariance by eigh: it is singular (the anchor is fixed).
        values, vectors = np.linalg.eigh(shared.cov)
        root = vectors * np.sqrt(np.clip(values, 0, None))
        ladders = rng.standard_normal((draws, len(values))) @ root.T
        sample += ladders @ shared.weights[order].T
    return _summarise([names[i] for i in order], sample)


def ranks_of_draws(names: list[str], means: list[float], sample: np.ndarray) -> list[Rank]:
    """Ranks from joint draws given as they are (draws, models), e.g. paired bootstrap
    replicates; the order is by `means`."""
    order = np.argsort(-np.asarray(means, float), kind="stable")
    return _summarise([names[i] for i in order], np.asarray(sample, float)[:, order])


def _summarise(names: list[str], sample: np.ndarray) -> list[Rank]:
    """Each model's P(above the next) and rank interval from draws in rank order."""
    # Rank 1 is the highest draw; ties (equal replicates) go to the stronger by mean.
    place = (-sample).argsort(axis=1, kind="stable").argsort(axis=1) + 1
    lo, hi = np.quantile(place, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=0,
                         method="inverted_cdf")
    out = []
    for k, name in enumerate(names):
        # A tie (equal bootstrap replicates of two runs) is no evidence either way: half.
        above = None if k == len(names) - 1 else float(
            np.mean(sample[:, k] > sample[:, k + 1])
            + np.mean(sample[:, k] == sample[:, k + 1]) / 2)
        share = np.bincount(place[:, k] - 1, minlength=len(names)) / len(sample)
        out.append(Rank(name, k + 1, above, int(lo[k]), int(hi[k]),
                        tuple(round(float(p), 4) for p in share)))
    return out
