"""Calibration games against the engine's own speed: CPU seconds a game, the judge's share of
the nodes, and the time against the players' own search, in one run.

Two sets of games are played on one worker of the embedded Dask cluster with `match.play_job`,
the task `calibrate` runs (engines kept on the worker, the screened judge):
- a sample of the committed pairs: the games of `ladder_games.csv` with the lowest
  SHA256(key), replayed from their seeds (as bench/judge_replay.py rebuilds them);
- the next games the planner picks on the committed file (`calibrate --add-games 100` would
  play them), at a seed no committed game has.
Each set is played under every adjudication rule asked for (--adjudication, default both:
version 1, every committed ladder's, and version 2, a new ladder's; game.RULES), so the
rules are compared on the same machine in the same run. For each: wall seconds on the one
worker, CPU seconds of every process (client, worker, engines), the players' own search
(their node budgets over Stockfish's single-thread `bench` nodes/s, measured here in the same
run), the judge's share of all node budgets, and the goal: wall time within 3x the players'
own search plus 0.2 s a game.

    python -m bench.calibration_speed [--sample 200] [--planned 100] [--adjudication 1 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import psutil

from bench.judge_replay import rebuild, sample
from bench.scaling import bench_nps
from chess_eval.benchmark.arena import book
from chess_eval.benchmark.arena.game import RULES
from chess_eval.benchmark.arena.ladder import default_rungs, ladder_for
from chess_eval.benchmark.arena.match import PLAYERS, GameJob, play_job
from chess_eval.benchmark.core.data import BOOK, LADDER_GAMES
from chess_eval.benchmark.ladders.calibration import CalibrationConfig, _jobs, plan, read_games
from chess_eval.cli import run_cli
from chess_eval.cluster import ClusterSettings, EngineCluster, worker_engine
from chess_eval.engine import Engine, EngineSettings, engine_identity, find_stockfish

ROOT = Path(__file__).resolve().parents[1]
GOAL_FACTOR = 3.0  # wall time within this many times the players' own search ...
GOAL_PER_GAME_S = 0.2  # ... plus this much a game


@dataclass(frozen=True)
class Metered:
    """One game's node budgets."""

    plies: int
    players: int  # the players' node budgets
    judge: int  # the judge's


def metered(judge: Engine, job: GameJob) -> Metered:
    """The task: match.play_job, with the node budgets its engines were given."""
    players = worker_engine(judge.settings, PLAYERS)
    before = judge.nodes_budget, players.nodes_budget
    record, why = play_job(judge, job)
    if record is None:
        raise RuntimeError(f"game {job.key} aborted: {why}")
    return Metered(len(record.moves), players.nodes_budget - before[1],
                   judge.nodes_budget - before[0])


def cpu_seconds(process: psutil.Process) -> float:
    """CPU seconds of a process and every live descendant (workers, engines)."""
    total = 0.0
    for p in [process, *process.children(recursive=True)]:
        try:
            times = p.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


def run(settings: EngineSettings, jobs: list[GameJob], nps: int, label: str) -> None:
    """Play the games on one worker and print the set's row."""
    me = psutil.Process()
    with EngineCluster(settings, ClusterSettings(workers=1)) as cluster:
        cpu, start = cpu_seconds(me), time.perf_counter()
        games = [m for _, m in cluster.as_completed(metered, jobs)]
        wall, cpu = time.perf_counter() - start, cpu_seconds(me) - cpu
    n = len(games)
    players = sum(g.players for g in games)
    judge = sum(g.judge for g in games)
    search = players / nps
    goal = GOAL_FACTOR * search + GOAL_PER_GAME_S * n
    print(f"{label:<36}{n:>6}{sum(g.plies for g in games) / n:>7.0f}{wall:>8.1f}"
          f"{wall / n:>8.2f}{cpu / n:>8.2f}{search:>9.1f}{wall / search:>8.1f}x"
          f"{judge / (judge + players):>8.0%}{goal:>8.1f}  {'met' if wall <= goal else 'missed'}")


def main() -> None:
    """Measure both sets and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=int, default=200, help="committed games replayed")
    parser.add_argument("--planned", type=int, default=100, help="games the planner picks")
    parser.add_argument("--seed", type=int, default=9_999, help="seed of the planned games")
    parser.add_argument("--stockfish", default=None)
    parser.add_argument("--adjudication", type=int, nargs="+", choices=sorted(RULES),
                        default=sorted(RULES), help="the rules each set is played under "
                        "(default: every one)")
    args = parser.parse_args()
    settings = EngineSettings(find_stockfish(args.stockfish))
    engine = engine_identity(settings.path)
    games = read_games(ladder_for(engine).with_name(LADDER_GAMES))
    openings = tuple(o.start() for o in book.load_book(BOOK))
    starts = {o.label: o for o in openings}
    committed = [rebuild(g, starts[g.opening], settings)
                 for g in sample(games, engine, args.sample)]
    rungs = default_rungs()
    todo = plan(rungs, games, engine, args.planned, args.seed)
    config = CalibrationConfig(ClusterSettings(1), args.seed, openings=openings)
    planned = [job for _, job in _jobs(rungs, todo, config, settings).values()]
    nps = bench_nps(settings.path)
    print(f"{engine}, one worker; Stockfish bench (1 thread): {nps:,} nodes/s")
    print(f"{'games':<36}{'n':>6}{'plies':>7}{'wall s':>8}{'s/game':>8}{'CPU-s':>8}"
          f"{'search s':>9}{'ratio':>9}{'judge':>8}{'goal s':>8}")
    for jobs, label in ((committed, "committed pairs"), (planned, "the planner's pairs")):
        for version in args.adjudication if jobs else []:
            rule = RULES[version]
            run(settings, [replace(j, rule=rule) for j in jobs], nps, f"{label}, {rule.name}")
    print(f"ratio: wall over the players' own search; goal: {GOAL_FACTOR:g}x that plus "
          f"{GOAL_PER_GAME_S} s a game; judge: its share of all node budgets")


if __name__ == "__main__":
    sys.exit(run_cli(main))
