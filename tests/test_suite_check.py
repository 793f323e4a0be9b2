"""The suite's own check: without the shared folder or an engine it stops before it starts, in
one line saying what is missing and how to get it, once under xdist too; with everything there,
the tests run as before. Each case is a real pytest in a subprocess, on a small real test file."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA, DESIGN_NOTE, MAIA, ROOT, SHARED_ENV

TINY = "tests/test_see.py"  # quick tests that need nothing from the shared folder


def _pytest(env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    """pytest on TINY, as `make test` runs it, in a fresh process with `env` on top of ours
    (MAIA_NETS unset: the conftest derives it from the shared folder)."""
    base = {k: v for k, v in os.environ.items() if k not in ("MAIA_NETS", SHARED_ENV)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *extra, TINY], cwd=ROOT, env=base | env, capture_output=True,
                          text=True, timeout=300)


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("Exit: the test suite needs what is missing: ")
    return line


@pytest.mark.parametrize("workers", [[], ["--numprocesses", "2"]])
def test_no_shared_folder_is_one_line_before_anything_runs(tmp_path: Path,
                                                           workers: list[str]) -> None:
    line = _one_line(_pytest({SHARED_ENV: str(tmp_path / "nowhere")}, *workers))
    assert "19 of the 19 Lichess sample files" in line
    assert f"9 of the 9 Maia nets in {tmp_path / 'nowhere' / 'data' / 'maia'}" in line
    assert f"{tmp_path / 'nowhere' / 'seeds' / DESIGN_NOTE.name}" in line
    assert f"{SHARED_ENV}=DIR" in line and "beside the clone" in line and "make maia" in line
    assert "Stockfish" not in line  # the engine is there


def test_only_what_is_missing_is_named(tmp_path: Path) -> None:
    """A shared folder with the real samples and the design note but no Maia nets."""
    shared = tmp_path / "shared"
    (shared / "data").mkdir(parents=True)
    (shared / "data" / "lichess").symlink_to(DATA)
    (shared / "seeds").symlink_to(DESIGN_NOTE.parent)
    line = _one_line(_pytest({SHARED_ENV: str(shared)}))
    assert "Maia nets" in line and "Lichess sample" not in line
    assert DESIGN_NOTE.name not in line
    # The nets beside, and a Stockfish named that is no engine: only the engine is missing.
    (shared / "data" / "maia").symlink_to(MAIA)
    line = _one_line(_pytest({SHARED_ENV: str(shared),
                              "STOCKFISH_PATH": str(tmp_path / "no-stockfish")}))
    assert line.endswith("a Stockfish: 'make setup' provides one (or set STOCKFISH_PATH)")
    assert "Maia" not in line and "shared folder" not in line


@pytest.mark.parametrize("workers", [[], ["--numprocesses", "2"]])
def test_with_everything_there_the_tests_run(workers: list[str]) -> None:
    done = _pytest({}, *workers)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^\d+ passed in ", done.stdout, re.MULTILINE), done.stdout
    assert "failed" not in done.stdout and "needs what is missing" not in done.stderr
