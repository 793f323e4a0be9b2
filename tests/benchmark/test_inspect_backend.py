"""The CLI asking through Inspect's model API (`--model inspect:PROVIDER/MODEL`): cost,
budget and books as over HTTP, and its faults (a failing provider, a model Inspect cannot
make) in one line."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import chess
import pytest

import benchmark
from chess_eval.benchmark.core.server import PlayerServer
from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.benchmark.inspect_helpers import (
    MODEL,
    service,
)
from tests.conftest import ROOT, first_questions


def test_play_asks_through_inspect_s_model_api_with_cost(
        served: PlayerServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in service(served.base_url).items():
        monkeypatch.setenv(key, value)
    # The tools protocol: tool calls and their results cross Inspect's message types.
    assert benchmark.main(["play", "--model", f"inspect:{MODEL}", "--protocol", "tools",
                           "--max-games", "2", "--price", "1,2", "--out",
                           str(tmp_path)]) == 0
    result = json.loads(next(tmp_path.glob("play__*.json")).read_text())
    assert result["conditions"]["standard"]["games"] == 2
    assert result["usage"]["tool_calls"] > 0 and result["usage"]["cost"] > 0
    [books] = (json.loads(line) for line in
               next((tmp_path / "books").glob("*.jsonl")).read_text().splitlines())
    assert books["replies_completed"] == books["requests_sent"] > 0
    assert books["cost"] >= result["usage"]["cost"]  # the preflight is bought too



def test_max_cost_stops_a_run_asked_through_inspect(
        served: PlayerServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in service(served.base_url).items():
        monkeypatch.setenv(key, value)
    argv = ["--model", f"inspect:{MODEL}", "--limit", "20", "--price", "10000,10000",
            "--max-cost", "5", "--concurrency", "1", "--out", str(tmp_path)]
    assert benchmark.main(argv) == 3
    [books] = (json.loads(line) for line in
               next((tmp_path / "books").glob("*.jsonl")).read_text().splitlines())
    assert 0 < books["cost"] <= 5



@pytest.mark.parametrize("reply, said", [
    (Response(status=404, text="no such model"), "HTTP 404"),
    (Response(status=500, text="boom"), "preflight"),
    (Response(raw=b"<html>a login page</html>", headers={"Content-Type": "text/html"}),
     "preflight"),
])
def test_a_failing_provider_through_inspect_fails_in_one_line(
        reply: Response, said: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    with ChatServer(lambda fen, n: reply, preflight=reply) as server:
        env = {**service(server.base_url), "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, str(ROOT / "benchmark.py"), "--model",
             "inspect:openai-api/local/some-model", "--limit", "3", "--retries", "0",
             "--timeout", "5", "--out", str(tmp_path)],
            env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and said in done.stderr
    assert not list(tmp_path.glob("*.json"))



@pytest.mark.parametrize("spec, said", [
    ("inspect:no-slash", "inspect:PROVIDER/MODEL"),
    ("inspect:nosuchprovider/model", "not recognized"),
    ("inspect:openai/gpt-4o-mini", "No OPENAI_API_KEY"),  # Inspect's own line, plain
])
def test_a_model_inspect_cannot_make_is_one_line(spec: str, said: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py"), "--model", spec,
                           "--questions", str(ROOT / "questions.csv"), "--out", str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "[bold]" not in done.stderr



def test_a_budget_running_out_mid_flight_through_inspect_bills_what_it_charges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The paths that cost money, through Inspect: 4 requests in flight, answered slowly and
    out of order, --max-cost running out among them; the provider's own books (0.01 a
    completed reply) against the ledger's, then a resume that buys no prompt twice."""
    rng = random.Random(3)
    USAGE = {"prompt_tokens": 100, "completion_tokens": 0, "total_tokens": 100}  # noqa: N806

    def slow(body: dict) -> Response:
        fen = FEN_RE.search(body["messages"][-1]["content"] or "")
        move = "OK" if fen is None else min(m.uci() for m in chess.Board(fen[1]).legal_moves)
        return Response(move, delay=rng.uniform(0.05, 0.3),
                        usage=USAGE)
    questions = first_questions(tmp_path, 40)
    with ChatServer(lambda fen, n: Response(), on_body=slow, price=0.01,
                    preflight=Response("OK", usage=USAGE)) as server:
        for key, value in service(server.base_url).items():
            monkeypatch.setenv(key, value)
        # At --price 100,0 a reply of 100 prompt tokens costs 0.01, as the provider bills it.
        argv = ["--model", "inspect:openai-api/local/m", "--questions", str(questions),
                "--price", "100,0", "--concurrency", "4", "--bootstrap", "50", "--out",
                str(tmp_path / "out")]
        assert benchmark.main([*argv, "--max-cost", "0.1"]) == 3
        first = (server.billed, server.money)
        assert benchmark.main(argv) == 0
        bought = dict(server.bought)
    books = [json.loads(line) for line in
             next((tmp_path / "out" / "books").glob("*.jsonl")).read_text().splitlines()]
    assert books[0]["replies_completed"] == first[0]  # billed = charged
    assert books[0]["cost"] == pytest.approx(first[1])
    # Over the budget only by what replies in flight cost beyond their reservations.
    assert first[1] <= 0.1 + 4 * 0.01 + 1e-9
    assert max(bought[k] for k in bought if "FEN" in k) == 1  # no prompt bought twice
    result = json.loads(next((tmp_path / "out").glob("static__*.json")).read_text())
    assert result["asked"] == 40 and result["complete"]



def test_both_backends_reserve_all_a_request_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tools turn with a system prompt, under --price: the Inspect backend holds what the
    HTTP backend holds for the same request (the system prompt and tools included)."""
    from chess_eval.benchmark.model.cost import Budget, price_arg
    from chess_eval.benchmark.model.http_backend import HttpBackend
    from chess_eval.benchmark.model.inspect_backend import backend
    from chess_eval.benchmark.model.interface import ModelConfig, Request
    from chess_eval.benchmark.players import protocols

    for key, value in service("http://127.0.0.1:9/v1").items():
        monkeypatch.setenv(key, value)
    config = ModelConfig(model="m", base_url="http://127.0.0.1:9/v1", api_key="unused",
                        system="You are a careful chess player. " * 20, max_tokens=200,
                        price=price_arg("1,2"), max_cost=5.0)
    request = Request(messages=({"role": "user", "content": "Your move."},),
                      tools=tuple(protocols.TOOLS))
    budget = Budget(config.max_cost, config.price)
    held = budget.estimate(*HttpBackend(config).size(request))
    assert budget.estimate(*backend(f"inspect:{MODEL}", config).size(request)) >= 0.9 * held



def test_the_register_listing_names_the_registered_tasks_and_their_arguments() -> None:
    import inspect as python_inspect

    import yaml

    from chess_eval import tasks

    listing = yaml.safe_load((ROOT / "register" / "chess_eval" / "eval.yaml").read_text())
    for entry in listing["tasks"]:
        package, name = entry["name"].split("/")
        assert package == listing["name"] == "chess_eval"
        # Its arguments (the catch-all that refuses unknown ones is none).
        assert entry["args"] == [
            p.name for p in python_inspect.signature(getattr(tasks, name)).parameters.values()
            if p.kind is not python_inspect.Parameter.VAR_KEYWORD]
        assert entry["example"].startswith(f"inspect eval {entry['name']} ")
    assert (ROOT / listing["documentation"]).is_file()

