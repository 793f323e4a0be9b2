"""Static exchange evaluation on positions with a known outcome."""

import chess
import pytest

from chess_eval.see import see


def _see(fen: str, uci: str) -> int:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert move in board.legal_moves
    return see(board, move)


def test_undefended_pawn_wins_a_pawn() -> None:
    assert _see("4k3/8/8/4p3/8/8/8/4RK2 w - - 0 1", "e1e5") == 100


def test_pawn_takes_defended_knight() -> None:
    assert _see("4k3/8/4p3/3n4/4P3/8/8/4K3 w - - 0 1", "e4d5") == 200


def test_queen_takes_defended_pawn_loses() -> None:
    assert _see("4k3/8/3p4/4p3/8/8/8/4QK2 w - - 0 1", "e1e5") == -800


def test_rook_takes_pawn_defended_by_rook_without_backup_loses() -> None:
    assert _see("4r1k1/8/8/4p3/8/8/8/4R1K1 w - - 0 1", "e1e5") == -400


def test_xray_backup_makes_the_same_capture_win() -> None:
    # Doubled rooks: Rxe5 Rxe5 Rxe5 nets a pawn.
    assert _see("4r1k1/8/8/4p3/8/8/4R3/4R1K1 w - - 0 1", "e2e5") == 100


def test_defender_may_decline_a_losing_recapture() -> None:
    # Queen takes a knight defended only by a queen that a pawn covers: black should not
    # recapture (Qxd5 exd5? no: the pawn on e4 guards d5), so white keeps the knight.
    assert _see("3qk3/8/8/3n4/4P3/8/8/3QK3 w - - 0 1", "d1d5") == 300


def test_king_cannot_recapture_a_defended_piece() -> None:
    # Rxf7 with the rook backed by the bishop on b3: the king may not take back.
    assert _see("6k1/5p2/8/8/8/1B6/8/5RK1 w - - 0 1", "f1f7") == 100


def test_en_passant_is_a_pawn_capture() -> None:
    board = chess.Board("4k3/3p4/8/4P3/8/8/8/4K3 b - - 0 1")
    board.push_san("d5")
    assert see(board, chess.Move.from_uci("e5d6")) == 100


def test_promotion_counts_the_new_piece() -> None:
    assert _see("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8q") == 500 + 800


def test_quiet_move_to_a_guarded_square_is_negative_and_safe_is_zero() -> None:
    assert _see("4k3/8/3p4/8/8/8/8/2B1K3 w - - 0 1", "c1e3") == 0
    assert _see("4k3/8/3p4/8/8/8/8/2B1K3 w - - 0 1", "c1f4") == 0
    assert _see("4k3/8/5p2/8/8/8/8/2B1K3 w - - 0 1", "c1g5") == -300


def test_missing_piece_is_an_error() -> None:
    with pytest.raises(ValueError):
        see(chess.Board(), chess.Move.from_uci("e3e4"))
