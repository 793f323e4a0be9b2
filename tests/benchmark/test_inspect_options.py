"""Inspect's options and the tasks' arguments: each works as documented or is refused in one
line before any request (bad and unknown -T arguments, --epochs, --message-limit, sample
subsets, a cache folder that cannot be made), and a failure the eval tolerates or not."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import chess
import pytest
from inspect_ai.log import read_eval_log

import benchmark
from chess_eval.benchmark.core.server import PlayerServer
from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.benchmark.inspect_helpers import (
    ENDPOINT,
    INSPECT,
    LIFECYCLE,
    MODEL,
    first_legal,
    lifecycle_eval,
    metrics,
    service,
)
from tests.conftest import ROOT


@pytest.mark.parametrize("task, arg, said", [
    ("static", "limit=0", "run: limit: must be >= 1"),
    ("games", "max_games=0", "play: max_games: must be >= 1"),
    ("games", "condition=standard,chess960", "one start condition an eval"),
    ("games", "ladder=nope.csv", "ladder=nope.csv: no such file"),
    ("puzzles", "max_puzzles=0", "puzzles: max_puzzles: must be >= 1"),
    ("worldmodel", "limit=0", "worldmodel: limit: must be >= 1"),
    ("match", "opponent_temperature=-1", "match: opponent_temperature: must be a finite"),
])
def test_a_bad_task_argument_is_refused_in_one_line_before_any_request(
        task: str, arg: str, said: str, tmp_path: Path) -> None:
    """-T checked as the CLI checks the same option, when the task is built: no sample runs,
    no traceback, and the line names the task's argument (max_games), not the CLI's option."""
    done = subprocess.run([INSPECT, "eval", f"chess_eval/{task}", "--model", "mockllm/model",
                           "-T", arg, "--log-dir", str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    shown = done.stdout + done.stderr
    assert done.returncode != 0 and said in " ".join(shown.split()), shown
    assert "Traceback" not in shown and not list(tmp_path.glob("*.eval"))



def test_the_match_task_asks_the_opponent_with_its_own_task_arguments(tmp_path: Path) -> None:
    """-T opponent_X is match's --opponent-X: the opponent role's every request has its own
    temperature, max tokens, system prompt, reasoning effort and protocol (chat: the
    conversation grows); the eval's model keeps the eval's (fen: one question)."""
    def last_legal(body: dict) -> Response:
        board = chess.Board(FEN_RE.findall(json.dumps(body))[-1])
        return Response(f"Final answer: {min(m.uci() for m in board.legal_moves)}")
    with ChatServer(lambda fen, n: Response(), on_body=last_legal) as server:
        done = subprocess.run(
            [INSPECT, "eval", "chess_eval/match", "--model", "openai-api/local/a",
             "--model-role", "opponent=openai-api/local/b", "--log-dir", str(tmp_path / "logs"),
             "--display", "none", *(x for a in (
                 "max_games=2", "opponent_temperature=0.7", "opponent_max_tokens=50",
                 "opponent_system=second", "opponent_reasoning_effort=low",
                 "opponent_protocol=chat") for x in ("-T", a))],
            cwd=tmp_path, env={**service(server.base_url),
                               "CHESS_EVAL_CACHE": str(tmp_path / "cache")},
            capture_output=True, text=True, timeout=600)
        asked = [b for b in server.bodies if FEN_RE.search(json.dumps(b))]
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = [b for b in asked if b["model"] == "b"]
    assert {(b["temperature"], b["max_tokens"], b["messages"][0]["content"],
             b["reasoning_effort"]) for b in theirs} == {(0.7, 50, "second", "low")}
    assert max(len(b["messages"]) for b in theirs) > 2
    mine = [b for b in asked if b["model"] == "a"]
    assert mine and {len(b["messages"]) for b in mine} == {1}
    assert not any("reasoning_effort" in b for b in mine)


@pytest.mark.parametrize(("subset", "said"), [
    (["--limit", "3"], "sample 3 is half a pair"),
    (["--sample-id", "1"], "sample 1 is half a pair"),
    (["--sample-id", "3,4"], "sample 1 is left out")])
def test_a_match_subset_that_cannot_be_rated_is_refused_with_nothing_bought(
        subset: list[str], said: str, tmp_path: Path) -> None:
    """A match is rated by whole pairs, in order: a subset with half a pair (an odd --limit,
    one game of a pair) or one that leaves an earlier pair out fails in one line, and no
    request is sent."""
    with ChatServer(lambda fen, n: Response(), on_body=first_legal) as server:
        done = subprocess.run(
            [INSPECT, "eval", "chess_eval/match", "--model", "openai-api/local/a",
             "--model-role", "opponent=openai-api/local/b", "--log-dir", str(tmp_path / "logs"),
             "--display", "none", "-T", "max_games=6", *subset],
            cwd=tmp_path, env={**service(server.base_url),
                               "CHESS_EVAL_CACHE": str(tmp_path / "cache")},
            capture_output=True, text=True, timeout=600)
        asked = [b for b in server.bodies if FEN_RE.search(json.dumps(b))]
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "error" and said in log.error.message, log.error
    assert "Traceback" not in done.stderr
    assert asked == []


@pytest.mark.parametrize(("task", "typo"), [("static", "limt=5"), ("games", "foo=1"),
                                             ("puzzles", "max_puzles=2"),
                                             ("worldmodel", "limits=3")])
def test_an_unknown_task_argument_is_refused_before_any_request(
        task: str, typo: str, tmp_path: Path) -> None:
    """A typo in a -T key no longer runs (and bills) the full default eval: it is refused in
    one line that lists the task's arguments, and the provider bills nothing."""
    with ChatServer(lambda fen, n: Response(), on_body=first_legal, price=0.01) as server:
        done = subprocess.run([INSPECT, "eval", f"chess_eval/{task}", "--model",
                               "openai-api/local/m", "-T", typo, "--log-dir", str(tmp_path)],
                              cwd=ROOT, env=service(server.base_url),
                              capture_output=True, text=True, timeout=600)
        billed = server.billed
    shown = " ".join((done.stdout + done.stderr).split())
    key = typo.split("=")[0]
    assert done.returncode != 0 and f"unknown task argument(s) {key}; it takes" in shown, shown
    assert "Traceback" not in shown and billed == 0



TASK_ARGS = {"static": ["-T", "limit=2"],
             "games": ["-T", "max_games=2", "-T", "ladder=stockfish-15.1"],
             "puzzles": ["-T", "max_puzzles=2"], "worldmodel": ["-T", "limit=2"]}



@pytest.mark.parametrize(("task", "refused"), [
    *((task, ["--epochs", "2"]) for task in TASK_ARGS),
    *((task, ["--message-limit", "50"]) for task in ("games", "puzzles", "worldmodel"))])
def test_an_option_the_task_cannot_honour_is_refused_before_any_request(
        task: str, refused: list[str], tmp_path: Path) -> None:
    """--epochs 2 (a second epoch would replay the run, or buy every prompt again) and
    --message-limit (the task's requests are not the sample's messages: it could never trip)
    fail the eval in one line, and the provider bills nothing."""
    with ChatServer(lambda fen, n: Response(), on_body=first_legal, price=0.01) as server:
        done = subprocess.run([INSPECT, "eval", f"chess_eval/{task}", "--model",
                               "openai-api/local/m", *TASK_ARGS[task], *refused,
                               "--log-dir", str(tmp_path), "--display", "none"], cwd=ROOT,
                              env=service(server.base_url), capture_output=True, text=True,
                              timeout=600)
        billed = server.billed
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    said = log.error.message if log.error else ""
    assert log.status == "error", done.stderr[-2000:]
    assert ("one epoch" if refused[0] == "--epochs" else "refuses --message-limit") in said
    assert billed == 0



def test_the_eval_s_transport_settings_are_used_as_given(tmp_path: Path) -> None:
    """--max-retries 1 on evals whose first request always fails: a request of the world-model task
    (asked through the product's model layer) is attempted as often as one Inspect's own
    generate makes in the static task, not by the CLI's default of six retries."""
    def attempts(task: str) -> int:
        failing: list[str] = []

        def down(body: dict) -> Response:
            """The first request fails every attempt; the others are answered (each failing
            request waits through its back-offs)."""
            key = json.dumps(body, sort_keys=True)
            failing[:] = failing or [key]
            return Response(status=500, text="down") if key == failing[0] else first_legal(body)
        with ChatServer(lambda fen, n: Response(), on_body=down) as server:
            done = subprocess.run([INSPECT, "eval", f"chess_eval/{task}", "--model",
                                   "openai-api/local/m", "--log-dir", str(tmp_path / task),
                                   "--display", "none", "-T", "limit=1", "--max-retries", "1",
                                   "--timeout", "60"], cwd=tmp_path,
                                  env=service(server.base_url), capture_output=True,
                                  text=True, timeout=600)
            sent = Counter(json.dumps(b, sort_keys=True) for b in server.bodies
                           if FEN_RE.search(json.dumps(b)))
        assert sent, done.stderr[-2000:]
        return max(sent.values())
    assert attempts("worldmodel") == attempts("static")



@pytest.mark.parametrize(("subset", "said"), [
    (["--limit", "2"], None),
    (["--sample-id", "3,5"], "sample 1 is left out"),
    (["--sample-shuffle"], "refuses --sample-shuffle")])
def test_a_subset_of_samples_plays_the_first_games_or_is_refused(
        subset: list[str], said: str | None, served: PlayerServer, tmp_path: Path) -> None:
    """Game k is sample k's, played after the games before it: --limit 2 plays the
    schedule's first two games; a subset that leaves an earlier game out (--sample-id 3,5),
    or samples started out of order (--sample-shuffle), fails in one line, billing nothing."""
    done = subprocess.run([INSPECT, "eval", "chess_eval/games", "--model", MODEL, "-T",
                           "max_games=4", "-T", f"endpoint_id={ENDPOINT}", "-T",
                           "ladder=stockfish-15.1", *subset,
                           "--log-dir", str(tmp_path), "--display", "none"], cwd=ROOT,
                          env={**service(served.base_url),  # a store of its own
                               "CHESS_EVAL_CACHE": str(tmp_path / "cache")},
                          capture_output=True, text=True,
                          timeout=600)
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    if said is None:
        assert done.returncode == 0, done.stderr[-2000:]
        assert log.status == "success" and len(log.samples) == 2
        assert metrics(log)["games"] == 2
        assert sorted(s.store["game"]["index"] for s in log.samples) == [0, 1]
    else:
        assert log.status == "error" and said in log.error.message, log.error
        assert "Traceback" not in done.stderr



@pytest.mark.parametrize("task", sorted(LIFECYCLE))
def test_a_cache_folder_that_cannot_be_made_fails_the_eval_in_a_line_and_asks_nothing(
        task: str, tmp_path: Path) -> None:
    """CHESS_EVAL_CACHE under a file: the eval ends (games and puzzles waited for ever: the
    driver's error reached no sample) with that line as its error, before any request."""
    (tmp_path / "file").write_text("")
    with ChatServer(lambda fen, n: Response(), on_body=first_legal) as server:
        run = lifecycle_eval(task, tmp_path / "file" / "cache", tmp_path / "logs", server)
        _, err = run.communicate(timeout=600)
        assert server.bodies == []
    [log] = (tmp_path / "logs").glob("*.eval")
    failed = read_eval_log(str(log))
    assert failed.status == "error" and failed.error is not None, err[-2000:]
    assert "cannot keep the runs' stores there" in failed.error.message



def test_a_run_folder_keyed_by_its_limit_before_is_moved_not_bought_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache made when the folder's name held the limit is found under the new name."""
    from chess_eval.benchmark.inspect_eval.sample import CACHE_ENV, run_dir

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    argv, model = ["--seed", "0", "--limit", "4"], ["--model", "inspect:m"]
    earlier = run_dir("worldmodel", argv, model)  # keyed by every option, as before
    (earlier / "cache.db").write_text("answers")
    folder = run_dir("worldmodel", argv, model, unkeyed=("--limit",))
    assert folder != earlier and not earlier.exists()
    assert (folder / "cache.db").read_text() == "answers"
    larger = run_dir("worldmodel", ["--seed", "0", "--limit", "9"], model, unkeyed=("--limit",))
    assert larger == folder and run_dir("worldmodel", ["--seed", "1", "--limit", "4"], model,
                                        unkeyed=("--limit",)) != folder



def test_a_game_the_provider_breaks_fails_the_games_eval(tmp_path: Path) -> None:
    refused = Response(status=400, text="the request was refused")
    with ChatServer(lambda fen, n: refused, preflight=refused) as server:
        argv = [INSPECT, "eval", "chess_eval/games", "--model", "openai-api/local/broken",
                "-T", "max_games=4", "--log-dir", str(tmp_path), "--display", "none"]
        subprocess.run(argv, cwd=tmp_path, env=service(server.base_url), capture_output=True,
                       text=True, timeout=600)
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    # An aborted game is an infrastructure failure: the eval fails (Inspect's default), as
    # the CLI's play exits non-zero; nothing is rated.
    assert log.status == "error" and log.error is not None
    assert "aborted for infrastructure reasons" in log.error.message + log.error.traceback
    assert log.results is None or not metrics(log).get("elo")
    # The leaderboard leaves such a log out (and tries it again next time).
    benchmark.main(["leaderboard", "--results", str(tmp_path)])
    assert not list(tmp_path.glob("play__*.json"))
    done = tmp_path / ".inspect_logs"
    assert not done.exists() or path.name not in done.read_text(encoding="utf-8")



def test_a_log_with_an_errored_sample_is_read_back_with_it_missing(tmp_path: Path) -> None:
    """A static eval that tolerates one failed sample (--fail-on-error 0.1, as the docs
    suggest) logs success with one errored sample: leaderboard and report read it back with
    that question missing (the run incomplete), and never crash."""
    refused: list[str] = []

    def answer(body: dict) -> Response:
        fen = FEN_RE.search(body["messages"][-1]["content"]).group(1)
        if not refused or refused[0] == fen:
            refused[:1] = [fen]
            return Response(status=400, text="this request is refused")
        return Response(f"Final answer: {min(m.uci() for m in chess.Board(fen).legal_moves)}")
    logs = tmp_path / "results"
    with ChatServer(lambda fen, n: Response(), on_body=answer) as server:
        argv = [INSPECT, "eval", "chess_eval/static", "--model", "openai-api/local/m",
                "--log-dir", str(logs), "--display", "none", "--fail-on-error", "0.1",
                "--max-retries", "0", "-T", "limit=12"]
        done = subprocess.run(argv, cwd=tmp_path, env=service(server.base_url),
                              capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    [log] = logs.glob("*.eval")
    eval_log = read_eval_log(str(log))
    assert eval_log.status == "success"
    assert sum(s.error is not None for s in eval_log.samples) == 1
    assert benchmark.main(["run", "--model", "random", "--limit", "12", "--out",
                           str(logs)]) == 0  # a complete run to rank beside it
    for command in (["leaderboard", "--results", str(logs)],
                    ["report", "--results", str(logs), "--out", str(tmp_path / "site")]):
        assert benchmark.main(command) == 0
    [static] = logs.glob("static__inspect_*.json")
    result = json.loads(static.read_text())
    assert result["n"] == 11 and result["infra"] == 1 and not result["complete"]

