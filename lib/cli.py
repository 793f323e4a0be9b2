"""Shared command-line plumbing: logging set-up and turning errors into clear messages."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from lib.errors import ChessEvalError

log = logging.getLogger(__name__)

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130


def setup_logging(verbose: bool = False) -> None:
    """Configure logging for an entry point (modules only get loggers)."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )


def positive_float(text: str) -> float:
    """argparse type: a float > 0."""
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an int >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a float >= 0."""
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def add_engine_args(parser: argparse.ArgumentParser, workers_help: str) -> None:
    """The shared --workers and --stockfish options of every step that runs engines."""
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                        help=f"{workers_help} (default: number of cores)")
    parser.add_argument("--stockfish", default=None,
                        help="Stockfish binary (default: STOCKFISH_PATH, then PATH, then "
                        "/usr/games/stockfish)")


def add_out_arg(parser: argparse.ArgumentParser) -> None:
    """The shared --out option: the directory of generated files."""
    parser.add_argument("--out", type=Path, default=Path("output"),
                        help="directory of generated files (default: output)")


def step_main(build_parser: Callable[[], argparse.ArgumentParser],
              run: Callable[[argparse.Namespace], None], argv: list[str] | None) -> int:
    """The entry point of a step script: parse, set up logging, run with clear errors."""
    args = build_parser().parse_args(argv)
    setup_logging()
    return run_cli(lambda: run(args))


def run_cli(fn: Callable[[], None]) -> int:
    """Run an entry point; expected errors and Ctrl-C become a message and an exit code."""
    try:
        fn()
    except ChessEvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted: finished work is kept; run again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0
