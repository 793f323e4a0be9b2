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

import chess
from tqdm import tqdm

from lib.cli import add_engine_args, add_out_arg, positive_int, step_main
from lib.engine import Engine, EnginePool, EngineSettings, find_stockfish
from lib.errors import DataError
from lib.evaluation import DEFAULT_SETTING, EvalSetting, evaluate_moves, to_json
from lib.files import atomic_write, sha256_file, write_csv
from lib.kvstore import JsonStore
from lib.testset.pipeline import StepSpec
from lib.testset.questions import COLUMNS, game_question, puzzle_question

log = logging.getLogger(__name__)

VERSION = "2"
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
    parser.add_argument("--questions", type=Path, default=Path("questions.csv"),
                        help="output file (default: questions.csv)")
    add_engine_args(parser, "engine processes, one thread each")
    parser.add_argument("--best-nodes", type=int, default=DEFAULT_SETTING.best_nodes,
                        help="nodes of the single-line search that picks the best move "
                        f"(default {DEFAULT_SETTING.best_nodes}; 0 skips it)")
    parser.add_argument("--scan-nodes", type=positive_int, default=DEFAULT_SETTING.scan_nodes,
                        help="nodes of the MultiPV search over all legal moves (default "
                        f"{DEFAULT_SETTING.scan_nodes})")
    add_out_arg(parser)
    return parser


def _setting(args: argparse.Namespace) -> EvalSetting:
    return EvalSetting(args.best_nodes, args.scan_nodes)


def spec(args: argparse.Namespace) -> StepSpec:
    """Inputs, outputs and parameters of this run."""
    return StepSpec(
        name=NAME, version=VERSION,
        inputs=(str(args.out / "positions.csv"), str(args.out / "puzzles.csv"),
                find_stockfish(args.stockfish)),
        outputs=(args.questions,), params={"setting": _setting(args).label},
    )


def _read(path: Path, step: str) -> list[dict[str, str]]:
    if not path.is_file():
        raise DataError(f"{path} does not exist: run step {step} first")
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def run(args: argparse.Namespace) -> None:
    """Evaluate (resuming from the checkpoint) and write questions.csv."""
    games = _read(args.out / "positions.csv", "03")
    puzzles = _read(args.out / "puzzles.csv", "05")
    setting = _setting(args)
    path = find_stockfish(args.stockfish)
    store = JsonStore(args.out / "evals.db", "evals")
    prefix = f"{sha256_file(Path(path))[:16]}|{setting.label}|"
    fens = sorted({row["fen"] for row in games + puzzles})
    expected = {fen: store.get(prefix + fen) for fen in fens}
    todo = [fen for fen in fens if expected[fen] is None]
    log.info("%d positions: %d already evaluated, %d to go", len(fens), len(fens) - len(todo),
             len(todo))

    def evaluate(engine: Engine, fen: str) -> str:
        return to_json(evaluate_moves(engine, chess.Board(fen), setting))

    with EnginePool(EngineSettings(path=path), args.workers) as pool:
        engine_name = pool.name
        try:
            with tqdm(total=len(todo), unit="pos", desc="evaluate", disable=None) as bar:
                for fen, moves in pool.as_completed(evaluate, todo):
                    store.put(prefix + fen, moves)
                    store.commit()  # one position at a time: a crash loses only what ran
                    expected[fen] = moves
                    bar.update()
        finally:
            store.close()
    rows = [game_question(r, expected[r["fen"]], engine_name, setting.nodes) for r in games]
    rows += [puzzle_question(r, expected[r["fen"]], engine_name, setting.nodes)
             for r in puzzles]
    write_csv(args.questions, COLUMNS, rows)
    report = {"positions": len(fens), "evaluated_now": len(todo),
              "reused": len(fens) - len(todo), "engine": engine_name, "setting": setting.label}
    with atomic_write(args.out / "evaluation_report.json") as handle:
        json.dump(report, handle, indent=2)
    log.info("wrote %s: %d questions (%d evaluated now, %d from the checkpoint)",
             args.questions, len(rows), len(todo), len(fens) - len(todo))


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    return step_main(build_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
