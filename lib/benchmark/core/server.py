"""Baseline players behind an OpenAI-compatible chat-completions endpoint.

`benchmark.py serve` answers POST /v1/chat/completions for a model named 'served/SPEC', where
SPEC is any baseline spec ('served/toga2:depth=1', 'served/softmax:temp=100,nodes=2000'): it
reads the FEN from the prompt and replies with the player's move. (The prefix keeps the name
from being a baseline on the client's side, which would play it in-process, not over HTTP.)
A player rated this way goes through exactly the path a language model takes (HTTP, parsing,
retries), which is how the validation set's players unlike the rungs are rated. Each model
name gets its own small pool of engines; a request waits for a free one.
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lib.benchmark.core.players import EnginePlayer, Player, is_baseline, make_player
from lib.benchmark.core.prompts import Question
from lib.engine import Engine
from lib.errors import ChessEvalError

log = logging.getLogger(__name__)

# Every prompt template names the position as "... (FEN): <fen>".
FEN_RE = re.compile(r"\(FEN\): (\S+ [wb] \S+ \S+ \d+ \d+)")
SERVED = "served"  # the model names' prefix ('served/SPEC'), and a served question's source


def question_from(fen: str) -> Question:
    """A question holding only a FEN, as the server knows it (its id is the FEN, so a mixed
    player's coin is seeded per position)."""
    return Question(id=fen, fen=fen, expected={}, source=SERVED, elo_bucket="", phase="",
                    type="", color="", history="", played_move="", played_elo=None,
                    rating=None, solution="", themes="", private=False)


@dataclass
class Served:
    """One model name's player and its engines (a pool: a request takes one, gives it back)."""

    player: Player
    engines: queue.Queue[Engine | None] = field(default_factory=queue.Queue)
    started: list[Engine] = field(default_factory=list)

    def move(self, fen: str) -> str:
        """The player's reply text to the position."""
        question = question_from(fen)
        if not isinstance(self.player, EnginePlayer):
            return self.player.answer(question, "").text
        engine = self.engines.get()
        try:
            if engine is None:  # a free slot with no engine yet
                engine = Engine(self.player.engine_settings).__enter__()
                self.started.append(engine)
            return self.player.answer_with(engine, question, "").text
        finally:
            self.engines.put(engine)


class PlayerServer:
    """The server: model name -> player, made on first use; `slots` engines per model."""

    def __init__(self, host: str, port: int, stockfish: str | None, seed: int,
                 slots: int) -> None:
        self.stockfish = stockfish
        self.seed = seed
        self.slots = slots
        self.models: dict[str, Served] = {}
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, port), self._handler())
        self.httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        """The /v1 base URL to give as --base-url."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def served(self, model: str) -> Served:
        """The model's player, made on its first request; ChessEvalError for a bad name."""
        with self._lock:
            if model not in self.models:
                prefix, _, spec = model.partition("/")
                if prefix != SERVED or not is_baseline(spec):
                    raise ChessEvalError(f"unknown model {model!r}: this server plays "
                                         f"'{SERVED}/SPEC' for a baseline SPEC (e.g. "
                                         f"{SERVED}/toga2:depth=1)")
                player = make_player(spec, None, self.stockfish, self.seed, workers=1)
                served = Served(player)
                for _ in range(self.slots):
                    served.engines.put(None)
                self.models[model] = served
                log.info("serving %s (%s)", model, player.answered_by)
            return self.models[model]

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON body answering one chat-completions request."""
        try:
            model = str(body["model"])
            prompt = str(body["messages"][-1]["content"])
        except (KeyError, IndexError, TypeError):
            return 400, {"error": {"message": "expected {'model', 'messages': [...]}"}}
        found = FEN_RE.search(prompt)
        try:
            served = self.served(model)
            # A prompt with no position (a client's preflight) gets a short reply.
            text = served.move(found.group(1)) if found else "OK"
        except ChessEvalError as exc:
            return (404 if "unknown model" in str(exc) else 500), {"error": {"message": str(exc)}}
        return 200, {
            "id": "served", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            # Rough counts (4 characters a token): the server runs no tokenizer.
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 2,
                      "total_tokens": len(prompt) // 4 + 2},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass  # one line per request would drown the log

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": name, "object": "model"} for name in sorted(server.models)]})
                else:
                    self._send(404, {"error": {"message": f"no {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no {self.path}"}})
                    return
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length",
                                                                           0))))
                except ValueError:
                    self._send(400, {"error": {"message": "the body is not JSON"}})
                    return
                try:
                    answer = server.reply(body)
                except Exception as exc:  # noqa: BLE001 (a server answers every request)
                    log.error("a request failed: %r", exc)
                    answer = 500, {"error": {"message": f"the player failed: {exc!r}"}}
                self._send(*answer)

        return Handler

    def serve(self) -> None:
        """Answer requests until shut down (Ctrl-C, or `shutdown` from another thread)."""
        self.httpd.serve_forever()

    def shutdown(self) -> None:
        """Stop answering (from another thread than `serve`'s)."""
        self.httpd.shutdown()

    def close(self) -> None:
        """Close the socket and every engine started."""
        self.httpd.server_close()
        for served in self.models.values():
            for engine in served.started:
                engine.close()
            served.player.close()
