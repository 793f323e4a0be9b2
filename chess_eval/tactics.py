"""Tactical / quiet labeling of a position from a light MultiPV engine probe."""

from __future__ import annotations

import chess

from chess_eval.engine import score_to_cp
from chess_eval.records import Probe
from chess_eval.see import see

TACTICAL = "Tactical"
QUIET = "Quiet"
TYPES = (TACTICAL, QUIET)

GOOD_MOVE_MARGIN = 50  # a move is "good" when within this many cp of the best
TACTICAL_GAP = {"Opening": 100, "Middlegame": 100, "Endgame": 60}  # gap at least this: tactical
QUIET_GAP = {"Opening": 30, "Middlegame": 30, "Endgame": 20}  # quiet needs gap at most this
TACTICAL_SEE = 100  # a check or capture as PV1 winning this much by SEE is tactical
TACTICAL_MAX_GOOD = 2  # at most this many good moves: tactical
QUIET_MIN_GOOD = 3  # quiet needs at least this many good moves


def gap(probe: Probe) -> int | None:
    """eval(top1) - eval(top2) in cp from the side to move; None with a single legal move."""
    if len(probe.lines) < 2:
        return None
    return score_to_cp(probe.lines[0].score) - score_to_cp(probe.lines[1].score)


def good_move_count(probe: Probe) -> int:
    """Number of probed moves within GOOD_MOVE_MARGIN cp of the best."""
    best = score_to_cp(probe.lines[0].score)
    return sum(1 for line in probe.lines if best - score_to_cp(line.score) <= GOOD_MOVE_MARGIN)


def is_mate_line(probe: Probe) -> bool:
    """Whether PV1 is a forced mate for the side to move."""
    mate = probe.lines[0].score.mate()
    return mate is not None and mate > 0


def label(board: chess.Board, probe: Probe, phase_name: str) -> str | None:
    """Tactical, Quiet, or None when the position is neither (ambiguous, not selected)."""
    best = probe.lines[0].move
    forcing = board.is_capture(best) or board.gives_check(best)
    the_gap = gap(probe)
    good = good_move_count(probe)
    if (
        is_mate_line(probe)
        or (the_gap is None or the_gap >= TACTICAL_GAP[phase_name])
        or (forcing and see(board, best) >= TACTICAL_SEE)
        or good <= TACTICAL_MAX_GOOD
    ):
        return TACTICAL
    if the_gap <= QUIET_GAP[phase_name] and not forcing and good >= QUIET_MIN_GOOD:
        return QUIET
    return None


def _wins_material(board: chess.Board) -> bool:
    """Whether the side to move has a capture that wins material by SEE."""
    return any(see(board, move) > 0 for move in board.generate_pseudo_legal_captures())


def is_calm(board: chess.Board) -> bool:
    """Cheap static guess that a position is quiet: no check and nothing en prise either way.

    Used only to decide which ply of a game is worth an engine probe; the label itself
    always comes from `label`.
    """
    if board.is_check() or _wins_material(board):
        return False
    board.push(chess.Move.null())
    try:
        return not _wins_material(board)
    finally:
        board.pop()
