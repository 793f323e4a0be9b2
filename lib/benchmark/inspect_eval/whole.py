"""chess_eval/worldmodel: the mode's whole run as one sample.

The run is the CLI's own handler (`benchmark.py puzzles` or `worldmodel`), asking the eval's
model: its every request lands in the sample's transcript, and the result it writes (the
CLI's JSON, under the task's `out`, else a temporary folder) is the score's metadata, from
which the metrics are read.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from lib.benchmark.core.chat import DEFAULT_MAX_TOKENS
from lib.benchmark.inspect_eval.sample import RunFailed, activate, in_thread, mode_args

# Each mode's headline figures: metric name -> path into its result (a last key of "value",
# "lo" or "hi" is one end of a 90% interval, or of a 95% one where the result says so).
FIGURES: dict[str, dict[str, tuple[str, ...]]] = {
    "worldmodel": {"world_model_score": ("score", "score"), "illegal_rate_t0": ("t0", "rate"),
                   "b_in_a": ("self_consistency", "b_in_a", "value"),
                   "b_in_a_lo": ("self_consistency", "b_in_a", "lo"),
                   "b_in_a_hi": ("self_consistency", "b_in_a", "hi"),
                   "mirror_agree": ("symmetry", "agree", "value"),
                   "mirror_agree_lo": ("symmetry", "agree", "lo"),
                   "mirror_agree_hi": ("symmetry", "agree", "hi"),
                   "positions": ("positions",)},
}


def whole_task(mode: str, add_parser: Callable[[Any], None], argv: list[str],
               out: str | None) -> Task:
    """The mode's run (`benchmark.py MODE ARGV --model <the eval's>`) as a one-sample task."""
    mode_args(add_parser, mode, argv + ["--model", "inspect:eval"])  # bad options: now
    sample = Sample(id=1, input=f"benchmark.py {mode} {' '.join(argv)}")
    return Task(dataset=MemoryDataset([sample], name=f"chess_eval {mode}"),
                solver=run_solver(mode, add_parser, argv, out), scorer=run_scorer(),
                metrics=[run_metrics(mode)],
                config=GenerateConfig(temperature=0.0, max_tokens=DEFAULT_MAX_TOKENS),
                metadata={"chess_eval": mode, "argv": argv})


@solver
def run_solver(mode: str, add_parser: Callable[[Any], None], argv: list[str],
               out: str | None) -> Solver:
    """Run the mode's handler on a worker thread, asking the eval's model."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = activate()
        with tempfile.TemporaryDirectory(prefix=f"chess_eval_{mode}_") as scratch:
            folder = Path(out or scratch)
            args = mode_args(add_parser, mode, argv + model + ["--out", str(folder)])
            before = set(folder.glob(f"{mode}__*.json"))
            status = await in_thread(args.handler, args)
            written = sorted(set(folder.glob(f"{mode}__*.json")) - before) or \
                sorted(folder.glob(f"{mode}__*.json"), key=lambda p: p.stat().st_mtime)[-1:]
            result = json.loads(written[-1].read_text(encoding="utf-8"))
        if status:
            raise RunFailed(f"benchmark.py {mode} ended with exit status {status}: "
                            f"{result.get('incomplete_reason') or 'incomplete'}")
        store().set("result", result)
        store().set("file", written[-1].name)
        return state
    return solve


@scorer(metrics=[])
def run_scorer() -> Scorer:
    """The run's result (the CLI's JSON) as the score's metadata."""
    async def score(state: TaskState, target: Target) -> Score:
        result = store().get("result")
        return Score(value={"complete": float(bool(result["complete"]))},
                     explanation=f"{result['kind']} run of {result['model']}",
                     metadata={"result": result, "file": store().get("file")})
    return score


def figure(result: dict[str, Any], path: tuple[str, ...]) -> float | None:
    """The figure at `path` in a result, or None."""
    value: Any = result
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return float(value) if isinstance(value, int | float) else None


@metric
def run_metrics(mode: str) -> Metric:
    """The mode's headline figures, read from its result."""
    def compute(scores: list[SampleScore]) -> Any:
        results = [s.score.metadata["result"] for s in scores if s.score.metadata]
        if not results:
            return {}
        return {name: figure(results[0], path) for name, path in FIGURES[mode].items()}
    return compute
