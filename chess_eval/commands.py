"""The benchmark's command line, `chess-eval` (or `python benchmark.py` in a checkout): the
top-level parser, one sub-parser per subcommand, and the dispatch.

Each subcommand's options and handler live beside its mode (chess_eval/benchmark/MODE/cli.py);
this module only builds the parser and dispatches. Options with no subcommand mean `run`, so
`chess-eval --model random` keeps working; a bare `chess-eval` lists the subcommands.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from chess_eval.benchmark.compare import cli as compare
from chess_eval.benchmark.core import cli as core
from chess_eval.benchmark.games import cli as games
from chess_eval.benchmark.inspect_eval.readback import read_back
from chess_eval.benchmark.ladders import cli as ladders
from chess_eval.benchmark.leaderboard import cli as leaderboard
from chess_eval.benchmark.match import cli as match
from chess_eval.benchmark.puzzles import cli as puzzles
from chess_eval.benchmark.static import cli as static
from chess_eval.benchmark.worldmodel import cli as worldmodel
from chess_eval.cli import run_cli, setup_logging
from chess_eval.exits import Exit

ADDERS = (static.add_parser, games.add_play_parser, puzzles.add_parser, worldmodel.add_parser,
          ladders.add_calibrate_parser, ladders.add_book_parser, puzzles.add_pool_parser,
          leaderboard.add_parser,
          leaderboard.add_report_parser, compare.add_parser, match.add_parser,
          core.add_serve_parser)
DEFAULT = "run"  # the subcommand meant when none is named (with options, as --model M)
# Commands that rank a results folder: the chess_eval tasks' Inspect logs in it are read back
# as result files first, so runs made in Inspect are ranked with the others.
READ_LOGS = ("leaderboard", "report")
EPILOG = (f"Options with no subcommand mean '{DEFAULT}': 'benchmark.py --model random' is "
          f"'benchmark.py {DEFAULT} --model random'. 'benchmark.py COMMAND --help' lists a "
          "command's options. Exit status: 0 complete, 2 error, 3 written but incomplete "
          "(infrastructure failures; rerun to complete), 130 interrupted (rerun to resume).")


class OneLineParser(argparse.ArgumentParser):
    """argparse with its errors in one line (which command, what is wrong, where the options
    are listed) instead of the usage block first; exit status 2 as argparse's."""

    def error(self, message: str) -> NoReturn:
        self.exit(Exit.ERROR, f"error: {self.prog}: {message} (`{self.prog} --help` lists "
                  "the options)\n")


def build_parser(prog: str = "benchmark.py") -> tuple[argparse.ArgumentParser, list[str]]:
    """The top-level parser with one sub-parser per subcommand, and the subcommands' names
    (`prog`: the command as the user typed it)."""
    parser = OneLineParser(prog=prog, epilog=EPILOG.replace("benchmark.py", prog))
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in ADDERS:
        add(commands)
    names = list(commands.choices)
    # The other modes named from the parser itself, so none added later is left out.
    others = [n for n in names if n != DEFAULT]
    parser.description = (f"Score a model (or a baseline player) on chess: `{prog} "
                          f"[{DEFAULT}] --model M` scores it on questions.csv; "
                          f"{', '.join(others[:-1])} and {others[-1]} are the other "
                          "subcommands.")
    return parser, names


def subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The sub-parser of one subcommand."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub: argparse.ArgumentParser = action.choices[name]
    return sub


def main(argv: list[str] | None = None, prog: str = "benchmark.py") -> int:
    """Entry point: parse, then run the subcommand's handler; the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    setup_logging()
    parser, names = build_parser(prog)
    if not argv:  # a bare benchmark.py: what it can do, not one subcommand's usage
        parser.print_help()
        return Exit.ERROR
    if argv and not argv[0].startswith("-") and argv[0] not in names:
        parser.error(f"unknown command {argv[0]!r} (choose from {', '.join(names)})")
    if not argv or argv[0] not in [*names, "-h", "--help"]:
        argv = [DEFAULT, *argv]
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the subcommand's own usage, which lists the options it does take
        subcommand(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    status = [0]

    def call() -> None:
        if args.command in READ_LOGS:
            read_back(args.results)
        status[0] = args.handler(args) or 0
    return run_cli(call) or status[0]

