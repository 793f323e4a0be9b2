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
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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


def summary(answers: Iterable[Mapping[str, Any]], price: Price | None, moves: int | None = None,
            games: int | None = None) -> dict[str, Any]:
    """Tokens, requests and cost summed over answers (trace rows or replies), and per move and
    per game when those are counted. `cost` is None when no answer's cost is known;
    `cost_source` says whose figures it is (provider, price, or both)."""
    rows = list(answers)
    sums = {k: sum(int(a.get(k) or 0) for a in rows)
            for k in ("prompt_tokens", "completion_tokens", "reasoning_tokens")}
    requests = sum(int(a.get("requests") or 1) for a in rows)
    # A trace row counts its tool calls; a reply lists them.
    calls = sum(len(c) if isinstance(c := a.get("tool_calls"), list) else int(c or 0)
                for a in rows)
    costs = [cost_of(a.get("cost"), a.get("prompt_tokens"), a.get("completion_tokens"), price)
             for a in rows]
    known = [c for c, _ in costs if c is not None]
    sources = sorted({s for _, s in costs if s is not None})
    cost = sum(known) if known else None
    out: dict[str, Any] = {
        "answers": len(rows), "requests": requests, "tool_calls": calls, **sums,
        "tokens": sums["prompt_tokens"] + sums["completion_tokens"],
        "cost": None if cost is None else round(cost, 6),
        "cost_source": "+".join(sources) or None,
        "cost_unknown_answers": len(rows) - len(known),
        "latency_s": round(sum(float(a.get("latency_s") or 0) for a in rows), 1)}
    for unit, n in (("answer", len(rows)), ("move", moves), ("game", games)):
        if n:
            out[f"per_{unit}"] = {"requests": round(requests / n, 2),
                                  "tool_calls": round(calls / n, 2),
                                  "tokens": round(out["tokens"] / n, 1),
                                  "cost": None if cost is None else round(cost / n, 6)}
    return out


class Budget:
    """--max-cost: money this invocation may spend on fresh answers; thread-safe."""

    def __init__(self, limit: float | None, price: Price | None) -> None:
        self.limit = limit  # None: no budget
        self.price = price
        self.spent = 0.0
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        """Whether the budget is spent."""
        with self._lock:
            return self.limit is not None and self.spent >= self.limit

    def charge(self, reported: float | None, prompt_tokens: int | None,
               completion_tokens: int | None) -> bool:
        """Count a fresh reply's cost; False when it cannot be known (no cost, no tokens or no
        --price), which a budget cannot allow."""
        if self.limit is None:
            return True
        cost, _ = cost_of(reported, prompt_tokens, completion_tokens, self.price)
        if cost is None:
            return False
        with self._lock:
            self.spent += cost
        return True

    def note(self) -> str:
        """What the budget stopped, for the result and the log."""
        return (f"stopped on budget: --max-cost {self.limit:g} spent ({self.spent:.4f} this "
                "run); the same command resumes it")


def text(u: dict[str, Any]) -> str:
    """Tokens, requests and money in a line: in all, per answer, per move and per game."""
    money = "cost unknown (no usage.cost reported; give --price IN,OUT)" if u.get("cost") \
        is None else f"{u['cost']:.4f} ({u.get('cost_source')})"
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
