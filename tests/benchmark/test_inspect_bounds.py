"""One run's stores across evals and limits: larger and smaller bounds on one cache, one
endpoint under two addresses, a Task object evaluated again, a retried sample, and the token
and time limits (what was bought is kept, what was cut off says so)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import chess
import pytest
from inspect_ai.log import read_eval_log

from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.benchmark.inspect_helpers import (
    ENDPOINT,
    INSPECT,
    first_legal,
    metrics,
    service,
)
from tests.conftest import ROOT

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
    with ChatServer(lambda fen, n: Response(), on_body=first_legal) as server:
        undisturbed = evaluate(3, tmp_path / "alone", server)
        server.bodies.clear()
        # The first eval on the shared cache is itself an undisturbed eval with its bound.
        first = evaluate(2, tmp_path / "shared", server)
        two = Counter(json.dumps(b["messages"]) for b in server.bodies)
        larger = evaluate(3, tmp_path / "shared", server)
        three = Counter(json.dumps(b["messages"]) for b in server.bodies)
        again = evaluate(2, tmp_path / "shared", server)
        after = len(server.bodies)
    assert (larger, again) == (undisturbed, first)
    assert first != larger  # the bound is rated: 2 units are not 3
    assert max(three.values()) == 1 and sum(three.values()) > sum(two.values())
    assert after == sum(three.values())  # the smaller bound again: nothing bought



@pytest.mark.parametrize(("task", "bound"), [("worldmodel", "limit=2"),
                                           ("puzzles", "max_puzzles=2")])
def test_endpoint_id_shares_a_run_between_two_addresses_of_one_endpoint(
        task: str, bound: str, tmp_path: Path) -> None:
    """`-T endpoint_id=NAME`, as the CLI's --endpoint-id: one endpoint reached by two
    addresses (127.0.0.1 and localhost) is one run, so the second eval buys nothing (the
    tasks lacked the argument: the second address bought every prompt again)."""
    with ChatServer(lambda fen, n: Response(), on_body=first_legal) as server:
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
    with ChatServer(lambda fen, n: Response(), on_body=first_legal, price=0.01) as server:
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
import gc, threading
from chess_eval.benchmark.inspect_eval.sample import Held
gc.collect()
held = [o for o in gc.get_objects() if isinstance(o, Held)]
out.append({"runs": len(held), "open": sum(h.open for h in held),
            "threads": threading.active_count()})
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
    with ChatServer(lambda fen, n: Response(), on_body=first_legal) as server:
        env["LOCAL_BASE_URL"] = server.base_url
        done = subprocess.run([sys.executable, "-c", REUSE, str(tmp_path / "logs"), task],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        bodies = list(server.bodies)
    first, again, *both, runs = json.loads(done.stdout.strip().splitlines()[-1])
    # Four evals, each with a run its samples shared: none is open once its eval has
    # ended (its claims released: no claim file is left in the cache).
    assert runs["runs"] >= 1 and runs["open"] == 0, runs
    assert not list((tmp_path / "cache").rglob("*.claim"))
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



def test_a_reply_a_token_limit_stops_after_is_charged_and_kept(tmp_path: Path) -> None:
    """--token-limit: Inspect raises its limit once a reply is in, and keeps the reply from
    its caller. Every reply the provider billed is in the run's store all the same (the
    sample is recorded as limited, not as "not needed"), so a rerun buys none again."""
    cache = tmp_path / "cache"
    argv = [INSPECT, "eval", "chess_eval/games", "--model", "openai-api/local/m", "-T",
            "max_games=2", "-T", "ladder=stockfish-15.1", "--token-limit", "200", "--log-dir",
            str(tmp_path / "logs"), "--display", "none", "--fail-on-error", "1"]
    with ChatServer(lambda fen, n: Response(), on_body=first_legal, price=0.01) as server:
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



def test_a_time_limit_cuts_off_waiting_samples_and_says_so(tmp_path: Path) -> None:
    """--time-limit shorter than the schedule: the samples still waiting for a game are cut
    off and say so; a game offered meanwhile goes to a sample that can play it, and the eval
    rates the games played (no traceback from the run's thread)."""
    with ChatServer(lambda fen, n: Response(), on_body=first_legal) as server:
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



def test_a_time_limit_stops_a_game_within_a_move(tmp_path: Path) -> None:
    """--time-limit stops a game in play: its door closes the moment the sample is cut off,
    the reply in flight lands, and no further move is asked (the game kept as aborted, not
    rated). Before, the limit waited for the game's thread: a whole game, rated."""
    delay, limit, games = 0.5, 3, 2

    def slow(body: dict) -> Response:
        return replace(first_legal(body), delay=delay)
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

