"""A small OpenAI-compatible chat-completions server on 127.0.0.1 that answers from a script.

With a `price`, it is a provider with books of its own: every reply it completes (a 200,
readable or not) is billed, and with `bill_abandoned` so is one whose client gave up before it
was sent (a non-streamed generation is billed when it completes). Its books (`billed`,
`money`, `bought` per request) are what a test holds the result's against."""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from chess_eval.benchmark.core.server import QuietServer

FEN_RE = re.compile(r"FEN\): (\S+ [wb] \S+ \S+ \d+ \d+)")


@dataclass
class Response:
    """One scripted response."""

    text: str = ""  # the assistant's content
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering
    raw: bytes | None = None  # a body sent as is (for malformed JSON)
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict | None = None
    finish_reason: str = "stop"
    hang: bool = False  # never answer (a silent server)
    tool_calls: list[dict] | None = None  # the assistant's tool calls (OpenAI's shape)
    parts: bool = False  # content as a list of text parts, as some providers send it
    reasoning: str | None = None  # the reasoning text, as `reasoning_content`
    no_usage: bool = False  # a body without usage at all


Script = Callable[[str, int], Response]  # (fen, how many times this fen was asked) -> reply
PREFLIGHT = ""  # the key of the client's preflight (a request without a FEN)
PREFLIGHT_PROMPT = "Reply with the word OK."  # what the client's preflight asks
OK = Response("OK")


def _closed(conn: socket.socket) -> bool:
    """Whether the client has closed this connection (EOF waiting on it)."""
    try:
        ready, _, _ = select.select([conn], [], [], 0)
        return bool(ready) and conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


class _FifoSlot:
    """One slot, served first come, first served (a plain lock may starve the oldest)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next = 0  # the ticket the next arrival takes
        self._serving = 0  # the ticket whose turn it is

    def __enter__(self) -> None:
        with self._cond:
            ticket = self._next
            self._next += 1
            self._cond.wait_for(lambda: self._serving == ticket)

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._serving += 1
            self._cond.notify_all()


class ChatServer:
    """Answers POST /v1/chat/completions with script(fen, attempt); a request without a FEN
    (the preflight) gets `preflight`, or the script's answer for PREFLIGHT when None.
    `single_slot` answers one request at a time in the order they arrived, like a local
    server with one slot (llama.cpp, Ollama)."""

    def __init__(self, script: Script, preflight: Response | None = OK,
                 single_slot: bool = False,
                 on_body: Callable[[dict], Response] | None = None,
                 price: float | None = None, bill_abandoned: bool = False,
                 streams: bool = False) -> None:
        self.script = script
        self.streams = streams  # a request with "stream": true is answered by events
        self.price = price  # billed per completed reply, and reported as usage.cost
        self.bill_abandoned = bill_abandoned  # a reply whose client left is billed too
        self.billed = 0  # replies billed
        self.money = 0.0  # what they cost
        self.bought: Counter[str] = Counter()  # billed replies per request (its model, messages)
        self.on_body = on_body  # when set, answers every request with a FEN from its body
        self.preflight = preflight
        self.slot = _FifoSlot() if single_slot else None
        self.stopping = threading.Event()
        self.calls: dict[str, int] = {}
        self.auth: list[str | None] = []
        self.bodies: list[dict] = []
        # Copies of one prompt (by FEN) the server holds at once: now, and the most ever. A
        # copy is let go when answered or when its client closes the connection.
        self.in_flight: dict[str, list[socket.socket]] = {}
        self.most_in_flight: dict[str, int] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                prompt = body["prompt"] if "prompt" in body else \
                    body["messages"][-1]["content"] or ""
                found = FEN_RE.search(prompt)
                fen = found.group(1) if found else PREFLIGHT
                if fen == PREFLIGHT and PREFLIGHT_PROMPT not in prompt:
                    fen = "no fen"  # a request of a protocol that shows no FEN
                with server._lock:
                    attempt = server.calls.get(fen, 0)
                    server.calls[fen] = attempt + 1
                    server.auth.append(self.headers.get("Authorization"))
                    server.bodies.append(body)
                    # A copy whose client has closed its connection is no longer held,
                    # whether or not its handler has noticed yet.
                    held = [c for c in server.in_flight.get(fen, []) if not _closed(c)]
                    server.in_flight[fen] = [*held, self.connection]
                    server.most_in_flight[fen] = max(server.most_in_flight.get(fen, 0),
                                                     len(held) + 1)
                try:
                    self._answer(body, fen, attempt)
                finally:
                    with server._lock, contextlib.suppress(ValueError):
                        server.in_flight[fen].remove(self.connection)

            def _client_gone(self) -> bool:
                return _closed(self.connection)

            def _hold(self, seconds: float | None) -> bool:
                """Wait `seconds` (forever: None) or until the client leaves; False if it
                left (a real server stops work on a closed connection too)."""
                end = None if seconds is None else time.monotonic() + seconds
                while end is None or time.monotonic() < end:
                    if self._client_gone() or server.stopping.is_set():
                        return False
                    time.sleep(0.01)
                return True

            def _bill(self, body: dict) -> None:
                if server.price is None:
                    return
                # A request is its model and messages: two models asked the same position
                # (a match's colour-reversed pair, both players deterministic) buy it once each.
                asked = json.dumps([body.get("model"), body.get("messages") or body.get("prompt")],
                                   sort_keys=True)
                with server._lock:
                    server.billed += 1
                    server.money = round(server.money + server.price, 9)
                    server.bought[asked] += 1

            def _answer(self, body: dict, fen: str, attempt: int) -> None:
                if fen == PREFLIGHT and server.preflight is not None:
                    reply = server.preflight
                elif server.on_body is not None:
                    reply = server.on_body(body)
                else:
                    reply = server.script(fen, attempt)
                if reply.hang:
                    self._hold(None)
                    return
                if server.slot is not None:
                    with server.slot:
                        if not self._hold(reply.delay):
                            return self._abandoned(body, reply)
                elif reply.delay and not self._hold(reply.delay):
                    return self._abandoned(body, reply)
                content = [{"type": "text", "text": reply.text}] if reply.parts else reply.text
                message = {"role": "assistant", "content": content}
                if reply.reasoning is not None:
                    message["reasoning_content"] = reply.reasoning
                if reply.tool_calls:
                    message["tool_calls"] = reply.tool_calls
                choice = {"index": 0, "finish_reason": reply.finish_reason,
                          **({"text": reply.text} if "prompt" in body
                             else {"message": message})}
                usage = reply.usage or {"prompt_tokens": 50, "completion_tokens": 5,
                                        "total_tokens": 55,
                                        "completion_tokens_details": {"reasoning_tokens": 3}}
                if server.price is not None and reply.usage is None:
                    usage = {**usage, "cost": server.price}
                # The fields every OpenAI-compatible server sends (Inspect's client needs them).
                completion = {"id": "x", "object": "chat.completion", "created": 0,
                              "model": body.get("model", ""), "choices": [choice]}
                if not reply.no_usage:
                    completion["usage"] = usage
                payload = reply.raw if reply.raw is not None else \
                    json.dumps(completion).encode()
                if reply.status == 200:
                    self._bill(body)
                if server.streams and body.get("stream") and reply.status == 200 \
                        and reply.raw is None:
                    self._events(body, choice, completion.get("usage"))
                    return
                try:
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    if "Content-Type" not in reply.headers:
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _abandoned(self, body: dict, reply: Response) -> None:
                """The client left while the reply was made: billed all the same where the
                provider bills a generation when it completes, unless it was streamed (the
                generation stops with the connection)."""
                streamed = server.streams and body.get("stream")
                if server.bill_abandoned and reply.status == 200 and not streamed \
                        and not server.stopping.is_set():
                    self._bill(body)

            def _events(self, body: dict, choice: dict, usage: dict | None) -> None:
                """The reply as server-sent events: the text in three pieces, the reasoning
                and each tool call's arguments in two, then the finish and the usage."""
                def pieces(text: str, n: int) -> list[str]:
                    k = max(1, -(-len(text) // n))
                    return [text[i:i + k] for i in range(0, len(text), k)] or [""]
                events: list[dict] = []
                if "text" in choice:
                    events += [{"choices": [{"index": 0, "text": t}]}
                               for t in pieces(choice["text"], 3)]
                else:
                    message = choice["message"]
                    content = message.get("content") or ""
                    if isinstance(content, list):
                        content = "".join(part["text"] for part in content)
                    for r in pieces(message.get("reasoning_content") or "", 2):
                        events.append({"choices": [{"index": 0, "delta": {
                            "reasoning_content": r}}]})
                    events += [{"choices": [{"index": 0, "delta": {"content": t}}]}
                               for t in pieces(content, 3)]
                    for i, call in enumerate(message.get("tool_calls") or []):
                        args = pieces(call["function"]["arguments"], 2)
                        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [{
                            "index": i, "id": call["id"], "type": "function", "function": {
                                "name": call["function"]["name"], "arguments": args[0]}}]}}]})
                        events += [{"choices": [{"index": 0, "delta": {"tool_calls": [{
                            "index": i, "function": {"arguments": a}}]}}]} for a in args[1:]]
                events.append({"choices": [{"index": 0, "delta": {},
                                            "finish_reason": choice["finish_reason"]}]})
                if usage and (body.get("stream_options") or {}).get("include_usage"):
                    events.append({"choices": [], "usage": usage})
                payload = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
                payload += "data: [DONE]\n\n"
                data = payload.encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def base_url(self) -> str:
        """The /v1 base URL of this server."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"
