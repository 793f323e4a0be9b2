"""print.py on a small real build: tables, --json and --plot."""

import csv
import importlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from chess_eval.testset.summary import why_short
from tests.conftest import ROOT


def _print(build: Path, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, str(ROOT / "print.py"), "--build", str(build),
            "--questions", str(build / "questions.csv"), *extra]
    return subprocess.run(argv, capture_output=True, text=True, check=True)


def test_json_summary_matches_the_files(small_build: Path) -> None:
    data = json.loads(_print(small_build, "--json").stdout)
    assert {s["fingerprint"] for s in data["steps"]} == {"current"}
    assert {s["step"] for s in data["steps"]} == {1, 2, 3, 4, 5, 6}
    report = json.loads((small_build / "positions_report.json").read_text())
    games = data["tree"]["leaves"]["Games"]
    assert sum(r["achieved"] for r in games) == report["selected"]
    assert sum(r["target"] for r in games) == 40
    puzzles = data["tree"]["leaves"]["Puzzles"]
    assert sum(r["target"] for r in puzzles) == 10
    evaluation = data["evaluation"]
    assert evaluation["questions"] == report["selected"] + sum(r["achieved"] for r in puzzles)
    assert evaluation["engine"][0].startswith("Stockfish")
    [drops] = [r for r in data["dropped games"] if r["file"] == "all"]
    assert drops["bullet"] == 293 and drops["bot"] == 1
    assert 835 <= data["puzzle ratings"]["min"] <= data["puzzle ratings"]["max"] <= 2147


def test_tables_mark_shortfalls(small_build: Path) -> None:
    text = _print(small_build).stdout
    for title in ("== tree", "== steps", "== game selection", "== evaluation"):
        assert title in text
    # The 1k puzzle sample has no puzzle above 2147: those leaves are marked short.
    puzzles = text.split("|-- Puzzles" if "|-- Puzzles" in text else "`-- Puzzles")[1]
    assert "SHORT" in puzzles


def test_fresh_clone_shows_the_committed_tree_from_questions_alone(tmp_path: Path) -> None:
    shutil.copy(ROOT / "questions.csv", tmp_path / "questions.csv")
    result = subprocess.run([sys.executable, str(ROOT / "print.py")], cwd=tmp_path,
                            capture_output=True, text=True, check=True)
    with open(ROOT / "questions.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    games = sum(r["source"] == "game" for r in rows)
    lines = result.stdout.splitlines()
    top = next(line for line in lines if line.startswith("All (1000)"))
    assert f"achieved {len(rows)}" in top
    assert any(line.startswith("|-- Games (800)") and f"achieved {games}" in line
               for line in lines)
    # The seed's drawing: branches and indentation kept, leaves four levels down.
    assert any(line.startswith("|   |   |   |   |-- White (") for line in lines)
    assert any(line.startswith("    |-- (0, 1400) ELO (") for line in lines)


def test_out_reads_the_questions_file_that_build_wrote(small_build: Path) -> None:
    argv = [sys.executable, str(ROOT / "print.py"), "--build", str(small_build), "--json"]
    data = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    assert data["tree"]["file"].endswith(str(small_build / "questions.csv"))
    assert data["tree"]["scale"] == 0.05


def test_json_into_a_closed_pipe_is_quiet(small_build: Path) -> None:
    argv = f"{sys.executable} {ROOT / 'print.py'} --build {small_build} --json | head -1"
    result = subprocess.run(["bash", "-o", "pipefail", "-c", argv], capture_output=True,
                            text=True)
    assert result.stdout.strip() == "{"
    assert "Traceback" not in result.stderr and result.returncode == 0


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


def test_every_chart_has_a_title_and_axis_labels(small_build: Path, tmp_path: Path,
                                                 monkeypatch) -> None:
    printer = importlib.import_module("print")
    figures = []
    monkeypatch.setattr(printer, "save_figure", lambda fig, path: figures.append(fig) or path)
    args = printer.build_parser().parse_args(["--build", str(small_build)])
    data = printer.collect(args)
    assert len(printer.plot(data, printer.questions_path(args), tmp_path)) == len(figures) >= 4
    for fig in figures:
        ax = fig.axes[0]
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def test_the_old_out_option_still_names_the_build(small_build: Path) -> None:
    printer = importlib.import_module("print")
    assert printer.build_parser().parse_args(["--out", str(small_build)]).build == small_build


def test_a_build_summary_says_per_file_and_why_short_and_a_fresh_clone_reads_it(
        small_build: Path, tmp_path: Path) -> None:
    summary_path = tmp_path / "data" / "testset_build.json"
    summary_path.parent.mkdir()
    _print(small_build, "--summary", str(summary_path))
    summary = json.loads(summary_path.read_text())
    report = json.loads((small_build / "positions_report.json").read_text())
    with sqlite3.connect(small_build / "games.db") as conn:
        kept = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    [source] = summary["sources"]  # the build read one games file
    assert source["file"] == "lichess_db_standard_rated_2021-10.first999.pgn.zst"
    assert source["kept"] == kept and source["dropped"]["bullet"] == 293
    assert summary["selection"]["selected"] == report["selected"]
    short = [r for r in report["leaves"] if r["shortfall"]]
    assert summary["short_game_leaves"] == short and short
    # Beside a copy of the build's questions file (a fresh clone has no build), print.py
    # says why each bucket is short from the summary alone.
    shutil.copy(small_build / "questions.csv", tmp_path / "questions.csv")
    text = subprocess.run([sys.executable, str(ROOT / "print.py"), "--scale", "0.05"],
                          cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    why = text.split("== why short")[1].split("==")[0]
    buckets = {r["elo_bucket"] for r in short}
    assert sum(line.split(":")[0] in buckets for line in why.splitlines()) == len(buckets)
    assert f"at most {report['max_per_player']} positions a player" in why
    # A summary of another file is not taken for this one.
    (tmp_path / "questions.csv").write_text((tmp_path / "questions.csv").read_text() + "\n")
    text = subprocess.run([sys.executable, str(ROOT / "print.py"), "--scale", "0.05"],
                          cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "no build summary describes this file" in text


def test_summary_without_a_build_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "print.py"), "--summary",
                             str(tmp_path / "s.json")], capture_output=True, text=True)
    assert result.returncode == 2 and "--summary needs --build" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "s.json").exists()


def test_why_short_names_the_mate_rows_step_06_dropped() -> None:
    """The committed build dropped no mate row; the same summary with two dropped says so
    in a line of its own, beside the leaves' reasons."""
    committed = json.loads((ROOT / "data" / "testset_build.json").read_text())
    lines = why_short(committed)
    assert not any(line.startswith("mates:") for line in lines)
    dropped = why_short({**committed, "mates_dropped_for_cap": 2})
    assert dropped[:-1] == lines and dropped[-1].startswith("mates: step 06 dropped 2 mate")
