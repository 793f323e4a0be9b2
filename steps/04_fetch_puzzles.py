"""Step 04: stream the Lichess puzzle database (or a local copy) to lichess_puzzles.csv."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tqdm import tqdm

from chess_eval.cli import add_out_arg, step_main
from chess_eval.errors import DataError
from chess_eval.files import atomic_write
from chess_eval.puzzledb import header_problem
from chess_eval.testset.fetch import add_fetch_args, decompressed_blocks, fetch_config
from chess_eval.testset.pipeline import StepSpec

log = logging.getLogger(__name__)

VERSION = "1"
NAME = "04_fetch_puzzles"
PUZZLE_URL = "https://database.lichess.org/lichess_db_puzzle.csv.zst"
MB = 1 << 20


def build_parser() -> argparse.ArgumentParser:
    """Command-line options of step 04."""
    parser = argparse.ArgumentParser(
        prog="04_fetch_puzzles.py",
        description="Stream the Lichess puzzle database (zstd) or read a local .csv/.csv.zst, "
        "check its header, and write OUT/lichess_puzzles.csv through a temporary name.",
    )
    parser.add_argument("--source", default=PUZZLE_URL, metavar="URL_OR_PATH",
                        help=f"URL or local .csv/.csv.zst (default: {PUZZLE_URL})")
    add_fetch_args(parser)
    add_out_arg(parser)
    return parser


def spec(args: argparse.Namespace) -> StepSpec:
    """Inputs, outputs and parameters of this run."""
    return StepSpec(name=NAME, version=VERSION, inputs=(args.source,),
                    outputs=(args.out / "lichess_puzzles.csv",))


def run(args: argparse.Namespace) -> None:
    """Copy the source to OUT/lichess_puzzles.csv, decompressing and checking the header."""
    config = fetch_config(args)
    target = args.out / "lichess_puzzles.csv"
    written = 0
    with atomic_write(target, "wb") as handle, tqdm(
        unit="MB", desc="puzzles", disable=None,
        bar_format="{desc}: {n:.0f} MB [{elapsed}, {rate_fmt}]",
    ) as bar:
        for block in decompressed_blocks(args.source, config):
            if written == 0:
                first_line = block.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
                problem = header_problem(first_line.split(","))
                if problem:
                    raise DataError(f"{args.source} is not a Lichess puzzle CSV: {problem}")
            handle.write(block)
            written += len(block)
            bar.update(len(block) / MB)
    if written == 0:
        raise DataError(f"{args.source} is empty")
    log.info("wrote %s (%.1f MB)", target, written / MB)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    return step_main(build_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
