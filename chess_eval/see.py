"""Static exchange evaluation (SEE) of a move, in centipawns."""

from __future__ import annotations

import chess

# Piece values of the exchange; the king is worth more than anything it could win.
SEE_VALUES = {
    chess.PAWN: 100,
    chess.KNIGHT: 300,
    chess.BISHOP: 300,
    chess.ROOK: 500,
    chess.QUEEN: 900,
    chess.KING: 20000,
}


def _least_valuable(board: chess.Board, attackers: int) -> tuple[int, int]:
    """Square and value of the cheapest piece among `attackers` (a non-empty mask)."""
    for piece_type in (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING):
        mask = attackers & (
            board.pieces_mask(piece_type, chess.WHITE) | board.pieces_mask(piece_type, chess.BLACK))
        if mask:
            return chess.lsb(mask), SEE_VALUES[piece_type]
    raise ValueError("empty attacker set")


def see(board: chess.Board, move: chess.Move) -> int:
    """Material the mover gains by `move` if both sides then recapture on its square optimally.

    The swap list algorithm: x-rays are found by recomputing attackers on the shrinking
    occupancy; pins are ignored, as in most engines. A non-capture scores 0 or less.
    """
    to_sq = move.to_square
    mover = board.piece_at(move.from_square)
    if mover is None:
        raise ValueError(f"no piece on {chess.square_name(move.from_square)}")
    occupied = board.occupied & ~chess.BB_SQUARES[move.from_square]
    if board.is_en_passant(move):
        captured_value = SEE_VALUES[chess.PAWN]
        occupied &= ~chess.BB_SQUARES[to_sq ^ 8]
    else:
        victim = board.piece_at(to_sq)
        captured_value = SEE_VALUES[victim.piece_type] if victim else 0
    on_square = SEE_VALUES[mover.piece_type]
    if move.promotion:
        captured_value += SEE_VALUES[move.promotion] - SEE_VALUES[chess.PAWN]
        on_square = SEE_VALUES[move.promotion]
    gains = [captured_value]
    side = not mover.color
    while True:
        attackers = board.attackers_mask(side, to_sq, occupied) & occupied
        if not attackers:
            break
        square, value = _least_valuable(board, attackers)
        if value == SEE_VALUES[chess.KING]:
            # The king may only take last: not while the other side still defends the square.
            rest = occupied & ~chess.BB_SQUARES[square]
            if board.attackers_mask(not side, to_sq, rest) & rest:
                break
        gains.append(on_square - gains[-1])
        on_square = value
        occupied &= ~chess.BB_SQUARES[square]
        side = not side
    # Each side may stop capturing when continuing would lose: negamax back up the list.
    for i in range(len(gains) - 1, 0, -1):
        gains[i - 1] = -max(-gains[i - 1], gains[i])
    return gains[0]
