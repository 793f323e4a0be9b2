"""The exit-code contract (chess_eval/exits.py, tabled in docs/results-schema.md), command by
command: interrupted (a real SIGINT to a real process), incomplete (a real failing server or
engine), failed (a real bad input). Each cell of the table is one case here."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import pytest

import benchmark
from chess_eval.benchmark.ladders.calibration import CalibrationGame, read_games, write_games
from chess_eval.engine import engine_identity
from chess_eval.exits import Exit
from tests.benchmark.chatserver import ChatServer, Response
from tests.conftest import PUZZLES_1K, ROOT, fault_engine

QUESTIONS = ROOT / "questions.csv"


def _legal(fen: str) -> str:
    return sorted(m.uci() for m in chess.Board(fen).legal_moves)[0]


def _model(url: str, out: Path) -> list[str]:
    return ["--model", "local/m", "--base-url", url, "--out", str(out), "--retries", "0",
            "--timeout", "5"]


# What each model-talking command needs to run briefly against the server.
ASKING = {
    "run": ["run", "--limit", "6", "--questions", str(QUESTIONS)],
    "play": ["play", "--max-games", "2", "--ply-cap", "12", "--concurrency", "1"],
    "puzzles": ["puzzles", "--puzzles", str(PUZZLES_1K), "--max-puzzles", "4"],
    "worldmodel": ["worldmodel", "--limit", "3", "--questions", str(QUESTIONS),
                   "--temperatures", "0"],
    "match": ["match", "--opponent", "random", "--max-games", "2"],
}


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("command", sorted(ASKING))
def test_a_run_whose_endpoint_refuses_it_leaves_nothing_behind(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--base-url where nothing listens: one line, exit 2, and nothing in the folder (before,
    the cache, books/ with a line of one request 'sent', traces/ and a claim were left)."""
    out = tmp_path / "out"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    status = benchmark.main([*ASKING[command], *_model(url, out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == Exit.ERROR and "refused (is the server running?)" in err[-1]
    assert len(err) == 1, err
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == []


@pytest.mark.parametrize("command", sorted(ASKING))
def test_an_interrupted_command_exits_130_and_writes_no_result(command: str,
                                                               tmp_path: Path) -> None:
    """SIGINT while the model has a question: 130, and no result file (a rerun resumes)."""
    with ChatServer(lambda fen, attempt: Response(hang=True)) as server:
        proc = subprocess.Popen([sys.executable, "benchmark.py", *ASKING[command],
                                 *_model(server.base_url, tmp_path)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and \
                sum(server.calls.values()) < 2:  # the preflight, then a question
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[1]
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == Exit.INTERRUPTED, err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("*.json"))
    if command == "run":  # where the answers are, not a count that misses those in flight
        assert "every answer bought is kept in" in err


@pytest.mark.parametrize("command", sorted(ASKING))
def test_one_infrastructure_failure_writes_an_incomplete_result_and_exits_3(
        command: str, tmp_path: Path) -> None:
    """Some requests fail after their retries, fewer than --breaker in a row: the result
    is written, marked incomplete with its reason, and the exit status is 3."""
    failing: set[str] = set()

    def script(fen: str, attempt: int) -> Response:
        if not failing and fen != chess.STARTING_FEN:
            failing.add(fen)  # the first position asked after the start fails, always
        return Response(status=500) if fen in failing else \
            Response(f"Final answer: {_legal(fen)}")
    with ChatServer(script) as server:
        status = benchmark.main([*ASKING[command], *_model(server.base_url, tmp_path),
                                 "--breaker", "50"])
    assert status == Exit.INCOMPLETE
    [result] = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert result["complete"] is False and "infrastructure" in result["incomplete_reason"]


@pytest.mark.parametrize("finished", [True, False])
def test_a_match_the_breaker_stops_writes_what_finished_or_fails(
        finished: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    """Every game after the first pair aborts (its requests fail after their retries):
    the breaker stops the match after --breaker of them in a row; the finished pair is
    written, incomplete and saying why (exit 3). With none finished, nothing is written
    (exit 2), as for play."""
    moves = [0]
    lock = threading.Lock()

    def script(fen: str, attempt: int) -> Response:
        with lock:  # the first pair's four moves (two a game, --ply-cap 4) are answered
            moves[0] += 1
            good = finished and moves[0] <= 4
        return Response(f"Final answer: {_legal(fen)}") if good else Response(status=500)
    with ChatServer(script) as server:
        status = benchmark.main(["match", "--opponent", "random", "--max-games", "20",
                                 "--ply-cap", "4", "--no-book", "--breaker", "2",
                                 *_model(server.base_url, tmp_path)])
    said = capsys.readouterr().err + caplog.text  # the line, logged or printed
    assert "stopped after 2 games in a row were aborted for infrastructure reasons" in said
    results = [json.loads(p.read_text()) for p in tmp_path.glob("match__*.json")]
    if not finished:
        assert status == Exit.ERROR and results == []
        return
    [result] = results
    assert status == Exit.INCOMPLETE and result["complete"] is False
    assert result["pairs"] == 1 and result["aborted"] == 2
    assert result["incomplete_reason"].startswith("stopped after 2 games in a row")


def test_an_engine_that_crashes_mid_match_fails_it_and_the_books_say_what_was_bought(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The engine (the judge's and the opponent's) dies at every search from its 15th on, a
    real crash each time: the match fails in one line (exit 2), writes no result, releases
    its claim, and its run writes the books itself: every reply the provider completed."""
    dies = fault_engine(tmp_path, stockfish, monkeypatch, "die", ",".join(map(str, range(15, 400))))
    out = tmp_path / "out"
    with ChatServer(lambda fen, n: Response(f"Final answer: {_legal(fen)}"), price=0.01) as server:
        status = benchmark.main(["match", "--opponent", "stockfish:nodes=1", "--max-games", "4",
                                 "--ply-cap", "30", "--stockfish", dies,
                                 *_model(server.base_url, out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == Exit.ERROR and len(err) == 1 and "the engine failed 3 times" in err[0]
    [book] = (out / "books").glob("match__*.jsonl")
    [line] = [json.loads(x) for x in book.read_text().splitlines()]
    assert line["replies_completed"] == line["requests_sent"] == server.billed > 0
    assert sorted(p.name for p in out.iterdir()) == ["books", "match.db"]  # no claim left


def test_a_calibration_with_an_aborted_game_writes_its_games_and_exits_3(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine that dies three times over on one position aborts that game: the other
    games are written and the ladder is fitted, and the exit status is 3; once the engine
    is mended, the rerun plays the aborted game and exits 0."""
    (tmp_path / "rungs.csv").write_text(
        "rung,spec,anchor\nmix80@1,\"mix:random=80,nodes=300\",\nsf300@1,"
        "stockfish:nodes=300,1000\n")
    # Earlier games between the two rungs, some of each result, so the fit is identified
    # whatever the new games give.
    earlier = [CalibrationGame("standard", "mix80@1", "sf300@1", 99, n, "start",
                               result, "checkmate", 40, engine_identity(stockfish))
               for n, result in enumerate(["1-0", "0-1", "1/2-1/2", "0-1", "1-0", "0-1"], 1)]
    write_games(tmp_path / "games.csv.gz", earlier)
    # Three deaths in a row: one position fails on three fresh engines, and its game aborts.
    dies = fault_engine(tmp_path, stockfish, monkeypatch, "die", "20,21,22")
    argv = ["calibrate", "--rungs", str(tmp_path / "rungs.csv"), "--add-games", "2",
            "--workers", "1", "--games-file", str(tmp_path / "games.csv.gz"), "--ladder",
            str(tmp_path / "ladder.csv"), "--store", str(tmp_path / "cal.db"), "--ply-cap",
            "16", "--stockfish", dies]
    assert benchmark.main(argv) == Exit.INCOMPLETE
    assert (tmp_path / "ladder.csv").exists()
    assert len(read_games(tmp_path / "games.csv.gz")) == 6 + 1  # the aborted one is planned
    monkeypatch.setenv("FAULT_AT", "")  # the engine mended: the rerun plays it
    assert benchmark.main(argv[:4] + ["0"] + argv[5:]) == Exit.OK
    assert len(read_games(tmp_path / "games.csv.gz")) == 6 + 2


@pytest.mark.parametrize("argv", [
    ["run", "--model", "random", "--questions", "missing.csv"],
    ["play", "--model", "random", "--ladder", "missing.csv"],
    ["puzzles", "--model", "random", "--puzzles", "missing.csv"],
    ["worldmodel", "--model", "random", "--questions", "missing.csv"],
    ["calibrate", "--games-file", "missing.csv.gz", "--add-games", "0", "--ladder",
     "x.csv"],
    ["compare", "missing-a", "missing-b"],
    ["leaderboard", "--results", "missing-dir", "--questions", str(QUESTIONS)],
    ["report", "--results", "missing-dir", "--questions", str(QUESTIONS)],
], ids=lambda argv: argv[0])
def test_a_failed_command_exits_2_in_one_line_and_writes_nothing(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert benchmark.main(argv) == Exit.ERROR
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "missing" in err, err
    assert list(tmp_path.iterdir()) == []
