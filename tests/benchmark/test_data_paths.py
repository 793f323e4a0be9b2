"""Where the committed data lives: a ladder is a folder named by its engine build, and the
names the files had at the repository's root before still read, saying the new name once."""

import hashlib
import json
import logging
from pathlib import Path

import pytest

import benchmark
from chess_eval.benchmark.arena.ladder import LADDER_FIELDS, ladder_of, ladders_in, load_ladder
from chess_eval.benchmark.core import data
from chess_eval.benchmark.core.data import (
    BOOK,
    FIRST_LADDER,
    LADDER_GAMES,
    LADDERS,
    REFERENCE_LADDER,
    ROOT,
    data_path,
    games_path,
    ladder_label,
    ladder_path,
)
from chess_eval.engine import engine_identity


@pytest.fixture()
def fresh_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every old name not yet explained in this process (the note is said once a process)."""
    monkeypatch.setattr(data, "_said", set())


def test_every_committed_ladder_is_a_folder_with_its_own_files() -> None:
    """Its rungs, their covariance, the engine's fingerprint and its games, each of that
    ladder's engine only; the map between the two beside them."""
    assert ladders_in() == [FIRST_LADDER, REFERENCE_LADDER]
    for ladder in ladders_in():
        for name in ("ladder.csv", "ladder_cov.csv", "ladder_fingerprint.json", LADDER_GAMES,
                     "ladder_versions.csv"):
            assert (ladder.parent / name).is_file(), (ladder.parent, name)
        assert ladder.parent.name == load_ladder(ladder).engine.lower().replace(" ", "-")
    assert (LADDERS / "ladder_map.json").is_file() and BOOK.parent == ROOT / "data"


def test_the_root_keeps_at_most_twenty_entries() -> None:
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    top = {path.split("/")[0] for path in tracked if not path.startswith(".")}
    assert len(top) <= 20, sorted(top)


def test_ladder_takes_a_file_a_folder_or_a_committed_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_notes: None) -> None:
    monkeypatch.chdir(ROOT)
    assert ladder_path("stockfish-17.1") == REFERENCE_LADDER
    assert ladder_path(str(REFERENCE_LADDER.parent)) == REFERENCE_LADDER
    assert ladder_path("data/ladders/stockfish-15.1/ladder.csv") == Path(
        "data/ladders/stockfish-15.1/ladder.csv")
    # A ladder to be written elsewhere stays where it is asked for.
    assert ladder_path(str(tmp_path / "ladder.csv")) == tmp_path / "ladder.csv"
    monkeypatch.chdir(tmp_path)
    assert ladder_path("ladder.csv") == Path("ladder.csv")  # not the repository's root


def test_old_root_names_read_the_moved_files(
        monkeypatch: pytest.MonkeyPatch, fresh_notes: None,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.chdir(ROOT)
    caplog.set_level(logging.WARNING)
    assert ladder_path("ladder.csv") == FIRST_LADDER
    assert ladder_path("ladder@stockfish-17.1.csv") == REFERENCE_LADDER
    assert data_path("openings.csv") == BOOK
    assert data_path(str(ROOT / "game_elo_fit.json")) == ROOT / "data" / "game_elo_fit.json"
    assert games_path("ladder_games.csv.gz") is None  # the ladder's own games file
    assert ladder_path("ladder.csv") == FIRST_LADDER
    notes = [r.getMessage() for r in caplog.records]
    assert notes.count("ladder.csv has moved to data/ladders/stockfish-15.1/ladder.csv; "
                       "reading it there (give the new name: the old one may go)") == 1
    assert len(notes) == 5, notes  # one per old name, not per use


def test_play_with_the_old_spellings_rates_on_the_moved_ladder_and_book(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch, fresh_notes: None,
        caplog: pytest.LogCaptureFixture) -> None:
    """A command typed before the move (`--ladder ladder.csv --book openings.csv`, from the
    repository's root) plays the same games on the same files as the new names."""
    if not engine_identity(stockfish).startswith("Stockfish 15.1"):
        pytest.skip("the machine's native Stockfish is not the first ladder's 15.1")
    monkeypatch.chdir(ROOT)
    caplog.set_level(logging.WARNING)
    argv = ["play", "--model", "random", "--stockfish", stockfish, "--max-games", "2",
            "--ply-cap", "8", "--concurrency", "1"]
    settings = {}
    for name, names in (("old", ["--ladder", "ladder.csv", "--book", "openings.csv"]),
                        ("new", ["--ladder", "stockfish-15.1", "--book", str(BOOK)])):
        out = tmp_path / name
        assert benchmark.main([*argv, *names, "--out", str(out)]) == 0
        [result] = out.glob("play__*.json")
        settings[name] = json.loads(result.read_text())["settings"]
    assert settings["old"]["ladder_sha256"] == hashlib.sha256(
        FIRST_LADDER.read_bytes()).hexdigest() == settings["new"]["ladder_sha256"]
    assert settings["old"]["book_sha256"] == settings["new"]["book_sha256"]
    err = caplog.text
    assert err.count("ladder.csv has moved to data/ladders/stockfish-15.1/ladder.csv") == 1
    assert err.count("openings.csv has moved to data/openings.csv") == 1


def test_a_ladder_written_at_the_root_before_the_move_is_still_found(
        tmp_path: Path, stockfish: str) -> None:
    """calibrate with a new engine used to write ladder@ENGINE.csv at the repository's root;
    such a ladder is still one of the ladders there are, found by its engine."""
    root = tmp_path / "data" / "ladders"
    (root / "stockfish-17.1").mkdir(parents=True)
    (root / "stockfish-17.1" / "ladder.csv").write_bytes(REFERENCE_LADDER.read_bytes())
    here = engine_identity(stockfish)
    old = tmp_path / "ladder@my-build.csv"
    old.write_text(",".join(LADDER_FIELDS) + "\nrandom@1,random,0,0,0,0,1,0.5,0.2,"
                   f"{here}\n", encoding="utf-8")
    (tmp_path / "ladder@my-build_cov.csv").write_text("rung,random@1\nrandom@1,0\n")
    assert ladders_in(root) == [root / "stockfish-17.1" / "ladder.csv", old]
    assert ladder_of(here, stockfish, root, root / "x.csv") == old
    assert load_ladder(old).engine == here


def test_bench_tables_keep_naming_the_ladders_as_before() -> None:
    """The validation and Maia tables, and the outputs bench/ wrote, name a ladder by the
    file name it had: the new folders keep those names."""
    assert ladder_label(FIRST_LADDER) == "ladder.csv"
    assert ladder_label(REFERENCE_LADDER) == "ladder@stockfish-17.1.csv"
    assert ladder_label(Path("elsewhere/mine.csv")) == "mine.csv"


def test_calibrate_with_a_new_engine_writes_a_new_ladder_folder(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No --ladder, no --games-file, a build no committed ladder serves: calibrate writes
    data/ladders/ENGINE/ with the ladder, its covariance, the build's fingerprint and its
    games, the first ladder its prior; the committed ladders are left as they were."""
    from chess_eval.benchmark.ladders import cli as ladders_cli
    from tests.conftest import fault_engine

    root = tmp_path / "data" / "ladders"
    root.mkdir(parents=True)
    for ladder in ladders_in():  # the committed ones, read-only for this test
        (root / ladder.parent.name).symlink_to(ladder.parent)
    monkeypatch.setattr(ladders_cli, "LADDERS", root)
    other = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NODES", "1")  # searches unlike any committed ladder's
    monkeypatch.setenv("FAULT_NAME", "Stockfish 99")
    before = {p: p.read_bytes() for p in LADDERS.rglob("*") if p.is_file()}
    assert benchmark.main(["calibrate", "--stockfish", other, "--add-games", "4",
                           "--ply-cap", "40", "--workers", "1",
                           "--store", str(tmp_path / "cal.db")]) == 0
    folder = root / "stockfish-99"
    assert sorted(p.name for p in folder.iterdir()) == [
        "ladder.csv", "ladder_cov.csv", "ladder_fingerprint.json", LADDER_GAMES,
        "ladder_versions.csv"]
    ladder = load_ladder(folder / "ladder.csv")
    assert ladder.engine == "Stockfish 99" and ladder.prior.startswith("v2: Stockfish 15.1")
    assert {p: p.read_bytes() for p in LADDERS.rglob("*") if p.is_file()} == before
