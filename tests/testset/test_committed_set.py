"""The committed questions.csv, read as the anchor's (peval's) readers read its file."""

import csv
import hashlib
import json

import chess

from chess_eval.phase import phase
from tests.conftest import ROOT

ANCHOR_MATE = 30000  # peval: mate in n is +-(30000 - 100 n) from the side to move


def _rows() -> list[dict[str, str]]:
    with open(ROOT / "questions.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_first_three_columns_read_the_anchor_way() -> None:
    with open(ROOT / "questions.csv", newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert header[:3] == ["prompt", "expected_output", "private"]
    for row in _rows():
        board = chess.Board(row["prompt"])
        moves = json.loads(row["expected_output"])
        assert all(isinstance(u, str) and isinstance(cp, int) for u, cp in moves)
        assert sorted(u for u, _ in moves) == sorted(m.uci() for m in board.legal_moves)
        assert [cp for _, cp in moves] == sorted((cp for _, cp in moves), reverse=True)
        fen4 = " ".join(row["prompt"].split()[:4])
        bucket = int(hashlib.sha256(fen4.encode()).hexdigest()[:8], 16) % 100
        assert row["private"] == ("true" if bucket < 20 else "false")


def test_mates_decode_the_anchor_way() -> None:
    mates = 0
    for row in _rows():
        board = chess.Board(row["prompt"])
        for uci, cp in json.loads(row["expected_output"]):
            if abs(cp) < ANCHOR_MATE - 100 * 100:
                continue
            n, rest = divmod(ANCHOR_MATE - abs(cp), 100)
            assert rest == 0 and 1 <= n <= 100, (row["id"], uci, cp)
            mates += 1
            if cp == ANCHOR_MATE - 100:  # mate in one: the move mates on the board
                after = board.copy()
                after.push_uci(uci)
                assert after.is_checkmate(), (row["id"], uci)
    assert mates > 0


def test_what_the_set_contains() -> None:
    rows = _rows()
    assert not any(r["prompt"].startswith(chess.STARTING_BOARD_FEN + " w KQkq") for r in rows)
    # Mates: at most 4% of the 1000 cases, game positions and puzzles together.
    best = [json.loads(r["expected_output"])[0][1] for r in rows]
    game_mates = sum(r["source"] == "game" and b >= ANCHOR_MATE - 100 * 100
                     for r, b in zip(rows, best, strict=True))
    puzzle_mates = sum(r["source"] == "puzzle" and (
        b >= ANCHOR_MATE - 100 * 100 or any(t.startswith("mate") for t in r["themes"].split()))
        for r, b in zip(rows, best, strict=True))
    assert game_mates + puzzle_mates <= 40
    # No tie at the top made by capping scores (the old file had 201 of 512 game rows).
    ties = sum(len(m) > 1 and m[0][1] == m[1][1]
               for m in (json.loads(r["expected_output"]) for r in rows))
    assert ties <= 0.05 * len(rows)
    for row in rows:
        if row["source"] == "puzzle":
            board = chess.Board(row["prompt"])
            assert row["phase"] == phase(board, board.ply())
