"""Tactical / quiet labels: the seed's rules on built probes, and real probes on real positions."""

import chess
import chess.engine
import pytest

from chess_eval.engine import Engine, EngineSettings
from chess_eval.position import fen4
from chess_eval.records import Probe, RankedMove
from chess_eval.tactics import QUIET, TACTICAL, gap, good_move_count, is_calm, label
from chess_eval.testset import selection

START = chess.Board()
QUIET_MOVES = ("e2e4", "d2d4", "g1f3", "c2c4")


def _probe(board: chess.Board, scores: list[int | str], moves=QUIET_MOVES) -> Probe:
    lines = []
    for uci, score in zip(moves, scores, strict=False):
        value = (chess.engine.Mate(int(score[1:])) if isinstance(score, str)
                 else chess.engine.Cp(score))
        lines.append(RankedMove(chess.Move.from_uci(uci), value))
    return Probe(fen4=fen4(board), lines=tuple(lines))


def test_quiet_needs_small_gap_no_forcing_move_and_three_good_moves() -> None:
    probe = _probe(START, [30, 10, 0, -60])
    assert gap(probe) == 20 and good_move_count(probe) == 3
    assert label(START, probe, "Opening") == QUIET


def test_large_gaps_are_tactical_and_the_quiet_gap_is_30_in_the_middlegame() -> None:
    assert label(START, _probe(START, [100, 0, -10, -20]), "Middlegame") == TACTICAL
    assert label(START, _probe(START, [60, 0, -10, -20]), "Endgame") == TACTICAL
    assert label(START, _probe(START, [30, 0, -10, -19]), "Middlegame") == QUIET
    assert label(START, _probe(START, [31, 0, -10, -19]), "Middlegame") is None


def test_endgame_quiet_gap_is_20() -> None:
    assert label(START, _probe(START, [20, 0, -5, -10]), "Endgame") == QUIET
    assert label(START, _probe(START, [21, 0, -5, -10]), "Endgame") is None


def test_two_good_moves_are_tactical() -> None:
    assert label(START, _probe(START, [10, 0, -45, -60]), "Opening") == TACTICAL


def test_ambiguous_is_not_defaulted_to_tactical() -> None:
    # gap 40: neither >= 100 nor <= 30; three good moves; no forcing move.
    assert label(START, _probe(START, [40, 0, -5, -8]), "Middlegame") is None


def test_mate_in_pv1_is_tactical() -> None:
    probe = _probe(START, ["#3", "#4", "#5", "#6"])
    assert label(START, probe, "Middlegame") == TACTICAL


def test_forcing_best_move_is_not_quiet_even_with_a_small_gap() -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/3PP3/5N2/PPP2PPP/RNBQKB1R b KQkq - 0 3")
    probe = _probe(board, [10, 0, -5, -10], moves=("e5d4", "c6d4", "d7d6", "g8f6"))
    # exd4 is a capture (SEE +0: pawn for pawn), so not quiet; gap 10 is not tactical.
    assert label(board, probe, "Opening") is None


def test_winning_capture_by_see_is_tactical() -> None:
    board = chess.Board("rnb1kbnr/pppp1ppp/8/4p1q1/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3")
    probe = _probe(board, [10, 0, -5, -10], moves=("f3g5", "d2d4", "b1c3", "f1c4"))
    assert label(board, probe, "Opening") == TACTICAL


@pytest.fixture(scope="module")
def engine(stockfish: str):
    with Engine(EngineSettings(path=stockfish)) as eng:
        yield eng


@pytest.mark.parametrize(("fen", "expected"), [
    # Back-rank mate in one: Re8#.
    ("6k1/5ppp/8/8/8/8/5PPP/4R1K1 w - - 0 1", TACTICAL),
    # A hanging queen that the knight can take.
    ("rnb1kbnr/pppp1ppp/8/4p1q1/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3", TACTICAL),
    # The initial position: many equal developing moves.
    (chess.STARTING_FEN, QUIET),
])
def test_real_probes_label_known_positions(engine: Engine, fen: str, expected: str) -> None:
    board = chess.Board(fen)
    probe = selection.light_probe(engine, (board.fen(), fen4(board)))
    assert len(probe.lines) == 4
    assert label(board, probe, "Middlegame") == expected


def test_is_calm_sees_checks_and_pieces_en_prise() -> None:
    assert is_calm(chess.Board())
    # White's knight can take the queen on g5.
    assert not is_calm(chess.Board(
        "rnb1kbnr/pppp1ppp/8/4p1q1/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3"))
    # Same position, black to move: black's queen is attacked, so it is not calm either.
    assert not is_calm(chess.Board(
        "rnb1kbnr/pppp1ppp/8/4p1q1/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 0 3"))
