"""The questions.csv format's rules, on the committed file."""

from __future__ import annotations

import csv

from chess_eval.testset.evalcache import best_forces_mate
from chess_eval.testset.questions import cap_mates
from tests.conftest import ROOT


def _is_mate(row: dict[str, str]) -> bool:
    return best_forces_mate({"expected": row["expected_output"]})


def test_the_mate_cap_is_four_percent_of_the_rows_in_the_file() -> None:
    """The committed file holds at most 4% mates of its own rows; with ten more mate puzzles
    (the file as built before the cap counted its own rows) the fewest drops bring it under,
    puzzles first, the rest untouched."""
    with open(ROOT / "questions.csv", newline="", encoding="utf-8") as handle:
        committed = list(csv.DictReader(handle))
    assert sum(map(_is_mate, committed)) <= int(0.04 * len(committed))
    assert cap_mates(committed, 0.04, _is_mate) == (committed, 0)
    extra = [{**r, "id": r["id"] + "-copy"} for r in committed
             if r["source"] == "puzzle" and _is_mate(r)][:10]
    rows = committed + extra
    mates = sum(map(_is_mate, rows))
    assert mates > int(0.04 * len(rows))  # why the cap had to change
    kept, dropped = cap_mates(rows, 0.04, _is_mate)
    assert len(kept) == len(rows) - dropped
    assert mates - dropped <= int(0.04 * len(kept))
    assert mates - (dropped - 1) > int(0.04 * (len(kept) + 1))  # one drop fewer is too few
    gone = [r for r in rows if r not in kept]
    assert all(map(_is_mate, gone)) and {r["source"] for r in gone} == {"puzzle"}
    assert [r["id"] for r in kept] == [r["id"] for r in rows if r not in gone]  # order kept
    assert cap_mates(kept, 0.04, _is_mate) == (kept, 0)
