"""An eval stopped and run again through Inspect's lifecycle (the same command, `eval-retry`,
`eval-set`'s own retries, Ctrl-C, a second process on the same run): it rates what an
undisturbed eval rates, and the provider bills no prompt twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import chess
import pytest
from inspect_ai.log import read_eval_log

from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.benchmark.inspect_helpers import (
    INSPECT,
    LIFECYCLE,
    finished,
    first_legal,
    foreign_requests,
    lifecycle_eval,
    metrics,
    service,
    undisturbed,
    units,
)
from tests.conftest import ROOT

Metrics = dict[str, float]


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Metrics]:
    """The metrics of each task's undisturbed eval, run once for this file's tests (the
    tasks are seeded: every undisturbed eval of one task rates alike)."""
    found: dict[str, Metrics] = {}

    def of(task: str) -> Metrics:
        if task not in found:
            found[task] = undisturbed(task, tmp_path_factory.mktemp(f"undisturbed-{task}"))
        return found[task]
    return of


@pytest.mark.parametrize("again", ["the same command", "eval-retry"])
def test_a_failed_games_eval_run_again_buys_no_reply_twice(again: str, tmp_path: Path) -> None:
    """One request refused once (HTTP 400) fails the games eval after it paid for some
    replies; the same command again, or `inspect eval-retry` on its log, completes, and the
    provider billed no prompt twice: the run's stores outlive the eval."""
    refused: list[str] = []

    def answer(body: dict) -> Response:
        fen = FEN_RE.search(body["messages"][-1]["content"]).group(1)
        board = chess.Board(fen)
        if len(board.move_stack) == 0 and board.fullmove_number >= 6 and not refused:
            refused.append(fen)
            return Response(status=400, text="this request is refused")
        return Response(f"Final answer: {min(m.uci() for m in board.legal_moves)}")
    argv = [INSPECT, "eval", "chess_eval/games", "--model", "openai-api/local/m", "-T",
            "max_games=4", "-T", "ladder=stockfish-15.1", "--log-dir", str(tmp_path),
            "--display", "none"]
    with ChatServer(lambda fen, n: Response(), on_body=answer, price=0.01) as server:
        env = service(server.base_url)
        subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        first_billed = server.billed
        if again == "eval-retry":
            [failed] = tmp_path.glob("*.eval")
            argv = [INSPECT, "eval-retry", str(failed), "--log-dir", str(tmp_path),
                    "--display", "none"]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=900)
        bought = server.bought
    assert refused and first_billed > 1, done.stderr[-2000:]
    logs = sorted(tmp_path.glob("*.eval"))
    assert [read_eval_log(str(p)).status for p in logs] == ["error", "success"]
    assert max(n for k, n in bought.items() if "FEN" in k) == 1



@pytest.mark.parametrize(("task", "when"), [("games", "before a game ends"),
                                            ("games", "after games ended"),
                                            ("puzzles", "after lines ended"),
                                            ("match", "after games ended")])
def test_an_adaptive_eval_stopped_by_ctrl_c_and_retried_buys_nothing_twice(
        task: str, when: str, tmp_path: Path, expected: Callable[[str], Metrics]) -> None:
    """Ctrl-C midway through a games (puzzles) eval, then `inspect eval-retry` on its log:
    the retry completes, the provider billed no prompt twice, and the rating is the
    undisturbed eval's (the same units: the run's stores outlive the interrupted eval), each
    unit recorded once (unit k is sample k's, so a retried sample never records a finished
    one again; before, games 0 and 1 were recorded twice and rated as five of three)."""
    stopping = threading.Event()

    def slow(body: dict) -> Response:
        """Slow replies until the Ctrl-C, so that it lands midway; the retry's at once."""
        return Response(first_legal(body).text, delay=0.0 if stopping.is_set() else 0.2)
    with ChatServer(lambda fen, n: Response(), on_body=slow, price=0.01) as server:
        env = {**service(server.base_url), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
        stopped = lifecycle_eval(task, tmp_path / "cache", tmp_path / "logs", server)

        def midway() -> bool:
            return server.billed >= 8 if when == "before a game ends" \
                else finished(tmp_path / "cache", task) >= 2
        while not midway() and stopped.poll() is None:  # midway through its units
            threading.Event().wait(0.05)
        assert stopped.poll() is None, (server.billed, stopped.stderr.read()[-3000:])
        os.killpg(stopped.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the group
        stopped.wait(timeout=120)
        stopping.set()
        [log] = (tmp_path / "logs").glob("*.eval")
        status = read_eval_log(str(log), header_only=True).status
        # Inspect ends the log `cancelled`. (Ctrl-C used to kill an engine starting in the
        # group, a sample error racing the cancellation: about one Ctrl-C in 15 left the log
        # `started`, as kill -9 does.) eval-retry recovers either, and what follows holds alike.
        assert status in ("cancelled", "started"), \
            (status, stopped.returncode, stopped.stderr.read()[-3000:])
        retry = subprocess.run([INSPECT, "eval-retry", str(log), "--log-dir",
                                str(tmp_path / "logs"), "--display", "none"], cwd=ROOT,
                               env=env, capture_output=True, text=True, timeout=600)
        bought = server.bought
    assert retry.returncode == 0, retry.stderr[-2000:]
    assert max(bought.values()) == 1  # no prompt bought twice
    [again] = set((tmp_path / "logs").glob("*.eval")) - {log}
    retried = read_eval_log(str(again))
    assert retried.status == "success", retried.error
    # Each sample's transcript holds its own unit's requests alone, in both logs.
    assert foreign_requests(retried) == []
    assert foreign_requests(read_eval_log(str(log))) == []
    assert metrics(retried) == expected(task)
    recorded = units(retried, task)
    count = "puzzles" if task == "puzzles" else "games"
    assert sorted(recorded) == list(range(len(recorded))) and len(recorded) == \
        metrics(retried)[count]  # each unit once, none missing
    if when != "before a game ends" and status == "cancelled":  # it recorded some already
        assert units(read_eval_log(str(log)), task)



GAMES_AT_ONCE = 4  # LIFECYCLE's games eval: max_games=4, each game its own sample


def test_a_games_eval_killed_and_retried_completes_and_rates_as_undisturbed(
        tmp_path: Path, expected: Callable[[str], Metrics]) -> None:
    """kill -9 midway through a games eval (its log left `started`), then `inspect
    eval-retry`, which recovers that log and runs again: it completes and rates what an
    undisturbed eval rates, each game recorded once. Only a reply in flight at the kill
    (asked, or billed and not yet stored) can be bought again. (The retry used to hang:
    the recovery applies nest_asyncio, under which python-chess's own engine thread never
    saw its engine quit.)"""
    killed = threading.Event()

    def slow(body: dict) -> Response:
        return Response(first_legal(body).text, delay=0.0 if killed.is_set() else 0.2)
    with ChatServer(lambda fen, n: Response(), on_body=slow, price=0.01) as server:
        env = {**service(server.base_url), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
        run = lifecycle_eval("games", tmp_path / "cache", tmp_path / "logs", server)
        while server.billed < 8 and run.poll() is None:
            threading.Event().wait(0.05)
        assert run.poll() is None, run.stderr.read()[-3000:]
        os.killpg(run.pid, signal.SIGKILL)
        run.wait(timeout=120)
        killed.set()
        [log] = (tmp_path / "logs").glob("*.eval")
        assert read_eval_log(str(log), header_only=True).status == "started"
        retry = subprocess.run([INSPECT, "eval-retry", str(log), "--log-dir",
                                str(tmp_path / "logs"), "--display", "none"], cwd=ROOT,
                               env=env, capture_output=True, text=True, timeout=600)
        bought = server.bought
    assert retry.returncode == 0, retry.stderr[-2000:]
    again = [read_eval_log(str(p)) for p in (tmp_path / "logs").glob("*.eval") if p != log]
    [retried] = [lg for lg in again if lg.status == "success"]
    assert metrics(retried) == expected("games")
    recorded = units(retried, "games")
    assert sorted(recorded) == list(range(len(recorded))) == \
        list(range(int(metrics(retried)["games"])))
    # A game asks one request at a time: at most one reply per game was in flight (asked,
    # or billed and not yet stored) when the process died.
    twice = [n for n in bought.values() if n > 1]
    assert max(bought.values()) <= 2 and len(twice) <= GAMES_AT_ONCE, twice


@pytest.mark.parametrize("task", ["games", "worldmodel"])
def test_a_second_process_evaluating_the_same_run_fails_in_a_line_and_buys_nothing(
        task: str, tmp_path: Path) -> None:
    """Two terminals start one eval on one cache: the second eval's samples fail with the
    claim's line naming the first process, before any request, and no prompt is bought twice
    (before, 53 of 134 replies were bought twice and both logs said success)."""
    asked, release = threading.Event(), threading.Event()

    def held(body: dict) -> Response:
        """Each reply held until the second eval has ended (the first is still buying)."""
        asked.set()
        release.wait(timeout=600)
        return first_legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=held, price=0.01) as server:
        first = lifecycle_eval(task, tmp_path / "cache", tmp_path / "logs1", server)
        try:
            while not asked.is_set() and first.poll() is None:  # the first is asking
                threading.Event().wait(0.05)
            assert first.poll() is None, first.stderr.read()[-3000:]
            second = lifecycle_eval(task, tmp_path / "cache", tmp_path / "logs2", server)
            second.wait(timeout=600)
            assert first.poll() is None, "the first eval ended before the second was tried"
        finally:
            release.set()
            os.killpg(first.pid, signal.SIGINT)
            first.wait(timeout=120)
        # Each request (its messages at its temperature: the temperature test asks one prompt
        # at several) sent once, by the first eval.
        sent = Counter(json.dumps([b["messages"], b.get("temperature")]) for b in server.bodies)
    [log] = (tmp_path / "logs2").glob("*.eval")
    refused = read_eval_log(str(log))
    assert refused.status == "error" and refused.error is not None
    assert "is already running on" in refused.error.message
    assert f"pid {first.pid}" in refused.error.message
    assert max(sent.values()) == 1  # no request sent twice
    # The books: the first eval's line, none from the refused one (it asked nothing).
    [books] = (tmp_path / "cache").glob(f"{task}-*/books/*.jsonl")
    assert len(books.read_text().splitlines()) == 1



@pytest.mark.parametrize("task", ["games", "puzzles"])
def test_eval_set_s_own_retries_after_a_refused_request_rate_the_undisturbed_units(
        task: str, tmp_path: Path, expected: Callable[[str], Metrics]) -> None:
    """One request refused (HTTP 400) fails the eval after some units ended; `inspect
    eval-set --retry-attempts 2` retries it itself (the same Task object, in the same
    process): the failed eval's run lets go of its stores, and the final log is a success
    with the undisturbed eval's rating, each unit recorded once, no prompt bought twice.
    (Before, it rated 1 game of 2 while the store held both.)"""
    refused: list[str] = []

    def answer(body: dict) -> Response:
        fen = FEN_RE.search(json.dumps(body)).group(1)
        if not refused and server.billed >= {"games": 12, "puzzles": 3}[task]:
            refused.append(fen)
            return Response(status=400, text="this request is refused")
        return first_legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=answer, price=0.01) as server:
        env = {**service(server.base_url), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
        done = subprocess.run([INSPECT, "eval-set", f"chess_eval/{task}", "--model",
                               "openai-api/local/m", *LIFECYCLE[task][0], "--display", "none",
                               "--retry-attempts", "2", "--retry-wait", "1",
                               # Units given to samples still queued when the eval fails.
                               "--max-samples", "2",
                               "--log-dir", str(tmp_path / "logs")], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=900)
        bought = server.bought
    assert refused and done.returncode == 0, done.stderr[-3000:]
    assert max(bought.values()) == 1  # no prompt bought twice
    final = [log for p in (tmp_path / "logs").glob("*.eval")
             if (log := read_eval_log(str(p))).status == "success"]
    assert len(final) == 1
    recorded = units(final[0], task)
    assert sorted(recorded) == list(range(len(recorded)))
    # The retry admits a sample that failed later than the ones after it (Inspect reads its
    # earlier attempt first): with two slots, both may go to samples waiting for its unit.
    # Then, after a stall, that unit is decided past (said in the log) and the schedule is
    # no longer the undisturbed one; otherwise it is, to the rating.
    passed = [e.message.message for s in final[0].samples or [] for e in s.events
              if e.event == "logger" and "decided reading it as not played" in e.message.message]
    if not passed:
        assert metrics(final[0]) == expected(task)
    else:
        assert metrics(final[0])[{"games": "games", "puzzles": "puzzles"}[task]] >= \
            expected(task)[{"games": "games", "puzzles": "puzzles"}[task]]

