"""Reading a model's answer: the committed move, and the illegal-move taxonomy."""

import chess
import pytest

from chess_eval.benchmark.question.answers import Category, extract, parse

START = chess.Board()
# A real middlegame (Italian game after 4...Bc5 5.O-O d6 6.c3 O-O).
ITALIAN = chess.Board("r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2PP1N2/PP3PPP/RNBQ1RK1 w - - 1 7")


@pytest.mark.parametrize(("answer", "uci"), [
    ("e2e4", "e2e4"),
    ("Nf3", "g1f3"),
    ("**Nf3**", "g1f3"),
    ("```\nd2d4\n```", "d2d4"),
    ("Move: Nc3", "b1c3"),
    ("1. e4!", "e2e4"),
    ("I considered e4 and d4. After thinking, e4 loses time.\nFinal answer: d4", "d2d4"),
    ("<think>Nf3 looks natural, or maybe c4</think>\nFinal answer: c4", "c2c4"),
    ("The best move is Nf3. Final Answer: **e4**", "e2e4"),
])
def test_committed_move_is_found(answer: str, uci: str) -> None:
    parsed = parse(answer, START)
    assert parsed.category is None and parsed.move == chess.Move.from_uci(uci)


def test_last_token_of_reasoning_is_not_taken_over_the_marker() -> None:
    text = "Answer: Bg5\nThis pins the knight; if ...h6 then Bh4 keeps it, or Bxf6."
    assert extract(text) == ("Bg5", "marker")
    assert parse(text, ITALIAN).move == chess.Move.from_uci("c1g5")


@pytest.mark.parametrize("text", ["O-O", "0-0", "o-o"])
def test_castling_spellings(text: str) -> None:
    board = chess.Board("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    assert parse(text, board).move == chess.Move.from_uci("e1g1")


def test_promotion_spellings() -> None:
    board = chess.Board("8/4P1k1/8/8/8/8/6K1/8 w - - 0 1")
    for text in ("e8=Q", "e8Q", "e7e8q", "Final answer: e8=Q+"):
        assert parse(text, board).move == chess.Move.from_uci("e7e8q"), text
    assert parse("e7e8", board).category == Category.FORMAT
    assert parse("e8", board).category == Category.FORMAT


@pytest.mark.parametrize(("answer", "category", "detail"), [
    ("I cannot tell.", Category.FORMAT, "no move found"),
    ("Final answer: Zx9", Category.FORMAT, "no move found"),
    ("Nd2", Category.AMBIGUOUS, "SAN fits several legal moves"),
    ("e3e4", Category.STATE, "no piece on the from-square"),
    ("e6e5", Category.STATE, "the opponent's piece"),
    ("Qb3", Category.RULE, "own king left in check"),
    ("Qh5", Category.RULE, "path blocked"),
    ("Nd5", Category.RULE, "the knight cannot move so"),
    ("Ra3", Category.RULE, "path blocked"),
    ("Bb4", Category.STATE, "no bishop of ours there"),
])
def test_taxonomy_on_a_real_position(answer: str, category: str, detail: str) -> None:
    # White king on e1 in check from the bishop on b4 after 1.d4 e6 2.c3?? (built): knights on
    # b1 and f3 can both reach d2.
    board = chess.Board("rnbqk1nr/pppp1ppp/4p3/8/1b1P4/5N2/PP2PPPP/RNBQKB1R w KQkq - 2 3")
    board.remove_piece_at(chess.C1)
    board.remove_piece_at(chess.F1)
    parsed = parse(answer, board)
    assert (parsed.category, parsed.detail) == (category, detail)


def test_pinned_piece_and_castling_rules() -> None:
    pinned = chess.Board("4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1")
    assert parse("Nc3", pinned).detail == "pinned piece"
    no_rights = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w kq - 0 1")
    assert parse("O-O", no_rights).detail == "castling without rights"
    through = chess.Board("r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1")
    assert (parse("O-O", through).category, parse("O-O", through).detail) == (
        Category.RULE, "castling through check")
    blocked = chess.Board()
    assert parse("O-O", blocked).detail == "castling path blocked"
    in_check = chess.Board("4k3/8/8/8/8/8/4r3/R3K2R w KQ - 0 1")
    assert parse("e1g1", in_check).detail == "castling out of check"


def test_empty_and_filtered_replies_are_not_format_errors() -> None:
    """No text, or text a content filter withheld, is its own category, not notation."""
    for text in ("", "  \n "):
        assert (parse(text, START).category, parse(text, START).detail) == (
            Category.EMPTY, "empty reply")
    filtered = parse("Final answer: Nf3", START, filtered=True)
    assert filtered.category == Category.EMPTY and filtered.move is None
    assert "content filter" in filtered.detail
