"""What every chess_eval task shares: its options parsed by the CLI's own parser, and the
eval's model made the one `--model inspect:...` means inside a sample."""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import hashlib
import inspect
import json
import os
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from lib.benchmark.core import progress
from lib.benchmark.inspect_eval.options import refused_here
from lib.benchmark.model.http_backend import REASONING_EFFORTS
from lib.benchmark.model.inspect_backend import ACTIVE, PREFIX, Active
from lib.benchmark.model.inspect_internals import (
    active_generate_config,
    active_sample,
    prerequisite_error,
)
from lib.benchmark.model.interface import DEFAULT_MAX_TOKENS
from lib.errors import ChessEvalError, ConfigError

T = TypeVar("T")
J = TypeVar("J")
R = TypeVar("R")

progress.BARS = False  # Inspect's display owns the terminal: progress goes to its log


class RunFailed(ChessEvalError):
    """The mode's run ended before its end or incomplete (infrastructure failures): the
    sample fails, and so the eval, as the CLI's run exits non-zero."""


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are ConfigError (one line), not an exit."""

    def error(self, message: str) -> Any:
        raise ConfigError(f"{self.prog}: {message}")


def build(name: str, make: Callable[..., Any], *args: Any) -> Any:
    """The task `make(*args)` builds from its -T arguments; a bad argument is refused before
    any request, in one line (Inspect prints a PrerequisiteError's message alone)."""
    try:
        return make(*args)
    except ChessEvalError as exc:
        raise prerequisite_error(f"chess_eval/{name}: {exc}") from None


def refuse_unknown(name: str, fn: Callable[..., Any], unknown: dict[str, Any]) -> None:
    """A -T argument the task does not take is refused before any request, in one line that
    lists the ones it does (Inspect alone would warn and run the full default eval, billed).
    Inspect hands every task its `model` argument too: that one is not the user's."""
    extra = sorted(k for k in unknown if k != "model")
    if extra:
        known = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind is not inspect.Parameter.VAR_KEYWORD]
        raise prerequisite_error(f"chess_eval/{name}: unknown task argument(s) "
                                f"{', '.join(extra)}; it takes {', '.join(known)}")


def mode_args(add_parser: Callable[[Any], None], command: str,
              argv: list[str]) -> argparse.Namespace:
    """`benchmark.py COMMAND ARGV`'s options, parsed by that command's own parser (the same
    defaults and checks as the CLI)."""
    parser = _Parser(prog="chess_eval")
    add_parser(parser.add_subparsers(dest="command", parser_class=_Parser))
    return parser.parse_args([command, *argv])


def activate() -> list[str]:
    """Make the eval's model the one `--model inspect:<it>` means in this sample (and in the
    threads it starts); the CLI options that ask it as the eval does."""
    model = get_model()
    ACTIVE.set(Active(model, asyncio.get_running_loop()))
    return ["--model", PREFIX + str(model), *request_argv()]


# The eval's settings that change how a request travels, not what it answers: used as given,
# and no part of the identity.
TRANSPORT = frozenset({"max_retries", "timeout", "attempt_timeout", "stream_idle_timeout",
                       "max_connections", "adaptive_connections", "batch", "cache",
                       "extra_headers"})


def request_argv() -> list[str]:
    """Every setting of the eval's that changes answers, as the CLI's options, so the
    player's identity (and name) is the eval's: temperature and max_tokens (the task's unless
    the eval set others), the reasoning effort, and the rest as one JSON option."""
    config = active_generate_config()
    argv = [] if config.temperature is None else ["--temperature", repr(config.temperature)]
    argv += [] if config.max_tokens is None else ["--max-tokens", str(config.max_tokens)]
    rest = {k: v for k, v in config.model_dump(exclude_none=True, mode="json").items()
            if k not in TRANSPORT | {"temperature", "max_tokens"}}
    if rest.get("reasoning_effort") in REASONING_EFFORTS:
        argv += ["--reasoning-effort", rest.pop("reasoning_effort")]
    return argv + (["--generation", json.dumps(rest, sort_keys=True)] if rest else [])


async def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a worker thread, in this sample's context (blocking engine and model
    calls stay off the eval's loop)."""
    return await anyio.to_thread.run_sync(fn, *args)


@dataclass
class Unit(Generic[J, R]):
    """One unit of a run (a game, a puzzle line) as a sample takes it."""

    index: int  # its place in the run's order (0-based): the order the metrics read
    job: J  # what to play
    result: Future[R]  # where the sample hands the outcome back to the run


class Handoff(Generic[J, R]):
    """An adaptive run's units handed to Inspect's samples by pull: the run (on a driver
    thread) offers each unit it decides to play, and any sample that starts takes the next
    one, plays it in its own solver (its requests in its transcript) and hands the outcome
    back. No sample waits for another to exist: samples may start in any order, be a
    subset, or be retried, and a sample that starts once the run has ended takes none."""

    def __init__(self, samples: int) -> None:
        self.samples = samples
        self._lock = threading.Lock()
        self._offered: deque[Unit[J, R]] = deque()  # offered, not yet taken
        self._waiting: deque[Future[Unit[J, R] | None]] = deque()  # samples waiting for one
        self._given = 0
        self._closed = False
        self._error: BaseException | None = None

    def give(self, job: J) -> Future[R]:
        """Offer the run's next job to the next sample that asks; where its outcome will be."""
        with self._lock:
            unit: Unit[J, R] = Unit(self._given, job, Future())
            self._given += 1
            while self._waiting:  # a waiting sample cut off (a limit, Ctrl-C) takes none
                if _settle(self._waiting.popleft(), unit):
                    break
            else:
                self._offered.append(unit)
        return unit.result

    def take(self) -> Future[Unit[J, R] | None]:
        """The next unit for a sample that starts (None once the run has ended)."""
        slot: Future[Unit[J, R] | None] = Future()
        with self._lock:
            if self._offered:
                slot.set_result(self._offered.popleft())
            elif self._closed:
                if self._error is None:
                    slot.set_result(None)
                else:
                    slot.set_exception(self._error)
            else:
                self._waiting.append(slot)
        return slot

    def close(self, error: BaseException | None) -> None:
        """The run has ended (called by its thread): every sample waiting, and every one
        that starts later, gets no unit, or the run's error."""
        with self._lock:
            self._closed, self._error = True, error
            waiting = list(self._waiting)
            self._waiting.clear()
            self._offered.clear()
        for slot in waiting:
            _settle(slot, None, error)


def _settle(slot: Future[T], value: T, error: BaseException | None = None) -> bool:
    """Give a waiting sample its unit (or the run's error); False when the sample was cut
    off meanwhile (its wait cancelled by a limit or Ctrl-C), so the unit goes to another."""
    try:
        if error is None:
            slot.set_result(value)
        else:
            slot.set_exception(error)
    except InvalidStateError:
        return False
    return True


async def take(handoff: Handoff[J, R]) -> Unit[J, R] | None:
    """The next unit of the run, awaited on the eval's loop."""
    return await asyncio.wrap_future(handoff.take())


async def until_stopped(fn: Callable[..., T], *args: Any, stop: Callable[[], None]) -> T:
    """`fn(*args)` on a worker thread, told to stop the moment this sample is cancelled (a
    time, working, token or cost limit; Ctrl-C): `stop()` closes its door, so it ends at its
    next request, and the sample waits for it (shielded) so the reply in flight lands and is
    stored before the cancellation goes on."""
    finished, lock = threading.Event(), threading.Lock()
    state = {"started": False, "cancelled": False}

    def target() -> T:
        with lock:
            if state["cancelled"]:  # cancelled before it began: it never runs
                finished.set()
                raise RunFailed("the sample was cancelled before its unit began")
            state["started"] = True
        try:
            return fn(*args)
        finally:
            finished.set()

    try:
        return await anyio.to_thread.run_sync(target, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        with lock:
            state["cancelled"] = True
            started = state["started"]
        if started:  # a unit never begun has nothing to wait for
            stop()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(finished.wait)
        raise


async def work(unit: Unit[Any, R], fn: Callable[..., R], *args: Any,
               stopped: Callable[[BaseException], Any] | None = None,
               stop: Callable[[], None] | None = None) -> R:
    """`fn(*args)` on a worker thread for this sample, its result (or error) handed back to
    the run and returned (or raised) here too. A sample stopped midway (an error, a limit,
    a cancellation) hands back `stopped(exc)` when given (the run's own record of a unit
    that could not finish), so the run goes on; `stop` tells the unit to stop at once (its
    next request) when the sample is cancelled."""
    try:
        value = await (in_thread(fn, *args) if stop is None
                       else until_stopped(fn, *args, stop=stop))
    except BaseException as exc:
        outcome = exc if stopped is None else stopped(exc)
        if isinstance(outcome, BaseException):
            unit.result.set_exception(outcome)
        else:
            unit.result.set_result(outcome)
        raise
    unit.result.set_result(value)
    return value


CACHE_ENV = "CHESS_EVAL_CACHE"  # where the tasks keep their runs' stores (default below)


def run_dir(mode: str, argv: list[str], model: list[str]) -> Path:
    """Where a task's run keeps its stores (answers, games, lines): a folder keyed by the
    mode, the run's options and the model with every setting that changes its answers, under
    $CHESS_EVAL_CACHE (default ~/.cache/chess_eval). It outlives the eval, so a rerun of the
    same eval, or one after a failure or Ctrl-C, resumes and buys no reply again."""
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "chess_eval")
    digest = hashlib.sha256(json.dumps([mode, argv, model]).encode()).hexdigest()[:16]
    folder = root / f"{mode}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Driver:
    """A CLI run driven on a thread of its own beside the samples (the first sample starts
    it, in its context: the eval's model), handing its units out through a Handoff. When the
    run ends, the samples still waiting get no unit, or its error."""

    def __init__(self, mode: str, argv: list[str], handoff: Handoff[Any, Any]) -> None:
        self.mode = mode  # the CLI's command: play, puzzles
        self.argv = argv  # the CLI's options of the run, but --model and --out
        self.handoff = handoff
        self._lock = threading.Lock()
        self._started = False

    def start(self, model: list[str]) -> None:
        """Start the run once, with the eval's model (`activate()`'s options)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        context = contextvars.copy_context()
        threading.Thread(target=context.run, args=(self._main, model), daemon=True,
                         name="chess_eval-driver").start()

    def _main(self, model: list[str]) -> None:
        error: BaseException | None = None
        try:
            self.drive(model, run_dir(self.mode, self.argv, model))
        except BaseException as exc:  # noqa: BLE001 - every waiting sample fails with it
            error = exc
        finally:
            self.handoff.close(error)

    def drive(self, model: list[str], scratch: Path) -> None:
        """The run itself, writing its files (and stores) under `scratch`."""
        raise NotImplementedError


D = TypeVar("D", bound=Driver)


class PerEval(Generic[D]):
    """A task's runs, one per eval of it: a Task object evaluated twice, for two models in
    one eval(), or again by eval-set's retries starts a run of its own each time (on the
    same stores, so what an earlier eval finished is handed to this one's samples, not lost),
    never the first eval's ended run."""

    def __init__(self, make: Callable[[], D]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._runs: dict[str, D] = {}
        self.shape = make()  # its samples and options (never started)

    def get(self) -> D:
        """The run of the eval this sample belongs to."""
        active = active_sample()
        key = "" if active is None else str(active.eval_id)
        with self._lock:
            if key not in self._runs:
                self._runs[key] = self._make()
            return self._runs[key]


def adaptive_task(mode: str, runs: PerEval[Any], unit: str, solver: Any, scorer: Any,
                  metric: Any) -> Task:
    """An adaptive run as a task: a sample for each unit it may play ("UNIT n"), the run's
    options in the log (for reading it back), the CLI's generation defaults."""
    run = runs.shape
    dataset = MemoryDataset([Sample(id=n + 1, input=f"{unit} {n + 1}")
                             for n in range(run.handoff.samples)], name=f"chess_eval {mode}")
    return Task(dataset=dataset, solver=solver, scorer=scorer, metrics=[metric],
                config=GenerateConfig(temperature=0.0, max_tokens=DEFAULT_MAX_TOKENS),
                metadata={"chess_eval": mode, "argv": run.argv})


def check_options(state: TaskState, one_epoch: str) -> None:
    """RunFailed, before any request, when the eval set an option the task refuses (read as
    the task started), or when this sample is of a second epoch (`one_epoch` says why not)."""
    why = refused_here()
    if why is not None:
        raise RunFailed(why)
    if state.epoch > 1:
        raise RunFailed(one_epoch)


@solver
def options_check(one_epoch: str) -> Solver:
    """The static task's first solver: `check_options` before its own generate()."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        check_options(state, one_epoch)
        return state
    return solve


async def next_unit(run: Driver, state: TaskState, bound: str) -> Unit[Any, Any] | None:
    """The next unit of the run for this sample (None: the run has ended), starting the run
    with the eval's model. An eval whose options the task refuses (options.py) fails here,
    before any request; one epoch only (`bound` says how to have more units)."""
    check_options(state, f"chess_eval/{run.mode} plays one epoch: its run decides how many "
                  f"are played ({bound})")
    run.start(activate())
    return await take(run.handoff)
