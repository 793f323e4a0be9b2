"""An adaptive run on Inspect's own machinery: each sample plays its own unit (a game, a
pair's game, a puzzle line), the task's `EarlyStopping` deciding which or none.

When Inspect schedules sample k + 1 (`schedule_sample`), the mode's plan decides unit k from
the outcomes of the units before it, with the CLI's own sampler and stop rule (the mode's
pure `next_*` function): the stop rule met, the sample is an early stop (listed as such,
left out of the metrics); else it is given its unit. A decision that needs the outcome of a
unit whose sample is still playing, or has not started yet, waits for it. A unit whose
sample failed in this eval stops the decision (the eval fails, and a retry plays both) unless
the eval tolerates errors (--fail-on-error N or --no-fail-on-error): then, as a unit that
ended on a limit, it is read as the CLI reads a unit cut short (aborted, unrated), and kept
so for every later attempt. Each unit is pinned, with its outcome once it has one, in the run's
store (units.db in its folder), so an eval-retry, a rerun on the same folder or a retried
sample finds the units and outcomes of every earlier attempt, and plays its own again.

The samples of one eval share one `Run` (its claim on the stores, its gate, its books) while
any of them is playing (`Held`): opened by the first, left (its books written) when the last
ends, however it ends. Nothing of an eval outlives its samples, and nothing is kept at module
level: the per-eval state lives on the task's own `Units`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import anyio
from inspect_ai.dataset import Sample
from inspect_ai.util import EarlyStop, LimitExceededError, sample_limits

from chess_eval.benchmark.inspect_eval.options import refusal
from chess_eval.benchmark.inspect_eval.sample import Held, Opened, RunFailed, activate
from chess_eval.benchmark.model.inspect_internals import active_sample
from chess_eval.kvstore import JsonStore

U = TypeVar("U")  # what a unit is (a rung, a puzzle's index; None for a match's game)
V = TypeVar("V")  # its outcome, as JSON
Vc = TypeVar("Vc", contravariant=True)  # (the same, where a plan reads it)
T = TypeVar("T")

LOG = logging.getLogger(__name__)
NOT_NEEDED = "not played: the run's stop rule was met before this unit"


class Pending(Exception):
    """A decision needs the outcome of a unit whose sample is still playing it, or has not
    started yet (`unseen`)."""

    def __init__(self, unseen: int | None = None) -> None:
        super().__init__(unseen)
        self.unseen = unseen  # the unit whose sample has not started (None: it is playing)


# How long the samples holding Inspect's slots may all wait for a unit whose sample has not
# started before the earliest such unit is decided past. Inspect admits samples in about
# dataset order, but not exactly (a retried sample reads its earlier attempt first): a
# sample admitted before an earlier one may take the last free slot, and the earlier one's
# sample could then never start. A free slot admits the next sample within milliseconds,
# and each admission wakes the waiting decisions, so only a full house of waiters sees
# this pass.
STALL_S = 2.0
PASSED = ("unit {unit}'s sample had not started while every sample holding a slot waited "
          "for it: unit {index} and later ones are decided reading it as not played (it is "
          "still played and rated); the run's schedule differs from the CLI's from here")


class Failed(Exception):
    """A decision needs the outcome of a unit whose sample failed in this eval (which does
    not tolerate errors)."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index  # the unit whose sample failed


class Lost:
    """The outcome of a unit that has none and never will in this run (its sample ended on
    a limit, failed in an eval that tolerates errors, or is not in the eval): read as the
    CLI reads a unit cut short (aborted, unrated)."""


LOST = Lost()
LOST_ROW = {"lost": True}  # a lost unit's outcome as units.db keeps it


class Plan(Protocol[U, Vc]):
    """A mode's schedule, as a pure function of the outcomes so far."""

    def unit(self, index: int, outcome: Callable[[int], Vc | Lost],
             pinned: dict[int, U]) -> tuple[U] | None:
        """Unit `index` (1-tuple; None: the stop rule is met before it), given each earlier
        unit's outcome (`outcome(j)` raises Pending while its sample plays it) and the
        units already pinned (kept: an earlier attempt's, whatever the outcomes say now)."""


@dataclass
class EvalUnits(Generic[U, V]):
    """One eval's units: what each sample was given, what came of it, who is playing."""

    ids: set[int]  # this eval's samples (0-based indices)
    refused: str | None  # why the eval's options are refused (every sample fails with it)
    plan: Plan[U, V]  # the mode's schedule
    table: str  # the mode's table in units.db (each unit and its outcome, across attempts)
    tolerant: bool = False  # whether the eval goes on past a failed sample (fail_on_error)
    folder: Path | None = None  # the run's folder (known once the first sample starts)
    model: list[str] | None = None  # the eval's model as the CLI's options (sample.activate)

    def __post_init__(self) -> None:
        self.pinned: dict[int, U] = {}  # unit by index (decided, pinned once begun)
        self.settled: dict[int, V] = {}  # outcome by index
        self.running: set[int] = set()  # indices whose sample is deciding or playing
        self.seen: set[int] = set()  # indices whose sample has started in this eval
        self.failed: set[int] = set()  # indices whose sample failed in this eval
        self.changed = anyio.Event()  # set (and replaced) whenever an outcome is in
        self.kept: set[int] = set()  # indices pinned in units.db
        self.waiting: set[int] = set()  # indices whose decision waits for an outcome
        self.passed: set[int] = set()  # unstarted indices a stalled decision read as lost

    def load(self, folder: Path, model: list[str]) -> None:
        """The units and outcomes earlier attempts kept in `folder` (the run of `model`)."""
        self.folder, self.model = folder, model
        for row in self._rows(lambda store: store.values()):
            self.pinned[row["index"]] = row["unit"]
            self.kept.add(row["index"])
            if row.get("outcome") is not None:
                self.settled[row["index"]] = row["outcome"]

    def _rows(self, fn: Callable[[JsonStore], T]) -> T:
        """`fn` on units.db, opened for it alone (no store outlives a call: an eval's end
        leaves nothing open, however it ends)."""
        assert self.folder is not None
        store = JsonStore(self.folder / "units.db", self.table)
        try:
            return fn(store)
        finally:
            store.close()

    def _keep(self, index: int, outcome: V | None) -> None:
        if index not in self.pinned:  # never decided: nothing to keep
            return
        row = {"index": index, "unit": self.pinned[index], "outcome": outcome}

        def put(store: JsonStore) -> None:
            store.put(str(index), row)
            store.commit()
        self._rows(put)

    def outcome(self, index: int) -> V | Lost:
        """Unit `index`'s outcome for a decision: Pending while its sample plays it or is
        yet to start, Failed when it failed (LOST, kept, where the eval tolerates that)."""
        if index in self.settled:
            got = self.settled[index]
            return LOST if got == LOST_ROW else got
        if index in self.running:
            raise Pending
        if index in self.ids and index not in self.seen and index not in self.passed:
            raise Pending(index)
        if index in self.failed:
            if not self.tolerant:
                raise Failed(index)
            self.conclude(index, LOST, failed=False)  # decided from: lost for every attempt
            return LOST
        return LOST

    async def decide(self, index: int) -> tuple[U] | None:
        """Unit `index`, once the outcomes it depends on are in; None: not needed.
        RunFailed when one of them failed in this eval."""
        self.running.add(index)
        self.seen.add(index)
        self.failed.discard(index)
        self._wake()  # a decision waiting for this sample to start goes on
        try:
            while True:
                try:
                    got = self.plan.unit(index, self.outcome, self.pinned)
                    break
                except Pending as exc:
                    await self._wait(index, exc.unseen)
        except Failed as exc:
            self.leave(index)
            raise RunFailed(f"unit {exc.index + 1} failed in this eval and unit {index + 1} "
                            "is decided from its outcome: nothing was asked for it; a retry "
                            "(eval-retry) plays both") from None
        except BaseException:
            self.leave(index)
            raise
        if got is None:
            self.leave(index)
            return None
        self.pinned.setdefault(index, got[0])
        return got

    def begin(self, index: int) -> U:
        """The sample begins unit `index`: it is pinned for every later attempt."""
        if index not in self.kept:
            self._keep(index, None)
            self.kept.add(index)
        return self.pinned[index]

    def conclude(self, index: int, outcome: V | Lost | None, failed: bool = False) -> None:
        """Unit `index` ended (`outcome`; LOST: it never will have one in this run; None:
        cut short, a retry plays it; `failed`: its sample failed): kept, and the decisions
        waiting for it go on."""
        if outcome is not None:
            row: Any = LOST_ROW if isinstance(outcome, Lost) else outcome
            self.settled[index] = row
            self.kept.add(index)
            self._keep(index, row)
        elif failed:
            self.failed.add(index)
        self.leave(index)

    def busy(self) -> bool:
        """Whether a sample of this eval is deciding or playing a unit, or is yet to start
        (the run its samples share stays open for it). A failed sample in an eval that
        fails on errors ends it: no later sample will play, so none is waited for."""
        if self.failed and not self.tolerant:
            return bool(self.running)
        return bool(self.running) or not self.ids <= self.seen | set(self.settled)

    def leave(self, index: int) -> None:
        """Unit `index`'s sample is no longer playing it."""
        self.running.discard(index)
        self._wake()

    def _wake(self) -> None:
        changed, self.changed = self.changed, anyio.Event()
        changed.set()

    async def _wait(self, index: int, unseen: int | None) -> None:
        """Until an outcome is in or a sample starts. When every sample deciding or
        playing waits, one of them for unit `unseen` whose sample has not started, and
        nothing changes for STALL_S, that unit is read as lost for the decisions (it is
        still played, and rated, when its sample starts): Inspect's slots are all taken by
        waiters, and without this none would ever free."""
        self.waiting.add(index)
        try:
            if unseen is None or not self.running <= self.waiting:
                await self.changed.wait()
                return
            with anyio.move_on_after(STALL_S) as scope:
                await self.changed.wait()
            if scope.cancelled_caught and unseen not in self.passed:
                self.passed.add(unseen)
                LOG.warning(PASSED.format(unit=unseen + 1, index=index + 1))
                self._wake()
        finally:
            self.waiting.discard(index)


class Units(Generic[U, V]):
    """The adaptive tasks' early stopping (Inspect's EarlyStopping): per eval of the task
    (a Task object evaluated twice, for two models, or again by eval-set's retries), its
    units; a sample the stop rule does not need is stopped early, and listed so."""

    def __init__(self, mode: str, plan: Callable[[], Plan[U, V]],
                 folder: Callable[[list[str]], Path],
                 held: Callable[[Path, list[str]], Opened],
                 roles: tuple[str, ...] = ()) -> None:
        self.mode = mode  # the task: games, match, puzzles
        self._plan = plan  # a fresh plan for each eval
        self._folder = folder  # the run's folder for the eval's model (its CLI options)
        self._open = held  # the run in a folder, opened for the eval's samples
        self.roles = roles  # the model roles the run's second player takes
        self._lock = threading.Lock()
        self._evals: dict[str, tuple[EvalUnits[U, V], Held]] = {}

    async def start_task(self, task: Any, samples: list[Sample], epochs: int) -> str:
        """This eval's units: its samples, and whether its options are refused."""
        config = task.config
        why = refusal(self.mode, epochs, config.message_limit, config.sample_shuffle)
        ids = {int(s.id) - 1 for s in samples if s.id is not None}
        units: EvalUnits[U, V] = EvalUnits(ids, why, self._plan(), self.mode,
                                           tolerant=tolerates_errors(config))
        with self._lock:
            self._evals[str(task.eval_id)] = (units, Held(lambda: self._opened(units),
                                                          busy=units.busy))
        return f"chess_eval {self.mode} stop rule"

    def _opened(self, units: EvalUnits[U, V]) -> Opened:
        assert units.folder is not None and units.model is not None
        return self._open(units.folder, units.model)

    def load(self, units: EvalUnits[U, V]) -> None:
        """The eval's model made the one its run asks (in this sample), and the run's
        folder read, once."""
        model = activate(self.roles)
        if units.folder is None:
            units.load(self._folder(model), model)

    def of_eval(self) -> tuple[EvalUnits[U, V], Held]:
        """The units of the eval this sample belongs to, and the run its samples share."""
        active = active_sample()
        with self._lock:
            return self._evals[str(active.eval_id)]

    async def schedule_sample(self, id: int | str, epoch: int) -> EarlyStop | None:
        """An EarlyStop when the stop rule is met before this sample's unit; else None (its
        solver plays the unit decided for it). A refused eval's samples run (and fail at
        once, in one line, before any request)."""
        units, held = self.of_eval()
        if units.refused is not None or epoch > 1:
            return None
        try:
            self.load(units)
        except Exception:  # noqa: BLE001 - its solver fails with it, in one line
            return None
        if subset_hole(units.ids, units.settled, self.mode == "match") is not None:
            return None
        try:
            got = await units.decide(int(id) - 1)
        except RunFailed:  # its solver decides again, and fails with it in one line
            return None
        if got is not None:
            return None
        await held.idle()  # the last sample stopped early: the run's books are written
        return EarlyStop(id=id, epoch=epoch, reason=NOT_NEEDED)

    async def complete_sample(self, id: int | str, epoch: int, scores: Any) -> None:
        """Nothing more: the sample's solver has settled its unit (its outcome is in the
        plan, and in units.db, before the sample is scored)."""

    async def complete_task(self) -> dict[str, Any]:
        """Nothing to add to the log (its early stops list the units not needed)."""
        return {}


def tolerates_errors(config: Any) -> bool:
    """Whether an eval goes on past a failed sample (its EvalConfig's fail_on_error is a
    count or fraction above one error, or False; or it scores or continues on errors)."""
    return (config.fail_on_error not in (None, True) or config.continue_on_fail is True
            or config.score_on_error is True)


def as_json(value: Any) -> Any:
    """A value as the store keeps it (what a plan's outcome must be)."""
    return json.loads(json.dumps(value))


def subset_hole(ids: set[int], settled: dict[int, Any], pairs: bool) -> str | None:
    """Why this eval's samples cannot be rated as a run (None: they can): a unit before the
    last it holds that neither it nor an earlier attempt plays (the run plays its units in
    order: --sample-id must not leave one out), or, in a match, half a pair."""
    have = ids | set(settled)
    holes = [j + 1 for j in range(max(ids, default=-1)) if j not in have]
    if holes:
        return (f"sample {holes[0]} is left out: the run decides each unit from those before "
                "it, so a subset of samples must be the first ones (--limit N, or "
                "--sample-id 1-N)")
    if pairs:
        half = sorted(j + 1 for j in ids if j ^ 1 not in have)
        if half:
            return (f"sample {half[0]} is half a pair: a match is rated by colour-reversed "
                    "pairs, so a subset must hold both games of each (an even --limit)")
    return None


async def unit_of(task: Units[U, V], epoch: int, index: int, one_epoch: str
                  ) -> tuple[EvalUnits[U, V], Held, U] | None:
    """This sample's eval, its shared run and its unit: the one its scheduling decided, else
    decided now (None: not needed). RunFailed, before any request, when the eval's options
    are refused, for a second epoch (`one_epoch` says why not), or for a subset of samples
    that cannot be rated."""
    units, held = task.of_eval()
    if units.refused is not None:
        raise RunFailed(units.refused)
    if epoch > 1:
        raise RunFailed(one_epoch)
    task.load(units)
    why = subset_hole(units.ids, units.settled, task.mode == "match")
    if why is not None:
        raise RunFailed(f"chess_eval/{task.mode}: {why}")
    if units.settled.get(index) == LOST_ROW:
        raise RunFailed(f"unit {index + 1} ended without an outcome in an earlier attempt "
                        "(a limit, or an error the eval tolerated) and later units were "
                        "decided from that: it stays unrated, as the CLI leaves an aborted "
                        "one")
    if index in units.running and index in units.pinned:
        return units, held, units.pinned[index]
    try:
        got = await units.decide(index)
    except RunFailed:
        await held.idle()
        raise
    if got is None:
        await held.idle()
        return None
    return units, held, got[0]


def over_limit() -> bool:
    """Whether this sample has used up one of its limits (time, working time, tokens,
    cost): a unit it cuts short stays so on a retry, which would hit the same limit."""
    try:
        limits = sample_limits()
    except RuntimeError:  # not in a sample: no limits
        return False
    return any(lim.limit is not None and lim.usage >= lim.limit
               for lim in (limits.time, limits.working, limits.token, limits.cost))


async def played_unit(units: EvalUnits[U, V], held: Held, index: int,
                      play: Callable[[Any, int, U], Any]) -> V | None:
    """Unit `index` played in the eval's shared run (`await play(run, index, unit)`: its
    outcome, None when it was cut short), settled in the plan and units.db before the run
    is let go, however it ends: a limit leaves it lost for good, a cancellation (Ctrl-C)
    with no outcome for a retry to play, an error failed."""
    outcome: V | None = None
    async with held() as run:
        try:
            unit = units.begin(index)
            outcome = await play(run, index, unit)
        except anyio.get_cancelled_exc_class():
            units.conclude(index, LOST if over_limit() else None)
            raise
        except BaseException as exc:
            limit = isinstance(exc, LimitExceededError) or over_limit()
            units.conclude(index, LOST if limit else None, failed=not limit)
            raise
        units.conclude(index, outcome, failed=outcome is None)
    return outcome
