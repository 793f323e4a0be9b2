"""Build the test set: run the six steps in order, skipping those whose outputs are current."""

from __future__ import annotations

import signal
import sys

# A Ctrl-C while the modules below load exits quietly (130); run_cli takes over after.
if __name__ == "__main__":  # not when a test imports this module
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))

import argparse
import importlib
import logging
from pathlib import Path
from types import ModuleType

from chess_eval.cli import (
    add_engine_args,
    non_negative_float,
    non_negative_int,
    positive_float,
    run_cli,
    setup_logging,
)
from chess_eval.files import ensure_writable_dir, ensure_writable_file
from chess_eval.testset.pipeline import State, fingerprint_parts, output_stamps
from chess_eval.testset.selection import Draw

log = logging.getLogger("generate")

STEPS = {
    1: "steps.01_fetch_games",
    2: "steps.02_process_games",
    3: "steps.03_select_games",
    4: "steps.04_fetch_puzzles",
    5: "steps.05_select_puzzles",
    6: "steps.06_evaluate",
}
EVAL_STEP = 6


def build_parser() -> argparse.ArgumentParser:
    """Command-line options of the driver."""
    parser = argparse.ArgumentParser(
        description="Rebuild the test set (questions.csv) from Lichess games and puzzles. "
        "Each step is skipped when its outputs exist and its fingerprint (inputs, "
        "parameters, version) is unchanged; the log says why each step runs.",
    )
    parser.add_argument("--games-source", action="append", default=None, metavar="URL_OR_PATH",
                        help="games dump URL or local .pgn/.pgn.zst; repeat to concatenate "
                        "(default: the last complete month's Lichess standard rated dump)")
    parser.add_argument("--month", default=None, metavar="YYYY-MM",
                        help="month of the default games dump")
    parser.add_argument("--offset-mb", type=non_negative_float, default=0.0,
                        help="decompressed MB of each games source to skip (default 0)")
    parser.add_argument("--chunk-mb", type=positive_float, default=2048.0,
                        help="decompressed MB to keep from each games source (default 2048)")
    parser.add_argument("--puzzles-source", default=None, metavar="URL_OR_PATH",
                        help="puzzle database URL or local .csv/.csv.zst "
                        "(default: the Lichess puzzle database)")
    parser.add_argument("--out", type=Path, default=Path("output"),
                        help="directory of generated files (default: output)")
    parser.add_argument("--questions", type=Path, default=None,
                        help="where step 6 writes the final test set (default: the committed "
                        "questions.csv at --scale 1; OUT/questions.csv at a smaller scale, "
                        "so a quick run never replaces the committed file)")
    parser.add_argument("--seed", type=int, default=0, help="selection seed (default 0)")
    parser.add_argument("--ply-draw", default=Draw.SCARCITY.value, choices=[d.value for d in Draw],
                        help="step 3's draw of a game's position among its plies: "
                        "'scarcity' (default) fills scarce leaves first, 'uniform' draws "
                        "every ply with room alike")
    parser.add_argument("--max-per-player", type=non_negative_int, default=None, metavar="N",
                        help="step 3's cap on positions from one player's games (default 1%% "
                        "of the game positions; 0: no cap)")
    parser.add_argument("--scale", type=positive_float, default=1.0,
                        help="shrink every leaf target by this factor for quick runs "
                        "(default 1: 800 game positions and 200 puzzles)")
    add_engine_args(parser, "worker processes of the embedded Dask cluster, one engine each")
    parser.add_argument("--force", action="store_true",
                        help="run the selected steps even if their outputs are current")
    parser.add_argument("--from", dest="from_step", type=int, choices=sorted(STEPS),
                        default=1, help="start at this step (default 1)")
    parser.add_argument("--only", type=int, choices=sorted(STEPS), default=None,
                        help="run just this step")
    parser.add_argument("--skip-eval", action="store_true",
                        help="stop before step 6 (the evaluation of every legal move)")
    return parser


def step_argv(number: int, args: argparse.Namespace) -> list[str]:
    """The command line the driver gives a step."""
    common = ["--out", str(args.out)]
    engine = ["--workers", str(args.workers)] + (
        ["--stockfish", args.stockfish] if args.stockfish else []) + (
        ["--scheduler", args.scheduler] if args.scheduler else []) + (
        ["--dashboard"] if args.dashboard else [])
    select = ["--seed", str(args.seed), "--scale", str(args.scale)]
    if number == 1:
        argv = common + ["--offset-mb", str(args.offset_mb), "--chunk-mb", str(args.chunk_mb)]
        for source in args.games_source or []:
            argv += ["--source", source]
        return argv + (["--month", args.month] if args.month else [])
    if number == 4:
        return common + (["--source", args.puzzles_source] if args.puzzles_source else [])
    if number == 3:
        return common + engine + select + ["--ply-draw", args.ply_draw] + (
            ["--max-per-player", str(args.max_per_player)]
            if args.max_per_player is not None else [])
    if number == 5:
        return common + engine + select
    if number == 6:
        return common + engine + ["--questions", str(questions_target(args))]
    return common


def questions_target(args: argparse.Namespace) -> Path:
    """--questions, else questions.csv at full scale, else OUT/questions.csv."""
    if args.questions is not None:
        return Path(args.questions)
    return Path("questions.csv") if args.scale >= 1 else args.out / "questions.csv"


def selected_steps(args: argparse.Namespace) -> list[int]:
    """Numbers of the steps this invocation runs."""
    if args.only is not None:
        return [args.only]
    last = EVAL_STEP - 1 if args.skip_eval else EVAL_STEP
    return [n for n in sorted(STEPS) if args.from_step <= n <= last]


def run_step(number: int, module: ModuleType, args: argparse.Namespace, state: State) -> None:
    """Run one step if needed and record its fingerprint after it succeeds."""
    argv = step_argv(number, args)
    step_args = module.build_parser().parse_args(argv)
    spec = module.spec(step_args)
    parts = fingerprint_parts(spec)
    reason = "--force" if args.force else state.why_run(spec, parts)
    if reason is None:
        log.info("step %d (%s): up to date, skipped", number, spec.name)
        return
    log.info("step %d (%s): running, because %s", number, spec.name, reason)
    before = output_stamps(spec)
    try:
        module.run(step_args)
    except BaseException:
        # A run that failed before touching its outputs leaves the old record valid.
        if output_stamps(spec) != before:
            state.forget(spec.name)
        raise
    state.record(spec, parts, argv)
    log.info("step %d (%s): done", number, spec.name)


def generate(args: argparse.Namespace) -> None:
    """Run the selected steps in order (every step's options checked before anything is
    written, so a bad one leaves no empty --out behind)."""
    for number in selected_steps(args):
        importlib.import_module(STEPS[number]).build_parser().parse_args(step_argv(number, args))
    ensure_writable_dir(args.out, "--out")
    if EVAL_STEP in selected_steps(args):
        ensure_writable_file(questions_target(args), "--questions")
    state = State(args.out)
    for number in selected_steps(args):
        run_step(number, importlib.import_module(STEPS[number]), args, state)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    setup_logging()
    return run_cli(lambda: generate(args))


if __name__ == "__main__":
    sys.exit(main())
