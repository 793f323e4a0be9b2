"""`benchmark.py compare`: its options and its handler."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from chess_eval.benchmark.compare.compare import compare, find_run, load_run, match_results, table
from chess_eval.benchmark.compare.plan import plan
from chess_eval.benchmark.core.header import Kind, write_result
from chess_eval.cli import positive_float
from chess_eval.errors import ConfigError

PLAN_METRICS = ("accuracy", "best_move_rate", "legal_rate", "acpl", "puzzle_elo", "game_elo")


def add_parser(commands: Any) -> None:
    """Options of a comparison of two runs."""
    p = commands.add_parser(
        "compare", help="is run B better than run A? (paired where they share questions)",
        description="Compare two runs on what they share. Static runs on the same questions: "
        "the paired difference (B minus A) of every headline metric, overall and by stratum, "
        "each with a 90% interval from a bootstrap that resamples the same questions for "
        "both, and McNemar's exact test for the binary ones (legal, best move). Puzzle runs: "
        "the difference of their puzzle Elos. Play runs on one ladder: the difference of "
        "their game Elos with the ladder's shared error cancelled, and a match between "
        "their models in --results (benchmark.py match) refitted in as direct evidence. "
        "Runs that share nothing comparable are refused. --plan says instead how many "
        "questions, puzzles or games a comparison needs.")
    p.add_argument("a", nargs="?", metavar="A", help="the baseline run: a result file, or "
                   "its name (or the start of it) in --results")
    p.add_argument("b", nargs="?", metavar="B", help="the run compared with it")
    p.add_argument("--results", type=Path, default=Path("results"),
                   help="where runs named by name are found (default results)")
    p.add_argument("--out", type=Path, default=None,
                   help="the comparison as JSON (default: RESULTS/compare__A__B.json)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p.add_argument("--plan", action="store_true",
                   help="no comparison: the questions, puzzles or games needed to detect "
                   "--difference in --metric with --power")
    p.add_argument("--metric", choices=PLAN_METRICS, default="accuracy",
                   help="with --plan: the metric (default accuracy)")
    p.add_argument("--difference", type=positive_float, default=None,
                   help="with --plan: the true difference to detect, in the metric's unit "
                   "(accuracy points, a rate's share, cp, Elo)")
    p.add_argument("--power", type=positive_float, default=0.8,
                   help="with --plan: the power wanted (default 0.8)")
    p.set_defaults(handler=compare_command)


def compare_command(args: argparse.Namespace) -> None:
    """Print the comparison (or the plan) and write its JSON."""
    if args.plan:
        if args.difference is None:
            raise ConfigError("--plan needs --difference (e.g. --difference 2 for two "
                              "accuracy points)")
        print(plan(args.metric, args.difference, args.power).text())
        return
    if args.a is None or args.b is None:
        raise ConfigError("compare needs two runs, A and B (or --plan)")
    a = load_run(find_run(args.a, args.results))
    b = load_run(find_run(args.b, args.results))
    result = compare(a, b, args.seed, match_results(args.results, a, b))
    print(table(result))
    out = args.out or args.results / f"compare__{a['_name'][:60]}__{b['_name'][:60]}.json"
    write_result(out, Kind.COMPARE, result.as_dict())
    print(f"wrote {out}")
