"""The world-model tests: self-consistency, mirror symmetry and temperature, on questions.

- Self-consistency: prompt A asks for every legal move; prompt B, a new request, asks for
  the best move from the list A gave. A's claims are read as moves on the board (UCI, SAN or
  long algebraic); a claim that is no legal move is kept as its text, so B can still be
  "in A's list" while illegal.
- Symmetry: the position and its colour-flipped mirror (`Board.mirror()`: ranks reflected,
  colours and side to move swapped, castling rights and en passant carried over). The
  mirror's move evaluations are the original's, mirrored, so both answers are graded on
  one evaluation.
- Temperature: the same single-move prompt at several temperatures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import chess

from chess_eval.benchmark.core.prompts import INSTRUCTION
from chess_eval.benchmark.question import answers
from chess_eval.benchmark.question.questions import Question
from chess_eval.position import mirror_move

LIST_TEMPLATE = "legal-list@1"
CHOOSE_TEMPLATE = "choose-from@1"
MOVE_TEMPLATE = "fen@1"  # the single-move prompt of the static run
MIRROR = "~mirror"  # suffix of a mirrored question's id
LIST_MARKER = re.compile(r"(?i)\blegal\s+moves\s*:")


def _side(board: chess.Board) -> str:
    return "White" if board.turn == chess.WHITE else "Black"


def list_prompt(q: Question) -> str:
    """Template legal-list@1: the FEN; list every legal move."""
    board = q.board()
    return (f"Chess position (FEN): {q.fen}\n{_side(board)} to move.\nList every legal move "
            "of the side to move, in UCI (e.g. e2e4, e7e8q, e1g1 for castling), separated "
            "by spaces, on the last line as: Legal moves: <move> <move> ...")


def choose_prompt(q: Question, claimed: tuple[str, ...]) -> str:
    """Template choose-from@1: the FEN and the model's own list; choose the best of it."""
    board = q.board()
    return (f"Chess position (FEN): {q.fen}\n{_side(board)} to move.\nYou listed these "
            f"legal moves: {' '.join(claimed)}\nChoose the best move from that list.\n"
            f"{INSTRUCTION}")


@dataclass(frozen=True)
class Listed:
    """What prompt A's answer claimed."""

    claimed: tuple[str, ...]  # distinct claims in order: UCI when legal, else the text
    legal: frozenset[str]  # the claims that are legal moves (UCI)
    truth: frozenset[str]  # the position's legal moves (UCI)

    @property
    def exact(self) -> bool:
        """The list is exactly the legal moves."""
        return self.legal == self.truth and len(self.claimed) == len(self.truth)


def parse_list(answer: str, board: chess.Board) -> Listed:
    """Prompt A's answer read as claimed moves: after the last 'Legal moves:' marker when
    there is one, else anywhere in the answer (reasoning blocks dropped)."""
    text = answers.without_echo(answer, None)
    marks = list(LIST_MARKER.finditer(text))
    if marks:
        text = text[marks[-1].end():]
    claims: dict[str, None] = {}
    legal = set()
    for token in answers.MOVE_RE.findall(text):
        parsed = answers.classify(token.rstrip("+#!?"), board)
        claim = parsed.move.uci() if parsed.move else token
        claims[claim] = None
        if parsed.move:
            legal.add(claim)
    truth = frozenset(m.uci() for m in board.legal_moves)
    return Listed(tuple(claims), frozenset(legal), truth)


def chosen_claim(move: chess.Move | None, text: str | None) -> str | None:
    """B's answer as a claim comparable with A's: UCI when legal, else its text."""
    return move.uci() if move is not None else text


def mirrored(q: Question) -> Question:
    """The colour-flipped question: mirrored board, evaluations and solution."""
    board = q.board().mirror()

    def flip(uci: str) -> str:
        return mirror_move(chess.Move.from_uci(uci)).uci()
    color = {"White": "Black", "Black": "White"}.get(q.color, q.color)
    return replace(q, id=q.id + MIRROR, fen=board.fen(), color=color, history="",
                   played_move="", expected={flip(u): cp for u, cp in q.expected.items()},
                   solution=" ".join(flip(u) for u in q.solution.split()))
