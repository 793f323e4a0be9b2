"""Players unlike the rungs (engines of other families, Stockfish's near-best moves) and the
server that puts any baseline behind the OpenAI-compatible API, tested with the real engines
Debian ships (`make families`) and real HTTP on 127.0.0.1."""

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest
import requests

import benchmark
from chess_eval.benchmark.core.server import PlayerServer
from chess_eval.benchmark.players import player as players
from chess_eval.benchmark.players.player import FAMILIES, make_player
from chess_eval.benchmark.question.questions import load_questions
from chess_eval.errors import PlayerError
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def positions() -> list:
    """Twelve real positions of the committed test set."""
    return load_questions(ROOT / "questions.csv")[:12]


@pytest.fixture()
def server(stockfish: str) -> Iterator[PlayerServer]:
    served = PlayerServer("127.0.0.1", 0, stockfish, seed=0, slots=2)
    thread = threading.Thread(target=served.serve, daemon=True)
    thread.start()
    yield served
    served.shutdown()
    served.close()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_each_family_engine_plays_legal_reproducible_moves_at_a_depth(
        name: str, positions: list) -> None:
    first = make_player(f"{name}:depth=2", None, None, seed=0, workers=1)
    again = make_player(f"{name}:depth=2", None, None, seed=0, workers=1)
    try:
        moves = [first.answer(q, "").text for q in positions]
        assert moves == [again.answer(q, "").text for q in positions]
        assert all(chess.Move.from_uci(m) in q.board().legal_moves
                   for m, q in zip(moves, positions, strict=True))
        # Its identity names the engine that answered, which is not Stockfish.
        assert "stockfish" not in first.answered_by.lower() and first.id.startswith(name)
    finally:
        first.close()
        again.close()


def test_random_moves_mix_into_a_family_player_by_a_seeded_coin(positions: list) -> None:
    pure = make_player("toga2:depth=1", None, None, seed=0, workers=1)
    mixed = make_player("toga2:depth=1,random=50", None, None, seed=0, workers=1)
    try:
        differ = [pure.answer(q, "").text != mixed.answer(q, "").text for q in positions]
        assert 2 <= sum(differ) <= 10
        assert mixed.id != pure.id and "random=50" in mixed.id
    finally:
        pure.close()
        mixed.close()


def test_softmax_spreads_its_moves_as_its_temperature_rises(stockfish: str,
                                                            positions: list) -> None:
    cold = make_player("softmax:temp=1,nodes=2000", None, stockfish, seed=0, workers=1)
    other = make_player("softmax:temp=1,nodes=2000", None, stockfish, seed=7, workers=1)
    hot = make_player("softmax:temp=100000,nodes=2000", None, stockfish, seed=0, workers=1)
    try:
        top = [cold.answer(q, "").text for q in positions]
        # Nearly zero temperature: the best of the five, whatever the seed (but for a tie
        # between equal scores, which either seed may break its own way).
        assert sum(other.answer(q, "").text == t for q, t in zip(positions, top,
                                                                 strict=True)) >= 10
        # A huge one: about uniform over the five best, so mostly not the best.
        assert sum(hot.answer(q, "").text != t for q, t in zip(positions, top,
                                                                strict=True)) >= 6
    finally:
        for p in (cold, other, hot):
            p.close()


@pytest.mark.parametrize("spec", ["toga2:depth=0", "toga2:depth=2,random=101",
                                  "toga2:nodes=5", "softmax:temp=0,nodes=10", "softmax:temp=5"])
def test_bad_specs_are_refused_in_one_line(spec: str) -> None:
    with pytest.raises(PlayerError, match="bad") as info:
        make_player(spec, None, None, seed=0, workers=1)
    assert "\n" not in str(info.value)


def test_a_missing_family_engine_names_its_debian_package(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(FAMILIES, "toga2", players.Family("no-such-engine-here", "toga2"))
    with pytest.raises(PlayerError, match="apt-get install toga2"):
        make_player("toga2:depth=1", None, None, seed=0, workers=1)


def test_a_served_player_scores_over_http_exactly_as_in_process(
        server: PlayerServer, tmp_path: Path) -> None:
    common = ["--questions", str(ROOT / "questions.csv"), "--limit", "40", "--bootstrap", "50"]
    assert benchmark.main(["--model", "sjeng:depth=2", "--out", str(tmp_path / "direct"),
                           *common]) == 0
    assert benchmark.main(["--model", "served/sjeng:depth=2", "--base-url", server.base_url,
                           "--out", str(tmp_path / "http"), *common]) == 0
    direct, http = (json.loads(next((tmp_path / d).glob("*.json")).read_text())
                    for d in ("direct", "http"))
    assert http["player"] != direct["player"]  # one is a model at an endpoint
    assert [i["answer"] for i in http["items"]] == [i["answer"] for i in direct["items"]]
    assert http["accuracy"] == direct["accuracy"]


def test_a_served_player_plays_games_through_the_model_path(
        server: PlayerServer, tmp_path: Path, stockfish: str) -> None:
    argv = ["play", "--model", "served/glaurung:depth=1,random=30", "--base-url",
            server.base_url, "--max-games", "2", "--out", str(tmp_path), "--stockfish",
            stockfish]
    assert benchmark.main(argv) == 0
    result = json.loads(next(tmp_path.glob("play__*.json")).read_text())
    assert result["conditions"]["standard"]["games"] == 2
    assert result["taxonomy"]["legal"] == result["taxonomy"]["attempts"]
    # Glaurung is of a family the ladder was measured not to place transitively: said.
    report = next(tmp_path.glob("play__*.md")).read_text()
    assert "measured not transitive for this family" in report and "glaurung:depth=1" in report


def test_the_transitivity_notes_are_what_the_committed_games_measure() -> None:
    from bench.transitivity import GAMES, PLAYERS, checks, ratings
    from chess_eval.benchmark.games.report import INTRANSITIVE, Intransitive, transitivity_note
    from chess_eval.benchmark.ladders.calibration import read_games
    from chess_eval.benchmark.stats.btd import Z90

    measured = tuple(Intransitive(c.a, c.b, round(c.gap), round(c.gap - Z90 * c.sd),
                                  round(c.gap + Z90 * c.sd))
                     for c in checks(read_games(GAMES), ratings(PLAYERS)) if not c.agree)
    assert measured == INTRANSITIVE
    assert transitivity_note("served/toga2:depth=1") == ""
    assert transitivity_note("openai/gpt-4o") == ""
    assert "+523" in transitivity_note("softmax:temp=30,nodes=2000")


def test_the_server_answers_unknown_models_and_bad_bodies_with_errors(
        server: PlayerServer) -> None:
    url = f"{server.base_url}/chat/completions"
    unknown = requests.post(url, json={"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"}]}, timeout=30)
    assert unknown.status_code == 404 and "served/SPEC" in unknown.json()["error"]["message"]
    assert requests.post(url, data=b"{", timeout=30).status_code == 400
    assert requests.post(url, json={"model": "served/random"}, timeout=30).status_code == 400
    fen = chess.STARTING_FEN
    ok = requests.post(url, json={"model": "served/random", "messages": [
        {"role": "user", "content": f"Chess position (FEN): {fen}\nWhite to move."}]},
        timeout=30)
    move = ok.json()["choices"][0]["message"]["content"]
    assert chess.Move.from_uci(move) in chess.Board().legal_moves


def test_a_run_against_an_unknown_served_model_fails_in_one_line(
        server: PlayerServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--model", "served/nosuch:depth=1", "--base-url", server.base_url, "--limit", "5",
            "--out", str(tmp_path)]
    assert benchmark.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "served/nosuch:depth=1" in err[0]
    assert not list(tmp_path.glob("*.json"))


def test_serve_stops_on_ctrl_c_without_talk_of_resuming(stockfish: str) -> None:
    """`benchmark.py serve` until SIGINT: it says it stopped (a server has nothing to
    resume) and exits 0."""
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import ROOT

    proc = subprocess.Popen([sys.executable, "benchmark.py", "serve", "--port", "0",
                             "--stockfish", stockfish], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("serving baseline players at http://127.0.0.1:")
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "stopped serving" in err and "resume" not in err, err


def test_a_client_that_hangs_up_leaves_no_traceback(server: PlayerServer,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    """A client reset mid-connection (an eval stopped by Ctrl-C) is part of serving: the
    server says nothing of it (it printed socketserver's traceback) and serves on."""
    import socket
    import struct

    host, port = server.httpd.server_address[:2]
    before = set(threading.enumerate())
    for partial in (b"", b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"):
        client = socket.create_connection((str(host), port), timeout=30)
        client.sendall(partial)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # linger 0: a reset, not a close
    for _ in range(2400):  # until both connections' handler threads have ended (at most 2 min)
        if not set(threading.enumerate()) - before:
            break
        threading.Event().wait(0.05)
    ok = requests.post(f"{server.base_url}/chat/completions", json={
        "model": "served/random", "messages": [{"role": "user", "content":
                                                f"Chess position (FEN): {chess.STARTING_FEN}"}]},
        timeout=30)
    assert ok.status_code == 200
    assert "Traceback" not in capfd.readouterr().err
