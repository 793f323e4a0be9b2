"""A failed run fails: dead, broken, silent and refusing endpoints; keys; corrupt inputs."""

import csv
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import chess
import pytest

import benchmark
from chess_eval.benchmark.model.http_backend import HttpBackend, key_for
from chess_eval.benchmark.model.interface import InfraError, ModelConfig, Request
from chess_eval.benchmark.model.metered import Metered
from chess_eval.errors import ConfigError
from tests.benchmark.chatserver import PREFLIGHT, ChatServer, Response
from tests.conftest import ROOT, first_questions, stored_answers

SECRET = "sk-test-CAPTURED-7777"


@pytest.fixture()
def questions(tmp_path: Path) -> Path:
    """The first 12 rows of the committed questions.csv."""
    return first_questions(tmp_path, 12)


def _first_legal(fen: str) -> str:
    return sorted(m.uci() for m in chess.Board(fen).legal_moves)[0]


def _argv(url: str, questions: Path, out: Path, *extra: str) -> list[str]:
    return ["--model", "local/model", "--base-url", url, "--questions", str(questions),
            "--out", str(out), "--retries", "1", "--retry-wait", "0.01", "--timeout", "1",
            "--bootstrap", "50", *extra]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(("preflight", "message"), [
    (Response(status=500), "HTTP 500"),
    (Response(raw=b"<html><body>Welcome</body></html>", headers={"Content-Type": "text/html"}),
     "answered text/html, not JSON"),
    (Response(raw=b'{"object": "list", "data": []}'), "not an OpenAI-compatible chat API"),
    (Response(status=404, raw=b'{"error": "model not found"}'), "unknown model"),
    (Response(hang=True), "no reply within 1 s"),
])
def test_a_broken_endpoint_stops_at_the_preflight(preflight: Response, message: str,
                                                   questions: Path, tmp_path: Path,
                                                   capsys) -> None:
    start = time.monotonic()
    with ChatServer(lambda fen, attempt: Response("e2e4"), preflight=preflight) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path / "out"))
        assert set(server.calls) == {PREFLIGHT}  # no question was asked
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and message in err[-1] and err[-1].startswith("error: preflight")
    assert time.monotonic() - start < 8
    assert not list((tmp_path / "out").glob("*.json"))


def test_connection_refused_is_one_line(questions: Path, tmp_path: Path, capsys) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    assert benchmark.main(_argv(url, questions, tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert "refused (is the server running?)" in err and "Traceback" not in err
    assert benchmark.main(_argv("localhost:8000", questions, tmp_path / "out")) == 2
    assert "bad --base-url" in capsys.readouterr().err


def test_the_breaker_stops_a_run_of_failures(questions: Path, tmp_path: Path, capsys,
                                             caplog) -> None:
    with ChatServer(lambda fen, attempt: Response(status=503)) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path, "--breaker", "3",
                                    "--concurrency", "1"))
        asked = len(server.calls) - 1
    # The one worker may have started a 4th question before the 3rd failure was counted.
    assert code == 2 and 3 <= asked <= 4
    assert "stopped after 3 questions in a row failed" in capsys.readouterr().err
    assert caplog.text.count("HTTP 503; retry 1 of 1") >= 3  # each retry is logged
    assert not list(tmp_path.glob("*.json"))


def test_truncated_answers_count_as_failures(questions: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A reply cut by --max-tokens before a move is a failed answer in every metric (ACPL at
    the cap), kept as its own category, with a hint to raise the limit."""
    def script(fen: str, attempt: int) -> Response:
        if fen.split()[1] == "w":
            return Response("Let me look at the position. The knight on", finish_reason="length")
        return Response(f"Final answer: {_first_legal(fen)}")
    with ChatServer(script) as server:
        assert benchmark.main(_argv(server.base_url, questions, tmp_path,
                                    "--max-tokens", "90")) == 0
        assert {b["max_tokens"] for b in server.bodies[1:]} == {90}
    result = json.loads(next(tmp_path.glob("*.json")).read_text())
    items = result["items"]
    white = [chess.Board(_fen(questions, i["id"])).turn for i in items]
    cut = [i for i, w in zip(items, white, strict=True) if w]
    legal = [i for i, w in zip(items, white, strict=True) if not w]
    assert result["truncated"] == len(cut) > 0 and result["n"] == len(items)
    assert {i["category"] for i in cut} == {"truncated"} and result["illegal"]["format"] == 0
    assert result["legal_rate"] == round(len(legal) / len(items), 4)
    assert result["accuracy"] == round(sum(i["accuracy"] for i in legal) / len(items), 4)
    assert result["acpl"] == round((sum(i["cp_loss"] for i in legal) + 1000 * len(cut))
                                   / len(items), 4)
    assert result["best_move_rate"] == round(sum(i["best"] for i in legal) / len(items), 4)
    assert "truncated at max_tokens=90" in next(tmp_path.glob("*.md")).read_text()
    assert "raise --max-tokens" in capsys.readouterr().out


def _fen(questions: Path, qid: str) -> str:
    with open(questions, newline="", encoding="utf-8") as handle:
        return next(r["prompt"] for r in csv.DictReader(handle) if r["id"] == qid)


def test_every_answer_truncated_is_a_zero_score(questions: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A model that never finishes within --max-tokens scores zero, not nothing (it used to
    get n = 0 and no score at all, which flattered it)."""
    cut = Response("Chess position (FEN): ... thinking", finish_reason="length")
    with ChatServer(lambda fen, attempt: cut) as server:
        assert benchmark.main(_argv(server.base_url, questions, tmp_path)) == 0
    result = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert result["n"] == result["asked"] == result["truncated"] > 0
    assert result["legal_rate"] == result["accuracy"] == result["best_move_rate"] == 0
    assert result["acpl"] == 1000
    # No rubric score from a static run: the illegal rate, with its exact interval.
    assert "score" not in result["world_model"]
    rate = result["world_model"]["illegal_rate"]
    assert rate["value"] == rate["hi"] == 1.0 and 0.7 < rate["lo"] < 1.0
    n = result["n"]
    assert rate["lo"] == pytest.approx(0.05 ** (1 / n), abs=1e-4)  # Clopper-Pearson at n/n
    assert result["world_model"]["shares"]["truncated"] == 1.0
    assert result["elo"]["human"]["text"].startswith("below")  # a bound, never a figure
    assert "raise --max-tokens" in capsys.readouterr().out


def test_a_single_slot_server_does_not_time_out_queued_requests(questions: Path,
                                                                 tmp_path: Path) -> None:
    """Requests queued behind our own at a one-slot server wait far longer than --timeout
    and none times out. The bounds come from a measured round trip, not a guess, so a busy
    machine only makes every figure larger in proportion."""
    reply = lambda fen, attempt: Response(f"Final answer: {_first_legal(fen)}",  # noqa: E731
                                          delay=0.3)
    with ChatServer(reply, single_slot=True) as server:
        fen = chess.STARTING_FEN
        start = time.perf_counter()
        with socket.create_connection(server.httpd.server_address[:2], timeout=30) as conn:
            body = json.dumps({"messages": [{"content": f"Chess position (FEN): {fen}"}]})
            conn.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n{body}".encode())
            assert conn.recv(4096).startswith(b"HTTP/1.1 200")
        one = time.perf_counter() - start  # one request's service time, as measured here
        timeout = 2.5 * one  # room for one request served ahead of our oldest, and jitter
        start = time.perf_counter()
        assert benchmark.main(_argv(server.base_url, questions, tmp_path,
                                    "--concurrency", "6", "--retries", "0",
                                    "--timeout", f"{timeout:.3f}")) == 0
        elapsed = time.perf_counter() - start
    result = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert result["infra"] == 0 and result["n"] == 12
    # 12 answers one at a time: the last of each wave of 6 waited about 6 service times.
    assert elapsed > 12 * 0.3 > timeout or elapsed > 4 * timeout


@pytest.mark.parametrize("path", ["slow", "silent", "busy then slow"])
def test_a_retry_never_runs_beside_the_copy_it_replaces(path: str, questions: Path,
                                                        tmp_path: Path) -> None:
    """Each attempt that runs out of time is aborted at its socket before the next is sent,
    so the server never holds two copies of one prompt (each copy may be billed). The
    server lets a copy go only when it answers or its client closes the connection."""
    def script(fen: str, attempt: int) -> Response:
        answer = Response(f"Final answer: {_first_legal(fen)}")
        if path == "slow":  # the first try outlasts --timeout by far, the second is quick
            return Response(answer.text, delay=30.0) if attempt == 0 else answer
        if path == "silent":  # never answers at all
            return Response(hang=True) if attempt == 0 else answer
        return [Response(status=503), Response(answer.text, delay=30.0), answer][min(attempt,
                                                                                      2)]
    with ChatServer(script) as server:
        status = benchmark.main(_argv(server.base_url, questions, tmp_path, "--retries", "3",
                                      "--timeout", "1", "--concurrency", "4", "--limit", "4"))
        held = dict(server.most_in_flight)
        asked = dict(server.calls)
    assert status == 0
    result = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert result["infra"] == 0 and result["n"] == 4
    retried = [fen for fen, n in asked.items() if fen != PREFLIGHT and n >= 2]
    assert len(retried) == 4  # every prompt went through the retry path under test
    assert max(held.values()) == 1, held


def test_keys_go_only_where_they_belong(questions: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)
    with ChatServer(lambda fen, attempt: Response("e2e4")) as server:
        benchmark.main(_argv(server.base_url, questions, tmp_path / "a"))
        assert server.auth and set(server.auth) == {None}  # a local endpoint gets no key
    monkeypatch.setenv("MINE", "sk-mine")
    with ChatServer(lambda fen, attempt: Response("e2e4")) as server:
        benchmark.main(_argv(server.base_url, questions, tmp_path / "b", "--api-key-env",
                             "MINE"))
        assert set(server.auth) == {"Bearer sk-mine"}
    env = {"OPENAI_API_KEY": "oa", "OPENROUTER_API_KEY": "or"}
    assert key_for("https://openrouter.ai/api/v1", None, env) == ("or", "OPENROUTER_API_KEY")
    assert key_for("https://api.openai.com/v1", None, env) == ("oa", "OPENAI_API_KEY")
    assert key_for("https://openrouter.ai.evil.example/v1", None, env) == (None, None)
    with pytest.raises(ConfigError, match="needs an API key: set OPENROUTER_API_KEY"):
        key_for("https://openrouter.ai/api/v1", None, {"OPENAI_API_KEY": "oa"})
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".md", ".jsonl"):
            assert SECRET not in path.read_text()


def test_extra_cannot_rewrite_the_request(questions: Path, tmp_path: Path, capsys) -> None:
    for field in ("model", "messages", "max_tokens"):
        extra = json.dumps({field: 1})
        assert benchmark.main(_argv("http://127.0.0.1:9/v1", questions, tmp_path,
                                    "--extra", extra)) == 2
        assert f"--extra: may not set ['{field}']" in capsys.readouterr().err


def test_settings_name_the_result(questions: Path, tmp_path: Path) -> None:
    with ChatServer(lambda fen, attempt: Response(f"Final answer: {_first_legal(fen)}")) \
            as server:
        for extra in ([], ["--temperature", "1"], ["--system", "You are a chess engine."],
                      ["--stop", "\n\n"]):
            assert benchmark.main(_argv(server.base_url, questions, tmp_path, *extra)) == 0
        system = [b for b in server.bodies if b["messages"][0]["role"] == "system"]
        assert system and all(b["messages"][0]["content"] == "You are a chess engine."
                              for b in system)
    results = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert len(results) == 4  # no run replaced another
    assert {r["settings"]["temperature"] for r in results} == {0.0, 1.0}
    assert {json.dumps(r["settings"]["stop"]) for r in results} == {"[]", '["\\n\\n"]'}


@pytest.mark.parametrize(("edit", "message"), [
    (lambda rows: rows[3].__setitem__(0, "not a fen"), "row 3 (line 4), column prompt"),
    (lambda rows: rows[5].__setitem__(1, "[[\"e2e4\", 1]"),
     "row 5 (line 6), column expected_output"),
    (lambda rows: rows[2].__setitem__(1, "[[\"a1a1\", 3]]"),
     "row 2 (line 3), column expected_output"),
    (lambda rows: rows[7].__setitem__(rows[0].index("rating"), "12x"),
     "row 7 (line 8), column rating"),
    (lambda rows: rows[4].__setitem__(rows[0].index("played_elo"), "nan"),
     "row 4 (line 5), column played_elo"),
    (lambda rows: rows[6].__setitem__(2, "maybe"), "row 6 (line 7), column private"),
])
def test_a_corrupt_questions_file_is_one_line_before_any_request(edit, message: str,
                                                                 questions: Path,
                                                                 tmp_path: Path,
                                                                 capsys) -> None:
    with open(questions, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    edit(rows)
    with open(questions, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    with ChatServer(lambda fen, attempt: Response("e2e4")) as server:
        assert benchmark.main(_argv(server.base_url, questions, tmp_path / "o")) == 2
        assert server.calls == {}
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_non_utf8_and_unwritable_out(questions: Path, tmp_path: Path, capsys) -> None:
    data = questions.read_bytes().splitlines(keepends=True)
    data[3] = data[3].replace(b",", b",\xff", 1)
    questions.write_bytes(b"".join(data))
    assert benchmark.main(["--model", "random", "--questions", str(questions), "--out",
                           str(tmp_path)]) == 2
    assert "line 4: not UTF-8" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert benchmark.main(["--model", "random", "--questions", str(ROOT / "questions.csv"),
                           "--out", str(blocker / "sub")]) == 2
    assert "--out" in capsys.readouterr().err


def test_ctrl_c_against_a_silent_server_is_quick_and_keeps_answers(questions: Path,
                                                                   tmp_path: Path) -> None:
    answered: set[str] = set()

    def script(fen: str, attempt: int) -> Response:
        if len(answered) < 3:
            answered.add(fen)
            return Response(f"Final answer: {_first_legal(fen)}")
        return Response(hang=True)
    with ChatServer(script) as server:
        argv = [sys.executable, str(ROOT / "benchmark.py"), *_argv(
            server.base_url, questions, tmp_path, "--timeout", "600", "--concurrency", "2")]
        # A background job's shell (CI's, perhaps) ignores SIGINT and Python then keeps it
        # ignored: give the child the default disposition a terminal's foreground job has.
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        # Three answers stored and the next requests hanging: a condition, never a time.
        deadline = time.monotonic() + 60
        while (sum(server.calls.values()) < 6 or stored_answers(tmp_path / "cache.db") < 3) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        start = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=20)
        took = time.monotonic() - start
    # Far below the silent server's --timeout 600 that an uninterruptible wait would take (a
    # bound loose enough for a slow, busy machine: the claim is "not the timeout").
    assert proc.returncode == 130 and took < 60, (took, err)
    assert "Traceback" not in err and "interrupted" in err
    with sqlite3.connect(tmp_path / "cache.db") as db:
        assert db.execute("SELECT count(*) FROM answers").fetchone()[0] == 3
    assert not list(tmp_path.glob("*.json"))


def _user(text: str) -> Request:
    return Request(messages=({"role": "user", "content": text},))


@pytest.mark.parametrize(("header", "waits", "fails"), [
    ("1", True, False),  # honoured: the retry comes a second later
    ("soon", False, False),  # malformed: no hint, the backoff decides
    ("500", False, True),  # beyond the 120 s cap: the request fails at once
])
def test_retry_after_is_honoured_up_to_its_cap(header: str, waits: bool, fails: bool) -> None:
    fen = chess.STARTING_FEN

    def script(fen_: str, attempt: int) -> Response:
        if attempt == 0:
            return Response(status=429, headers={"Retry-After": header})
        return Response("Final answer: e4")
    with ChatServer(script) as server:
        config = ModelConfig(base_url=server.base_url, model="m", retries=2, backoff_s=0.01,
                             timeout_s=5)
        client = Metered(HttpBackend(config), config)
        start = time.monotonic()
        if fails:
            with pytest.raises(InfraError, match="asks to wait 500 s, more than the 120 s"):
                client.generate(_user(f"Chess position (FEN): {fen}"))
            assert server.calls[fen] == 1
        else:
            reply = client.generate(_user(f"Chess position (FEN): {fen}"))
            assert reply.text == "Final answer: e4" and reply.attempts == 2
        took = time.monotonic() - start
    # A wait of Retry-After's 1 s where asked; never the 120 s cap or the 500 s asked (the
    # upper bound loose enough for a slow, busy machine).
    assert (took >= 1.0) == waits and took < 60


def test_two_endpoints_with_one_model_name_never_share_answers(questions: Path,
                                                               tmp_path: Path) -> None:
    """One model name at two servers that answer differently (say 4-bit and bf16): each run
    asks its own server, into one results directory and one cache. --endpoint-id gives two
    endpoints one name, so the second reuses the first's answers, and the result says so."""
    def first_move(fen: str, attempt: int) -> Response:
        return Response(f"Final answer: {_first_legal(fen)}")

    def last_move(fen: str, attempt: int) -> Response:
        return Response(f"Final answer: {max(m.uci() for m in chess.Board(fen).legal_moves)}")
    out = tmp_path / "results"
    with ChatServer(first_move) as a, ChatServer(last_move) as b:
        assert benchmark.main(_argv(a.base_url, questions, out)) == 0
        assert benchmark.main(_argv(b.base_url, questions, out)) == 0
        asked_b = sum(n for fen, n in b.calls.items() if fen != PREFLIGHT)
        runs = [json.loads(p.read_text()) for p in sorted(out.glob("static__*.json"))]
        assert asked_b == 12 and len(runs) == 2  # b was asked everything, apart from a
        moves = [{i["id"]: i["move"] for i in r["items"]} for r in runs]
        assert moves[0] != moves[1]
        assert {r["settings"]["answered_by"] for r in runs} == {
            a.base_url.removeprefix("http://"), b.base_url.removeprefix("http://")}
        shared = tmp_path / "shared"
        assert benchmark.main(_argv(a.base_url, questions, shared, "--endpoint-id", "m")) == 0
        assert benchmark.main(_argv(b.base_url, questions, shared, "--endpoint-id", "m")) == 0
        assert sum(n for fen, n in b.calls.items() if fen != PREFLIGHT) == 12  # none more
    [result] = [json.loads(p.read_text()) for p in shared.glob("static__*.json")]
    assert result["settings"]["answered_by"] == "id:m"


def test_an_engine_baseline_is_keyed_by_the_engine_that_answered(
        stockfish: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same spec on another build (here: the same binary reporting another version)
    is another player: its cached moves are never the first build's."""
    from chess_eval.benchmark.players.player import make_player
    from tests.conftest import fault_engine
    other = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NAME", "Stockfish 17.1")
    ids = [make_player("stockfish:nodes=1000", None, path, 0, 1).id
           for path in (stockfish, other)]
    assert ids[0].startswith("stockfish:nodes=1000@Stockfish ") and ids[0] != ids[1]
    assert ids[1] == "stockfish:nodes=1000@Stockfish 17.1"
    mix = make_player("mix:random=50,nodes=100", None, other, 0, 1)
    assert mix.id.endswith("@Stockfish 17.1") and mix.answered_by == "Stockfish 17.1"
