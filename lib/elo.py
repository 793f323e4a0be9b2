"""Elo estimates with honest uncertainty.

Puzzle Elo: a Bayesian logistic model of solved/failed against the puzzles' Lichess ratings,
P(solve) = 1 / (1 + 10 ** ((rating - R) / 400)), prior R ~ Normal(1800, 300^2). The MAP comes
from scipy; the Laplace approximation gives the posterior's spread; a random-walk Metropolis
sampler is the exact alternative. Puzzle ratings are Lichess puzzle ratings, not game Elo.

Human-calibrated Elo: every game position carries the move a human of known Elo played. A line
fitted to the humans' move loss (cp loss, capped at 1000) against their Elo places the model's
mean loss on the same positions on the Elo scale; a bootstrap over positions gives the
interval. Loss, not Lichess's accuracy, because accuracy saturates near 90 for every human
level on single moves and so barely moves with Elo.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

PRIOR_MEAN = 1800.0
PRIOR_SD = 300.0
LEVEL = 0.90  # credible / confidence level of every interval
Z = float(stats.norm.ppf(0.5 + LEVEL / 2))
LN10_400 = np.log(10) / 400


@dataclass(frozen=True)
class Estimate:
    """An Elo with its 90% interval."""

    mean: float
    lo: float
    hi: float
    n: int  # observations behind it
    method: str
    note: str = ""

    def as_dict(self) -> dict[str, object]:
        """JSON form, rounded to whole Elo points; an infinite or undefined bound is null."""
        def whole(x: float) -> int | None:
            return round(x) if np.isfinite(x) else None
        return {"mean": whole(self.mean), "lo": whole(self.lo), "hi": whole(self.hi),
                "n": self.n, "method": self.method, "note": self.note}


def _log_posterior(r: float, ratings: np.ndarray, solved: np.ndarray) -> float:
    logits = (r - ratings) * LN10_400
    loglik = np.sum(solved * -np.logaddexp(0, -logits) + (1 - solved) * -np.logaddexp(0, logits))
    return float(loglik - 0.5 * ((r - PRIOR_MEAN) / PRIOR_SD) ** 2)


def puzzle_elo_laplace(ratings: np.ndarray, solved: np.ndarray) -> Estimate:
    """MAP and Laplace approximation of the puzzle-Elo posterior."""
    ratings = np.asarray(ratings, float)
    solved = np.asarray(solved, float)
    res = optimize.minimize_scalar(lambda r: -_log_posterior(r, ratings, solved),
                                   bounds=(-2000, 6000), method="bounded",
                                   options={"xatol": 1e-3})
    r = float(res.x)
    p = 1 / (1 + np.exp(-(r - ratings) * LN10_400))
    precision = float(np.sum(p * (1 - p)) * LN10_400 ** 2 + 1 / PRIOR_SD ** 2)
    sd = precision ** -0.5
    return Estimate(r, r - Z * sd, r + Z * sd, len(ratings), "laplace",
                    "Lichess puzzle ratings, not game Elo")


def puzzle_elo_mcmc(ratings: np.ndarray, solved: np.ndarray, seed: int = 0,
                    draws: int = 4000, burn: int = 1000) -> Estimate:
    """Random-walk Metropolis draws of the puzzle-Elo posterior: mean and 5-95% quantiles."""
    ratings = np.asarray(ratings, float)
    solved = np.asarray(solved, float)
    start = puzzle_elo_laplace(ratings, solved)
    step = 2.4 * (start.hi - start.lo) / (2 * Z)  # the optimal scale for one dimension
    rng = np.random.default_rng(seed)
    current, current_lp = start.mean, _log_posterior(start.mean, ratings, solved)
    samples = np.empty(draws)
    for i in range(burn + draws):
        proposal = current + step * rng.standard_normal()
        lp = _log_posterior(proposal, ratings, solved)
        if np.log(rng.random()) < lp - current_lp:
            current, current_lp = proposal, lp
        if i >= burn:
            samples[i - burn] = current
    lo, hi = np.quantile(samples, [0.5 - LEVEL / 2, 0.5 + LEVEL / 2])
    return Estimate(float(samples.mean()), float(lo), float(hi), len(ratings), "mcmc",
                    "Lichess puzzle ratings, not game Elo")


def _fit_line(elo: np.ndarray, loss: np.ndarray) -> tuple[float, float]:
    """Least-squares intercept and slope of move loss against Elo."""
    slope, intercept = np.polyfit(elo, loss, 1)
    return float(intercept), float(slope)


def _place(intercept: float, slope: float, model_loss: float, human_loss: float) -> float:
    """The Elo at which the humans' line meets the model's loss.

    Loss must fall with Elo. A line that does not fall carries no Elo information: the model
    is then placed beyond any finite Elo on the side its loss points to (+inf when it loses
    less than the humans on average, -inf otherwise), so intervals widen instead of breaking.
    """
    if slope < 0:
        return (model_loss - intercept) / slope
    return float("inf") if model_loss < human_loss else float("-inf")


def human_elo(human_elo_: np.ndarray, human_loss: np.ndarray, model_loss: np.ndarray,
              strata: np.ndarray, seed: int = 0, boot: int = 1000) -> Estimate:
    """Place the model on the humans' loss-versus-Elo line; stratified bootstrap interval.

    All arrays are per game position: the Elo of the human who moved, the human's move loss
    (cp loss, capped), the model's loss on the same position (an illegal move counts as the
    cap), and the stratum (Elo bucket) used for resampling.
    """
    human_elo_ = np.asarray(human_elo_, float)
    human_loss = np.asarray(human_loss, float)
    model_loss = np.asarray(model_loss, float)
    intercept, slope = _fit_line(human_elo_, human_loss)
    point = _place(intercept, slope, float(model_loss.mean()), float(human_loss.mean()))
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    estimates = np.empty(boot)
    for b in range(boot):
        idx = np.concatenate([g[rng.integers(0, len(g), len(g))] for g in groups])
        i, s = _fit_line(human_elo_[idx], human_loss[idx])
        estimates[b] = _place(i, s, float(model_loss[idx].mean()), float(human_loss[idx].mean()))
    # Quantiles that pick observed values, so infinite replicates never meet arithmetic.
    lo, hi = np.quantile(estimates, [0.5 - LEVEL / 2, 0.5 + LEVEL / 2], method="inverted_cdf")
    notes = []
    if not np.isfinite(point):
        notes.append("humans' loss does not fall with Elo here: no calibration")
    elif not human_elo_.min() <= point <= human_elo_.max():
        notes.append("outside the humans' Elo range: extrapolated")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        notes.append("interval unbounded: the humans' line is too flat to pin the Elo")
    return Estimate(point, float(lo), float(hi), len(model_loss), "human-calibrated",
                    "; ".join(notes))


def world_model_score(illegal_rate: float) -> float:
    """Seed 001's rubric from the illegal-move rate alone (consistency tests not run)."""
    if illegal_rate == 0:
        return 1.0
    for bound, score in ((0.01, 0.8), (0.02, 0.6), (0.05, 0.3)):
        if illegal_rate < bound:
            return score
    return 0.0
