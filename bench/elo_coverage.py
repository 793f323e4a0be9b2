"""Coverage of the 90% intervals of both Elo estimators, by simulation (target 87-93%).

Puzzle Elo: true Elos drawn from the prior and at fixed values; solves simulated from the
logistic model on the real puzzle ratings of questions.csv; the Laplace interval (and, with
--mcmc, the MCMC one) checked against the truth.
Human-calibrated Elo: the humans' cp-loss line and its residuals are taken from the real
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib.benchmark.questions import load_questions  # noqa: E402
from lib.elo import PRIOR_MEAN, PRIOR_SD, human_elo, puzzle_elo_laplace, puzzle_elo_mcmc  # noqa: E402
from lib.grading import score_move  # noqa: E402


def puzzle_coverage(ratings: np.ndarray, truths: np.ndarray, rng: np.random.Generator,
                    mcmc: bool) -> float:
    """Share of runs whose interval holds the true Elo."""
    hits = 0
    for i, truth in enumerate(truths):
        p = 1 / (1 + 10 ** ((ratings - truth) / 400))
        solved = (rng.random(len(ratings)) < p).astype(float)
        est = (puzzle_elo_mcmc(ratings, solved, seed=i, draws=1500, burn=300) if mcmc
               else puzzle_elo_laplace(ratings, solved))
        hits += est.lo <= truth <= est.hi
    return hits / len(truths)


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
        hits += est.lo <= truth <= est.hi
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
    print(f"{'estimator':<18} {'true Elo':<22} {'runs':>5} {'coverage':>9}")
    scenarios = [("prior draws", rng.normal(PRIOR_MEAN, PRIOR_SD, args.runs))]
    scenarios += [(f"fixed {v}", np.full(args.runs, float(v))) for v in (1200, 1800, 2400)]
    for label, truths in scenarios:
        cov = puzzle_coverage(ratings, truths, rng, mcmc=False)
        print(f"{'puzzle (Laplace)':<18} {label:<22} {args.runs:>5} {cov:>9.1%}")
        if args.mcmc:
            cov = puzzle_coverage(ratings, truths, rng, mcmc=True)
            print(f"{'puzzle (MCMC)':<18} {label:<22} {args.runs:>5} {cov:>9.1%}")
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
        print(f"{'human-calibrated':<18} {label:<22} {args.runs:>5} {cov:>9.1%}")


if __name__ == "__main__":
    main()
