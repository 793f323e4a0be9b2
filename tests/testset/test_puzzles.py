"""Puzzle rows: setup move, side to move, phase and type mapping, malformed rows, lowest-k."""

import csv
import io

import chess

from lib.records import Counter
from lib.testset.puzzles import lowest_k, parse, quick_leaf, rank_key, read_rows
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


def test_type_and_phase_come_from_themes() -> None:
    quiet = next(r for r in ROWS if "quietMove" in r[7].split())
    assert parse(quiet)[0].type == "Quiet"
    loud = next(r for r in ROWS if "quietMove" not in r[7].split())
    assert parse(loud)[0].type == "Tactical"
    for theme, name in (("opening", "Opening"), ("middlegame", "Middlegame"),
                        ("endgame", "Endgame")):
        row = next(r for r in ROWS if theme in r[7].split())
        assert parse(row)[0].phase == name
        assert quick_leaf(row)[1] == name


def test_phase_falls_back_to_the_board_rule_without_a_phase_theme() -> None:
    row = next(r for r in ROWS if "endgame" in r[7].split())
    untagged = row[:7] + [" ".join(t for t in row[7].split() if t != "endgame")] + row[8:]
    assert quick_leaf(untagged) is None
    assert parse(untagged)[0].phase in ("Opening", "Middlegame", "Endgame")


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
