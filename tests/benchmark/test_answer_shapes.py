"""Real answer shapes, table-driven: what the model committed to, and nothing else."""

import csv

import chess
import pytest

from chess_eval.benchmark.core.prompts import fen_board, fen_only
from chess_eval.benchmark.question.answers import Category, parse
from chess_eval.benchmark.question.questions import question_of
from tests.conftest import ROOT

START = chess.Board()
# Real endgame of the committed set (g-70308b0c27466f04): White pawns on a5, e5 and h2 only.
ENDGAME = chess.Board("8/5p2/k7/P3P1p1/1K5p/8/4b2P/8 w - - 0 48")
CASTLE = chess.Board("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")

SHAPES = [
    # (board, answer, truncated, expected UCI move or category)
    (START, "Final answer: Nf3\n\nAfter this, White can move d4.", False, "g1f3"),
    (START, "Final answer: e4\nThis lets Black play Nf6 later.", False, "e2e4"),
    (START, "I like d4.\nFinal answer: e4\nLater: Final answer: d4", False, "e2e4"),
    (START, "**Final Answer:** **c4**", False, "c2c4"),
    (START, "Final answer:\n\n1. e4", False, "e2e4"),
    (START, '{"move": "Nf3"}', False, "g1f3"),
    (START, 'Move: d4 looks fine, but {"move": "e2e4", "why": "centre"}', False, "e2e4"),
    (START, 'Final answer: c4 {"move": "e4"}', False, "c2c4"),
    (START, "move h2h", False, Category.FORMAT),
    (START, "e2-e4", False, "e2e4"),
    (START, "Final answer: Ng1-f3", False, "g1f3"),
    (START, "Final answer: Ng1\u2013f3", False, "g1f3"),
    (START, "Final answer: Bg1-f3", False, Category.STATE),
    (START, "Knight to f3", False, "g1f3"),
    (START, "N f3", False, "g1f3"),
    (START, "Final answer: knight from b1 to c3", False, "b1c3"),
    (START, "Final answer: pawn to e4", False, "e2e4"),
    (START, "display e4", False, Category.FORMAT),
    (START, "<h3>Analysis</h3>\nThe centre matters.\n</h3>", False, Category.FORMAT),
    (START, "<p>Final answer: <b>Nc3</b></p>", False, "b1c3"),
    (START, "\u2658f3", False, "g1f3"),
    (START, "Nf3\n\nThis develops a piece and controls e5.", False, "g1f3"),
    (START, "The best move is d4.", False, "d2d4"),
    (START, "I play c4", False, "c2c4"),
    (START, "For example e4 is popular, e.g. d4 too.", False, Category.FORMAT),
    (START, "Let me think about e4, d4 and Nf3 in turn. First, e4 opens", True, Category.TRUNCATED),
    (START, "Final answer: d4\nReason: it takes the centre and", True, "d2d4"),
    (CASTLE, "castles kingside", False, "e1g1"),
    (CASTLE, "Final answer: 0-0", False, "e1g1"),
    (ENDGAME, "Final answer: f3", False, Category.STATE),
    (ENDGAME, "Final answer: a6", False, Category.RULE),
    (ENDGAME, "Final answer: e6", False, "e5e6"),
    (ENDGAME, "Final answer: Kc5", False, "b4c5"),
    (ENDGAME, "Final answer: Nc3", False, Category.STATE),
]


@pytest.mark.parametrize(("board", "answer", "truncated", "expected"), SHAPES)
def test_answer_shapes(board: chess.Board, answer: str, truncated: bool, expected: str) -> None:
    parsed = parse(answer, board, truncated=truncated)
    got = parsed.move.uci() if parsed.move else parsed.category
    assert got == expected, parsed


@pytest.fixture(scope="module")
def question():
    """The first row of the committed questions.csv."""
    with open(ROOT / "questions.csv", newline="", encoding="utf-8") as handle:
        return question_of(next(csv.DictReader(handle)))


@pytest.mark.parametrize("render", [fen_only, fen_board])
def test_an_echoed_prompt_is_never_the_answer(question, render) -> None:
    prompt = render(question)
    board = chess.Board(question.fen)
    assert parse(prompt, board, prompt).category == Category.FORMAT
    assert parse(prompt + "\n" + prompt, board, prompt).category == Category.FORMAT
    # An echo cut by the token limit, mid-line, after the example "e2e4".
    cut = prompt[: prompt.index("e2e4") + 6]
    assert parse(cut, board, prompt, truncated=True).category == Category.TRUNCATED
    assert parse(cut, board, prompt).category == Category.FORMAT
    legal = sorted(m.uci() for m in board.legal_moves)[0]
    answer = f"{prompt}\nFinal answer: {legal}"
    assert parse(answer, board, prompt).move == chess.Move.from_uci(legal)


def test_ambiguous_stays_ambiguous() -> None:
    board = chess.Board("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 0 1")
    board.remove_piece_at(chess.D2)
    assert parse("Final answer: Nd2", board).category == Category.AMBIGUOUS
