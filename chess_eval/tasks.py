"""The registered tasks: each parses its arguments and builds the task in chess_eval.benchmark
(thin, as every entry point here). `inspect eval chess_eval/static --model ...` runs one by name.

Inspect imports this module at the start of every eval it runs (the entry point registers the
tasks), ours or not: each task imports what builds it only when it is built, so an eval pays
for the modules of its own task alone (the games' ladder and statistics are the dearest)."""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.scorer import Metric, Scorer, metric, scorer

from chess_eval.benchmark.inspect_eval.sample import build, refuse_unknown


@task
def static(limit: int | None = None, split: str = "all", protocol: str = "fen",
           prompt: str = "fen", seed: int = 0, questions: str | None = None,
           **unknown: Any) -> Task:
    """The static test: one move per position of questions.csv (or a seeded `limit` of them),
    scored by accuracy, legal rate, ACPL and best-move rate with 90% intervals."""
    refuse_unknown("static", static, unknown)
    from chess_eval.benchmark.inspect_eval.static import static_task

    return build("static", static_task, limit, split, protocol, prompt, seed, questions)


@task
def games(protocol: str = "fen", max_games: int | None = None, target: float | None = None,
          ladder: str | None = None, concurrency: int = 2, seed: int = 0,
          condition: str = "standard", endpoint_id: str | None = None, **unknown: Any) -> Task:
    """Games against the reference ladder, rated as `benchmark.py play` rates them (its
    sampler, estimator and stop rule): elo, elo_lo and elo_hi (90%, the ladder's error
    included), each game one sample."""
    refuse_unknown("games", games, unknown)
    from chess_eval.benchmark.inspect_eval.games import games_task

    return build("games", games_task, protocol, max_games, target, ladder, concurrency, seed,
                 condition, endpoint_id)


@task
def match(protocol: str = "fen", max_games: int | None = None, target: float | None = None,
          concurrency: int = 1, seed: int = 0, endpoint_id: str | None = None,
          opponent_protocol: str | None = None, opponent_temperature: float | None = None,
          opponent_max_tokens: int | None = None, opponent_reasoning_effort: str | None = None,
          opponent_system: str | None = None, **unknown: Any) -> Task:
    """The eval's model against `--model-role opponent=PROVIDER/MODEL` in colour-reversed
    pairs, as `benchmark.py match` plays them: the first player's score and the Elo
    difference with 90% intervals from the pairs, each game one sample. Each opponent_X is
    match's --opponent-X (default: the eval's setting, as the first player's)."""
    refuse_unknown("match", match, unknown)
    from chess_eval.benchmark.inspect_eval.match import match_task

    return build("match", match_task, protocol, max_games, target, concurrency, seed,
                 endpoint_id, {"protocol": opponent_protocol, "temperature": opponent_temperature,
                               "max_tokens": opponent_max_tokens,
                               "reasoning_effort": opponent_reasoning_effort,
                               "system": opponent_system})


@task
def puzzles(max_puzzles: int | None = None, target: float | None = None,
            seed: int = 0, endpoint_id: str | None = None, **unknown: Any) -> Task:
    """Whole Lichess puzzle lines chosen adaptively, as `benchmark.py puzzles` plays them:
    puzzle_elo with its 90% interval (Lichess puzzle ratings), each line one sample."""
    refuse_unknown("puzzles", puzzles, unknown)
    from chess_eval.benchmark.inspect_eval.puzzles import puzzles_task

    return build("puzzles", puzzles_task, max_puzzles, target, seed, endpoint_id)


@task
def worldmodel(limit: int | None = None, seed: int = 0, endpoint_id: str | None = None,
               **unknown: Any) -> Task:
    """The world-model tests of `benchmark.py worldmodel` (self-consistency, mirror
    symmetry, temperature): the world-model score and its parts, each position one sample."""
    refuse_unknown("worldmodel", worldmodel, unknown)
    from chess_eval.benchmark.inspect_eval.worldmodel import worldmodel_task

    return build("worldmodel", worldmodel_task, limit, seed, endpoint_id)


# The scorers and metrics by the names the tasks' logs record them under, so that `inspect
# score` (which finds them through this entry point alone) re-scores a log; each builds the
# one its task module defines, imported only when it is asked for.
@scorer(metrics=[])
def static_scorer(questions: str, pgn: bool) -> Scorer:
    """The static task's scorer (inspect_eval.static)."""
    from chess_eval.benchmark.inspect_eval import static as made

    return made.static_scorer(questions, pgn)


@metric
def static_metrics(seed: int = 0, bootstrap: int = 1000) -> Metric:
    """The static task's metrics (inspect_eval.static)."""
    from chess_eval.benchmark.inspect_eval import static as made

    return made.static_metrics(seed, bootstrap)


@scorer(metrics=[])
def game_scorer() -> Scorer:
    """The games task's scorer (inspect_eval.games)."""
    from chess_eval.benchmark.inspect_eval import games as made

    return made.game_scorer()


@metric
def games_metrics(argv: list[str]) -> Metric:
    """The games task's metrics (inspect_eval.games)."""
    from chess_eval.benchmark.inspect_eval import games as made

    return made.games_metrics(argv)


@scorer(metrics=[])
def match_scorer() -> Scorer:
    """The match task's scorer (inspect_eval.match)."""
    from chess_eval.benchmark.inspect_eval import match as made

    return made.match_scorer()


@metric
def match_metrics() -> Metric:
    """The match task's metrics (inspect_eval.match)."""
    from chess_eval.benchmark.inspect_eval import match as made

    return made.match_metrics()


@scorer(metrics=[])
def line_scorer() -> Scorer:
    """The puzzles task's scorer (inspect_eval.puzzles)."""
    from chess_eval.benchmark.inspect_eval import puzzles as made

    return made.line_scorer()


@metric
def puzzles_metrics(argv: list[str]) -> Metric:
    """The puzzles task's metrics (inspect_eval.puzzles)."""
    from chess_eval.benchmark.inspect_eval import puzzles as made

    return made.puzzles_metrics(argv)


@scorer(metrics=[])
def position_scorer() -> Scorer:
    """The worldmodel task's scorer (inspect_eval.worldmodel)."""
    from chess_eval.benchmark.inspect_eval import worldmodel as made

    return made.position_scorer()


@metric
def worldmodel_metrics(argv: list[str]) -> Metric:
    """The worldmodel task's metrics (inspect_eval.worldmodel)."""
    from chess_eval.benchmark.inspect_eval import worldmodel as made

    return made.worldmodel_metrics(argv)
