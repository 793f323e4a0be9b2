"""The ladder against its goals, and what it would take to reach them.

Reads a ladder (Stockfish 15.1's unless --ladder), its covariance and its games file; prints
every rung's 90% half-width (relative to the random mover, the zero) against its goal (<= 35
Elo up to 2600, <= 60 above), each adjacent gap against 50-150 Elo (30-70% expected), the
model's fit by how far apart the rungs of a game are (observed against expected scores), and
how many more games the calibration's own planner (design.choose) needs to meet every half-
width goal, with the CPU time they would take: each game's plies (the mean of the file's games
of that pair, or of all games) times the nodes searched per ply (the mover's node limit, plus
the screened judge's look; its full searches, about 17 a game, and every search's overhead left
out: a lower bound), at Stockfish's own single-thread `bench` speed on this machine.

With --seconds-per-game S (one worker's wall seconds a calibration game, as
bench/calibration_speed.py measures, or a calibration run's own rate times its workers), it
also projects the cost of the goals on this ladder's rungs and measured gaps: the games the
planner needs from the committed games, and from none (a user bringing another engine
version, whose committed games do not count), as CPU-hours and wall time on 2, 16 and 128
workers at perfect scaling.

    python -m bench.ladder_goals [--ladder stockfish-17.1] [--stockfish PATH] [--seconds-per-game S]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

from bench.scaling import bench_nps
from chess_eval.benchmark.arena.game import SCREEN
from chess_eval.benchmark.arena.ladder import (
    MIX_NODES,
    RUNG_SPACING,
    Ladder,
    anchor_of,
    load_ladder,
    pairs,
)
from chess_eval.benchmark.core.data import FIRST_LADDER, LADDER_GAMES, games_path, ladder_path
from chess_eval.benchmark.ladders import design
from chess_eval.benchmark.ladders.calibration import (
    CalibrationGame,
    fit_by_span,
    inflation,
    read_games,
    usable,
)
from chess_eval.benchmark.stats import btd
from chess_eval.cli import positive_float, run_cli
from chess_eval.engine import find_stockfish

ROOT = Path(__file__).resolve().parents[1]


def nodes_per_move(spec: str) -> float:
    """The mean nodes a rung searches per move (a mix rung searches on its engine moves)."""
    if spec == "random":
        return 0.0
    mix, nodes = re.search(r"random=(\d+)", spec), re.search(r"nodes=(\d+)", spec)
    if spec.startswith("mix:") and mix is not None:
        return (1 - int(mix[1]) / 100) * MIX_NODES
    if nodes is None:
        raise SystemExit(f"a rung spec without a node count: {spec}")
    return float(nodes[1])


def adjacent(ladder: Ladder) -> list[float]:
    """Each rung's expected score against the next one up."""
    return [float(btd.expected_score(a.elo - b.elo, ladder.nu))
            for a, b in zip(ladder.rungs, ladder.rungs[1:], strict=False)]


def main() -> None:
    """Print the goals table and the games and CPU-hours still needed."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ladder", type=ladder_path, default=FIRST_LADDER,
                   help="a ladder's folder name (stockfish-17.1: the reference ladder) or file "
                   f"(default: {FIRST_LADDER.parent.name}, the first ladder)")
    p.add_argument("--games", type=games_path, default=None,
                   help="the calibration games (default: the ladder's, beside it)")
    p.add_argument("--stockfish", default=None,
                   help="a native Stockfish for the nodes/s of `bench` (default: the one "
                   "found, as play finds it)")
    p.add_argument("--seconds-per-game", type=float, default=None,
                   help="one worker's wall seconds a game (bench/calibration_speed.py): also "
                   "project the wall time to the goals on 2, 16 and 128 workers")
    p.add_argument("--goal-low", type=positive_float, default=design.GOAL_LOW, metavar="HALF",
                   help="ask for another 90%% half-width goal up to "
                   f"{design.GOAL_SPLIT:,.0f} Elo (default: the ladder's, {design.GOAL_LOW:g})")
    args = p.parse_args()
    ladder = load_ladder(args.ladder)
    games = read_games(args.games or args.ladder.with_name(LADDER_GAMES))
    use = usable(ladder.rungs, games, ladder.engine, rule=ladder.adjudication)
    goal = design.goals(ladder.elos, args.goal_low)
    half = btd.Z90 * np.sqrt(np.diag(ladder.cov))
    scores = adjacent(ladder) + [float("nan")]
    gaps = np.diff(ladder.elos)
    lo, hi = RUNG_SPACING
    print(f"{len(ladder.rungs)} rungs, {len(use.weak)} games ({ladder.engine}), nu "
          f"{ladder.nu:.3f}\n")
    print("| rung | Elo | 90% half-width | goal | games | gap to next (expected) |\n"
          "|---|---|---|---|---|---|")
    for i, (r, h, g, s) in enumerate(zip(ladder.rungs, half, goal, scores, strict=True)):
        shown = "" if np.isnan(s) else f"{gaps[i]:.0f} ({s:.0%})" + (
            "" if lo <= gaps[i] <= hi else " (miss)")
        print(f"| {r.name} | {r.elo:.0f} | {h:.0f}{'' if h <= g else ' (miss)'} | {g:.0f} | "
              f"{r.games} | {shown} |")
    met = int(np.sum(half <= goal))
    inside = int(np.sum((gaps >= lo) & (gaps <= hi)))
    print(f"\nhalf-width goals met: {met} of {len(half)}; adjacent gaps within {lo:.0f}-{hi:.0f} "
          f"Elo: {inside} of {len(gaps)}")
    print("\nthe model by span (rungs k steps apart on this ladder; the weaker rung's mean "
          "score):\n\n| span | games | observed | expected | z |\n|---|---|---|---|---|")
    for f in fit_by_span(ladder, use):
        print(f"| {f.span} | {f.games:,} | {f.observed:.3f} | {f.expected:.3f} | {f.z:+.1f} |")
    k = anchor_of(ladder.rungs)
    info = design.information(ladder.elos, ladder.nu, use.weak, use.strong)
    total, added = design.games_to_goal(ladder.elos, ladder.nu, info, k,
                                        pairs(len(ladder.rungs)), step=500,
                                        cap=CAP, low=args.goal_low,
                                        inflate=inflation(ladder, use))
    plies = _plies(games)
    nps = bench_nps(args.stockfish or find_stockfish())
    judge = float(SCREEN.nodes or 0)
    seconds = 0.0
    for (i, j), n in added.items():
        a, b = (nodes_per_move(ladder.rungs[x].spec) for x in (i, j))
        mean_plies = plies.get((ladder.rungs[i].name, ladder.rungs[j].name), plies["all"])
        seconds += n * mean_plies * ((a + b) / 2 + judge) / nps
    needed = f"at least {total:,} (the planner stopped at its cap)" if total >= CAP \
        else f"{total:,}"
    print(f"games still needed for every half-width goal (the planner's choice, in steps of "
          f"500): {needed}; at least {seconds / 3600:.2f} CPU-hours of search at {nps:,} "
          f"nodes/s (Stockfish bench, 1 thread; per-move overhead not counted)")
    if args.seconds_per_game:
        project(ladder, info, args.seconds_per_game, args.goal_low)


WORKERS = (2, 16, 128)
CAP = 200_000  # the planner's games at most: a goal that needs more reads "at least" this


def project(ladder: Ladder, info: np.ndarray, per_game: float,
            low: float = design.GOAL_LOW) -> None:
    """Games, CPU-hours and wall time to the goals, from the committed games and from
    none."""
    candidates = pairs(len(ladder.rungs))
    print(f"\nThe goals (+-{low:.0f} of the random mover up to "
          f"{design.GOAL_SPLIT:.0f}, +-{design.GOAL_HIGH:.0f} above) on these "
          f"{len(ladder.rungs)} rungs, at {per_game:.2f} s a game on one worker:\n")
    print("| start | games | CPU-hours | " + " | ".join(f"wall, {w} workers" for w in WORKERS)
          + " |\n|---|---|---|" + "---|" * len(WORKERS))
    for label, start in (("the committed games", info),
                         ("no games (another engine version)", np.zeros_like(info))):
        total, _ = design.games_to_goal(ladder.elos, ladder.nu, start,
                                        anchor_of(ladder.rungs), candidates, step=500,
                                        cap=400_000, low=low)
        hours = total * per_game / 3600
        walls = " | ".join(_duration(hours / w) for w in WORKERS)
        print(f"| {label} | {total:,} | {hours:.1f} | {walls} |")


def _duration(hours: float) -> str:
    return f"{hours * 60:.0f} min" if hours < 1 else f"{hours:.1f} h"


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
    sys.exit(run_cli(main))
