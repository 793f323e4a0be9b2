"""What the Inspect tests share: the served player, `inspect eval` run as a user runs it,
a log's metrics, and the lifecycle evals (each on a store of its own) against a local
chat server."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import chess
from inspect_ai.log import EvalLog, read_eval_log

from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.conftest import ROOT

INSPECT = str(Path(sys.executable).parent / "inspect")
PLAYER = "served/sjeng:depth=1"  # a player the ladder places within a few games
MODEL = f"openai-api/local/{PLAYER}"  # Inspect's provider for an OpenAI-compatible service
GAMES = 10  # games of each rating: the small budget
LIMIT = 24  # static questions
# The served player's name in both ratings (else the server's port, drawn anew by each test
# run, would be part of the player's identity and so of every game's seed).
ENDPOINT = "served"


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


def first_legal(body: dict) -> Response:
    """The first legal move in UCI order, of the position a request names."""
    fen = FEN_RE.search(json.dumps(body)).group(1)
    return Response(f"Final answer: {min(m.uci() for m in chess.Board(fen).legal_moves)}")


def finished(cache: Path, task: str) -> int:
    """Games (lines) the run under `cache` has finished and stored."""
    db, table = {"games": ("games.db", "games"), "puzzles": ("puzzles.db", "puzzles"),
                 "match": ("match.db", "games")}[task]
    found = 0
    for path in cache.glob(f"{task}-*/{db}"):
        conn = sqlite3.connect(path, timeout=60)
        with contextlib.suppress(sqlite3.OperationalError):  # the table is not made yet
            found += conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        conn.close()
    return found


# Each task's arguments, and where a sample's unit (game, line) keeps its place in the run.
LIFECYCLE = {"games": (["-T", "max_games=4", "-T", "ladder=stockfish-15.1", "-T",
                        f"endpoint_id={ENDPOINT}"], "game"),
             "puzzles": (["-T", "max_puzzles=6"], "line"),
             "match": (["-T", "max_games=4", "--model-role", "opponent=openai-api/local/o"],
                       "game"),
             "worldmodel": (["-T", "limit=6"], "answers")}


def units(log: EvalLog, task: str) -> list[int]:
    """The places in the run of the units (games, lines) a log's samples recorded."""
    key = LIFECYCLE[task][1]
    return [(s.store or {})[key]["index"] for s in log.samples or []
            if (s.store or {}).get(key)]


def lifecycle_eval(task: str, cache: Path, logs: Path, server: ChatServer,
                    *extra: str) -> subprocess.Popen[str]:
    """`inspect eval chess_eval/TASK` on a store of its own, started as a user would."""
    env = {**service(server.base_url), "CHESS_EVAL_CACHE": str(cache)}
    return subprocess.Popen([INSPECT, "eval", f"chess_eval/{task}", "--model",
                             "openai-api/local/m", *LIFECYCLE[task][0], "--display", "none",
                             "--log-dir", str(logs), *extra],
                            cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def undisturbed(task: str, tmp_path: Path) -> dict[str, float]:
    """The metrics of an eval nothing interrupts."""
    with ChatServer(lambda fen, n: Response(), on_body=first_legal) as server:
        run = lifecycle_eval(task, tmp_path / "cache0", tmp_path / "logs0", server)
        assert run.wait(timeout=600) == 0, run.stderr.read()[-2000:]
    [first] = (tmp_path / "logs0").glob("*.eval")
    return metrics(read_eval_log(str(first)))



def _place(fen: str) -> str:
    """A position without its move counters (a prompt's FEN and a replay's compare alike)."""
    return " ".join(fen.split()[:4])


def own_positions(sample: Any) -> set[str]:
    """Every position of the game (puzzle line) a sample recorded: where its requests may
    ask from."""
    store = sample.store or {}
    if store.get("game"):
        record = store["game"]["record"]
        board, places = chess.Board(record["start"]["fen"]), set()
        for move in record["moves"]:
            places.add(_place(board.fen()))
            board.push_uci(move)
        return places | {_place(board.fen())}
    if store.get("line"):
        line = store["line"]["line"]
        board, places = chess.Board(line["fen"]), set()
        for move in line["solution"]:  # the solver is asked on the key's path alone
            places.add(_place(board.fen()))
            board.push_uci(move)
        return places | {_place(board.fen())}
    return set()


def foreign_requests(log: EvalLog) -> list[tuple[Any, str]]:
    """(sample id, position) of each model request in a sample's transcript that asks from
    a position of no game (line) of that sample's own: none, when each sample holds exactly
    its own unit's requests."""
    bad = []
    for sample in log.samples or []:
        own = own_positions(sample)
        for event in sample.events or []:
            if event.event != "model":
                continue
            asked = {_place(f) for f in FEN_RE.findall(json.dumps(event.model_dump(
                mode="json")["input"]))}
            bad += [(sample.id, p) for p in sorted(asked - own)]
    return bad


def requests_of(log: EvalLog) -> dict[Any, int]:
    """Model requests in each sample's transcript."""
    return {s.id: sum(e.event == "model" for e in s.events or []) for s in log.samples or []}
