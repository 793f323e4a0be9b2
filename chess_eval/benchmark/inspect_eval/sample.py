"""What every chess_eval task shares: its options parsed by the CLI's own parser, and the
eval's model made the one `--model inspect:...` means inside a sample."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import hashlib
import inspect
import json
import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import EarlyStop

from chess_eval.benchmark.core import progress
from chess_eval.benchmark.inspect_eval.options import refused_here, when_ended
from chess_eval.benchmark.model.http_backend import REASONING_EFFORTS
from chess_eval.benchmark.model.inspect_backend import ACTIVE, PREFIX, Active
from chess_eval.benchmark.model.inspect_internals import (
    active_generate_config,
    active_sample,
    prerequisite_error,
)
from chess_eval.benchmark.model.interface import DEFAULT_MAX_TOKENS
from chess_eval.errors import ChessEvalError, ConfigError
from chess_eval.kvstore import JsonStore

T = TypeVar("T")
J = TypeVar("J")
R = TypeVar("R")

progress.BARS = False  # Inspect's display owns the terminal: progress goes to its log


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


@dataclass
class Unit(Generic[J, R]):
    """One unit of a run (a game, a puzzle line) as its slot's sample takes it."""

    index: int  # its slot: its place in the run's order (0-based), sample index + 1's
    job: J  # what to play
    result: Future[R]  # where the sample hands the outcome back to the run


class NoSample(ChessEvalError):
    """A unit whose slot has no sample to play it in this eval."""

    def __init__(self, message: str, hole: bool) -> None:
        super().__init__(message)
        self.hole = hole  # a later slot has a sample (--sample-id left this one out)


class Step(StrEnum):
    """What a sample does next for its slot (Slots.next)."""

    PLAY = "play"  # play its own unit
    HELP = "help"  # play another slot's unit, whose sample is not playing it
    RECORD = "record"  # its unit was played (by a helper, or stored): record the outcome
    NONE = "none"  # the run ended without its slot


class Slots(Generic[J, R]):
    """An adaptive run's units by slot: unit k (0-based) is sample k + 1's, whatever order
    the samples start in, whichever attempt of the eval runs them. The run (on a driver
    thread) gives each slot the unit it decides to play there. A unit is played by its own
    sample or, when that sample has not started (Inspect may start samples out of order: a
    retried one goes to the back of its queue), by any sample still waiting for its own, so
    no sample waits for one that cannot start; the outcome goes back to the run, and the
    slot's own sample records it, so a log records each unit once, under its slot. Once the
    run has ended, a slot it gave nothing is not needed."""

    def __init__(self, samples: int, lost: Callable[[J, str], R | BaseException],
                 failed: Callable[[Future[R]], bool]) -> None:
        self.samples = samples  # slots in the task (its dataset's samples)
        self._lost = lost  # the run's record of a unit nobody played (the eval ended)
        # Whether an outcome is a failure its own sample plays again (a retried sample, or
        # one whose helper failed): the run has counted it, and the sample records its own.
        self._failed = failed
        self._lock = threading.Lock()
        self._units: dict[int, Unit[J, R]] = {}  # given, by slot
        self._started: set[int] = set()  # slots whose unit a sample has begun to play
        self._waiting: list[Future[None]] = []  # samples waiting for something to change
        self._ids: set[int] | None = None  # this eval's slots (None: every one)
        self._closed = False
        self._ended = False  # the eval has ended: no sample will play another unit
        self._error: BaseException | None = None

    def here(self, ids: list[int | str]) -> None:
        """The eval's samples (as it starts): the slots that may run in it."""
        with self._lock:
            self._ids = {int(i) - 1 for i in ids}

    def give(self, index: int, job: J) -> Future[R]:
        """Slot `index`'s unit, to be played; where its outcome will be. NoSample when this
        eval has no sample for it (a subset of samples: --limit, --sample-id) or has ended."""
        with self._lock:
            if self._ended:
                raise NoSample(f"unit {index + 1}: the eval has ended", False)
            if self._ids is not None and index not in self._ids:
                later = any(i > index for i in self._ids)
                raise NoSample(f"unit {index + 1} has no sample in this eval: the run plays "
                               "its units in order, so a subset of samples (--sample-id) "
                               "must not leave one out" if later else
                               f"unit {index + 1} is beyond this eval's samples", later)
            unit: Unit[J, R] = Unit(index, job, Future())
            self._units[index] = unit
        unit.result.add_done_callback(lambda _: self._wake())
        self._wake()
        return unit.result

    def next(self, index: int) -> Future[tuple[Step, Unit[J, R] | None]]:
        """What slot `index`'s sample does next; its future is set once there is something
        to do (waiting for the run to decide, or for a helper to finish its unit)."""
        step: Future[tuple[Step, Unit[J, R] | None]] = Future()
        self._try(index, step)
        return step

    def _try(self, index: int, step: Future[tuple[Step, Unit[J, R] | None]]) -> None:
        with self._lock:
            if step.done():  # the sample was cut off while it waited
                return
            try:
                found = self._step(index)
            except BaseException as exc:  # noqa: BLE001 - the run's error, to the sample
                step.set_exception(exc)
                return
            if found is None:
                wake: Future[None] = Future()
                self._waiting.append(wake)
        if found is None:
            wake.add_done_callback(lambda _: self._try(index, step))
            return
        try:
            step.set_result(found)
        except InvalidStateError:  # cut off just now: the unit it would play is free again
            if found[0] in (Step.PLAY, Step.HELP) and found[1] is not None:
                with self._lock:
                    self._started.discard(found[1].index)
                self._wake()

    def _step(self, index: int) -> tuple[Step, Unit[J, R] | None] | None:
        """next()'s decision, under the lock (None: wait)."""
        own = self._units.get(index)
        if own is not None:
            if own.result.done():
                return (Step.PLAY if self._failed(own.result) else Step.RECORD), own
            if index not in self._started:
                self._started.add(index)
                return Step.PLAY, own
            return None  # a helper is playing it
        for k in sorted(self._units):
            if k not in self._started and not self._units[k].result.done():
                self._started.add(k)
                return Step.HELP, self._units[k]
        if self._closed:
            if self._error is not None:
                raise self._error
            return Step.NONE, None
        return None

    def _wake(self) -> None:
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for wake in waiting:
            with contextlib.suppress(InvalidStateError):
                wake.set_result(None)

    def not_needed(self, index: int) -> bool:
        """Whether the run has ended without slot `index` (and without an error)."""
        with self._lock:
            return self._closed and self._error is None and index not in self._units

    def end(self) -> None:
        """The eval has ended: a unit nobody played is lost to the run, and the run ends at
        its next unit, releasing its stores."""
        with self._lock:
            self._ended = True
            orphans = [u for u in self._units.values() if not u.result.done()]
        for unit in orphans:
            hand_back(unit, self._lost(unit.job, "no sample played it: the eval ended"))
        self.close(None)

    def close(self, error: BaseException | None) -> None:
        """The run has ended (called by its thread): every sample waiting, and every one
        that starts later, gets no unit (or the run's error) once no unit is left to play."""
        with self._lock:
            self._closed, self._error = True, error
        self._wake()


def hand_back(unit: Unit[Any, R], value: R | BaseException) -> None:
    """The unit's outcome to the run (a retried sample's second outcome is its own: the
    run took the first)."""
    with contextlib.suppress(InvalidStateError):
        if isinstance(value, BaseException):
            unit.result.set_exception(value)
        else:
            unit.result.set_result(value)


class Pins:
    """What each slot of a run was given (a rung, a puzzle) when its unit first began, kept
    in the run's store: an attempt that finishes a unit an earlier one lost decides the later
    slots as the earlier did, so the games (lines) its samples already recorded are the ones
    it plays. A choice is kept only once its sample begins the unit: a slot scheduled as an
    eval was cancelled (Ctrl-C), its history cut short, binds no later attempt."""

    def __init__(self, folder: Path, table: str) -> None:
        self._store = JsonStore(folder / "slots.db", table)
        self._lock = threading.Lock()
        self._proposed: dict[int, Any] = {}  # choices made, not yet begun

    def __call__(self, index: int, choice: Any) -> Any:
        """Slot `index`'s choice: the one kept for it, else `choice` (kept once begun)."""
        got = self._store.get(str(index))
        if got is not None:
            return got
        with self._lock:
            self._proposed[index] = choice
        return choice

    def begun(self, index: int) -> None:
        """Slot `index`'s unit began on its sample: its choice is kept for later attempts."""
        with self._lock:
            choice = self._proposed.pop(index, None)
        if choice is not None and self._store.get(str(index)) is None:
            self._store.put(str(index), choice)
            self._store.commit()

    def close(self) -> None:
        """Close the store."""
        self._store.close()


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
        hand_back(unit, exc if stopped is None else stopped(exc))
        raise
    hand_back(unit, value)
    return value


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


log = logging.getLogger(__name__)
# How long an ended eval waits for its run's thread to end (its units' replies in flight land
# first, within the run's own grace): the books are written and the stores closed by then.
RUN_END_S = 60.0


class Driver:
    """A CLI run driven on a thread of its own beside the samples (the first sample starts
    it, in its context: the eval's model), giving each slot its unit (Slots). When the run
    ends, the samples still waiting get no unit, or its error."""

    def __init__(self, mode: str, argv: list[str], slots: Slots[Any, Any],
                 unkeyed: tuple[str, ...] = ()) -> None:
        self.mode = mode  # the CLI's command: play, puzzles
        self.argv = argv  # the CLI's options of the run, but --model and --out
        # Options that only bound how far the run goes: evals that differ in them share the
        # run's folder (its units are played in one order whatever the bound, so a larger
        # bound plays on from the smaller one's units, and a smaller one stops among them).
        self.unkeyed = unkeyed
        self.slots = slots
        self._lock = threading.Lock()
        self._started = False
        self.thread: threading.Thread | None = None  # the driver, once started
        self.scratch: Path | None = None  # its stores' folder, once started
        self.before: list[Driver] = []  # runs of earlier evals of the task (see _main)
        self.roles: tuple[str, ...] = ()  # the model roles the run's second player takes
        self.pins: Pins | None = None  # what each slot was given (a run that pins its units)

    def begun(self, index: int) -> None:
        """Slot `index`'s sample begins its unit (its pin is kept from now on)."""
        if self.pins is not None:
            self.pins.begun(index)

    def start(self, model: list[str]) -> None:
        """Start the run once, with the eval's model (`activate()`'s options)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        context = contextvars.copy_context()
        self.thread = threading.Thread(target=context.run, args=(self._main, model),
                                       daemon=True, name="chess_eval-driver")
        self.thread.start()

    def _main(self, model: list[str]) -> None:
        error: BaseException | None = None
        try:  # whatever fails, from the folder on, reaches every waiting sample
            scratch = run_dir(self.mode, self.argv, model, self.unkeyed)
            self.scratch = scratch
            # An earlier eval of this run in this process whose run is still going has
            # ended (Inspect runs one eval of a task and model at a time; eval-set retries a
            # failed one in the same process, and says nothing when it fails): its run lets
            # go of its stores before this one claims them.
            for earlier in self.before:
                if earlier.scratch == scratch and earlier.thread is not None:
                    earlier.slots.end()
                    earlier.thread.join()
            self.before = []  # joined: nothing to hold on to
            self.drive(model, scratch)
        except NoSample as exc:  # the eval's last sample reached (--limit), or it ended
            if exc.hole:
                error = RunFailed(str(exc))
        except BaseException as exc:  # noqa: BLE001 - every waiting sample fails with it
            error = exc
        finally:
            self.slots.close(error)

    def drive(self, model: list[str], scratch: Path) -> None:
        """The run itself, writing its files (and stores) under `scratch`."""
        raise NotImplementedError


D = TypeVar("D", bound=Driver)


class PerEval(Generic[D]):
    """A task's runs, one per eval of it: a Task object evaluated twice, for two models in
    one eval(), or again by eval-set's retries starts a run of its own each time (on the
    same stores, so what an earlier eval finished is found again, not lost), never the first
    eval's ended run."""

    def __init__(self, make: Callable[[], D]) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._runs: dict[str, D] = {}
        self._ended: set[str] = set()  # evals that ended (their runs let go at the next eval)
        self.shape = make()  # its samples and options (never started)

    def begin(self, eval_id: str, ids: list[int | str]) -> None:
        """An eval of the task starts, with these samples; its run ends with it."""
        run = self._of(eval_id)
        run.slots.here(ids)
        when_ended(eval_id, lambda: self._end(eval_id))

    def _end(self, eval_id: str) -> None:
        """The eval ended: its run ends, and is waited for (bounded) so that its books are
        written and its stores closed before the process may exit (it is let go when the
        task's next eval begins)."""
        with self._lock:
            self._ended.add(eval_id)
            run = self._runs.get(eval_id)
        if run is None:
            return
        run.slots.end()
        if run.thread is not None:
            run.thread.join(timeout=RUN_END_S)
            if run.thread.is_alive():
                log.warning("the %s run in %s had not ended %.0f s after its eval: its "
                            "books may lack this eval's line", run.mode, run.scratch,
                            RUN_END_S)

    def get(self) -> D:
        """The run of the eval this sample belongs to."""
        active = active_sample()
        return self._of("" if active is None else str(active.eval_id))

    def _of(self, key: str) -> D:
        with self._lock:
            if key not in self._runs:
                run = self._make()
                run.before = list(self._runs.values())
                # The runs of ended evals are let go (a long-lived process evaluating one
                # task many times keeps none of them): the new run holds those it must
                # wait for (`before`) until it has.
                for done in self._ended & set(self._runs):
                    del self._runs[done]
                self._ended.clear()
                self._runs[key] = run
            return self._runs[key]


class UnitsNeeded:
    """The adaptive tasks' early stopping (Inspect's EarlyStopping): a sample scheduled once
    the run has ended without its slot (its stop rule met) is stopped early, a completed
    sample Inspect leaves out of the metrics, lists among the log's early stops, and
    schedules again in a retry of the eval (whose run may need it). A sample that started
    before the run ended without its slot is scored NaN, "not played"."""

    def __init__(self, runs: PerEval[Any]) -> None:
        self.runs = runs

    async def start_task(self, task: Any, samples: list[Sample], epochs: int) -> str:
        """The eval's run learns which samples (slots) it has."""
        self.runs.begin(str(task.eval_id), [s.id for s in samples if s.id is not None])
        return "chess_eval stop rule"

    async def schedule_sample(self, id: int | str, epoch: int) -> EarlyStop | None:
        """An EarlyStop when the run has ended without this sample's slot; else None (it
        runs: its solver plays, helps or waits)."""
        if self.runs.get().slots.not_needed(int(id) - 1):
            return EarlyStop(id=id, epoch=epoch, reason=NOT_NEEDED)
        return None

    async def complete_sample(self, id: int | str, epoch: int, scores: Any) -> None:
        """Nothing to do: each sample's unit is its slot's."""

    async def complete_task(self) -> dict[str, Any]:
        """Nothing to add to the log."""
        return {}


NOT_NEEDED = "not played: the run's stop rule was met before this unit"


def adaptive_task(mode: str, runs: PerEval[Any], unit: str, solver: Any, scorer: Any,
                  metric: Any) -> Task:
    """An adaptive run as a task: a sample for each unit it may play ("UNIT n", slot n - 1),
    the run's stop rule as its early stopping, the run's options in the log (for reading it
    back), the CLI's generation defaults."""
    run = runs.shape
    dataset = MemoryDataset([Sample(id=n + 1, input=f"{unit} {n + 1}")
                             for n in range(run.slots.samples)], name=f"chess_eval {mode}")
    return Task(dataset=dataset, solver=solver, scorer=scorer, metrics=[metric],
                early_stopping=UnitsNeeded(runs),
                config=GenerateConfig(temperature=0.0, max_tokens=DEFAULT_MAX_TOKENS),
                metadata={"chess_eval": mode, "argv": run.argv})


def check_options(epoch: int, one_epoch: str) -> None:
    """RunFailed, before any request, when the eval set an option the task refuses (read as
    the task started), or when this sample is of a second epoch (`one_epoch` says why not)."""
    why = refused_here()
    if why is not None:
        raise RunFailed(why)
    if epoch > 1:
        raise RunFailed(one_epoch)


@solver
def options_check(one_epoch: str) -> Solver:
    """The static task's first solver: `check_options` before its own generate()."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        check_options(state.epoch, one_epoch)
        return state
    return solve


async def slot_outcome(runs: PerEval[Any], state: TaskState, bound: str,
                       play: Callable[[Any, Unit[Any, Any]], Awaitable[Any]]
                       ) -> tuple[Any, Unit[Any, Any], Any] | None:
    """This sample's run, its slot's unit and that unit's outcome: played here (`play(run,
    unit)`), or by another sample while this one waited (a stored one recorded as it is);
    None when the run ended without its slot. While its own unit is not decided, the sample
    plays units whose samples have not started (`play` too). An eval whose options the
    task refuses (options.py) fails here, before any request; one epoch only (`bound` says
    how to have more units); the run's error, if it failed."""
    run = runs.get()
    check_options(state.epoch, f"chess_eval/{run.mode} plays one epoch: its run decides how "
                  f"many are played ({bound})")
    run.start(activate(run.roles))
    index = int(state.sample_id) - 1
    while True:
        step, unit = await asyncio.wrap_future(run.slots.next(index))
        if step is Step.NONE:
            return None
        assert unit is not None
        if step is Step.HELP:
            with contextlib.suppress(Exception):  # its own sample records what came of it
                await play(run, unit)
            continue
        if step is Step.PLAY:
            return run, unit, await play(run, unit)
        error = unit.result.exception()  # a helper's line skipped or left out, say
        return run, unit, error if error is not None else unit.result.result()
