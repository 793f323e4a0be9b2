"""The model layer's OpenAI-compatible backend: chat and text completions over HTTP.

Works with OpenAI, OpenRouter, vLLM, Ollama and llama.cpp servers, and reads every reply shape
they send: content as a string or a list of text parts, `reasoning` / `reasoning_content`,
`usage.cost`, `usage.completion_tokens_details.reasoning_tokens`, or no usage at all. It asks
once: 429, 5xx, timeouts and dropped connections come back as `AttemptFailed` saying whether
a retry may help (with the server's Retry-After, in seconds or as an HTTP date), whether the
attempt may have been billed, or that a completed reply could not be read; the wrapper
(metered.Metered) retries, charges and keeps. Requests stream, so an attempt given up on
stops the provider's generation (from_events reads the events whole); a server that answers
in one piece is read as such. Built on requests (pinned already, and the abort below needs
its urllib3 connections): an OpenAI SDK would bring its own retry loop and hide the attempts
the provider may bill.

A request's timeout only starts once every older request of ours has finished, and starts
again whenever one of ours is answered, so time spent queued behind our own requests at a
single-slot server (which may serve them in another order than we sent them) does not count.
The API key is only ever put in the Authorization header, and only the provider's own key goes
to a provider's host (`key_for`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import re
import socket
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Any
from urllib.parse import urlparse

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import InvalidHeader
from urllib3.util import Retry

from chess_eval.benchmark.model.interface import (
    AttemptFailed,
    ModelConfig,
    Reply,
    Request,
)
from chess_eval.errors import ConfigError

log = logging.getLogger(__name__)

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
# A provider's key goes to that provider's host only; any other endpoint gets a key only
# from an explicit --api-key-env.
PROVIDER_KEYS = {"openrouter.ai": "OPENROUTER_API_KEY", "api.openai.com": "OPENAI_API_KEY"}
# Request fields that options set: --extra may not change what the traces say was asked.
RESERVED = ("model", "messages", "prompt", "max_tokens", "temperature", "stop", "stream", "n",
            "tools", "response_format", "stream_options")
# With --reasoning-effort, the default --max-tokens: room for the reasoning before the answer
# (a reply cut off before it commits to a move is still a failed answer, counted as truncated).
REASONING_MAX_TOKENS = 16384
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
# Hosts that take the effort as OpenRouter's `reasoning: {effort}`; every other endpoint gets
# OpenAI's `reasoning_effort` (vLLM, SGLang and llama.cpp read that one too).
NESTED_REASONING = ("openrouter.ai",)
# --response-format json: the answer as {"move": "..."} by the API's JSON schema.
RESPONSE_FORMAT: dict[str, Any] = {"type": "json_schema", "json_schema": {
    "name": "move", "strict": True, "schema": {
        "type": "object", "properties": {"move": {"type": "string"}},
        "required": ["move"], "additionalProperties": False}}}
PREFLIGHT_PROMPT = "Reply with the word OK."


# How a server words an HTTP 400, by what it means (OpenAI, vLLM, llama.cpp, Ollama, SGLang).
CONTEXT_RE = re.compile(r"context[_ ]length|context size|context window|maximum context|"
                        r"exceeds? the (?:available )?context|too many tokens|prompt is too "
                        r"long|input is too long", re.IGNORECASE)
UNSUPPORTED_RE = re.compile(r"unsupported[_ ](?:parameter|value)|not supported|unrecognized|"
                            r"unknown (?:field|parameter|argument)|extra (?:fields|inputs) not "
                            r"permitted|does not support", re.IGNORECASE)
FORMAT_RE = re.compile(r"response_format|json_schema|json schema|structured output",
                       re.IGNORECASE)
STREAM_RE = re.compile(r"\bstream(?:ing|_options)?\b", re.IGNORECASE)


class Refusal(StrEnum):
    """What an HTTP 400 means, read from its body."""

    CONTEXT = "context length"  # the request does not fit: trim it, or fail this one
    UNSUPPORTED = "unsupported parameter"  # every request would be refused: fatal
    OTHER = "other"  # this request was refused: it fails, the run goes on


def refusal_of(body: str) -> Refusal:
    """The kind of an HTTP 400 from its body's wording."""
    if CONTEXT_RE.search(body):
        return Refusal.CONTEXT
    if UNSUPPORTED_RE.search(body):
        return Refusal.UNSUPPORTED
    return Refusal.OTHER


class _Unreadable(Exception):
    """A completed reply (HTTP 200, billed) whose body is not a completion."""

    def __init__(self, reason: str, usage: dict[str, Any]) -> None:
        super().__init__(reason)
        self.usage = usage  # whatever usage the body held (for its cost)


def key_for(base_url: str, key_env: str | None, environ: dict[str, str]) -> tuple[
        str | None, str | None]:
    """The API key for an endpoint and the variable it came from (see PROVIDER_KEYS)."""
    host = urlparse(base_url).hostname or ""
    if key_env:
        if not environ.get(key_env):
            raise ConfigError(f"--api-key-env {key_env}: that variable is not set")
        return environ[key_env], key_env
    var = PROVIDER_KEYS.get(host)
    if var is None:
        return None, None
    if not environ.get(var):
        raise ConfigError(f"{host} needs an API key: set {var}, or name the variable that "
                          "holds it with --api-key-env")
    return environ[var], var


DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"  # --base-url when none is given


def connection(base_url: str | None, key_env: str | None,
               environ: dict[str, str]) -> tuple[str, str | None, str | None]:
    """Where this backend asks and with which key: --base-url (default DEFAULT_BASE_URL),
    checked, and the key of --api-key-env or the endpoint's provider (key_for), with the
    variable it came from."""
    url = base_url or DEFAULT_BASE_URL
    check_base_url(url)
    key, source = key_for(url, key_env, environ)
    return url, key, source


def check_base_url(base_url: str) -> None:
    """A clear error for a --base-url that cannot be an HTTP endpoint."""
    parts = urlparse(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"bad --base-url {base_url!r}: expected http(s)://host[:port]/path")
    try:
        _ = parts.port
    except ValueError as exc:
        raise ConfigError(f"bad --base-url {base_url!r}: {exc}") from exc


def parse_extra(text: str | None) -> dict[str, Any]:
    """--extra: a JSON object of additional request fields, none of them RESERVED."""
    if not text:
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("must be a JSON object")
    taken = sorted(set(value) & set(RESERVED))
    if taken:
        raise ValueError(f"may not set {taken}: use the options of the same name")
    return value


class _Queue:
    """Our requests in the order they started: a timeout runs only for the oldest, and only
    while none of ours is answered (a server may serve a younger one of ours first)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0
        self._open: set[int] = set()
        self.last_reply = 0.0  # monotonic time the last of our requests was answered

    def enter(self) -> int:
        with self._lock:
            self._next += 1
            self._open.add(self._next)
            return self._next

    def leave(self, ticket: int, answered: bool) -> None:
        with self._lock:
            self._open.discard(ticket)
            if answered:
                self.last_reply = time.monotonic()

    def is_oldest(self, ticket: int) -> bool:
        with self._lock:
            return min(self._open) == ticket


class HttpBackend:
    """An OpenAI-compatible endpoint as a `Backend` (asked once a call). Thread-safe; each
    request runs on its own daemon thread, so Ctrl-C never waits on it."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.completions_url = config.base_url.rstrip("/") + "/completions"
        # The server refused response_format (a 400 naming it): answers are read as text.
        self.format_refused = False
        # Requests stream (so that an attempt given up on stops the provider's generation,
        # and its billing) until the server refuses `stream`; a server that answers a
        # streamed request in one piece is read as it answers.
        self.streaming = True
        self._sessions: queue.SimpleQueue[requests.Session] = queue.SimpleQueue()
        self._queue = _Queue()

    @property
    def endpoint(self) -> str:
        """The canonical endpoint (or --endpoint-id)."""
        return self.config.endpoint

    @property
    def retries(self) -> int:
        """--retries: attempts the wrapper may add after a failed one."""
        return self.config.retries

    def size(self, request: Request) -> tuple[int, int]:
        """What --max-cost holds for a request: its whole body and its max_tokens."""
        body = self.body(request)
        return len(json.dumps(body)), int(body["max_tokens"])

    def where(self, request: Request) -> str:
        """The URL a request goes to."""
        return self.completions_url if request.prompt is not None else self.url

    def preflight_request(self) -> Request:
        """A small request at the run's own API (/completions for the pgn protocol)."""
        if self.config.completions:
            return Request(prompt=PREFLIGHT_PROMPT, max_tokens=16, answer=False)
        return Request(messages=({"role": "user", "content": PREFLIGHT_PROMPT},),
                       max_tokens=16, answer=False)

    def body(self, request: Request) -> dict[str, Any]:
        """The JSON body of a request: chat messages (with the system prompt) or a prompt."""
        body: dict[str, Any] = {**self.config.extra, "model": self.config.model,
                                "temperature": self.config.temperature,
                                "max_tokens": request.max_tokens or self.config.max_tokens}
        if self.config.stop:
            body["stop"] = list(self.config.stop)
        if self.streaming:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}  # the last event's usage
        if self.config.reasoning_effort and request.answer:
            if (urlparse(self.config.base_url).hostname or "") in NESTED_REASONING:
                body["reasoning"] = {"effort": self.config.reasoning_effort}
            else:
                body["reasoning_effort"] = self.config.reasoning_effort
        if request.prompt is not None:
            body["prompt"] = request.prompt
            return body
        messages = list(request.messages)
        if self.config.system:
            messages = [{"role": "system", "content": self.config.system}, *messages]
        body["messages"] = messages
        if request.tools:
            body["tools"] = list(request.tools)
        elif self.config.json_answers and not self.format_refused and request.answer:
            body["response_format"] = RESPONSE_FORMAT
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        return headers

    def _post(self, body: dict[str, Any], url: str) -> requests.Response:
        """One POST, bounded by the timeout from when it is our oldest pending request. When
        that runs out the request is aborted at its socket, and this returns only once it has
        settled, so a retry never runs beside the copy it replaces (each may be billed)."""
        try:
            session = self._sessions.get_nowait()
        except queue.Empty:
            session = _session()
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            _current.box = box  # where the connection records itself, so it can be aborted
            try:
                # No read timeout of its own: a request queued behind ours at a one-slot
                # server is silent for longer than --timeout, legitimately; the queue-aware
                # clock below bounds it, and closes its socket when the time is up.
                response = session.post(url, json=body, headers=self._headers(),
                                        timeout=(min(self.config.timeout_s, 30.0), None),
                                        allow_redirects=False, stream=True)
                _ = response.content  # the whole body (an event stream) read here, abortable
                box["response"] = response
                self._sessions.put(session)
            except requests.RequestException as exc:
                box["error"] = exc
            finally:
                _current.box = None
                done.set()

        ticket = self._queue.enter()
        try:
            threading.Thread(target=work, daemon=True, name="http").start()
            started: float | None = None
            while not done.wait(0.05):
                if started is None and self._queue.is_oldest(ticket):
                    started = time.monotonic()
                waited = time.monotonic() - max(started or 0.0, self._queue.last_reply)
                if started is not None and waited > self.config.timeout_s:
                    _abort(box)
                    if not done.wait(SETTLE_S):
                        raise AttemptFailed(f"no reply within {self.config.timeout_s:g} s, "
                                            "and the request could not be aborted",
                                            settled=False, aborted=True)
                    raise AttemptFailed(f"no reply within {self.config.timeout_s:g} s (given "
                                        "up on: the provider may bill it)", retry=True,
                                        aborted=True)
        finally:
            if not done.is_set():  # interrupted (Ctrl-C): leave no request behind
                _abort(box)
            self._queue.leave(ticket, done.is_set() and "response" in box)
        if "error" in box:
            # Sent and then cut (a reset, a read that failed) may have been billed; one that
            # never connected was not.
            error = box["error"]
            sent = not (_refused(error) or isinstance(error, requests.ConnectTimeout))
            raise AttemptFailed(_connection_problem(error, url), retry=True, aborted=sent,
                                unsent=not sent)
        response: requests.Response = box["response"]
        return response

    def url_of(self, body: dict[str, Any]) -> str:
        """Where a body goes: a prompt to the text completions, messages to the chat ones."""
        return self.completions_url if "prompt" in body else self.url

    def send(self, request: Request) -> Reply:
        """One request and its completion; AttemptFailed for anything else (a completed reply
        that cannot be read says so, with the usage its body held)."""
        body = self.body(request)
        url = self.url_of(body)
        response = self._post(body, url)
        if response.status_code != 200:
            raise self._problem(response, body, url)
        try:
            return self._reply(response, url)
        except _Unreadable as exc:
            raise AttemptFailed(str(exc), retry=True, unreadable=exc.usage) from None

    def _problem(self, response: requests.Response, body: dict[str, Any],
                 url: str) -> AttemptFailed:
        """Why a request that got an HTTP status other than 200 failed, and what follows."""
        status = response.status_code
        if status in RETRY_STATUS:
            return AttemptFailed(f"HTTP {status}", retry=True, busy=True,
                                 retry_after=_retry_after(response))
        if status == 400:
            text = response.text[:2000]
            kind = refusal_of(text)
            said = " ".join(text[:200].split())
            if kind is Refusal.CONTEXT:
                return AttemptFailed(f"HTTP 400 from {url}: the request does not fit the "
                                     f"model's context ({said})", context=True)
            if body.get("stream") and STREAM_RE.search(text):
                self._without_stream()
                return AttemptFailed("stream refused", resend=True)
            if "response_format" in body and (kind is Refusal.UNSUPPORTED
                                              or FORMAT_RE.search(text)):
                self._without_format()
                return AttemptFailed("response_format refused", resend=True)
            if kind is Refusal.UNSUPPORTED:
                return AttemptFailed(f"HTTP 400 from {url}: a parameter the server does not "
                                     f"support ({said})", fatal=True)
            return AttemptFailed(f"HTTP 400 from {url}: the request was refused ({said})",
                                 fatal=False)
        return AttemptFailed(self._refusal(response, url), fatal=True)

    def _refusal(self, response: requests.Response, url: str) -> str:
        status = response.status_code
        body = " ".join(response.text[:200].split())
        if status in (301, 302, 303, 307, 308):
            return (f"{url} redirects to {response.headers.get('Location')}: use that "
                    "address as --base-url")
        if status in (401, 403):
            sent = (f"the key from {self.config.key_source} was refused"
                    if self.config.key_source else
                    "no API key was sent: name the variable holding it with --api-key-env")
            return f"HTTP {status} from {url}: {sent} ({body})"
        if status == 404:
            return (f"HTTP 404 from {url}: unknown model {self.config.model!r} or a wrong "
                    f"--base-url ({body})")
        return f"HTTP {status} from {url}: the request was refused ({body})"

    def _reply(self, response: requests.Response, url: str) -> Reply:
        """The completion of a 200 (in one piece, or an event stream); _Unreadable when the
        body is not one."""
        try:
            kind = response.headers.get("Content-Type", "")
            data = from_events(response.text) if kind.startswith("text/event-stream") \
                else response.json()
        except ValueError:
            kind = response.headers.get("Content-Type", "no content type").split(";")[0]
            raise _Unreadable(f"{url} answered {kind}, not JSON: is --base-url the API's "
                              "base (e.g. http://host:port/v1)?", {}) from None
        usage = (data.get("usage") if isinstance(data, dict) else None) or {}
        if not isinstance(usage, dict):
            usage = {}
        completion = url == self.completions_url
        try:
            choice = data["choices"][0]
            message = {} if completion else choice["message"]
            text = _text(choice["text"] if completion else message.get("content"))
            calls = None if completion else _tool_calls(message)
            details = usage.get("completion_tokens_details") or {}
            reasoning = None if completion else _text(
                message.get("reasoning_content") or message.get("reasoning")) or None
            return Reply(
                text=text, prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                reasoning_tokens=details.get("reasoning_tokens"), cost=usage.get("cost"),
                finish_reason=choice.get("finish_reason"), tool_calls=calls,
                reasoning=reasoning)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            what = "choices[0].text: not an OpenAI-compatible completions API" if completion \
                else "choices[0].message.content: not an OpenAI-compatible chat API"
            raise _Unreadable(f"{url} answered JSON without {what}", usage) from exc

    def _without_format(self) -> None:
        """The server refused response_format: from here on every request is asked as text
        (a server that lacks it lacks it for every request)."""
        if not self.format_refused:
            log.warning("%s refused response_format (HTTP 400 naming it): answers are read "
                        "as text from here on", self.url)
        self.format_refused = True

    def _without_stream(self) -> None:
        """The server refused `stream`: requests go in one piece from here on."""
        if self.streaming:
            log.warning("%s refused streamed requests (HTTP 400 naming stream): requests go "
                        "in one piece from here on (an attempt given up on may be billed)",
                        self.url)
        self.streaming = False


def _retry_after(response: requests.Response) -> float | None:
    """The seconds a busy server's Retry-After asks for (None: none, or malformed)."""
    if response.raw is None:
        return None
    with contextlib.suppress(InvalidHeader):  # a malformed header is no hint
        return Retry().get_retry_after(response.raw)
    return None


def from_events(text: str) -> dict[str, Any]:
    """A streamed completion (server-sent events) as the one-piece completion it adds up to:
    the first choice's content (text parts joined), reasoning, tool calls (their argument
    pieces joined by index) and finish reason, and the usage of the event that carries it.
    ValueError when an event is not JSON or the stream holds no choice."""
    usage: dict[str, Any] | None = None
    content, reasoning, finish, completion = [], [], None, False
    calls: dict[int, dict[str, Any]] = {}
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            break
        event = json.loads(payload)
        usage = event.get("usage") or usage
        for choice in event.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            finish = choice.get("finish_reason") or finish
            if "text" in choice:
                completion = True
                content.append(choice.get("text") or "")
                continue
            delta = choice.get("delta") or {}
            content.append(_text(delta.get("content")))
            reasoning.append(_text(delta.get("reasoning_content") or delta.get("reasoning")))
            for call in delta.get("tool_calls") or []:
                _add_call(calls.setdefault(int(call.get("index", 0)), {
                    "id": "", "type": "function", "function": {"name": "", "arguments": ""}}),
                    call)
    if finish is None and not any(content) and not calls:
        raise ValueError("the event stream holds no choice")
    first: dict[str, Any] = {"index": 0, "finish_reason": finish}
    if completion:
        first["text"] = "".join(content)
    else:
        first["message"] = {"role": "assistant", "content": "".join(content),
                            "reasoning_content": "".join(reasoning) or None,
                            "tool_calls": [calls[i] for i in sorted(calls)] or None}
    return {"choices": [first], "usage": usage}


def _add_call(entry: dict[str, Any], piece: dict[str, Any]) -> None:
    """One streamed piece of a tool call added to the call it belongs to."""
    if piece.get("id"):
        entry["id"] = piece["id"]
    function = piece.get("function") or {}
    if function.get("name"):
        entry["function"]["name"] = function["name"]
    if function.get("arguments"):
        entry["function"]["arguments"] += function["arguments"]


def _text(content: Any) -> str:
    """A message's content as text: a string, or a list of text parts (joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part.get("text", "") if isinstance(part, dict) else str(part)
                 for part in content
                 if not isinstance(part, dict) or part.get("type", "text") in ("text",
                                                                              "output_text")]
        return "".join(p for p in parts if isinstance(p, str))
    raise TypeError("content is neither text nor a list of parts")


def _tool_calls(message: dict[str, Any]) -> list[dict[str, str]] | None:
    """A chat message's tool calls as {"id", "name", "arguments"} (arguments: the raw text)."""
    calls = message.get("tool_calls")
    if not calls:
        return None
    out = []
    for call in calls:
        function = call.get("function") or {}
        arguments = function.get("arguments", "")
        out.append({"id": str(call.get("id", "")), "name": str(function.get("name", "")),
                    "arguments": arguments if isinstance(arguments, str)
                    else json.dumps(arguments)})
    return out


def _refused(exc: requests.RequestException) -> bool:
    """Whether a connection error never reached the server (refused, unresolved)."""
    text = str(exc).lower()
    return "refused" in text or "resolve" in text or "name or service" in text


def _connection_problem(exc: requests.RequestException, url: str) -> str:
    """A short, clear reason for a request that got no HTTP response."""
    host = urlparse(url).netloc
    text = str(exc)
    if "refused" in text.lower():
        return f"connection to {host} refused (is the server running?)"
    if "resolve" in text.lower() or "name or service" in text.lower():
        return f"cannot resolve host {host}"
    if isinstance(exc, requests.Timeout):
        return f"{host} did not answer in time"
    return f"connection to {host} failed ({type(exc).__name__})"


SETTLE_S = 35.0  # after an abort, the longest an attempt may take to end: a connect's bound
_current = threading.local()  # the box of the request this thread is sending


def _sent(connection: HTTPConnection, send: Callable[[], None]) -> None:
    """Send a request on `connection`, recorded first in its thread's box so that another
    thread can abort it; one aborted while it connected or sent is shut at once after."""
    box = getattr(_current, "box", None)
    if box is not None:
        box["connection"] = connection
    send()
    if box is not None and box.get("aborted"):
        _shut(connection)


class _Connection(HTTPConnection):
    """An HTTP connection that can be aborted from another thread (see _sent)."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        _sent(self, lambda: super(_Connection, self).request(*args, **kwargs))


class _SecureConnection(HTTPSConnection):
    """The HTTPS one."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        _sent(self, lambda: super(_SecureConnection, self).request(*args, **kwargs))


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _SecurePool(HTTPSConnectionPool):
    ConnectionCls = _SecureConnection


class _Adapter(HTTPAdapter):
    """requests' adapter whose connections can be aborted from another thread."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _SecurePool}


def _session() -> requests.Session:
    """A session whose requests `_abort` can end at the socket."""
    session = requests.Session()
    adapter = _Adapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def _shut(connection: HTTPConnection) -> None:
    """Close a connection's socket both ways: a read blocked on it returns at once."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _abort(box: dict[str, Any]) -> None:
    """End the request of `box` at its socket (or, not yet connected, as soon as it sends)."""
    box["aborted"] = True
    connection = box.get("connection")
    if connection is not None:
        _shut(connection)
