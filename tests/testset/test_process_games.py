"""Step 02 on every real games file: kept and dropped counts, checked independently."""

import io
import re
import sqlite3
from collections import Counter
from pathlib import Path

import chess.pgn
import pytest

from tests.conftest import GAME_FILES, MONTHLY, unzstd
from tests.testset.steps import step

process = step("02_process_games")


def _expected(pgn: str) -> Counter:
    """Drop reasons derived with python-chess's own PGN reader, in the step's precedence."""
    counts: Counter = Counter()
    handle = io.StringIO(pgn)
    while (game := chess.pgn.read_game(handle)) is not None:
        h = game.headers
        variant = h.get("Variant", "Standard")
        tc = h.get("TimeControl", "-")
        if variant == "From Position" or "FEN" in h:
            counts["from_position"] += 1
        elif variant not in ("Standard",):
            counts["variant"] += 1
        elif "casual" in h.get("Event", "").lower():
            counts["casual"] += 1
        elif tc == "-":
            counts["correspondence"] += 1
        elif (est := int(tc.split("+")[0]) + 40 * int(tc.split("+")[1])) < 29:
            counts["ultrabullet"] += 1
        elif est < 179:
            counts["bullet"] += 1
        elif not (h.get("WhiteElo", "?").isdigit() and h.get("BlackElo", "?").isdigit()):
            counts["missing_rating"] += 1
        elif not list(game.mainline_moves()):
            counts["no_moves"] += 1
        else:
            counts["kept"] += 1
    return counts


def _process(pgn: bytes, out: Path) -> tuple[int, dict[str, int]]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "games.pgn").write_bytes(pgn)
    assert process.main(["--out", str(out)]) == 0
    with sqlite3.connect(out / "games.db") as conn:
        kept = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        drops = dict(conn.execute("SELECT reason, count FROM drops").fetchall())
    return kept, drops


@pytest.mark.parametrize("path", GAME_FILES, ids=lambda p: p.name)
def test_counts_match_an_independent_reading(path: Path, tmp_path: Path) -> None:
    pgn = unzstd(path)
    expected = _expected(pgn.decode())
    kept, drops = _process(pgn, tmp_path)
    assert kept == expected.pop("kept", 0)
    assert drops == dict(expected)


def test_every_file_together_covers_each_drop_reason(tmp_path: Path) -> None:
    pgn = b"\n\n".join(unzstd(p) for p in GAME_FILES)
    _, drops = _process(pgn, tmp_path)
    for reason in ("bullet", "ultrabullet", "correspondence", "casual", "variant",
                   "from_position", "no_moves"):
        assert drops.get(reason, 0) > 0, reason


def test_missing_rating_and_bad_games_are_counted_not_fatal(tmp_path: Path) -> None:
    games = re.split(r"\n+(?=\[Event )", unzstd(MONTHLY).decode())
    rapid = [g.strip() for g in games if '[Event "Rated Rapid game"]' in g][:4]
    no_rating = "\n".join(line for line in rapid[0].splitlines()
                          if not line.startswith("[BlackElo"))
    head, moves = rapid[1].split("\n\n", 1)
    truncated = head + "\n\n" + moves[: len(moves) // 2]
    corrupt = rapid[2].replace(" 2. ", " 2. Zz9 ", 1)
    garbage = "\x00\x01 this is not PGN at all {{{ ]]]"
    # Garbage can only stand alone before the first game: later, it would read as more
    # movetext of the game before it (which then counts as truncated).
    text = "\n\n".join([garbage, no_rating, truncated, corrupt, rapid[3]]) + "\n"
    kept, drops = _process(text.encode(), tmp_path)
    assert kept == 1
    assert drops == {"missing_rating": 1, "truncated": 1, "corrupt_moves": 1,
                     "corrupt_headers": 1}


def test_stored_game_row(tmp_path: Path) -> None:
    _process(unzstd(MONTHLY), tmp_path)
    with sqlite3.connect(tmp_path / "games.db") as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM games WHERE tc_class = 'blitz' LIMIT 1").fetchone()
    assert row["site"] == f"https://lichess.org/{row['id']}"
    assert row["avg_elo"] == (row["white_elo"] + row["black_elo"]) / 2
    assert "{" not in row["movetext"] and "." not in row["movetext"]
    board = chess.Board()
    for san in row["movetext"].split():
        board.push_san(san)
    assert board.ply() == row["ply_count"]


def test_missing_input_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert process.main(["--out", str(tmp_path)]) == 2
    assert "run step 01 first" in capsys.readouterr().err
    assert not (tmp_path / "games.db").exists()
