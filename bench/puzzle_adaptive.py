"""Adaptive puzzle runs by simulation: ours against lichess-bench's method, coverage and puzzles.

Each run draws a true puzzle Elo uniformly from 400-2800 and solves simulated puzzles with
P(solve) = 1 / (1 + 10^((rating - truth) / 400)), the model both estimators assume. Puzzles
come from a real pool (the shared 44k sample's ratings and themes), never repeated.
- ours: `benchmark.py puzzles`' sampler and stop rule (Thompson draw, nearest unused
  puzzle spread over themes, stop at a 90% half-width <= target or the cap); the reported
  estimate is checked against the truth.
- lichess-bench: Elo from 1500 with K 40 (first 30), 20 (to 100), then 10; a
  random unused puzzle within +-100 of the current rating (else the nearest); its "CI" is
  t(n-1, 0.975) x 200 / sqrt(n), and it stops when that is <= target or at the cap.
Printed per method: how often its own interval holds the truth (ours claims 90%, lichess-bench
95%), puzzles to the stop, and the actual error at the stop.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import stats

from bench.elo_coverage import covers
from chess_eval.benchmark.puzzles.sampler import MAX_PUZZLES, TARGET, Pool, draw, finished, pick
from chess_eval.benchmark.stats.elo import Estimate, puzzle_elo_laplace
from chess_eval.cli import run_cli
from chess_eval.puzzledb import read_puzzles

ROOT = Path(__file__).resolve().parents[1]

SHARED = ROOT.parent / "shared/data/lichess/puzzles/lichess_db_puzzle.sample44k.csv.zst"
WINDOW_LB = 100.0  # lichess-bench: puzzles within this of the current rating
START_LB = 1500.0


def solves(truth: float, rating: float, rng: np.random.Generator) -> bool:
    """One simulated attempt."""
    return bool(rng.random() < 1 / (1 + 10 ** ((rating - truth) / 400)))


def ours(truth: float, pool: Pool, rng: np.random.Generator, seed: int, target: float,
         cap: int) -> tuple[Estimate, int]:
    """The puzzles run's loop with simulated answers: the final estimate and its length."""
    used = np.zeros(len(pool.ratings), bool)
    played: Counter[str] = Counter()
    ratings: list[float] = []
    solved: list[bool] = []
    est = None
    while not finished(est, len(ratings), target, cap):
        i = pick(pool, used, played, draw(ratings, solved, seed))
        used[i] = True
        played.update(pool.motifs[i])
        ratings.append(float(pool.ratings[i]))
        solved.append(solves(truth, ratings[-1], rng))
        est = puzzle_elo_laplace(np.array(ratings), np.array(solved, float))
    assert est is not None
    return est, len(ratings)


def k_factor(n: int) -> float:
    """lichess-bench's K: 40 for the first 30 puzzles, 20 up to 100, then 10."""
    return 40.0 if n < 30 else 20.0 if n < 100 else 10.0


def margin_lb(n: int) -> float:
    """lichess-bench's "CI" half-width after n puzzles."""
    return float(stats.t.ppf(0.975, n - 1) * 200 / np.sqrt(n)) if n > 1 else np.inf


def lichess_bench(truth: float, ratings: np.ndarray, rng: np.random.Generator, target: float,
            cap: int, path: list[float] | None = None) -> tuple[float, float, int]:
    """lichess-bench's run: (rating, "CI" half-width, puzzles); with `path`, it runs to the cap
    and appends the rating after every puzzle."""
    used = np.zeros(len(ratings), bool)
    r, n = START_LB, 0
    while n < cap and (path is not None or margin_lb(n) > target):
        dist = np.where(used, np.inf, np.abs(ratings - r))
        near = np.flatnonzero(dist <= WINDOW_LB)
        i = int(rng.choice(near)) if len(near) else int(np.argmin(dist))
        used[i] = True
        expected = 1 / (1 + 10 ** ((ratings[i] - r) / 400))
        r += k_factor(n) * (solves(truth, ratings[i], rng) - expected)
        n += 1
        if path is not None:
            path.append(r)
    return r, margin_lb(n), n


def truly_within(pool: Pool, truths: np.ndarray, seed: int, target: float,
                 cap: int) -> int | None:
    """Puzzles after which lichess-bench's rating is within +-target of the truth in 90% of runs
    (None: not within the cap)."""
    errors = np.empty((len(truths), cap))
    for k, truth in enumerate(truths):
        path: list[float] = []
        lichess_bench(float(truth), pool.ratings, np.random.default_rng([seed, k, 3]), target, cap,
                path)
        errors[k] = np.abs(np.array(path) - truth)
    ok = np.flatnonzero(np.quantile(errors, 0.9, axis=0) <= target)
    return int(ok[0]) + 1 if len(ok) else None


def simulate(pool: Pool, truths: np.ndarray, seed: int, target: float,
             cap: int) -> dict[str, dict[str, list[float]]]:
    """Per method: covered (0/1), puzzles, absolute error (nan for a one-sided bound)."""
    out: dict[str, dict[str, list[float]]] = {m: {"cover": [], "n": [], "err": []}
                                              for m in ("ours", "lichess-bench")}
    for k, truth in enumerate(truths):
        rng = np.random.default_rng([seed, k])
        est, n = ours(float(truth), pool, rng, seed * 100_003 + k, target, cap)
        out["ours"]["cover"].append(covers(est, truth))
        out["ours"]["n"].append(n)
        out["ours"]["err"].append(abs(est.mean - truth) if np.isfinite(est.mean) else np.nan)
        r, m, n = lichess_bench(float(truth), pool.ratings, rng, target, cap)
        out["lichess-bench"]["cover"].append(abs(r - truth) <= m)
        out["lichess-bench"]["n"].append(n)
        out["lichess-bench"]["err"].append(abs(r - truth))
    return out


def table(rows: dict[str, dict[str, list[float]]]) -> list[str]:
    """Markdown rows: coverage, median and p90 puzzles, median and p90 absolute error."""
    lines = []
    for method, r in rows.items():
        err = np.array(r["err"], float)
        err = err[np.isfinite(err)]
        lines.append(f"| {method} | {np.mean(r['cover']):.1%} | {np.median(r['n']):.0f} | "
                     f"{np.quantile(r['n'], 0.9):.0f} | {np.median(err):.0f} | "
                     f"{np.quantile(err, 0.9):.0f} |")
    return lines


def main() -> None:
    """Print both methods' coverage, puzzles and errors, overall and by true-Elo band."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=500, help="simulated runs (default 500)")
    p.add_argument("--puzzles", type=Path, default=SHARED, help="the pool (default: 44k)")
    p.add_argument("--target", type=float, default=TARGET)
    p.add_argument("--cap", type=int, default=MAX_PUZZLES)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    puzzles, _, _ = read_puzzles(args.puzzles)
    pool = Pool(np.array([q.rating for q in puzzles], float), tuple(q.motifs for q in puzzles))
    truths = np.random.default_rng(args.seed).uniform(400, 2800, args.runs)
    rows = simulate(pool, truths, args.seed, args.target, args.cap)
    print(f"{args.runs} runs, true puzzle Elo uniform 400-2800, pool {args.puzzles.name} "
          f"({len(puzzles)} puzzles), target +-{args.target:.0f}, cap {args.cap}")
    head = ("| method | coverage | median puzzles | p90 puzzles | median abs error | "
            "p90 abs error |\n|---|---|---|---|---|---|")
    print(head)
    print("\n".join(table(rows)))
    within = truly_within(pool, truths, args.seed, args.target, args.cap)
    print(f"\nlichess-bench's rating is actually within +-{args.target:.0f} of the truth in 90% of "
          "runs after " + (f"{within} puzzles" if within else f"more than {args.cap} puzzles")
          + f"; ours stops at a median of {np.median(rows['ours']['n']):.0f}.")
    print("\nBy true Elo:\n" + head.replace("| method |", "| true Elo, method |"))
    for lo in range(400, 2800, 800):
        keep = (truths >= lo) & (truths < lo + 800)
        part = {m: {k: [v for v, w in zip(vals, keep, strict=True) if w]
                    for k, vals in r.items()} for m, r in rows.items()}
        print("\n".join(line.replace("| ", f"| {lo}-{lo + 800}, ", 1) for line in table(part)))


if __name__ == "__main__":
    sys.exit(run_cli(main))
