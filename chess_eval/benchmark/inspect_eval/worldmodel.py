"""chess_eval/worldmodel: the world-model tests of `benchmark.py worldmodel`, each position
one sample.

A sample asks its position every prompt of the three tests (the move, its mirror, the move
at each temperature, prompt A's list and prompt B's choice) through the CLI's own
`ask_tests`, with the players and cache the eval's samples share; the metrics merge the
samples' answers into one run's (in question order, as the CLI orders them) and read the
CLI's own figures from them.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from chess_eval.benchmark.core.data import QUESTIONS
from chess_eval.benchmark.core.run import Run
from chess_eval.benchmark.core.scoring import Item
from chess_eval.benchmark.inspect_eval.sample import (
    Checks,
    Held,
    RunFailed,
    activate,
    mode_args,
    request_argv,
    run_dir,
    until_stopped,
)
from chess_eval.benchmark.model.inspect_internals import active_sample
from chess_eval.benchmark.model.interface import DEFAULT_MAX_TOKENS
from chess_eval.benchmark.players.player import budget_of
from chess_eval.benchmark.question.questions import Question, load_questions, select
from chess_eval.benchmark.worldmodel import cli
from chess_eval.benchmark.worldmodel.prompts import Listed
from chess_eval.benchmark.worldmodel.run import Answers, ask_tests, merged, summarise

# The headline figures: metric name -> path into the CLI's summary.
FIGURES: dict[str, tuple[str, ...]] = {
    "world_model_score": ("score", "score"), "illegal_rate_t0": ("t0", "rate"),
    "b_in_a": ("self_consistency", "b_in_a", "value"),
    "b_in_a_lo": ("self_consistency", "b_in_a", "lo"),
    "b_in_a_hi": ("self_consistency", "b_in_a", "hi"),
    "mirror_agree": ("symmetry", "agree", "value"),
    "mirror_agree_lo": ("symmetry", "agree", "lo"),
    "mirror_agree_hi": ("symmetry", "agree", "hi")}


class EvalRun:
    """One eval's run of the tests while its samples ask (units.Held): the CLI's setup (its
    players at every temperature, made once, so each is checked once), its answer cache and
    the run that owns them."""

    def __init__(self, argv: list[str], model: list[str]) -> None:
        # Outlives the eval; one folder whatever the limit: a position's prompts are the same
        # in any selection that holds it, so a larger limit buys only the positions added.
        folder = run_dir("worldmodel", argv, model, unkeyed=("--limit",))
        args = worldmodel_args(argv + model + ["--out", str(folder)])
        self.setup = setup = cli.worldmodel_setup(args)
        with ExitStack() as held:  # left at once when it cannot start: nothing was asked
            self.run = held.enter_context(Run(folder, [("worldmodel", "",
                                                        budget_of(setup.base))]))
            self.run.owns(setup)
            # One process at a time asks this run's prompts (a second eval fails in a line).
            self.run.claim(folder / "cache.db", f"worldmodel {setup.name}",
                           f"the world-model run {setup.name}")
            for t in (*args.temperatures, args.temperature):
                setup.at(t)
            self.cache = self.run.store(folder / "cache.db", "answers")
            self._held = held.pop_all()

    def close(self) -> None:
        """Leave the run: the requests in flight land, the cache closes, the books."""
        self._held.close()


class PositionsRun(Checks):
    """A task's runs, one per eval of it (a Task object evaluated twice, or for two models,
    runs twice, each claiming its folder's cache and keeping its own books), open while its
    samples ask."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__("worldmodel")
        self.argv = argv
        self._runs: dict[str, Held] = {}

    def held(self, model: list[str]) -> Held:
        """This eval's shared run (opened by a sample, with the eval's model)."""
        active = active_sample()
        key = "" if active is None else str(active.eval_id)
        with self._lock:
            if key not in self._runs:
                self._runs[key] = Held(lambda: EvalRun(self.argv, model))
            return self._runs[key]


def worldmodel_args(argv: list[str]) -> argparse.Namespace:
    """`benchmark.py worldmodel ARGV`'s options."""
    return mode_args(cli.add_parser, "worldmodel", argv)


def worldmodel_task(limit: int | None, seed: int, endpoint_id: str | None = None) -> Task:
    """The world-model tests as an Inspect task: the positions `benchmark.py worldmodel`
    asks with the same options, one sample each."""
    argv = ["--seed", str(seed), "--questions", str(QUESTIONS)]
    argv += ["--endpoint-id", endpoint_id] if endpoint_id else []
    argv += ["--limit", str(limit)] if limit is not None else []
    args = worldmodel_args(argv + ["--model", "inspect:eval"])
    chosen = select(load_questions(args.questions), "all", [], args.limit, args.seed)
    run = PositionsRun(argv)
    dataset = MemoryDataset([Sample(id=q.id, input=f"position {q.fen}") for q in chosen],
                            name="chess_eval worldmodel")
    return Task(dataset=dataset, solver=position_solver(run, {q.id: q for q in chosen}),
                scorer=position_scorer(), metrics=[worldmodel_metrics(argv)],
                config=GenerateConfig(temperature=0.0, max_tokens=DEFAULT_MAX_TOKENS),
                early_stopping=run, metadata={"chess_eval": "worldmodel", "argv": argv})


@solver
def position_solver(run: PositionsRun, questions: dict[str, Question]) -> Solver:
    """Every prompt of the three tests on this sample's position (one epoch: a second would
    ask the same prompts again, some at once with the first, and pay for them twice)."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        run.check(state.epoch, "chess_eval/worldmodel runs one epoch: its statistics come "
                  "from one answer a prompt (raise -T limit for more positions)")
        async with run.held(activate())() as mine:
            setup, question = mine.setup, questions[str(state.sample_id)]
            # The position's requests through a gate of its own (a child of the run's): a
            # limit or Ctrl-C that cancels the sample closes it, the replies in flight land.
            gate = mine.run.gate.child()
            config = replace(setup.config, preflight=False)  # Inspect made the model already
            part = await until_stopped(ask_tests, setup.at, [question], mine.cache, config,
                                       gate, stop=gate.close)
        if part.infra:  # the CLI's run would be incomplete: this sample fails
            raise RunFailed(f"{part.infra} requests on {question.id} failed for "
                            "infrastructure reasons")
        store().set("answers", {"endpoint": setup.base.answered_by,
                                "request": request_argv(), "answers": answers_json(part)})
        return state
    return solve


@scorer(metrics=[])
def position_scorer() -> Scorer:
    """Whether every answer on the position was legal (the answers in the metadata)."""
    async def score(state: TaskState, target: Target) -> Score:
        asked = store().get("answers")
        part = answers_from(asked["answers"])
        items = [*part.original, *part.mirror, *part.chosen.values()]
        illegal = [i for i in items if i.move is None]
        return Score(value=float(not illegal),
                     explanation=f"{len(items) - len(illegal)} of {len(items)} answers legal",
                     metadata={"answers": asked})
    return score


def answers_json(a: Answers) -> dict[str, Any]:
    """A position's answers as JSON (the score's metadata)."""
    def items(xs: list[Item]) -> list[dict[str, Any]]:
        return [x.as_dict() for x in xs]
    return {"original": items(a.original), "mirror": items(a.mirror),
            "by_temperature": [[t, items(xs)] for t, xs in a.by_temperature.items()],
            "lists": {k: {"claimed": list(v.claimed), "legal": sorted(v.legal),
                          "truth": sorted(v.truth)} for k, v in a.lists.items()},
            "chosen": {k: v.as_dict() for k, v in a.chosen.items()},
            "infra": a.infra, "truncated_lists": a.truncated_lists, "replies": a.replies}


def answers_from(data: dict[str, Any]) -> Answers:
    """A position's answers from their JSON form."""
    def items(xs: list[dict[str, Any]]) -> list[Item]:
        return [Item.stored(x) for x in xs]
    return Answers(
        original=items(data["original"]), mirror=items(data["mirror"]),
        by_temperature={float(t): items(xs) for t, xs in data["by_temperature"]},
        lists={k: Listed(tuple(v["claimed"]), frozenset(v["legal"]), frozenset(v["truth"]))
               for k, v in data["lists"].items()},
        chosen={k: Item.stored(v) for k, v in data["chosen"].items()},
        infra=data["infra"], truncated_lists=data["truncated_lists"],
        replies=data["replies"])


def answers_of(scores: list[dict[str, Any]]) -> Answers:
    """The samples' answers (each score's metadata) merged as one run's."""
    return merged([answers_from(m["answers"]["answers"]) for m in scores
                   if m.get("answers")])


def figure(summary: dict[str, Any], path: tuple[str, ...]) -> float | None:
    """The figure at `path` in the summary, or None."""
    value: Any = summary
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return float(value) if isinstance(value, int | float) else None


@metric
def worldmodel_metrics(argv: list[str]) -> Metric:
    """world_model_score, illegal_rate_t0, b_in_a and mirror_agree with their intervals, and
    positions: the CLI's summary of the merged answers."""
    def compute(scores: list[SampleScore]) -> Any:
        args = worldmodel_args(argv + ["--model", "inspect:eval"])
        answers = answers_of([s.score.metadata or {} for s in scores])
        summary = summarise(answers, cli.worldmodel_config(args, baseline=False))
        return {**{name: figure(summary, path) for name, path in FIGURES.items()},
                "positions": len(answers.original)}
    return compute
