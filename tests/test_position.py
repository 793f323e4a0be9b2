"""Board rules: canonical FEN with legal-only en passant, ids, split bucket, eligibility."""

import chess
import pytest

from chess_eval.position import (
    castling_rights,
    fen4,
    hash_bucket,
    is_eligible,
    is_private,
    mirror_move,
    pos_id,
)
from tests.conftest import MONTHLY, unzstd


def test_fen4_drops_en_passant_square_when_no_capture_is_possible() -> None:
    board = chess.Board()
    board.push_san("e4")
    # The raw FEN of many writers keeps "e3"; no black pawn can take, so it goes.
    assert board.fen(en_passant="fen").split()[3] == "e3"
    assert fen4(board) == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -"


def test_fen4_keeps_en_passant_square_when_capture_is_legal() -> None:
    board = chess.Board("rnbqkbnr/ppp1pppp/8/4P3/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2")
    board.push_san("f5")
    assert fen4(board).endswith(" f6")
    assert chess.Move.from_uci("e5f6") in board.legal_moves


def test_fen4_drops_en_passant_square_when_capture_would_expose_king() -> None:
    # Black just played c7-c5; bxc6 e.p. would open the fifth rank to the rook on h5.
    board = chess.Board("4k3/2p5/8/KP5r/8/8/8/8 b - - 0 1")
    board.push_san("c5")
    assert board.ep_square == chess.C6
    assert not board.has_legal_en_passant()
    assert fen4(board) == "4k3/8/8/KPp4r/8/8/8/8 w - -"


def test_transpositions_share_pos_id_and_bucket() -> None:
    a, b = chess.Board(), chess.Board()
    for san in ("Nf3", "Nf6", "Nc3"):
        a.push_san(san)
    for san in ("Nc3", "Nf6", "Nf3"):
        b.push_san(san)
    assert fen4(a) == fen4(b)
    assert pos_id(fen4(a)) == pos_id(fen4(b))
    assert hash_bucket(fen4(a)) == hash_bucket(fen4(b))


def test_pos_id_is_salted_and_bucket_is_unsalted() -> None:
    key = fen4(chess.Board())
    assert pos_id(key) != pos_id(key, salt="other")
    assert len(pos_id(key)) == 64
    # hash_bucket is SHA256(fen4)[:8] as an integer mod 100: independent of the salt.
    assert 0 <= hash_bucket(key) < 100


def test_hash_buckets_of_real_positions_split_about_one_in_five_private() -> None:
    import io

    import chess.pgn

    handle = io.StringIO(unzstd(MONTHLY).decode())
    keys = set()
    while len(keys) < 3000 and (game := chess.pgn.read_game(handle)) is not None:
        board = game.board()
        for move in game.mainline_moves():
            board.push(move)
            keys.add(fen4(board))
    private = sum(is_private(hash_bucket(k)) for k in keys) / len(keys)
    assert 0.17 < private < 0.23


def test_eligibility_rules() -> None:
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert mated.is_checkmate() and not is_eligible(mated)
    stalemate = chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert stalemate.is_stalemate() and not is_eligible(stalemate)
    assert is_eligible(chess.Board("8/8/4k3/8/8/3K4/R7/8 w - - 79 120"))
    assert not is_eligible(chess.Board("8/8/4k3/8/8/3K4/R7/8 w - - 80 120"))


def test_castling_rights_field() -> None:
    assert castling_rights(chess.Board()) == "KQkq"
    assert castling_rights(chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")) == "-"


@pytest.mark.parametrize("fen", [
    # Both sides may castle both ways.
    "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 9",
    # Only White short and Black long: the rights must go with the mirror, not stay put.
    "r3kb1r/ppp2ppp/2n1bn2/3qp3/8/2NP1N2/PPP1BPPP/R1BQK2R b Kq - 1 7",
    # Black's e-pawn just moved two past White's d5 pawn: d5xe6 en passant is legal, and the
    # en passant square goes with the mirror.
    "rnbqkbnr/pppp1ppp/8/3Pp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 3",
    # En passant for Black.
    "rnbqkbnr/ppp1pppp/8/8/2Pp4/5N2/PP1PPPPP/RNBQKB1R b KQkq c3 0 3",
    # A promotion.
    "8/1P4k1/8/8/8/8/6K1/8 w - - 0 1",
])
def test_mirror_maps_every_legal_move_onto_the_mirror_s_legal_moves(fen: str) -> None:
    board = chess.Board(fen)
    mirror = board.mirror()
    assert mirror.turn != board.turn
    assert mirror.mirror() == board
    assert {mirror_move(m) for m in board.legal_moves} == set(mirror.legal_moves)
    for move in board.legal_moves:
        flipped = mirror_move(move)
        assert board.is_castling(move) == mirror.is_castling(flipped)
        assert board.is_en_passant(move) == mirror.is_en_passant(flipped)


def test_mirror_of_castling_and_en_passant_by_hand() -> None:
    board = chess.Board("r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 9")
    assert mirror_move(chess.Move.from_uci("e1g1")) == chess.Move.from_uci("e8g8")
    assert board.mirror().castling_xfen() == "KQkq"
    ep = chess.Board("rnbqkbnr/pppp1ppp/8/3Pp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 3")
    assert ep.mirror().ep_square == chess.E3
    assert mirror_move(chess.Move.from_uci("d5e6")) == chess.Move.from_uci("d4e3")
    partial = chess.Board("r3kb1r/ppp2ppp/2n1bn2/3qp3/8/2NP1N2/PPP1BPPP/R1BQK2R b Kq - 1 7")
    assert partial.mirror().castling_xfen() == "Qk"
    assert mirror_move(chess.Move.from_uci("b7b8q")).uci() == "b2b1q"
