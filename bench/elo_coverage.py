"""Coverage of the 90% intervals of both Elo estimators, by simulation (target 87-93%).

Puzzle Elo: true Elos drawn from the prior and at fixed values from 400 up; solves simulated
from the logistic model on the real puzzle ratings of questions.csv (all of them, and random
16-puzzle subsets, where solving nothing is common); the reported estimate checked against
the truth: an interval must hold it, "below ~N" must have it below N, "above ~N" above N.
"Solves nothing" is a model that never solves: its report must be "below ~N". Printed beside
the old prior, Normal(1800, 300^2), for comparison.
Human-move Elo: the humans' cp-loss line and its residuals are taken from the real
game positions of questions.csv; each run draws new human and model losses from that line
plus resampled real residuals, with the model at a known Elo, and checks the bootstrap
interval. The real line is nearly flat (the samples have few strong players), so a second
scenario uses a line four times as steep, as a full-range build would give.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from chess_eval.benchmark.question.questions import load_questions
from chess_eval.benchmark.stats import elo
from chess_eval.benchmark.stats.elo import (
    ABOVE,
    BELOW,
    PRIOR_MEAN,
    PRIOR_SD,
    UNIDENTIFIED,
    Estimate,
    human_elo,
    puzzle_elo_laplace,
    puzzle_elo_mcmc,
)
from chess_eval.cli import run_cli
from chess_eval.grading import score_move

ROOT = Path(__file__).resolve().parents[1]


def covers(est: Estimate, truth: float) -> bool:
    """The report holds the truth (an open end or a one-sided bound counts as open)."""
    if est.kind == UNIDENTIFIED:
        return True
    if est.kind == BELOW:
        return truth <= est.hi
    if est.kind == ABOVE:
        return truth >= est.lo
    return est.lo <= truth <= est.hi


def puzzle_coverage(ratings: np.ndarray, truths: np.ndarray, rng: np.random.Generator,
                    mcmc: bool, subset: int | None = None) -> tuple[float, float]:
    """Share of runs whose report holds the true Elo, and the share reported one-sided."""
    hits = one_sided = 0
    for i, truth in enumerate(truths):
        shown = ratings if subset is None else rng.choice(ratings, subset, replace=False)
        p = 1 / (1 + 10 ** ((shown - truth) / 400))
        solved = (rng.random(len(shown)) < p).astype(float)
        est = (puzzle_elo_mcmc(shown, solved, seed=i, draws=1500, burn=300) if mcmc
               else puzzle_elo_laplace(shown, solved))
        hits += covers(est, truth)
        one_sided += est.kind in (BELOW, ABOVE)
    return hits / len(truths), one_sided / len(truths)


def human_coverage(elos: np.ndarray, strata: np.ndarray, intercept: float, slope: float,
                   residuals: np.ndarray, truths: np.ndarray, rng: np.random.Generator,
                   boot: int) -> float:
    """Share of runs whose bootstrap interval holds the true Elo."""
    hits = 0
    n = len(elos)
    for i, truth in enumerate(truths):
        human = intercept + slope * elos + rng.choice(residuals, n)
        model = intercept + slope * truth + rng.choice(residuals, n)
        est = human_elo(elos, human, model, strata, seed=i, boot=boot)
        hits += covers(est, truth)
    return hits / len(truths)


def main() -> None:
    """Run the simulations and print coverage per scenario."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=ROOT / "questions.csv")
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--boot", type=int, default=400, help="bootstrap replicates per run")
    parser.add_argument("--mcmc", action="store_true", help="also check the MCMC interval")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    questions = load_questions(args.questions)
    ratings = np.array([q.rating for q in questions if q.source == "puzzle"], float)
    games = [q for q in questions if q.source == "game" and q.played_elo]
    elos = np.array([q.played_elo for q in games], float)
    strata = np.array([q.elo_bucket for q in games])
    loss = np.array([score_move(q.expected, q.played_move).cp_loss for q in games], float)
    slope, intercept = np.polyfit(elos, loss, 1)
    residuals = loss - (intercept + slope * elos)
    print(f"{len(ratings)} puzzles, {len(games)} game positions; humans' cp loss = "
          f"{intercept:.1f} {slope * 100:+.2f} per 100 Elo (residual sd {residuals.std():.1f})")
    print(f"prior Normal({PRIOR_MEAN:.0f}, {PRIOR_SD:.0f}^2); old prior Normal(1800, 300^2)")
    print(f"{'estimator':<18} {'true Elo':<22} {'puzzles':>7} {'runs':>5} {'coverage':>9} "
          f"{'one-sided':>9} {'old prior':>9}")
    scenarios = [("uniform 400-2800", rng.uniform(400, 2800, args.runs))]
    scenarios += [(f"fixed {v}", np.full(args.runs, float(v)))
                  for v in (400, 800, 1200, 1800, 2400)]
    scenarios += [("solves nothing", np.full(args.runs, -10_000.0))]
    for label, truths in scenarios:
        for subset in (None, 16):
            size = len(ratings) if subset is None else subset
            cov, one = puzzle_coverage(ratings, truths, rng, False, subset)
            elo.PRIOR_MEAN, elo.PRIOR_SD = 1800.0, 300.0
            old, _ = puzzle_coverage(ratings, truths, rng, False, subset)
            elo.PRIOR_MEAN, elo.PRIOR_SD = PRIOR_MEAN, PRIOR_SD
            print(f"{'puzzle (Laplace)':<18} {label:<22} {size:>7} {args.runs:>5} {cov:>9.1%} "
                  f"{one:>9.1%} {old:>9.1%}")
            if args.mcmc:
                cov, one = puzzle_coverage(ratings, truths, rng, True, subset)
                print(f"{'puzzle (MCMC)':<18} {label:<22} {size:>7} {args.runs:>5} "
                      f"{cov:>9.1%} {one:>9.1%}")
    low, high = np.percentile(elos, [10, 90])
    mid = float(elos.mean())
    for steep, label, truths in [
            (1, "uniform, real line", rng.uniform(low, high, args.runs)),
            (1, "fixed 1500, real line", np.full(args.runs, 1500.0)),
            (4, "uniform, 4x steeper", rng.uniform(low, high, args.runs)),
            (4, "fixed 1500, 4x steeper", np.full(args.runs, 1500.0))]:
        s = slope * steep
        i = intercept + slope * mid - s * mid  # same mean loss at the humans' mean Elo
        cov = human_coverage(elos, strata, i, s, residuals, truths, rng, args.boot)
        print(f"{'human-move':<18} {label:<22} {args.runs:>5} {cov:>9.1%}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
