"""The model layer's interface: a request goes in, a reply comes out, and the money is counted.

Every mode asks a model through one `Model`: `generate(request)` returns a `Reply` with the
text or tool calls, the finish reason, the usage (prompt, completion and reasoning tokens),
the cost, the latency, and how many attempts the provider may have billed. A `Backend` asks
once: it turns a Request into one provider call and the answer into a Reply, or raises
`AttemptFailed` saying what happened (possibly billed, completed but unreadable, worth a
retry, after how long, fatal, too long for the context). The one wrapper over every backend
(metered.Metered) owns the rest: --max-cost's reservation, retries and back-off, the charge,
the ledger's books, and handing each reply to its cache before anything may stop the run.

The money rules (docs/protocols.md states them for users):
- every reply the provider completed is charged, readable or not; a malformed one is asked
  again at most once;
- a reply is stored the moment it arrives, on the thread that received it, before any stop
  (budget, unknown cost, a fatal error, a limit, Ctrl-C);
- --max-cost reserves before sending (cost.Budget): no request starts once what is spent and
  reserved would pass the budget;
- an attempt given up on (a timeout) counts as possibly billed (`aborted_attempts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlparse

from chess_eval.benchmark.model.cost import Budget, Price
from chess_eval.errors import ChessEvalError

DEFAULT_MAX_TOKENS = 1024
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1")
DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_endpoint(base_url: str) -> str:
    """The endpoint as answers are keyed: host (localhost, 127.0.0.1 and ::1 are one),
    port (the scheme's default left out) and path, without a trailing slash."""
    parts = urlparse(base_url)
    host = (parts.hostname or "").lower()
    if host in LOCAL_HOSTS:
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port in (None, DEFAULT_PORTS.get(parts.scheme)) else f"{host}:{port}"
    return f"{netloc}{parts.path.rstrip('/')}"


@dataclass(frozen=True)
class ModelConfig:
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
    # Whose answers these are in the cache: None for the endpoint's host, port and path; a
    # name given with --endpoint-id lets endpoints serving the same weights share answers.
    endpoint_id: str | None = None
    json_answers: bool = False  # ask for {"move": ...} by response_format (--response-format)
    price: Price | None = None  # --price: cost per million tokens where the server reports none
    max_cost: float | None = None  # --max-cost: money this invocation may spend
    completions: bool = False  # the run asks /completions (pgn): so does the preflight
    reasoning_effort: str | None = None  # --reasoning-effort, sent as the endpoint takes it
    # An Inspect eval's other generation settings (top_p, seed, ...): Inspect sends them; here
    # they are part of the identity only, so two evals that differ in one never share answers.
    generation: dict[str, Any] = field(default_factory=dict)

    @property
    def endpoint(self) -> str:
        """The endpoint as the answer cache and every result name it: canonical, so one
        server reached by two names is one endpoint."""
        if self.endpoint_id:
            return f"id:{self.endpoint_id}"
        return canonical_endpoint(self.base_url)

    @property
    def endpoint_as_written(self) -> str:
        """The endpoint as versions before the canonical one keyed answers (host and port as
        written): answers cached under it are still found."""
        if self.endpoint_id:
            return f"id:{self.endpoint_id}"
        parts = urlparse(self.base_url)
        return f"{parts.netloc}{parts.path.rstrip('/')}"


class InfraError(ChessEvalError):
    """The request failed for reasons that are not the model's (after every retry)."""


class FatalInfraError(InfraError):
    """A failure every further request would repeat (bad key, unknown model or URL, a
    parameter the server does not support)."""


# Why a run under --max-cost stops once a reply came without a cost: the budget cannot be kept.
UNPRICED = ("--max-cost needs each answer's cost: the server reported no cost and no tokens "
            "to price (give --price IN,OUT)")


class BudgetSpent(InfraError):
    """--max-cost is spent (or reserved by requests in flight): no request is sent."""


class ContextTooLong(InfraError):
    """The server says the request does not fit the model's context (HTTP 400): a
    conversation can be trimmed and asked again; nothing was billed."""


@dataclass(frozen=True)
class Request:
    """What one generation asks: chat messages or a text-completion prompt."""

    messages: tuple[dict[str, Any], ...] = ()  # chat: the conversation, oldest first
    prompt: str | None = None  # text completion (/completions): the text to continue
    tools: tuple[dict[str, Any], ...] = ()  # chat: tools the model may call
    max_tokens: int | None = None  # None: the model's configured --max-tokens
    answer: bool = True  # asks for a move (--response-format applies), not the preflight's


@dataclass(frozen=True)
class Reply:
    """A model's answer and what it cost (a cached reply is this, stored as a dict)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None  # reasoning tokens included, as APIs count them
    reasoning_tokens: int | None = None
    cost: float | None = None  # every billed attempt of this answer, unreadable ones included
    latency_s: float = 0.0
    attempts: int = 1  # requests sent for this answer
    finish_reason: str | None = None  # "stop", "length" (cut by max_tokens), ...
    # The tool calls of a reply under the tools protocol: {"id", "name", "arguments"} each,
    # arguments as the raw JSON text the model wrote (it may be malformed).
    tool_calls: list[dict[str, str]] | None = None
    reasoning: str | None = None  # the reasoning text, where the server returns it
    aborted_attempts: int = 0  # attempts given up on (timeouts): the provider may bill them
    unreadable: int = 0  # completed replies that could not be read (charged, asked again)

    @classmethod
    def local(cls, text: str) -> Reply:
        """An answer computed here (a baseline's): no request sent, so nothing bought."""
        return cls(text=text, attempts=0)

    @classmethod
    def stored(cls, data: dict[str, Any]) -> Reply:
        """A reply as the answer cache stored it, by this version or another (fields it does
        not know are left out, fields it lacks take their defaults)."""
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class Model(Protocol):
    """A model behind some API: the one interface every mode asks through."""

    @property
    def endpoint(self) -> str:
        """Whose answers these are: the canonical endpoint (or --endpoint-id)."""
        ...

    @property
    def budget(self) -> Budget:
        """What this invocation may spend and has bought (--max-cost and the books)."""
        ...

    def generate(self, request: Request, label: str = "request") -> Reply:
        """The model's reply; InfraError when every attempt failed, FatalInfraError when
        retrying cannot help, ContextTooLong when the request does not fit, BudgetSpent when
        --max-cost leaves no room for it."""
        ...

    def preflight(self) -> Reply:
        """One small request before a run; FatalInfraError with one clear line when the
        endpoint cannot answer."""
        ...


class AttemptFailed(InfraError):
    """One attempt of a backend that brought no readable reply: what happened, for the
    wrapper to charge, count and decide (retry, re-send, fail)."""

    def __init__(self, reason: str, *, retry: bool = False, busy: bool = False,
                 aborted: bool = False, fatal: bool | None = None, context: bool = False,
                 resend: bool = False, settled: bool = True, unsent: bool = False,
                 retry_after: float | None = None,
                 unreadable: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.retry = retry  # another attempt may succeed (429, 5xx, a dropped connection)
        self.busy = busy  # the server said it is busy or failing (429, 5xx)
        self.aborted = aborted  # given up on after it was sent: the provider may bill it
        # Whether every further request would fail so (None: whenever it cannot be retried)
        self.fatal = (not retry) if fatal is None else fatal
        self.context = context  # the request does not fit the model's context: not billed
        # The backend changed how it asks (a refused response_format or stream): ask again
        # at once, no retry spent.
        self.resend = resend
        self.settled = settled  # False: it may still be in flight, so no other may start
        # It never reached the server (the connection was refused, or never made): not sent,
        # and the books do not count it.
        self.unsent = unsent
        self.retry_after = retry_after  # seconds the server asked us to wait (Retry-After)
        # A completed reply (billed) that could not be read: the usage its body held.
        self.unreadable = unreadable


class Backend(Protocol):
    """A provider asked once: what a backend implements (one file each)."""

    @property
    def endpoint(self) -> str:
        """Whose answers these are: the canonical endpoint (or --endpoint-id)."""
        ...

    @property
    def retries(self) -> int:
        """Attempts the wrapper may add after a failed one (0 where the provider's own client
        retries, as Inspect's does)."""
        ...

    def size(self, request: Request) -> tuple[int, int]:
        """What the request sends, in characters (system prompt, messages or prompt, tools
        and settings), and its max_tokens: what --max-cost reserves for it."""
        ...

    def send(self, request: Request) -> Reply:
        """One attempt: the provider's reply (cost as reported, None when not), or
        AttemptFailed; ContextTooLong or FatalInfraError where no attempt can help."""
        ...

    def preflight_request(self) -> Request:
        """The small request that checks the endpoint before a run."""
        ...

    def where(self, request: Request) -> str:
        """Where a request goes, for an error line (a URL, a provider/model)."""
        ...


class LimitReached(Exception):
    """An outside limit (Inspect's --token-limit or --cost-limit) stopped a request after
    its reply completed: the wrapper charges and keeps `reply` (None: it could not be
    recovered, so it counts as possibly billed), then raises `error` unchanged."""

    def __init__(self, reply: Reply | None, error: BaseException) -> None:
        super().__init__(str(error))
        self.reply = reply
        self.error = error
