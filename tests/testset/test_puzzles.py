"""Puzzle rows: setup move, side to move, phase and type mapping, malformed rows, lowest-k."""

import csv
import io

import chess

from chess_eval.phase import phase
from chess_eval.records import Counter
from chess_eval.testset.puzzles import (
    lowest_k,
    parse,
    phase_after_first_move,
    quick_leaf,
    rank_key,
    read_rows,
)
from tests.conftest import PUZZLES_1K, PUZZLES_44K, unzstd


def _rows(path=PUZZLES_44K) -> list[list[str]]:
    return list(read_rows(io.StringIO(unzstd(path).decode())))


ROWS = _rows()


def test_position_is_after_the_opponents_first_move() -> None:
    for row in ROWS[:200]:
        puzzle, reason = parse(row)
        assert reason is None and puzzle is not None
        board = chess.Board(row[1])
        first = chess.Move.from_uci(row[2].split()[0])
        board.push(first)
        assert puzzle.fen == board.fen(en_passant="legal")
        assert puzzle.solution == tuple(row[2].split()[1:])
        assert chess.Move.from_uci(puzzle.solution[0]) in board.legal_moves
        # The solver is the side to move after the setup move: the opposite of the raw FEN.
        raw_turn = row[1].split()[1]
        assert puzzle.side == ("Black" if raw_turn == "w" else "White")


def test_type_comes_from_themes() -> None:
    quiet = next(r for r in ROWS if "quietMove" in r[7].split())
    assert parse(quiet)[0].type == "Quiet"
    loud = next(r for r in ROWS if "quietMove" not in r[7].split())
    assert parse(loud)[0].type == "Tactical"


def test_phase_is_the_board_rule_and_lichess_phase_is_kept_apart() -> None:
    changed = 0
    for row in ROWS[:3000]:
        puzzle = parse(row)[0]
        board = chess.Board(puzzle.fen)
        assert puzzle.phase == phase(board, board.ply())
        themes = [t for t in row[7].split() if t in ("opening", "middlegame", "endgame")]
        assert puzzle.lichess_phase == (themes[0] if themes else "")
        changed += bool(themes) and themes[0].capitalize() != puzzle.phase
    assert changed > 300  # Lichess's theme often disagrees with the board rule


def test_quick_leaf_agrees_with_parse_on_every_real_row() -> None:
    # The textual phase (material after the setup move, captures, en passant and
    # promotions included) must equal the board's on all 45k real rows.
    for row in ROWS + _rows(PUZZLES_1K):
        puzzle = parse(row)[0]
        assert puzzle is not None and quick_leaf(row) == puzzle.leaf, row[0]


def test_textual_phase_of_captures_en_passant_and_promotions() -> None:
    # Hand-made rows around real shapes: each first move changes material or queens.
    cases = [
        ("4k3/8/8/8/8/8/3q4/3QK3 w - - 0 40", "d1d2"),  # queen takes queen
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 30", "e5d6"),  # en passant
        ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 50", "b7b8q"),  # promotion
        ("rnbqkbnr/pppp1ppp/8/4p3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2", "d4e5"),
    ]
    for fen, first in cases:
        board = chess.Board(fen)
        fields = fen.split()
        board.push(chess.Move.from_uci(first))
        got = phase_after_first_move(fields[0], fields[1], int(fields[5]), first)
        assert got == phase(board, board.ply()), (fen, first)


def test_malformed_rows_are_reasons_not_crashes() -> None:
    good = ROWS[0]
    assert parse(good[:5])[1] == "malformed_row"
    assert parse([good[0], "not a fen", *good[2:]])[1] == "malformed_fen"
    assert parse([*good[:2], "e2e4 zz", *good[3:]])[1] == "malformed_moves"
    assert parse([*good[:2], "a1a1 a2a3", *good[3:]])[1] == "malformed_moves"
    assert parse([*good[:2], "a1a2 a2a3", *good[3:]])[1] == "illegal_move"
    chess960 = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
    assert parse([good[0], chess960, "e2e4 e7e5", *good[3:]])[1] == "non_standard"


def test_the_random_sample_with_an_extra_column_parses() -> None:
    rows = _rows(PUZZLES_1K)
    assert len(rows) == 1000
    assert all(parse(r)[1] is None for r in rows)


def test_lowest_k_equals_sorting_everything() -> None:
    keep = {}
    for row in ROWS:
        leaf = quick_leaf(row)
        keep[leaf] = 3
    counts = Counter()
    pools = lowest_k(iter(ROWS), seed=5, keep=keep, counts=counts)
    by_leaf: dict = {}
    for row in ROWS:
        by_leaf.setdefault(quick_leaf(row), []).append(row)
    for leaf, rows in by_leaf.items():
        expected = sorted(rows, key=lambda r: rank_key(5, r[0]))[:3]
        assert pools[leaf] == expected
    assert counts.total() == 0


def test_lowest_k_counts_malformed_rows() -> None:
    text = unzstd(PUZZLES_1K).decode().splitlines()[:50]
    text.insert(5, "broken,row")
    text.insert(9, "00bad,notafen w - - 0 1,e2e4 e7e5,1500,80,90,100,opening,u,")
    rows = list(csv.reader(text[1:]))
    counts = Counter()
    lowest_k(iter(rows), seed=0, keep={}, counts=counts)
    assert counts.counts == {"malformed_row": 1, "malformed_fen": 1}
