"""chess_eval/static: the static test, one sample per question, scored by the product's own
parsing and grading, its metrics by the product's own aggregate (the same 90% intervals as
`benchmark.py run`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from chess_eval.benchmark.core.data import QUESTIONS
from chess_eval.benchmark.core.prompts import TEMPLATES
from chess_eval.benchmark.core.scoring import Item, aggregate, score_item
from chess_eval.benchmark.inspect_eval.sample import (
    Checks,
    mode_args,
    options_check,
    request_argv,
)
from chess_eval.benchmark.model.inspect_backend import FINISH, endpoint_of
from chess_eval.benchmark.model.interface import DEFAULT_MAX_TOKENS
from chess_eval.benchmark.players.protocols import PGN_MAX_TOKENS, GameProtocol
from chess_eval.benchmark.question.answers import Category
from chess_eval.benchmark.question.questions import Question, load_questions
from chess_eval.benchmark.static import cli
from chess_eval.benchmark.static.run import static_questions

METRICS = ("accuracy", "legal_rate", "acpl", "best_move_rate")  # each with _lo and _hi


def static_task(limit: int | None, split: str, protocol: str, prompt: str, seed: int,
                questions: str | None) -> Task:
    """The static test as an Inspect task: the questions `benchmark.py run` would ask with
    the same options, their prompts, and its grading."""
    argv = ["--split", split, "--protocol", protocol, "--prompt", prompt, "--seed", str(seed),
            "--questions", questions or str(QUESTIONS)]
    argv += ["--limit", str(limit)] if limit is not None else []
    config = cli.static_config(mode_args(cli.add_parser, "run", argv + ["--model",
                                                                        "inspect:eval"]))
    chosen = static_questions(config)
    render = TEMPLATES[config.template]
    pgn = config.protocol == GameProtocol.PGN
    samples = [Sample(id=q.id, input=render(q), target=max(q.expected, key=lambda m: q.expected[m]),
                      metadata={"source": q.source, "elo_bucket": q.elo_bucket,
                                "phase": q.phase}) for q in chosen]
    checks = Checks("static")
    return Task(dataset=MemoryDataset(samples, name="chess_eval static"),
                solver=[options_check(checks, "chess_eval/static runs one epoch: its figures come "
                                      "from one answer a question (raise limit for more)"),
                        generate()],
                scorer=static_scorer(str(config.questions), pgn),
                metrics=[static_metrics(seed, config.bootstrap)],
                config=GenerateConfig(temperature=0.0,
                                      max_tokens=PGN_MAX_TOKENS if pgn else DEFAULT_MAX_TOKENS),
                early_stopping=checks, metadata={"chess_eval": "static", "argv": argv})


@scorer(metrics=[])
def static_scorer(questions: str, pgn: bool) -> Scorer:
    """Each answer parsed and graded as `benchmark.py run` grades it (the item in the score's
    metadata)."""
    by_id: dict[str, Question] = {q.id: q for q in load_questions(Path(questions))}

    async def score(state: TaskState, target: Target) -> Score:
        output = state.output
        item = score_item(by_id[str(state.sample_id)], output.completion, None,
                          state.input_text, FINISH.get(output.stop_reason), pgn)
        return Score(value={"legal": float(item.category == Category.LEGAL),
                            "accuracy": item.accuracy or 0.0, "best": float(bool(item.best))},
                     answer=item.move, explanation=item.detail,
                     metadata={"item": item.as_dict(), "endpoint": endpoint_of(get_model()),
                               "request": request_argv()})
    return score


@metric
def static_metrics(seed: int = 0, bootstrap: int = 1000) -> Metric:
    """accuracy, legal_rate, acpl and best_move_rate, each with its 90% interval (_lo, _hi),
    and n: the product's aggregate over the items in id order, as `benchmark.py run`."""
    def compute(scores: list[SampleScore]) -> Any:
        items = sorted((Item.stored(s.score.metadata["item"]) for s in scores
                        if s.score.metadata), key=lambda i: i.id)
        figures = aggregate(items, seed, bootstrap)
        out: dict[str, float | None] = {"n": figures["n"]}
        for name in METRICS:
            part = figures.get(name)
            if part:
                out.update({name: part["value"], f"{name}_lo": part["lo"],
                            f"{name}_hi": part["hi"]})
        return out
    return compute
