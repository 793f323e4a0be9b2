"""Step 06: questions.csv format, byte-identical reruns, resume after kill -9."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess
import pytest

from chess_eval import engine as engine_mod
from chess_eval.testset.questions import COLUMNS
from tests.conftest import ROOT, evaluated, fault_engine
from tests.testset.steps import step

evaluate = step("06_evaluate")
FAST = ["--scan-nodes", "20000", "--near-nodes", "40000", "--move-nodes", "20000",
        "--max-candidates", "3"]


def _copy_inputs(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("positions.csv", "puzzles.csv"):
        shutil.copy(src / name, dst / name)


def test_questions_csv_format(small_build: Path) -> None:
    with open(small_build / "questions.csv", newline="") as handle:
        reader = csv.DictReader(handle)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    sources = {r["source"] for r in rows}
    assert sources == {"game", "puzzle"}
    assert len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        board = chess.Board(row["prompt"])
        moves = json.loads(row["expected_output"])
        assert sorted(u for u, _ in moves) == sorted(m.uci() for m in board.legal_moves)
        assert [cp for _, cp in moves] == sorted((cp for _, cp in moves), reverse=True)
        assert int(row["legal_moves"]) == len(moves)
        assert row["private"] in ("true", "false")
        assert row["engine"].startswith("Stockfish") and int(row["nodes"]) > 0
        if row["source"] == "game":
            replay = chess.Board()
            for san in row["history"].split():
                replay.push_san(san)
            assert replay.fen(en_passant="legal") == row["prompt"]
            assert chess.Move.from_uci(row["played_move"]) in board.legal_moves
        else:
            assert row["solution"].split()[0] in {u for u, _ in moves}
            assert row["rating"].isdigit() and row["puzzle_id"]


def test_two_runs_are_byte_identical(small_build: Path, tmp_path: Path,
                                     stockfish: str) -> None:
    outputs = []
    for name, workers in (("a", "2"), ("b", "1")):
        out = tmp_path / name
        _copy_inputs(small_build, out)
        argv = ["--out", str(out), "--questions", str(out / "q.csv"), "--workers", workers,
                "--stockfish", stockfish, *FAST]
        assert evaluate.main(argv) == 0
        outputs.append((out / "q.csv").read_bytes())
    assert outputs[0] == outputs[1]


def test_resume_after_kill_9_redoes_only_what_was_in_flight(
        small_build: Path, tmp_path: Path, stockfish: str) -> None:
    _copy_inputs(small_build, tmp_path)
    argv = [sys.executable, str(ROOT / "steps" / "06_evaluate.py"), "--out", str(tmp_path),
            "--questions", str(tmp_path / "q.csv"), "--workers", "2", "--stockfish", stockfish,
            # Searches deep enough that the kill lands with most positions still to do.
            "--scan-nodes", "50000", "--near-nodes", "50000", "--move-nodes", "50000"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 120
    while evaluated(tmp_path / "evals.db") < 5 and time.time() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = evaluated(tmp_path / "evals.db")
    assert done >= 5
    assert not (tmp_path / "q.csv").exists()
    assert subprocess.run(argv, capture_output=True).returncode == 0
    report = json.loads((tmp_path / "evaluation_report.json").read_text())
    assert report["reused"] == done
    assert report["evaluated_now"] == report["positions"] - done
    with open(tmp_path / "q.csv", newline="") as handle:
        # Every position is a row, but for mate rows over the 4% cap of this small file.
        assert len(list(csv.DictReader(handle))) >= (report["positions"]
                                                     - report["mates_dropped_for_cap"])


def test_missing_inputs_are_a_clear_error(tmp_path: Path, stockfish: str, capsys) -> None:
    argv = ["--out", str(tmp_path), "--questions", str(tmp_path / "q.csv"),
            "--stockfish", stockfish]
    assert evaluate.main(argv) == 2
    assert "run step 03 first" in capsys.readouterr().err


@pytest.mark.parametrize(("mode", "fail_at"), [("die", "4,40"), ("stall", "6")])
def test_crashes_and_stalls_give_byte_identical_output(
        small_build: Path, tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch,
        mode: str, fail_at: str) -> None:
    # The wrapper dies (or goes silent) on these `go` commands, counted over the whole run;
    # each failed position is redone from scratch on a fresh engine. Two faults at most,
    # so no position can fail all three of its attempts.
    monkeypatch.setattr(engine_mod, "STALL_SLACK_S", 3.0)
    outputs = []
    for name, path in (("plain", stockfish),
                       ("faulty", fault_engine(tmp_path, stockfish, monkeypatch, mode, fail_at))):
        out = tmp_path / name
        _copy_inputs(small_build, out)
        argv = ["--out", str(out), "--questions", str(out / "q.csv"), "--workers", "2",
                "--stockfish", path, *FAST]
        assert evaluate.main(argv) == 0
        outputs.append((out / "q.csv").read_bytes())
    assert outputs[0] == outputs[1]
    gos = int((tmp_path / "go-count").read_text())
    assert gos > max(int(n) for n in fail_at.split(","))  # every fault was reached
