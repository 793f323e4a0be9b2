"""Elo estimates with honest uncertainty.

Puzzle Elo: a Bayesian logistic model of solved/failed against the puzzles' Lichess ratings,
P(solve) = 1 / (1 + 10 ** ((rating - R) / 400)), prior R ~ Normal(1500, 800^2): wide enough
that the data speak for any model from a random mover up (bench/elo_coverage.py checks the
90% interval at true puzzle Elos from 400 to 2800). The MAP comes from scipy; the Laplace
approximation gives the posterior's spread; a random-walk Metropolis sampler is the exact
alternative. With no puzzle solved (or none failed) no prior may speak: the estimate is the
one-sided 95% bound "below ~N" (or "above ~N"), the Elo at which that outcome has probability
5%. Puzzle ratings are Lichess puzzle ratings, not game Elo.

Human-move Elo: every game position carries the move a human of known Elo played. A line
fitted to the humans' move loss (cp loss, capped at 1000) against their Elo places the model's
mean loss on the same positions on the Elo scale; a bootstrap over positions gives the
interval. Loss, not Lichess's accuracy, because accuracy saturates near 90 for every human
level on single moves and so barely moves with Elo.

Honest extremes: an estimate is only a number inside the range the data can speak for (the
humans' Elos; the puzzle ratings +-400, never below the easiest puzzle's rating where that
is at the foot of Lichess's scale, 400: no puzzle or player is rated under it, and the
puzzle files' lowest rating is 399). Beyond it the estimate reads "below ~N" or "above ~N",
an interval end beyond it is open ("<N", ">N"), and an interval spanning the whole range
(the humans' line too flat to place the model) reads "not identifiable", never a five-digit
number. A line that does not fall still says which side of the humans a model that loses far
more (or far less) than all of them is on: "below ~N" where the bootstrap agrees.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize, stats

from chess_eval.benchmark.stats.bootstrap import percentile_interval, resample
from chess_eval.errors import FitError

PRIOR_MEAN = 1500.0  # Lichess's starting rating
PRIOR_SD = 800.0  # wide: a model that solves little is not pulled up to the middle
PUZZLE_REACH = 400.0  # puzzle Elos this far beyond every puzzle's rating are not measured
# The foot of Lichess's rating scale: no puzzle (nor player) is rated below it, so a puzzle Elo
# never reads below it ("below ~-1" for a player that solved none of puzzles rated 399).
SCALE_FLOOR = 400.0
ONE_SIDED = 0.05  # the chance of the observed extreme at the bound of "below/above ~N"
LEVEL = 0.90  # credible / confidence level of every interval
Z = float(stats.norm.ppf(0.5 + LEVEL / 2))
LN10_400 = np.log(10) / 400


INTERVAL, BELOW, ABOVE, UNIDENTIFIED = "interval", "below", "above", "not identifiable"


@dataclass(frozen=True)
class Estimate:
    """An Elo with its 90% interval, or a one-sided bound, or nothing the data can say.

    kind INTERVAL: mean in [lo, hi]; an infinite end is open (below or above the range).
    kind BELOW / ABOVE: no mean; `hi` / `lo` is the bound. UNIDENTIFIED: nothing.
    """

    mean: float
    lo: float
    hi: float
    n: int  # observations behind it
    method: str
    note: str = ""
    kind: str = INTERVAL
    floor: float = -np.inf  # the range the data speak for: open ends are shown as beyond it
    ceil: float = np.inf

    def text(self) -> str:
        """'1712  90% [1590, 1840]', '1650  90% [<600, 1840]', 'below ~900', ..."""
        if self.kind == UNIDENTIFIED:
            return UNIDENTIFIED
        if self.kind == BELOW:
            return f"below ~{round(self.hi)}"
        if self.kind == ABOVE:
            return f"above ~{round(self.lo)}"
        lo = str(round(self.lo)) if np.isfinite(self.lo) else f"<{round(self.floor)}"
        hi = str(round(self.hi)) if np.isfinite(self.hi) else f">{round(self.ceil)}"
        return f"{round(self.mean)}  90% [{lo}, {hi}]"

    def as_dict(self) -> dict[str, object]:
        """JSON form, rounded to whole Elo points; an open or undefined value is null."""
        def whole(x: float) -> int | None:
            return round(x) if np.isfinite(x) else None
        return {"mean": whole(self.mean), "lo": whole(self.lo), "hi": whole(self.hi),
                "kind": self.kind, "text": self.text(), "n": self.n, "method": self.method,
                "note": self.note}


def bounded(est: Estimate, floor: float, ceil: float) -> Estimate:
    """The estimate as far as the data speak for [floor, ceil] (see the module docstring)."""
    mean, lo, hi = est.mean, est.lo, est.hi
    est = replace(est, floor=floor, ceil=ceil)  # n, method and note stay
    if est.kind == BELOW or (est.kind == INTERVAL and mean < floor and hi <= ceil):
        bound = min(max(hi, floor), ceil)
        return replace(est, mean=np.nan, lo=-np.inf, hi=bound, kind=BELOW)
    if est.kind == ABOVE or (est.kind == INTERVAL and mean > ceil and lo >= floor):
        bound = max(min(lo, ceil), floor)
        return replace(est, mean=np.nan, lo=bound, hi=np.inf, kind=ABOVE)
    if est.kind == UNIDENTIFIED or not np.isfinite(mean) or (lo < floor and hi > ceil):
        return replace(est, mean=np.nan, lo=-np.inf, hi=np.inf, kind=UNIDENTIFIED)
    return replace(est, lo=lo if lo >= floor else -np.inf, hi=hi if hi <= ceil else np.inf,
                   kind=INTERVAL)


def puzzle_range(ratings: np.ndarray) -> tuple[float, float]:
    """The puzzle Elos the ratings can speak for: PUZZLE_REACH beyond the easiest and the
    hardest puzzle, but never below SCALE_FLOOR, nor below the easiest puzzle where that
    already sits at it."""
    low, high = float(ratings.min()), float(ratings.max())
    return max(low - PUZZLE_REACH, min(low, SCALE_FLOOR)), high + PUZZLE_REACH


def _one_sided(ratings: np.ndarray, solved_all: bool) -> float:
    """The Elo at which solving none (or all) of the puzzles has probability ONE_SIDED."""
    sign = 1.0 if solved_all else -1.0

    def excess(r: float) -> float:  # log P(the observed extreme | r) - log ONE_SIDED
        return float(-np.sum(np.logaddexp(0, -sign * (r - ratings) * LN10_400))
                     - np.log(ONE_SIDED))
    return float(optimize.brentq(excess, ratings.min() - 4000, ratings.max() + 4000))


def _extreme(ratings: np.ndarray, solved: np.ndarray, method: str) -> Estimate | None:
    """The one-sided bound when nothing (or everything) was solved, else None."""
    if 0 < solved.sum() < len(solved):
        return None
    solved_all = bool(solved.sum())
    bound = _one_sided(ratings, solved_all)
    floor, ceil = puzzle_range(ratings)
    if solved_all:
        est = Estimate(np.nan, bound, np.inf, len(ratings), method,
                       "every puzzle solved: a 95% lower bound", ABOVE)
    else:
        est = Estimate(np.nan, -np.inf, bound, len(ratings), method,
                       "no puzzle solved: a 95% upper bound", BELOW)
    return bounded(est, floor, ceil)


MODE_BOUNDS = (-3000, 7000)  # where the puzzle-Elo mode is searched (the prior is N(1500, 800))


def _log_posterior(r: float, ratings: np.ndarray, solved: np.ndarray) -> float:
    logits = (r - ratings) * LN10_400
    loglik = np.sum(solved * -np.logaddexp(0, -logits) + (1 - solved) * -np.logaddexp(0, logits))
    return float(loglik - 0.5 * ((r - PRIOR_MEAN) / PRIOR_SD) ** 2)


def puzzle_posterior(ratings: np.ndarray, solved: np.ndarray) -> tuple[float, float]:
    """The puzzle-Elo posterior's mode and its Laplace standard deviation (always defined)."""
    low, high = MODE_BOUNDS
    res = optimize.minimize_scalar(lambda r: -_log_posterior(r, ratings, solved),
                                   bounds=(low, high), method="bounded",
                                   options={"xatol": 1e-3})
    r = float(res.x)
    if not res.success or min(r - low, high - r) < 1:
        raise FitError(f"puzzle-Elo fit on {len(ratings)} puzzles: the posterior's mode was not "
                       f"found inside [{low}, {high}] ({res.message})")
    p = 1 / (1 + np.exp(-(r - ratings) * LN10_400))
    precision = float(np.sum(p * (1 - p)) * LN10_400 ** 2 + 1 / PRIOR_SD ** 2)
    return r, precision ** -0.5


def puzzle_elo_laplace(ratings: np.ndarray, solved: np.ndarray) -> Estimate:
    """MAP and Laplace approximation of the puzzle-Elo posterior."""
    ratings = np.asarray(ratings, float)
    solved = np.asarray(solved, float)
    if (extreme := _extreme(ratings, solved, "laplace")) is not None:
        return extreme
    r, sd = puzzle_posterior(ratings, solved)
    est = Estimate(r, r - Z * sd, r + Z * sd, len(ratings), "laplace",
                   "Lichess puzzle ratings, not game Elo")
    return bounded(est, *puzzle_range(ratings))


def puzzle_elo_mcmc(ratings: np.ndarray, solved: np.ndarray, seed: int = 0,
                    draws: int = 4000, burn: int = 1000) -> Estimate:
    """Random-walk Metropolis draws of the puzzle-Elo posterior: mean and 5-95% quantiles."""
    ratings = np.asarray(ratings, float)
    solved = np.asarray(solved, float)
    if (extreme := _extreme(ratings, solved, "mcmc")) is not None:
        return extreme
    start = puzzle_posterior(ratings, solved)
    step = 2.4 * start[1]  # the optimal scale for one dimension
    rng = np.random.default_rng(seed)
    current, current_lp = start[0], _log_posterior(start[0], ratings, solved)
    samples = np.empty(draws)
    for i in range(burn + draws):
        proposal = current + step * rng.standard_normal()
        lp = _log_posterior(proposal, ratings, solved)
        if np.log(rng.random()) < lp - current_lp:
            current, current_lp = proposal, lp
        if i >= burn:
            samples[i - burn] = current
    lo, hi = np.quantile(samples, [0.5 - LEVEL / 2, 0.5 + LEVEL / 2])
    est = Estimate(float(samples.mean()), float(lo), float(hi), len(ratings), "mcmc",
                   "Lichess puzzle ratings, not game Elo")
    return bounded(est, *puzzle_range(ratings))


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


def human_elo_replicates(human_elo_: np.ndarray, human_loss: np.ndarray,
                         model_losses: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Every model's human-move Elo on each resample of the positions: (replicates,
    models), from one (replicates, positions) index array shared by all models, so runs on
    the same positions are compared on the same resamples (paired)."""
    out = np.empty((len(indices), len(model_losses)))
    for b, idx in enumerate(indices):
        i, s = _fit_line(human_elo_[idx], human_loss[idx])
        mean_human = float(human_loss[idx].mean())
        for m, losses in enumerate(model_losses):
            out[b, m] = _place(i, s, float(losses[idx].mean()), mean_human)
    return out


def puzzle_elo_replicates(ratings: np.ndarray, solved: np.ndarray,
                          indices: np.ndarray) -> np.ndarray:
    """Every model's first-move puzzle Elo (MAP) on each resample of the puzzles: (replicates,
    models), `solved` (models, puzzles); a replicate with nothing solved (or everything)
    stands at its one-sided bound."""
    out = np.empty((len(indices), len(solved)))
    for b, idx in enumerate(indices):
        for m, s in enumerate(solved):
            est = puzzle_elo_laplace(ratings[idx], s[idx])
            out[b, m] = est.mean if np.isfinite(est.mean) else (
                est.hi if est.kind == BELOW else est.lo)
    return out


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
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    estimates = np.empty(boot)
    for b, idx in enumerate(resample(np.random.default_rng(seed), groups, boot)):
        i, s = _fit_line(human_elo_[idx], human_loss[idx])
        estimates[b] = _place(i, s, float(model_loss[idx].mean()), float(human_loss[idx].mean()))
    # Quantiles that pick observed values, so infinite replicates never meet arithmetic.
    lo, hi = percentile_interval(estimates, LEVEL, method="inverted_cdf")
    floor, ceil = float(human_elo_.min()), float(human_elo_.max())
    # A line that does not fall puts the point beyond the range on the side the model's loss
    # points to; bounded() then keeps only the bound the bootstrap supports, if any.
    est = Estimate(point, float(lo), float(hi), len(model_loss), "human-move")
    out = bounded(est, floor, ceil)
    note = {UNIDENTIFIED: "the humans' line is too flat here to place the model",
            BELOW: f"below the humans' Elo range ({floor:.0f}-{ceil:.0f}): an upper bound",
            ABOVE: f"above the humans' Elo range ({floor:.0f}-{ceil:.0f}): a lower bound",
            INTERVAL: ""}[out.kind]
    if out.kind == INTERVAL and not (np.isfinite(out.lo) and np.isfinite(out.hi)):
        note = f"the interval reaches beyond the humans' Elo range ({floor:.0f}-{ceil:.0f})"
    return Estimate(out.mean, out.lo, out.hi, out.n, out.method, note, out.kind, floor, ceil)


def world_model_score(illegal_rate: float) -> float:
    """The world-model rubric from the illegal-move rate alone (consistency tests not run)."""
    if illegal_rate == 0:
        return 1.0
    for bound, score in ((0.01, 0.8), (0.02, 0.6), (0.05, 0.3)):
        if illegal_rate < bound:
            return score
    return 0.0
