"""Game Elo by simulation: coverage of the 90% interval, games to +-target, adaptive vs fixed.

Each run draws a true Elo, plays simulated games against the ladder (the ladder's Elos and
draw parameter nu) with outcomes from the BTD model, choosing rungs by `play`'s Thompson
sampler and stopping by its rule; the reported estimate (interval, or one-sided bound) is
checked against the truth. The baseline plays a fixed schedule, cycling over every rung of
the ladder in turn, until the same interval width. Goals (issue 10): coverage 87-93% in
every scenario, median games to +-70 at most 100, and at least 35% fewer games than fixed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from bench.elo_coverage import covers
from chess_eval.benchmark.arena.ladder import load_ladder
from chess_eval.benchmark.core.data import FIRST_LADDER, ladder_path
from chess_eval.benchmark.games.sampler import (
    PRIOR,
    SamplerConfig,
    finished,
    game_elo,
    posterior,
    schedule,
)
from chess_eval.benchmark.stats import btd
from chess_eval.benchmark.stats.elo import ABOVE, BELOW, Estimate
from chess_eval.cli import run_cli

ROOT = Path(__file__).resolve().parents[1]

FIXED_CAP = 2000  # games the fixed schedule may play before it is counted as not reaching


def outcome(truth: float, rung_elo: float, nu: float, rng: np.random.Generator) -> float:
    """One simulated game's score."""
    win, draw, _ = btd.probabilities(truth - rung_elo, nu)
    u = rng.random()
    return btd.WIN if u < win else btd.DRAW if u < win + draw else btd.LOSS


def adaptive(truth: float, config: SamplerConfig, rng: np.random.Generator, seed: int,
             batch: int) -> tuple[Estimate, int]:
    """`play`'s schedule: the final estimate and the games it took."""
    opponents: list[float] = []
    scores: list[float] = []
    while True:
        for rung in schedule(len(scores), opponents, scores, config, batch, seed):
            opponents.append(config.elos[rung])
            scores.append(outcome(truth, config.elos[rung], config.nu, rng))
        post = posterior(opponents, scores, config)
        if finished(post, len(scores), config):
            return game_elo(opponents, scores, config), len(scores)


def fixed(truth: float, config: SamplerConfig, rng: np.random.Generator) -> int:
    """Games a fixed round over the ladder takes to the same width (FIXED_CAP if never)."""
    opponents: list[float] = []
    scores: list[float] = []
    for i in range(FIXED_CAP):
        rung = config.elos[i % len(config.elos)]
        opponents.append(rung)
        scores.append(outcome(truth, rung, config.nu, rng))
        if i % 4 == 3 and posterior(opponents, scores, config).half_width <= config.target:
            return i + 1
    return FIXED_CAP


def main() -> None:
    """Print coverage, median games and the saving against the fixed schedule per scenario."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=500, help="runs per scenario (default 500)")
    p.add_argument("--ladder", type=ladder_path, default=FIRST_LADDER)
    p.add_argument("--batch", type=int, default=1, help="games chosen per posterior update")
    p.add_argument("--prior", type=float, nargs=2, default=(PRIOR.mean, PRIOR.sd),
                   metavar=("MEAN", "SD"))
    p.add_argument("--fixed-runs", type=int, default=100,
                   help="runs of the fixed baseline per scenario (default 100)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    ladder = load_ladder(args.ladder)
    config = SamplerConfig(tuple(ladder.elos), ladder.nu, btd.Prior(*args.prior))
    print(f"ladder {args.ladder.name}: {len(ladder.rungs)} rungs, {ladder.elos.min():.0f} to "
          f"{ladder.elos.max():.0f}, nu {ladder.nu:.3f}; prior Normal({args.prior[0]:.0f}, "
          f"{args.prior[1]:.0f}^2); {args.runs} runs per scenario, batch {args.batch}")
    print("| true Elo | coverage | one-sided | median games | p90 games | fixed median | "
          "saving |\n|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(args.seed)
    scenarios = [("uniform 200-2800", None)] + [(str(t), t) for t in (200, 800, 1400, 2000,
                                                                         2600, 2800)]
    for name, value in scenarios:
        truths = rng.uniform(200, 2800, args.runs) if value is None else np.full(args.runs,
                                                                                  value)
        hits, sided, games = 0, 0, []
        for i, truth in enumerate(truths):
            est, n = adaptive(float(truth), config, rng, args.seed * 100_003 + i, args.batch)
            hits += covers(est, truth)
            sided += est.kind in (BELOW, ABOVE)
            games.append(n)
        fixed_games = [fixed(float(t), config, rng) for t in truths[: args.fixed_runs]]
        med, fmed = np.median(games), np.median(fixed_games)
        print(f"| {name} | {hits / args.runs:.1%} | {sided / args.runs:.1%} | {med:.0f} | "
              f"{np.quantile(games, 0.9):.0f} | {fmed:.0f} | {1 - med / fmed:.0%} |",
              flush=True)


if __name__ == "__main__":
    sys.exit(run_cli(main))
