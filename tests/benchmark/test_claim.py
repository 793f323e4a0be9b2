"""Two processes on one run: the second is refused in one line naming the holder, before it
asks anything, so no reply is bought twice; a crashed holder leaves no claim behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import pytest

import benchmark
from chess_eval.claim import ClaimHeld, claim, claim_path
from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.conftest import ROOT, first_questions


def _slow_first_legal(body: dict) -> Response:
    fen = FEN_RE.search(json.dumps(body)).group(1)
    return Response(f"Final answer: {min(m.uci() for m in chess.Board(fen).legal_moves)}",
                    delay=0.5)


def _wait_for_claim(out: Path, holder: subprocess.Popen[str]) -> None:
    """Until the first process holds its claim (a condition, never a sleep of fixed length)."""
    while not any(p.read_text() for p in out.glob(".*.claim")):
        assert holder.poll() is None, holder.communicate()
        time.sleep(0.05)


@pytest.mark.parametrize("command", ["play", "run", "puzzles", "worldmodel", "match",
                                     "worldmodel --limit"])
def test_a_second_process_on_the_same_run_is_refused_and_buys_nothing(
        command: str, tmp_path: Path, stockfish: str) -> None:
    out = tmp_path / "results"
    with ChatServer(lambda fen, n: Response(), on_body=_slow_first_legal) as server:
        base = [sys.executable, str(ROOT / "benchmark.py"), command.split()[0], "--model", "m",
                "--base-url", server.base_url, "--out", str(out), "--stockfish", stockfish]
        base += {"play": ["--max-games", "2"], "puzzles": ["--max-puzzles", "20"],
                 "match": ["--opponent", "stockfish:nodes=1", "--max-games", "4"],
                 "worldmodel": ["--limit", "20", "--concurrency", "1"],
                 # Two runs that differ only in how many positions share the first ones.
                 "worldmodel --limit": ["--limit", "21", "--concurrency", "1"],
                 "run": ["--questions", str(first_questions(tmp_path, 60)),
                         "--concurrency", "1"]}[command]
        first = subprocess.Popen(base, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        try:
            _wait_for_claim(out, first)
            second = subprocess.run([*base[:-4], "--limit", "20", *base[-2:]]
                                    if command == "worldmodel --limit" else base,
                                    capture_output=True, text=True, timeout=600)
            assert first.poll() is None, "the first run ended before the second was tried"
        finally:
            first.send_signal(signal.SIGINT)
            first.communicate(timeout=600)
        lines = second.stderr.strip().splitlines()
        assert second.returncode == 2, second.stderr[-2000:]
        assert "is already running on" in lines[-1] and f"pid {first.pid}" in lines[-1]
        assert "Traceback" not in second.stderr
        prompts = [b["messages"][-1]["content"] for b in server.bodies]
    assert len(prompts) == len(set(prompts))  # no prompt was bought twice


def test_a_claim_ends_with_its_process_however_it_ends(tmp_path: Path) -> None:
    store = tmp_path / "games.db"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from chess_eval.claim import claim\n"
        f"with claim(Path({str(store)!r}), 'run', 'the run'):\n"
        "    print('held', flush=True); time.sleep(600)")], cwd=ROOT, stdout=subprocess.PIPE,
        text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    with pytest.raises(ClaimHeld, match=rf"the run is already running on .*pid {holder.pid}"), \
            claim(store, "run", "the run"):
        pass
    with claim(store, "another run", "another run"):  # another run on the store goes on
        pass
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with claim(store, "run", "the run"):  # kill -9 left no claim behind
        assert claim_path(store, "run").read_text().startswith(f"pid {os.getpid()} ")


@pytest.mark.parametrize(("command", "option"), [("play", "--store"), ("worldmodel", "--cache"),
                                                 ("run", "--cache")])
def test_a_store_that_cannot_be_kept_is_one_line(command: str, option: str, tmp_path: Path,
                                                 stockfish: str) -> None:
    """A store under a path that is not a folder: one line naming it, exit 2, no traceback."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py"), command, "--model",
                           "random", option, "/dev/null/store.db", "--out", str(tmp_path),
                           "--stockfish", stockfish, "--questions",
                           str(first_questions(tmp_path, 4))] + (
                               ["--max-games", "2"] if command == "play" else []),
                          capture_output=True, text=True, timeout=600)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and "/dev/null/store.db: cannot keep a store there" in lines[0]


def test_a_finished_run_leaves_no_claim_behind(tmp_path: Path) -> None:
    """The claim's file goes with the run that held it (before, every run left a hidden
    .claim file in its folder); what the run stored stays."""
    out = tmp_path / "results"
    assert benchmark.main(["--model", "random", "--questions", str(first_questions(tmp_path, 4)),
                           "--out", str(out)]) == 0
    assert not list(out.glob(".*.claim"))
    assert (out / "cache.db").is_file() and list(out.glob("static__random__*.json"))
    with claim(out / "cache.db", "run", "the run"):
        assert claim_path(out / "cache.db", "run").is_file()  # there while it is held
    assert not claim_path(out / "cache.db", "run").exists()


def test_claims_taken_and_ended_at_once_never_have_two_holders(tmp_path: Path) -> None:
    """Many claimants on one run, each ending its claim (and removing its file) at once: one
    that locked a file as its holder removed it claims afresh, so never two hold the run."""
    store, holders, most = tmp_path / "cache.db", [0], [0]
    guard = threading.Lock()

    def claimant() -> None:
        for _ in range(300):
            try:
                with claim(store, "run", "the run"):
                    with guard:
                        holders[0] += 1
                        most[0] = max(most[0], holders[0])
                    time.sleep(0)
                    with guard:
                        holders[0] -= 1
            except ClaimHeld:
                continue
    threads = [threading.Thread(target=claimant) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1
    assert not claim_path(store, "run").exists()
