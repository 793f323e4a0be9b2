"""The ladder against its goals, and what it would take to reach them.

Reads ladder.csv, its covariance and ladder_games.csv; prints every rung's 90% half-width
(relative to the anchor) against its goal (<= 50 Elo up to 2000, <= 80 above), each adjacent
pair's expected score against 25-75%, and how many more games the calibration's own planner
(design.choose) needs to meet every half-width goal, with the CPU time they would take:
each game's plies (the mean of the file's games of that pair, or of all games) times the
nodes searched per ply (the mover's node limit, plus the judge's 20,000), at Stockfish's own
single-thread `bench` speed on this machine.

    python -m bench.ladder_goals
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from bench.scaling import bench_nps
from lib.benchmark.core import btd
from lib.benchmark.games import design
from lib.benchmark.games.calibration import CalibrationGame, read_games, usable
from lib.benchmark.games.game import ADJUDICATE
from lib.benchmark.games.ladder import MIX_NODES, Ladder, anchor_of, load_ladder, pairs
from lib.engine import find_stockfish

ROOT = Path(__file__).resolve().parents[1]


def nodes_per_move(spec: str) -> float:
    """The mean nodes a rung searches per move (a mix rung searches on its engine moves)."""
    if spec == "random":
        return 0.0
    if spec.startswith("mix:"):
        share = int(re.search(r"random=(\d+)", spec).group(1)) / 100  # type: ignore[union-attr]
        return (1 - share) * MIX_NODES
    return float(re.search(r"nodes=(\d+)", spec).group(1))  # type: ignore[union-attr]


def adjacent(ladder: Ladder) -> list[float]:
    """Each rung's expected score against the next one up."""
    return [float(btd.expected_score(a.elo - b.elo, ladder.nu))
            for a, b in zip(ladder.rungs, ladder.rungs[1:], strict=False)]


def main() -> None:
    """Print the goals table and the games and CPU-hours still needed."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ladder", type=Path, default=ROOT / "ladder.csv")
    p.add_argument("--games", type=Path, default=ROOT / "ladder_games.csv")
    args = p.parse_args()
    ladder = load_ladder(args.ladder)
    games = read_games(args.games)
    use = usable(ladder.rungs, games, ladder.engine)
    goal = design.goals(ladder.elos)
    half = btd.Z90 * np.sqrt(np.diag(ladder.cov))
    scores = adjacent(ladder) + [float("nan")]
    print(f"{len(ladder.rungs)} rungs, {len(use.weak)} games ({ladder.engine}), nu "
          f"{ladder.nu:.3f}\n")
    print("| rung | Elo | 90% half-width | goal | games | expected vs next |\n"
          "|---|---|---|---|---|---|")
    for r, h, g, s in zip(ladder.rungs, half, goal, scores, strict=True):
        shown = "" if np.isnan(s) else f"{s:.0%}" + ("" if 0.25 <= s <= 0.75 else " (miss)")
        print(f"| {r.name} | {r.elo:.0f} | {h:.0f}{'' if h <= g else ' (miss)'} | {g:.0f} | "
              f"{r.games} | {shown} |")
    met = int(np.sum(half <= goal))
    inside = sum(0.25 <= s <= 0.75 for s in scores[:-1])
    print(f"\nhalf-width goals met: {met} of {len(half)}; adjacent pairs within 25-75%: "
          f"{inside} of {len(scores) - 1}")
    k = anchor_of(ladder.rungs)
    info = design.information(ladder.elos, ladder.nu, use.weak, use.strong)
    total, added = design.games_to_goal(ladder.elos, ladder.nu, info, k,
                                        pairs(len(ladder.rungs)))
    plies = _plies(games)
    nps = bench_nps(find_stockfish())
    judge = float(ADJUDICATE.nodes or 0)
    seconds = 0.0
    for (i, j), n in added.items():
        a, b = (nodes_per_move(ladder.rungs[x].spec) for x in (i, j))
        mean_plies = plies.get((ladder.rungs[i].name, ladder.rungs[j].name), plies["all"])
        seconds += n * mean_plies * ((a + b) / 2 + judge) / nps
    print(f"games still needed for every half-width goal (the planner's choice, in steps of "
          f"200): {total:,}; about {seconds / 3600:.1f} CPU-hours at {nps:,} nodes/s "
          f"(Stockfish bench, 1 thread)")


def _plies(games: list[CalibrationGame]) -> dict[object, float]:
    """Mean plies per pair of rung names, and over all games ('all')."""
    out: dict[object, float] = {"all": float(np.mean([g.plies for g in games])) if games
                                else 100.0}
    by_pair: dict[tuple[str, str], list[int]] = {}
    for g in games:
        by_pair.setdefault((g.weak, g.strong), []).append(g.plies)
    out.update({k: float(np.mean(v)) for k, v in by_pair.items()})
    return out


if __name__ == "__main__":
    main()
