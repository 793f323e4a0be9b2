"""Phase heuristic: opening, middlegame and endgame boundaries on real and built positions."""

import chess

from chess_eval.phase import material, phase


def test_start_position_is_opening_until_ply_20() -> None:
    board = chess.Board()
    assert material(board) == 78
    assert phase(board, 0) == "Opening"
    assert phase(board, 20) == "Opening"
    assert phase(board, 21) == "Middlegame"


def test_opening_needs_both_queens() -> None:
    board = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNB1KBNR w KQkq - 0 5")
    assert phase(board, 8) == "Middlegame"


def test_opening_needs_26_points_of_material() -> None:
    board = chess.Board("3qk3/pppp4/8/8/8/8/PPPP4/3QK3 w - - 0 1")
    assert material(board) == 26
    assert phase(board, 10) == "Opening"
    fewer = chess.Board("3qk3/ppp5/8/8/8/8/PPPP4/3QK3 w - - 0 1")
    assert material(fewer) == 25
    assert phase(fewer, 10) == "Middlegame"


def test_endgame_at_14_points_or_less() -> None:
    at_14 = chess.Board("4k3/pp2r3/8/8/8/8/PP2R3/4K3 w - - 0 40")
    assert material(at_14) == 14
    assert phase(at_14, 80) == "Endgame"
    at_15 = chess.Board("4k3/ppp1r3/8/8/8/8/PP2R3/4K3 w - - 0 40")
    assert material(at_15) == 15
    assert phase(at_15, 80) == "Middlegame"
