"""What a run cost: tokens per answer, their sums, money, and a budget that stops a run.

Money comes from the provider where it reports it (OpenRouter's `usage.cost`), else from
--price IN,OUT in currency units per million prompt and completion tokens (reasoning tokens
are part of the completion tokens, as OpenAI-compatible APIs count them). Sums include
cached answers: a result states what its answers cost, whenever they were bought. The budget
(--max-cost) counts only what this invocation buys, so the same command resumes a run that
stopped on it and may spend as much again.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Price:
    """--price: currency units per million tokens."""

    prompt: float  # per million prompt (input) tokens
    completion: float  # per million completion (output) tokens, reasoning included

    def of(self, prompt_tokens: int | None, completion_tokens: int | None) -> float:
        """The price of one request's tokens."""
        return ((prompt_tokens or 0) * self.prompt
                + (completion_tokens or 0) * self.completion) / 1e6


def price_arg(text: str) -> Price:
    """--price IN,OUT: two non-negative numbers."""
    try:
        parts = [float(p) for p in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) != 2 or min(parts) < 0:
        raise argparse.ArgumentTypeError(
            f"expected IN,OUT (per million prompt and completion tokens), got {text!r}")
    return Price(*parts)


def cost_of(reported: float | None, prompt_tokens: int | None, completion_tokens: int | None,
            price: Price | None) -> tuple[float | None, str | None]:
    """One answer's cost and where it came from: the provider's, else --price's, else none."""
    if reported is not None:
        return float(reported), "provider"
    if price is not None and (prompt_tokens is not None or completion_tokens is not None):
        return price.of(prompt_tokens, completion_tokens), "price"
    return None, None


NONE_BOUGHT = "none bought"  # the cost source of answers that took no request


def summary(answers: Iterable[Mapping[str, Any]], price: Price | None, moves: int | None = None,
            games: int | None = None) -> dict[str, Any]:
    """Tokens, requests and cost summed over answers (trace rows or replies), and per move and
    per game when those are counted. `cost` is None when no answer's cost is known;
    `cost_source` says whose figures it is (provider, price, or both)."""
    rows = list(answers)
    sums = {k: sum(int(a.get(k) or 0) for a in rows)
            for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
    # A trace row counts the requests it took: 0 for a tools answer after the first of one
    # reply (that reply's request and cost are on the first); a reply is one request.
    # A reply is one request, unless computed here (a baseline's, attempts 0: none).
    took = [(0 if a.get("attempts") == 0 else 1) if a.get("requests") is None
            else int(a["requests"]) for a in rows]
    requests = sum(took)
    # A trace row counts its tool calls; a reply lists them.
    calls = sum(len(c) if isinstance(c := a.get("tool_calls"), list) else int(c or 0)
                for a in rows)
    costs = [cost_of(a.get("cost"), a.get("prompt_tokens"), a.get("completion_tokens"), price)
             for a in rows]
    known = [c for c, _ in costs if c is not None]
    sources = sorted({s for _, s in costs if s is not None})
    cost = sum(known) if known else None
    if rows and requests == 0:  # nothing bought: exactly free (a baseline's answers)
        cost, sources = 0.0, [NONE_BOUGHT]
    out: dict[str, Any] = {
        "answers": len(rows), "requests": requests, "tool_calls": calls, **sums,
        "tokens": sums["prompt_tokens"] + sums["completion_tokens"],
        "cost": None if cost is None else round(cost, 6),
        "cost_source": "+".join(sources) or None,
        # Answers that took a request and whose cost is unknown.
        "cost_unknown_answers": sum(1 for (c, _), n in zip(costs, took, strict=True)
                                    if c is None and n)}
    # No latency here: it measures when a reply was bought, so a resumed run's result would
    # differ from an undisturbed one's. Each answer's is in the traces, each invocation's
    # total in the run's ledger.
    for unit, n in (("answer", len(rows)), ("move", moves), ("game", games)):
        if n:
            out[f"per_{unit}"] = {"requests": round(requests / n, 2),
                                  "tool_calls": round(calls / n, 2),
                                  "tokens": round(out["tokens"] / n, 1),
                                  "cost": None if cost is None else round(cost / n, 6)}
    return out


@dataclass
class Books:
    """What this invocation bought, as a provider's own books would show it."""

    sent: int = 0  # HTTP requests sent
    completed: int = 0  # replies the provider completed (HTTP 200): each may be billed
    unreadable: int = 0  # of those, replies that could not be read (charged all the same)
    aborted: int = 0  # attempts given up on before a reply: possibly billed, not charged
    cost: float = 0.0  # what was charged for the completed replies
    unknown_cost: int = 0  # completed replies whose cost could not be known
    latency_s: float = 0.0  # the readable replies' latencies, summed

    def as_dict(self) -> dict[str, Any]:
        """The books as the run's ledger records them (one line per invocation)."""
        # A request sent that has not completed (given up on, or still in flight when the
        # invocation ended: Ctrl-C) may be billed all the same.
        return {"requests_sent": self.sent, "replies_completed": self.completed,
                "unreadable_replies": self.unreadable,
                "aborted_attempts": max(self.aborted, self.sent - self.completed),
                "cost": round(self.cost, 6), "cost_unknown_replies": self.unknown_cost,
                "latency_s": round(self.latency_s, 1)}


def record_books(out: Path, name: str, books: Books) -> Path:
    """Append this invocation's books to the run's ledger, OUT/books/NAME.jsonl (one line an
    invocation, with its time): a result stays the same bytes however many invocations and
    interruptions made it, and the ledger says what each of them bought."""
    path = out / "books" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    line = {"at": datetime.now(UTC).isoformat(timespec="seconds"), **books.as_dict()}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return path


def books_text(books: Books) -> str:
    """This invocation's purchases in a line, as the terminal shows them."""
    b = books.as_dict()
    return (f"this invocation: {b['requests_sent']} requests sent, "
            f"{b['replies_completed']} replies completed ({b['unreadable_replies']} "
            f"unreadable), {b['aborted_attempts']} given up on (possibly billed), "
            f"{b['cost']:.4f} charged")


EPSILON = 1e-9  # sums of prices in floating point: a budget met exactly is not passed


class Budget:
    """--max-cost and the books of this invocation's purchases; thread-safe.

    A request reserves its price before it is sent and settles when it ends, so no request
    starts once spent plus reserved would pass the limit. The reservation is the larger of
    the request's price at --price (its prompt, estimated from its size, and its max_tokens)
    and the dearest reply so far: a provider that bills above --price (a wrong price, tokens
    past max_tokens) raises the reservation after its first reply. Spend can pass the limit
    only by what replies in flight cost beyond their reservations: nothing when --price is
    given and the server bills by it within max_tokens; else at most the requests in flight
    times (a reply's cost - the dearest before it).
    """

    def __init__(self, limit: float | None, price: Price | None) -> None:
        self.limit = limit  # None: no budget
        self.price = price
        self.spent = 0.0  # charged this invocation
        self.reserved = 0.0  # held by requests in flight
        self.dearest = 0.0  # the dearest reply so far: a request's price when none is given
        self.books = Books()
        self.refused = False  # a request found no room: the run stops on budget
        # A readable reply came with no cost and no tokens to price under --max-cost: it is
        # charged at its reservation and kept (cached by its caller); no request follows it.
        self._unpriced = False
        self._lock = threading.Lock()

    @property
    def unpriced(self) -> bool:
        """Whether a reply came with no cost to charge under --max-cost (no request follows)."""
        return self._unpriced

    @property
    def exhausted(self) -> bool:
        """Whether the budget stopped a request (or is spent): the run stops there."""
        with self._lock:
            return self.limit is not None and (self.refused
                                               or self.spent >= self.limit - EPSILON)

    def estimate(self, prompt_chars: int, max_tokens: int) -> float:
        """What a request may cost: the larger of its price at --price (its prompt at 3
        characters a token, which overcounts English and FEN, and max_tokens) and the
        dearest reply so far."""
        with self._lock:
            dearest = self.dearest
        if self.price is not None:
            return max(self.price.of(prompt_chars // 3 + 1, max_tokens), dearest)
        return dearest

    def reserve(self, amount: float) -> bool:
        """Hold `amount` for a request about to be sent; False when the budget cannot."""
        with self._lock:
            if self.limit is not None and \
                    self.spent + self.reserved + amount > self.limit + EPSILON:
                self.refused = True
                return False
            self.books.sent += 1
            self.reserved += amount
            return True

    def settle(self, amount: float, cost: float | None, completed: bool,
               readable: bool = True, latency_s: float = 0.0) -> None:
        """Release a reservation and charge what the request cost: a completed reply its
        cost (unknown: its reservation), an attempt given up on nothing (it is counted)."""
        with self._lock:
            self.reserved -= amount
            if not completed:
                self.books.aborted += 1
                return
            self.books.completed += 1
            self.books.unreadable += not readable
            self.books.latency_s += latency_s
            if cost is None:
                self.books.unknown_cost += 1
                # An answer with no usage: the provider does not report it (an unreadable
                # reply has none by nature, and is charged at its reservation).
                self._unpriced |= self.limit is not None and readable
                cost = amount
            self.spent += cost
            self.books.cost += cost
            self.dearest = max(self.dearest, cost)

    def release(self, amount: float, sent: bool = True) -> None:
        """A reservation whose request got no reply that could be billed (refused, or not
        sent: `sent` False for one that never reached the server, which the books then do
        not count)."""
        with self._lock:
            self.reserved -= amount
            if not sent:
                self.books.sent -= 1

    def cost_of(self, reported: float | None, prompt_tokens: int | None,
                completion_tokens: int | None) -> float | None:
        """A reply's cost: the provider's, else at --price, else unknown."""
        return cost_of(reported, prompt_tokens, completion_tokens, self.price)[0]

    def note(self) -> str:
        """What the budget stopped, for the result and the log."""
        return (f"stopped on budget: --max-cost {self.limit:g} spent or reserved "
                f"({self.spent:.4f} spent this run); the same command resumes it")


class PlayerBudget(Budget):
    """One player's books under a budget it shares with another (a match's one --max-cost):
    every request is reserved, settled and counted in both, so the shared limit holds for
    the two together while each player's ledger says what that player bought."""

    def __init__(self, shared: Budget, price: Price | None) -> None:
        super().__init__(None, price)  # the limit is the shared budget's; the price its own
        self.shared = shared

    @property
    def exhausted(self) -> bool:
        """Whether the shared budget is spent or refused a request."""
        return self.shared.exhausted

    @property
    def unpriced(self) -> bool:
        """Whether either player got a reply with no cost to charge."""
        return self.shared.unpriced

    def estimate(self, prompt_chars: int, max_tokens: int) -> float:
        """The request at this player's price, or the shared budget's dearest reply (which
        covers both players') where that is more."""
        return max(super().estimate(prompt_chars, max_tokens), self.shared.dearest)

    def reserve(self, amount: float) -> bool:
        """Hold `amount` in the shared budget, and count the request here."""
        if not self.shared.reserve(amount):
            self.refused = True
            return False
        return super().reserve(amount)

    def settle(self, amount: float, cost: float | None, completed: bool,
               readable: bool = True, latency_s: float = 0.0) -> None:
        """Settle in both books."""
        self.shared.settle(amount, cost, completed, readable, latency_s)
        super().settle(amount, cost, completed, readable, latency_s)

    def release(self, amount: float, sent: bool = True) -> None:
        """Release in both."""
        self.shared.release(amount, sent)
        super().release(amount, sent)

    def note(self) -> str:
        """The shared budget's note."""
        return self.shared.note()


def shown(u: dict[str, Any] | None) -> bool:
    """Whether a usage summary gets a cost line: requests were bought, or none was (a
    baseline's answers, exactly free)."""
    return bool(u and (u.get("requests") or u.get("cost_source") == NONE_BOUGHT))


def text(u: dict[str, Any]) -> str:
    """Tokens, requests and money in a line: in all, per answer, per move and per game."""
    if u.get("cost_source") == NONE_BOUGHT:
        money = "cost $0 (no requests bought)"
    elif u.get("cost") is not None:
        money = f"{u['cost']:.4f} ({u.get('cost_source')})"
    elif u.get("tokens"):
        money = "cost unknown (no usage.cost reported; give --price IN,OUT)"
    else:  # --price would price nothing: a served baseline, or a server that counts nothing
        money = "cost unknown (the server reported neither a cost nor any tokens)"
    parts = [f"{u.get('tokens', 0):,} tokens ({u.get('prompt_tokens', 0):,.0f} prompt, "
             f"{u.get('completion_tokens', 0):,.0f} completion, "
             f"{u.get('reasoning_tokens', 0):,} reasoning) in {u.get('requests', 0):,} "
             "requests", money]
    for unit in ("answer", "move", "game"):
        per = u.get(f"per_{unit}")
        if per:
            parts.append(f"per {unit} {per['tokens']:,.0f} tokens, "
                         + _count(per["requests"], "request")
                         + (", " + _count(per["tool_calls"], "tool call")
                            if u.get("tool_calls") else "")
                         + ("" if per["cost"] is None else f", {per['cost']:.5f}"))
    return "; ".join(parts)


def _count(n: float, noun: str) -> str:
    """'1 request', '2.5 requests'."""
    return f"{n:g} {noun}" + ("" if n == 1 else "s")
