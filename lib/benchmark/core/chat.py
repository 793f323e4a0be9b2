"""An OpenAI-compatible chat-completions client over HTTP, with retries that are honest.

Works with OpenAI, OpenRouter, vLLM, Ollama and llama.cpp servers. Retries 429, 5xx,
timeouts, dropped connections and malformed responses, and logs each retry. urllib3's `Retry`
is the policy (which statuses, how many attempts, exponential backoff with a cap and jitter,
Retry-After in seconds or as an HTTP date); our loop drives it rather than the HTTP adapter,
because the adapter would sleep inside the request, where the queue-aware timeout below would
count the backoff, and it cannot retry a 200 whose body is not a chat completion. A
Retry-After beyond RETRY_AFTER_CAP_S is not waited for: the request fails at once.

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
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import InvalidHeader, MaxRetryError
from urllib3.util import Retry

from lib.benchmark.core.cost import Budget, Price
from lib.errors import ChessEvalError, ConfigError

log = logging.getLogger(__name__)

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
RETRY_AFTER_CAP_S = 120  # a server asking us to wait longer than this fails the request
# A provider's key goes to that provider's host only; any other endpoint gets a key only
# from an explicit --api-key-env.
PROVIDER_KEYS = {"openrouter.ai": "OPENROUTER_API_KEY", "api.openai.com": "OPENAI_API_KEY"}
# Request fields that options set: --extra may not change what the traces say was asked.
RESERVED = ("model", "messages", "prompt", "max_tokens", "temperature", "stop", "stream", "n",
            "tools", "response_format")
DEFAULT_MAX_TOKENS = 1024
# --response-format json: the answer as {"move": "..."} by the API's JSON schema.
RESPONSE_FORMAT = {"type": "json_schema", "json_schema": {
    "name": "move", "strict": True, "schema": {
        "type": "object", "properties": {"move": {"type": "string"}},
        "required": ["move"], "additionalProperties": False}}}
PREFLIGHT_PROMPT = "Reply with the word OK."


class InfraError(ChessEvalError):
    """The request failed for reasons that are not the model's (after every retry)."""


class FatalInfraError(InfraError):
    """A failure every further request would repeat (bad key, unknown model or URL)."""


class BudgetSpent(InfraError):
    """--max-cost is spent: no more requests are sent (a rerun resumes)."""


@dataclass(frozen=True)
class ChatConfig:
    """Where and how to ask."""

    base_url: str  # e.g. https://openrouter.ai/api/v1
    model: str
    api_key: str | None = field(default=None, repr=False)  # never logged or stored
    key_source: str | None = None  # the environment variable the key came from
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    system: str | None = None  # a system prompt, sent before every question
    stop: tuple[str, ...] = ()  # stop sequences
    extra: dict[str, Any] = field(default_factory=dict)  # more request fields
    timeout_s: float = 120.0  # per request: oldest of ours pending, none of ours answered since
    retries: int = 6
    backoff_s: float = 1.0  # base of the exponential backoff
    backoff_cap_s: float = 60.0
    slots: int = 8  # requests in flight at once: bounds how long one may wait in the queue
    # Whose answers these are in the cache: None for the endpoint's host, port and path; a
    # name given with --endpoint-id lets endpoints serving the same weights share answers.
    endpoint_id: str | None = None
    json_answers: bool = False  # ask for {"move": ...} by response_format (--response-format)
    price: Price | None = None  # --price: cost per million tokens where the server reports none
    max_cost: float | None = None  # --max-cost: money this invocation may spend
    completions: bool = False  # the run asks /completions (pgn): so does the preflight

    @property
    def endpoint(self) -> str:
        """The endpoint as the answer cache and every result name it."""
        if self.endpoint_id:
            return f"id:{self.endpoint_id}"
        parts = urlparse(self.base_url)
        return f"{parts.netloc}{parts.path.rstrip('/')}"


@dataclass(frozen=True)
class Reply:
    """A model's answer and what it cost."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    latency_s: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None  # "stop", "length" (cut by max_tokens), ...
    # The tool calls of a reply under the tools protocol: {"id", "name", "arguments"} each,
    # arguments as the raw JSON text the model wrote (it may be malformed).
    tool_calls: list[dict[str, str]] | None = None


class _Problem(Exception):
    """One failed attempt: why, whether retrying can help, and the server's response."""

    def __init__(self, reason: str, retry: bool, response: requests.Response | None = None,
                 busy: bool = False, settled: bool = True) -> None:
        super().__init__(reason)
        self.retry = retry
        self.response = response  # a retryable status's response (for Retry-After)
        self.busy = busy  # the server answered that it is busy or failing (429, 5xx)
        # False: the attempt may still be in flight, so no other may start (nor is it fatal)
        self.settled = settled


def retry_policy(config: ChatConfig, retries: int | None = None) -> Retry:
    """urllib3's Retry for our requests: statuses, attempts and backoff from the config."""
    return Retry(total=config.retries if retries is None else retries, redirect=0,
                 allowed_methods=None,  # POST too: asking a chat completion again is safe
                 status_forcelist=RETRY_STATUS, backoff_factor=config.backoff_s,
                 backoff_max=config.backoff_cap_s, backoff_jitter=config.backoff_s,
                 respect_retry_after_header=True, raise_on_status=False)


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


class ChatClient:
    """Thread-safe; each request runs on its own daemon thread, so Ctrl-C never waits on it."""

    def __init__(self, config: ChatConfig) -> None:
        self.config = config
        self.url = config.base_url.rstrip("/") + "/chat/completions"
        self.completions_url = config.base_url.rstrip("/") + "/completions"
        self._plain = False  # the server refused response_format: answers are parsed as text
        self.budget = Budget(config.max_cost, config.price)
        self._sessions: queue.SimpleQueue[requests.Session] = queue.SimpleQueue()
        self._queue = _Queue()

    def _payload(self, prompt: str, max_tokens: int | None = None) -> dict[str, Any]:
        return self._chat_body([{"role": "user", "content": prompt}], max_tokens,
                               answer=max_tokens is None)

    def _chat_body(self, messages: list[dict[str, Any]], max_tokens: int | None = None,
                   tools: list[dict[str, Any]] | None = None,
                   answer: bool = True) -> dict[str, Any]:
        """A chat-completions body: the system prompt (if any), then `messages`; `answer`:
        it asks for a move (so --response-format applies), not the preflight's word."""
        if self.config.system:
            messages = [{"role": "system", "content": self.config.system}, *messages]
        body = self._common(max_tokens)
        body["messages"] = messages
        if tools:
            body["tools"] = tools
        elif self.config.json_answers and not self._plain and answer:
            body["response_format"] = RESPONSE_FORMAT
        return body

    def _common(self, max_tokens: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {**self.config.extra, "model": self.config.model,
                                "temperature": self.config.temperature,
                                "max_tokens": max_tokens or self.config.max_tokens}
        if self.config.stop:
            body["stop"] = list(self.config.stop)
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
                box["response"] = session.post(url, json=body, headers=self._headers(),
                                               timeout=(min(self.config.timeout_s, 30.0),
                                                        None), allow_redirects=False)
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
                        raise _Problem(f"no reply within {self.config.timeout_s:g} s, and the "
                                       "request could not be aborted", False, settled=False)
                    raise _Problem(f"no reply within {self.config.timeout_s:g} s", True)
        finally:
            if not done.is_set():  # interrupted (Ctrl-C): leave no request behind
                _abort(box)
            self._queue.leave(ticket, done.is_set() and "response" in box)
        if "error" in box:
            raise _Problem(_connection_problem(box["error"], url), True)
        response: requests.Response = box["response"]
        return response

    def url_of(self, body: dict[str, Any]) -> str:
        """Where a body goes: a prompt to the text completions, messages to the chat ones."""
        return self.completions_url if "prompt" in body else self.url

    def _attempt(self, body: dict[str, Any], start: float, attempt: int) -> Reply:
        url = self.url_of(body)
        response = self._post(body, url)
        status = response.status_code
        if status == 200:
            return self._reply(response, start, attempt, url)
        if status in RETRY_STATUS:
            raise _Problem(f"HTTP {status}", True, response, busy=True)
        if status == 400 and "response_format" in body:
            # No structured output here: ask again as text, and never again with the format.
            if not self._plain:
                log.warning("%s refused response_format (HTTP 400): answers are read as text "
                            "from here on", url)
            self._plain = True
            return self._attempt({k: v for k, v in body.items() if k != "response_format"},
                                 start, attempt)
        raise _Problem(self._refusal(response, url), False)

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

    def _reply(self, response: requests.Response, start: float, attempts: int,
               url: str) -> Reply:
        try:
            data = response.json()
        except ValueError as exc:
            kind = response.headers.get("Content-Type", "no content type").split(";")[0]
            raise _Problem(f"{url} answered {kind}, not JSON: is --base-url the API's "
                           "base (e.g. http://host:port/v1)?", True) from exc
        completion = url == self.completions_url
        try:
            choice = data["choices"][0]
            text = (choice["text"] if completion else choice["message"].get("content")) or ""
            if not isinstance(text, str):
                raise TypeError("content is not text")
            calls = None if completion else _tool_calls(choice["message"])
            usage = data.get("usage") or {}
            details = usage.get("completion_tokens_details") or {}
            return Reply(
                text=text, prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                reasoning_tokens=details.get("reasoning_tokens"), cost=usage.get("cost"),
                latency_s=round(time.perf_counter() - start, 3), attempts=attempts,
                finish_reason=choice.get("finish_reason"), tool_calls=calls)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            what = "choices[0].text: not an OpenAI-compatible completions API" if completion \
                else "choices[0].message.content: not an OpenAI-compatible chat API"
            raise _Problem(f"{url} answered JSON without {what}", True) from exc

    def _wait(self, policy: Retry, problem: _Problem) -> float:
        """Seconds before the next attempt: the server's Retry-After, else the backoff."""
        hint = None
        if problem.response is not None and problem.response.raw is not None:
            with contextlib.suppress(InvalidHeader):  # a malformed header is no hint
                hint = policy.get_retry_after(problem.response.raw)
        if hint is None:
            return policy.get_backoff_time()
        if hint > RETRY_AFTER_CAP_S:
            raise InfraError(f"{problem}: the server asks to wait {hint:.0f} s, more than the "
                             f"{RETRY_AFTER_CAP_S} s we wait") from None
        return hint

    def ask(self, prompt: str, label: str = "request") -> Reply:
        """The model's reply; InfraError when every attempt failed, FatalInfraError when
        retrying cannot help (a refused key, an unknown model)."""
        return self._ask(self._payload(prompt), label, self.config.retries)

    def converse(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                 label: str = "request") -> Reply:
        """The model's next turn in a conversation, optionally with tools it may call."""
        return self._ask(self._chat_body(messages, tools=tools), label, self.config.retries)

    def complete(self, prompt: str, max_tokens: int, label: str = "request") -> Reply:
        """A text completion of `prompt` (the /completions endpoint, for base models)."""
        body = self._common(max_tokens)
        body["prompt"] = prompt
        return self._ask(body, label, self.config.retries)

    def _ask(self, body: dict[str, Any], label: str, retries: int,
             only_busy: bool = False) -> Reply:
        start = time.perf_counter()
        policy = retry_policy(self.config, retries)
        for attempt in range(1, retries + 2):
            if self.budget.exhausted:
                raise BudgetSpent(self.budget.note())
            try:
                reply = self._attempt(body, start, attempt)
                if not self.budget.charge(reply.cost, reply.prompt_tokens,
                                          reply.completion_tokens):
                    raise FatalInfraError("--max-cost needs each answer's cost: the server "
                                          "reported no cost and no tokens to price (or give "
                                          "--price IN,OUT)")
                return reply
            except _Problem as problem:
                if not problem.settled:
                    raise InfraError(str(problem)) from None
                if not problem.retry or (only_busy and not problem.busy):
                    raise FatalInfraError(str(problem)) from None
                try:
                    policy = policy.increment("POST", self.url, error=problem)
                except MaxRetryError:
                    raise InfraError(f"{problem} (after {attempt} attempts)") from None
                wait = self._wait(policy, problem)
                log.warning("%s: %s; retry %d of %d in %.1f s", label, problem, attempt,
                            retries, wait)
                time.sleep(wait)
        raise AssertionError("unreachable: the policy allows retries + 1 attempts")

    def preflight(self) -> Reply:
        """One small request before a run; FatalInfraError with one clear line when the
        endpoint cannot answer (refused connection, bad URL, key, model, not JSON)."""
        if self.config.completions:
            body = self._common(16)
            body["prompt"] = PREFLIGHT_PROMPT
        else:
            body = self._payload(PREFLIGHT_PROMPT, max_tokens=16)
        try:
            return self._ask(body, "preflight", min(self.config.retries, 2), only_busy=True)
        except InfraError as exc:
            raise FatalInfraError(f"preflight request to {self.url_of(body)} failed: {exc}") \
                from None


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
