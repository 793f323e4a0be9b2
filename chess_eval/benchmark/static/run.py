"""The static run: ask every selected question, score the answers, estimate, write the files.

questions -> the player (through the core's runner and cache, traces written as answers come)
-> scored items -> aggregates, Elo estimates and the predicted game Elo -> StaticResult ->
JSON and markdown report.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, Any

from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.progress import Progress
from chess_eval.benchmark.core.prompts import TEMPLATES
from chess_eval.benchmark.core.results import run_name
from chess_eval.benchmark.core.run import CircuitOpen, Run, finish
from chess_eval.benchmark.core.runner import Outcome, ask_all, stored_answers, trace_record
from chess_eval.benchmark.core.scoring import (
    Item,
    aggregate,
    by_strata,
    elo_estimates,
    floor_figures,
    illegal_counts,
    illegal_rate,
    score_item,
    scored_count,
)
from chess_eval.benchmark.model import cost
from chess_eval.benchmark.model.cost import Price
from chess_eval.benchmark.model.interface import FatalInfraError, ModelConfig
from chess_eval.benchmark.players.player import (
    Completing,
    ModelPlayer,
    Player,
    budget_of,
    budget_stop,
    make_player,
)
from chess_eval.benchmark.players.protocols import PGN_MAX_TOKENS, GameProtocol
from chess_eval.benchmark.question.answers import Category
from chess_eval.benchmark.question.questions import Question, load_questions, select
from chess_eval.benchmark.static.prediction import load_fit, predict_result
from chess_eval.benchmark.static.report import markdown_report, summary_table
from chess_eval.benchmark.static.result import StaticResult
from chess_eval.cluster import ClusterSettings
from chess_eval.errors import ConfigError
from chess_eval.files import atomic_write, ensure_writable_dir, sha256_file
from chess_eval.kvstore import JsonStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StaticConfig:
    """What one static run asks, of whom, and where it writes."""

    model: str  # model name at the endpoint, or a baseline
    questions: Path  # the test set
    template: str  # prompt template, name@version
    split: str  # public, private or all
    filters: tuple[str, ...]  # KEY=VALUE filters on question fields
    limit: int | None  # a seeded sample of this many questions
    seed: int  # seed of the sample, the random player, bootstrap and MCMC
    bootstrap: int  # bootstrap replicates of every interval
    mcmc: bool  # puzzle Elo by MCMC instead of the Laplace approximation
    game_fit: Path  # the ladder's static-to-game fit
    out: Path  # results directory
    cache: Path | None  # response cache (None: OUT/cache.db)
    no_cache: bool  # ask every question again (answers are still stored)
    concurrency: int  # requests in flight at once
    breaker: int  # infrastructure failures in a row that stop the run
    cluster: ClusterSettings  # where a Stockfish player's answers are computed
    stockfish: str | None  # Stockfish binary for baseline players
    protocol: GameProtocol = GameProtocol.FEN  # fen (the template), blind or pgn
    price: Price | None = None  # --price, for answers whose cost the server does not report

    @property
    def cache_path(self) -> Path:
        """The response cache's file."""
        return self.cache or self.out / "cache.db"


def static_questions(config: StaticConfig) -> list[Question]:
    """The questions a run asks: its split, filters and seeded limit (game positions only
    under blind); ConfigError when none is left."""
    questions = load_questions(config.questions)
    if config.protocol == GameProtocol.BLIND:  # blind needs the moves that led to a position
        kept = [q for q in questions if q.history]
        if len(kept) < len(questions):
            log.info("blind: %d questions without the game's moves (puzzles) are left out",
                     len(questions) - len(kept))
        questions = kept
    questions = select(questions, config.split, list(config.filters), config.limit,
                       config.seed)
    if not questions:
        raise ConfigError("no question matches --split/--filter" + (
            " among game positions (blind asks only those)"
            if config.protocol == GameProtocol.BLIND else ""))
    return questions


def run_static(config: StaticConfig, chat: ModelConfig | None,
               player: Player | None = None) -> int:
    """Ask, score, estimate and write the results of one run; the exit status. `player`: a
    model already made (an Inspect log's, its answers in the cache), else --model's."""
    questions = static_questions(config)
    ensure_writable_dir(config.out, "--out")
    settings = _settings(config, chat)
    digest = sha256_file(config.questions)
    player = player or make_player(config.model, chat, config.stockfish, config.seed,
                                   config.cluster.workers)
    if config.protocol == GameProtocol.PGN and isinstance(player, ModelPlayer):
        player = Completing(player, PGN_MAX_TOKENS)
    settings["answered_by"] = player.answered_by  # the endpoint, or the engine and version
    # The endpoint as written is recorded but not keyed: the player's id holds the canonical
    # one, so a resumed run may reach the same server by another name.
    keyed = {k: v for k, v in settings.items() if k != "base_url"}
    name = run_name(file_name(Kind.STATIC, f"{config.model}__{config.template}__{config.split}"),
                    [player.id, keyed, digest])
    with Run(config.out, [(name, "", budget_of(player))]) as run:
        run.owns(player)
        # One process at a time asks this player's questions on its cache (two runs that
        # differ only in which questions, --limit, would buy their shared ones twice).
        run.claim(config.cache_path, f"answers {player.id}", f"a run asking {player.id}")
        items, replies, halted = _ask(config, player, questions, name, run)
        result = _result(config, player.id, settings, digest, items,
                         {q.id: q for q in questions})
        # Stopped on budget only when it left questions unanswered.
        stopped = halted or (budget_stop(player) if len(items) < len(questions)
                             or result.infra else None)
        result = replace(result, usage=cost.summary(replies, config.price), stopped=stopped,
                         complete=result.complete and stopped is None)
        paths = [config.out / f"{name}.json", config.out / f"{name}.md",
                 config.out / "traces" / f"{name}.jsonl"]
        result.write(paths[0])
        report = result.as_dict()
        with atomic_write(paths[1]) as handle:
            handle.write(markdown_report(report))
        print(summary_table(report))
    return finish(run, result, paths)


def _settings(config: StaticConfig, chat: ModelConfig | None) -> dict[str, Any]:
    """Everything that changes the answers or the selection (recorded and in the name)."""
    settings: dict[str, Any] = {"prompt": config.template, "split": config.split,
                                "filters": list(config.filters), "limit": config.limit,
                                "seed": config.seed}
    if config.protocol != GameProtocol.FEN:  # absent from names made before protocols
        settings["protocol"] = str(config.protocol)
    if chat is not None:
        settings.update(temperature=chat.temperature, max_tokens=chat.max_tokens,
                        system=chat.system, stop=list(chat.stop), extra=chat.extra,
                        base_url=chat.base_url)
        if chat.json_answers:
            settings["response_format"] = "json"
        if chat.reasoning_effort:
            settings["reasoning_effort"] = chat.reasoning_effort
    return settings


def _ask(config: StaticConfig, player: Player, questions: list[Question],
         name: str, run: Run) -> tuple[list[Item], list[dict[str, Any]], str | None]:
    """Every question's scored item (those asked before --max-cost ran out), every reply, and
    why the run stopped early (a failure every request would repeat, or the breaker) when it
    did after some answers; traces are written under a temporary name and renamed."""
    cache = run.store(config.cache_path, "answers", _Forgetful if config.no_cache else JsonStore)
    traces_path = config.out / "traces" / f"{name}.jsonl"
    items: list[Item] = []
    replies: list[dict[str, Any]] = []
    halted = None
    traces: IO[str] | None = None
    render = TEMPLATES[config.template]
    progress = Progress(len(questions), f"ask {config.model[:30]}", stored=stored_answers(
        player, config.template, render, questions, cache), where=str(config.cache_path))
    outcomes = ask_all(player, config.template, render, questions, cache,
                       config.concurrency, config.breaker, config.cluster, run.gate)
    try:
        # The traces' file is opened with the first outcome: a run refused before any
        # (its endpoint down) writes nothing.
        with ExitStack() as opened:
            for outcome in _until_halted(outcomes, items):
                if traces is None:
                    traces = opened.enter_context(atomic_write(traces_path, encoding="utf-8"))
                if isinstance(outcome, str):
                    halted = outcome
                    log.error("%s: the answers so far are written", halted)
                    break
                if outcome.unasked:
                    continue  # the budget left no room for it: a rerun asks it
                reply = outcome.reply
                item = score_item(outcome.question, reply.text if reply else None,
                                  outcome.infra_error, outcome.prompt,
                                  reply.finish_reason if reply else None,
                                  config.protocol == GameProtocol.PGN)
                items.append(item)
                if reply is not None:
                    replies.append(asdict(reply))
                progress.update(item.category, outcome.cached)
                traces.write(trace_record(outcome, item.as_dict()) + "\n")
            if traces is None:  # nothing was asked (the budget was spent): an empty trace
                opened.enter_context(atomic_write(traces_path, encoding="utf-8"))
    except BaseException:
        # Replies still in flight land in the cache as the run ends, after this line: it
        # says where they are, not how many (a count here missed those).
        budget = budget_of(player)
        if config.cache_path.exists() or (budget is not None and budget.books.sent):
            # (not where no request reached the endpoint: nothing was bought, nor kept)
            log.info("every answer bought is kept in %s; the same command resumes",
                     config.cache_path)
        raise
    finally:
        progress.close()
    items.sort(key=lambda i: i.id)
    return items, replies, halted


def _until_halted(outcomes: Iterator[Outcome], items: list[Item]) -> Iterator[Outcome | str]:
    """The outcomes, then why they stopped when a failure every request would repeat, or the
    breaker, ends them after some answers (with none, the error is raised: nothing to write)."""
    try:
        yield from outcomes
    except (FatalInfraError, CircuitOpen) as exc:
        if all(i.category == Category.INFRA for i in items):
            raise
        yield str(exc)


class _Forgetful(JsonStore):
    """A cache that stores answers but never returns them (--no-cache)."""

    def get(self, key: str) -> None:
        """Nothing, whatever is stored: every question is asked again."""
        return None


def _result(config: StaticConfig, player_id: str, settings: dict[str, Any], digest: str,
            items: list[Item], questions: dict[str, Question]) -> StaticResult:
    """The run's result record from its scored items."""
    infra = sum(i.category == Category.INFRA for i in items)
    intervals = aggregate(items, config.seed, config.bootstrap)

    def value(name: str) -> float | None:
        return (intervals.get(name) or {}).get("value")
    return StaticResult(
        model=config.model, player=player_id,
        prompt=settings["prompt"], questions=str(config.questions), questions_sha256=digest,
        split=config.split, filters=list(config.filters), limit=config.limit, seed=config.seed,
        settings=settings, complete=infra == 0, n=scored_count(items), asked=len(items),
        legal_rate=value("legal_rate"), acpl=value("acpl"), accuracy=value("accuracy"),
        best_move_rate=value("best_move_rate"),
        puzzle_solve_rate=value("puzzle_solve_rate"), illegal=illegal_counts(items),
        infra=infra, truncated=sum(i.category == Category.TRUNCATED for i in items),
        empty=sum(i.category == Category.EMPTY for i in items),
        max_tokens=settings.get("max_tokens"),
        elo={**elo_estimates(items, questions, config.seed, config.mcmc),
             "predicted_game": _predicted(config, digest, intervals)},
        world_model=illegal_rate(items, settings.get("temperature")),
        floor=floor_figures(list(questions.values()), config.seed),
        intervals={k: v for k, v in intervals.items() if k != "n"},
        by=by_strata(items, config.seed, min(config.bootstrap, 300)), items=items,
        protocol=str(config.protocol))


def _predicted(config: StaticConfig, digest: str,
               intervals: dict[str, Any]) -> dict[str, Any] | None:
    """The game Elo the static-to-game fit predicts from the scores, when it applies."""
    fit = load_fit(config.game_fit)
    if fit is None or "accuracy" not in intervals:
        return None
    if (fit.questions_sha256 != digest or config.split != "all" or config.filters
            or config.limit):
        log.info("no predicted game Elo: the fit in %s applies only to the whole questions "
                 "file it was made on", config.game_fit)
        return None
    return predict_result(fit, intervals).as_dict()
