"""A run's ledger: what one invocation bought, appended to OUT/books/NAME.jsonl once, on
whichever path the invocation ends (a result, a failure, Ctrl-C, a budget)."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from chess_eval.benchmark.model.cost import Budget, books_text, record_books


class Ledger:
    """The books of a model's purchases in this invocation, written by the run, once: by
    `write()` on the way to a result, or on leaving the `with` block by an error (when any
    request was sent). A baseline (no budget) has none."""

    def __init__(self, out: Path, name: str, budget: Budget | None, who: str = "") -> None:
        self.out = out  # the run's output folder (its books/ beside the results)
        self.name = name  # the ledger's name (the run's files' stem, or with its model's)
        self.budget = budget  # the model's budget and books (None: a baseline)
        self.who = who  # the model, where a run has two (its printed line says whose)
        self.path: Path | None = None  # the ledger, once written

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is not None and self.budget is not None and self.budget.books.sent:
            self.write()  # what an interrupted or failed invocation bought

    def write(self) -> Path | None:
        """Append this invocation's line (once); the ledger's path (None: a baseline)."""
        if self.budget is None:
            return None
        if self.path is None:
            self.path = record_books(self.out, self.name, self.budget.books)
        return self.path

    def report(self, paths: list[Path]) -> None:
        """Write the ledger (once), add it to the run's `paths` and print its line."""
        if (written := self.write()) is not None:
            paths.append(written)
            print(f"  {self.who + ': ' if self.who else ''}{self.text}")

    @property
    def text(self) -> str:
        """This invocation's purchases in a line ("" for a baseline)."""
        return "" if self.budget is None else books_text(self.budget.books)
