"""The committed ECO table (data/eco.tsv.gz) and the opening a game reached, by position."""

from __future__ import annotations

import csv
import gzip
import re

import chess

from chess_eval.eco import ECO_TABLE, load_table, opening_of


def _moves(line: str) -> list[chess.Move]:
    board = chess.Board()
    return [board.push_san(san) for san in re.sub(r"\d+\.+", " ", line).split()]


def test_every_line_of_the_table_leads_to_its_position() -> None:
    """Each committed line, replayed here, reaches the position it is keyed by."""
    with gzip.open(ECO_TABLE, "rt", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) > 3000
    for row in rows:
        board = chess.Board()
        for move in _moves(row["moves"]):
            board.push(move)
        assert board.epd() == row["epd"], row
    assert len(load_table()) == len({r["epd"] for r in rows})


def test_a_game_is_named_by_the_last_named_position_it_reached() -> None:
    """The Giuoco Piano's position names it (C50) whatever the order of the moves; a move
    out of the table keeps the name already found; a start the table does not know and no
    named position after it: none."""
    table = load_table()
    giuoco = opening_of(chess.Board(), _moves("1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. a3"), table)
    assert giuoco is not None and (giuoco.eco, giuoco.name) == ("C50", "Italian Game: "
                                                                  "Giuoco Piano")
    swapped = opening_of(chess.Board(), _moves("1. Nf3 Nc6 2. e4 e5 3. Bc4 Bc5"), table)
    assert swapped == giuoco
    far = chess.Board("8/5k2/8/8/8/8/2K5/8 w - - 0 60")
    assert opening_of(far, [chess.Move.from_uci("c2c3")], table) is None
