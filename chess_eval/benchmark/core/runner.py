"""Ask a player every question: concurrently, through a response cache, with JSONL traces.

Answers are cached in SQLite under (player with its options, prompt version, question id,
prompt text), each committed by the thread that received it the moment it arrives, so no
reply that was bought is lost to a budget stop, an error or Ctrl-C, and a rerun never asks
twice. Infrastructure failures are not cached: the next run asks again. A question the
budget (--max-cost) left no room for is not asked (a rerun asks it). Requests run on daemon
threads, so Ctrl-C ends a run at once even when the server hangs; a run of consecutive
infrastructure failures opens the circuit breaker and stops the run.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any

from chess_eval.benchmark.core.run import Breaker
from chess_eval.benchmark.model.inflight import GRACE_S, InFlight, Stopping
from chess_eval.benchmark.model.interface import BudgetSpent, FatalInfraError, InfraError, Reply
from chess_eval.benchmark.model.metered import bought, store_reply
from chess_eval.benchmark.players.player import EnginePlayer, Player, budget_of, cached_answer
from chess_eval.benchmark.question.questions import Question
from chess_eval.cluster import ClusterSettings, EngineCluster
from chess_eval.engine import Engine
from chess_eval.kvstore import JsonStore

log = logging.getLogger(__name__)

BREAKER = 5  # this many questions failing in a row for infrastructure reasons stop a run


@dataclass(frozen=True)
class Outcome:
    """What came back for one question."""

    question: Question
    prompt: str
    reply: Reply | None  # None after an infrastructure failure, or not asked
    infra_error: str | None
    cached: bool
    unasked: bool = False  # not asked: --max-cost left no room for it (a rerun asks it)


def cache_key(player: Player, template: str, question: Question, prompt: str) -> str:
    """The response-cache key of one question for one player and prompt."""
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:16]
    return f"{player.id}|{template}|{question.id}|{digest}"


def _stored(hit: dict[str, Any], player: Player) -> Reply:
    """A cached reply; a baseline's took no request, whichever version stored it."""
    reply = Reply.stored(hit)
    return reply if budget_of(player) is not None else replace(reply, attempts=0)


def stored_answers(player: Player, template: str, render: Callable[[Question], str],
                   questions: list[Question], cache: JsonStore) -> int:
    """How many of `questions` have an answer in `cache` already, which ask_all reuses."""
    return sum(cached_answer(cache, cache_key(player, template, q, render(q)), player)
               is not None for q in questions)


def ask_all(player: Player, template: str, render: Callable[[Question], str],
            questions: list[Question], cache: JsonStore, concurrency: int,
            breaker: int = BREAKER, cluster: ClusterSettings | None = None,
            gate: InFlight | None = None, preflight: bool = True) -> Iterator[Outcome]:
    """Outcomes of all questions, cached ones first, the rest as they finish. The player's
    preflight runs once before the first request (never when everything is cached). An
    engine player's answers are computed on the Dask `cluster` when one is given; `gate`:
    the run's requests in flight (these are counted in it, and stop with it); `preflight`:
    False where the model is made and checked already (an Inspect eval's)."""
    todo = []
    for question in questions:
        prompt = render(question)
        hit = cached_answer(cache, cache_key(player, template, question, prompt), player)
        if hit is not None:
            yield Outcome(question, prompt, _stored(hit, player), None, cached=True)
        else:
            todo.append((question, prompt))
    if not todo:
        return
    budget = budget_of(player)
    if budget is not None and budget.exhausted:
        # The invocation's budget is spent (by this model at another temperature, say):
        # nothing more is asked, not even the preflight; a rerun asks these.
        for question, prompt in todo:
            yield Outcome(question, prompt, None, None, cached=False, unasked=True)
        return
    if preflight:
        player.preflight()
    if cluster is not None and isinstance(player, EnginePlayer):
        yield from _on_cluster(player, template, todo, cache, cluster)
        return
    workers = min(concurrency, player.max_concurrency or concurrency, len(todo))
    yield from _run(player, template, todo, cache, workers, breaker,
                    InFlight() if gate is None else gate.child())


def _answer(engine: Engine, job: tuple[EnginePlayer, Question, str]) -> Reply:
    """The task a Dask worker runs: an engine player's reply on the worker's engine."""
    player, question, prompt = job
    return player.answer_with(engine, question, prompt)


def _on_cluster(player: EnginePlayer, template: str, todo: list[tuple[Question, str]],
                cache: JsonStore, cluster: ClusterSettings) -> Iterator[Outcome]:
    """An engine player's answers from the cluster's workers; the client caches each."""
    with EngineCluster(player.engine_settings, cluster) as engines:
        jobs = [(player, question, prompt) for question, prompt in todo]
        for (_, question, prompt), reply in engines.as_completed(_answer, jobs):
            store_reply(cache, cache_key(player, template, question, prompt), reply)
            yield Outcome(question, prompt, reply, None, cached=False)


def _run(player: Player, template: str, todo: list[tuple[Question, str]], cache: JsonStore,
         workers: int, breaker: int, flying: InFlight) -> Iterator[Outcome]:
    jobs: queue.SimpleQueue[tuple[Question, str]] = queue.SimpleQueue()
    for job in todo:
        jobs.put(job)
    results: queue.SimpleQueue[tuple[tuple[Question, str], Reply | None, Any]] = \
        queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                job = jobs.get_nowait()
            except queue.Empty:
                return
            try:
                with flying.request():
                    _one(job)
            except Stopping:  # the run stopped while this job waited: it is not asked
                results.put((job, None, None))

    def _one(job: tuple[Question, str]) -> None:
        """Ask one question and hand on what came back (stored first when it is a reply)."""
        try:
            # Stored the moment it arrives, on this thread: whatever stops the run, it was
            # bought (the wrapper keeps it before any stop decision).
            reply = bought(cache, cache_key(player, template, *job),
                           lambda: player.answer(*job))
        except BudgetSpent:
            results.put((job, None, None))  # not asked; the others drain as quickly
            return
        except FatalInfraError as exc:
            stop.set()
            results.put((job, None, exc))  # raised by the main thread
            return
        except InfraError as exc:
            results.put((job, None, str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - handed to the main thread, raised there
            stop.set()
            results.put((job, None, exc))
            return
        results.put((job, reply, None))

    for _ in range(workers):
        # Each worker runs in a copy of the caller's context: a model asked inside an Inspect
        # sample records the request in that sample's transcript.
        threading.Thread(target=contextvars.copy_context().run, args=(work,), daemon=True,
                         name="ask").start()
    opened = Breaker(breaker, "questions")
    try:
        for _ in range(len(todo)):
            (question, prompt), reply, error = results.get()
            if isinstance(error, BaseException):
                raise error
            if reply is None and error is None:
                yield Outcome(question, prompt, None, None, cached=False, unasked=True)
                continue
            yield Outcome(question, prompt, reply, error, cached=False)
            if reply is not None:
                opened.passed()
            else:
                opened.fail(error)
    finally:
        stop.set()
        # However the run ends (Ctrl-C included), requests in flight get a moment to
        # complete and be stored: a reply the provider completes is bought.
        flying.drain(GRACE_S)


def trace_record(outcome: Outcome, item: dict[str, Any]) -> str:
    """One JSONL trace line: prompt, raw answer, parsed move, category, tokens, latency, cost."""
    record: dict[str, Any] = {"id": outcome.question.id, "prompt": outcome.prompt,
                              "cached": outcome.cached, "infra_error": outcome.infra_error,
                              "parsed": item["text"], "found_by": item["found_by"],
                              "move": item["move"], "category": item["category"],
                              "detail": item["detail"]}
    if outcome.reply is not None:
        record.update(asdict(outcome.reply))
    return json.dumps(record)
