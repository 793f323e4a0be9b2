"""A new engine's ladder with the committed ladder as its prior: honest when the prior is wrong?

Each run draws the committed ladder's true Elos from its own posterior (so the prior's own
error is simulated), then a true ladder for the new engine: those Elos plus a smooth shift
and per-rung departures drawn under a scenario, which may be one the prior does not expect
(a larger shift, a rougher one, or the engine rungs jumping away from the mix rungs). The
calibration is then replayed as `benchmark.py calibrate` runs it: batches of games chosen by
the planner with the prior, outcomes drawn from the true new Elos, and the ladder fitted
with the prior. Printed per scenario: the coverage of the rungs' 90% intervals (goal 87-93%)
with its Monte Carlo error (90%, from the spread between runs),
the share of rungs meeting their goals (design.goals: +-35 up to 2,600 Elo, +-60 above) after
the games,
and the planner's estimate of the games to every goal from the prior alone.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.ladder_coverage import draw_truth
from chess_eval.benchmark.arena.ladder import Ladder, load_ladder, pairs
from chess_eval.benchmark.core.data import FIRST_LADDER, ladder_path
from chess_eval.benchmark.ladders import design
from chess_eval.benchmark.ladders.calibration import Usable, fit, planning_elos
from chess_eval.benchmark.ladders.ladder_prior import SHIFT_LENGTH, prior_from, shift_cov
from chess_eval.benchmark.stats import btd
from chess_eval.cli import run_cli

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Scenario:
    """How the true new ladder departs from the committed one."""

    name: str
    shift_sd: float  # Elo: the smooth shift's sd at ladder_prior.SHIFT_AT
    length: float  # Elo: its correlation length
    rung_sd: float  # Elo: each rung's own departure
    jump: float  # Elo: added to every engine-only rung (a break between rung families)


SCENARIOS = (  # the shifts a new build may bring, in absolute terms: a rung at fixed nodes
    # moves by about 150 Elo between Stockfish 15.1 and 19
    Scenario("no shift at all", 0.0, SHIFT_LENGTH, 0.0, 0.0),
    Scenario("shift sd 150 (as 15.1 to 19)", 150.0, SHIFT_LENGTH, 20.0, 0.0),
    Scenario("shift sd 300", 300.0, SHIFT_LENGTH, 20.0, 0.0),
    Scenario("rougher: length 300, rungs sd 40", 150.0, SHIFT_LENGTH / 2, 40.0, 0.0),
    Scenario("engine rungs jump +100", 150.0, SHIFT_LENGTH, 20.0, 100.0),
)


@dataclass(frozen=True)
class Outcome:
    """One replayed calibration."""

    covered: np.ndarray  # per rung but the anchor: its 90% interval holds the truth
    met: np.ndarray  # per rung but the anchor: its half-width meets its goal
    low: np.ndarray  # per rung but the anchor: its true Elo is at most design.GOAL_SPLIT


def true_new(committed: Ladder, scenario: Scenario, rng: np.random.Generator) -> np.ndarray:
    """True Elos of the new engine's rungs (committed order; the anchor first, at 0)."""
    old = draw_truth(committed, rng).elos
    cov = shift_cov(old, scenario.shift_sd, length=scenario.length)
    values, vectors = np.linalg.eigh(cov)
    shift = (vectors * np.sqrt(np.clip(values, 0, None))) @ rng.standard_normal(len(old))
    own = scenario.rung_sd * rng.standard_normal(len(old))
    jump = np.array([scenario.jump if r.spec.startswith("stockfish") else 0.0
                     for r in committed.rungs])
    new = old + shift + own + jump
    new[0] = 0.0  # the random mover does not move
    return new


def replay(committed: Ladder, truth: np.ndarray, games: int, batch: int,
           rng: np.random.Generator) -> Outcome:
    """The calibration of the new ladder, batch by batch as calibrate plans it, then its fit."""
    rungs = committed.rungs
    prior = prior_from(committed, rungs)
    nu = committed.nu
    weak = np.zeros(0, int)
    strong = np.zeros(0, int)
    scores = np.zeros(0)
    candidates = pairs(len(rungs))
    while len(scores) < games:
        use = Usable(weak, strong, scores, 0, 0)
        elos, plan_nu, _ = planning_elos(rungs, use, prior)
        info = design.information(elos, plan_nu, weak, strong) + prior.information()
        chosen = np.array(design.choose(elos, plan_nu, info, 0, candidates,
                                        min(batch, games - len(scores))))
        win, draw, _ = btd.probabilities(truth[chosen[:, 0]] - truth[chosen[:, 1]], nu)
        u = rng.random(len(chosen))
        drawn = np.where(u < win, btd.WIN, np.where(u < win + draw, btd.DRAW, btd.LOSS))
        weak = np.concatenate([weak, chosen[:, 0]])
        strong = np.concatenate([strong, chosen[:, 1]])
        scores = np.concatenate([scores, drawn])
    measured = fit(rungs, Usable(weak, strong, scores, 0, 0), "sim", prior)
    by_name = {r.name: r for r in measured.rungs}
    fitted = [by_name[r.name] for r in rungs[1:]]
    true = truth[1:]
    half = np.array([(r.hi - r.lo) / 2 for r in fitted])
    return Outcome(np.array([r.lo <= t <= r.hi for r, t in zip(fitted, true, strict=True)]),
                   half <= design.goals(true), true <= design.GOAL_SPLIT)


def prior_only_games(committed: Ladder) -> int:
    """The planner's games to every goal from the prior alone, at the committed Elos."""
    prior = prior_from(committed, committed.rungs)
    total, _ = design.games_to_goal(committed.elos, committed.nu, prior.information(), 0,
                                    pairs(len(committed.rungs)), step=500)
    return total


def main() -> None:
    """Print the coverage table of every scenario."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=16, help="runs per scenario (default 16)")
    p.add_argument("--games", type=int, default=6000,
                   help="calibration games of each replayed new ladder (default 6000)")
    p.add_argument("--batch", type=int, default=1000,
                   help="games planned at once, as one calibrate --add-games (default 1000)")
    p.add_argument("--ladder", type=ladder_path, default=FIRST_LADDER)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    committed = load_ladder(args.ladder)
    print(f"prior: {prior_from(committed, committed.rungs).describe()}; the planner needs "
          f"about {prior_only_games(committed):,} games to every goal from it "
          f"({args.games:,} games a replay, {args.runs} replays a scenario)")
    print(f"{'scenario':34} {'coverage (+-90% MC)':>20} {'<=2000':>7} {'>2000':>6} "
          f"{'goals met':>10}")
    for k, scenario in enumerate(SCENARIOS):
        rng = np.random.default_rng([args.seed, k])
        outcomes = [replay(committed, true_new(committed, scenario, rng), args.games,
                           args.batch, rng) for _ in range(args.runs)]
        covered = np.concatenate([o.covered for o in outcomes])
        low = np.concatenate([o.low for o in outcomes])
        met = np.concatenate([o.met for o in outcomes])
        # A run's rungs share its truth and its games, so the Monte Carlo error is the
        # spread between runs, not between rungs.
        per_run = np.array([o.covered.mean() for o in outcomes])
        error = btd.Z90 * per_run.std(ddof=1) / np.sqrt(len(per_run))
        print(f"{scenario.name:34} {covered.mean():12.1%} +-{error:5.1%} "
              f"{covered[low].mean():7.1%} {covered[~low].mean():6.1%} {met.mean():10.1%}",
              flush=True)


if __name__ == "__main__":
    sys.exit(run_cli(main))
