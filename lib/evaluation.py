"""Evaluation of every legal move of a position, reproducibly and at a bounded cost.

The default setting spends its node budget where grading needs precision: one MultiPV
search over all legal moves ranks them (a shallow scan), then the best few are searched
again together with a larger budget. Node limits, one thread, a fixed hash and a cleared
hash before each search make the result the same on every run and machine speed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import chess
import chess.engine

from lib.engine import Engine, score_to_cp


@dataclass(frozen=True)
class EvalSetting:
    """How every legal move of a position is evaluated."""

    scan_nodes: int  # node budget of the MultiPV search over all legal moves
    refine_top: int  # then this many of the best moves are searched again together ...
    refine_nodes: int  # ... with this node budget (0 = no refinement)

    @property
    def label(self) -> str:
        """Short text naming the setting, recorded with every evaluation."""
        return f"scan{self.scan_nodes}+top{self.refine_top}x{self.refine_nodes}"

    @property
    def nodes(self) -> int:
        """Upper bound of nodes searched per position."""
        return self.scan_nodes + (self.refine_nodes if self.refine_top else 0)


DEFAULT_SETTING = EvalSetting(scan_nodes=150_000, refine_top=4, refine_nodes=150_000)


def _scores(infos: list[chess.engine.InfoDict]) -> dict[chess.Move, chess.engine.Score]:
    return {info["pv"][0]: info["score"].relative for info in infos if info.get("pv")}


def evaluate_moves(engine: Engine, board: chess.Board,
                   setting: EvalSetting = DEFAULT_SETTING) -> list[tuple[chess.Move, int]]:
    """Every legal move with its cp score for the side to move, best first (ties by UCI)."""
    legal = list(board.legal_moves)
    if not legal:
        return []
    infos = engine.analyse(board, chess.engine.Limit(nodes=setting.scan_nodes), len(legal))
    scores = _scores(infos)
    missing = [m for m in legal if m not in scores]
    if missing:
        # Stockfish can stop before reporting every line; search the rest on their own.
        extra = engine.analyse(board, chess.engine.Limit(nodes=setting.scan_nodes),
                               len(missing), root_moves=missing)
        scores.update(_scores(extra))
    ranked = sorted(legal, key=lambda m: (-score_to_cp(scores[m]), m.uci()))
    top = ranked[: setting.refine_top]
    if setting.refine_nodes and len(top) > 0:
        refined = engine.analyse(board, chess.engine.Limit(nodes=setting.refine_nodes),
                                 len(top), root_moves=top)
        scores.update(_scores(refined))
    cps = {m: score_to_cp(scores[m]) for m in legal}
    return sorted(((m, cps[m]) for m in legal), key=lambda mc: (-mc[1], mc[0].uci()))


def to_json(moves: list[tuple[chess.Move, int]]) -> str:
    """The expected_output format: a JSON list of [uci, cp] pairs, best first."""
    return json.dumps([[m.uci(), cp] for m, cp in moves], separators=(",", ":"))


def from_json(text: str) -> list[tuple[str, int]]:
    """Parse an expected_output cell."""
    return [(uci, int(cp)) for uci, cp in json.loads(text)]
