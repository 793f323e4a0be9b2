"""`benchmark.py leaderboard`: its options and its handler."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.cli import default_puzzles
from chess_eval.benchmark.core.data import REFERENCE_LADDER, ladder_path, questions_path
from chess_eval.benchmark.core.scoring import (
    floor_figures,
)
from chess_eval.benchmark.leaderboard.board import leaderboard
from chess_eval.benchmark.leaderboard.site import SiteInputs, build_site, remove_stale
from chess_eval.benchmark.question.questions import load_questions
from chess_eval.cli import Renamed
from chess_eval.errors import DataError
from chess_eval.files import results_dir


def add_parser(commands: Any) -> None:
    """Options of the leaderboard."""
    p = commands.add_parser(
        "leaderboard", help="rank every complete result in a directory",
        description="Rank the complete results in a directory: static runs, play (games "
        "against the ladder), puzzles (adaptive) and worldmodel, on the same questions file "
        "only. Each Elo scale in its own table, with 90% intervals, P(stronger than the next), "
        "a 90% rank interval and lichess-bench's low-confidence dagger (fewer than 30 games, "
        "or a 95% interval wider than +-100); the world-model runs' table and the illegal "
        "answers by type. Writes leaderboard.md, .svg, .png and leaderboard-worldmodel.png.")
    p.add_argument("--results", type=Path, default=Path("results"),
                   help="results directory to rank; the leaderboard's files are written "
                   "there too (default results). The chess_eval tasks' Inspect logs in it "
                   "(inspect eval ... --log-dir results) are read back as result files first")
    p.add_argument("--out", dest="results", type=Path, action=Renamed, new="--results")
    _selection_options(p)
    p.set_defaults(handler=leaderboard_command)


def _selection_options(p: argparse.ArgumentParser) -> None:
    """Which runs are compared (leaderboard and report alike), and the draws' seed."""
    p.add_argument("--questions", type=questions_path, default="questions.csv",
                   help="only runs on this questions file (by its SHA-256) are compared "
                   "(default questions.csv)")
    p.add_argument("--puzzles", type=Path, default=None,
                   help="only puzzle runs on this puzzle file (by its SHA-256) are compared "
                   "(default: the puzzles subcommand's default file)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random mover and the rank draws (default 0)")


def leaderboard_command(args: argparse.Namespace) -> None:
    """Rank every complete result in --results; print where the files went."""
    results_dir(args.results)
    floor = floor_figures(load_questions(args.questions), args.seed)
    puzzles = args.puzzles or default_puzzles()
    for path in leaderboard(args.results, args.questions, puzzles, floor, args.seed):
        print(f"wrote {path}")


def add_report_parser(commands: Any) -> None:
    """Options of the report site."""
    p = commands.add_parser(
        "report", help="the results as a static HTML site (opens from file://)",
        description="Turn a results directory into a static site that needs no network: "
                    "index.html (every run, sortable; each Elo scale's ranking with its "
                    "rank-probability heat map and the ladder's rungs as reference lines), "
                    "ladder.html, and a page per run with its strata, taxonomy, posterior "
                    "and a viewer for every game and puzzle line.")
    p.add_argument("--results", type=Path, default=Path("results"),
                   help="results directory to read (default results); the chess_eval tasks' "
                   "Inspect logs in it (inspect eval ... --log-dir results) are read back as "
                   "result files first")
    p.add_argument("--out", type=Path, default=Path("site"),
                   help="directory the site is written to (default site)")
    p.add_argument("--ladder", type=ladder_path, default=REFERENCE_LADDER,
                   help="the ladder shown on ladder.html (its ladder.csv or folder, with its "
                   "games beside it, or a committed ladder's name; default stockfish-17.1, "
                   "the reference ladder every game Elo on the site is on)")
    _selection_options(p)
    p.set_defaults(handler=report_command)


def report_command(args: argparse.Namespace) -> None:
    """Build the site; print where it went."""
    results_dir(args.results)
    if args.out.resolve() == args.results.resolve():
        raise DataError(f"--out {args.out} is the results directory: name another one")
    if args.out.exists() and not args.out.is_dir():
        raise DataError(f"--out {args.out} is a file, not a directory")
    if not args.ladder.is_file():
        raise DataError(f"--ladder {args.ladder}: no such file")
    floor = floor_figures(load_questions(args.questions), args.seed)
    inputs = SiteInputs(args.results, args.questions, args.puzzles or default_puzzles(),
                        args.ladder, floor, args.seed)
    try:
        remove_stale(args.out)
        pages = build_site(inputs, args.out)
    except OSError as exc:
        raise DataError(f"cannot write the site to {args.out}: {exc}") from exc
    html = sum(p.suffix == ".html" for p in pages)
    print(f"wrote {html} pages and leaderboard.json/.csv to {args.out}/; open "
          f"{args.out / 'index.html'}")
