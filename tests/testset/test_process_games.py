"""Step 02 on every real games file: kept and dropped counts, checked independently."""

import io
import re
import sqlite3
from collections import Counter
from pathlib import Path

import chess.pgn
import pytest

from tests.conftest import (
    ARENA_BLITZ,
    ELITE_LICHESS_ID,
    ELITE_NO_ID,
    GAME_FILES,
    MONTHLY,
    MONTHLY_2025,
    MORE_FILES,
    STRONG,
    STRONG_FILES,
    STRONG_MORE_FILES,
    unzstd,
)
from tests.testset.steps import step

process = step("02_process_games")
fetch = step("01_fetch_games")


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
        elif "casual" in h.get("Event", "").lower() or not (
                "rated" in h.get("Event", "").lower() or "WhiteRatingDiff" in h):
            counts["casual"] += 1
        elif "BOT" in (h.get("WhiteTitle"), h.get("BlackTitle")):
            counts["bot"] += 1
        elif tc == "-":
            counts["correspondence"] += 1
        elif (est := int(tc.split("+")[0]) + 40 * int(tc.split("+")[1])) < 29:
            counts["ultrabullet"] += 1
        elif est < 179:
            counts["bullet"] += 1
        elif not (h.get("WhiteElo", "?").isdigit() and h.get("BlackElo", "?").isdigit()):
            counts["missing_rating"] += 1
        elif not list(game.mainline_moves()):
            abandoned = h.get("Termination") == "Abandoned"
            counts["abandoned" if abandoned else "no_moves"] += 1
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


@pytest.mark.parametrize("path", GAME_FILES + STRONG_FILES + MORE_FILES, ids=lambda p: p.name)
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
                   "from_position", "no_moves", "abandoned"):
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


def _stored(out: Path, pgn: bytes) -> list[sqlite3.Row]:
    _process(pgn, out)
    with sqlite3.connect(out / "games.db") as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("SELECT * FROM games").fetchall()


def test_games_without_site_get_their_lichess_id_or_a_content_id(tmp_path: Path) -> None:
    text = unzstd(ELITE_LICHESS_ID).decode()
    lichess_ids = set(re.findall(r'\[LichessId "([^"]+)"\]', text))
    rows = _stored(tmp_path / "a", text.encode())
    assert rows and {r["id"] for r in rows} <= lichess_ids
    assert all(r["site"] == f"https://lichess.org/{r['id']}" for r in rows)
    assert {r["white"] for r in rows} and all(r["white"] and r["black"] for r in rows)

    elite = unzstd(ELITE_NO_ID)
    rows = _stored(tmp_path / "b", elite)
    ids = [r["id"] for r in rows]
    assert all(i.startswith("sha-") and len(i) == 20 for i in ids) and len(set(ids)) == len(ids)
    assert all(r["site"] == "" for r in rows)
    # The content id ignores how the movetext is wrapped: the same games rewrapped onto
    # single lines get the same ids.
    games = [g.split("\n\n", 1) for g in re.split(r"\n+(?=\[Event )", elite.decode().strip())]
    unwrapped = "\n\n".join(f"{head}\n\n{' '.join(moves.split())}" for head, moves in games)
    assert [r["id"] for r in _stored(tmp_path / "c", unwrapped.encode())] == ids


def test_api_export_arenas_are_rated_by_rating_diff_and_bots_dropped(tmp_path: Path) -> None:
    text = unzstd(STRONG / "lichess_api_export.topplayers.pgn.zst").decode()
    games = [g.strip() for g in re.split(r"\n+(?=\[Event )", text) if g.strip()]
    blitz_arena = next(g for g in games if "Arena" in g.split("\n", 1)[0]
                       and "[WhiteRatingDiff" in g and '"180+0"' in g)
    unrated = "\n".join(line for line in blitz_arena.splitlines() if "RatingDiff" not in line)
    bot = next(g for g in games if 'Title "BOT"' in g)
    kept, drops = _process("\n\n".join([blitz_arena, unrated, bot]).encode(), tmp_path)
    assert kept == 1
    assert drops == {"casual": 1, "bot": 1}


def _fetched(sources: list[Path], out: Path) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Steps 01 and 02 on local sources: kept games and drops by reason, per file."""
    argv = [a for src in sources for a in ("--source", str(src))]
    assert fetch.main([*argv, "--out", str(out)]) == 0
    assert process.main(["--out", str(out)]) == 0
    with sqlite3.connect(out / "games.db") as conn:
        kept = dict(conn.execute("SELECT source, kept FROM sources ORDER BY position"))
        drops: dict[str, dict[str, int]] = {}
        for source, reason, n in conn.execute("SELECT source, reason, count FROM drops"):
            drops.setdefault(source, {})[reason] = n
    return kept, drops


def test_drops_per_file_match_each_file_read_alone(tmp_path: Path) -> None:
    """Every file of the Elite months (no Site, Date ????.??.??) and the 2025 arenas and dump
    slice, concatenated by step 01: step 02's table per file is each file's own reading."""
    files = MORE_FILES + STRONG_MORE_FILES
    kept, drops = _fetched(files, tmp_path)
    assert list(kept) == [f.name for f in files]
    for path in files:
        expected = _expected(unzstd(path).decode())
        assert kept[path.name] == expected.pop("kept", 0), path.name
        assert drops.get(path.name, {}) == dict(expected), path.name


def test_abandoned_arena_games_are_counted_as_abandoned(tmp_path: Path) -> None:
    text = unzstd(ARENA_BLITZ).decode()
    games = [g.strip() for g in re.split(r"\n+(?=\[Event )", text) if g.strip()]
    abandoned = [g for g in games if '[Termination "Abandoned"]' in g
                 and g.split("\n\n", 1)[1].strip() in ("1-0", "0-1", "1/2-1/2")]
    assert len(abandoned) == 59  # the folder's README: about 2% of the arena's games
    kept, drops = _process("\n\n".join(abandoned[:5] + games[-3:]).encode(), tmp_path)
    assert drops == {"abandoned": 5} and kept == 3


def test_an_arena_export_is_rated_by_its_rating_diffs(tmp_path: Path) -> None:
    """The arena's Event ("Daily Blitz Arena") says neither rated nor casual: its games with
    RatingDiff tags are rated, the same games without them casual."""
    text = unzstd(ARENA_BLITZ).decode()
    games = [g.strip() for g in re.split(r"\n+(?=\[Event )", text) if g.strip()]
    played = [g for g in games if '"Daily Blitz Arena"' in g and "[WhiteRatingDiff" in g
              and "Abandoned" not in g][:6]
    stripped = ["\n".join(line for line in g.splitlines() if "RatingDiff" not in line)
                for g in played[3:]]
    kept, drops = _process("\n\n".join(played[:3] + stripped).encode(), tmp_path)
    assert kept == 3 and drops == {"casual": 3}


@pytest.mark.parametrize("cut", ["movetext", "headers"])
def test_a_source_cut_off_mid_game_drops_that_game_only(cut: str, tmp_path: Path) -> None:
    """A dump slice that ends inside its last game (in the moves, or in the tags): that game
    is dropped and counted under its file, the others are kept, nothing crashes."""
    text = unzstd(MONTHLY_2025).decode().rstrip()
    last = text.rfind("\n[Event ") + 1
    head_end = text.index("\n\n", last)
    end = (head_end + len(text)) // 2 if cut == "movetext" else last + (head_end - last) // 2
    source = tmp_path / "cut.pgn"
    source.write_text(text[:end])
    whole_kept, whole_drops = _fetched([MONTHLY_2025], tmp_path / "whole")
    kept, drops = _fetched([source, STRONG_MORE_FILES[0]], tmp_path / "cut")
    assert kept["cut.pgn"] == whole_kept[MONTHLY_2025.name] - 1
    reason = "truncated" if cut == "movetext" else "cut_off"
    assert drops["cut.pgn"] == {**whole_drops[MONTHLY_2025.name], reason: 1}
    # The next file's games are read whole, wherever the cut file stopped.
    assert kept[STRONG_MORE_FILES[0].name] == _expected(
        unzstd(STRONG_MORE_FILES[0]).decode())["kept"]


def test_elite_months_without_site_or_date_get_content_ids(tmp_path: Path) -> None:
    text = b"\n\n".join(unzstd(p) for p in STRONG_MORE_FILES).decode()
    assert '[Date "????.??.??"]' in text and "[Site " not in text
    rows = _stored(tmp_path, text.encode())
    assert len(rows) == text.count("[Event ")
    assert all(r["id"].startswith("sha-") and r["site"] == "" for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)
