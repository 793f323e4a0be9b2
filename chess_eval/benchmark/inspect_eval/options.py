"""The eval options a chess_eval task refuses, read when the task starts: every sample of an
eval that set one fails at once, in one line, before any request.

Every figure of the five tasks is the CLI's, from one answer a prompt: the adaptive tasks
(games, match, puzzles) and worldmodel take their units from one run, so a second epoch would replay
it (or buy every prompt again for the same figures), and static's metrics read one answer a
question (Inspect's reducer would keep one epoch's and drop the rest it paid for). So
`--epochs` above 1 is refused. The requests of games, match, puzzles and worldmodel are not messages
of the sample's conversation (each game or position keeps its own), so `--message-limit`
could never trip there, and is refused rather than silently ignored. The eval's options reach
a sample only through this hook (Inspect passes a sample its limits, not the eval's epochs).
The adaptive tasks (games, match, puzzles) play unit k in sample k + 1, each after the ones before
it: `--sample-shuffle` would start later samples first, waiting for earlier ones that cannot
start, so it is refused there too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
from inspect_ai.hooks import Hooks, RunEnd, TaskEnd, TaskStart, hooks

from chess_eval.benchmark.model.inspect_internals import active_sample

TASKS = ("static", "games", "match", "puzzles", "worldmodel")
# The tasks whose requests are not the sample's messages (each unit keeps its own).
OWN_MESSAGES = ("games", "match", "puzzles", "worldmodel")
ADAPTIVE = ("games", "match", "puzzles")  # the tasks whose samples play their units in order

_lock = threading.Lock()
_refused: dict[str, str] = {}  # eval id -> why its samples may not run
_evals: dict[str, list[str]] = {}  # run id -> the evals it started
_enders: dict[str, list[Callable[[], None]]] = {}  # eval id -> what to call when it ends


def when_ended(eval_id: str, fn: Callable[[], None]) -> None:
    """Call `fn` once the eval has ended, however it ended (a success, an error, Ctrl-C):
    Inspect says when its task ends only on success, and when its run ends always."""
    with _lock:
        _enders.setdefault(eval_id, []).append(fn)


async def _ended(eval_ids: list[str]) -> None:
    with _lock:
        fns = [fn for e in eval_ids for fn in _enders.pop(e, [])]
        for e in eval_ids:
            _refused.pop(e, None)
    # Off the eval's loop, and awaited: a run ending waits for its replies in flight, which
    # land on this loop, then writes its books; the process must not exit before it has.
    # Shielded: after Ctrl-C the run's scope is cancelled, and the wait is bounded (RUN_END_S).
    with anyio.CancelScope(shield=True):
        for fn in fns:
            await anyio.to_thread.run_sync(fn)


def refusal(task: str, epochs: int | None, message_limit: int | None,
            shuffle: object = None) -> str | None:
    """Why an eval of chess_eval/TASK with these options may not run (None: it may)."""
    if task not in TASKS:
        return None
    if shuffle not in (None, False) and task in ADAPTIVE:
        return (f"chess_eval/{task} refuses --sample-shuffle: sample k plays the run's k-th "
                "unit, after the ones before it, so samples must start in order")
    if epochs is not None and epochs > 1:
        return (f"chess_eval/{task} runs one epoch (--epochs {epochs} refused): its figures "
                "come from one answer a prompt; raise limit, max_games, max_puzzles or target "
                "for more")
    if message_limit is not None and task in OWN_MESSAGES:
        return (f"chess_eval/{task} refuses --message-limit: its requests are not messages "
                "of the sample's conversation, so the limit could never stop one; use "
                "--token-limit, --time-limit or --cost-limit")
    return None


@hooks(name="chess_eval_options",
       description="refuses eval options the chess_eval tasks cannot honour, before any request")
class OptionsCheck(Hooks):
    """Records, per eval of a chess_eval task, whether its options are refused."""

    async def on_task_start(self, data: TaskStart) -> None:
        """Read the eval's options as the task starts (before its samples run)."""
        name = data.spec.task_registry_name or data.spec.task
        if not name.startswith("chess_eval/"):
            return
        with _lock:
            _evals.setdefault(data.run_id, []).append(data.eval_id)
        why = refusal(name.split("/", 1)[1], data.spec.config.epochs,
                      data.spec.config.message_limit, data.spec.config.sample_shuffle)
        if why is not None:
            with _lock:
                _refused[data.eval_id] = why

    async def on_task_end(self, data: TaskEnd) -> None:
        """The eval has ended (successfully)."""
        await _ended([data.eval_id])

    async def on_run_end(self, data: RunEnd) -> None:
        """The run has ended, and with it every eval it started."""
        with _lock:
            evals = _evals.pop(data.run_id, [])
        await _ended(evals)



def refused_here() -> str | None:
    """Why this sample's eval may not run, or None."""
    active = active_sample()
    if active is None:
        return None
    with _lock:
        return _refused.get(active.eval_id)

