"""Ask a player every question: concurrently, through a response cache, with JSONL traces.

Answers are cached in SQLite under (player with its options, prompt version, question id,
prompt text), committed one by one, so a rerun or an interrupted run never asks twice.
Infrastructure failures are not cached: the next run asks again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from typing import Any

from tqdm import tqdm

from lib.benchmark.llm import FatalInfraError, InfraError, Reply
from lib.benchmark.players import Player
from lib.benchmark.prompts import Question
from lib.kvstore import JsonStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """What came back for one question."""

    question: Question
    prompt: str
    reply: Reply | None  # None after an infrastructure failure
    infra_error: str | None
    cached: bool


def cache_key(player: Player, template: str, question: Question, prompt: str) -> str:
    """The response-cache key of one question for one player and prompt."""
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:16]
    return f"{player.id}|{template}|{question.id}|{digest}"


def _ask(player: Player, question: Question, prompt: str) -> tuple[Reply | None, str | None]:
    try:
        return player.answer(question, prompt), None
    except FatalInfraError:
        raise
    except InfraError as exc:
        return None, str(exc)


def ask_all(player: Player, template: str, render: Callable[[Question], str],
            questions: list[Question], cache: JsonStore,
            concurrency: int) -> Iterator[Outcome]:
    """Outcomes of all questions, cached ones first, the rest as they finish."""
    todo = []
    for question in questions:
        prompt = render(question)
        hit = cache.get(cache_key(player, template, question, prompt))
        if hit is not None:
            yield Outcome(question, prompt, Reply(**hit), None, cached=True)
        else:
            todo.append((question, prompt))
    if not todo:
        return
    workers = min(concurrency, player.max_concurrency or concurrency)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ask")
    try:
        yield from _run(pool, player, template, todo, cache, workers)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _run(pool: ThreadPoolExecutor, player: Player, template: str,
         todo: list[tuple[Question, str]], cache: JsonStore,
         workers: int) -> Iterator[Outcome]:
    # Keep only a bounded number of requests queued, so Ctrl-C stops quickly.
    pending: dict[Future[tuple[Reply | None, str | None]], tuple[Question, str]] = {}
    queue = iter(todo)
    with tqdm(total=len(todo), unit="q", desc=f"ask {player.id[:30]}", disable=None) as bar:
        while True:
            while len(pending) < 2 * workers and (job := next(queue, None)) is not None:
                pending[pool.submit(_ask, player, *job)] = job
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                question, prompt = pending.pop(future)
                reply, error = future.result()
                if reply is not None:
                    cache.put(cache_key(player, template, question, prompt), asdict(reply))
                    cache.commit()
                bar.update()
                yield Outcome(question, prompt, reply, error, cached=False)


def trace_record(outcome: Outcome, item: dict[str, Any]) -> str:
    """One JSONL trace line: prompt, raw answer, parsed move, category, tokens, latency, cost."""
    record: dict[str, Any] = {"id": outcome.question.id, "prompt": outcome.prompt,
                              "cached": outcome.cached, "infra_error": outcome.infra_error,
                              "parsed": item["text"], "move": item["move"],
                              "category": item["category"], "detail": item["detail"]}
    if outcome.reply is not None:
        record.update(asdict(outcome.reply))
    return json.dumps(record)
