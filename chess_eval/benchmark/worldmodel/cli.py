"""`benchmark.py worldmodel`: its options and its handler."""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.cli import (
    add_breaker_arg,
    add_chat_args,
    add_model_arg,
    model_config,
    model_label,
)
from chess_eval.benchmark.core.data import questions_path
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import run_name
from chess_eval.benchmark.core.run import Run, finish
from chess_eval.benchmark.core.runner import BREAKER
from chess_eval.benchmark.model.interface import DEFAULT_MAX_TOKENS, ModelConfig
from chess_eval.benchmark.players.player import (
    Player,
    budget_of,
    budget_stop,
    is_baseline,
    make_player,
)
from chess_eval.benchmark.question.questions import Question, load_questions, select
from chess_eval.benchmark.worldmodel.prompts import CHOOSE_TEMPLATE, LIST_TEMPLATE, MOVE_TEMPLATE
from chess_eval.benchmark.worldmodel.result import WorldModelResult
from chess_eval.benchmark.worldmodel.run import Answers, WorldModelConfig, ask_tests, summarise
from chess_eval.benchmark.worldmodel.run import summary as wm_summary
from chess_eval.benchmark.worldmodel.run import write_run as write_wm
from chess_eval.cli import (
    add_engine_args,
    cluster_of,
    positive_int,
)
from chess_eval.files import (
    ensure_writable_dir,
    sha256_file,
)

log = logging.getLogger(__name__)


def temperature_list(text: str) -> tuple[float, ...]:
    """--temperatures: comma-separated non-negative numbers."""
    try:
        values = tuple(dict.fromkeys(float(x) for x in text.split(",") if x.strip()))
    except ValueError:
        values = ()
    if not values or any(v < 0 or v != v for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated temperatures >= 0, got "
                                         f"{text!r}")
    return values


def add_parser(commands: Any) -> None:
    """Options of the world-model tests."""
    p = commands.add_parser(
        "worldmodel", help="the world-model tests (self-consistency, mirror symmetry, temperature)",
        description="The world-model tests (self-consistency, mirror symmetry, temperature) on "
        "a seeded sample of questions.csv: "
        "self-consistency (prompt A lists the legal moves, prompt B chooses from that list), "
        "symmetry (each position and its colour-flipped mirror) and the illegal rate at "
        "several temperatures with a trend test; then the rubric score and the hypothesis "
        "test (H0 pattern matching: illegal rate >= 2% at T = 0) with the power reached. "
        "--temperature is the temperature of the self-consistency and symmetry prompts. "
        "Same client, cache and taxonomy as the static run. Exit status: 0 complete, 2 "
        "error, 3 written but incomplete (rerun to complete), 130 interrupted.")
    add_model_arg(p, " (baselines answer every prompt with a move and ignore the "
                  "temperature)")
    p.add_argument("--questions", type=questions_path, default="questions.csv",
                   help="the test set (default: questions.csv)")
    p.add_argument("--limit", type=positive_int, default=100,
                   help="positions, a seeded sample (default 100)")
    p.add_argument("--temperatures", type=temperature_list, default=(0.0, 0.5, 1.0),
                   help="temperatures of the temperature test (default 0,0.5,1)")
    add_chat_args(p)
    p.add_argument("--concurrency", type=positive_int, default=8,
                   help="requests in flight at once (default 8)")
    add_breaker_arg(p, "requests", BREAKER)
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the sample, the random player and the bootstrap (default 0)")
    add_engine_args(p, "worker processes of the embedded Dask cluster that answer for a "
                    "Stockfish player")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory (default results)")
    p.add_argument("--cache", type=Path, default=None,
                   help="response cache, shared with the static run (default OUT/cache.db)")
    p.set_defaults(handler=worldmodel_command)


@dataclass
class WorldModelSetup:
    """Everything the world-model tests need, built from their options (the CLI's and the
    Inspect task's)."""

    questions: list[Question]  # the seeded sample of positions
    config: WorldModelConfig  # how the tests are asked
    players: dict[float, Player]  # the model at each temperature asked so far
    base: Player  # at --temperature: the self-consistency and symmetry prompts' player
    chat: ModelConfig | None  # the model's settings (None: a baseline)
    shown: dict[str, Any]  # the settings as the result records them
    digest: str  # the questions file's SHA-256
    name: str  # the run's file name

    def at(self, t: float) -> Player:
        """The player at temperature t (a baseline ignores it)."""
        if t not in self.players:
            self.players[t] = self.base if self.chat is None else make_player(
                self.base_spec, replace(self.chat, temperature=t), None, self.config.seed,
                self.config.concurrency, budget_of(self.base))
        return self.players[t]

    @property
    def base_spec(self) -> str:
        """--model."""
        return self.chat.model if self.chat is not None else self.base.id

    def close(self) -> None:
        """Close every player."""
        for player in {id(p): p for p in self.players.values()}.values():
            player.close()


def worldmodel_config(args: argparse.Namespace, baseline: bool) -> WorldModelConfig:
    """How the tests are asked, from their options."""
    return WorldModelConfig(args.temperatures, args.temperature, args.concurrency,
                            args.breaker, args.seed, cluster_of(args), baseline, args.price)


def worldmodel_setup(args: argparse.Namespace, player: Player | None = None) -> WorldModelSetup:
    """The positions, players and settings that `args` ask for; `player`: the model already
    made (an Inspect log's, which asks nothing), used at every temperature."""
    questions = select(load_questions(args.questions), "all", [], args.limit, args.seed)
    ensure_writable_dir(args.out, "--out")
    chat = None if is_baseline(args.model) else model_config(args)
    base = player or make_player(args.model, chat, args.stockfish, args.seed, args.concurrency)
    config = worldmodel_config(args, chat is None)
    digest = sha256_file(args.questions)
    shown = {"limit": args.limit, "seed": args.seed, "temperatures": list(args.temperatures),
             "temperature": args.temperature,
             # The limit asked (a baseline's runs recorded the option's default).
             "max_tokens": chat.max_tokens if chat else args.max_tokens or DEFAULT_MAX_TOKENS,
             "templates": [MOVE_TEMPLATE, LIST_TEMPLATE, CHOOSE_TEMPLATE],
             "answered_by": base.answered_by}
    name = run_name(file_name(Kind.WORLDMODEL, model_label(args)), [base.id, shown, digest])
    players = {args.temperature: base}
    if player is not None:  # nothing is asked: one player stands for every temperature
        players.update(dict.fromkeys(args.temperatures, player))
    return WorldModelSetup(questions, config, players, base, chat, shown, digest, name)


def worldmodel_result(args: argparse.Namespace, setup: WorldModelSetup,
                      answers_: Answers) -> WorldModelResult:
    """The tests' result from their answers."""
    return WorldModelResult(
        model=model_label(args), player=setup.base.id,
        questions=str(args.questions), questions_sha256=setup.digest,
        positions=len(setup.questions), settings=setup.shown,
        **summarise(answers_, setup.config))


def worldmodel_command(args: argparse.Namespace, player: Player | None = None,
                       answers_: Answers | None = None) -> int:
    """Ask the three tests, score them, write JSON, report and figure; the exit status.
    `player` and `answers_`: a run read back (an Inspect log's), nothing asked."""
    setup = worldmodel_setup(args, player)
    # One ledger: the budget is shared by the model at every temperature.
    with Run(args.out, [(setup.name, "", budget_of(setup.base))]) as run:
        run.owns(setup)
        if answers_ is None:
            # One process at a time asks this player's prompts on its cache (two runs
            # that differ only in --limit would buy their shared prompts twice).
            store = args.cache or args.out / "cache.db"
            run.claim(store, f"answers {setup.base.id}", f"a run asking {setup.base.id}")
            answers_ = ask_tests(setup.at, setup.questions, run.store(store, "answers"),
                                 setup.config, run.gate)
        stopped = budget_stop(setup.base) if answers_.infra else None
        result, paths = write_wm(args.out, setup.name, replace(
            worldmodel_result(args, setup, answers_), stopped=stopped))
        print(wm_summary(result.as_dict()))
    return finish(run, result, paths)
