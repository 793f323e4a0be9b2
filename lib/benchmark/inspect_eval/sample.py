"""What every chess_eval task shares: its options parsed by the CLI's own parser, and the
eval's model made the one `--model inspect:...` means inside a sample."""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import hashlib
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.solver import TaskState

from lib.benchmark.core import progress
from lib.benchmark.core.chat import DEFAULT_MAX_TOKENS, REASONING_EFFORTS
from lib.benchmark.core.inspect_model import ACTIVE, PREFIX, Active
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
    from inspect_ai._util.error import PrerequisiteError

    try:
        return make(*args)
    except ChessEvalError as exc:
        raise PrerequisiteError(f"chess_eval/{name}: {exc}") from None


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


class Handoff(Generic[J, R]):
    """An adaptive run's units handed to Inspect's samples: the run (on a driver thread) gives
    its n-th job to sample n (0-based) and waits for the sample's result, so each unit is
    played in its own sample, its requests in that sample's transcript, while the run decides
    what comes next as the CLI's does. Inspect starts samples in order, so every job the run
    waits on has a sample."""

    def __init__(self, samples: int) -> None:
        self.samples = samples
        self._lock = threading.Lock()
        self._jobs: dict[int, Future[J | None]] = {}
        self._results: dict[int, Future[R]] = {}
        self._given = 0

    def job(self, n: int) -> Future[J | None]:
        """Sample n's job, once the run has one for it (None: the run ended first)."""
        with self._lock:
            return self._jobs.setdefault(n, Future())

    def result(self, n: int) -> Future[R]:
        """Where sample n hands its result back."""
        with self._lock:
            return self._results.setdefault(n, Future())

    def give(self, job: J) -> Future[R] | None:
        """Hand the run's next job to its sample; where its result will be (None: the
        dataset has no sample left for it)."""
        with self._lock:
            n, self._given = self._given, self._given + 1
        if n >= self.samples:
            return None
        self.job(n).set_result(job)
        return self.result(n)

    def close(self, error: BaseException | None) -> None:
        """The run has ended (called by its thread): every sample still waiting gets no job,
        or the run's error."""
        for n in range(self.samples):
            slot = self.job(n)
            if slot.done():
                continue
            if error is None:
                slot.set_result(None)
            else:
                slot.set_exception(error)


async def take(handoff: Handoff[J, Any], n: int) -> J | None:
    """Sample n's job from the run, awaited on the eval's loop."""
    return await asyncio.wrap_future(handoff.job(n))


async def work(handoff: Handoff[Any, R], n: int, fn: Callable[..., R], *args: Any) -> R:
    """`fn(*args)` on a worker thread for sample n, its result (or error) handed back to the
    run, and returned (or raised) here too."""
    result = handoff.result(n)
    try:
        value = await in_thread(fn, *args)
    except BaseException as exc:
        result.set_exception(exc)
        raise
    result.set_result(value)
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


def adaptive_task(mode: str, run: Driver, unit: str, solver: Any, scorer: Any,
                  metric: Any) -> Task:
    """An adaptive run as a task: a sample for each unit it may play ("UNIT n"), the run's
    options in the log (for reading it back), the CLI's generation defaults."""
    dataset = MemoryDataset([Sample(id=n + 1, input=f"{unit} {n + 1}")
                             for n in range(run.handoff.samples)], name=f"chess_eval {mode}")
    return Task(dataset=dataset, solver=solver, scorer=scorer, metrics=[metric],
                config=GenerateConfig(temperature=0.0, max_tokens=DEFAULT_MAX_TOKENS),
                metadata={"chess_eval": mode, "argv": run.argv})


async def next_unit(run: Driver, state: TaskState, bound: str) -> tuple[int, Any]:
    """This sample's index and the unit the run hands it (None: the run ended first),
    starting the run with the eval's model. One epoch only: the run decides how many units
    are played (`bound` says how to have more)."""
    if state.epoch > 1:
        raise RunFailed(f"chess_eval/{run.mode} plays one epoch: its run decides how many "
                        f"are played ({bound})")
    n = int(state.sample_id) - 1
    run.start(activate())
    return n, await take(run.handoff, n)
