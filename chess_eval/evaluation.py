"""Evaluation of every legal move of a position, reproducibly, spending nodes where grades turn.

Grades turn on 10/30/60/100 cp of loss, so the moves near the top need accurate scores and
hopeless moves only a rank. One MultiPV search over all legal moves (the scan) ranks them
cheaply; a second MultiPV search, over the moves the scan puts within `near_margin` cp of
its best only (`root_moves`), scores those with more depth per line. The candidates, the
moves within `margin` cp of the best so far (at most `max_candidates`, in that order), are
then each searched on their own (`root_moves=[move]`); a move left out whose coarser score
still reaches a candidate's own score is searched alone too, so no coarse score can claim or
share the top, and moves still tied at the top are searched alone again from a cleared hash
at a larger budget. Each move reports the score of the most accurate search that scored it,
and no score is ever capped: a tie means two searches returned the same number.

All searches of a position run in one fixed order inside one `Engine.run` and share a hash
cleared at the start, with node limits and one thread: the result is the same on every run
and machine speed, and a crash or stall redoes the whole position on a fresh engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import chess
import chess.engine

from chess_eval.engine import Engine, score_to_cp


@dataclass(frozen=True)
class EvalSetting:
    """How every legal move of a position is evaluated."""

    scan_nodes: int  # nodes of the MultiPV search over all legal moves that ranks them
    move_nodes: int  # nodes of each candidate's own search (root_moves=[move]); 0: none
    margin: int  # cp: moves the scan puts within this of its best are candidates
    max_candidates: int  # at most this many candidates (before the no-shallow-top rule)
    near_nodes: int = 0  # nodes of a MultiPV search over the moves near the top; 0: none
    near_margin: int = 300  # cp: moves the scan puts within this of its best are "near"

    @property
    def label(self) -> str:
        """Short text naming the setting."""
        near = f"+near{self.near_nodes}@{self.near_margin}cp" if self.near_nodes else ""
        return (f"scan{self.scan_nodes}{near}+move{self.move_nodes}"
                f"x{self.max_candidates}@{self.margin}cp")


# Chosen with bench/eval_quality.py (README): a cheap scan, a MultiPV search over the moves
# within 300 cp (the ones grading tells apart), the top two alone.
DEFAULT_SETTING = EvalSetting(scan_nodes=60_000, move_nodes=100_000, margin=20,
                              max_candidates=2, near_nodes=900_000, near_margin=300)


TIE_FACTOR = 2  # a tie at the top is re-searched at this multiple of the move budget


@dataclass(frozen=True)
class Evaluation:
    """Every legal move of a position with its cp score, and what the evaluation cost."""

    moves: list[tuple[chess.Move, int]]  # best first, cp from the side to move
    alone: tuple[chess.Move, ...]  # the moves searched on their own, in search order
    nodes: int  # node budget of the searches that ran (each may stop a little short of it)


def _scores(infos: list[chess.engine.InfoDict]) -> dict[chess.Move, int]:
    return {info["pv"][0]: score_to_cp(info["score"].relative)
            for info in infos if info.get("pv") and "score" in info}


def _scan(engine: Engine, board: chess.Board, legal: list[chess.Move],
          nodes: int) -> tuple[dict[chess.Move, int], int]:
    """Scores of every legal move from one MultiPV search (the hash is cleared first), and
    the node budget spent."""
    limit = chess.engine.Limit(nodes=nodes)
    scores = _scores(engine.analyse(board, limit, len(legal)))
    missing = [m for m in legal if m not in scores]
    if missing:
        # Stockfish can stop before reporting every line; search the rest on their own.
        scores.update(_scores(engine.analyse(board, limit, len(missing), root_moves=missing,
                                             new_game=False)))
    return scores, nodes * (2 if missing else 1)


def _alone(engine: Engine, board: chess.Board, move: chess.Move, nodes: int) -> int:
    limit = chess.engine.Limit(nodes=nodes)
    infos = engine.analyse(board, limit, 1, root_moves=[move], new_game=False)
    return _scores(infos)[move]


def _break_top_tie(engine: Engine, board: chess.Board, scores: dict[chess.Move, int],
                   order: list[chess.Move], deep: dict[chess.Move, int],
                   setting: EvalSetting) -> int:
    """Moves tied at the top are searched again alone, each from a cleared hash (a shared
    hash makes later searches reuse earlier values), at TIE_FACTOR times the move budget.
    Updates `scores` and `deep`; returns the nodes spent."""
    if not setting.move_nodes or len(scores) < 2:
        return 0
    best = max(scores.values())
    tied = [m for m in order if scores[m] == best]
    if len(tied) < 2:
        return 0
    nodes = setting.move_nodes * TIE_FACTOR
    for move in tied:
        limit = chess.engine.Limit(nodes=nodes)
        infos = engine.analyse(board, limit, 1, root_moves=[move], new_game=True)
        scores[move] = deep[move] = _scores(infos)[move]
    return nodes * len(tied)


def _evaluate(engine: Engine, board: chess.Board, setting: EvalSetting) -> Evaluation:
    legal = list(board.legal_moves)
    scan, nodes = _scan(engine, board, legal, setting.scan_nodes)
    order = sorted(legal, key=lambda m: (-scan[m], m.uci()))
    if setting.near_nodes:
        near = [m for m in order if scan[order[0]] - scan[m] <= setting.near_margin]
        if len(near) > 1:
            nodes += setting.near_nodes
            limit = chess.engine.Limit(nodes=setting.near_nodes)
            scan.update(_scores(engine.analyse(board, limit, len(near), root_moves=near,
                                               new_game=False)))
            order = sorted(legal, key=lambda m: (-scan[m], m.uci()))
    deep: dict[chess.Move, int] = {}
    if setting.move_nodes and len(legal) > 1:
        top = scan[order[0]]
        for move in order:
            within = len(deep) < setting.max_candidates and top - scan[move] <= setting.margin
            # Past the candidates, a move whose coarser score still reaches the best score
            # searched alone is searched alone too: no coarse score may claim or share the top.
            if not within and (not deep or scan[move] < max(deep.values())):
                break
            deep[move] = _alone(engine, board, move, setting.move_nodes)
    scores = {**scan, **deep}
    extra = _break_top_tie(engine, board, scores, order, deep, setting)
    rank = {move: i for i, move in enumerate(order)}
    # Best first; among equal scores the more accurate search, then the scan's order.
    moves = sorted(((m, scores[m]) for m in legal),
                   key=lambda mc: (-mc[1], mc[0] not in deep, rank[mc[0]]))
    nodes += setting.move_nodes * len(deep) + extra
    return Evaluation(moves=moves, alone=tuple(deep), nodes=nodes)


def evaluate_position(engine: Engine, board: chess.Board,
                      setting: EvalSetting = DEFAULT_SETTING) -> Evaluation:
    """Every legal move scored (see the module's docstring); a crash redoes the position."""
    if not any(board.legal_moves):
        return Evaluation(moves=[], alone=(), nodes=0)
    return engine.run(board, lambda e: _evaluate(e, board, setting))


def evaluate_moves(engine: Engine, board: chess.Board,
                   setting: EvalSetting = DEFAULT_SETTING) -> list[tuple[chess.Move, int]]:
    """Every legal move with its cp score for the side to move, best first."""
    return evaluate_position(engine, board, setting).moves


def to_json(moves: list[tuple[chess.Move, int]]) -> str:
    """The expected_output format: a JSON list of [uci, cp] pairs, best first."""
    return json.dumps([[m.uci(), cp] for m, cp in moves], separators=(",", ":"))


def from_json(text: str) -> list[tuple[str, int]]:
    """Parse an expected_output cell."""
    return [(uci, int(cp)) for uci, cp in json.loads(text)]
