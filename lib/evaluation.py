"""Evaluation of every legal move of a position, reproducibly and at a bounded cost.

Two searches share one hash, which is cleared once per position: a single-line search picks
the best move and its score (one line gets depth for the same nodes), then one MultiPV search
over all legal moves scores the rest. The best move keeps the first search's score and no
other move may score above it. Node limits, one thread, a fixed hash and the clearing make
the result the same on every run and every machine speed.
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

    best_nodes: int  # nodes of the single-line search that picks the best move (0: none)
    scan_nodes: int  # nodes of the MultiPV search over all legal moves

    @property
    def label(self) -> str:
        """Short text naming the setting."""
        return f"best{self.best_nodes}+scan{self.scan_nodes}"

    @property
    def nodes(self) -> int:
        """Nodes searched per position (a bound: a search may stop a little early)."""
        return self.best_nodes + self.scan_nodes


DEFAULT_SETTING = EvalSetting(best_nodes=100_000, scan_nodes=200_000)


def _scores(infos: list[chess.engine.InfoDict]) -> dict[chess.Move, int]:
    return {info["pv"][0]: score_to_cp(info["score"].relative)
            for info in infos if info.get("pv") and "score" in info}


def evaluate_moves(engine: Engine, board: chess.Board,
                   setting: EvalSetting = DEFAULT_SETTING) -> list[tuple[chess.Move, int]]:
    """Every legal move with its cp score for the side to move, best first."""
    legal = list(board.legal_moves)
    if not legal:
        return []
    best: tuple[chess.Move, int] | None = None
    if setting.best_nodes and len(legal) > 1:
        top = _scores(engine.analyse(board, chess.engine.Limit(nodes=setting.best_nodes), 1))
        best = next(iter(top.items()), None)
    limit = chess.engine.Limit(nodes=setting.scan_nodes)
    scores = _scores(engine.analyse(board, limit, len(legal), new_game=best is None))
    missing = [m for m in legal if m not in scores]
    if missing:
        # Stockfish can stop before reporting every line; search the rest on their own.
        scores.update(_scores(engine.analyse(board, limit, len(missing), root_moves=missing,
                                             new_game=False)))
    first = None
    if best is not None:
        first, cp = best
        scores = {m: min(s, cp) for m, s in scores.items()}
        scores[first] = cp
    # Best first; among equal scores the deeper search's choice, then UCI order.
    return sorted(((m, scores[m]) for m in legal),
                  key=lambda mc: (-mc[1], mc[0] != first, mc[0].uci()))


def to_json(moves: list[tuple[chess.Move, int]]) -> str:
    """The expected_output format: a JSON list of [uci, cp] pairs, best first."""
    return json.dumps([[m.uci(), cp] for m, cp in moves], separators=(",", ":"))


def from_json(text: str) -> list[tuple[str, int]]:
    """Parse an expected_output cell."""
    return [(uci, int(cp)) for uci, cp in json.loads(text)]
