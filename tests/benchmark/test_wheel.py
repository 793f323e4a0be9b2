"""The package as a pip user gets it: the wheel built from this clone, installed into a fresh
venv outside the clone, run from another directory (the static task, a short games task
against the reference ladder and the CLI's `run`), reading only what ships inside it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from chess_eval.benchmark.core.server import PlayerServer
from tests.benchmark.inspect_helpers import ENDPOINT, MODEL, metrics, service
from tests.conftest import ROOT

# The files a task or command reads at run time, as the wheel must hold them.
SHIPPED = ("chess_eval/_data/questions.csv", "chess_eval/_data/data/openings.csv",
           "chess_eval/_data/data/ladders/stockfish-17.1/ladder.csv",
           "chess_eval/_data/data/human/lichess_anchors.csv",
           "chess_eval/_data/data/game_elo_fit.json",
           "chess_eval/benchmark/leaderboard/templates/index.html",
           "chess_eval/benchmark/leaderboard/assets/site.css")


def _tracked_copy(to: Path) -> Path:
    """The files git tracks, copied (links kept as links): the wheel is built from what a
    clone holds, never from downloads or build leftovers in this one (the Maia nets)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source, target = ROOT / name, to / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():  # (a file deleted in the working tree is left out)
            shutil.copy2(source, target)
    return to


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fresh venv holding the wheel (the project's pinned dependencies reached through a
    path entry, so nothing is downloaded), and the wheel itself."""
    where = tmp_path_factory.mktemp("wheel")
    source = _tracked_copy(where / "source")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "--quiet", "-w", str(where), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = where.glob("chess_eval-*.whl")
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--quiet", "--no-deps", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # The dependencies from this venv: a plain path line, so that its .pth files (the clone's
    # editable install among them) are not read and the clone stays out of sight.
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv, wheel


def _env(tmp: Path, base_url: str, stockfish: str) -> dict[str, str]:
    """A user's environment: the venv's scripts first, caches of its own, the served player."""
    env = {**service(base_url), "STOCKFISH_PATH": stockfish,
           "CHESS_EVAL_CACHE": str(tmp / "cache"), "XDG_CACHE_HOME": str(tmp / "xdg")}
    env.pop("PYTHONPATH", None)  # nothing of the clone's on the path
    return env


def test_the_wheel_holds_what_the_tasks_read_and_no_top_level_lib(
        installed: tuple[Path, Path]) -> None:
    names = zipfile.ZipFile(installed[1]).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("chess_eval-")}
    assert tops == {"chess_eval"}
    assert [n for n in SHIPPED if n not in names] == []
    assert not [n for n in names if "/maia/" in n]  # the GPL-3 nets never ship


def test_from_another_directory_the_tasks_and_the_cli_run_on_the_shipped_files(
        installed: tuple[Path, Path], served: PlayerServer, wasm_stockfish: str,
        tmp_path: Path) -> None:
    venv, _ = installed
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _env(tmp_path, served.base_url, wasm_stockfish)
    bin_dir = venv / "bin"
    where = subprocess.run([str(bin_dir / "python"), "-c", "import chess_eval, sys; "
                            "print(chess_eval.__file__)"], cwd=elsewhere, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv)), where  # the installed package, not the clone's

    run = subprocess.run([str(bin_dir / "chess-eval"), "run", "--model", "random", "--limit",
                          "5", "--out", "results"], cwd=elsewhere, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    [result] = (elsewhere / "results").glob("static*.json")
    got = json.loads(result.read_text(encoding="utf-8"))
    assert got["asked"] == 5 and got["complete"]
    # The committed set, read from the venv's own copy.
    assert got["questions_sha256"] == hashlib.sha256(
        (ROOT / "questions.csv").read_bytes()).hexdigest()
    assert got["questions"].startswith(str(venv)), got["questions"]

    for task, args in (("static", ["limit=5"]),
                       ("games", ["max_games=2", f"endpoint_id={ENDPOINT}"])):
        argv = [str(bin_dir / "python"), "-m", "inspect_ai", "eval", f"chess_eval/{task}",
                "--model", MODEL, "--log-dir", str(tmp_path / "logs" / task), "--display",
                "none"]
        for arg in args:
            argv += ["-T", arg]
        done = subprocess.run(argv, cwd=elsewhere, env={**env, "PATH": f"{bin_dir}:"
                                                        f"{os.environ['PATH']}"},
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        [path] = (tmp_path / "logs" / task).glob("*.eval")
        log = read_eval_log(str(path))
        assert log.status == "success", log.error
        assert metrics(log), task
