"""Opening names: the committed ECO table (data/eco.tsv.gz, Lichess's chess-openings names) and
the name of the opening a game reached, found as Lichess finds it: the last position of its
first SEARCH_PLIES plies that the table names."""

from __future__ import annotations

import csv
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import chess

from chess_eval.errors import DataError
from chess_eval.files import open_text

ECO_TABLE = Path(__file__).resolve().parent.parent / "data" / "eco.tsv.gz"
FIELDS = ("eco", "name", "moves", "epd")
SEARCH_PLIES = 40  # a name is looked for in the positions of the first this many plies


@dataclass(frozen=True)
class Opening:
    """A named opening line: its ECO code, its name, its moves (SAN with move numbers)."""

    eco: str
    name: str
    moves: str

    def text(self) -> str:
        """'C50 Italian Game: Giuoco Piano'."""
        return f"{self.eco} {self.name}"


def key(board: chess.Board) -> str:
    """The table's key of a position: its EPD (no move counters, en passant only when a
    capture is legal)."""
    return board.epd()


def load_table(path: Path = ECO_TABLE) -> dict[str, Opening]:
    """The ECO table by position key, the first line of a position that has two (lines
    that transpose); DataError naming the file when it is not one."""
    try:
        with open_text(path) as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            if tuple(reader.fieldnames or ()) != FIELDS:
                raise DataError(f"{path}: not an ECO table (columns {', '.join(FIELDS)})")
            table: dict[str, Opening] = {}
            for row in reader:
                table.setdefault(row["epd"], Opening(row["eco"], row["name"], row["moves"]))
            return table
    except (OSError, UnicodeDecodeError, csv.Error, EOFError, zlib.error) as exc:
        raise DataError(f"{path}: cannot read it ({exc})") from exc


def opening_of(start: chess.Board, moves: Iterable[chess.Move],
               table: dict[str, Opening]) -> Opening | None:
    """The opening a game from `start` reached: the table's entry for the last of its first
    SEARCH_PLIES positions that has one (None when none has)."""
    board = start.copy(stack=False)
    found = table.get(key(board))
    for ply, move in enumerate(moves):
        if ply >= SEARCH_PLIES:
            break
        board.push(move)
        found = table.get(key(board), found)
    return found


def table_rows(lines: Iterable[tuple[str, str, str]]) -> list[dict[str, str]]:
    """The table's rows from (eco, name, SAN moves with numbers) lines, each line replayed
    from the initial position for its key and its moves written as python-chess writes
    them; sorted by code, name and moves."""
    rows = []
    for eco, name, moves in lines:
        board = chess.Board()
        for token in re.sub(r"\d+\.+", " ", moves).split():
            board.push_san(token)
        line = chess.Board().variation_san(board.move_stack)
        rows.append({"eco": eco, "name": name, "moves": line, "epd": key(board)})
    return sorted(rows, key=lambda r: (r["eco"], r["name"], r["moves"]))
