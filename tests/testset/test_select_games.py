"""Step 03 end to end on the real games at a small scale, with the real engine."""

import csv
import json
import logging
import random
import shutil
import sqlite3
from collections import Counter
from logging.handlers import BufferingHandler
from pathlib import Path

import chess
import pytest
from scipy import stats

from chess_eval.phase import phase
from chess_eval.position import fen4, hash_bucket, is_eligible, pos_id
from chess_eval.testset.selection import weighted_pick
from chess_eval.testset.tree import GAME_TARGETS, scale_targets
from tests.conftest import GAME_FILES, unzstd
from tests.testset.steps import step

process = step("02_process_games")
select = step("03_select_games")
SCALE = "0.1"


def _games_db(out: Path, files: list[Path]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "games.pgn").write_bytes(b"\n\n".join(unzstd(p) for p in files))
    assert process.main(["--out", str(out)]) == 0


def _select(out: Path, stockfish: str, *extra: str) -> list[dict[str, str]]:
    argv = ["--out", str(out), "--scale", SCALE, "--workers", "2", "--stockfish", stockfish]
    assert select.main(argv + list(extra)) == 0
    with open(out / "positions.csv", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, stockfish: str) -> Path:
    """Step 03 on the real sample; what it logged is kept in select.log beside its outputs."""
    out = tmp_path_factory.mktemp("select")
    _games_db(out, GAME_FILES)
    # Every record kept while it is attached (a capacity never reached: never flushed).
    root, handler = logging.getLogger(), BufferingHandler(capacity=10**9)
    handler.setLevel(logging.INFO)
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        _select(out, stockfish)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    lines = [record.getMessage() for record in handler.buffer]
    (out / "select.log").write_text("\n".join(lines), encoding="utf-8")
    return out


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "positions.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_leaves_within_targets_and_one_position_per_game(built: Path) -> None:
    rows = _rows(built)
    targets = scale_targets(GAME_TARGETS, float(SCALE))
    leaves = Counter((r["elo_bucket"], r["phase"], r["type"], r["side"]) for r in rows)
    assert all(leaves[leaf] <= n for leaf, n in targets.items())
    assert set(leaves) <= set(targets)
    assert len({r["game_id"] for r in rows}) == len(rows)
    assert len({r["pos_id"] for r in rows}) == len(rows)
    # The buckets the samples cover well are full.
    for bucket in ("(0, 1400)", "[1400, 1800)"):
        assert sum(n for leaf, n in leaves.items() if leaf[0] == bucket) == sum(
            n for leaf, n in targets.items() if leaf[0] == bucket)
    mates = sum(int(r["mate"]) for r in rows)
    assert mates <= int(0.04 * sum(targets.values()))


def test_rows_agree_with_the_game_they_come_from(built: Path) -> None:
    for row in _rows(built):
        board = chess.Board()
        for san in row["history"].split():
            board.push_san(san)
        assert len(row["history"].split()) == int(row["ply"])
        assert board.fen(en_passant="legal") == row["fen"]
        assert fen4(board) == row["fen4"] and pos_id(row["fen4"]) == row["pos_id"]
        assert hash_bucket(row["fen4"]) == int(row["hash_bucket"])
        assert phase(board, int(row["ply"])) == row["phase"]
        assert row["side"] == ("White" if board.turn else "Black")
        assert chess.Move.from_uci(row["played_move"]) in board.legal_moves
        assert board.legal_moves.count() == int(row["legal_moves"])
        assert board.halfmove_clock < 80
        assert row["engine"].startswith("Stockfish")


def test_same_seed_gives_identical_bytes_and_other_seed_differs(
        built: Path, tmp_path: Path, stockfish: str) -> None:
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(built / "games.db", again / "games.db")
    # One worker instead of two, and no probe cache: still the same file.
    _select(again, stockfish, "--workers", "1")
    assert (again / "positions.csv").read_bytes() == (built / "positions.csv").read_bytes()
    # The probe cache is keyed by engine and search, not seed: the other seed reuses it.
    _select(again, stockfish, "--seed", "7")
    assert (again / "positions.csv").read_bytes() != (built / "positions.csv").read_bytes()


def test_probes_per_position_are_reported(built: Path) -> None:
    report = json.loads((built / "positions_report.json").read_text())
    assert report["selected"] == len(_rows(built))
    assert report["counts"]["probes"] >= report["selected"]
    assert report["probes_per_selected"] == round(
        report["counts"]["probes"] / report["selected"], 3)


def test_shortfall_is_reported_per_leaf(built: Path) -> None:
    rows = _rows(built)
    report = json.loads((built / "positions_report.json").read_text())
    short = {(r["elo_bucket"], r["phase"], r["type"], r["side"]): r["shortfall"]
             for r in report["leaves"] if r["shortfall"]}
    # The sample holds hardly any 2600+ games, and at this scale a player gives one position:
    # that whole bucket falls short, but for one position at most.
    top = sum(n for leaf, n in scale_targets(GAME_TARGETS, float(SCALE)).items()
              if leaf[0] == "[2600, inf)")
    assert top == 12
    assert sum(v for k, v in short.items() if k[0] == "[2600, inf)") >= top - 1
    assert sum(r["shortfall"] for r in report["leaves"]) == report["target"] - len(rows)
    assert "leaves short of their target" in (built / "select.log").read_text(encoding="utf-8")


def test_no_player_exceeds_the_cap_and_the_cost_is_reported(built: Path) -> None:
    rows = _rows(built)
    report = json.loads((built / "positions_report.json").read_text())
    # Default cap: 1% of the game positions at this scale (80), at least 1.
    assert report["max_per_player"] == 1
    with sqlite3.connect(built / "games.db") as conn:
        players = {gid: (w.lower(), b.lower()) for gid, w, b in
                        conn.execute("SELECT id, white, black FROM games")}
    load = Counter(p for r in rows for p in players[r["game_id"]])
    assert max(load.values()) == 1 == report["largest_player"]["positions"]
    # The two API exports are one player's games each: the cap turns many away.
    assert report["counts"]["player_cap"] > 100
    for leaf in report["leaves"]:
        assert 0 <= leaf["shortfall_from_player_cap"] <= min(leaf["shortfall"],
                                                             leaf["player_capped"])


def test_without_the_cap_one_player_dominates(tmp_path: Path, built: Path,
                                              stockfish: str) -> None:
    for name in ("games.db", "probes.db"):
        shutil.copy(built / name, tmp_path / name)
    _select(tmp_path, stockfish, "--max-per-player", "0")
    report = json.loads((tmp_path / "positions_report.json").read_text())
    assert report["largest_player"]["share"] > 0.3


def test_the_initial_position_is_never_eligible() -> None:
    board = chess.Board()
    assert not is_eligible(board)
    for san in ("Nf3", "Nf6", "Ng1", "Ng8"):  # back to the start by knight moves
        board.push_san(san)
    assert not is_eligible(board)
    board.push_san("e4")
    assert is_eligible(board)


def test_weighted_pick_draws_in_proportion_to_the_weights() -> None:
    rng = random.Random(3)
    weights = [0.0, 1.0, 3.0, 0.5]
    draws = Counter(weighted_pick(weights, rng) for _ in range(20_000))
    assert draws[0] == 0
    expected = [20_000 * w / sum(weights) for w in weights]
    _, p = stats.chisquare([draws[i] for i in (1, 2, 3)], [expected[i] for i in (1, 2, 3)])
    assert p > 0.001
    # All weights zero (no leaf has room): uniform, never an error.
    assert {weighted_pick([0.0, 0.0], rng) for _ in range(50)} == {0, 1}


def _short(report: dict, phase_name: str) -> int:
    return sum(r["shortfall"] for r in report["leaves"] if r["phase"] == phase_name)


def test_the_scarcity_draw_fills_the_scarce_leaves_the_uniform_draw_leaves_short(
        built: Path, tmp_path: Path, stockfish: str) -> None:
    """The same games, probes and seed: drawn uniformly, games that reach an endgame give
    their position to the middlegame as often as its plies outnumber the endgame's; drawn by
    scarcity, the endgame leaves, which few games reach, are short of fewer positions."""
    for name in ("games.db", "probes.db"):
        shutil.copy(built / name, tmp_path / name)
    _select(tmp_path, stockfish, "--ply-draw", "uniform")
    uniform = json.loads((tmp_path / "positions_report.json").read_text())
    scarcity = json.loads((built / "positions_report.json").read_text())
    assert (uniform["ply_draw"], scarcity["ply_draw"]) == ("uniform", "scarcity")
    assert _short(scarcity, "Endgame") < _short(uniform, "Endgame")
    assert sum(r["shortfall"] for r in scarcity["leaves"]) <= sum(
        r["shortfall"] for r in uniform["leaves"])
