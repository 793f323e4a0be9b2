"""Every legal move evaluated, sorted, with the mate rule, on telling real positions."""

from pathlib import Path

import chess
import pytest

from chess_eval.engine import MATE_CP, Engine, EngineSettings
from chess_eval.evaluation import (
    DEFAULT_SETTING,
    EvalSetting,
    evaluate_moves,
    evaluate_position,
    from_json,
    to_json,
)
from tests.conftest import fault_engine

SMALL = EvalSetting(scan_nodes=20_000, move_nodes=40_000, margin=150, max_candidates=3)
# Two real positions of the committed set where the old scan, capped at the best move's
# score, tied a clearly worse move with the best (g-9209d160d5b26b0c: d1d4, g-57b724b4ea471627:
# g2g4); searched alone to depth 18 they are 36-176 cp worse.
CLAMPED = (("r1bq1rk1/pp2ppbp/3p1np1/8/3nP3/2N1B2P/PPP1BPP1/R2Q1RK1 w - - 0 10", "d1d4"),
           ("3B2k1/5p1p/4p1p1/1p6/pKb5/5P2/6PP/8 w - - 2 38", "g2g4"))


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


@pytest.mark.parametrize(("fen", "uci"), CLAMPED)
def test_no_score_is_clamped_into_a_tie_with_the_best(engine: Engine, fen: str,
                                                      uci: str) -> None:
    board = chess.Board(fen)
    result = evaluate_position(engine, board, DEFAULT_SETTING)
    _check(board, result.moves)
    scores = {m.uci(): cp for m, cp in result.moves}
    best = result.moves[0][1]
    assert result.moves[1][1] < best  # no tie at the top
    assert best - scores[uci] >= 30
    # The top moves were searched on their own, the best among them, and the cost says so.
    assert result.moves[0][0] in result.alone
    setting = DEFAULT_SETTING
    assert result.nodes == (setting.scan_nodes + setting.near_nodes
                            + len(result.alone) * setting.move_nodes)


def test_a_crash_mid_position_gives_the_undisturbed_result(
        engine: Engine, tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    board = chess.Board(CLAMPED[0][0])
    expected = evaluate_position(engine, board, SMALL)
    assert len(expected.alone) >= 2
    # `go` 1 is the scan, 2 the first move searched alone, 3 the second: die on the third,
    # after the hash has been filled by two searches.
    path = fault_engine(tmp_path, stockfish, monkeypatch, "die", "3")
    with Engine(EngineSettings(path=path)) as flaky:
        assert evaluate_position(flaky, board, SMALL) == expected
    assert int((tmp_path / "go-count").read_text()) == 3 + 1 + len(expected.alone)
