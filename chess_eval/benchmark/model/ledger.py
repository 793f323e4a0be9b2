"""A run's ledger: what one invocation bought, appended to OUT/books/NAME.jsonl once, on
whichever path the invocation ends (a result, a failure, Ctrl-C, a budget)."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from chess_eval.benchmark.model.cost import Budget, books_text, record_books


class Ledger:
    """The books of a model's purchases in this invocation, written once, on leaving the
    `with` block however it is left: always on a clean end; after an error or Ctrl-C when any
    request was sent (an invocation that failed before asking bought nothing, and leaves no
    books). A baseline (no budget) has none."""

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
        if self.budget is None or self.path is not None:
            return
        if exc is None or self.budget.books.sent:
            self.path = record_books(self.out, self.name, self.budget.books)

    @property
    def line(self) -> str:
        """This invocation's purchases in a line, whose they are first where a run has two
        ("" for a baseline)."""
        if self.budget is None:
            return ""
        return f"{self.who + ': ' if self.who else ''}{books_text(self.budget.books)}"
