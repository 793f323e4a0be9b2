"""Every legal move evaluated once, sorted, with the mate rule, on telling real positions."""

import chess
import pytest

from lib.engine import MATE_CP, Engine, EngineSettings
from lib.evaluation import EvalSetting, evaluate_moves, from_json, to_json

SMALL = EvalSetting(best_nodes=20_000, scan_nodes=20_000)


@pytest.fixture(scope="module")
def engine(stockfish: str):
    with Engine(EngineSettings(path=stockfish)) as eng:
        yield eng


def _check(board: chess.Board, moves: list[tuple[chess.Move, int]]) -> None:
    assert sorted(m.uci() for m, _ in moves) == sorted(m.uci() for m in board.legal_moves)
    scores = [cp for _, cp in moves]
    assert scores == sorted(scores, reverse=True)


def test_mate_in_one_scores_by_the_mate_rule(engine: Engine) -> None:
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/4R1K1 w - - 0 1")
    moves = evaluate_moves(engine, board, SMALL)
    _check(board, moves)
    assert moves[0] == (chess.Move.from_uci("e1e8"), MATE_CP - 100)
    assert all(cp < MATE_CP - 100 for _, cp in moves[1:])


def test_stalemating_move_scores_zero(engine: Engine) -> None:
    # Queen and king against a lone king: Qg6 stalemates, everything else wins.
    board = chess.Board("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1")
    moves = dict(evaluate_moves(engine, board, SMALL))
    _check(board, list(moves.items()))
    stalemate = chess.Move.from_uci("g1g6")
    after = board.copy()
    after.push(stalemate)
    assert after.is_stalemate()
    assert moves[stalemate] == 0
    assert max(moves.values()) > MATE_CP - 1000


def test_promotions_are_all_present(engine: Engine) -> None:
    board = chess.Board("8/1P6/8/8/8/8/6k1/4K3 w - - 0 1")
    moves = evaluate_moves(engine, board, SMALL)
    _check(board, moves)
    promos = {m.uci() for m, _ in moves if m.promotion}
    assert promos == {"b7b8q", "b7b8r", "b7b8b", "b7b8n"}
    scores = {m.uci(): cp for m, cp in moves}
    # A queen wins; a knight (the pawn's under-promotion that wins nothing) does not.
    assert scores["b7b8q"] > 300 > scores["b7b8n"]


def test_en_passant_capture_is_evaluated(engine: Engine) -> None:
    board = chess.Board("rnbqkbnr/ppp1pppp/8/4P3/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2")
    board.push_san("f5")
    moves = evaluate_moves(engine, board, SMALL)
    _check(board, moves)
    assert "e5f6" in {m.uci() for m, _ in moves}


def test_json_round_trip_and_repeatability(engine: Engine) -> None:
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    first = evaluate_moves(engine, board, SMALL)
    evaluate_moves(engine, chess.Board(), SMALL)
    assert evaluate_moves(engine, board, SMALL) == first
    assert from_json(to_json(first)) == [(m.uci(), cp) for m, cp in first]
