"""Game phase of a position, by the seed's heuristic."""

from __future__ import annotations

import chess

# Material in pawn units; kings are not counted.
MATERIAL = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
OPENING_MAX_PLY = 20  # opening: at most this many plies played
OPENING_MIN_MATERIAL = 26  # ... and at least this much material on the board
ENDGAME_MAX_MATERIAL = 14  # endgame: at most this much material on the board


def material(board: chess.Board) -> int:
    """Non-king material of both sides together, in pawn units (P1 N3 B3 R5 Q9)."""
    return sum(
        value * chess.popcount(board.pieces_mask(piece, color))
        for piece, value in MATERIAL.items()
        for color in chess.COLORS
    )


def phase(board: chess.Board, ply: int) -> str:
    """Opening, Middlegame or Endgame; `ply` is the number of half-moves played so far.

    Opening needs both queens on the board ("queens present").
    """
    total = material(board)
    if total <= ENDGAME_MAX_MATERIAL:
        return "Endgame"
    both_queens = all(board.pieces_mask(chess.QUEEN, color) for color in chess.COLORS)
    if ply <= OPENING_MAX_PLY and both_queens and total >= OPENING_MIN_MATERIAL:
        return "Opening"
    return "Middlegame"
