"""The one wrapper over every backend: it owns the money.

`Metered(backend, budget)` is the `Model` every mode asks. For each request it reserves
--max-cost's share before sending (the larger of its price at --price and the dearest
reply so far), lets the backend ask once, and then decides: a completed reply is charged
(readable or not: an unreadable one is asked again at most once), an attempt given up on is
counted as possibly billed, a busy server or a dropped connection is retried with urllib3's
back-off (or the server's Retry-After), a refusal every request would repeat is fatal. The
reply goes to its cache (`keeping`) on the thread that received it, before anything may stop
the run: the budget, a reply without a cost under --max-cost, a fatal error, an outside
limit, Ctrl-C. No backend reserves, charges, retries or caches (tests/benchmark/
test_backend.py adds one in a file of its own and runs the money tests through it).
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace

from urllib3.exceptions import MaxRetryError
from urllib3.util import Retry

from chess_eval.benchmark.model.cost import Budget
from chess_eval.benchmark.model.interface import (
    UNPRICED,
    AttemptFailed,
    Backend,
    BudgetSpent,
    ContextTooLong,
    FatalInfraError,
    InfraError,
    LimitReached,
    ModelConfig,
    Reply,
    Request,
)
from chess_eval.kvstore import Store

log = logging.getLogger(__name__)

MALFORMED_RETRIES = 1  # a completed reply that cannot be read is asked again at most once
RETRY_AFTER_CAP_S = 120  # a server asking us to wait longer than this fails the request
PREFLIGHT_RETRIES = 2  # the preflight's attempts after the first, at most
# A backend that changes how it asks (no response_format, no stream) asks again at once, at
# most this often a request: once for each thing a server may refuse.
MAX_RESENDS = 2

# Where the reply of the request this context sends is kept (set by `keeping`).
_KEEP: contextvars.ContextVar[Callable[[Reply], None] | None] = contextvars.ContextVar(
    "chess_eval_keep", default=None)


@dataclass
class Kept:
    """The reply a `keeping` block stored (None: none was bought through the wrapper)."""

    reply: Reply | None = None


@contextmanager
def keeping(store: Store, key: str) -> Iterator[Kept]:
    """Inside the block, the reply the wrapper buys is stored under `key` the moment it
    arrives (committed), before anything may stop the run."""
    kept = Kept()

    def keep(reply: Reply) -> None:
        if kept.reply is None:  # one request a block: its reply, never a later one
            store_reply(store, key, reply)
            kept.reply = reply
    token = _KEEP.set(keep)
    try:
        yield kept
    finally:
        _KEEP.reset(token)


def bought(store: Store, key: str, ask: Callable[[], Reply]) -> Reply:
    """The reply `ask()` gets, stored under `key`: by the wrapper as it arrives, or here for
    a player outside the model layer (an engine's reply costs nothing and is not in flight)."""
    with keeping(store, key) as kept:
        reply = ask()
    if kept.reply is None:
        store_reply(store, key, reply)
    return reply


def store_reply(store: Store, key: str, reply: Reply) -> None:
    """A reply in its cache, committed (a reply computed elsewhere: an engine's on Dask)."""
    store_replies(store, [(key, reply)])


def store_replies(store: Store, replies: Iterable[tuple[str, Reply]]) -> None:
    """Replies in their cache under their keys, committed once (a log's, read back)."""
    for key, reply in replies:
        store.put(key, asdict(reply))
    store.commit()


def _keep(reply: Reply) -> None:
    keep = _KEEP.get()
    if keep is not None:
        keep(reply)


def retry_policy(config: ModelConfig, retries: int) -> Retry:
    """urllib3's Retry for our requests: attempts and back-off from the config."""
    return Retry(total=retries, redirect=0, allowed_methods=None,
                 backoff_factor=config.backoff_s, backoff_max=config.backoff_cap_s,
                 backoff_jitter=config.backoff_s, raise_on_status=False)


@dataclass
class _Spent:
    """What the failed attempts of one answer bought: added to its reply."""

    cost: float = 0.0  # charged for unreadable replies
    unreadable: int = 0
    aborted: int = 0

    def onto(self, reply: Reply) -> Reply:
        """The reply with what its failed attempts cost (their count and their charge)."""
        if not (self.unreadable or self.aborted):
            return reply
        cost = reply.cost
        if self.unreadable:
            cost = self.cost + (reply.cost or 0.0)
        return replace(reply, cost=cost, unreadable=reply.unreadable + self.unreadable,
                       aborted_attempts=reply.aborted_attempts + self.aborted)


class Metered:
    """A backend with the money rules: the `Model` every mode asks. Thread-safe."""

    def __init__(self, backend: Backend, config: ModelConfig,
                 budget: Budget | None = None) -> None:
        self.backend = backend
        self.config = config
        # One invocation's budget, shared by its models (the world-model tests' temperatures).
        self._budget = budget or Budget(config.max_cost, config.price)

    @property
    def endpoint(self) -> str:
        """Whose answers these are (the backend's endpoint)."""
        return self.backend.endpoint

    @property
    def budget(self) -> Budget:
        """--max-cost and the books of this invocation."""
        return self._budget

    def generate(self, request: Request, label: str = "request") -> Reply:
        """The model's reply (see interface.Model.generate), kept as it arrives."""
        return self._ask(request, label, self.backend.retries, only_busy=False)

    def preflight(self) -> Reply:
        """One small request before a run; FatalInfraError with one clear line when the
        endpoint cannot answer."""
        request = self.backend.preflight_request()
        try:
            return self._ask(request, "preflight",
                             min(self.backend.retries, PREFLIGHT_RETRIES), only_busy=True)
        except BudgetSpent:
            raise  # not the endpoint's failure: the run stops on its budget
        except InfraError as exc:
            raise FatalInfraError(f"preflight request to {self.backend.where(request)} "
                                  f"failed: {exc}") from None

    def _ask(self, request: Request, label: str, retries: int, only_busy: bool) -> Reply:
        start = time.perf_counter()
        policy = retry_policy(self.config, retries)
        spent = _Spent()
        attempt = resent = 0
        while True:
            attempt += 1
            try:
                reply = self._attempt(request, spent, attempt, start)
            except AttemptFailed as failed:
                if not failed.settled:
                    raise InfraError(str(failed)) from None
                if failed.context:
                    raise ContextTooLong(str(failed)) from None
                if failed.resend and resent < MAX_RESENDS:  # asked otherwise now: no retry
                    attempt, resent = attempt - 1, resent + 1
                    continue
                if failed.fatal or (only_busy and not failed.busy):
                    raise FatalInfraError(str(failed)) from None
                if not failed.retry or spent.unreadable > MALFORMED_RETRIES:
                    raise InfraError(f"{failed}" + (" (twice: not asked again)"
                                                    if failed.retry else "")) from None
                try:
                    policy = policy.increment("POST", self.backend.endpoint, error=failed)
                except MaxRetryError:
                    raise InfraError(f"{failed} (after {attempt} attempts)") from None
                wait = self._wait(policy, failed)
                log.warning("%s: %s; retry %d of %d in %.1f s", label, failed, attempt,
                            retries, wait)
                time.sleep(wait)
                continue
            _keep(reply)  # stored before anything else may stop the run
            return reply

    def _attempt(self, request: Request, spent: _Spent, attempt: int, start: float) -> Reply:
        """One attempt through the backend, reserved before and charged after."""
        budget = self._budget
        if budget.unpriced:  # the reply that showed it was returned, and kept
            raise FatalInfraError(UNPRICED)
        amount = budget.estimate(*self.backend.size(request))
        if not budget.reserve(amount):
            raise BudgetSpent(budget.note())
        sent = time.perf_counter()
        try:
            reply = self.backend.send(request)
        except AttemptFailed as failed:
            if failed.unreadable is not None:
                usage = failed.unreadable
                cost = budget.cost_of(usage.get("cost"), usage.get("prompt_tokens"),
                                      usage.get("completion_tokens"))
                budget.settle(amount, cost, completed=True, readable=False)
                spent.unreadable += 1
                spent.cost += amount if cost is None else cost  # charged at its reservation
            elif failed.aborted:
                budget.settle(amount, None, completed=False)
                spent.aborted += 1
            else:
                budget.release(amount, sent=not failed.unsent)
            raise
        except LimitReached as limit:
            if limit.reply is None:  # billed, not recovered: counted as possibly billed
                budget.settle(amount, None, completed=False)
                raise limit.error from None
            _keep(self._charged(limit.reply, amount, sent, spent, attempt, start))
            raise limit.error from None
        except (ContextTooLong, FatalInfraError, InfraError):
            budget.release(amount)  # refused before anything was generated
            raise
        except BaseException:
            # Ctrl-C, or the process stopping, while the attempt was in flight: the backend
            # ends it (the provider may bill it; counted so).
            budget.settle(amount, None, completed=False)
            raise
        return self._charged(reply, amount, sent, spent, attempt, start)

    def _charged(self, reply: Reply, amount: float, sent: float, spent: _Spent, attempt: int,
                 start: float) -> Reply:
        """Charge a completed reply against its reservation; the reply as it is kept: its
        attempts, its latency since the first, and what the failed attempts cost."""
        cost = self._budget.cost_of(reply.cost, reply.prompt_tokens, reply.completion_tokens)
        self._budget.settle(amount, cost, completed=True,
                            latency_s=round(time.perf_counter() - sent, 3))
        if spent.unreadable:  # the failed attempts' charge joins this reply's own cost
            reply = replace(reply, cost=cost if cost is not None else reply.cost)
        return spent.onto(replace(reply, attempts=attempt,
                                  latency_s=round(time.perf_counter() - start, 3)))

    def _wait(self, policy: Retry, failed: AttemptFailed) -> float:
        """Seconds before the next attempt: the server's Retry-After, else the back-off."""
        if failed.retry_after is None:
            return float(policy.get_backoff_time())
        if failed.retry_after > RETRY_AFTER_CAP_S:
            raise InfraError(f"{failed}: the server asks to wait {failed.retry_after:.0f} s, "
                             f"more than the {RETRY_AFTER_CAP_S} s we wait") from None
        return failed.retry_after
