"""Named, versioned prompt templates. The version is part of the response-cache key."""

from __future__ import annotations

import chess

from chess_eval.benchmark.players import protocols
from chess_eval.benchmark.question.questions import Question

INSTRUCTION = (
    "Reply with the single best move for the side to move, in UCI (e.g. e2e4) or SAN (e.g. "
    "Nf3), on the last line as: Final answer: <move>"
)


def _side(board: chess.Board) -> str:
    return "White" if board.turn == chess.WHITE else "Black"


def fen_only(q: Question) -> str:
    """Template fen@1: the FEN and the side to move."""
    board = chess.Board(q.fen)
    return f"Chess position (FEN): {q.fen}\n{_side(board)} to move.\n{INSTRUCTION}"


def fen_board(q: Question) -> str:
    """Template fen-board@1: the FEN plus an ASCII board (White at the bottom)."""
    board = chess.Board(q.fen)
    return (f"Chess position (FEN): {q.fen}\n\nBoard (uppercase White, lowercase Black, "
            f"rank 8 at the top):\n{board}\n\n{_side(board)} to move.\n{INSTRUCTION}")


def fen_history(q: Question) -> str:
    """Template fen-history@1: for game positions, the moves so far in SAN, then the FEN."""
    board = chess.Board(q.fen)
    if not q.history:
        return fen_only(q)
    moves = q.history.split()
    numbered = " ".join(
        (f"{i // 2 + 1}. " if i % 2 == 0 else "") + san for i, san in enumerate(moves))
    return (f"A chess game so far (SAN, from the initial position): {numbered}\n"
            f"Current position (FEN): {q.fen}\n{_side(board)} to move.\n{INSTRUCTION}")


def blind(q: Question) -> str:
    """Template blind@1 (the blind protocol): a game position's moves from the start in SAN,
    with no FEN and no board."""
    board = chess.Board(q.fen)
    moves = protocols.moves_line(q.history.split(), chess.STARTING_FEN, "the initial position")
    return protocols.blind_prompt(board, moves, False, False, None)


def pgn(q: Question) -> str:
    """Template pgn@1 (the pgn protocol): PGN with rating headers to complete; a game
    position's moves from the start, a puzzle's FEN as the PGN's set-up position."""
    board = chess.Board(q.fen)
    if q.history:
        return protocols.pgn_prompt(board, q.history.split(), chess.STARTING_FEN, False)
    return protocols.pgn_prompt(board, [], q.fen, False)


TEMPLATES = {"fen@1": fen_only, "fen-board@1": fen_board, "fen-history@1": fen_history,
             "blind@1": blind, "pgn@1": pgn}
ALIASES = {"fen": "fen@1", "fen-board": "fen-board@1", "fen-history": "fen-history@1"}


def template_name(name: str) -> str:
    """The versioned name of a template given by name or alias."""
    full = ALIASES.get(name, name)
    if full not in TEMPLATES:
        raise KeyError(name)
    return full
