"""Shared command-line plumbing: logging set-up and turning errors into clear messages."""

from __future__ import annotations

import argparse
import logging
import math
import os
import signal
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chess_eval.cluster import ClusterSettings, scheduler_address
from chess_eval.errors import ChessEvalError
from chess_eval.evaluation import DEFAULT_SETTING, EvalSetting
from chess_eval.exits import Exit

log = logging.getLogger(__name__)



def setup_logging(verbose: bool = False) -> None:
    """Configure logging for an entry point (modules only get loggers)."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    # Dask's own INFO lines (every worker started and stopped) would drown the run's. Its
    # worker processes read their level from the environment when they start.
    level = "debug" if verbose else "warning"
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", level)
    logging.getLogger("distributed").setLevel(level.upper())


def _number(text: str, kind: type[float] | type[int]) -> Any:
    """`text` as a number of `kind`, else argparse's error saying which number it wanted
    (argparse's own names the function: "invalid positive_float value")."""
    try:
        return kind(text)
    except ValueError:
        wanted = "a whole number" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"must be {wanted}, got {text!r}") from None


def positive_float(text: str) -> float:
    """argparse type: a finite float > 0."""
    value: float = _number(text, float)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an int >= 1."""
    value: int = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an int >= 0."""
    value: int = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0 (pick a free one) to 65535."""
    value = non_negative_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a finite float >= 0."""
    value: float = _number(text, float)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def add_engine_args(parser: argparse.ArgumentParser, workers_help: str) -> None:
    """The shared engine and cluster options of every command that runs engines."""
    parser.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                        help=f"{workers_help} (default: number of cores)")
    parser.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                        help="run the engine work on this Dask cluster (default: "
                        "DASK_SCHEDULER_ADDRESS, else an embedded one on 127.0.0.1 with "
                        "--workers worker processes)")
    parser.add_argument("--dashboard", action="store_true",
                        help="serve the embedded cluster's Dask dashboard on 127.0.0.1:8787")
    add_stockfish_arg(parser)


def add_stockfish_arg(parser: argparse.ArgumentParser) -> None:
    """--stockfish, the same option wherever an engine runs."""
    parser.add_argument("--stockfish", default=None, metavar="PATH",
                        help="Stockfish binary, for every engine the command runs (default: "
                        "STOCKFISH_PATH, then PATH, then /usr/games/stockfish, then the "
                        "portable build 'make engine' installs)")


class Renamed(argparse.Action):
    """An old option spelling kept working: it sets the new option's value and says once,
    on stderr, which name to use instead."""

    def __init__(self, option_strings: list[str], dest: str, new: str = "",
                 **kwargs: Any) -> None:
        self.new = new
        kwargs.setdefault("help", argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        log.warning("%s is deprecated here: use %s (same meaning)", option_string, self.new)
        setattr(namespace, self.dest, values)


class Dropped(argparse.Action):
    """An option that no longer does anything, still accepted with a note saying why."""

    def __init__(self, option_strings: list[str], dest: str, why: str = "",
                 **kwargs: Any) -> None:
        self.why = why
        super().__init__(option_strings, dest, nargs=0, help=argparse.SUPPRESS)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        log.warning("%s is no longer needed: %s", option_string, self.why)


def cluster_of(args: argparse.Namespace) -> ClusterSettings:
    """Where the engine work of a command runs, from its --workers/--scheduler/--dashboard."""
    return ClusterSettings(workers=args.workers, scheduler=scheduler_address(args.scheduler),
                           dashboard=args.dashboard)


def add_setting_args(parser: argparse.ArgumentParser) -> None:
    """Options of the evaluation setting (steps 05 and 06 grade with the same one)."""
    default = DEFAULT_SETTING
    parser.add_argument("--scan-nodes", type=positive_int, default=default.scan_nodes,
                        help="nodes of the MultiPV search over all legal moves that ranks "
                        f"them (default {default.scan_nodes})")
    parser.add_argument("--near-nodes", type=non_negative_int, default=default.near_nodes,
                        help="nodes of the MultiPV search over the moves near the top "
                        f"(default {default.near_nodes}; 0: none)")
    parser.add_argument("--near-margin", type=non_negative_int, default=default.near_margin,
                        help="moves the scan puts within this many cp of its best are near "
                        f"the top (default {default.near_margin})")
    parser.add_argument("--move-nodes", type=non_negative_int, default=default.move_nodes,
                        help="nodes of each candidate move's own search (default "
                        f"{default.move_nodes}; 0: the scan's scores only)")
    parser.add_argument("--margin", type=non_negative_int, default=default.margin,
                        help="moves within this many cp of the best so far are candidates, "
                        f"each searched alone (default {default.margin})")
    parser.add_argument("--max-candidates", type=non_negative_int,
                        default=default.max_candidates,
                        help=f"at most this many candidates (default {default.max_candidates})")


def setting_of(args: argparse.Namespace) -> EvalSetting:
    """The evaluation setting named by add_setting_args's options."""
    return EvalSetting(args.scan_nodes, args.move_nodes, args.margin, args.max_candidates,
                       args.near_nodes, args.near_margin)


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


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM unwinds like Ctrl-C: temporary files are removed


def run_cli(fn: Callable[[], None]) -> int:
    """Run an entry point; expected errors, Ctrl-C and SIGTERM become a message and an exit
    code (a corrupt SQLite file included)."""
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C: KeyboardInterrupt again
    try:
        fn()
    except ChessEvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return Exit.ERROR
    except sqlite3.DatabaseError as exc:
        print(f"error: a database file is unreadable ({exc}); delete the .db file the log "
              "names last and run again: it is rebuilt", file=sys.stderr)
        return Exit.ERROR
    except KeyboardInterrupt:
        print("interrupted: finished work is kept; run again to resume", file=sys.stderr)
        return Exit.INTERRUPTED
    return 0
