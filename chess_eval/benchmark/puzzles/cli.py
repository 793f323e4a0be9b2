"""`benchmark.py puzzles`: its options and its handler."""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.cli import (
    STEP04_PUZZLES,
    add_breaker_arg,
    add_chat_args,
    add_model_arg,
    default_puzzles,
    model_config,
    model_label,
)
from chess_eval.benchmark.core.data import PUZZLE_POOL, ROOT
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import run_name
from chess_eval.benchmark.core.run import Run, finish
from chess_eval.benchmark.core.runner import BREAKER
from chess_eval.benchmark.players.player import (
    Player,
    baseline_stockfish,
    budget_of,
    is_baseline,
    make_player,
)
from chess_eval.benchmark.puzzles.line import RULES as PUZZLE_RULES
from chess_eval.benchmark.puzzles.line import TEMPLATE as PUZZLE_TEMPLATE
from chess_eval.benchmark.puzzles.line import play_line
from chess_eval.benchmark.puzzles.pool import PER_BAND, SOURCE, build_pool
from chess_eval.benchmark.puzzles.run import (
    POOL,
    LinePlayer,
    PuzzleConfig,
    run_puzzles,
    run_result,
    write_run,
)
from chess_eval.benchmark.puzzles.run import summary as puzzle_summary
from chess_eval.benchmark.puzzles.sampler import MAX_PUZZLES
from chess_eval.benchmark.puzzles.sampler import TARGET as PUZZLE_TARGET
from chess_eval.cli import (
    add_stockfish_arg,
    positive_float,
    positive_int,
)
from chess_eval.engine import EngineSettings
from chess_eval.errors import ConfigError, DataError
from chess_eval.files import (
    ensure_writable_dir,
    sha256_file,
)
from chess_eval.puzzledb import LinePuzzle, read_puzzles

log = logging.getLogger(__name__)


def add_parser(commands: Any) -> None:
    """Options of an adaptive puzzle run."""
    p = commands.add_parser(
        "puzzles", help="solve whole puzzle lines chosen adaptively",
        description="Solve Lichess puzzles as whole lines (one stateless request per solver "
        "move, the opponent's replies from the solution; any mate counts; a move off the key "
        "that the engine finds winning and within the puzzle generator's margin of the key "
        "is credited apart as an alternative), chosen adaptively by Thompson sampling on "
        "the puzzle-Elo posterior, never repeated, spread over themes; stop at +-TARGET or "
        "MAX_PUZZLES. Finished puzzles and every answer are stored: a rerun resumes. Exit "
        "status: 0 complete, 2 error (finished puzzles kept), 130 interrupted.")
    add_model_arg(p)
    add_chat_args(p)
    p.add_argument("--puzzles", type=Path, default=None,
                   help=f"Lichess puzzle CSV or .csv.zst (default: {STEP04_PUZZLES} when "
                   f"step 04 has written it, else the committed pool {_shown(PUZZLE_POOL)})")
    p.add_argument("--target", type=positive_float, default=PUZZLE_TARGET,
                   help=f"stop when the 90%% interval is within +-TARGET Elo "
                   f"(default {PUZZLE_TARGET:.0f})")
    p.add_argument("--max-puzzles", type=positive_int, default=MAX_PUZZLES,
                   help=f"stop after this many puzzles (default {MAX_PUZZLES})")
    p.add_argument("--mcmc", action="store_true",
                   help="report the posterior by MCMC instead of the Laplace approximation")
    add_breaker_arg(p, "puzzles", BREAKER)
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the Thompson draws and the random player (default 0)")
    add_stockfish_arg(p)
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory (default results)")
    p.add_argument("--store", type=Path, default=None,
                   help="finished puzzles and every answer, for resuming "
                   "(default OUT/puzzles.db)")
    p.set_defaults(handler=puzzles_command)


def _shown(path: Path) -> str:
    """A path inside the repository as its relative name."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# Where a puzzle file comes from, for the line that says one is missing.
HOW_TO_GET = (f"leave --puzzles out for the committed pool ({_shown(PUZZLE_POOL)}), run "
              f"'python generate.py --only 4' for {STEP04_PUZZLES}, or download the whole "
              "database from https://database.lichess.org/#puzzles")


def add_pool_parser(commands: Any) -> None:
    """Options of the committed pool's build (a maintainers' tool)."""
    p = commands.add_parser(
        "puzzle-pool", help="build the committed puzzle pool (maintainers' tool)",
        description="Write the stratified puzzle pool `puzzles` reads by default: the same "
        "number of puzzles in every 100-Elo band of the source (below 500 one band, 3000 and "
        "up one), each phase its share of its band, motifs taken in turn, the rows verbatim "
        "under the source's header, sorted by id, as zstd. Deterministic: the same source "
        f"gives the same bytes. The committed pool was built from {SOURCE}.")
    p.add_argument("--source", type=Path, required=True,
                   help="the Lichess puzzle CSV or .csv.zst to sample")
    p.add_argument("--out", type=Path, default=PUZZLE_POOL,
                   help=f"the pool file written (default {_shown(PUZZLE_POOL)})")
    p.add_argument("--per-band", type=positive_int, default=PER_BAND,
                   help=f"puzzles in each rating band (default {PER_BAND})")
    p.set_defaults(handler=pool_command)


def pool_command(args: argparse.Namespace) -> None:
    """Build the pool; say what it holds."""
    built = build_pool(args.source, args.out, args.per_band)
    short = {b: n for b, n in built.per_band.items() if n < args.per_band}
    print(f"wrote {built.path}: {sum(built.per_band.values())} puzzles, {built.size:,} bytes, "
          f"from {built.source_rows} well-formed rows ({built.malformed} malformed)")
    print("per band: " + ", ".join(f"{b}: {n}" for b, n in built.per_band.items()))
    print("per phase: " + ", ".join(f"{p}: {n}" for p, n in sorted(built.phases.items())))
    if short:
        log.warning("bands short of %d: %s", args.per_band,
                    ", ".join(f"{b} ({n})" for b, n in short.items()))


@dataclass(frozen=True)
class PuzzlesSetup:
    """Everything a puzzle run needs, built from its options (the CLI's and the Inspect
    task's)."""

    player: Player  # the model or baseline rated
    puzzles: list[LinePuzzle]  # the pool the sampler draws from
    config: PuzzleConfig  # the stop rule and the seed
    settings: EngineSettings  # the engine that plays the opponent's replies and judges
    shown: dict[str, Any]  # the settings as the result records them
    name: str  # the run's file name


def puzzles_setup(args: argparse.Namespace, player: Player | None = None) -> PuzzlesSetup:
    """The pool, engine, player and stop rule that `args` ask for; `player`: a model already
    made (an Inspect log's), else --model's."""
    path = args.puzzles or default_puzzles()
    if not path.is_file():
        raise ConfigError(f"--puzzles: {path} is no file; {HOW_TO_GET}")
    puzzles, rows, bad = read_puzzles(path, POOL)
    if not puzzles:
        raise DataError(f"{path}: no well-formed puzzle")
    if bad:
        log.warning("%s: %d malformed rows left out", path, bad)
    if rows - bad > len(puzzles):
        log.info("%s: %d puzzles, a seeded sample of %d is the pool (the same for every "
                 "model)", path, rows - bad, len(puzzles))
    settings = EngineSettings(baseline_stockfish(args.stockfish))  # the judge's and a baseline's
    ensure_writable_dir(args.out, "--out")
    chat = None if is_baseline(args.model) else model_config(args)
    player = player or make_player(args.model, chat, settings.path, args.seed, 1)
    digest = sha256_file(path)
    shown = {"puzzles": str(path), "puzzles_sha256": digest, "target": args.target,
             "max_puzzles": args.max_puzzles, "seed": args.seed, "prompt": PUZZLE_TEMPLATE,
             "rules": PUZZLE_RULES,
             "malformed_rows": bad, "pool": len(puzzles), "answered_by": player.answered_by}
    name = run_name(file_name(Kind.PUZZLES, model_label(args)),
                    [player.id, {k: v for k, v in shown.items() if k != "puzzles"}])
    config = PuzzleConfig(args.target, args.max_puzzles, args.seed, args.breaker)
    return PuzzlesSetup(player, puzzles, config, settings, shown, name)


def puzzles_command(args: argparse.Namespace, player: Player | None = None,
                    lines: LinePlayer = play_line) -> int:
    """Run the adaptive puzzle sequence; write the JSON, markdown report and figure.
    `player`, `lines`: as puzzles_setup's and run_puzzles'."""
    setup = puzzles_setup(args, player)
    with Run(args.out, [(setup.name, "", budget_of(setup.player))]) as run:
        run.owns(setup.player)
        session = run_puzzles(setup.player, setup.puzzles, setup.config,
                              args.store or args.out / "puzzles.db", setup.settings, lines,
                              run=run)
        result = run_result(model_label(args), setup.player.id, setup.shown, session,
                            args.mcmc, args.seed, args.price)
        paths = write_run(args.out, setup.name, result)
        print(puzzle_summary(result.as_dict()))
    return finish(run, result, paths)
