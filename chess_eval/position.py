"""Board rules of the test set: canonical FEN, ids, split bucket and eligibility."""

from __future__ import annotations

import hashlib

import chess

# Salt of pos_id. Changing it renames every position, so it is part of the data format.
POS_ID_SALT = "chess-eval-v1:"
# Positions whose halfmove clock reaches this are dropped (50-move-rule artefacts).
MAX_HALFMOVE_CLOCK = 80
INITIAL_FEN4 = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
# hash_bucket below this value marks a position as private (hidden split).
PRIVATE_BUCKETS = 20


def fen4(board: chess.Board) -> str:
    """First four FEN fields, with en passant kept only when an en passant capture is legal."""
    return " ".join(board.fen(en_passant="legal").split(" ")[:4])


def pos_id(fen4_str: str, salt: str = POS_ID_SALT) -> str:
    """SHA-256 of SALT || fen4, hex: the position's identity for deduplication."""
    return hashlib.sha256((salt + fen4_str).encode()).hexdigest()


def hash_bucket(fen4_str: str) -> int:
    """int(SHA256(fen4)[:8], 16) % 100: the public/private split bucket."""
    return int(hashlib.sha256(fen4_str.encode()).hexdigest()[:8], 16) % 100


def is_private(bucket: int) -> bool:
    """Whether a hash bucket belongs to the hidden split."""
    return bucket < PRIVATE_BUCKETS


def is_initial(board: chess.Board) -> bool:
    """The standard starting position (by fen4: also when reached again by knight moves)."""
    return fen4(board) == INITIAL_FEN4


def is_eligible(board: chess.Board) -> bool:
    """Legal, not terminal (at least one legal move), halfmove clock below 80, and not the
    initial position (every model knows its answer)."""
    if board.halfmove_clock >= MAX_HALFMOVE_CLOCK or is_initial(board):
        return False
    if not board.is_valid():
        return False
    return any(board.generate_legal_moves())


def castling_rights(board: chess.Board) -> str:
    """Castling field of the FEN ('-' when none)."""
    return board.castling_xfen() if board.castling_rights else "-"


def side_name(color: chess.Color) -> str:
    """'White' or 'Black'."""
    return "White" if color == chess.WHITE else "Black"


def mirror_move(move: chess.Move) -> chess.Move:
    """The move on the colour-flipped board (`Board.mirror()`): ranks reflected, same files,
    promotion kept; castling (king to its g/c square) maps onto the other side's castling."""
    return chess.Move(chess.square_mirror(move.from_square), chess.square_mirror(move.to_square),
                      move.promotion)
