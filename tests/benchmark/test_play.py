"""`benchmark.py play` for real: baselines, a local model server, kill -9."""

import csv
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess
import pytest

import benchmark
from chess_eval import engine as engine_mod
from chess_eval.benchmark.arena.ladder import LADDER_FIELDS
from chess_eval.benchmark.core.data import REFERENCE_LADDER
from chess_eval.benchmark.games import cli as games_cli
from chess_eval.engine import engine_identity
from chess_eval.exits import Exit
from tests.benchmark.chatserver import ChatServer, Response
from tests.conftest import ROOT, fault_engine

RUNGS = [("random@1", "random", "", -900), ("mix50@1", "mix:random=50,nodes=1000", "", 400),
         ("sf20k@1", "stockfish:nodes=20000", "1350", 1350)]


@pytest.fixture()
def ladder(tmp_path: Path, stockfish: str) -> Path:
    """A three-rung ladder file of the engine here."""
    return write_ladder(tmp_path / "ladder.csv", engine_identity(stockfish))


def write_ladder(path: Path, engine: str) -> Path:
    """A three-rung ladder file measured with `engine`, and its covariance."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, LADDER_FIELDS, lineterminator="\n")
        writer.writeheader()
        for name, spec, anchor, elo in RUNGS:
            writer.writerow({"rung": name, "spec": spec, "anchor": anchor, "elo": elo,
                             "lo": elo - 50, "hi": elo + 50, "games": 10, "score": 0.5,
                             "nu": 0.5, "engine": engine})
    # Rung Elos known to +-16 (sd 10) relative to the anchor, correlated along the chain.
    names = [name for name, *_ in RUNGS]
    cov = [[200, 100, 0], [100, 100, 0], [0, 0, 0]]
    with open(path.with_name(f"{path.stem}_cov.csv"), "w", encoding="utf-8") as handle:
        handle.write("rung," + ",".join(names) + "\n")
        for name, row in zip(names, cov, strict=True):
            handle.write(name + "," + ",".join(map(str, row)) + "\n")
    return path


def _play(ladder: Path, out: Path, *extra: str) -> list[str]:
    return ["play", "--ladder", str(ladder), "--out", str(out), "--ply-cap", "16",
            "--max-games", "3", *extra]


def _san(fen: str) -> str:
    board = chess.Board(fen)
    return board.san(sorted(board.legal_moves, key=chess.Move.uci)[0])


def test_baseline_games_resume_after_kill_9_byte_identical(ladder: Path, tmp_path: Path) -> None:
    argv = _play(ladder, tmp_path / "a", "--model", "mix:random=50,nodes=1000",
                 "--conditions", "standard,chess960", "--concurrency", "2")
    assert benchmark.main(argv) == 0
    [result] = (tmp_path / "a").glob("play__*.json")
    data = json.loads(result.read_text())
    for name in ("standard", "chess960"):
        c = data["conditions"][name]
        assert c["games"] == 3 and c["w"] + c["d"] + c["l"] == 3 and c["aborted"] == 0
        assert c["elo"]["text"]
        # The rungs' Elos are uncertain (the fixture's covariance): that is in the interval.
        assert c["ladder"]["sd"] > 0 and len(c["ladder"]["weights"]) == 3
    rated = [c for c in data["conditions"].values() if c["elo"]["kind"] == "interval"]
    for c in rated:  # partial pooling, when two conditions have intervals
        assert ("pooled" in c) == (len(rated) >= 2)
    assert data["ladder"]["cov"][0] == [200.0, 100.0, 0.0]
    assert data["taxonomy"]["legal"] == data["taxonomy"]["attempts"] > 0
    pgn = result.with_suffix(".pgn").read_text()
    assert pgn.count("[Event ") == 6 and '[Variant "Chess960"]' in pgn
    # Games 1 and 3 of the standard start: same colours, same rung, yet their own games.
    standard = [g for g in pgn.split("[Event ") if '[Condition "standard"]' in g]
    movetexts = [g.split("\n\n", 1)[1].strip() for g in standard]
    assert len(movetexts) == 3 and len(set(movetexts)) == 3
    assert result.with_name(result.stem + "-posterior.png").stat().st_size > 0
    # Another player sharing the store plays its own games, never reads the first one's.
    assert benchmark.main(_play(ladder, tmp_path / "a", "--model", "random")) == 0
    [other] = (tmp_path / "a").glob("play__random__*.json")
    pgn = other.with_suffix(".pgn").read_text()
    assert '"random:seed=0"]' in pgn and "mix:random=50" not in pgn
    # The same run killed mid-game, then rerun: the same bytes.
    out = tmp_path / "b"
    argv = [sys.executable, str(ROOT / "benchmark.py"),
            *_play(ladder, out, "--model", "mix:random=50,nodes=1000", "--conditions",
                   "standard,chess960", "--concurrency", "2")]
    proc = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "games.db").exists():
            with sqlite3.connect(out / "games.db") as db:
                tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
                if "games" in tables and db.execute(
                        "SELECT count(*) FROM games").fetchone()[0] >= 2:
                    break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not list(out.glob("play__*.json"))
    assert benchmark.main(argv[2:]) == 0
    for suffix in (".json", ".md", ".pgn"):
        again = (out / result.name).with_suffix(suffix)
        assert again.read_bytes() == result.with_suffix(suffix).read_bytes(), suffix


def test_a_model_is_retried_then_forfeits_and_500s_abort_unrated(ladder: Path,
                                                                 tmp_path: Path) -> None:
    def script(fen: str, attempt: int) -> Response:
        board = chess.Board(fen)
        if board.fullmove_number >= 3:  # from its third move on: nonsense, every time
            return Response("Final answer: Qz9 is my move")
        if attempt == 0:  # first try at a position: a move of a piece it does not have
            return Response("Final answer: Qxh7")
        return Response(f"Let me think.\nFinal answer: {_san(fen)}")
    with ChatServer(script) as server:
        out = tmp_path / "m"
        status = benchmark.main(_play(ladder, out, "--model", "local/m", "--base-url",
                                      server.base_url, "--retries", "0", "--timeout", "5",
                                      "--concurrency", "1", "--no-book"))
        retry_prompts = [b["messages"][-1]["content"] for b in server.bodies
                         if "was not accepted" in b["messages"][-1]["content"]]
    assert status == 0
    [result] = out.glob("play__*.json")
    data = json.loads(result.read_text())
    c = data["conditions"]["standard"]
    assert c["games"] == 3 and c["l"] == 3, c  # every game forfeited
    assert all("3 illegal answers in a row" in f["reason"] for f in c["forfeits"])
    assert c["terminations"] == {"forfeit: illegal answers": 3}
    tax = data["taxonomy"]
    # Two legal moves and three nonsense answers per game; the server answers Qxh7 only to
    # the first request for a position, so games that reach a position another reached first
    # (the model white from the start, and the rung's same reply) answer it legally at once.
    assert tax["legal"] == 6 and tax["format"] == 9 and 4 <= tax["state"] + tax["rule"] <= 6
    assert any("'Qxh7' was not accepted" in p for p in retry_prompts)
    pgn = result.with_suffix(".pgn").read_text()
    assert "forfeit: 3 illegal answers in a row" in pgn and "illegal try 'Qxh7'" in pgn
    # Its page names each forfeited game by its own key, and draws the one-sided result
    # ("below ~N") as its bound, not as the prior's two-sided band.
    assert c["elo"]["kind"] == "below"
    assert benchmark.main(["report", "--results", str(out), "--out", str(tmp_path / "site"),
                           "--ladder", str(ladder)]) == 0
    [page] = (tmp_path / "site" / "runs").glob("play__*.html")
    html = page.read_text()
    keys = [f["game"] for f in c["forfeits"]]
    assert len(set(keys)) == 3 and all(f"<code>{k}</code>" in html for k in keys)
    assert f"the data bound it on one side only ({c['elo']['text']}" in html
    assert 'class="band"' in html and "<polyline" not in html

    def failing(fen: str, attempt: int) -> Response:
        return Response(status=500)
    with ChatServer(failing) as server:
        out = tmp_path / "f"
        status = benchmark.main(_play(ladder, out, "--model", "local/m", "--base-url",
                                      server.base_url, "--retries", "0", "--timeout", "5",
                                      "--concurrency", "1"))
    assert status == 2  # three games in a row aborted: the run stops, nothing is rated
    assert not list(out.glob("play__*.json"))


def test_one_failing_game_is_aborted_not_lost(ladder: Path, tmp_path: Path) -> None:
    seen: set[str] = set()

    def script(fen: str, attempt: int) -> Response:
        board = chess.Board(fen)
        if board.turn == chess.BLACK and board.fullmove_number == 1:
            return Response(status=500)  # the model's first move as Black never comes
        seen.add(fen)
        return Response(f"Final answer: {_san(fen)}")
    with ChatServer(script) as server:
        out = tmp_path / "x"
        argv = _play(ladder, out, "--model", "local/m", "--base-url", server.base_url,
                     "--retries", "0", "--timeout", "5", "--concurrency", "1", "--no-book")
        status = benchmark.main(argv)
    assert status == Exit.INCOMPLETE
    [result] = out.glob("play__*.json")
    c = json.loads(result.read_text())["conditions"]["standard"]
    assert c["aborted"] >= 1 and c["games"] == 3 and c["w"] + c["d"] + c["l"] == 3


def test_a_context_refusal_mid_game_aborts_the_game_without_a_retry(
        ladder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """HTTP 400 saying the prompt does not fit cannot succeed on retry: the game is aborted
    (unrated) at once, and the breaker stops the run after three such games in a row."""
    def script(fen: str, attempt: int) -> Response:
        if chess.Board(fen).fullmove_number >= 3:  # the prompt has grown too long
            return Response(status=400, raw=b'{"error": "context length exceeded"}')
        return Response(f"Final answer: {_san(fen)}")
    with ChatServer(script) as server:
        status = benchmark.main(_play(ladder, tmp_path, "--model", "local/m", "--base-url",
                                      server.base_url, "--retries", "3", "--timeout", "5",
                                      "--concurrency", "1"))
        refused = sum(chess.Board(f).fullmove_number >= 3 for f, n in server.calls.items()
                      for _ in range(n) if f)
    assert status == 2 and refused == 3  # one refusal a game, never retried
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: stopped after 3 games in a row were aborted")
    assert "context length exceeded" in err[-1]
    assert not list(tmp_path.glob("play__*.json"))  # no game was played: nothing to write


def test_empty_and_filtered_replies_are_retried_and_named(ladder: Path,
                                                          tmp_path: Path) -> None:
    """An empty reply and a filtered one are retried like illegal answers and reported as
    `empty`, never as format errors; the game goes on with the legal third answer."""
    def script(fen: str, attempt: int) -> Response:
        if attempt == 0:
            return Response("")
        if attempt == 1:
            return Response("I cannot help with that", finish_reason="content_filter")
        return Response(f"Final answer: {_san(fen)}")
    with ChatServer(script) as server:
        status = benchmark.main(_play(ladder, tmp_path, "--model", "local/m", "--base-url",
                                      server.base_url, "--retries", "0", "--timeout", "5",
                                      "--concurrency", "1", "--max-games", "2"))
        retry_prompts = [b["messages"][-1]["content"] for b in server.bodies
                         if "was not accepted" in b["messages"][-1]["content"]]
    assert status == 0
    [result] = tmp_path.glob("play__*.json")
    tax = json.loads(result.read_text())["taxonomy"]
    # Every position is new to the server, so each legal move took an empty and a filtered try.
    assert tax["empty"] == 2 * tax["legal"] > 0 and tax["format"] == 0
    assert any("(empty: empty reply)" in p for p in retry_prompts)
    assert any("(empty: withheld by the provider's content filter)" in p
               for p in retry_prompts)


def test_a_forfeit_is_named_by_what_ended_it(ladder: Path, tmp_path: Path) -> None:
    """A model whose every reply is cut by the token limit (a small model at a low
    --max-tokens) forfeits on truncated answers, not on illegal moves it never made."""
    def script(fen: str, attempt: int) -> Response:
        return Response("Let me consider the position carefully. The knight on",
                        finish_reason="length")
    with ChatServer(script) as server:
        status = benchmark.main(_play(ladder, tmp_path, "--model", "local/m", "--base-url",
                                      server.base_url, "--retries", "0", "--timeout", "5",
                                      "--concurrency", "1", "--max-games", "2"))
    assert status == 0
    [result] = tmp_path.glob("play__*.json")
    data = json.loads(result.read_text())
    c = data["conditions"]["standard"]
    assert c["terminations"] == {"forfeit: truncated answers": 2}
    assert all(f["reason"].startswith("3 truncated answers in a row; last truncated")
               for f in c["forfeits"])
    assert data["taxonomy"]["truncated"] == 6 and data["taxonomy"]["format"] == 0
    md = result.with_suffix(".md").read_text()
    assert "forfeit: truncated answers" in md and "{'" not in md
    # The run's page names each forfeit by its game and reason, never as a Python dict.
    site = tmp_path / "site"
    assert benchmark.main(["report", "--results", str(tmp_path), "--out", str(site)]) == 0
    [page] = site.glob("runs/play__*.html")
    html = page.read_text()
    assert "3 truncated answers in a row" in html and "{&#39;" not in html


@pytest.mark.parametrize("protocol", ["fen", "chat"])
def test_a_rerun_after_an_aborted_game_plays_it_and_reuses_the_rest(
        ladder: Path, tmp_path: Path, protocol: str) -> None:
    """A game aborted for infrastructure reasons is played on the rerun under the same
    identity, and the result is the one an undisturbed run gives; every stored game the
    schedule asks for again is reused without a request (one the adaptive schedule no longer
    asks for, because the replayed game changed the posterior, stays stored, unrated). Under
    chat, the resumed game's conversation is rebuilt exactly as the undisturbed run sends it."""
    lock, seen = threading.Lock(), []

    def flaky(fen: str, attempt: int) -> Response:
        with lock:
            seen.append(fen)
            if len(seen) == 12:  # one move request of the first run fails: its game aborts
                return Response(status=500)
        return Response(f"Final answer: {_san(fen)}")
    # Three servers, one model: --endpoint-id makes them one identity (the run's name, and
    # the key of its stored games and answers), as the same endpoint at another port is.
    argv = ["--model", "local/m", "--retries", "0", "--timeout", "5", "--concurrency", "1",
            "--max-games", "4", "--endpoint-id", "local", "--protocol", protocol]
    with ChatServer(flaky) as server:
        assert benchmark.main(_play(ladder, tmp_path / "a", *argv, "--base-url",
                                    server.base_url)) == Exit.INCOMPLETE
    with sqlite3.connect(tmp_path / "a" / "games.db") as db:
        stored = {k for (k,) in db.execute("SELECT key FROM games")}
    assert stored
    healthy = lambda fen, attempt: Response(f"Final answer: {_san(fen)}")  # noqa: E731
    with ChatServer(healthy) as again:
        assert benchmark.main(_play(ladder, tmp_path / "a", *argv, "--base-url",
                                    again.base_url)) == 0
    with ChatServer(healthy) as fresh:
        assert benchmark.main(_play(ladder, tmp_path / "b", *argv, "--base-url",
                                    fresh.base_url)) == 0
    [rerun], [undisturbed] = (list((tmp_path / d).glob("play__*.pgn")) for d in "ab")
    assert rerun.read_text() == undisturbed.read_text()
    traces = (tmp_path / "a" / "traces" / (rerun.stem + ".jsonl")).read_text().splitlines()
    # The model's own attempts: its colour is part of the game's identity.
    attempts = [a for a in map(json.loads, traces)
                if f":{a['side']}:" in a["game"].split(":standard", 1)[1]]
    reused = stored & {a["game"] for a in attempts}
    assert reused  # stored games the schedule asked for again, under the same identity
    # The rerun asked only for the model's moves in games it had not stored, less those the
    # aborted game had already cached (+ its preflight).
    asked_again = sum(again.calls.values()) - 1
    assert asked_again == sum(a["game"] not in reused and not a["cached"] for a in attempts)
    assert asked_again < sum(fresh.calls.values()) - 1
    undisturbed_requests = [b["messages"] for b in fresh.bodies]
    assert all(b["messages"] in undisturbed_requests for b in again.bodies)
    if protocol == "chat":  # a resumed game's conversation already had earlier turns
        assert max(len(b["messages"]) for b in again.bodies) > 1


def test_a_ladder_of_another_engine_version_stops_play_before_any_game(
        ladder: Path, tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A wrapper engine that reports Stockfish 17: the Stockfish 15.1 ladder is refused in
    one line naming both versions and the two ways out, before a game is played."""
    other = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NAME", "Stockfish 17")
    here = engine_identity(stockfish)
    out = tmp_path / "out"
    argv = _play(ladder, out, "--model", "random", "--stockfish", other)
    assert benchmark.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{ladder} was measured with {here}, but the engine here ({other}) is " \
        "Stockfish 17" in err
    assert "Ladders here: stockfish-15.1 (Stockfish 15.1), stockfish-17.1 (Stockfish 17.1). " \
        "Point --stockfish at a build of one of them" in err
    assert "calibrate a ladder for Stockfish 17" in err
    assert "writes data/ladders/stockfish-17/ladder.csv" in err
    assert not list(out.glob("play__*")) and not (out / "games.db").exists()


def test_play_picks_the_ladder_of_the_engine_it_finds(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ladders of two engine versions side by side, a folder each: with no --ladder, play
    rates on the one measured with the engine it finds."""
    here = engine_identity(stockfish)
    root = tmp_path / "ladders"
    for folder in ("here", "stockfish-17"):
        (root / folder).mkdir(parents=True)
    default = write_ladder(root / "here" / "ladder.csv", here)
    seventeen = write_ladder(root / "stockfish-17" / "ladder.csv", "Stockfish 17")
    monkeypatch.setattr(games_cli, "LADDERS", root)
    monkeypatch.setattr(games_cli, "FIRST_LADDER", default)
    other = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NAME", "Stockfish 17")
    shas = {}
    for name, binary in (("here", stockfish), ("17", other)):
        out = tmp_path / name
        argv = ["play", "--out", str(out), "--ply-cap", "16", "--max-games", "2",
                "--model", "random", "--stockfish", binary, "--no-book"]
        assert benchmark.main(argv) == 0
        [result] = out.glob("play__*.json")
        shas[name] = json.loads(result.read_text())["settings"]["ladder_sha256"]
    assert shas["here"] == hashlib.sha256(default.read_bytes()).hexdigest()
    assert shas["17"] == hashlib.sha256(seventeen.read_bytes()).hexdigest()


def test_play_prefers_a_build_the_reference_ladder_serves(
        tmp_path: Path, stockfish: str, wasm_stockfish: str,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A Debian 12 machine after `make setup`: Debian's 15.1 at /usr/games and the portable
    17.1. play takes the 17.1 (the lookup alone would take Debian's first), rates on the
    reference ladder and says so; --ladder stockfish-15.1 still rates on the old scale."""
    if not engine_identity(stockfish).startswith("Stockfish 15.1"):
        pytest.skip("the machine's native Stockfish is not Debian 12's 15.1")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "node").symlink_to(shutil.which("node") or "node")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("STOCKFISH_PATH")
    monkeypatch.setattr(engine_mod, "DEBIAN_STOCKFISH", stockfish)
    argv = ["play", "--model", "stockfish:nodes=1500", "--max-games", "2", "--ply-cap", "10",
            "--no-book", "--concurrency", "1"]
    caplog.set_level("INFO")
    assert benchmark.main([*argv, "--out", str(tmp_path / "ref")]) == 0
    [result] = (tmp_path / "ref").glob("play__*.json")
    settings = json.loads(result.read_text())["settings"]
    assert settings["rungs_engine"].startswith("Stockfish 17.1")
    assert settings["ladder_sha256"] == hashlib.sha256(
        (REFERENCE_LADDER).read_bytes()).hexdigest()
    assert "a build the reference ladder serves" in caplog.text and wasm_stockfish in caplog.text
    assert benchmark.main([*argv, "--ladder", "stockfish-15.1", "--out",
                           str(tmp_path / "old")]) == 0
    [result] = (tmp_path / "old").glob("play__*.json")
    assert json.loads(result.read_text())["settings"]["rungs_engine"] == "Stockfish 15.1"


def test_every_mode_plays_a_baseline_on_the_build_play_takes(
        tmp_path: Path, stockfish: str, wasm_stockfish: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The Debian 12 machine above: `stockfish:nodes=1000` is the portable 17.1 in run,
    match and serve too, as in play (before, Debian's 15.1, first in the lookup: two players
    under one name in one results folder); --stockfish still picks the build."""
    from chess_eval.benchmark.core.server import PlayerServer
    from chess_eval.benchmark.match.cli import match_setup

    if not engine_identity(stockfish).startswith("Stockfish 15.1"):
        pytest.skip("the machine's native Stockfish is not Debian 12's 15.1")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "node").symlink_to(shutil.which("node") or "node")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("STOCKFISH_PATH")
    monkeypatch.setattr(engine_mod, "DEBIAN_STOCKFISH", stockfish)
    spec = "stockfish:nodes=1000"
    for out, extra in ((tmp_path / "found", []), (tmp_path / "given", ["--stockfish", stockfish])):
        assert benchmark.main(["run", "--model", spec, "--limit", "2", "--workers", "1",
                               "--out", str(out), *extra]) == 0
    [found] = (tmp_path / "found").glob("static__*.json")
    assert json.loads(found.read_text())["settings"]["answered_by"].startswith("Stockfish 17.1")
    [given] = (tmp_path / "given").glob("static__*.json")
    assert json.loads(given.read_text())["settings"]["answered_by"] == "Stockfish 15.1"
    parser, _ = benchmark.build_parser()
    setup = match_setup(parser.parse_args(["match", "--model", spec, "--opponent", "random"]))
    try:
        assert setup.first.answered_by.startswith("Stockfish 17.1")
        assert setup.settings.path == wasm_stockfish  # the judge's build is the players'
    finally:
        setup.close()
    server = PlayerServer("127.0.0.1", 0, None, 0, 1)
    try:
        assert server.served(f"served/{spec}").player.answered_by.startswith("Stockfish 17.1")
    finally:
        server.close()
