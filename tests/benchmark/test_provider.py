"""The model layer against a provider with books of its own (tests/benchmark/chatserver.py):
it bills every reply it completes, answers slowly and out of order, sends malformed 200s,
content parts, reasoning fields and context-length 400s. Each test holds the result's books
against the provider's: billed = charged, no prompt bought twice, overspend within its bound.
"""

import csv
import hashlib
import io
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import chess
import chess.pgn
import pytest

import benchmark
from chess_eval.benchmark.arena import game
from chess_eval.benchmark.core import turns
from chess_eval.benchmark.model.http_backend import HttpBackend, Refusal, refusal_of
from chess_eval.benchmark.model.interface import ModelConfig, Request, canonical_endpoint
from chess_eval.benchmark.players import protocols as proto
from chess_eval.benchmark.players.player import ModelPlayer
from chess_eval.benchmark.players.protocols import GameProtocol
from chess_eval.kvstore import JsonStore, MemoryStore
from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.conftest import MONTHLY, ROOT, first_questions, stored_answers, unzstd

PRICE = 0.01  # what the provider bills a completed reply


@pytest.fixture()
def questions(tmp_path: Path) -> Path:
    """The first 40 rows of the committed questions.csv."""
    return first_questions(tmp_path, 40)


def _fen(body: dict) -> str:
    """The position a request asks about: the FEN of its last message (or its prompt)."""
    text = body["prompt"] if "prompt" in body else body["messages"][-1]["content"]
    found = FEN_RE.search(text or "")
    assert found, body
    return found.group(1)


def _legal(body: dict) -> Response:
    fen = _fen(body)
    return Response(f"Final answer: {sorted(m.uci() for m in chess.Board(fen).legal_moves)[0]}")


def _argv(url: str, questions: Path, out: Path, *extra: str) -> list[str]:
    return ["--model", "m", "--base-url", url, "--questions", str(questions), "--out",
            str(out), "--retries", "6", "--retry-wait", "0.01", "--bootstrap", "50", *extra]


def _result(out: Path, kind: str = "static") -> dict:
    [path] = out.glob(f"{kind}__*.json")
    return json.loads(path.read_text())


def _books(out: Path, line: int = -1) -> dict:
    """An invocation's books from the run's ledger (the last one by default)."""
    [path] = (out / "books").glob("static__*.jsonl") or (out / "books").glob("*.jsonl")
    return json.loads(path.read_text().splitlines()[line])


def _asked(server: ChatServer) -> list[str]:
    """The requests of questions (not the preflight), as the provider's books key them."""
    return [k for k in server.bought if "FEN" in k]


def test_an_unreadable_reply_is_charged_and_asked_again_once(questions: Path,
                                                             tmp_path: Path) -> None:
    """Finding 1. Every answer is a 200 without choices, billed 0.01: each question is bought
    at most twice, every one is charged, so --max-cost 0.05 stops the run at 0.05."""
    malformed = Response(raw=json.dumps({"object": "chat.completion", "usage": {
        "prompt_tokens": 9, "completion_tokens": 1, "cost": PRICE}}).encode())
    with ChatServer(lambda fen, n: malformed, on_body=lambda body: malformed,
                    preflight=Response("OK"), price=PRICE) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path, "--limit", "5",
                                    "--concurrency", "1", "--max-cost", "0.05"))
        per_prompt = max(server.bought[k] for k in _asked(server))
        money = server.money
    result = _result(tmp_path)
    assert code == 3 and result["stopped"].startswith("stopped on budget")
    assert per_prompt == 2  # once, then once again, never --retries + 1 times
    assert money == pytest.approx(0.05)
    assert _books(tmp_path)["cost"] == pytest.approx(money)  # billed = charged
    assert _books(tmp_path)["unreadable_replies"] == 4


def test_content_parts_and_reasoning_are_read_and_every_reply_charged(
        questions: Path, tmp_path: Path) -> None:
    """Finding 1's legitimate shape: content as a list of text parts (and the reasoning
    apart) is an answer, not a malformed reply; one malformed 200 on the way is charged."""
    seen: set[str] = set()

    def answer(body: dict) -> Response:
        fen = _fen(body)
        if fen not in seen:  # every question's first reply is malformed, once
            seen.add(fen)
            return Response(raw=b"<html>upstream hiccup</html>",
                            headers={"Content-Type": "text/html"})
        legal = _legal(body)
        return Response(legal.text, parts=True, reasoning="I consider the position.")
    with ChatServer(lambda fen, n: Response(), on_body=answer,
                    preflight=Response("OK", parts=True), price=PRICE) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path, "--limit", "6",
                                    "--max-cost", "5"))
        billed, money = server.billed, server.money
    result = _result(tmp_path)
    assert code == 0 and result["legal_rate"] == 1.0
    this_run = _books(tmp_path)
    assert this_run["replies_completed"] == billed == 1 + 2 * 6
    assert this_run["unreadable_replies"] == 6
    # Billed = charged: the HTML replies report no cost and are charged at the dearest reply
    # so far (0.01), which is what this provider bills.
    assert this_run["cost"] == pytest.approx(money)
    trace = [json.loads(line) for line in next((tmp_path / "traces").glob("*.jsonl")).open()]
    assert {t["reasoning"] for t in trace} == {"I consider the position."}
    assert {t["unreadable"] for t in trace} == {1}


def test_max_cost_reserves_before_sending_and_keeps_what_it_bought(questions: Path,
                                                                  tmp_path: Path) -> None:
    """Finding 2. --max-cost 0.1 at 0.01 a reply with 8 in flight, answered slowly and out of
    order: the provider bills at most 0.1; the result records every reply it billed; the
    rerun buys no prompt twice."""
    rng = random.Random(7)

    def slow(body: dict) -> Response:
        legal = _legal(body)
        return Response(legal.text, delay=rng.uniform(0.05, 0.4))
    with ChatServer(lambda fen, n: Response(), on_body=slow, preflight=Response("OK"),
                    price=PRICE) as server:
        argv = _argv(server.base_url, questions, tmp_path, "--concurrency", "8")
        assert benchmark.main([*argv, "--max-cost", "0.1"]) == 3
        first = _result(tmp_path)
        spent = server.money
        answered = first["asked"]
        assert benchmark.main(argv) == 0
        done = _result(tmp_path)
        bought = server.bought
    assert spent <= 0.1 + 1e-9  # the reservation is the dearest reply: no overspend here
    assert _books(tmp_path, 0)["cost"] == pytest.approx(spent)
    assert answered == _books(tmp_path, 0)["replies_completed"] - 1  # all but preflight
    assert first["stopped"].startswith("stopped on budget")
    assert max(bought[k] for k in bought if "FEN" in k) == 1  # nothing bought twice
    assert done["asked"] == 40 and done["complete"]


def test_usage_that_stops_under_max_cost_keeps_every_reply_it_bought(
        questions: Path, tmp_path: Path) -> None:
    """The provider stops reporting usage after its 6th reply, 4 in flight, --max-cost 5: the
    run stops (exit 3) and every reply the provider billed is in the result and the cache,
    so the rerun (usage back) buys no prompt twice."""
    rng = random.Random(3)
    replies = [0]
    lock = __import__("threading").Lock()

    def fading(body: dict) -> Response:
        legal = _legal(body)
        with lock:
            replies[0] += 1
            late = replies[0] > 6
        return Response(legal.text, delay=rng.uniform(0.05, 0.3), no_usage=late)
    with ChatServer(lambda fen, n: Response(), on_body=fading, preflight=Response("OK"),
                    price=PRICE) as server:
        argv = _argv(server.base_url, questions, tmp_path, "--limit", "20",
                     "--concurrency", "4")
        assert benchmark.main([*argv, "--max-cost", "5"]) == 3
        first = _result(tmp_path)
        billed = server.billed
        replies[0] = -1000  # usage is reported again
        assert benchmark.main(argv) == 0
        bought = server.bought
    assert first["stopped"].startswith("--max-cost needs each answer's cost")
    assert billed > 7  # replies completed after the first without usage
    assert _books(tmp_path, 0)["replies_completed"] == billed
    assert _books(tmp_path, 0)["cost_unknown_replies"] == billed - 7  # 6 and the preflight
    assert max(bought[k] for k in bought if "FEN" in k) == 1  # nothing bought twice
    assert _result(tmp_path)["asked"] == 20


def test_max_cost_with_a_price_reserves_max_tokens(questions: Path, tmp_path: Path) -> None:
    """--price: a request reserves its prompt and max_tokens at that price, so a budget that
    covers the reservations of two requests never lets a third start."""
    def priced(body: dict) -> Response:
        return Response(_legal(body).text, usage={"prompt_tokens": 100,
                                                  "completion_tokens": 20})
    with ChatServer(lambda fen, n: Response(), on_body=priced,
                    preflight=Response("OK", usage={"prompt_tokens": 10,
                                                    "completion_tokens": 2})) as server:
        # 1,000 per million tokens: a request reserves its prompt (a third of its characters
        # as tokens) and 100 completion tokens, about 0.3, and costs 0.12.
        argv = _argv(server.base_url, questions, tmp_path, "--price", "1000,1000",
                     "--max-tokens", "100", "--concurrency", "4", "--max-cost", "1.0")
        assert benchmark.main(argv) == 3
        result = _result(tmp_path)
    this_run = _books(tmp_path)
    assert this_run["cost"] <= 1.0 and result["stopped"].startswith("stopped on budget")
    # Reserved at their max_tokens, requests stopped with a reservation's worth or more left
    # unspent (a reply costs 0.12 here), which a budget charged per reply would have used.
    assert result["asked"] < (1.0 - 0.012) / 0.12


def test_a_chat_game_that_outgrows_the_context_is_trimmed_and_goes_on(
        tmp_path: Path, stockfish: str) -> None:
    """Finding 3. A server whose context holds 6 messages: the whole-game conversation is
    trimmed (every user turn keeps its FEN), the trim recorded, and the games rated."""
    def chat(body: dict) -> Response:
        if len(body["messages"]) > 6:
            return Response(status=400, raw=json.dumps({"error": {
                "message": "This model's maximum context length is 4096 tokens. However, "
                "your messages resulted in 5210 tokens.", "code": "context_length_exceeded"}
            }).encode())
        return _legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=chat, price=PRICE) as server:
        argv = ["play", "--model", "m", "--base-url", server.base_url, "--protocol", "chat",
                "--chat-history", "0", "--max-games", "2", "--ply-cap", "30", "--out",
                str(tmp_path), "--stockfish", stockfish]
        assert benchmark.main(argv) == 0
        billed = server.billed
        assert benchmark.main(argv) == 0  # the rerun replays from the cache: buys nothing
        assert server.billed == billed
        longest = max(len(json.loads(k)[1]) for k in server.bought
                      if isinstance(json.loads(k)[1], list))
    result = _result(tmp_path, "play")
    assert result["conditions"]["standard"]["games"] == 2 and longest <= 6
    trace = [json.loads(line) for t in (tmp_path / "traces").glob("play__*.jsonl")
             for line in t.read_text().splitlines()]
    assert any(t.get("trimmed") for t in trace)
    assert all("(FEN)" in t["prompt"] for t in trace if t.get("prompt"))


def _long_game() -> list[chess.Move]:
    """The first game of at least 160 plies in the committed Lichess sample."""
    pgn = io.StringIO(unzstd(MONTHLY).decode())
    while (found := chess.pgn.read_game(pgn)) is not None:
        moves = list(found.mainline_moves())
        if len(moves) >= 160:
            return moves[:160]
    raise AssertionError("no game of 80 moves in the sample")


REASONING = "I weigh the candidate moves and their replies. " * 50  # about 500 tokens


def _prompt_chars(protocol: GameProtocol, window: int) -> int:
    """Characters of every request White's 80 moves of a real game send under `protocol`,
    to a server whose replies are 500 tokens of reasoning and the game's move."""
    moves = _long_game()
    board, after = chess.Board(), {}
    for move in moves:
        after[board.fen()] = move.uci()
        board.push(move)

    def reply(body: dict) -> Response:
        return Response(f"{REASONING}\nFinal answer: {after[_fen(body)]}")
    with ChatServer(lambda fen, n: Response(), on_body=reply) as server:
        config = ModelConfig(base_url=server.base_url, model="m", retries=0, timeout_s=10)
        side = turns.Side(ModelPlayer(config), proto.template(protocol, chat_history=window),
                          protocol=protocol, chat_history=window)
        board, sans, record = chess.Board(), [], []
        for move in moves:
            if board.turn == chess.WHITE:
                _, attempts = turns.take_turn(side, board, sans, game.standard_start(), "g",
                                              MemoryStore(), record)
                record += [asdict(a) for a in attempts]
            sans.append(board.san(move))
            board.push(move)
        return sum(len(m["content"]) for b in server.bodies for m in b["messages"])


def test_an_80_move_chat_game_sends_within_10x_fen_s_prompt_tokens() -> None:
    """Finding 3's measure: with 500-token replies the whole-game conversation sends over
    100x fen's prompt text; the default window keeps it within 10x."""
    fen = _prompt_chars(GameProtocol.FEN, 0)
    whole = _prompt_chars(GameProtocol.CHAT, 0)
    default = _prompt_chars(GameProtocol.CHAT, proto.CHAT_WINDOW)
    assert whole > 50 * fen
    assert default <= 10 * fen


def test_a_full_static_run_with_no_legal_answer_writes_its_result(tmp_path: Path) -> None:
    """Finding 4. Every answer cut off before a move, on the whole question set: the result is
    written (exit 0), every score at its floor, the predicted game Elo 'below' its range."""
    with ChatServer(lambda fen, n: Response("Let me think about", finish_reason="length"),
                    price=PRICE) as server:
        code = benchmark.main(["--model", "m", "--base-url", server.base_url, "--out",
                               str(tmp_path), "--bootstrap", "30", "--concurrency", "8"])
    result = _result(tmp_path)
    assert code == 0 and result["legal_rate"] == 0.0 and result["truncated"] == result["n"]
    with open(ROOT / "questions.csv", newline="", encoding="utf-8") as handle:
        questions = sum(1 for _ in csv.DictReader(handle))
    assert result["complete"] and result["n"] == questions
    assert result["elo"]["predicted_game"]["text"].startswith("below ~")


def test_blind_retries_say_one_fixed_line(tmp_path: Path) -> None:
    """Finding 5. Illegal answers of every kind under blind: each retry says the same line but
    for the quoted answer."""
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    answers = iter(["Final answer: Ke3", "Final answer: e2e4", "Final answer: the knight",
                    "Final answer: Bc4"])
    with ChatServer(lambda fen, n: Response(), on_body=lambda b: Response(next(answers)),
                    price=PRICE) as server:
        config = ModelConfig(base_url=server.base_url, model="m", retries=0, timeout_s=10)
        side = turns.Side(ModelPlayer(config), proto.template(GameProtocol.BLIND),
                          retries=3, protocol=GameProtocol.BLIND)
        cache = JsonStore(tmp_path / "c.db", "answers")
        sans = ["e4", "e5", "Nf3", "Nc6"]
        try:
            move, attempts = turns.take_turn(side, board, sans, game.standard_start(), "g",
                                             cache)
        finally:
            cache.close()
        retries = [b["messages"][-1]["content"].splitlines() for b in server.bodies[1:]]
    assert move == chess.Move.from_uci("f1c4")
    assert len({a.category for a in attempts[:3]}) == 3  # rule, state, format
    notes = [next(line for line in r if "previous answer" in line) for r in retries]
    said = [proto.said_of(a.text, a.answer) for a in attempts[:3]]
    assert {n.replace(repr(s), "X") for n, s in zip(notes, said, strict=True)} == {
        "Your previous answer X was not a legal move. Give a legal move."}


def test_a_context_400_under_json_keeps_json_for_every_other_request(
        questions: Path, tmp_path: Path) -> None:
    """Finding 6. One question's request does not fit: it fails alone, and every other
    request still asks for JSON."""
    refused: list[str] = []

    def answer(body: dict) -> Response:
        if not refused or _fen(body) == refused[0]:
            refused.append(_fen(body))
            return Response(status=400, raw=b'{"error": {"message": "This model\'s maximum '
                            b'context length is 2048 tokens", "type": "BadRequestError"}}')
        return Response('{"move": "' + _legal(body).text.split()[-1] + '"}')
    with ChatServer(lambda fen, n: Response(), on_body=answer) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path, "--limit", "8",
                                    "--response-format", "json", "--concurrency", "1"))
        asked = [b for b in server.bodies if "messages" in b and "FEN" in json.dumps(b)]
    result = _result(tmp_path)
    assert code == 3 and result["infra"] == 1 and result["n"] == 7
    assert all("response_format" in b for b in asked)


def test_pgn_never_sends_the_same_prompt_twice_at_temperature_0(tmp_path: Path,
                                                                stockfish: str) -> None:
    """Finding 7. A continuation with no move forfeits at once: no identical re-ask."""
    with ChatServer(lambda fen, n: Response(" 1-0"), price=PRICE) as server:
        argv = ["play", "--model", "m", "--base-url", server.base_url, "--protocol", "pgn",
                "--max-games", "2", "--out", str(tmp_path), "--stockfish", stockfish]
        assert benchmark.main(argv) == 0
        prompts = [k for k in server.bought if "[Event" in k]
    assert prompts and max(server.bought[k] for k in prompts) == 1


def _old_id(model: str, endpoint: str) -> str:
    """A chat player's id as 686c6f7 made it: the endpoint as written in its digest."""
    shown = {"temperature": 0.0, "max_tokens": 1024, "extra": {}, "endpoint": endpoint}
    digest = hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()[:12]
    return f"{model}@{digest}"


def test_one_server_by_another_name_buys_nothing_again(questions: Path,
                                                       tmp_path: Path) -> None:
    """Finding 8. localhost after 127.0.0.1 is the same endpoint; and answers cached under
    the endpoint as written (686c6f7's keys, with 'localhost') are still found."""
    with ChatServer(lambda fen, n: Response(), on_body=_legal, price=PRICE) as server:
        port = server.base_url.split(":")[2].split("/")[0]
        local = f"http://localhost:{port}/v1/"
        assert benchmark.main(_argv(server.base_url, questions, tmp_path, "--limit", "10")) == 0
        player = _result(tmp_path)["player"]
        bought = server.billed
        assert benchmark.main(_argv(local, questions, tmp_path, "--limit", "10")) == 0
        assert server.billed == bought  # not even a preflight: everything was cached
        assert len(list(tmp_path.glob("static__*.json"))) == 1
        # An id of 127.0.0.1 is what it was: those users' answers keep their keys.
        assert player == _old_id("m", f"127.0.0.1:{port}/v1")

        # The cache as 686c6f7 left it for a run at localhost: keyed by the name as written.
        old = _old_id("m", f"localhost:{port}/v1")
        legacy = JsonStore(tmp_path / "legacy.db", "answers")
        cache = JsonStore(tmp_path / "cache.db", "answers")
        for key in _keys(cache):
            legacy.put(old + key[len(player):], cache.get(key))
        cache.close()
        legacy.close()
        assert benchmark.main(_argv(local, questions, tmp_path / "upgraded", "--limit", "10",
                                    "--cache", str(tmp_path / "legacy.db"))) == 0
        assert server.billed == bought  # the upgrade bought nothing
    assert canonical_endpoint(f"http://[::1]:{port}/v1") == f"127.0.0.1:{port}/v1"
    assert canonical_endpoint("https://OpenRouter.ai:443/api/v1/") == "openrouter.ai/api/v1"


def _keys(cache: JsonStore) -> list[str]:
    return [r[0] for r in cache.conn.execute("SELECT key FROM answers")]


def _tools_player(moves: Callable[[chess.Board], list[str]]) -> Callable[[dict], Response]:
    """A tools player: get_board first, then one reply calling make_move with each of
    `moves(board)`."""
    def tools(body: dict) -> Response:
        last = body["messages"][-1]
        if last["role"] != "tool":
            return Response("", tool_calls=[{"id": "b", "type": "function", "function": {
                "name": "get_board", "arguments": "{}"}}])
        board = chess.Board(FEN_RE.search(last["content"]).group(1))
        return Response("", tool_calls=[{"id": f"c{i}", "type": "function", "function": {
            "name": "make_move", "arguments": json.dumps({"move": m})}}
            for i, m in enumerate(moves(board))])
    return tools


@pytest.mark.parametrize("backend", ["http", "inspect"])
def test_malformed_tool_json_is_judged_alike_by_both_backends(
        backend: str, tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """make_move with arguments that are not JSON: through either backend the model is told
    its arguments are not JSON, quoting them, and the move is asked again."""
    broken = '{"move": "e2e4"'
    seen: set[str] = set()

    def tools(body: dict) -> Response:
        last = body["messages"][-1]
        if last["role"] != "tool":
            return Response("", tool_calls=[{"id": "b", "type": "function", "function": {
                "name": "get_board", "arguments": "{}"}}])
        fen = FEN_RE.search(last["content"])
        if fen is None:  # the feedback on a malformed call: ask for the board again
            return Response("", tool_calls=[{"id": "b2", "type": "function", "function": {
                "name": "get_board", "arguments": "{}"}}])
        board = chess.Board(fen.group(1))
        if board.fen() not in seen:
            seen.add(board.fen())
            return Response("", tool_calls=[{"id": "m", "type": "function", "function": {
                "name": "make_move", "arguments": broken}}])
        move = sorted(m.uci() for m in board.legal_moves)[0]
        return Response("", tool_calls=[{"id": "m2", "type": "function", "function": {
            "name": "make_move", "arguments": json.dumps({"move": move})}}])
    with ChatServer(lambda fen, n: Response(), on_body=tools, price=PRICE) as server:
        model = ["--model", "m", "--base-url", server.base_url]
        if backend == "inspect":
            monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
            monkeypatch.setenv("LOCAL_API_KEY", "unused")
            model = ["--model", "inspect:openai-api/local/m"]
        argv = ["play", *model, "--protocol", "tools", "--max-games", "1", "--ply-cap", "4",
                "--out", str(tmp_path), "--stockfish", stockfish, "--ladder", "stockfish-15.1"]
        assert benchmark.main(argv) == 0
        told = [m["content"] for b in server.bodies for m in b.get("messages", [])
                if m.get("role") == "tool" and "make_move" in str(m.get("content"))]
    assert told and all("make_move's arguments are not JSON" in t and "e2e4" in t
                        for t in told), told


def test_tools_counts_every_request_once(tmp_path: Path, stockfish: str) -> None:
    """Finding 9. get_board, then one reply with an illegal and a legal make_move: two
    requests a move, each counted once with its cost, however many answers a reply gave."""
    def moves(board: chess.Board) -> list[str]:  # an illegal king capture, then a legal move
        return ["Kxe8" if board.turn else "Kxe1", sorted(m.uci() for m in board.legal_moves)[0]]
    with ChatServer(lambda fen, n: Response(), on_body=_tools_player(moves),
                    price=PRICE) as server:
        argv = ["play", "--model", "m", "--base-url", server.base_url, "--protocol", "tools",
                "--max-games", "2", "--ply-cap", "20", "--out", str(tmp_path),
                "--stockfish", stockfish]
        assert benchmark.main(argv) == 0
        sent = server.billed - 1  # the preflight
    usage = _result(tmp_path, "play")["usage"]
    assert usage["requests"] == sent and usage["cost_unknown_answers"] == 0
    assert usage["cost"] == pytest.approx(PRICE * sent)
    assert usage["answers"] == sent  # two answers a move, two requests a move


def test_a_timed_out_attempt_counts_as_possibly_billed(questions: Path,
                                                      tmp_path: Path) -> None:
    """Finding 10. The first reply of each question comes after --timeout: the attempt is
    given up on and asked again. The provider bills both; the result says which replies it
    may have billed beyond those it charged."""
    seen: set[str] = set()

    def slow_first(body: dict) -> Response:
        fen = _fen(body)
        if fen not in seen:
            seen.add(fen)
            return Response(_legal(body).text, delay=1.5)
        return _legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=slow_first, price=PRICE,
                    bill_abandoned=True) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path, "--limit", "3",
                                    "--timeout", "0.5", "--concurrency", "1"))
        server.stopping.wait(2.0)  # the abandoned generations complete and are billed
        billed = server.billed
    this_run = _books(tmp_path)
    assert code == 0 and this_run["aborted_attempts"] == 3
    assert this_run["replies_completed"] + this_run["aborted_attempts"] == billed


@pytest.mark.parametrize(("body", "kind"), [
    ('{"error": {"message": "This model\'s maximum context length is 8192 tokens. However, '
     'your messages resulted in 9000 tokens. Please reduce the length of the messages.", '
     '"type": "invalid_request_error", "param": "messages", "code": '
     '"context_length_exceeded"}}', Refusal.CONTEXT),  # OpenAI
    ('{"object":"error","message":"This model\'s maximum context length is 4096 tokens. '
     'However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). '
     'Please reduce the length of the messages or completion.","type":"BadRequestError",'
     '"param":null,"code":400}', Refusal.CONTEXT),  # vLLM
    ('{"error":{"code":400,"message":"the request exceeds the available context size, try '
     'increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,'
     '"n_ctx":4096}}', Refusal.CONTEXT),  # llama.cpp
    ('{"error": {"message": "Unsupported parameter: \'max_tokens\' is not supported with '
     'this model. Use \'max_completion_tokens\' instead.", "type": "invalid_request_error", '
     '"param": "max_tokens", "code": "unsupported_parameter"}}', Refusal.UNSUPPORTED),
    ('{"error": {"message": "Invalid \'messages[0].content\': string too long.", "type": '
     '"invalid_request_error"}}', Refusal.OTHER),
])
def test_a_400_is_read_by_its_wording(body: str, kind: Refusal) -> None:
    assert refusal_of(body) == kind


def test_a_failure_every_request_would_repeat_still_writes_what_was_answered(
        questions: Path, tmp_path: Path) -> None:
    """A 400 that will recur (an unsupported parameter) after some answers: the run stops at
    once, and what was bought is written (exit 3); the rerun asks only the rest."""
    answered: list[str] = []

    def answer(body: dict) -> Response:
        if len(answered) >= 4:
            return Response(status=400, raw=b'{"error": {"message": "Unsupported parameter: '
                            b'\'temperature\'", "code": "unsupported_parameter"}}')
        answered.append(_fen(body))
        return _legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=answer, price=PRICE) as server:
        argv = _argv(server.base_url, questions, tmp_path, "--limit", "10", "--concurrency",
                     "1")
        assert benchmark.main(argv) == 3
        first = _result(tmp_path)
        answered.clear()
        assert benchmark.main(argv) == 3  # 4 more, then the same refusal
        bought = server.bought
    assert first["asked"] == 4 and "does not support" in first["stopped"]
    assert max(bought[k] for k in bought if "FEN" in k) == 1


def _illegal(body: dict) -> Response:
    """A move of the opponent's king: illegal in every position (a state error)."""
    found = FEN_RE.search(json.dumps(body["messages"]).replace("\\n", "\n"))
    board = chess.Board(found.group(1)) if found else chess.Board()
    king = board.king(not board.turn)
    to = next(iter(chess.SquareSet(chess.BB_KING_ATTACKS[king])))
    return Response(f"Final answer: {chess.square_name(king)}{chess.square_name(to)}")


def _malformed(body: dict) -> Response:
    """An answer that names no move at all."""
    return Response("I would rather not say.")


@pytest.mark.parametrize("answer", [_illegal, _malformed], ids=["illegal", "malformed"])
@pytest.mark.parametrize("mode", ["static", "play", "puzzles", "worldmodel"])
def test_every_mode_writes_its_result_whatever_the_answers(
        mode: str, answer, questions: Path, tmp_path: Path, stockfish: str) -> None:
    """A model that never answers a legal move (illegal, or no move at all) is paid for and
    rated: every mode writes its result and exits 0."""
    from tests.conftest import PUZZLES_1K

    extra = {"static": ["--questions", str(questions), "--limit", "10", "--bootstrap", "50"],
             "play": ["play", "--max-games", "2", "--ply-cap", "20", "--stockfish", stockfish],
             "puzzles": ["puzzles", "--puzzles", str(PUZZLES_1K), "--max-puzzles", "3",
                         "--stockfish", stockfish],
             "worldmodel": ["worldmodel", "--questions", str(questions), "--limit", "3"]}[mode]
    command, options = (extra[:1], extra[1:]) if mode != "static" else ([], extra)
    with ChatServer(lambda fen, n: Response(), on_body=answer, price=PRICE) as server:
        code = benchmark.main([*command, "--model", "m", "--base-url", server.base_url,
                               "--out", str(tmp_path), "--retries", "0", *options])
    assert code == 0
    [result] = tmp_path.glob(f"{mode}__*.json")
    assert json.loads(result.read_text())["usage"]["requests"] > 0


def test_puzzles_stop_on_max_cost_and_resume_buying_nothing_twice(tmp_path: Path,
                                                                   stockfish: str) -> None:
    """puzzles under --max-cost 0.05 at 0.01 a reply: the provider bills at most 0.05, the run
    stops cleanly (exit 3, its result says why) and its ledger equals the provider's books;
    the same command without the budget resumes and buys no prompt twice."""
    from tests.conftest import PUZZLES_1K

    with ChatServer(lambda fen, n: Response(), on_body=_legal, price=PRICE) as server:
        argv = ["puzzles", "--model", "m", "--base-url", server.base_url, "--out",
                str(tmp_path), "--retries", "0", "--puzzles", str(PUZZLES_1K),
                "--max-puzzles", "6", "--stockfish", stockfish]
        assert benchmark.main([*argv, "--max-cost", "0.05"]) == 3
        spent = server.money
        first = _result(tmp_path, "puzzles")
        assert benchmark.main(argv) == 0
        bought = server.bought
    assert spent <= 0.05 + 1e-9
    assert first["stopped"].startswith("stopped on budget") and not first["complete"]
    [ledger] = (tmp_path / "books").glob("puzzles__*.jsonl")
    books = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len(books) == 2 and books[0]["cost"] == pytest.approx(spent)  # billed = charged
    assert max(bought[k] for k in bought if "FEN" in k) == 1
    assert _result(tmp_path, "puzzles")["n"] == 6


def test_worldmodel_stops_on_one_budget_for_every_temperature(questions: Path,
                                                                tmp_path: Path) -> None:
    """worldmodel under --max-cost 0.08 at 0.01 a reply, asking at three temperatures: one
    budget for all of them, so the provider bills at most 0.08; the run stops cleanly (exit
    3), its ledger equals the provider's books, and with the resume it buys exactly what an
    undisturbed run buys (no prompt twice)."""
    def asked(server: ChatServer) -> int:
        return sum(n for k, n in server.bought.items() if "FEN" in k)
    with ChatServer(lambda fen, n: Response(), on_body=_legal, price=PRICE) as server:
        def argv(out: Path) -> list[str]:
            return ["worldmodel", "--model", "m", "--base-url", server.base_url, "--out",
                    str(out), "--retries", "0", "--questions", str(questions), "--limit", "4",
                    "--concurrency", "1"]
        assert benchmark.main(argv(tmp_path / "calm")) == 0
        calm = asked(server)
        spent_before = server.money
        assert benchmark.main([*argv(tmp_path / "cut"), "--max-cost", "0.08"]) == 3
        spent = server.money - spent_before
        first = _result(tmp_path / "cut", "worldmodel")
        assert benchmark.main(argv(tmp_path / "cut")) == 0
        cut = asked(server) - calm
    assert spent <= 0.08 + 1e-9
    assert first["stopped"].startswith("stopped on budget") and not first["complete"]
    [ledger] = (tmp_path / "cut" / "books").glob("worldmodel__*.jsonl")
    books = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len(books) == 2 and books[0]["cost"] == pytest.approx(spent)
    assert cut == calm  # nothing bought twice
    assert _result(tmp_path / "cut", "worldmodel")["complete"]


def test_reasoning_effort_is_sent_named_and_counted(questions: Path, tmp_path: Path) -> None:
    """--reasoning-effort: sent as OpenAI's field here (OpenRouter's nested one there), part
    of the identity and name, with room for the reasoning; its tokens counted and priced."""
    def reasoner(body: dict) -> Response:
        return Response(_legal(body).text, reasoning="Let me think.", usage={
            "prompt_tokens": 100, "completion_tokens": 900,
            "completion_tokens_details": {"reasoning_tokens": 880}})
    with ChatServer(lambda fen, n: Response(), on_body=reasoner) as server:
        argv = _argv(server.base_url, questions, tmp_path, "--limit", "3", "--price", "1,10")
        assert benchmark.main([*argv, "--reasoning-effort", "high"]) == 0
        assert benchmark.main(argv) == 0  # without: another player, asked again
        asked = [b for b in server.bodies if "FEN" in json.dumps(b)]
    high, plain = (json.loads(p.read_text()) for p in sorted(
        tmp_path.glob("static__*.json"), key=lambda p: "effort" not in p.name))
    assert high["model"] == "m [effort=high]" and plain["model"] == "m"
    assert high["player"] != plain["player"] and len(asked) == 6
    assert [b.get("reasoning_effort") for b in asked] == ["high"] * 3 + [None] * 3
    assert {b["max_tokens"] for b in asked[:3]} == {16384}
    assert high["usage"]["reasoning_tokens"] == 3 * 880
    assert high["usage"]["cost"] == pytest.approx(3 * (100 * 1 + 900 * 10) / 1e6)
    hosted = HttpBackend(ModelConfig(base_url="https://openrouter.ai/api/v1", model="x",
                                    reasoning_effort="low"))
    body = hosted.body(Request(messages=({"role": "user", "content": "hi"},)))
    assert body["reasoning"] == {"effort": "low"} and "reasoning_effort" not in body


def test_a_run_interrupted_and_resumed_is_the_undisturbed_run_byte_for_byte(
        questions: Path, tmp_path: Path) -> None:
    """Ctrl-C midway through a run at 8 requests in flight, answered slowly and out of
    order, then the same command: the result is the bytes of a run at 1 in flight that was
    never interrupted, and no prompt was bought twice (the ledger says what each bought)."""
    rng = random.Random(3)

    def slow(body: dict) -> Response:
        return Response(_legal(body).text, delay=rng.uniform(0.05, 0.3))
    with ChatServer(lambda fen, n: Response(), on_body=slow, price=PRICE) as server:
        calm = _argv(server.base_url, questions, tmp_path / "calm", "--concurrency", "1")
        assert benchmark.main(calm) == 0
        calm_billed = server.billed
        argv = _argv(server.base_url, questions, tmp_path / "cut", "--concurrency", "8")
        proc = subprocess.Popen([sys.executable, str(ROOT / "benchmark.py"), *argv],
                                stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 120
        while stored_answers(tmp_path / "cut" / "cache.db") < 12 and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert benchmark.main(argv) == 0
        cut_prompts = [k for k in server.bought if "FEN" in k]
    calm_json = next((tmp_path / "calm").glob("static__*.json"))
    cut_json = tmp_path / "cut" / calm_json.name
    assert cut_json.read_bytes() == calm_json.read_bytes()
    assert cut_json.with_suffix(".md").read_bytes() == calm_json.with_suffix(".md").read_bytes()
    # The ledger: the interrupted invocation and the resumed one, together all the provider
    # billed for this run directory; each prompt bought once here (and once for calm's).
    ledger = [json.loads(x) for x in next((tmp_path / "cut" / "books").glob("*.jsonl")).open()]
    assert len(ledger) == 2
    assert sum(x["replies_completed"] for x in ledger) == server.billed - calm_billed
    assert max(server.bought[k] for k in cut_prompts) == 2


def _model_answers(store: Path) -> int:
    """The model's replies in a games store (the rungs' moves are stored there too)."""
    try:
        with sqlite3.connect(store, timeout=0.1) as db:
            return int(db.execute("SELECT count(*) FROM answers WHERE key LIKE 'm@%'")
                       .fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_ctrl_c_in_play_stores_the_replies_in_flight_and_writes_the_ledger(
        tmp_path: Path, stockfish: str) -> None:
    """SIGINT to `play` with 4 games in flight, each reply 1.5 s: the replies in flight land
    and are stored, none is sent after the signal, the ledger says what was bought (exit 130);
    the provider billed exactly what the games store holds, and the resume buys none again."""
    def slow(body: dict) -> Response:
        return Response(_legal(body).text, delay=1.5)
    with ChatServer(lambda fen, n: Response(), on_body=slow, price=PRICE) as server:
        argv = ["play", "--model", "m", "--base-url", server.base_url, "--retries", "0",
                "--out", str(tmp_path), "--concurrency", "4", "--max-games", "4",
                "--ply-cap", "12", "--stockfish", stockfish, "--ladder", "stockfish-15.1"]
        proc = subprocess.Popen([sys.executable, str(ROOT / "benchmark.py"), *argv],
                                stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        def asked() -> int:  # the model's requests the server has read (all but the preflight)
            return len(server.bodies) - 1

        # Signal once 4 replies are stored and a further request is in the server's hands.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            stored = _model_answers(tmp_path / "games.db")
            if stored >= 4 and asked() > stored:
                break
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        billed, stored = server.billed, _model_answers(tmp_path / "games.db")
        [ledger] = (tmp_path / "books").glob("play__*.jsonl")
        books = json.loads(ledger.read_text().splitlines()[-1])
        assert benchmark.main(argv) == 0
        bought = server.bought
    assert stored == billed - 1 > 4  # all but the preflight, the ones in flight included
    assert books["replies_completed"] == billed and books["requests_sent"] == billed
    assert max(bought[k] for k in bought if "FEN" in k) == 1  # the resume bought none again


def test_a_refused_response_format_is_asked_as_text_even_with_no_retries(
        questions: Path, tmp_path: Path) -> None:
    """A server without structured output refuses response_format (HTTP 400 naming it): the
    same request goes again as text, which spends no retry (--retries 0 still answers)."""
    def answer(body: dict) -> Response:
        if "response_format" in body:
            return Response(status=400, raw=b'{"error": {"message": "response_format is not '
                            b'supported by this model"}}')
        return _legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=answer) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path, "--limit", "4",
                                    "--retries", "0", "--response-format", "json",
                                    "--concurrency", "1"))
        formats = ["response_format" in b for b in server.bodies if "FEN" in json.dumps(b)]
    assert code == 0 and _result(tmp_path)["legal_rate"] == 1.0
    assert formats == [True, False, False, False, False]  # refused once, then text only


def test_streamed_replies_are_read_whole_and_an_abort_stops_the_billing(
        questions: Path, tmp_path: Path) -> None:
    """A server that streams: requests stream, the events add up to the answer (content
    parts, reasoning, usage from the last event), and an attempt given up on is not billed,
    since the generation stops with the connection (a non-streamed one would be: finding
    10)."""
    seen: set[str] = set()

    def answer(body: dict) -> Response:
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
        fen = _fen(body)
        first = fen not in seen
        seen.add(fen)
        return Response(_legal(body).text, parts=True, reasoning="Weighing the options.",
                        delay=1.5 if first else 0.0)
    with ChatServer(lambda fen, n: Response(), on_body=answer, price=PRICE,
                    bill_abandoned=True, streams=True) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path, "--limit", "3",
                                    "--timeout", "0.5", "--concurrency", "1"))
        server.stopping.wait(2.0)
        billed = server.billed
    result, books = _result(tmp_path), _books(tmp_path)
    assert code == 0 and result["legal_rate"] == 1.0
    assert books["aborted_attempts"] == 3 and books["replies_completed"] == billed == 4
    assert result["usage"]["cost"] == pytest.approx(3 * PRICE)
    trace = [json.loads(line) for line in next((tmp_path / "traces").glob("*.jsonl")).open()]
    assert {t["reasoning"] for t in trace} == {"Weighing the options."}


def test_a_streamed_tools_turn_adds_up_its_calls(tmp_path: Path, stockfish: str) -> None:
    """Tool calls streamed in pieces (the arguments split across events) are the calls."""
    def moves(board: chess.Board) -> list[str]:
        return [sorted(m.uci() for m in board.legal_moves)[0]]
    with ChatServer(lambda fen, n: Response(), on_body=_tools_player(moves),
                    streams=True) as server:
        assert benchmark.main(["play", "--model", "m", "--base-url", server.base_url,
                               "--protocol", "tools", "--max-games", "2", "--ply-cap", "12",
                               "--out", str(tmp_path), "--stockfish", stockfish]) == 0
    usage = _result(tmp_path, "play")["usage"]
    assert usage["per_move"]["requests"] == 2.0 and usage["per_move"]["tool_calls"] == 2.0


def test_a_server_that_refuses_streaming_is_asked_in_one_piece(questions: Path,
                                                              tmp_path: Path) -> None:
    """HTTP 400 naming `stream`: the request goes again unstreamed, spending no retry, and
    no later request streams."""
    def answer(body: dict) -> Response:
        if body.get("stream"):
            return Response(status=400, raw=b'{"error": {"message": "Unsupported parameter: '
                            b'stream"}}')
        return _legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=answer) as server:
        code = benchmark.main(_argv(server.base_url, questions, tmp_path, "--limit", "3",
                                    "--retries", "0", "--concurrency", "1"))
        streamed = [bool(b.get("stream")) for b in server.bodies]
    # The preflight streamed (this server answers it in one piece), the first question's
    # streamed request was refused, and nothing streamed after.
    assert code == 0 and streamed == [True, True, False, False, False]
