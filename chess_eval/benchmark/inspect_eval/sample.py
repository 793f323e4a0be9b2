"""What every chess_eval task shares: its options parsed by the CLI's own parser, and the
eval's model made the one `--model inspect:...` means inside a sample."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import inspect
import json
import os
import re
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from chess_eval.benchmark.core import progress
from chess_eval.benchmark.inspect_eval.options import refusal
from chess_eval.benchmark.model.http_backend import REASONING_EFFORTS
from chess_eval.benchmark.model.inspect_backend import ACTIVE, PREFIX, Active
from chess_eval.benchmark.model.inspect_internals import (
    active_generate_config,
    active_sample,
    prerequisite_error,
)
from chess_eval.benchmark.model.interface import DEFAULT_MAX_TOKENS
from chess_eval.errors import ChessEvalError, ConfigError

T = TypeVar("T")
J = TypeVar("J")
R = TypeVar("R")


class RunFailed(ChessEvalError):
    """The mode's run ended before its end or incomplete (infrastructure failures): the
    sample fails, and so the eval, as the CLI's run exits non-zero."""


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are ConfigError (one line), not an exit, naming the task's
    argument (`max_games`) where the CLI's message names its option (`--max-games`)."""

    def error(self, message: str) -> Any:
        named = re.sub(r"argument --([a-z0-9-]+)", lambda m: m.group(1).replace("-", "_"),
                       message)
        raise ConfigError(f"{self.prog}: {named}")


def build(name: str, make: Callable[..., Task], *args: Any) -> Task:
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


ROLE_OPTIONS = {"opponent": "--opponent"}  # a task's model roles, as the CLI's options


def activate(roles: tuple[str, ...] = ()) -> list[str]:
    """Make the eval's model the one `--model inspect:<it>` means in this sample (and in the
    threads it starts), and each of `roles`' models (`--model-role ROLE=...`) the one its
    option names; the CLI options that ask them as the eval does."""
    model = get_model()
    argv = ["--model", PREFIX + str(model)]
    bound = {}
    for role in roles:
        try:
            bound[role] = get_model(role=role, required=True)
        except Exception as exc:  # noqa: BLE001 - Inspect's PrerequisiteError (private)
            raise RunFailed(f"this task needs --model-role {role}=PROVIDER/MODEL "
                            f"({exc})") from None
        argv += [ROLE_OPTIONS[role], PREFIX + str(bound[role])]
    ACTIVE.set(Active(model, asyncio.get_running_loop(), tuple(bound.values())))
    progress.BARS.set(False)  # Inspect's display owns the terminal: progress goes to its log
    return [*argv, *request_argv()]


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


CACHE_ENV = "CHESS_EVAL_CACHE"  # where the tasks keep their runs' stores (default below)


def run_dir(mode: str, argv: list[str], model: list[str], unkeyed: tuple[str, ...] = ()) -> Path:
    """Where a task's run keeps its stores (answers, games, lines): a folder keyed by the
    mode, the run's options and the model with every setting that changes its answers, under
    $CHESS_EVAL_CACHE (default ~/.cache/chess_eval). It outlives the eval, so a rerun of the
    same eval, or one after a failure or Ctrl-C, resumes and buys no reply again. Options in
    `unkeyed` (with their values) only say how much of the run to do: evals that differ in
    them share a folder, so a larger one asks only what the smaller did not."""
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "chess_eval")
    folder = root / f"{mode}-{_digest(mode, _without(argv, unkeyed), model)}"
    # A folder an earlier version keyed by every option: moved, not bought again.
    earlier = root / f"{mode}-{_digest(mode, argv, model)}"
    try:
        if unkeyed and earlier != folder and earlier.is_dir() and not folder.exists():
            earlier.rename(folder)
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{CACHE_ENV}={root}: cannot keep the runs' stores there "
                          f"({exc.strerror or exc}); set it to a writable folder") from None
    return folder


def _digest(mode: str, argv: list[str], model: list[str]) -> str:
    return hashlib.sha256(json.dumps([mode, argv, model]).encode()).hexdigest()[:16]


def _without(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """argv less each of `options` and the value after it."""
    out: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in options:
            skip = True
        else:
            out.append(word)
    return out


def adaptive_task(mode: str, stopping: Any, samples: int, unit: str, solver: Any,
                  scorer: Any, metric: Any, argv: list[str]) -> Task:
    """An adaptive run as a task: a sample for each unit it may play ("UNIT n": unit n - 1),
    the run's stop rule as its early stopping, the run's options in the log (for reading it
    back), the CLI's generation defaults."""
    dataset = MemoryDataset([Sample(id=n + 1, input=f"{unit} {n + 1}")
                             for n in range(samples)], name=f"chess_eval {mode}")
    return Task(dataset=dataset, solver=solver, scorer=scorer, metrics=[metric],
                early_stopping=stopping,
                config=GenerateConfig(temperature=0.0, max_tokens=DEFAULT_MAX_TOKENS),
                metadata={"chess_eval": mode, "argv": argv})


class Opened(Protocol):
    """A mode's run while an eval's samples play in it (`Held`)."""

    def close(self) -> None:
        """Leave the run: the requests in flight land, the books are written."""


class Held:
    """The run an eval's samples play in, open while any of them plays or will (`open`
    makes it, off the event loop; `busy` says whether a sample is deciding, playing or yet
    to start): left, its books written, when the last holder leaves and none is to come, or
    when a holder leaves by an error or a cancellation (the eval may be ending), so an eval
    writes one line of books however its samples are scheduled."""

    def __init__(self, open: Callable[[], Opened],  # noqa: A002 - what it does
                 busy: Callable[[], bool] = lambda: False) -> None:
        self._open = open
        self._busy = busy
        self._lock = anyio.Lock()
        self._count = 0
        self._run: Opened | None = None

    @property
    def open(self) -> bool:
        """Whether the run is open (a sample is playing in it, or one is to come)."""
        return self._run is not None

    @asynccontextmanager
    async def __call__(self) -> AsyncIterator[Any]:
        """The run, for one sample's unit."""
        async with self._lock:
            if self._run is None:
                self._run = await anyio.to_thread.run_sync(self._open)
            self._count += 1
        abrupt = True  # whether this holder leaves by an error or a cancellation
        try:
            yield self._run
            abrupt = False
        finally:
            with anyio.CancelScope(shield=True):  # Ctrl-C: the books are written all the same
                async with self._lock:
                    self._count -= 1
                    if self._count == 0 and (abrupt or not self._busy()):
                        await self._close()

    async def idle(self) -> None:
        """A sample ended without playing: the run is left if no sample holds it and none
        is to come."""
        with anyio.CancelScope(shield=True):
            async with self._lock:
                if self._count == 0 and not self._busy():
                    await self._close()

    async def _close(self) -> None:
        if self._run is not None:
            run, self._run = self._run, None
            await anyio.to_thread.run_sync(run.close)


class Checks:
    """Early stopping that stops no sample (Inspect's EarlyStopping protocol): it reads each
    eval's options as the eval starts, so a sample of an eval that set one the task refuses
    fails at once, in one line, before any request (Inspect hands a sample its limits, not
    the eval's epochs); per eval of the task, on the task's own object."""

    def __init__(self, mode: str) -> None:
        self.mode = mode  # the task: static, worldmodel
        self._lock = threading.Lock()
        self._refused: dict[str, str | None] = {}  # eval id -> why its samples may not run

    async def start_task(self, task: Any, samples: list[Sample], epochs: int) -> str:
        """Read the eval's options."""
        why = refusal(self.mode, epochs, task.config.message_limit,
                      task.config.sample_shuffle)
        with self._lock:
            self._refused[str(task.eval_id)] = why
        return f"chess_eval {self.mode} options"

    async def schedule_sample(self, id: int | str, epoch: int) -> None:
        """Every sample runs."""

    async def complete_sample(self, id: int | str, epoch: int, scores: Any) -> None:
        """Nothing to learn from a sample."""

    async def complete_task(self) -> dict[str, Any]:
        """Nothing to add to the log."""
        return {}

    def check(self, epoch: int, one_epoch: str) -> None:
        """RunFailed, before any request, when this sample's eval set an option the task
        refuses, or when it is of a second epoch (`one_epoch` says why not)."""
        active = active_sample()
        with self._lock:
            why = None if active is None else self._refused.get(str(active.eval_id))
        if why is not None:
            raise RunFailed(why)
        if epoch > 1:
            raise RunFailed(one_epoch)


@solver
def options_check(checks: Checks, one_epoch: str) -> Solver:
    """The static task's first solver: `checks.check` before its own generate()."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        checks.check(state.epoch, one_epoch)
        return state
    return solve
