"""The model layer's interface: a request goes in, a reply comes out, and the money is counted.

Every mode asks a model through one `Model`: `generate(request)` returns a `Reply` with the
text or tool calls, the finish reason, the usage (prompt, completion and reasoning tokens),
the cost, the latency, and how many attempts the provider may have billed. Transport,
retries, 429 with Retry-After, timeouts, the JSON fallback and the charge against --max-cost
live in the backend (`chat.OpenAIModel`, over HTTP) and nowhere else; the protocols
(core.protocols) build requests and read replies, the caches store them.

The money rules every backend keeps (docs/protocols.md states them for users):
- every reply the provider completed is charged, readable or not; a malformed one is asked
  again at most once;
- the caller stores a reply the moment it arrives, on the thread that received it;
- --max-cost reserves before sending (cost.Budget): no request starts once what is spent and
  reserved would pass the budget;
- an attempt given up on (a timeout) counts as possibly billed (`aborted_attempts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from lib.benchmark.core.cost import Budget
from lib.errors import ChessEvalError


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
