"""A run: one invocation of a mode (static, play, puzzles, world model, match), from the CLI or
from an Inspect eval, and all it owns while it lasts:

- its identity: what makes it this run (the player and every setting that changes a reply),
  whose digest prefixes the keys of what it stores;
- its stores, each claimed for it alone (chess_eval/claim.py: a second process on the same run is
  refused in one line naming the holder, before it asks anything), each made with its value;
- its gate for requests in flight (its own: nothing is shared between runs of a process);
- its stop: the gate closes (Ctrl-C, a failure, the end of an Inspect eval; a sample's limit
  closes a child gate of it), so no request is sent after it, and those in flight land;
- what it made for its length (its players, the engines they hold): `owns` closes them;
- its books: a line per model of what this invocation bought (ledger.py);
- its circuit breaker (`Breaker`): so many failures in a row stop it.

A run is left one way, its `with` block (an Inspect eval that outlives a call keeps it on an
ExitStack). However it ends (a result, exit 2, 3, Ctrl-C, a failure), leaving it does the
same, in order: the gate closes, the requests in flight land and are stored, what it holds
is let go in the reverse of the order it took it (its stores closed, its claims released and
their files removed, what it owns closed), the books are written, once; a run that failed
before it stored or bought anything leaves no store, claim or books.
Then `finish` ends a command the same way for every mode: the books' lines, what was written,
and the exit status (3, with why, when the result is incomplete).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from types import TracebackType
from typing import Protocol, TypeVar

from chess_eval.benchmark.model.cost import Budget
from chess_eval.benchmark.model.inflight import GRACE_S, InFlight
from chess_eval.benchmark.model.interface import InfraError
from chess_eval.benchmark.model.ledger import Ledger
from chess_eval.claim import claim
from chess_eval.exits import Exit
from chess_eval.kvstore import JsonStore

log = logging.getLogger(__name__)


class Closes(Protocol):
    """Something a run makes and lets go of when it ends (a player, a pair of them)."""

    def close(self) -> None:
        """Let go of what it holds (its engine, its HTTP client)."""


Owned = TypeVar("Owned", bound=Closes)


class Run:
    """One invocation's claims, stores, requests in flight, stop and books (a `with` block)."""

    def __init__(self, books: Path | None = None,
                 ledgers: Iterable[tuple[str, str, Budget | None]] = (),
                 grace: float = GRACE_S) -> None:
        self.gate = InFlight()  # this run's requests in flight, and its door
        self.grace = grace  # how long requests in flight get to land when the run stops
        # The books, one per model that buys: (the ledger's name, whose it is, the model's
        # budget), kept in `books` (OUT/books/NAME.jsonl); a baseline's budget is None.
        self.ledgers = [Ledger(books, name, budget, who) for name, who, budget in ledgers
                        if books is not None and budget is not None]
        self._held = ExitStack()  # the claims, stores and what it owns, released in reverse

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            # No request is sent after the run; those in flight (Ctrl-C, a failure) land
            # and are stored before the stores close (a clean end has none).
            self.gate.drain(self.grace)
        finally:
            try:
                self._held.close()
            finally:
                for ledger in self.ledgers:
                    ledger.__exit__(kind, exc, tb)

    def owns(self, thing: Owned) -> Owned:
        """`thing`, closed when the run ends, once its requests have landed (with the stores
        and claims, in the reverse of the order the run took them)."""
        self._held.callback(thing.close)
        return thing

    def claim(self, store: Path, identity: str, what: str) -> str:
        """Claim `store` for this run (`identity`: all that makes it this run; `what`: how a
        refusal names it) until the run ends; the key prefix of what it stores there."""
        self._held.enter_context(claim(store, identity, what))
        return hashlib.sha256(identity.encode()).hexdigest()[:12]

    def store(self, path: Path, table: str, kind: type[JsonStore] = JsonStore) -> JsonStore:
        """A table of a store this run holds open until it ends (claim the store first);
        `kind`: a JsonStore's subclass to open it as; its file is made with its first value."""
        opened = kind(path, table, lazy=True)
        self._held.callback(opened.close)
        return opened

    @property
    def books(self) -> list[Ledger]:
        """The ledgers the run wrote when it ended (a baseline's run has none)."""
        return [ledger for ledger in self.ledgers if ledger.path is not None]


def within(run: Run | None) -> AbstractContextManager[Run]:
    """The caller's run (left to the caller to end), or, without one, a run of its own."""
    return nullcontext(run) if run is not None else Run()


class CircuitOpen(InfraError):
    """Too many units (questions, games, puzzles) in a row failed for infrastructure
    reasons: the run stops (a rerun resumes)."""


class Breaker:
    """A run's circuit breaker: `limit` units in a row that fail for infrastructure reasons
    stop it (an endpoint that is down fails every one: asking on buys nothing)."""

    def __init__(self, limit: int, units: str, failed: str = "failed") -> None:
        self.limit = limit  # failures in a row that open it
        self.units = units  # what fails, as the line says it ("questions", "games")
        self.failed = failed  # how they fail, as the line says it ("were aborted")
        self.in_a_row = 0  # failures since the last success

    def passed(self) -> None:
        """A unit that did not fail: the count starts again."""
        self.in_a_row = 0

    def fail(self, why: object) -> None:
        """A unit that failed (`why`: the last failure, for the line); CircuitOpen at the
        limit."""
        self.in_a_row += 1
        if self.in_a_row >= self.limit:
            raise CircuitOpen(f"stopped after {self.in_a_row} {self.units} in a row "
                              f"{self.failed} for infrastructure reasons (last: {why}); the "
                              f"{self.units} finished so far are kept")


class Finished(Protocol):
    """A mode's result, as the command's tail reads it."""

    def why_incomplete(self) -> str | None:
        """Why the result is incomplete, in a line that says how to complete it (None: it
        is complete)."""


def finish(run: Run, result: Finished, paths: list[Path]) -> Exit:
    """A command's tail, once its run is left: the books' lines, every file written
    (`paths`, then the books), and the exit status: INCOMPLETE, with why, when the result is
    stopped or incomplete, else OK."""
    for ledger in run.books:
        print(f"  {ledger.line}")
    written = [*paths, *(ledger.path for ledger in run.books if ledger.path is not None)]
    print("wrote " + ", ".join(str(p) for p in written))
    why = result.why_incomplete()
    if why is not None:
        log.error("%s", why)
        return Exit.INCOMPLETE
    return Exit.OK
