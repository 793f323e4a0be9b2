"""The registered tasks: each parses its arguments and builds the task in lib (thin, as
every entry point here). `inspect eval chess_eval/static --model ...` runs one by name."""

from __future__ import annotations

from inspect_ai import Task, task

from lib.benchmark.inspect_eval.static import static_task


@task
def static(limit: int | None = None, split: str = "all", protocol: str = "fen",
           prompt: str = "fen", seed: int = 0, questions: str | None = None) -> Task:
    """The static test: one move per position of questions.csv (or a seeded `limit` of them),
    scored by accuracy, legal rate, ACPL and best-move rate with 90% intervals."""
    return static_task(limit, split, protocol, prompt, seed, questions)
