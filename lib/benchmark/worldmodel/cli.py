"""`benchmark.py worldmodel`: its options and its handler."""

from __future__ import annotations

import argparse
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from lib.benchmark.core.chat import DEFAULT_MAX_TOKENS
from lib.benchmark.core.cli import (
    add_breaker_arg,
    add_chat_args,
    add_model_arg,
    chat_config,
    model_label,
)
from lib.benchmark.core.header import Kind, file_name
from lib.benchmark.core.players import Player, is_baseline, make_player
from lib.benchmark.core.questions import load_questions, select
from lib.benchmark.core.results import run_name
from lib.benchmark.core.runner import BREAKER
from lib.benchmark.worldmodel.prompts import CHOOSE_TEMPLATE, LIST_TEMPLATE, MOVE_TEMPLATE
from lib.benchmark.worldmodel.result import WorldModelResult
from lib.benchmark.worldmodel.run import WorldModelConfig, ask_tests, summarise
from lib.benchmark.worldmodel.run import summary as wm_summary
from lib.benchmark.worldmodel.run import write_run as write_wm
from lib.cli import (
    add_engine_args,
    cluster_of,
    positive_int,
)
from lib.exits import Exit
from lib.files import (
    ensure_writable_dir,
    sha256_file,
)
from lib.kvstore import JsonStore

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
    p.add_argument("--questions", type=Path, default=Path("questions.csv"),
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


def worldmodel_command(args: argparse.Namespace) -> int:
    """Ask the three tests, score them, write JSON, report and figure; the exit status."""
    questions = select(load_questions(args.questions), "all", [], args.limit, args.seed)
    ensure_writable_dir(args.out, "--out")
    chat = None if is_baseline(args.model) else chat_config(args, budgeted=False)
    base = make_player(args.model, chat, args.stockfish, args.seed, args.concurrency)
    players: dict[float, Player] = {args.temperature: base}

    def at(t: float) -> Player:
        if t not in players:
            players[t] = base if chat is None else make_player(
                args.model, replace(chat, temperature=t), None, args.seed, args.concurrency)
        return players[t]
    config = WorldModelConfig(args.temperatures, args.temperature, args.concurrency,
                              args.breaker, args.seed, cluster_of(args), chat is None,
                              args.price)
    digest = sha256_file(args.questions)
    shown = {"limit": args.limit, "seed": args.seed, "temperatures": list(args.temperatures),
             "temperature": args.temperature,
             # The limit asked (a baseline's runs recorded the option's default).
             "max_tokens": chat.max_tokens if chat else args.max_tokens or DEFAULT_MAX_TOKENS,
             "templates": [MOVE_TEMPLATE, LIST_TEMPLATE, CHOOSE_TEMPLATE],
             "answered_by": base.answered_by}
    name = run_name(file_name(Kind.WORLDMODEL, model_label(args)), [base.id, shown, digest])
    cache = JsonStore(args.cache or args.out / "cache.db", "answers")
    try:
        answers_ = ask_tests(at, questions, cache, config)
    finally:
        cache.close()
        for player in {id(p): p for p in players.values()}.values():
            player.close()
    result = WorldModelResult(
        model=model_label(args), player=base.id,
        questions=str(args.questions), questions_sha256=digest, positions=len(questions),
        settings=shown, **summarise(answers_, config))
    result, paths = write_wm(args.out, name, result)
    print(wm_summary(result.as_dict()))
    print("wrote " + ", ".join(str(p) for p in paths))
    if not result.complete:
        log.error("incomplete: %d requests failed for infrastructure reasons; run the same "
                  "command again to ask only those", result.infra)
        return Exit.INCOMPLETE
    return 0
