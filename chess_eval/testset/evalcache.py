"""The checkpoint of every-legal-move evaluations (OUT/evals.db), shared by steps 05 and 06.

Step 05 evaluates the selected game positions to count those whose best move forces mate
(the mate cap is shared with the puzzles); step 06 then finds them done. Entries are keyed by
the engine binary's hash, the evaluation setting and the full FEN, and committed one
position at a time, so a crash or kill -9 loses only the positions in flight.
"""

from __future__ import annotations

import functools
from pathlib import Path

import chess
from tqdm import tqdm

from chess_eval.cluster import EngineCluster
from chess_eval.engine import Engine
from chess_eval.evaluation import EvalSetting, evaluate_position, from_json, to_json
from chess_eval.files import sha256_file
from chess_eval.grading import MATE_FLOOR
from chess_eval.kvstore import JsonStore

Evaluation = dict[str, object]  # {"expected": expected_output JSON, "nodes": node budget}
VERSION = "2"  # bump when what is stored for a key changes


class EvalCache:
    """Evaluations of full FENs at one engine and setting, computed when missing."""

    def __init__(self, path: Path, engine_path: str, setting: EvalSetting) -> None:
        self.store = JsonStore(path, "evals")
        self.setting = setting
        self.prefix = f"v{VERSION}|{sha256_file(Path(engine_path))[:16]}|{setting.label}|"

    def evaluate(self, pool: EngineCluster, fens: list[str],
                 desc: str) -> tuple[dict[str, Evaluation], int]:
        """Every FEN's evaluation and how many were computed now (the rest were cached)."""
        cached = {fen: self.store.get(self.prefix + fen) for fen in fens}
        done: dict[str, Evaluation] = {f: v for f, v in cached.items() if v is not None}
        todo = [fen for fen in fens if fen not in done]

        with tqdm(total=len(todo), unit="pos", desc=desc, disable=None) as bar:
            task = functools.partial(_evaluate, setting=self.setting)
            for fen, value in pool.as_completed(task, todo):
                self.store.put(self.prefix + fen, value)
                self.store.commit()  # one position at a time: a crash loses only what ran
                done[fen] = value
                bar.update()
        return {fen: done[fen] for fen in fens}, len(todo)

    def close(self) -> None:
        """Commit and close."""
        self.store.close()


def _evaluate(engine: Engine, fen: str, setting: EvalSetting) -> Evaluation:
    """The task a worker runs: one position's evaluation as stored in the cache."""
    result = evaluate_position(engine, chess.Board(fen), setting)
    return {"expected": to_json(result.moves), "nodes": result.nodes}


def best_forces_mate(evaluation: Evaluation) -> bool:
    """Whether the best move of an evaluated position forces mate."""
    moves = from_json(str(evaluation["expected"]))
    return bool(moves) and moves[0][1] >= MATE_FLOOR
