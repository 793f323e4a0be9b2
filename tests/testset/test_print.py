"""print.py on a small real build: tables, --json and --plot."""

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def _print(build: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, str(ROOT / "print.py"), "--out", str(build),
            "--questions", str(build / "questions.csv"), *extra]
    return subprocess.run(argv, capture_output=True, text=True, check=True)


def test_json_summary_matches_the_files(small_build: Path) -> None:
    data = json.loads(_print(small_build, "--json").stdout)
    assert {s["fingerprint"] for s in data["steps"]} == {"current"}
    assert {s["step"] for s in data["steps"]} == {1, 2, 3, 4, 5, 6}
    report = json.loads((small_build / "positions_report.json").read_text())
    games_top = [r for r in data["games tree"] if not r["node"].startswith(" ")]
    assert sum(r["achieved"] for r in games_top) == report["selected"]
    assert sum(r["target"] for r in games_top) == 40
    puzzles_top = [r for r in data["puzzles tree"] if not r["node"].startswith(" ")]
    assert sum(r["target"] for r in puzzles_top) == 10
    evaluation = data["evaluation"]
    assert evaluation["questions"] == report["selected"] + sum(
        r["achieved"] for r in puzzles_top)
    assert evaluation["engine"][0].startswith("Stockfish")
    drops = {r["reason"]: r["count"] for r in data["dropped games"]}
    assert drops["bullet"] == 293
    assert 835 <= data["puzzle ratings"]["min"] <= data["puzzle ratings"]["max"] <= 2147


def test_tables_mark_shortfalls(small_build: Path) -> None:
    text = _print(small_build).stdout
    for title in ("== steps", "== games tree", "== puzzles tree", "== evaluation"):
        assert title in text
    # The 1k puzzle sample has no puzzle above 2147: those leaves are marked short.
    assert "SHORT" in text.split("== puzzles tree")[1]


def test_stale_fingerprint_and_plots(small_build: Path, tmp_path: Path) -> None:
    plots = tmp_path / "plots"
    result = _print(small_build, "--plot", str(plots))
    assert {p.name for p in plots.iterdir()} >= {"games_tree.png", "legal_moves.png"}
    assert "wrote" in result.stderr
    state = json.loads((small_build / ".steps.json").read_text())
    saved = json.dumps(state)
    state["06_evaluate"]["params"] = "something else"
    (small_build / ".steps.json").write_text(json.dumps(state))
    try:
        data = json.loads(_print(small_build, "--json").stdout)
        status = {s["step"]: s["fingerprint"] for s in data["steps"]}
        assert status[6] == "stale" and status[5] == "current"
    finally:
        (small_build / ".steps.json").write_text(saved)


def test_empty_directory_says_not_built(tmp_path: Path) -> None:
    text = _print(tmp_path).stdout
    assert "(not built yet)" in text
