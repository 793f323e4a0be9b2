"""Step 02: filter games.pgn by its headers and store kept games in SQLite (games.db)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chess_eval.cli import add_out_arg, step_main
from chess_eval.errors import DataError
from chess_eval.files import temp_name
from chess_eval.testset import gamesdb
from chess_eval.testset.pipeline import StepSpec
from chess_eval.testset.process import ProcessReport, process_pgn
from chess_eval.testset.sources import SOURCES_FILE

log = logging.getLogger(__name__)

VERSION = "3"  # 3: drops per source file; abandoned games; headers cut off
NAME = "02_process_games"


def build_parser() -> argparse.ArgumentParser:
    """Command-line options of step 02."""
    parser = argparse.ArgumentParser(
        prog="02_process_games.py",
        description="Keep standard, rated blitz/rapid/classical games with both ratings from "
        "OUT/games.pgn (decided from the headers; moves are only checked for form, legality "
        "is checked when step 03 replays a game) and store them in OUT/games.db with drop "
        "counts by reason.",
    )
    parser.add_argument("--pgn", type=Path, default=None,
                        help="PGN to read (default: OUT/games.pgn)")
    add_out_arg(parser)
    return parser


def _pgn(args: argparse.Namespace) -> Path:
    return args.pgn or args.out / "games.pgn"


def spec(args: argparse.Namespace) -> StepSpec:
    """Inputs, outputs and parameters of this run."""
    pgn = _pgn(args)
    sidecar = pgn.with_name(SOURCES_FILE)
    inputs = (str(pgn),) + ((str(sidecar),) if sidecar.is_file() else ())
    return StepSpec(name=NAME, version=VERSION, inputs=inputs, outputs=(args.out / "games.db",))


def run(args: argparse.Namespace) -> None:
    """Process the PGN into games.db (built under a temporary name, then renamed)."""
    pgn = _pgn(args)
    if not pgn.is_file():
        raise DataError(f"{pgn} does not exist: run step 01 first (python generate.py --only 1)")
    target = args.out / "games.db"
    tmp = temp_name(target)
    tmp.unlink(missing_ok=True)
    try:
        conn = gamesdb.create(tmp)
        with conn:
            report = process_pgn(pgn, conn)
        conn.close()
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    log.info("kept %d games, dropped %d: %s", report.kept, report.drops.total(),
             _reasons(report.drops.counts))
    if len(report.kept_by_source) > 1:
        log.info("per file:\n%s", "\n".join(_per_file(report)))


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def _per_file(report: ProcessReport) -> list[str]:
    """A line per source file: kept, then drops by reason."""
    width = max(len(name) for name in report.kept_by_source)
    return [f"  {name:<{width}}  kept {kept:>6}  dropped: "
            f"{_reasons(report.drops_by_source[name].counts)}"
            for name, kept in report.kept_by_source.items()]


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    return step_main(build_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
