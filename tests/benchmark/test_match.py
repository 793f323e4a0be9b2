"""`benchmark.py match`: pair statistics against hand-computed cases, the stop rule, colour
balance, resume, one ledger, and bad input, with real engines and a real HTTP server."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import chess.pgn
import numpy as np
import pytest

import benchmark
from chess_eval.benchmark.arena.ladder import reference_nu
from chess_eval.benchmark.arena.ladder_check import match_elo
from chess_eval.benchmark.core.data import FIRST_LADDER
from chess_eval.benchmark.core.server import PlayerServer
from chess_eval.benchmark.stats import btd
from chess_eval.benchmark.stats.joint import RungGames, joint_fit
from chess_eval.benchmark.stats.pairs import elo_of, finished, pair_stats, pair_variance
from chess_eval.exits import Exit
from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.conftest import ROOT

NU = 0.4267  # about the reference ladder's draw parameter


def test_the_pair_statistics_are_the_hand_computed_ones() -> None:
    """Pairs scoring 2, 1, 1, 1/2, 3/2: pentanomial 0/1/2/1/1, mean 0.6 a game. The pair
    variance with half a pair in each cell: weights 0.5, 1.5, 2.5, 1.5, 1.5 (7.5), mean
    8.5/7.5, variance 2.61667/7.5 = 0.348889; sd of the score sqrt(0.348889 / 20) = 0.132077,
    90% half-width 1.644854 x 0.132077 = 0.217248. The Elo difference under BTD with nu:
    y = 2 x 0.6 - 1 = 0.2, t = (y nu + sqrt(y^2 nu^2 + 4 (1 - y^2))) / (2 (1 - y)) = 1.279241,
    difference 800 log10(t) = 85.56 (the logistic figure would be 70.44)."""
    s = pair_stats([2, 1, 1, 0.5, 1.5], NU)
    assert s.pentanomial == (0, 1, 2, 1, 1) and s.pairs == 5 and s.nu == NU
    assert pair_variance(s.pentanomial) == pytest.approx(0.348889, abs=1e-6)
    assert s.score == pytest.approx(0.6)
    assert (s.score_lo, s.score_hi) == pytest.approx((0.382752, 0.817248), abs=1e-6)
    assert s.elo == pytest.approx(85.56, abs=0.01)
    assert (s.elo_lo, s.elo_hi) == pytest.approx((elo_of(0.382752, NU), elo_of(0.817248, NU)),
                                                 abs=0.01)
    assert pair_stats([2, 1, 1, 0.5, 1.5], 0.0).elo == pytest.approx(70.44, abs=0.01)


def test_a_match_reads_as_btd_reads_its_own_games() -> None:
    """35 wins, 2 draws and 3 losses in 20 pairs: the match's Elo difference is the maximum-
    likelihood BTD difference of those 40 games at the reference ladder's nu (play's own
    estimator, a root of its gradient, under a prior too wide to pull it a tenth of a point),
    about +443 at version 11's nu for a match (its draw model's at 1,600, 0.266; +479 at
    version 10's one nu, 0.427) where the logistic reading of the score 0.9 says +382."""
    nu = reference_nu()
    totals = [2.0] * 16 + [1.5] * 2 + [1.0] + [0.0]
    s = pair_stats(totals, nu)
    scores = np.array([1.0] * 35 + [0.5] * 2 + [0.0] * 3)
    mle = btd.fit(np.zeros(40), scores, nu, btd.Prior(0.0, 1e4)).mean
    assert s.score == pytest.approx(0.9) and s.elo == pytest.approx(mle, abs=0.1)
    assert 435 < s.elo < 450
    # Mostly drawn: six pairs drawn twice, four won-and-drawn, two drawn-and-lost, one won
    # twice: 6 wins, 18 draws and 2 losses.
    with_draws = [1.0] * 6 + [1.5] * 4 + [0.5] * 2 + [2.0]
    draws = np.array([1.0] * 6 + [0.5] * 18 + [0.0] * 2)
    fitted = btd.fit(np.zeros(len(draws)), draws, nu, btd.Prior(0.0, 1e4)).mean
    assert pair_stats(with_draws, nu).elo == pytest.approx(fitted, abs=0.1)


def test_a_match_file_of_an_earlier_version_is_read_again_on_btd() -> None:
    """A match file written before the BTD reading (its figure logistic, no nu) is read
    again from its pentanomial, so the leaderboard and compare show old and new matches on
    one scale; a file that carries its nu is taken as written."""
    old = {"pentanomial": [0, 1, 2, 1, 1],
           "elo_difference": {"kind": "interval", "value": 70.4, "lo": -83.1, "hi": 261.8}}
    again = match_elo(old, NU)
    assert again is not None and again["nu"] == NU and again["model"] == "BTD"
    assert again["value"] == pytest.approx(85.6, abs=0.05)
    assert match_elo({**old, "elo_difference": again}, 0.0) == again
    assert match_elo({"pentanomial": [0] * 5, "elo_difference": None}, NU) is None


def test_a_match_one_player_won_every_game_of_is_a_bound() -> None:
    """Five pairs lost 0-2: score at most 1 - 0.05^(1/10) = 0.258866 (one-sided 95%), so the
    difference is below the BTD difference of that score (nu = 0: -400 log10(1/0.258866 - 1)
    = -182.73), and no point estimate."""
    s = pair_stats([0.0] * 5, 0.0)
    assert s.elo is None and s.elo_lo == -math.inf
    assert s.score_hi == pytest.approx(0.258866, abs=1e-6)
    assert s.elo_hi == pytest.approx(-182.73, abs=0.01)
    won = pair_stats([2.0] * 5, NU)
    assert won.elo is None and won.elo_lo == pytest.approx(elo_of(1 - 0.258866, NU), abs=0.01)
    assert won.elo_lo > 182.73  # draws allowed for, one won game says more


def test_identical_pairs_do_not_claim_certainty() -> None:
    """Ten pairs each split 1-1: the score is 1/2, and its interval is not of width zero."""
    s = pair_stats([1.0] * 10, NU)
    assert s.score == 0.5 and s.elo == 0.0
    assert s.half_width > 30


def test_the_stop_rule() -> None:
    """Not before five pairs; at the target; at the game cap."""
    narrow = pair_stats([1.0] * 400, NU)
    assert narrow.half_width < 70
    assert finished(narrow, 800, 70, 1000)
    assert not finished(pair_stats([1.0] * 4, NU), 8, 1000, 1000)  # four pairs: too few
    assert finished(pair_stats([1.0] * 5, NU), 10, 1000, 1000)
    assert not finished(pair_stats([2, 0, 1, 1.5, 0.5], NU), 10, 70, 1000)
    assert finished(None, 12, 70, 12)


def _match(out: Path, *extra: str) -> list[str]:
    return ["match", "--model", "stockfish:nodes=1", "--opponent", "random", "--ply-cap", "30",
            "--out", str(out), *extra]


def _games(out: Path) -> int:
    """Games stored so far (0 before the store's first value makes its table)."""
    try:
        with sqlite3.connect(out / "match.db") as conn:
            return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_pairs_reverse_colours_on_one_opening_and_a_rerun_resumes(stockfish: str,
                                                                  tmp_path: Path) -> None:
    """Each pair starts both games from one book opening, each player White once; a longer
    match on the same store plays only the games it lacks, and its first pairs are the
    shorter match's."""
    out = tmp_path / "out"
    assert benchmark.main(_match(out, "--max-games", "4", "--stockfish", stockfish)) == 0
    assert _games(out) == 4
    assert benchmark.main(_match(out, "--max-games", "8", "--stockfish", stockfish)) == 0
    assert _games(out) == 8  # the first four found, four more played
    [path] = [p for p in out.glob("match__*.json")
              if json.loads(p.read_text())["settings"]["max_games"] == 8]
    result = json.loads(path.read_text())
    assert result["games"] == 8 and result["pairs"] == 4 and result["complete"]
    assert result["first"]["usage"] is None and result["second"]["usage"] is None  # engines
    pgn_path = path.with_suffix(".pgn")
    games = []
    with pgn_path.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    assert len(games) == 8
    for first, second in zip(games[::2], games[1::2], strict=True):
        assert first.headers["White"] == second.headers["Black"]
        assert first.headers["Black"] == second.headers["White"]
        assert first.headers.get("FEN") == second.headers.get("FEN")  # one opening a pair
    assert len({g.headers.get("FEN") for g in games[::2]}) == 4  # a new opening each pair


def test_an_endpoint_that_cannot_answer_fails_before_the_first_game(tmp_path: Path) -> None:
    """A well-formed --base-url where nothing listens: the preflight says so in one line,
    exit 2, no game played or result written (not seven retries a game)."""
    done = subprocess.run([sys.executable, "benchmark.py", "match", "--model", "local/m",
                           "--base-url", "http://127.0.0.1:9/v1", "--opponent", "random",
                           "--max-games", "4", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "preflight" in done.stderr
    assert "Traceback" not in done.stderr and not list(tmp_path.glob("match__*.json"))


def test_bad_input_is_one_line_and_buys_nothing(tmp_path: Path) -> None:
    """The same model twice, a missing opponent, an unknown baseline, a protocol for a
    baseline opponent, --legal-moves under the opponent's tools: one line, exit 2, nothing
    asked (the server bills nothing)."""
    with ChatServer(lambda fen, n: Response("e2e4"), price=0.01) as server:
        cases = [(["--model", "local/m", "--opponent", "local/m", "--base-url",
                   server.base_url], "against itself"),
                 (["--model", "local/m", "--base-url", server.base_url], "--opponent"),
                 (["--model", "local/m", "--opponent", "stockfish:foo=1", "--base-url",
                   server.base_url], "stockfish"),
                 (["--model", "local/m", "--opponent", "random", "--opponent-protocol",
                   "chat", "--base-url", server.base_url], "a baseline reads the board"),
                 (["--model", "local/m", "--opponent", "local/n", "--opponent-protocol",
                   "tools", "--legal-moves", "--base-url", server.base_url],
                  "under --opponent-protocol tools there is none")]
        for argv, said in cases:
            done = subprocess.run([sys.executable, "benchmark.py", "match", *argv, "--out",
                                   str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                                  timeout=300)
            assert done.returncode == 2, done.stderr
            assert said in done.stderr and "Traceback" not in done.stderr
        assert server.billed == 0


def _first_legal(body: dict) -> Response:
    board = chess.Board(FEN_RE.search(json.dumps(body)).group(1))
    return Response(f"Final answer: {min(m.uci() for m in board.legal_moves)}")


def test_each_served_model_keeps_its_own_books_under_one_budget(stockfish: str,
                                                                tmp_path: Path) -> None:
    """Two models at two endpoints: each model's ledger (books/NAME__MODEL.jsonl) counts the
    replies its own server billed, a rerun buys none (a line of zeros each), and one
    --max-cost for the match stops both: a second match with a budget of three replies buys
    at most three in all and exits 3, resumable."""
    with ChatServer(lambda fen, n: Response(), on_body=_first_legal, price=0.01) as a, \
            ChatServer(lambda fen, n: Response(), on_body=_first_legal, price=0.01) as b:
        argv = ["match", "--model", "local/a", "--base-url", a.base_url, "--opponent",
                "local/b", "--opponent-base-url", b.base_url, "--max-games", "2",
                "--ply-cap", "20", "--out", str(tmp_path / "m"), "--stockfish", stockfish]
        assert benchmark.main(argv) == 0
        billed = (a.billed, b.billed)
        assert benchmark.main(argv) == 0
        assert (a.billed, b.billed) == billed and min(billed) > 0
        books = {p.name: [json.loads(x) for x in p.read_text().splitlines()]
                 for p in (tmp_path / "m" / "books").glob("*.jsonl")}
        assert len(books) == 2
        [mine] = [v for k, v in books.items() if k.endswith("__local_a.jsonl")]
        [theirs] = [v for k, v in books.items() if k.endswith("__local_b.jsonl")]
        assert [x["replies_completed"] for x in mine] == [billed[0], 0]
        assert [x["replies_completed"] for x in theirs] == [billed[1], 0]
        assert mine[0]["cost"] == pytest.approx(0.01 * billed[0])
        # Each player's usage in the result: its game replies (all but the preflight, cached
        # ones included, so the rerun's result is the first's), at the provider's cost.
        [result] = (tmp_path / "m").glob("match__*.json")
        body = json.loads(result.read_text())
        for side, paid in (("first", billed[0]), ("second", billed[1])):
            usage = body[side]["usage"]
            assert usage["requests"] == usage["answers"] == paid - 1, side
            assert usage["cost"] == pytest.approx(0.01 * (paid - 1)), side
            assert usage["per_game"]["requests"] == pytest.approx((paid - 1) / 2, abs=0.01)
        assert "local/a: " in (tmp_path / "m" / result.with_suffix(".md").name).read_text()
        before = a.billed + b.billed
        capped = [*argv[:-4], "--out", str(tmp_path / "capped"), "--stockfish", stockfish,
                  "--max-cost", "0.03", "--price", "1,1", "--max-tokens", "1"]
        assert benchmark.main(capped) == Exit.INCOMPLETE
        assert 0 < a.billed + b.billed - before <= 3


def _last_legal(body: dict) -> Response:
    """The first legal move of the request's last position (a chat request holds older
    ones before it)."""
    board = chess.Board(FEN_RE.findall(json.dumps(body))[-1])
    return Response(f"Final answer: {min(m.uci() for m in board.legal_moves)}")


def _asked(server: ChatServer) -> list[dict]:
    """The move requests a server received (the preflight left out)."""
    return [b for b in server.bodies if FEN_RE.search(json.dumps(b))]


def test_each_player_is_asked_with_its_own_settings_and_protocol(stockfish: str,
                                                                  tmp_path: Path) -> None:
    """--model under fen, --opponent under chat with its own temperature, max tokens,
    system prompt, reasoning effort and price: each server receives only its own player's
    settings, the chat conversation grows, and each player's cost is at its own price."""
    with ChatServer(lambda fen, n: Response(), on_body=_last_legal) as a, \
            ChatServer(lambda fen, n: Response(), on_body=_last_legal) as b:
        assert benchmark.main([
            "match", "--model", "local/a", "--base-url", a.base_url, "--max-tokens", "100",
            "--system", "first", "--price", "1000,1000", "--opponent", "local/b",
            "--opponent-base-url", b.base_url, "--opponent-protocol", "chat",
            "--opponent-temperature", "0.7", "--opponent-max-tokens", "50",
            "--opponent-system", "second", "--opponent-reasoning-effort", "low",
            "--opponent-price", "2000,2000", "--max-games", "2", "--ply-cap", "10",
            "--out", str(tmp_path), "--stockfish", stockfish]) == 0
        mine, theirs = _asked(a), _asked(b)
        sent = len(a.bodies), len(b.bodies)  # the preflights too
    assert {(x["temperature"], x["max_tokens"], x["messages"][0]["content"],
             "reasoning_effort" in x) for x in mine} == {(0.0, 100, "first", False)}
    assert {(x["temperature"], x["max_tokens"], x["messages"][0]["content"],
             x["reasoning_effort"]) for x in theirs} == {(0.7, 50, "second", "low")}
    assert {len(x["messages"]) for x in mine} == {2}  # fen: the system prompt, one question
    assert max(len(x["messages"]) for x in theirs) > 2  # chat: the game so far
    [path] = tmp_path.glob("match__*.json")
    result = json.loads(path.read_text())
    assert result["settings"]["protocol"] == "fen"
    assert result["settings"]["opponent_protocol"] == "chat"
    assert result["second"]["model"] == "local/b [effort=low]"
    for side, asked, each in (("first", mine, 0.055), ("second", theirs, 0.11)):
        usage = result[side]["usage"]  # 50 prompt and 5 completion tokens an answer
        assert usage["requests"] == len(asked) and usage["cost"] == pytest.approx(
            each * len(asked)), side
    # Each model's ledger charges what it bought at its own price.
    for model, paid in (("local_a", 0.055 * sent[0]),
                        ("local_b_effort_low", 0.11 * sent[1])):
        [book] = (tmp_path / "books").glob(f"*__{model}.jsonl")
        assert json.loads(book.read_text())["cost"] == pytest.approx(paid), model


@pytest.mark.parametrize("protocols", [("pgn", "tools"), ("blind", "chat")])
def test_every_protocol_of_play_plays_a_match(protocols: tuple[str, str], served: PlayerServer,
                                              stockfish: str, tmp_path: Path) -> None:
    """Two served players, each under its own protocol of play's five (pgn's completions,
    tools' calls, blind's moves alone, chat's conversation): the match is played and its
    result records both protocols."""
    mine, theirs = protocols
    assert benchmark.main([
        "match", "--model", "served/stockfish:nodes=1", "--opponent", "served/random",
        "--base-url", served.base_url, "--protocol", mine, "--opponent-protocol", theirs,
        "--max-games", "2", "--ply-cap", "20", "--out", str(tmp_path), "--stockfish",
        stockfish]) == 0
    [path] = tmp_path.glob("match__*.json")
    result = json.loads(path.read_text())
    assert result["games"] == 2 and result["complete"]
    assert (result["settings"]["protocol"], result["settings"]["opponent_protocol"]) == protocols
    assert min(result[side]["usage"]["answers"] for side in ("first", "second")) > 0


def test_an_opponent_setting_changed_buys_its_replies_again(stockfish: str,
                                                             tmp_path: Path) -> None:
    """The same command again buys nothing; another --opponent-temperature or
    --opponent-system is another match (new requests, another result), never the stored
    replies of the first; another --opponent-price changes no answer, so it buys nothing
    and prices the stored replies at the new price."""
    with ChatServer(lambda fen, n: Response(), on_body=_last_legal) as a, \
            ChatServer(lambda fen, n: Response(), on_body=_last_legal) as b:
        def match(*opponent: str) -> tuple[int, int]:
            """Requests each server got from one match on the one store."""
            before = len(_asked(a)), len(_asked(b))
            assert benchmark.main([
                "match", "--model", "local/a", "--base-url", a.base_url, "--opponent",
                "local/b", "--opponent-base-url", b.base_url, *opponent, "--max-games", "2",
                "--ply-cap", "10", "--out", str(tmp_path), "--stockfish", stockfish]) == 0
            return len(_asked(a)) - before[0], len(_asked(b)) - before[1]
        assert min(match("--opponent-temperature", "0.5")) > 0
        assert match("--opponent-temperature", "0.5") == (0, 0)
        assert min(match("--opponent-temperature", "0.6")) > 0
        assert min(match("--opponent-temperature", "0.6", "--opponent-system", "x")) > 0
        assert match("--opponent-temperature", "0.6", "--opponent-system", "x",
                     "--opponent-price", "1000,1000") == (0, 0)
        temperatures = {x["temperature"] for x in _asked(b)}
    assert temperatures == {0.5, 0.6} and len(list(tmp_path.glob("match__*.json"))) == 3
    [priced] = [json.loads(p.read_text()) for p in tmp_path.glob("match__*.json")
                if json.loads(p.read_text())["second"]["usage"]["cost"] is not None]
    usage = priced["second"]["usage"]
    assert usage["cost"] == pytest.approx(0.055 * usage["requests"])


def test_a_match_stopped_by_ctrl_c_resumes_and_buys_nothing_twice(stockfish: str,
                                                                   tmp_path: Path) -> None:
    """A real SIGINT once the first pair is stored and the next request is waiting on the
    server: exit 130; the same command finishes the match. Together the two invocations
    bought exactly the moves an undisturbed match buys, and wrote the same result and PGN."""
    hold = threading.Event()

    def answer(body: dict) -> Response:
        return Response(hang=True) if hold.is_set() else _first_legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=answer, price=0.01) as server:
        def argv(out: Path) -> list[str]:
            return ["match", "--model", "local/m", "--base-url", server.base_url,
                    "--endpoint-id", "m", "--opponent", "stockfish:nodes=1", "--max-games",
                    "6", "--ply-cap", "20", "--out", str(out), "--stockfish", stockfish]
        assert benchmark.main(argv(tmp_path / "whole")) == 0
        undisturbed = server.billed
        cut = tmp_path / "cut"
        proc = subprocess.Popen([sys.executable, "benchmark.py", *argv(cut)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and not (
                (cut / "match.db").exists() and _games(cut) >= 2):
            time.sleep(0.05)
        hold.set()
        waiting = sum(server.calls.values())
        while proc.poll() is None and time.monotonic() < deadline and \
                sum(server.calls.values()) == waiting:
            time.sleep(0.05)  # a request now waits on the server, unanswered
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == Exit.INTERRUPTED and "Traceback" not in err, err
        assert 2 <= _games(cut) < 6 and not list(cut.glob("match__*.json"))
        # The request left waiting on the server is counted as possibly billed.
        [book] = (cut / "books").glob("*.jsonl")
        line = json.loads(book.read_text().splitlines()[-1])
        assert line["requests_sent"] == line["replies_completed"] + line["aborted_attempts"]
        assert line["aborted_attempts"] >= 1
        hold.clear()
        assert benchmark.main(argv(cut)) == 0
        # Each invocation's one small preflight request aside (undisturbed: one; the cut and
        # the resumed: one each), the moves bought are the undisturbed match's.
        assert server.billed - undisturbed - 2 == undisturbed - 1
    for suffix in (".json", ".pgn"):
        [whole] = (tmp_path / "whole").glob(f"match__*{suffix}")
        [resumed] = cut.glob(f"match__*{suffix}")
        if suffix == ".pgn":
            assert resumed.read_bytes() == whole.read_bytes()
        else:
            strip = {"created_at", "revision"}
            assert {k: v for k, v in json.loads(resumed.read_text()).items()
                    if k not in strip} == {k: v for k, v in
                                           json.loads(whole.read_text()).items()
                                           if k not in strip}


def test_the_joint_refit_is_the_hand_computed_one() -> None:
    """A and B each score 2/4 against one rung at 1000 (W, D, D, L) and draw parameter nu =
    0.5, flat priors, and 2 wins, 1 draw and 2 losses against each other: both ratings 1000 by
    symmetry, and the match's own draw parameter 2 D / (N - D) = 0.5, the ladder's, so its
    prior pulls nothing. Each game's information at an even score is C^2 (1 + nu/2) /
    (2 + nu)^2 = 0.2 C^2 (C = ln 10 / 400), and at delta = 0 a rating and the match's nu are
    orthogonal, so minus the ratings' Hessian is 0.2 C^2 [[9, -5], [-5, 9]] and the games'
    covariance its inverse, [[9, 5], [5, 9]] / (0.2 C^2 x 56): variances 24,250.08, covariance
    13,472.26. Each rating moves one for one with the rung (W = H^-1 G = [1, 1]), so a rung sd
    of 30 adds 900 to every entry; the difference's sd is sqrt(2 x (24,250.08 - 13,472.26)) =
    146.82, the ladder's part cancelling."""
    flat = btd.Prior(1000.0, 1e9)
    games = ([RungGames(0, 1, 2, 1)], [RungGames(0, 1, 2, 1)])
    fit = joint_fit([1000.0], np.array([[900.0]]), 0.5, games, (2, 1, 2), (flat, flat))
    assert fit.means == pytest.approx((1000.0, 1000.0), abs=1e-6)
    assert fit.nu_match == pytest.approx(0.5, abs=1e-6)
    assert fit.own == pytest.approx(np.array([[24250.08, 13472.26], [13472.26, 24250.08]]),
                                    abs=0.01)
    assert fit.weights == pytest.approx(np.array([[1.0], [1.0]]))
    assert fit.ladder == pytest.approx(np.full((2, 2), 900.0))
    assert fit.difference() == pytest.approx((0.0, 146.82), abs=0.01)


def test_the_match_draws_set_its_own_draw_parameter() -> None:
    """The match's draw parameter follows its games, not the ladder's: half its games drawn
    raise it above the ladder's 0.5, none drawn lower it, and the prior keeps it finite and
    positive; lopsided matches with and without draws still read A above B."""
    flat = btd.Prior(1000.0, 1e9)
    games = ([RungGames(0, 1, 2, 1)], [RungGames(0, 1, 2, 1)])
    drawn = joint_fit([1000.0], np.array([[900.0]]), 0.5, games, (1, 2, 1), (flat, flat))
    decisive = joint_fit([1000.0], np.array([[900.0]]), 0.5, games, (10, 0, 10), (flat, flat))
    assert drawn.nu_match is not None and decisive.nu_match is not None
    assert drawn.nu_match > 0.5 > decisive.nu_match > 0
    lopsided = joint_fit([1000.0], np.array([[900.0]]), 0.5, games, (9, 0, 1), (flat, flat))
    softened = joint_fit([1000.0], np.array([[900.0]]), 0.5, games, (5, 8, 1), (flat, flat))
    assert lopsided.difference()[0] > 0 and softened.difference()[0] > 0
    assert joint_fit([1000.0], np.zeros((1, 1)), 0.5, games, (0, 0, 0),
                     (flat, flat)).nu_match is None


def test_without_head_to_head_games_each_rating_is_plays_own() -> None:
    """No match games: A's rating is btd.fit's (play's estimator) on the same games and
    prior, whatever B played."""
    prior = btd.Prior(1500.0, 1000.0)
    a = [RungGames(1, 3, 1, 2), RungGames(2, 1, 0, 4)]
    fit = joint_fit([0.0, 800.0, 1200.0], np.zeros((3, 3)), 0.3, (a, [RungGames(0, 5, 0, 0)]),
                    (0, 0, 0), (prior, prior))
    alone = btd.fit(np.array([800.0] * 6 + [1200.0] * 5),
                    np.array([1, 1, 1, 0.5, 0, 0, 1, 0, 0, 0, 0]), 0.3, prior)
    assert fit.means[0] == pytest.approx(alone.mean, abs=1e-4)
    assert math.sqrt(fit.own[0, 0]) == pytest.approx(alone.sd, abs=1e-4)
    assert fit.own[0, 1] == pytest.approx(0.0, abs=1e-9)


def test_both_play_results_give_the_ladders_prediction_and_the_refit(stockfish: str,
                                                                    tmp_path: Path) -> None:
    """Two baselines rated by play on one ladder, then matched: the result holds the
    ladder's predicted score at their play ratings' difference, a z, and both ratings with
    the match's games added, which move toward what the match measured; without play
    results it says why there is no prediction."""
    out = tmp_path / "out"
    for model in ("stockfish:nodes=1", "random"):
        assert benchmark.main(["play", "--model", model, "--ladder", str(FIRST_LADDER),
                               "--max-games", "6", "--ply-cap", "30", "--out", str(out),
                               "--stockfish", stockfish]) == 0
    plays = {json.loads(p.read_text())["model"]: json.loads(p.read_text())
             for p in out.glob("play__*.json")}
    assert benchmark.main(_match(tmp_path / "alone", "--max-games", "10", "--stockfish",
                                 stockfish)) == 0
    [alone] = (tmp_path / "alone").glob("match__*.json")
    assert json.loads(alone.read_text())["ladder_check"] is None
    assert "no complete play result of stockfish:nodes=1" in alone.with_suffix(".md").read_text()
    assert benchmark.main(_match(tmp_path / "m", "--max-games", "10", "--stockfish", stockfish,
                                 "--play-results", str(out))) == 0
    [path] = (tmp_path / "m").glob("match__*.json")
    result = json.loads(path.read_text())
    check = result["ladder_check"]
    a, b = (plays[m]["conditions"]["standard"]["elo"] for m in ("stockfish:nodes=1", "random"))
    # The ladder-only ratings are the play results' own (play rounds to whole Elo).
    only = check["ratings"]["ladder_only"]
    assert [round(r["mean"]) for r in only] == pytest.approx([a["mean"], b["mean"]], abs=1)
    nu = plays["random"]["ladder"]["nu"]
    assert check["predicted"]["score"] == pytest.approx(
        float(btd.expected_score(a["mean"] - b["mean"], nu)), abs=0.005)
    lo, hi = check["predicted"]["lo"], check["predicted"]["hi"]
    assert lo < check["predicted"]["score"] < hi
    s = result["score"]
    sd = math.hypot((s["hi"] - s["lo"]) / (2 * btd.Z90),
                    (hi - lo) / (2 * btd.Z90))  # the predicted score's sd, near enough
    assert check["z"] == pytest.approx((s["value"] - check["predicted"]["score"]) / sd,
                                       rel=0.1, abs=0.05)
    assert sum(result["wdl"]) == result["games"] == 10
    # The match's games move the difference toward the match's own verdict.
    before = only[0]["mean"] - only[1]["mean"]
    after = check["difference_with_match"]["value"]
    measured = float(btd.expected_score(before, nu)) < s["value"]
    assert (after > before) == measured and after != before
    assert "ladder's prediction" in path.with_suffix(".md").read_text()
    # The leaderboard over the play runs and both matches: a pairwise row each, the ladder's
    # prediction where the play runs are there (both matches are on one pair of players).
    for p in (path, alone):
        shutil.copy(p, out / p.name.replace("match__", f"match__{p.parent.name}_"))
    assert benchmark.main(["leaderboard", "--results", str(out)]) == 0
    rows = json.loads((out / "leaderboard.json").read_text())["head_to_head"]
    assert len(rows) == 2 and all(r["first"] == "stockfish:nodes=1" for r in rows)
    assert [r["z"] for r in rows] == [check["z"]] * 2  # the play runs are beside both now
    table = (out / "leaderboard.md").read_text().split("## Head to head")[1].split("##")[0]
    assert table.count("| stockfish:nodes=1 | random | 10 (5) |") == 2
    # compare of the two play runs takes the match as direct evidence: the verdict's row is
    # the refit's difference (B - A, with random as A: the match's first player is B).
    [pa] = list(out.glob("play__random__*.json"))
    [pb] = list(out.glob("play__stockfish*.json"))
    assert benchmark.main(["compare", str(pa), str(pb), "--results", str(out), "--out",
                           str(tmp_path / "c.json")]) == 0
    cmp = json.loads((tmp_path / "c.json").read_text())
    first, ladder_route = cmp["differences"][:2]
    assert first["metric"] == "game_elo_with_match"
    assert first["diff"] == pytest.approx(check["difference_with_match"]["value"], abs=0.2)
    assert first["hi"] - first["lo"] == pytest.approx(
        2 * btd.Z90 * check["difference_with_match"]["sd"], abs=0.5)
    assert ladder_route["metric"] == "game_elo_standard"
    assert "game elo with match" in cmp["verdict"]
    assert any(n.startswith("direct evidence: match") for n in cmp["notes"])


def test_the_bench_s_pair_row_is_the_hand_computed_one() -> None:
    """bench/head_to_head.py's z: two readings of 1000 +- 0 predict 0.5 exactly (nu 0.43);
    the match of the hand-computed pairs above (0.6 [0.382752, 0.817248]: sd 0.132077)
    gives z = 0.1 / 0.132077 = 0.757."""
    from bench.head_to_head import pair_row

    match = {"games": 10, "pentanomial": [0, 1, 2, 1, 1],
             "score": {"value": 0.6, "lo": 0.382752, "hi": 0.817248}}
    row = pair_row(match, (1000.0, 0.0), (1000.0, 0.0), 0.43)
    assert row["predicted"] == 0.5 == row["predicted_lo"] == row["predicted_hi"]
    assert row["z"] == pytest.approx(0.757, abs=0.005)
    # A reading 100 Elo above the other predicts the BTD expected score there.
    wider = pair_row(match, (1100.0, 30.0), (1000.0, 40.0), 0.43)
    assert wider["predicted"] == pytest.approx(float(btd.expected_score(100.0, 0.43)), abs=1e-4)
    assert wider["predicted_lo"] < wider["predicted"] < wider["predicted_hi"]


def test_play_results_a_prediction_cannot_read_leave_the_match_standing() -> None:
    """A play result of an older version (here the committed replay run without its prior)
    gives no prediction and says why; the match's own result is not lost to it."""
    from chess_eval.benchmark.arena.ladder_check import check_of

    [path] = (ROOT / "tests" / "data" / "replay").glob("play__*.json")
    a = json.loads(path.read_text()) | {"model": "a", "_file": "a.json"}
    b = json.loads(path.read_text()) | {"model": "b", "_file": "b.json"}
    match = {"first": {"model": "a"}, "second": {"model": "b"}, "wdl": [1, 0, 1],
             "score": {"value": 0.5, "lo": 0.1, "hi": 0.9}}
    assert check_of(match, [a, b])["ladder_check"] is not None  # as committed: a prediction
    del a["settings"]["prior"]
    found = check_of(match, [a, b])
    assert found["ladder_check"] is None
    assert found["ladder_check_missing"].startswith("the play results cannot be read")
