"""Step 06: evaluate every legal move of every selected position and write questions.csv."""

from __future__ import annotations

import argparse
import csv
import json
import logging
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chess_eval.cli import (
    add_engine_args,
    add_out_arg,
    add_setting_args,
    cluster_of,
    setting_of,
    step_main,
)
from chess_eval.cluster import EngineCluster
from chess_eval.engine import EngineSettings, find_stockfish
from chess_eval.errors import DataError
from chess_eval.files import atomic_write, ensure_writable_file, write_csv
from chess_eval.testset.evalcache import EvalCache, best_forces_mate
from chess_eval.testset.pipeline import StepSpec
from chess_eval.testset.questions import COLUMNS, cap_mates, game_question, puzzle_question

log = logging.getLogger(__name__)

MATE_SHARE = 0.04  # the seed's cap: mates at most 4% of all cases in the file
VERSION = "4"  # 4: mates capped at 4% of the rows in the file
NAME = "06_evaluate"


def build_parser() -> argparse.ArgumentParser:
    """Command-line options of step 06."""
    parser = argparse.ArgumentParser(
        prog="06_evaluate.py",
        description="Evaluate every legal move of every position in OUT/positions.csv and "
        "OUT/puzzles.csv with Stockfish (node-limited, one thread, fixed hash cleared per "
        "position: reproducible), checkpointing each position in OUT/evals.db, and write "
        "the test set.",
    )
    parser.add_argument("--questions", type=Path, default=None,
                        help="output file (default: questions.csv when OUT was built at "
                        "--scale 1, else OUT/questions.csv)")
    add_engine_args(parser, "worker processes of the embedded Dask cluster, one engine each")
    add_setting_args(parser)
    add_out_arg(parser)
    return parser


def spec(args: argparse.Namespace) -> StepSpec:
    """Inputs, outputs and parameters of this run."""
    return StepSpec(
        name=NAME, version=VERSION,
        inputs=(str(args.out / "positions.csv"), str(args.out / "puzzles.csv"),
                find_stockfish(args.stockfish)),
        outputs=(questions_target(args),), params={"setting": setting_of(args).label},
    )


def questions_target(args: argparse.Namespace) -> Path:
    """--questions, else the committed questions.csv for a full-scale build, else in OUT."""
    if args.questions is not None:
        return Path(args.questions)
    report = args.out / "positions_report.json"
    scale = json.loads(report.read_text()).get("scale", 1) if report.is_file() else 1
    return Path("questions.csv") if scale >= 1 else args.out / "questions.csv"


def mate_count(rows: list[dict[str, str]]) -> dict[str, int]:
    """Questions whose best move forces mate, by source (the seed caps them at 4%)."""
    counts = {"game": 0, "puzzle": 0}
    for row in rows:
        counts[row["source"]] += best_forces_mate({"expected": row["expected_output"]})
    return counts


def _read(path: Path, step: str) -> list[dict[str, str]]:
    if not path.is_file():
        raise DataError(f"{path} does not exist: run step {step} first")
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def run(args: argparse.Namespace) -> None:
    """Evaluate (resuming from the checkpoint) and write questions.csv."""
    target = questions_target(args)
    ensure_writable_file(target, "--questions")
    games = _read(args.out / "positions.csv", "03")
    puzzles = _read(args.out / "puzzles.csv", "05")
    setting = setting_of(args)
    path = find_stockfish(args.stockfish)
    fens = sorted({row["fen"] for row in games + puzzles})
    cache = EvalCache(args.out / "evals.db", path, setting)
    try:
        with EngineCluster(EngineSettings(path=path), cluster_of(args)) as pool:
            engine_name = pool.name
            expected, now = cache.evaluate(pool, fens, "evaluate")
    finally:
        cache.close()
    rows = [game_question(r, expected[r["fen"]], engine_name) for r in games]
    rows += [puzzle_question(r, expected[r["fen"]], engine_name) for r in puzzles]
    rows, dropped = cap_mates(rows, MATE_SHARE,
                              lambda row: best_forces_mate({"expected": row["expected_output"]}))
    if dropped:
        log.warning("dropped %d mate rows to keep mates at %.0f%% of the %d rows in the file",
                    dropped, 100 * MATE_SHARE, len(rows))
    write_csv(target, COLUMNS, rows)
    mates = mate_count(rows)
    report = {"positions": len(fens), "evaluated_now": now,
              "reused": len(fens) - now, "engine": engine_name, "setting": setting.label,
              "questions": str(target), "best_move_mates": mates,
              "mates_dropped_for_cap": dropped}
    with atomic_write(args.out / "evaluation_report.json") as handle:
        json.dump(report, handle, indent=2)
    log.info("wrote %s: %d questions (%d evaluated now, %d from the checkpoint); best move "
             "forces mate in %d game positions and %d puzzles", target, len(rows), now,
             len(fens) - now, mates["game"], mates["puzzle"])


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    return step_main(build_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
