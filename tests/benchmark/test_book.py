"""The opening book: built from real games on the Dask cluster; the committed one checked."""

from __future__ import annotations

import csv
from pathlib import Path

import chess
import chess.engine
import pytest

import benchmark
from chess_eval.benchmark.arena import book
from chess_eval.benchmark.core.data import BOOK
from chess_eval.engine import Engine, EngineSettings, score_to_cp
from chess_eval.errors import DataError
from tests.conftest import MONTHLY, ROOT


def _check(rows: list[dict[str, str]]) -> None:
    """What every book must hold, checked from the rows alone."""
    assert len({r["game"] for r in rows}) == len(rows)  # no two from one game
    assert len({r["fen"] for r in rows}) == len(rows)
    for row in rows:
        assert book.FIRST_PLY <= int(row["ply"]) <= book.LAST_PLY
        assert abs(int(row["eval_cp"])) <= book.MAX_CP
        board = chess.Board()
        for san in row["moves"].split():
            board.push_san(san)
        assert board.fen() == row["fen"] and len(board.move_stack) == int(row["ply"])


def test_the_committed_book_is_balanced_real_and_large() -> None:
    with open(BOOK, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) >= 500 and list(rows[0]) == book.FIELDS
    _check(rows)
    assert {r["source"] for r in rows} <= {p.name for p in (ROOT.parent / "shared" / "data"
                                                            / "lichess").rglob("*.pgn.zst")}
    assert len({r["ply"] for r in rows}) == book.LAST_PLY - book.FIRST_PLY + 1


def test_a_book_built_from_real_games_holds_what_it_promises(
        tmp_path: Path, stockfish: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "book.csv"
    argv = ["book", "--games", str(MONTHLY), "--size", "12", "--out", str(out),
            "--workers", "2", "--stockfish", stockfish]
    assert benchmark.main(argv) == 0
    assert "12 openings from" in capsys.readouterr().out
    with open(out, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 12
    _check(rows)
    # The stored eval is the engine's at the stated node count, recomputed here.
    with Engine(EngineSettings(stockfish)) as engine:
        for row in rows[:3]:
            info = engine.analyse(chess.Board(row["fen"]),
                                  chess.engine.Limit(nodes=int(row["nodes"])), 1)[0]
            assert score_to_cp(info["score"].white()) == int(row["eval_cp"])
    # The same seed builds the same book.
    again = tmp_path / "again.csv"
    argv[argv.index(str(out))] = str(again)
    assert benchmark.main(argv) == 0
    assert again.read_bytes() == out.read_bytes()


def test_a_book_that_is_not_one_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "book.csv"
    bad.write_text("id,fen\nx,y\n")
    with pytest.raises(DataError, match="is not an opening book"):
        book.load_book(bad)
    with pytest.raises(DataError, match="cannot read the opening book"):
        book.load_book(tmp_path / "missing.csv")
    with pytest.raises(DataError, match=r"cannot read games from .*book.csv .*\.pgn\.zst"):
        book.candidates([bad], 0)
