"""chess-eval inside Inspect, offline: the registered tasks run by name from a folder
outside the clone against `benchmark.py serve` (and Inspect's mockllm), their numbers held
against the CLI's on the same served player, their logs read back onto the leaderboard, and
the CLI asking through Inspect's model API (`--model inspect:...`), its faults included."""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import chess
import chess.pgn
import pytest
from inspect_ai.log import EvalLog, read_eval_log

import benchmark
from lib.benchmark.core.server import PlayerServer
from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.conftest import ROOT, first_questions

INSPECT = str(Path(sys.executable).parent / "inspect")
PLAYER = "served/sjeng:depth=1"  # a player the ladder places within a few games
MODEL = f"openai-api/local/{PLAYER}"  # Inspect's provider for an OpenAI-compatible service
GAMES = 10  # games of each rating: the small budget
LIMIT = 24  # static questions
# The served player's name in both ratings (else the server's port, drawn anew by each test
# run, would be part of the player's identity and so of every game's seed).
ENDPOINT = "served"


@pytest.fixture(scope="module")
def served(stockfish: str) -> Iterator[PlayerServer]:
    """Baseline players behind the OpenAI-compatible API, on 127.0.0.1."""
    server = PlayerServer("127.0.0.1", 0, stockfish, seed=0, slots=2)
    threading.Thread(target=server.serve, daemon=True).start()
    yield server
    server.shutdown()
    server.close()


def service(base_url: str) -> dict[str, str]:
    """The environment Inspect reads for openai-api/local/...: LOCAL_BASE_URL, LOCAL_API_KEY."""
    return {**os.environ, "LOCAL_BASE_URL": base_url, "LOCAL_API_KEY": "unused"}


def inspect_eval(task: str, model: str, args: list[str], logs: Path, env: dict[str, str],
                 cwd: Path) -> EvalLog:
    """`inspect eval chess_eval/TASK` as a user runs it; its log."""
    before = set(logs.glob("*.eval"))
    argv = [INSPECT, "eval", f"chess_eval/{task}", "--model", model, "--log-dir", str(logs),
            "--display", "none"]
    for arg in args:
        argv += ["-T", arg]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    [log] = set(logs.glob("*.eval")) - before
    return read_eval_log(str(log))


def metrics(log: EvalLog) -> dict[str, float]:
    """Every metric of a log's results, by name."""
    assert log.results is not None
    return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}


@pytest.fixture(scope="module")
def logs(served: PlayerServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    """The four tasks run by name from a folder outside the clone, into one log folder."""
    outside = tmp_path_factory.mktemp("elsewhere")
    folder = tmp_path_factory.mktemp("logs")
    env = service(served.base_url)
    runs = {"static": [f"limit={LIMIT}"],
            "games": [f"max_games={GAMES}", f"endpoint_id={ENDPOINT}"],
            "puzzles": ["max_puzzles=8"], "worldmodel": ["limit=6"]}
    return {task: inspect_eval(task, MODEL, args, folder, env, outside)
            for task, args in runs.items()}


def test_the_four_tasks_run_by_name_from_outside_the_clone(logs: dict[str, EvalLog]) -> None:
    for log in logs.values():
        assert log.status == "success"
    static, games = metrics(logs["static"]), metrics(logs["games"])
    for name in ("accuracy", "legal_rate", "acpl", "best_move_rate"):
        assert static[f"{name}_lo"] <= static[name] <= static[f"{name}_hi"]
    assert games["elo_lo"] < games["elo"] < games["elo_hi"]
    assert games["games"] == GAMES
    assert metrics(logs["puzzles"])["puzzles"] == 8
    assert 0 <= metrics(logs["worldmodel"])["world_model_score"] <= 1
    # Each played game is a sample whose transcript holds its requests and its moves.
    played = [s for s in logs["games"].samples or []
              if (s.scores["game_scorer"].metadata["game"] or {}).get("record")]
    assert len(played) == GAMES
    for sample in played:
        requests = [e for e in sample.events if e.event == "model"]
        assert requests and sample.scores["game_scorer"].answer.startswith("[")
    # Each puzzle line is a sample too, with its requests.
    lines = [s for s in logs["puzzles"].samples or []
             if s.scores["line_scorer"].metadata["line"]]
    assert len(lines) == 8 and all(any(e.event == "model" for e in s.events) for s in lines)
    # Each position is a sample with its prompts: the move, its mirror, two temperatures,
    # prompt A's list (and B's choice when A listed a move).
    positions = logs["worldmodel"].samples or []
    assert len(positions) == 6
    assert all(sum(e.event == "model" for e in s.events) >= 5 for s in positions)
    # Each task but static keeps books in its run's folder: a line per eval, whatever it
    # bought (static's are Inspect's log: each sample's model usage).
    cache = Path(os.environ["CHESS_EVAL_CACHE"])
    for task, ledger in (("games", "play__*"), ("puzzles", "puzzles"),
                         ("worldmodel", "worldmodel")):
        lines = [json.loads(line) for path in cache.glob(f"{task}-*/books/{ledger}.jsonl")
                 for line in path.read_text().splitlines()]
        assert any(b["requests_sent"] > 0 for b in lines), task
        assert all(b["replies_completed"] <= b["requests_sent"] for b in lines), task
    assert sum(s.model_usage != {} for s in logs["static"].samples or []) == LIMIT


def test_the_static_task_gives_the_cli_s_accuracy_and_legal_rate(
        logs: dict[str, EvalLog], served: PlayerServer, tmp_path: Path) -> None:
    assert benchmark.main(["--model", PLAYER, "--base-url", served.base_url, "--limit",
                           str(LIMIT), "--out", str(tmp_path)]) == 0
    cli = json.loads(next(tmp_path.glob("static__*.json")).read_text())
    figures = metrics(logs["static"])
    assert figures["n"] == cli["n"] == LIMIT
    for name in ("accuracy", "legal_rate", "acpl", "best_move_rate"):
        interval = cli["intervals"][name]
        assert (figures[name], figures[f"{name}_lo"], figures[f"{name}_hi"]) == \
            (interval["value"], interval["lo"], interval["hi"])


def test_the_games_task_and_play_rate_the_player_within_their_intervals(
        logs: dict[str, EvalLog], served: PlayerServer, tmp_path: Path) -> None:
    assert benchmark.main(["play", "--model", PLAYER, "--base-url", served.base_url,
                           "--endpoint-id", ENDPOINT, "--max-games", str(GAMES), "--out",
                           str(tmp_path)]) == 0
    play = json.loads(next(tmp_path.glob("play__*.json")).read_text())
    cli = play["conditions"]["standard"]
    elo = cli["elo"]
    assert cli["games"] == GAMES and elo["kind"] == "interval"
    inspect = metrics(logs["games"])
    # The difference of two independent estimates, against both half-widths combined.
    half = math.hypot((elo["hi"] - elo["lo"]) / 2, (inspect["elo_hi"] - inspect["elo_lo"]) / 2)
    assert abs(inspect["elo"] - elo["mean"]) <= half
    # Its place on Lichess's scale per time control, as play's result gives it (far below the
    # anchors: no figure, its expected score against the weakest anchor and that anchor's
    # rating, each named for what it is; Inspect drops a None).
    for tc in play["human"]["time_controls"]:
        assert tc["placement"] == "below"
        shown = {k.removeprefix(f"lichess_{tc['time_control']}"): v for k, v in inspect.items()
                 if k.startswith(f"lichess_{tc['time_control']}")}
        assert set(shown) == {"_expected_score", "_expected_score_lo", "_expected_score_hi",
                              "_anchor_rating"}, shown
        assert shown["_anchor_rating"] == tc["anchor_rating"]
        assert 0 <= shown["_expected_score_lo"] <= shown["_expected_score_hi"] < 0.5


def test_the_bench_rates_a_served_spec_with_a_comma_as_one_model(served: PlayerServer,
                                                                 tmp_path: Path) -> None:
    """bench/inspect_games.py asks through Inspect's Python API: a player whose spec has a
    comma (which `inspect eval --model` splits into two models) is one model, rated."""
    from bench.inspect_games import inspect_rating

    spec = "toga2:depth=1,random=25"
    got = inspect_rating(spec, served.base_url, 0, 2, tmp_path)
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path), header_only=True)
    assert log.status == "success" and log.eval.model == f"openai-api/local/served/{spec}"
    assert got["games"] == 2 and got["lo"] is not None


def test_the_tasks_logs_are_ranked_with_the_cli_s_results(
        logs: dict[str, EvalLog], tmp_path: Path) -> None:
    for log in logs.values():
        shutil.copy(log.location, tmp_path)
    assert benchmark.main(["leaderboard", "--results", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "leaderboard.json").read_text())["rows"]
    scales = {r["scale"].split(",")[0] for r in rows if r["model"] == f"inspect:{MODEL}"}
    # The games (on the reference scale, or converted to it), the puzzle lines, the static
    # run's scales.
    assert {"game Elo", "puzzle Elo", "human-move Elo"} <= scales, rows
    static = json.loads(next(tmp_path.glob("static__inspect_*.json")).read_text())
    assert static["accuracy"] == metrics(logs["static"])["accuracy"]
    play = json.loads(next(tmp_path.glob("play__inspect_*.json")).read_text())
    assert play["conditions"]["standard"]["elo"]["mean"] == metrics(logs["games"])["elo"]
    puzzles = json.loads(next(tmp_path.glob("puzzles__inspect_*.json")).read_text())
    assert puzzles["elo"]["mean"] == metrics(logs["puzzles"])["puzzle_elo"]
    assert puzzles["n"] == 8
    worldmodel = json.loads(next(tmp_path.glob("worldmodel__inspect_*.json")).read_text())
    assert worldmodel["score"]["score"] == metrics(logs["worldmodel"])["world_model_score"]
    assert worldmodel["positions"] == 6
    # Each log is read back once: a second leaderboard reads nothing again.
    written = {p: p.stat().st_mtime_ns for p in tmp_path.glob("static__*.json")}
    assert benchmark.main(["leaderboard", "--results", str(tmp_path)]) == 0
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("static__*.json")} == written


def test_json_logs_and_logs_without_samples_read_back_from_any_directory(
        served: PlayerServer, tmp_path: Path) -> None:
    """A `--log-format json` log reads back as an .eval one does; a `--no-log-samples` log
    says so; `leaderboard` and `report` work from outside the clone (the committed
    questions file is the repository's)."""
    results, outside = tmp_path / "results", tmp_path / "elsewhere"
    outside.mkdir()
    env = service(served.base_url)
    for extra in (["--log-format", "json"], ["--no-log-samples"]):
        done = subprocess.run([INSPECT, "eval", "chess_eval/static", "--model", MODEL, "-T",
                               "limit=6", "--log-dir", str(results), "--display", "none",
                               *extra], cwd=outside, env=env, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    cli = [sys.executable, str(ROOT / "benchmark.py")]
    board = subprocess.run([*cli, "leaderboard", "--results", str(results)], cwd=outside,
                           capture_output=True, text=True, timeout=900)
    said = " ".join((board.stdout + board.stderr).split())
    assert board.returncode == 0, said
    assert "not a result file" not in said and "did not finish (success)" not in said
    assert "kept no samples (--no-log-samples)" in said, said
    [static] = results.glob("static__inspect_*.json")
    assert json.loads(static.read_text())["n"] == 6
    site = subprocess.run([*cli, "report", "--results", str(results), "--out",
                           str(tmp_path / "site")], cwd=outside, capture_output=True, text=True,
                          timeout=900)
    assert site.returncode == 0, site.stderr[-3000:]


MOCK = """
import sys, chess, re
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

def first_legal(input, tools, tool_choice, config):
    fen = re.search(r"FEN\\): (\\S+ [wb] \\S+ \\S+ \\d+ \\d+)", input[-1].text).group(1)
    output = ModelOutput.from_content("mockllm/model",
                                      min(m.uci() for m in chess.Board(fen).legal_moves))
    # With its usage given, mockllm counts no tokens (its tokenizer would be downloaded).
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output

model = get_model("mockllm/model", custom_outputs=first_legal)
[log] = eval("chess_eval/static", model=model, task_args={"limit": 12},
             log_dir=sys.argv[1], display="none")
print(log.location)
"""


def test_the_static_task_scores_mockllm_s_answers_as_the_cli_grades_them(
        tmp_path: Path) -> None:
    script = tmp_path / "mock.py"
    script.write_text(MOCK)
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    log = read_eval_log(done.stdout.strip().splitlines()[-1])
    assert log.status == "success", log.error
    figures = metrics(log)
    # Every answer is legal (the first legal move in UCI order), few are the best.
    assert figures["legal_rate"] == 1 and figures["n"] == 12
    assert figures["best_move_rate"] < 1 and figures["accuracy"] < 100


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


def test_the_worldmodel_task_gives_the_cli_s_figures(
        logs: dict[str, EvalLog], served: PlayerServer, tmp_path: Path) -> None:
    assert benchmark.main(["worldmodel", "--model", PLAYER, "--base-url", served.base_url,
                           "--limit", "6", "--out", str(tmp_path / "cli")]) == 0
    cli = json.loads(next((tmp_path / "cli").glob("worldmodel__*.json")).read_text())
    shutil.copy(logs["worldmodel"].location, tmp_path)
    assert benchmark.main(["leaderboard", "--results", str(tmp_path)]) == 0
    inspect = json.loads(next(tmp_path.glob("worldmodel__inspect_*.json")).read_text())
    for part in ("self_consistency", "symmetry", "temperature", "t0", "score", "hypothesis"):
        assert inspect[part] == cli[part], part


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
    from lib.benchmark.model import protocols
    from lib.benchmark.model.cost import Budget, price_arg
    from lib.benchmark.model.http_backend import HttpBackend
    from lib.benchmark.model.inspect_backend import backend
    from lib.benchmark.model.interface import ModelConfig, Request

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


@pytest.mark.parametrize("task, arg, said", [
    ("static", "limit=0", "run: limit: must be >= 1"),
    ("games", "max_games=0", "play: max_games: must be >= 1"),
    ("games", "condition=standard,chess960", "one start condition an eval"),
    ("games", "ladder=nope.csv", "ladder=nope.csv: no such file"),
    ("puzzles", "max_puzzles=0", "puzzles: max_puzzles: must be >= 1"),
    ("worldmodel", "limit=0", "worldmodel: limit: must be >= 1"),
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


@pytest.mark.parametrize(("task", "typo"), [("static", "limt=5"), ("games", "foo=1"),
                                             ("puzzles", "max_puzles=2"),
                                             ("worldmodel", "limits=3")])
def test_an_unknown_task_argument_is_refused_before_any_request(
        task: str, typo: str, tmp_path: Path) -> None:
    """A typo in a -T key no longer runs (and bills) the full default eval: it is refused in
    one line that lists the task's arguments, and the provider bills nothing."""
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal, price=0.01) as server:
        done = subprocess.run([INSPECT, "eval", f"chess_eval/{task}", "--model",
                               "openai-api/local/m", "-T", typo, "--log-dir", str(tmp_path)],
                              cwd=ROOT, env=service(server.base_url),
                              capture_output=True, text=True, timeout=600)
        billed = server.billed
    shown = " ".join((done.stdout + done.stderr).split())
    key = typo.split("=")[0]
    assert done.returncode != 0 and f"unknown task argument(s) {key}; it takes" in shown, shown
    assert "Traceback" not in shown and billed == 0


def test_every_answer_changing_setting_is_in_the_identity(served: PlayerServer,
                                                          tmp_path: Path) -> None:
    """Two evals that differ only in --reasoning-effort are two runs: two result files when
    read back, neither replacing the other."""
    logs = tmp_path / "logs"
    for effort in ("low", "high"):
        done = subprocess.run([INSPECT, "eval", "chess_eval/static", "--model", MODEL,
                               "--log-dir", str(logs), "--display", "none", "-T", "limit=4",
                               "--reasoning-effort", effort], cwd=tmp_path,
                              env=service(served.base_url), capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    assert benchmark.main(["leaderboard", "--results", str(logs)]) == 0
    results = [json.loads(p.read_text()) for p in logs.glob("static__inspect_*.json")]
    assert sorted(r["model"] for r in results) == [f"inspect:{MODEL} [effort=high]",
                                                  f"inspect:{MODEL} [effort=low]"]


def test_the_eval_s_transport_settings_are_used_as_given(tmp_path: Path) -> None:
    """--max-retries 1 on evals whose requests all fail: a request of the world-model task
    (asked through the product's model layer) is attempted as often as one Inspect's own
    generate makes in the static task, not by the CLI's default of six retries."""
    def attempts(task: str) -> int:
        with ChatServer(lambda fen, n: Response(status=500, text="down")) as server:
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


@pytest.mark.parametrize(("subset", "said"), [
    (["--limit", "2"], None),
    (["--sample-id", "3,5"], "has no sample in this eval"),
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


def test_a_retried_games_sample_plays_another_game(tmp_path: Path) -> None:
    """--retry-on-error: one request refused once fails its game's sample; the retried sample
    takes the schedule's next game and the eval completes."""
    refused: list[str] = []

    def answer(body: dict) -> Response:
        board = chess.Board(FEN_RE.search(body["messages"][-1]["content"]).group(1))
        if board.fullmove_number >= 4 and not refused:
            refused.append(board.fen())
            return Response(status=400, text="this request is refused")
        return Response(f"Final answer: {min(m.uci() for m in board.legal_moves)}")
    with ChatServer(lambda fen, n: Response(), on_body=answer) as server:
        done = subprocess.run([INSPECT, "eval", "chess_eval/games", "--model",
                               "openai-api/local/m", "-T", "max_games=3", "-T",
                               "ladder=stockfish-15.1", "--retry-on-error", "1", "--log-dir",
                               str(tmp_path), "--display", "none"], cwd=ROOT,
                              env=service(server.base_url), capture_output=True, text=True,
                              timeout=600)
    assert refused, done.stderr[-2000:]
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success", (log.error, done.stderr[-2000:])
    assert metrics(log)["games"] >= 3


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
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal, price=0.01) as server:
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


def test_a_reply_a_token_limit_stops_after_is_charged_and_kept(tmp_path: Path) -> None:
    """--token-limit: Inspect raises its limit once a reply is in, and keeps the reply from
    its caller. Every reply the provider billed is in the run's store all the same (the
    sample is recorded as limited, not as "not needed"), so a rerun buys none again."""
    cache = tmp_path / "cache"
    argv = [INSPECT, "eval", "chess_eval/games", "--model", "openai-api/local/m", "-T",
            "max_games=2", "-T", "ladder=stockfish-15.1", "--token-limit", "200", "--log-dir",
            str(tmp_path / "logs"), "--display", "none", "--fail-on-error", "1"]
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal, price=0.01) as server:
        env = {**service(server.base_url), "CHESS_EVAL_CACHE": str(cache)}
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
        billed = server.billed
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    limited = [s for s in log.samples or [] if s.limit is not None]
    assert limited and all(s.limit.type == "token" for s in limited), done.stderr[-2000:]
    said = [score.explanation for s in limited for score in (s.scores or {}).values()]
    assert said and all("cut off" in (e or "") for e in said)
    kept = 0  # the model's answers in the run's store (the rungs' moves are there too)
    for db in cache.glob("*/games.db"):
        with sqlite3.connect(db) as conn:
            kept += conn.execute("SELECT count(*) FROM answers WHERE key LIKE 'inspect:%'"
                                 ).fetchone()[0]
    assert billed > 0 and kept == billed


def _finished(cache: Path, task: str) -> int:
    """Games (lines) the run under `cache` has finished and stored."""
    db, table = {"games": ("games.db", "games"), "puzzles": ("puzzles.db", "puzzles")}[task]
    found = 0
    for path in cache.glob(f"{task}-*/{db}"):
        conn = sqlite3.connect(path, timeout=60)
        with contextlib.suppress(sqlite3.OperationalError):  # the table is not made yet
            found += conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        conn.close()
    return found


# Each task's arguments, and where a sample's unit (game, line) keeps its place in the run.
LIFECYCLE = {"games": (["-T", "max_games=6", "-T", "ladder=stockfish-15.1", "-T",
                        f"endpoint_id={ENDPOINT}"], "game"),
             "puzzles": (["-T", "max_puzzles=6"], "line"),
             "worldmodel": (["-T", "limit=6"], "answers")}


def _units(log: EvalLog, task: str) -> list[int]:
    """The places in the run of the units (games, lines) a log's samples recorded."""
    key = LIFECYCLE[task][1]
    return [(s.store or {})[key]["index"] for s in log.samples or []
            if (s.store or {}).get(key)]


def _lifecycle_eval(task: str, cache: Path, logs: Path, server: ChatServer,
                    *extra: str) -> subprocess.Popen[str]:
    """`inspect eval chess_eval/TASK` on a store of its own, started as a user would."""
    env = {**service(server.base_url), "CHESS_EVAL_CACHE": str(cache)}
    return subprocess.Popen([INSPECT, "eval", f"chess_eval/{task}", "--model",
                             "openai-api/local/m", *LIFECYCLE[task][0], "--display", "none",
                             "--log-dir", str(logs), *extra],
                            cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def _undisturbed(task: str, tmp_path: Path) -> dict[str, float]:
    """The metrics of an eval nothing interrupts."""
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal) as server:
        run = _lifecycle_eval(task, tmp_path / "cache0", tmp_path / "logs0", server)
        assert run.wait(timeout=600) == 0, run.stderr.read()[-2000:]
    [first] = (tmp_path / "logs0").glob("*.eval")
    return metrics(read_eval_log(str(first)))


@pytest.mark.parametrize(("task", "when"), [("games", "before a game ends"),
                                            ("games", "after games ended"),
                                            ("puzzles", "after lines ended")])
def test_an_adaptive_eval_stopped_by_ctrl_c_and_retried_buys_nothing_twice(
        task: str, when: str, tmp_path: Path) -> None:
    """Ctrl-C midway through a games (puzzles) eval, then `inspect eval-retry` on its log:
    the retry completes, the provider billed no prompt twice, and the rating is the
    undisturbed eval's (the same units: the run's stores outlive the interrupted eval), each
    unit recorded once (unit k is sample k's, so a retried sample never records a finished
    one again; before, games 0 and 1 were recorded twice and rated as five of three)."""
    expected = _undisturbed(task, tmp_path)
    slow = lambda body: Response(_first_legal(body).text, delay=0.2)  # noqa: E731
    with ChatServer(lambda fen, n: Response(), on_body=slow, price=0.01) as server:
        env = {**service(server.base_url), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
        stopped = _lifecycle_eval(task, tmp_path / "cache", tmp_path / "logs", server)

        def midway() -> bool:
            return server.billed >= 8 if when == "before a game ends" \
                else _finished(tmp_path / "cache", task) >= 2
        while not midway() and stopped.poll() is None:  # midway through its units
            threading.Event().wait(0.05)
        assert stopped.poll() is None, (server.billed, stopped.stderr.read()[-3000:])
        os.killpg(stopped.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the group
        stopped.wait(timeout=120)
        [log] = (tmp_path / "logs").glob("*.eval")
        assert read_eval_log(str(log), header_only=True).status == "cancelled"
        retry = subprocess.run([INSPECT, "eval-retry", str(log), "--log-dir",
                                str(tmp_path / "logs"), "--display", "none"], cwd=ROOT,
                               env=env, capture_output=True, text=True, timeout=600)
        bought = server.bought
    assert retry.returncode == 0, retry.stderr[-2000:]
    assert max(bought.values()) == 1  # no prompt bought twice
    [again] = set((tmp_path / "logs").glob("*.eval")) - {log}
    retried = read_eval_log(str(again))
    assert retried.status == "success"
    assert metrics(retried) == expected
    recorded = _units(retried, task)
    count = "games" if task == "games" else "puzzles"
    assert sorted(recorded) == list(range(len(recorded))) and len(recorded) == \
        metrics(retried)[count]  # each unit once, none missing
    if when != "before a game ends":  # the interrupted eval had recorded some already
        assert _units(read_eval_log(str(log)), task)


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
        return _first_legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=held, price=0.01) as server:
        first = _lifecycle_eval(task, tmp_path / "cache", tmp_path / "logs1", server)
        try:
            while not asked.is_set() and first.poll() is None:  # the first is asking
                threading.Event().wait(0.05)
            assert first.poll() is None, first.stderr.read()[-3000:]
            second = _lifecycle_eval(task, tmp_path / "cache", tmp_path / "logs2", server)
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


BOUNDED = {"games": ("max_games", ["-T", "ladder=stockfish-15.1", "-T",
                                   f"endpoint_id={ENDPOINT}"]),
           "puzzles": ("max_puzzles", [])}


@pytest.mark.parametrize("task", sorted(BOUNDED))
def test_a_larger_then_smaller_bound_on_one_cache_plays_on_and_rates_as_undisturbed(
        task: str, tmp_path: Path) -> None:
    """`-T max_games=2`, then 3, then 2 again on one cache (puzzles: max_puzzles): the
    second buys only the third unit's requests (before, a folder keyed by the bound played
    all three again), the third buys nothing, and each log rates what an undisturbed eval
    with its bound rates."""
    bound, extra = BOUNDED[task]

    def evaluate(n: int, cache: Path, server: ChatServer) -> dict[str, float]:
        logs = tmp_path / f"logs-{cache.name}-{n}-{len(server.bodies)}"
        done = subprocess.run([INSPECT, "eval", f"chess_eval/{task}", "--model",
                               "openai-api/local/m", "-T", f"{bound}={n}", *extra,
                               "--display", "none", "--log-dir", str(logs)], cwd=ROOT,
                              env={**service(server.base_url), "CHESS_EVAL_CACHE": str(cache)},
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        [log] = logs.glob("*.eval")
        return metrics(read_eval_log(str(log)))
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal) as server:
        undisturbed = {n: evaluate(n, tmp_path / f"alone{n}", server) for n in (2, 3)}
        server.bodies.clear()
        first = evaluate(2, tmp_path / "shared", server)
        two = Counter(json.dumps(b["messages"]) for b in server.bodies)
        larger = evaluate(3, tmp_path / "shared", server)
        three = Counter(json.dumps(b["messages"]) for b in server.bodies)
        again = evaluate(2, tmp_path / "shared", server)
        after = len(server.bodies)
    assert (first, larger, again) == (undisturbed[2], undisturbed[3], undisturbed[2])
    assert max(three.values()) == 1 and sum(three.values()) > sum(two.values())
    assert after == sum(three.values())  # the smaller bound again: nothing bought


@pytest.mark.parametrize(("task", "bound"), [("worldmodel", "limit=2"),
                                           ("puzzles", "max_puzzles=2")])
def test_endpoint_id_shares_a_run_between_two_addresses_of_one_endpoint(
        task: str, bound: str, tmp_path: Path) -> None:
    """`-T endpoint_id=NAME`, as the CLI's --endpoint-id: one endpoint reached by two
    addresses (127.0.0.1 and localhost) is one run, so the second eval buys nothing (the
    tasks lacked the argument: the second address bought every prompt again)."""
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal) as server:
        for host in ("127.0.0.1", "localhost"):
            url = server.base_url.replace("127.0.0.1", host)
            env = {**service(url), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
            done = subprocess.run([INSPECT, "eval", f"chess_eval/{task}", "--model",
                                   "openai-api/local/m", "-T", bound, "-T", "endpoint_id=here",
                                   "--display", "none", "--log-dir", str(tmp_path / host)],
                                  cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, done.stderr[-2000:]
            if host == "127.0.0.1":
                bought = len(server.bodies)
        assert bought > 0 and len(server.bodies) == bought
    [first], [second] = ((tmp_path / h).glob("*.eval") for h in ("127.0.0.1", "localhost"))
    assert metrics(read_eval_log(str(first))) == metrics(read_eval_log(str(second)))


def test_a_larger_worldmodel_limit_on_one_cache_buys_only_the_positions_added(
        tmp_path: Path) -> None:
    """`-T limit=2`, then `-T limit=3` on the same cache: the second eval asks only the third
    position's prompts (before, a folder keyed by the limit bought all three again), and
    both runs keep their books in the one folder."""
    sent: Counter[str] = Counter()
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal, price=0.01) as server:
        env = {**service(server.base_url), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
        for limit in (2, 3):
            done = subprocess.run([INSPECT, "eval", "chess_eval/worldmodel", "--model",
                                   "openai-api/local/m", "-T", f"limit={limit}", "--display",
                                   "none", "--log-dir", str(tmp_path / f"logs{limit}")],
                                  cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, done.stderr[-2000:]
            sent.update(json.dumps([b["messages"], b.get("temperature")])
                        for b in server.bodies)
            if limit == 2:
                first = len(server.bodies)
            server.bodies.clear()
    assert max(sent.values()) == 1  # no request sent twice
    assert sum(sent.values()) - first == first // 2  # the third position's prompts
    for limit in (2, 3):
        [log] = (tmp_path / f"logs{limit}").glob("*.eval")
        assert read_eval_log(str(log)).status == "success"
    [books] = (tmp_path / "cache").glob("worldmodel-*/books/*.jsonl")
    assert len(books.read_text().splitlines()) == 2


@pytest.mark.parametrize("task", sorted(LIFECYCLE))
def test_a_cache_folder_that_cannot_be_made_fails_the_eval_in_a_line_and_asks_nothing(
        task: str, tmp_path: Path) -> None:
    """CHESS_EVAL_CACHE under a file: the eval ends (games and puzzles waited for ever: the
    driver's error reached no sample) with that line as its error, before any request."""
    (tmp_path / "file").write_text("")
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal) as server:
        run = _lifecycle_eval(task, tmp_path / "file" / "cache", tmp_path / "logs", server)
        _, err = run.communicate(timeout=600)
        assert server.bodies == []
    [log] = (tmp_path / "logs").glob("*.eval")
    failed = read_eval_log(str(log))
    assert failed.status == "error" and failed.error is not None, err[-2000:]
    assert "cannot keep the runs' stores there" in failed.error.message


def test_a_run_folder_keyed_by_its_limit_before_is_moved_not_bought_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache made when the folder's name held the limit is found under the new name."""
    from lib.benchmark.inspect_eval.sample import CACHE_ENV, run_dir

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


@pytest.mark.parametrize("task", ["games", "puzzles"])
def test_eval_set_s_own_retries_after_a_refused_request_rate_the_undisturbed_units(
        task: str, tmp_path: Path) -> None:
    """One request refused (HTTP 400) fails the eval after some units ended; `inspect
    eval-set --retry-attempts 2` retries it itself (the same Task object, in the same
    process): the failed eval's run lets go of its stores, and the final log is a success
    with the undisturbed eval's rating, each unit recorded once, no prompt bought twice.
    (Before, it rated 1 game of 2 while the store held both.)"""
    expected = _undisturbed(task, tmp_path)
    refused: list[str] = []

    def answer(body: dict) -> Response:
        fen = FEN_RE.search(json.dumps(body)).group(1)
        if not refused and server.billed >= {"games": 12, "puzzles": 3}[task]:
            refused.append(fen)
            return Response(status=400, text="this request is refused")
        return _first_legal(body)
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
    assert metrics(final[0]) == expected
    recorded = _units(final[0], task)
    assert sorted(recorded) == list(range(len(recorded)))


def test_a_time_limit_cuts_off_waiting_samples_and_says_so(tmp_path: Path) -> None:
    """--time-limit shorter than the schedule: the samples still waiting for a game are cut
    off and say so; a game offered meanwhile goes to a sample that can play it, and the eval
    rates the games played (no traceback from the run's thread)."""
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal) as server:
        done = subprocess.run([INSPECT, "eval", "chess_eval/games", "--model",
                               "openai-api/local/m", "-T", "max_games=10", "-T",
                               f"endpoint_id={ENDPOINT}", "-T", "ladder=stockfish-15.1",
                               "--time-limit", "4", "--log-dir",
                               str(tmp_path), "--display", "none"], cwd=ROOT,
                              env=service(server.base_url), capture_output=True, text=True,
                              timeout=600)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    played = [s for s in log.samples or [] if (s.store or {}).get("game")]
    cut = [s for s in log.samples or [] if s not in played]
    assert log.status == "success" and cut  # (on a busy machine no game may finish)
    assert all(s.limit is not None and s.limit.type == "time" for s in cut)
    assert all("cut off" in (sc.explanation or "") for s in cut for sc in s.scores.values())
    assert metrics(log)["games"] == len(played)


def _first_legal(body: dict) -> Response:
    """The first legal move in UCI order, of the position a request names."""
    fen = FEN_RE.search(json.dumps(body)).group(1)
    return Response(f"Final answer: {min(m.uci() for m in chess.Board(fen).legal_moves)}")


def test_a_time_limit_stops_a_game_within_a_move(tmp_path: Path) -> None:
    """--time-limit stops a game in play: its door closes the moment the sample is cut off,
    the reply in flight lands, and no further move is asked (the game kept as aborted, not
    rated). Before, the limit waited for the game's thread: a whole game, rated."""
    delay, limit, games = 0.5, 3, 2

    def slow(body: dict) -> Response:
        return replace(_first_legal(body), delay=delay)
    with ChatServer(lambda fen, n: Response(), on_body=slow) as server:
        done = subprocess.run([INSPECT, "eval", "chess_eval/games", "--model",
                               "openai-api/local/m", "-T", f"max_games={games}", "-T",
                               f"endpoint_id={ENDPOINT}", "-T", "ladder=stockfish-15.1",
                               "-T", "concurrency=1", "--time-limit", str(limit),
                               "--log-dir", str(tmp_path), "--display", "none"], cwd=ROOT,
                              env=service(server.base_url), capture_output=True, text=True,
                              timeout=600)
        billed = server.billed
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    cut = [s for s in log.samples or [] if s.limit is not None and s.limit.type == "time"]
    assert cut, [s.limit for s in log.samples or []]
    assert not [s for s in cut if (s.store or {}).get("game")]  # none of them rated
    # Each sample asks at most for the moves its time allows, and one more in flight.
    assert billed <= 2 * games * (limit / delay + 1), billed


REUSE = """
import json, sys
from inspect_ai import eval
from chess_eval.tasks import games, puzzles

def figures(log):
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}

task = {"games": lambda: games(max_games=2, endpoint_id="served", ladder="stockfish-15.1"),
        "puzzles": lambda: puzzles(max_puzzles=3)}[sys.argv[2]]()
out = []
for models in (["openai-api/local/m"], ["openai-api/local/m"],
               ["openai-api/local/m", "openai-api/local/n"]):
    for log in eval(task, model=models, log_dir=sys.argv[1], display="none"):
        out.append({"model": log.eval.model, "status": log.status, **figures(log)})
import gc
from lib.benchmark.inspect_eval.sample import Driver
gc.collect()
drivers = [o for o in gc.get_objects() if isinstance(o, Driver)]
for d in drivers:  # each ends once its eval has (a driver never outlives it for long)
    if d.thread is not None:
        d.thread.join(timeout=120)
out.append({"drivers": len(drivers),
            "running": sum(d.thread is not None and d.thread.is_alive() for d in drivers)})
print(json.dumps(out))
"""


@pytest.mark.parametrize(("task", "count"), [("games", "games"), ("puzzles", "puzzles")])
def test_one_task_object_evaluated_again_and_for_two_models_rates_each_eval(
        task: str, count: str, tmp_path: Path) -> None:
    """A Task object evaluated twice, then for two models in one eval(): each eval runs a
    run of its own (the second finds the first's games or lines in the store and its samples
    record them), so every log is a success rating the same games, and nothing is bought
    twice; the second model is asked too."""
    env = {**service("unused"), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal) as server:
        env["LOCAL_BASE_URL"] = server.base_url
        done = subprocess.run([sys.executable, "-c", REUSE, str(tmp_path / "logs"), task],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        bodies = list(server.bodies)
    first, again, *both, drivers = json.loads(done.stdout.strip().splitlines()[-1])
    # Four evals: the ended runs are let go (the task's shape and the last eval's two runs
    # remain, none still going), where before every run of every eval was kept.
    assert drivers["drivers"] <= 3 and drivers["running"] == 0, drivers
    wanted = 2 if task == "games" else 3
    assert all(log["status"] == "success" for log in (first, again, *both))
    assert first[count] == again[count] == wanted, (first, again)
    # The same games or lines, the same rating (every figure, a bound included).
    assert {k: v for k, v in first.items() if k != "model"} == \
        {k: v for k, v in again.items() if k != "model"}
    assert {log["model"] for log in both} == {"openai-api/local/m", "openai-api/local/n"}
    assert all(log[count] == wanted for log in both)
    asked = Counter((b.get("model"), json.dumps(b["messages"])) for b in bodies
                    if "messages" in b)
    assert {model for model, _ in asked} >= {"m", "n"}  # the second model was asked
    assert max(asked.values()) == 1  # no prompt of a model bought twice



OPPONENT = "served/gnuchess:depth=1"  # a second deterministic player, of another family


def test_the_match_task_plays_the_cli_s_match_between_the_eval_s_two_models(
        served: PlayerServer, tmp_path: Path) -> None:
    """`inspect eval chess_eval/match --model A --model-role opponent=B`: each game a sample,
    and, both players deterministic, the same games and statistics as `benchmark.py match`
    between them; a rerun buys nothing; without the role, one line saying what to add."""
    env = {**service(served.base_url), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
    logs = tmp_path / "logs"
    args = ["max_games=6", f"endpoint_id={ENDPOINT}"]
    roles = ["--model-role", f"opponent=openai-api/local/{OPPONENT}"]
    argv = [INSPECT, "eval", "chess_eval/match", "--model", MODEL, *roles, "--log-dir",
            str(logs), "--display", "none", *(x for a in args for x in ("-T", a))]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    [path] = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success"
    got = metrics(log)
    played = [s for s in log.samples or [] if s.scores["match_scorer"].metadata["game"]]
    assert len(played) == got["games"] == 6 and got["pairs"] == 3
    assert benchmark.main(["match", "--model", PLAYER, "--opponent", OPPONENT, "--base-url",
                           served.base_url, "--endpoint-id", ENDPOINT, "--max-games", "6",
                           "--out", str(tmp_path / "cli")]) == 0
    cli = json.loads(next((tmp_path / "cli").glob("match__*.json")).read_text())
    assert got["score"] == pytest.approx(cli["score"]["value"], abs=1e-4)
    assert (got["score_lo"], got["score_hi"]) == pytest.approx(
        (cli["score"]["lo"], cli["score"]["hi"]), abs=1e-4)
    # The same games: each sample's PGN moves are the CLI's game of that pair and colour.
    with (tmp_path / "cli").glob("match__*.pgn").__next__().open() as handle:
        cli_games = list(iter(lambda: chess.pgn.read_game(handle), None))
    for sample in sorted(played, key=lambda s: int(s.id)):
        record = sample.scores["match_scorer"].metadata["game"]["record"]
        game = cli_games[int(sample.id) - 1]
        assert record["moves"] == [m.uci() for m in game.mainline_moves()]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    [again] = set(logs.glob("*.eval")) - {path}
    rerun = read_eval_log(str(again))
    assert metrics(rerun) == got  # every game found stored: no request in any sample
    assert not any(e.event == "model" for s in rerun.samples or [] for e in s.events)
    # Its log is not read back into a result file, and says so (not misread as another task's).
    from lib.benchmark.inspect_eval.logs import read_log
    from lib.errors import DataError
    with pytest.raises(DataError, match="chess_eval/match log is not read back"):
        read_log(path, tmp_path / "readback")
    # Each model's books in the run's folder: a line per eval, the rerun's buying nothing.
    books = sorted((tmp_path / "cache").glob("match-*/books/match__*.jsonl"))
    assert [p.name for p in books] == ["match__first.jsonl", "match__second.jsonl"]
    for book in books:
        sent = [json.loads(line)["requests_sent"] for line in book.read_text().splitlines()]
        assert len(sent) == 2 and sent[0] > 0 and sent[1] == 0
    lone = subprocess.run([INSPECT, "eval", "chess_eval/match", "--model", MODEL, "--log-dir",
                           str(tmp_path / "lone"), "--display", "none", "-T", "max_games=2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert "Traceback" not in lone.stderr
    [lone_log] = (tmp_path / "lone").glob("*.eval")
    failed = read_eval_log(str(lone_log))
    assert failed.status == "error" and "--model-role opponent=" in str(failed.error)
