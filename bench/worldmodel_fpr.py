"""False positives of the world-model tests under H0, by simulation (seeded).

1. The illegal-rate part of the hypothesis test, at the H0 boundary (each answer illegal with
   probability 2%), for positions answered twice (original and mirror) whose two answers are
   independent, share a difficulty (Beta, mean 2%), or always fail together. The old test
   pooled the 2n answers as independent trials; the new one counts positions with an illegal
   answer (valid whatever the correlation, since P(either) >= 2%).
2. The symmetry test: original and mirror equally often illegal (H0), each position with its
   own rate (Beta, mean 10%); the exact McNemar test against a pooled two-proportion z-test.

Prints each test's rejection rate at alpha = 5% with its simulation error. A valid test
stays at or below 5% (+- the error); a tight one sits near it.

    python -m bench.worldmodel_fpr [--runs 4000] [--seed=0]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from scipy import stats

from chess_eval.benchmark.stats.mcnemar import mcnemar_p
from chess_eval.benchmark.worldmodel.stats import ALPHA, H0_RATE
from chess_eval.cli import run_cli

SIZES = (100, 400, 1000)


def pairs(rng: np.random.Generator, runs: int, n: int, rate: float, kind: str,
          concentration: float = 10.0) -> np.ndarray:
    """(runs, n, 2) illegal indicators of each position's two answers."""
    if kind == "independent":
        p = np.full((runs, n, 1), rate)
    elif kind == "always together":
        together = rng.random((runs, n, 1)) < rate
        return np.repeat(together, 2, axis=2)
    else:  # a shared difficulty per position
        p = rng.beta(rate * concentration, (1 - rate) * concentration, (runs, n, 1))
    return rng.random((runs, n, 2)) < p


def illegal_part(rng: np.random.Generator, runs: int) -> list[tuple[str, int, float, float]]:
    """Rejection rates of the pooled and the position-level test at the H0 boundary."""
    rows = []
    for kind in ("independent", "shared difficulty", "always together"):
        for n in SIZES:
            x = pairs(rng, runs, n, H0_RATE, kind)
            pooled = stats.binom.cdf(x.sum(axis=(1, 2)), 2 * n, H0_RATE) <= ALPHA
            positions = stats.binom.cdf(x.any(axis=2).sum(axis=1), n, H0_RATE) <= ALPHA
            rows.append((kind, n, float(pooled.mean()), float(positions.mean())))
    return rows


def symmetry_part(rng: np.random.Generator, runs: int) -> list[tuple[int, float, float]]:
    """Rejection rates of McNemar and of a pooled two-proportion test under H0."""
    rows = []
    for n in SIZES:
        x = pairs(rng, runs, n, 0.10, "shared difficulty", concentration=2.0)
        b = (x[:, :, 0] & ~x[:, :, 1]).sum(axis=1)
        c = (~x[:, :, 0] & x[:, :, 1]).sum(axis=1)
        exact = [mcnemar_p(int(i), int(j)) <= ALPHA
                 for i, j in zip(b, c, strict=True)]
        k1, k2 = x[:, :, 0].sum(axis=1), x[:, :, 1].sum(axis=1)
        pool = (k1 + k2) / (2 * n)
        se = np.sqrt(np.maximum(pool * (1 - pool) * 2 / n, 1e-12))
        z = np.abs(k1 - k2) / n / se
        rows.append((n, float(np.mean(exact)), float(np.mean(2 * stats.norm.sf(z) <= ALPHA))))
    return rows


def main() -> None:
    """Run both simulations and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4000, help="simulated runs per row")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    err = 2 * np.sqrt(ALPHA * (1 - ALPHA) / args.runs)
    print(f"False positives at alpha {ALPHA:.0%}, {args.runs} runs per row "
          f"(simulation error about +-{err:.1%} at 5%)\n")
    print("Illegal part at the H0 boundary (each answer illegal with probability 2%):")
    print("| pairs' answers | positions | old: 2n answers pooled | new: positions |")
    print("|---|---|---|---|")
    for kind, n, pooled, positions in illegal_part(rng, args.runs):
        print(f"| {kind} | {n} | {pooled:.1%} | {positions:.1%} |")
    print("\nSymmetry under H0 (original and mirror equally often illegal, rates vary by "
          "position, mean 10%):")
    print("| pairs | exact McNemar | pooled two-proportion z-test |")
    print("|---|---|---|")
    for n, exact, pooled in symmetry_part(rng, args.runs):
        print(f"| {n} | {exact:.1%} | {pooled:.1%} |")


if __name__ == "__main__":
    sys.exit(run_cli(main))
