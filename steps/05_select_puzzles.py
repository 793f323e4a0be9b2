"""Step 05: select the puzzle leaves of the tree from lichess_puzzles.csv (puzzles.csv)."""

from __future__ import annotations

import argparse
import csv
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chess_eval.cli import (
    add_engine_args,
    add_out_arg,
    add_setting_args,
    cluster_of,
    positive_float,
    setting_of,
    step_main,
)
from chess_eval.cluster import EngineCluster
from chess_eval.engine import EngineSettings, find_stockfish
from chess_eval.errors import DataError
from chess_eval.files import ProgressReader, atomic_write, mb_bar, write_csv
from chess_eval.puzzledb import header_problem
from chess_eval.testset.evalcache import EvalCache, best_forces_mate
from chess_eval.testset.pipeline import StepSpec
from chess_eval.testset.puzzle_selection import PuzzleConfig, PuzzleSelector
from chess_eval.testset.puzzles import read_rows
from chess_eval.testset.report import leaf_rows, shortfall_lines
from chess_eval.testset.tree import PUZZLE_TARGETS, leaf_order, scale_targets

log = logging.getLogger(__name__)

VERSION = "4"  # 4: the mate cap counts the game rows selected, not targeted
NAME = "05_select_puzzles"
# Mates: at most 4% of all cases in the test set (the game rows selected and the puzzles), game
# positions whose best line is a forced mate and mate puzzles together; puzzles get what the
# games left.
MATE_SHARE = 0.04
MOTIF_SHARE = 0.2  # any one motif theme: at most 20% of the puzzles
COLUMNS = ["puzzle_id", "fen", "fen4", "pos_id", "hash_bucket", "rating", "elo_bucket",
           "phase", "lichess_phase", "type", "side", "themes", "solution", "game_url",
           "legal_moves", "castling", "mate", "verify_gap", "engine", "nodes"]


def build_parser() -> argparse.ArgumentParser:
    """Command-line options of step 05."""
    parser = argparse.ArgumentParser(
        prog="05_select_puzzles.py",
        description="Fill the puzzle leaves of the seed's tree (rating bucket x phase x "
        "tactical/quiet x side) from OUT/lichess_puzzles.csv, streaming it and keeping per "
        "leaf the lowest-k rows by a salted hash; candidates are verified with Stockfish at "
        "the grading setting (first solution move best by >= 100 cp). Writes "
        "OUT/puzzles.csv and OUT/puzzles_report.json.",
    )
    parser.add_argument("--puzzles", type=Path, default=None,
                        help="puzzle CSV to read (default: OUT/lichess_puzzles.csv)")
    parser.add_argument("--seed", type=int, default=0, help="selection seed (default 0)")
    parser.add_argument("--scale", type=positive_float, default=1.0,
                        help="multiply every leaf target by this (default 1: 200 puzzles)")
    add_engine_args(parser, "worker processes of the embedded Dask cluster, one engine each")
    add_setting_args(parser)
    add_out_arg(parser)
    return parser


def _source(args: argparse.Namespace) -> Path:
    return args.puzzles or args.out / "lichess_puzzles.csv"


def spec(args: argparse.Namespace) -> StepSpec:
    """Inputs, outputs and parameters of this run."""
    return StepSpec(
        name=NAME, version=VERSION,
        inputs=(str(_source(args)), str(args.out / "positions.csv"),
                find_stockfish(args.stockfish)),
        outputs=(args.out / "puzzles.csv", args.out / "puzzles_report.json"),
        params={"seed": args.seed, "scale": args.scale, "mate_share": MATE_SHARE,
                "motif_share": MOTIF_SHARE, "setting": setting_of(args).label},
    )


def _rows(path: Path) -> Iterator[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle, \
            mb_bar(path, "scan puzzles") as bar:
        yield from read_rows(ProgressReader(handle, bar))


def _check_header(path: Path) -> None:
    if not path.is_file():
        raise DataError(f"{path} does not exist: run step 04 first (python generate.py --only 4)")
    with open(path, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle), [])
    if problem := header_problem(header):
        raise DataError(f"{path}: {problem}")


def _game_fens(path: Path) -> list[str]:
    """The selected game positions (step 03's positions.csv)."""
    if not path.is_file():
        raise DataError(f"{path} does not exist: run step 03 first (the mate cap is shared "
                        "with the game positions)")
    with open(path, newline="", encoding="utf-8") as handle:
        return sorted({row["fen"] for row in csv.DictReader(handle)})


def _game_rows(path: Path) -> int:
    """How many game positions step 03 selected."""
    if not path.is_file():
        raise DataError(f"{path} does not exist: run step 03 first (the mate cap is shared "
                        "with the game positions)")
    with open(path, newline="", encoding="utf-8") as handle:
        return sum(1 for _ in csv.DictReader(handle))


def _game_mates(args: argparse.Namespace, pool: EngineCluster) -> int:
    """Game positions whose best move forces mate, by step 06's own evaluation (cached in
    evals.db, where step 06 finds it): the count the final file will show."""
    cache = EvalCache(args.out / "evals.db", find_stockfish(args.stockfish), setting_of(args))
    try:
        evaluations, _ = cache.evaluate(pool, _game_fens(args.out / "positions.csv"),
                                        "evaluate game positions")
    finally:
        cache.close()
    return sum(best_forces_mate(e) for e in evaluations.values())


def run(args: argparse.Namespace) -> None:
    """Select puzzles and write puzzles.csv and its report."""
    source = _source(args)
    _check_header(source)
    targets = scale_targets(PUZZLE_TARGETS, args.scale)
    # The cap is on the file: the game rows step 03 found (it may fall short of its targets)
    # and the puzzles aimed for; step 06 trims any excess left when puzzle leaves fall short.
    all_cases = sum(targets.values()) + _game_rows(args.out / "positions.csv")
    joint_cap = int(MATE_SHARE * all_cases)
    settings = EngineSettings(path=find_stockfish(args.stockfish))
    with EngineCluster(settings, cluster_of(args)) as pool:
        engine_name = pool.name
        game_mates = _game_mates(args, pool)
        config = PuzzleConfig(seed=args.seed, targets=targets,
                              mate_cap=max(0, joint_cap - game_mates),
                              motif_cap=max(1, int(MOTIF_SHARE * sum(targets.values()))),
                              setting=setting_of(args))
        result = PuzzleSelector(config, pool).run(lambda: _rows(source))
    rows = sorted(result.rows, key=lambda row: leaf_order(row, "puzzle_id"))
    for row in rows:
        row.update(engine=engine_name, nodes=config.setting.label)
    write_csv(args.out / "puzzles.csv", COLUMNS, rows)
    leaves = leaf_rows(targets, result.filled)
    report = {"engine": engine_name, "seed": args.seed, "scale": args.scale,
              "target": sum(targets.values()), "selected": len(rows),
              "mate_cap_joint": joint_cap, "game_mates": game_mates,
              "mate_cap": config.mate_cap, "motif_cap": config.motif_cap,
              "counts": dict(sorted(result.counts.counts.items())), "leaves": leaves}
    with atomic_write(args.out / "puzzles_report.json") as handle:
        json.dump(report, handle, indent=2)
    log.info("selected %d of %d puzzles; %s", len(rows), report["target"], report["counts"])
    if short := shortfall_lines(leaves):
        log.warning("%d puzzle leaves short of their target:\n%s", len(short), "\n".join(short))


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    return step_main(build_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
