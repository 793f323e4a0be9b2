"""Step 05 on the real 44k puzzle sample: complete leaves, caps, verification, determinism."""

import csv
import json
from collections import Counter
from pathlib import Path

import chess
import pytest

from chess_eval.phase import phase
from chess_eval.testset.puzzles import parse
from chess_eval.testset.tree import PUZZLE_TARGETS, scale_targets
from tests.conftest import PUZZLES_44K, unzstd
from tests.testset.steps import step

fetch = step("04_fetch_puzzles")
select = step("05_select_puzzles")
SCALE = "0.25"
# A cheap evaluation setting: these tests are about selection, not about scores.
CHEAP = ["--scan-nodes", "20000", "--near-nodes", "100000", "--move-nodes", "30000"]


# Back-rank mates in one, for White then Black, and quiet openings: step 05 evaluates the
# game positions as step 06 will, to count those whose best move forces mate.
MATES = [f"6k1/5ppp/8/8/8/8/5PPP/{f}R{5 - i}K1 w - - 0 1".replace("0R", "R")
         for i, f in enumerate(("", "1", "2", "3", "4"))]
MATES += [f"{f}r{5 - i}k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1".replace("0r", "r")
          for i, f in enumerate(("", "1"))]
QUIET = ["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
         "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1"]


def _game_positions(out: Path, mates: int, total: int | None = None) -> None:
    """A step-03 positions.csv holding `mates` mate-in-one positions and quiet ones: two, or
    enough for `total` rows (the mate cap counts the game rows actually selected)."""
    out.mkdir(parents=True, exist_ok=True)
    rows = MATES[:mates] + (QUIET if mates else [])
    if total is not None:
        rows = MATES[:mates] + [QUIET[i % len(QUIET)] for i in range(total - mates)]
    (out / "positions.csv").write_text("fen\n" + "".join(f"{fen}\n" for fen in rows))


def _select(out: Path, stockfish: str, *extra: str) -> list[dict[str, str]]:
    if not (out / "positions.csv").exists():
        _game_positions(out, 0)
    argv = ["--out", str(out), "--scale", SCALE, "--workers", "2", "--stockfish", stockfish,
            *CHEAP]
    assert select.main(argv + list(extra)) == 0
    with open(out / "puzzles.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, stockfish: str) -> Path:
    out = tmp_path_factory.mktemp("puzzles")
    assert fetch.main(["--source", str(PUZZLES_44K), "--out", str(out)]) == 0
    _select(out, stockfish)
    return out


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "puzzles.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_leaf_is_complete(built: Path) -> None:
    rows = _rows(built)
    targets = scale_targets(PUZZLE_TARGETS, float(SCALE))
    leaves = Counter((r["elo_bucket"], r["phase"], r["type"], r["side"]) for r in rows)
    assert dict(leaves.items()) == {k: v for k, v in targets.items() if v}
    assert len({r["puzzle_id"] for r in rows}) == len(rows)


def test_rows_are_the_position_after_the_setup_move(built: Path) -> None:
    source = {}
    with open(built / "lichess_puzzles.csv", newline="") as handle:
        for raw in csv.reader(handle):
            source[raw[0]] = raw
    for row in _rows(built):
        raw = source[row["puzzle_id"]]
        board = chess.Board(raw[1])
        board.push_uci(raw[2].split()[0])
        assert row["fen"] == board.fen(en_passant="legal")
        assert row["side"] == ("White" if board.turn else "Black")
        assert row["solution"] == " ".join(raw[2].split()[1:])
        assert row["type"] == ("Quiet" if "quietMove" in raw[7].split() else "Tactical")
        assert parse(raw)[0].phase == row["phase"]
        # Verified: the first solution move beat the second-best by at least 100 cp.
        assert row["verify_gap"] == "" or int(row["verify_gap"]) >= 100


def test_caps(built: Path) -> None:
    rows = _rows(built)
    report = json.loads((built / "puzzles_report.json").read_text())
    # 4% of the cases in the file: the 50 puzzles and no game row (this build has none).
    assert report["mate_cap"] == int(0.04 * 50) == 2
    assert sum(int(r["mate"]) for r in rows) <= report["mate_cap"]
    motifs = Counter(t for r in rows for t in parse_themes(r["themes"]))
    assert max(motifs.values()) <= report["motif_cap"]


def parse_themes(text: str) -> list[str]:
    from chess_eval.puzzledb import NON_MOTIF_THEMES

    return [t for t in text.split() if t not in NON_MOTIF_THEMES]


def test_mate_cap_bites_when_mates_are_plenty(tmp_path: Path, built: Path,
                                              stockfish: str) -> None:
    # Only mate puzzles: the cap (4% of all cases) limits how many can be chosen.
    with open(built / "lichess_puzzles.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    mates = [rows[0]] + [r for r in rows[1:] if "mateIn2" in r[7].split()]
    with open(tmp_path / "lichess_puzzles.csv", "w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(mates)
    # 200 game rows (this scale's game target) and 50 puzzles: 10 mates in all.
    _game_positions(tmp_path, 0, total=200)
    selected = _select(tmp_path, stockfish)
    report = json.loads((tmp_path / "puzzles_report.json").read_text())
    assert len(selected) == report["mate_cap"] == 10
    assert report["counts"]["mate_cap"] > 0
    # The cap is joint: with 7 forced mates among the game positions, 3 puzzles are left.
    _game_positions(tmp_path, 7, total=200)
    selected = _select(tmp_path, stockfish)
    report = json.loads((tmp_path / "puzzles_report.json").read_text())
    assert (report["mate_cap_joint"], report["game_mates"]) == (10, 7)
    assert len(selected) == report["mate_cap"] == 3
    # Step 03 fell short (50 game rows of 200): the cap follows the file, 4% of 100 cases.
    _game_positions(tmp_path, 0, total=50)
    selected = _select(tmp_path, stockfish)
    report = json.loads((tmp_path / "puzzles_report.json").read_text())
    assert len(selected) == report["mate_cap_joint"] == 4


def test_phase_is_the_board_rule(built: Path) -> None:
    for row in _rows(built):
        board = chess.Board(row["fen"])
        assert row["phase"] == phase(board, board.ply())
        themes = [t for t in row["themes"].split() if t in ("opening", "middlegame", "endgame")]
        assert row["lichess_phase"] == (themes[0] if themes else "")


def test_same_seed_same_bytes_and_malformed_rows_counted(built: Path, tmp_path: Path,
                                                         stockfish: str) -> None:
    text = unzstd(PUZZLES_44K).decode().splitlines()
    text[10:10] = ["bad,row,only", "zzz,8/8/8/8 w - - 0 1,e2e4 e7e5,1500,1,1,1,endgame,u,"]
    (tmp_path / "lichess_puzzles.csv").write_text("\n".join(text) + "\n")
    _select(tmp_path, stockfish)
    assert (tmp_path / "puzzles.csv").read_bytes() == (built / "puzzles.csv").read_bytes()
    counts = json.loads((tmp_path / "puzzles_report.json").read_text())["counts"]
    assert counts["malformed_row"] == 1 and counts["malformed_fen"] == 1


def test_bad_header_is_a_clear_error(tmp_path: Path, stockfish: str, capsys) -> None:
    (tmp_path / "lichess_puzzles.csv").write_text("id,fen\n1,2\n")
    argv = ["--out", str(tmp_path), "--stockfish", stockfish]
    assert select.main(argv) == 2
    assert "expected columns PuzzleId" in capsys.readouterr().err
    assert not (tmp_path / "puzzles.csv").exists()
