"""Identity by behaviour: an engine's fingerprint (its searches at fixed node limits) decides
whether it plays a ladder's rungs, not the name it reports. The second builds here are real
processes: the same Stockfish behind a wrapper that renames it, or that searches one node
further at every node limit (a custom build under the same name)."""

import json
from pathlib import Path

import pytest

import benchmark
from chess_eval import fingerprint
from chess_eval.benchmark.arena.ladder import fingerprint_path, ladder_of
from chess_eval.benchmark.core.data import FIRST_LADDER, REFERENCE_LADDER
from chess_eval.engine import Engine, EngineSettings, engine_identity
from tests.benchmark.test_play import write_ladder
from tests.conftest import fault_engine


def test_a_fingerprint_is_the_same_every_time_and_round_trips(stockfish: str,
                                                             tmp_path: Path) -> None:
    with Engine(EngineSettings(stockfish)) as engine:
        first = fingerprint.take(engine)
        engine.analyse(fingerprint.chess.Board(), fingerprint.chess.engine.Limit(nodes=5000),
                       1)  # a search between: the hash is cleared before each of its own
        assert fingerprint.take(engine) == first
    assert len(first.searches) == len(fingerprint.POSITIONS) and first.engine == \
        engine_identity(stockfish)
    assert fingerprint.read(first.write(tmp_path / "f.json")) == first
    assert fingerprint.read(tmp_path / "none.json") is None
    (tmp_path / "bad.json").write_text('{"engine": 1}')
    with pytest.raises(fingerprint.DataError, match="bad.json: not an engine fingerprint"):
        fingerprint.read(tmp_path / "bad.json")


def test_the_committed_ladder_has_the_fingerprint_of_the_engine_here(stockfish: str) -> None:
    """ladder.csv was measured with Debian's Stockfish 15.1, the engine CI installs."""
    recorded = fingerprint.read(fingerprint_path(FIRST_LADDER))
    assert recorded is not None and recorded.engine == "Stockfish 15.1"
    assert recorded.difference(fingerprint.of_binary(stockfish)) is None


@pytest.fixture()
def measured(tmp_path: Path, stockfish: str) -> Path:
    """A three-rung ladder of the engine here, with its fingerprint beside it."""
    ladder = write_ladder(tmp_path / "ladder.csv", engine_identity(stockfish))
    fingerprint.of_binary(stockfish).write(fingerprint_path(ladder))
    return ladder


def _play(ladder: Path, out: Path, engine: str) -> list[str]:
    return ["play", "--model", "random", "--ladder", str(ladder), "--out", str(out),
            "--max-games", "2", "--ply-cap", "12", "--stockfish", engine]


def test_another_name_with_the_same_searches_plays_and_is_recorded(
        measured: Path, tmp_path: Path, stockfish: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    renamed = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NAME", "Stockfish 15.1 WASM")
    assert benchmark.main(_play(measured, tmp_path / "out", renamed)) == 0
    [result] = (tmp_path / "out").glob("play__*.json")
    settings = json.loads(result.read_text())["settings"]
    assert settings["rungs_engine"] == "Stockfish 15.1 WASM"


def test_the_same_name_with_other_searches_is_refused_naming_the_position(
        measured: Path, tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    custom = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NODES", "1")
    assert engine_identity(custom) == engine_identity(stockfish)  # the same name
    assert benchmark.main(_play(measured, tmp_path / "out", custom)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "searches differently" in err
    assert "position 1 (rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1, 1,000 " \
           "nodes)" in err and "Ladders here: stockfish-15.1 (Stockfish 15.1)" in err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.json"))


def test_the_ladder_a_build_plays_is_found_by_its_searches(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two ladders side by side, a folder each: the build is matched to the one its searches
    fit, under whatever name it reports."""
    other = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NODES", "1")
    monkeypatch.setenv("FAULT_NAME", "Stockfish 17.1")
    for folder in ("stockfish-17.1", "stockfish-15.1"):
        (tmp_path / folder).mkdir()
    default = write_ladder(tmp_path / "stockfish-17.1" / "ladder.csv", "Stockfish 17.1")
    fingerprint.of_binary(other).write(fingerprint_path(default))
    mine = write_ladder(tmp_path / "stockfish-15.1" / "ladder.csv", engine_identity(stockfish))
    fingerprint.of_binary(stockfish).write(fingerprint_path(mine))
    assert ladder_of("Stockfish 15.1 WASM", stockfish, tmp_path, default) == mine
    assert ladder_of("Stockfish 17.1", other, tmp_path, mine) == default


LADDER_171 = REFERENCE_LADDER


def test_npms_webassembly_build_plays_the_native_171_ladder_and_is_named(
        tmp_path: Path, wasm_stockfish: str) -> None:
    """The committed 17.1 ladder was measured with Debian 13's native Stockfish 17.1; npm's
    WebAssembly build reports another name and searches identically, so play finds that
    ladder by its searches, uses it, and records which build ran."""
    recorded = fingerprint.read(fingerprint_path(LADDER_171))
    assert recorded is not None and recorded.engine == "Stockfish 17.1"
    assert engine_identity(wasm_stockfish) == "Stockfish 17.1 WASM"
    assert ladder_of("Stockfish 17.1 WASM", wasm_stockfish) == LADDER_171
    args = ["play", "--model", "random", "--out", str(tmp_path / "out"), "--max-games", "2",
            "--ply-cap", "12", "--stockfish", wasm_stockfish]
    assert benchmark.main(args) == 0
    [result] = (tmp_path / "out").glob("play__*.json")
    data = json.loads(result.read_text())
    assert data["settings"]["rungs_engine"] == "Stockfish 17.1 WASM"
    assert data["ladder"]["engine"] == "Stockfish 17.1"


def test_stockfish_15_1_posing_as_17_1_is_refused_by_its_searches(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    posing = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NAME", "Stockfish 17.1")
    assert engine_identity(posing) == "Stockfish 17.1"
    assert benchmark.main(_play(LADDER_171, tmp_path / "out", posing)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "searches differently" in err
    assert "position 1 (" in err and "Stockfish 15.1 plays" not in err  # named by searches
    assert "make engine" in err and "stockfish-17.1 (Stockfish 17.1)" in err
    # Found by its searches, it is what it is: 15.1, whose ladder is the first one.
    assert ladder_of("Stockfish 17.1", posing) == FIRST_LADDER
