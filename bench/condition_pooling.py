"""Partial pooling across start conditions against separate fits: error and coverage by
simulation.

Each run draws a player's Elo mu (uniform 600-2400) and its offsets in three conditions
(Normal(0, tau^2), tau per scenario), plays each condition's games against exact rungs near
it (outcomes from the BTD model; the standard condition gets --games, the other two a third
of that, as a run with --max-games set low for the costly conditions would), fits each
condition alone (play's posterior) and pools them (chess_eval/benchmark/games/pooling.py). Printed:
RMS error and 90% coverage of each condition's Elo, separate against pooled. Goal: pooled
error lower at coverage within 87-93%.

    python -m bench.condition_pooling --runs 500
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from bench.games_coverage import outcome
from chess_eval.benchmark.games.pooling import pool
from chess_eval.benchmark.games.sampler import PRIOR
from chess_eval.benchmark.stats import btd
from chess_eval.cli import run_cli

RUNG_STEP = 150.0  # exact rungs every 150 Elo
NU = 0.3


def condition_posterior(truth: float, games: int, rng: np.random.Generator) -> btd.Posterior:
    """A condition's own posterior from `games` games against the rungs nearest `truth`'s
    neighbourhood (a rung within +-300 Elo of it, chosen at random each game)."""
    centre = round(truth / RUNG_STEP) * RUNG_STEP
    opponents = centre + RUNG_STEP * rng.integers(-2, 3, games)
    scores = np.array([outcome(truth, o, NU, rng) for o in opponents])
    return btd.fit(opponents, scores, NU, PRIOR)


def scenario(tau: float, runs: int, games: int, rng: np.random.Generator) -> dict[str, float]:
    """RMS error and coverage of separate and pooled estimates, over conditions and runs."""
    err = {"separate": [], "pooled": []}
    hit = {"separate": [], "pooled": []}
    for _ in range(runs):
        mu = rng.uniform(600, 2400)
        truths = mu + tau * rng.standard_normal(3)
        posts = [condition_posterior(t, n, rng)
                 for t, n in zip(truths, (games, games // 3, games // 3), strict=True)]
        pooled = pool(np.array([p.mean for p in posts]), np.array([p.sd for p in posts]),
                      draws=4000, seed=int(rng.integers(1 << 31)))
        for t, p, q in zip(truths, posts, pooled, strict=True):
            err["separate"].append(p.mean - t)
            hit["separate"].append(p.lo <= t <= p.hi)
            err["pooled"].append(q.mean - t)
            hit["pooled"].append(q.lo <= t <= q.hi)
    return {f"{k}_{m}": v for k in err for m, v in (
        ("rmse", float(np.sqrt(np.mean(np.square(err[k]))))),
        ("coverage", float(np.mean(hit[k]))))}


def main() -> None:
    """Print the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--games", type=int, default=90, help="standard games (others a third)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.runs} runs per tau; {args.games} standard games, {args.games // 3} in each "
          "other condition\n")
    print("| tau (true spread of condition offsets) | RMS error separate | pooled | "
          "coverage separate | pooled |\n|---|---|---|---|---|")
    for tau in (0.0, 50.0, 150.0, 300.0, 600.0):
        r = scenario(tau, args.runs, args.games, rng)
        print(f"| {tau:.0f} | {r['separate_rmse']:.0f} | {r['pooled_rmse']:.0f} | "
              f"{r['separate_coverage']:.1%} | {r['pooled_coverage']:.1%} |", flush=True)


if __name__ == "__main__":
    sys.exit(run_cli(main))
