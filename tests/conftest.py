"""Shared fixtures: the real data samples, the real engine, a small HTTP server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import csv
import os
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import dask  # noqa: E402

from chess_eval.cluster import PROCESSES_KEY  # noqa: E402
from chess_eval.engine import find_stockfish, npm_engine  # noqa: E402
from chess_eval.errors import EngineNotFoundError  # noqa: E402
from tests.httpserver import FileServer  # noqa: E402

# The embedded Dask cluster runs its workers as threads of the test process (the issue's
# choice for most tests: seconds faster, and a monkeypatched engine setting reaches them).
# Tests that start a step as a program, and tests/test_cluster.py, use real processes.
dask.config.set({PROCESSES_KEY: False})

# A result file's created_at is the time it was written, unless SOURCE_DATE_EPOCH is set: the
# tests that compare a resumed run's bytes with an undisturbed run's (made a little earlier)
# fix it, here and in every process they start, as a reproducible build does.
os.environ.setdefault("SOURCE_DATE_EPOCH", "1764028800")

# The suite's engine: the one the plain lookup finds first (Debian's native build, where
# `make test` installs it), for every command a test runs. Without it every command prefers
# a build the reference ladder serves (the portable 17.1, slower here); the tests of that
# preference clear this variable.
with contextlib.suppress(EngineNotFoundError):  # the tests that need an engine say so
    os.environ.setdefault("STOCKFISH_PATH", find_stockfish(None))

# The Inspect tasks' stores (they outlive an eval): a folder of this test session's, not the
# user's ~/.cache.
os.environ.setdefault("CHESS_EVAL_CACHE", tempfile.mkdtemp(prefix="chess_eval_cache_"))

# The project's shared folder beside the clone (../shared, as CI has it): the real Lichess
# samples, the Maia nets and a design note the tests read. CHESS_EVAL_SHARED names another
# (the test of the check below points it at folders that lack them).
SHARED_ENV = "CHESS_EVAL_SHARED"
SHARED = Path(os.environ.get(SHARED_ENV) or ROOT.parent / "shared")

# The Maia-1 nets: the shared folder that holds them (no download from the tests).
MAIA = SHARED / "data" / "maia"
os.environ.setdefault("MAIA_NETS", str(MAIA))

DATA = SHARED / "data" / "lichess"
GAMES = DATA / "games"
PUZZLES = DATA / "puzzles"
GAME_FILES = sorted(GAMES.glob("*.pgn.zst"))
STRONG = DATA / "games-strong"
STRONG_FILES = sorted(STRONG.glob("*.pgn.zst"))
MORE = DATA / "games-more"  # arena exports and a slice of a 2025 monthly dump
MORE_FILES = sorted(MORE.glob("*.pgn.zst"))
STRONG_MORE = DATA / "games-strong-more"  # more Elite Database months: no Site, no Date
STRONG_MORE_FILES = sorted(STRONG_MORE.glob("*.pgn.zst"))
ARENA_BLITZ = MORE / "lichess_arena_2025-03-25_daily-blitz.pgn.zst"
MONTHLY_2025 = MORE / "lichess_db_standard_rated_2025-05.first438.pgn.zst"
# Every games file the committed set is built from, in the documented command's order.
ALL_GAME_FILES = GAME_FILES + MORE_FILES + STRONG_FILES + STRONG_MORE_FILES
ELITE_NO_ID = STRONG / "lichess_elite_2015-11.pgn.zst"  # no Site, no LichessId
ELITE_LICHESS_ID = STRONG / "lichess_elite_2015-03.pgn.zst"  # no Site, LichessId tags
MONTHLY = GAMES / "lichess_db_standard_rated_2021-10.first999.pgn.zst"
PUZZLES_44K = PUZZLES / "lichess_db_puzzle.sample44k.csv.zst"
PUZZLES_1K = PUZZLES / "lichess_db_puzzle.random1k.csv.zst"
DESIGN_NOTE = SHARED / "seeds" / "000_4ab30cf054e00e1a.txt"  # tests/testset/test_tree.py's


def missing() -> list[str]:
    """What the suite needs that is not there, each with how to get it (empty: all there)."""
    from chess_eval.benchmark.players.maia import NETS

    samples = [MONTHLY, ARENA_BLITZ, MONTHLY_2025, ELITE_NO_ID, ELITE_LICHESS_ID, PUZZLES_44K,
               PUZZLES_1K, *(STRONG_MORE / f"lichess_elite_2014-{m:02}.pgn.zst"
                             for m in range(1, 13))]
    nets = Path(os.environ.get("MAIA_NETS") or MAIA)
    said = []
    if lacking := [p for p in samples if not p.is_file()]:
        said.append(f"{len(lacking)} of the {len(samples)} Lichess sample files the tests name "
                    f"under {DATA} (e.g. {lacking[0].name})")
    if lacking := [n for n in NETS if not (nets / f"maia-{n}.pb.gz").is_file()]:
        said.append(f"{len(lacking)} of the {len(NETS)} Maia nets in {nets} (or run 'make "
                    "maia' and set MAIA_NETS=data/maia)")
    if not DESIGN_NOTE.is_file():
        said.append(f"{DESIGN_NOTE}")
    if said:
        said[-1] += (f": put the project's shared folder beside the clone ({ROOT.parent}/shared, "
                     f"as CI has it) or name it with {SHARED_ENV}=DIR")
    try:
        find_stockfish(None)
    except EngineNotFoundError:
        said.append("a Stockfish: 'make setup' provides one (or set STOCKFISH_PATH)")
    return said


def pytest_configure(config: pytest.Config) -> None:
    """Stop before anything runs, in one line, when what the suite needs is missing (else
    hundreds of tests fail one by one, each on a missing file). The controller checks; an
    xdist worker never starts then."""
    if hasattr(config, "workerinput") or config.option.help or config.option.version:
        return
    if lacking := missing():
        pytest.exit("the test suite needs what is missing: " + "; ".join(lacking),
                    returncode=pytest.ExitCode.USAGE_ERROR)


# The files whose tests share the pipeline's small build: one xdist worker runs them all, so
# the build (a minute of engine time) is made once, not once per worker.
BUILD_GROUP = "small_build"


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each file one xdist group (`--dist loadgroup` then keeps a file and its fixtures on
    one worker), the files that use `small_build` one group together."""
    built = {item.path for item in items if "small_build" in getattr(item, "fixturenames", ())}
    for item in items:
        name = BUILD_GROUP if item.path in built else item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(name))


def evaluated(db: Path) -> int:
    """Positions step 06 has stored in its SQLite cache so far (0 before the table exists)."""
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM evals").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def stored_answers(cache: Path) -> int:
    """Answers committed to a run's cache so far (0 before its table exists, or while a
    writer holds the lock)."""
    try:
        with sqlite3.connect(cache, timeout=0.1) as db:
            return int(db.execute("SELECT count(*) FROM answers").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def first_questions(folder: Path, n: int) -> Path:
    """A questions file of the first `n` rows of the committed questions.csv, in `folder`."""
    with open(ROOT / "questions.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[:n + 1]
    path = folder / "q.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    return path


def unzstd(path: Path) -> bytes:
    """The decompressed content of a .zst file."""
    with open(path, "rb") as handle:
        return zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True).read()


@pytest.fixture(scope="session")
def stockfish() -> str:
    """Path of the real Stockfish binary."""
    return find_stockfish(None)


@pytest.fixture(scope="session")
def wasm_stockfish() -> str:
    """Path of npm's WebAssembly Stockfish 17.1, which `make engine` installs (`make test`
    runs it first): a second real build for the tests of identity by behaviour."""
    path = npm_engine()
    if path is None:
        pytest.fail("npm's Stockfish is not installed: run 'make engine'")
    return path


@pytest.fixture()
def file_server() -> Iterator[FileServer]:
    """An HTTP server on 127.0.0.1 serving files the test registers."""
    server = FileServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def small_build(tmp_path_factory: pytest.TempPathFactory, stockfish: str) -> Path:
    """A whole pipeline run at scale 0.05 on real games and the real 1k puzzle sample."""
    import generate

    out = tmp_path_factory.mktemp("build")
    argv = ["--out", str(out), "--questions", str(out / "questions.csv"), "--scale", "0.05",
            "--games-source", str(MONTHLY), "--puzzles-source", str(PUZZLES_1K),
            "--workers", "2", "--stockfish", stockfish]
    assert generate.main(argv) == 0
    return out


def fault_engine(tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch, mode: str,
                 fail_at: str) -> str:
    """An executable wrapping the real Stockfish that dies or stalls at the given `go`s."""
    script = tmp_path / "fault-engine"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'tests' / 'faultengine.py'}\n")
    script.chmod(0o755)
    monkeypatch.setenv("FAULT_ENGINE", stockfish)
    monkeypatch.setenv("FAULT_COUNTER", str(tmp_path / "go-count"))
    monkeypatch.setenv("FAULT_MODE", mode)
    monkeypatch.setenv("FAULT_AT", fail_at)
    return str(script)
