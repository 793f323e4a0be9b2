"""A run: one invocation of a mode (static, play, puzzles, world model, match), from the CLI or
from an Inspect eval, and all it owns while it lasts:

- its identity: what makes it this run (the player and every setting that changes a reply),
  whose digest prefixes the keys of what it stores;
- its stores, each claimed for it alone (chess_eval/claim.py: a second process on the same run is
  refused in one line naming the holder, before it asks anything), each made with its value;
- its gate for requests in flight (its own: nothing is shared between runs of a process);
- its stop: the gate closes (Ctrl-C, a failure, the end of an Inspect eval; a sample's limit
  closes a child gate of it), so no request is sent after it, and those in flight land;
- its books: a line per model of what this invocation bought (ledger.py).

However it ends (a result, exit 2, 3, Ctrl-C, a failure), leaving it does the same, in order:
the gate closes, the requests in flight land and are stored, the stores close, the claims are
released (files removed), the books are written, once; a run that failed before it stored or
bought anything leaves no store, claim or books.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType

from chess_eval.benchmark.model.cost import Budget
from chess_eval.benchmark.model.inflight import GRACE_S, InFlight
from chess_eval.benchmark.model.ledger import Ledger
from chess_eval.claim import claim
from chess_eval.kvstore import JsonStore


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
        self._held = ExitStack()  # the claims and stores, released in reverse

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc is not None:
                # Ctrl-C, or a failure: the replies in flight land and are stored before
                # the stores close, and none is sent after them.
                self.gate.drain(self.grace)
        finally:
            try:
                self._held.close()
            finally:
                for ledger in self.ledgers:
                    ledger.__exit__(kind, exc, tb)

    def close(self) -> None:
        """End the run outside a `with` block (an Inspect eval's end, however it ended): no
        request after it, those in flight land, the stores close, the claims are released
        and the books are written (once)."""
        self.gate.drain(self.grace)
        try:
            self._held.close()
        finally:
            self.write_books()

    def abandon(self) -> None:
        """End a run that never began (its claim refused, its setup failed): what it holds is
        let go, and no books are written (nothing was asked)."""
        self.gate.close()
        self._held.close()

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

    def report(self, paths: list[Path]) -> None:
        """Write the books (once), add them to the run's written `paths`, print their lines."""
        for ledger in self.ledgers:
            ledger.report(paths)

    def write_books(self) -> list[Path]:
        """Write the books (once); the ledgers written (a baseline's run has none)."""
        return [p for p in (ledger.write() for ledger in self.ledgers) if p is not None]
