"""`benchmark.py run` (the default subcommand): the static run's options and handler."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.cli import (
    add_breaker_arg,
    add_chat_args,
    add_model_arg,
    add_protocol_arg,
    model_config,
    model_label,
)
from chess_eval.benchmark.core.data import GAME_FIT, data_path, questions_path
from chess_eval.benchmark.core.prompts import TEMPLATES, template_name
from chess_eval.benchmark.core.runner import BREAKER
from chess_eval.benchmark.players.player import is_baseline
from chess_eval.benchmark.players.protocols import STATIC_PROTOCOLS, VERSIONS, GameProtocol
from chess_eval.benchmark.static.run import StaticConfig, run_static
from chess_eval.cli import (
    Dropped,
    add_engine_args,
    cluster_of,
    positive_int,
)
from chess_eval.errors import ConfigError


def add_parser(commands: Any) -> None:
    """Options of a benchmark run."""
    p = commands.add_parser(
        "run", help="score a model on questions.csv (the default)",
        description="Score a model against questions.csv: legal-move rate and why moves were "
        "illegal, ACPL, accuracy, best-move and puzzle-solve rates with 90% intervals, a "
        "Bayesian puzzle Elo and a human-move Elo, beside a random mover's figures. "
        "Exit status: 0 complete, 2 error (nothing written), 3 written but incomplete "
        "(infrastructure failures; rerun to complete), 130 interrupted. "
        "Run 'benchmark.py leaderboard --help' for the leaderboard.")
    add_model_arg(p)
    p.add_argument("--questions", type=questions_path, default="questions.csv",
                   help="the test set (default: questions.csv)")
    p.add_argument("--prompt", default="fen", choices=sorted(TEMPLATES) + [
        "fen", "fen-board", "fen-history"], help="prompt template (default fen = fen@1)")
    add_protocol_arg(p, STATIC_PROTOCOLS)
    add_chat_args(p)
    p.add_argument("--concurrency", type=positive_int, default=8,
                   help="requests in flight at once (default 8; a single-slot local server "
                   "answers them in turn)")
    add_breaker_arg(p, "questions", BREAKER)
    p.add_argument("--limit", type=positive_int, default=None,
                   help="ask only this many questions (a seeded sample)")
    p.add_argument("--split", choices=("public", "private", "all"), default="all",
                   help="public (hash_bucket >= 20), private, or all (default)")
    p.add_argument("--filter", action="append", default=[], metavar="KEY=VALUE",
                   help="keep questions whose field equals the value, e.g. source=puzzle; "
                   "repeatable")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of --limit sampling, the random player, bootstrap and MCMC")
    p.add_argument("--bootstrap", type=positive_int, default=1000,
                   help="bootstrap replicates of every interval (default 1000)")
    p.add_argument("--mcmc", action="store_true",
                   help="puzzle Elo by MCMC instead of the Laplace approximation")
    p.add_argument("--game-fit", type=data_path, default=GAME_FIT,
                   help="the static-to-game fit across player families, for a predicted game "
                   "Elo from the static scores (default: the committed data/game_elo_fit.json; "
                   "used only for a run over the whole questions file it was fitted on)")
    add_engine_args(p, "worker processes of the embedded Dask cluster that answer for a "
                    "Stockfish player")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory: JSON, markdown report, traces (default results)")
    p.add_argument("--cache", type=Path, default=None,
                   help="response cache (default OUT/cache.db)")
    p.add_argument("--resume", action=Dropped,
                   why="every run reuses its cached answers, so a rerun always resumes")
    p.add_argument("--no-cache", action="store_true",
                   help="ask every question again (answers are still stored)")
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """Build the run's settings from the options and run it; the exit status."""
    if args.protocol != GameProtocol.FEN and is_baseline(args.model):
        raise ConfigError(f"--protocol {args.protocol}: a baseline reads the board, not a "
                          "prompt; serve it ('benchmark.py serve') and ask it as the model "
                          "'served/SPEC' to use a protocol")
    chat = None if is_baseline(args.model) else model_config(args)
    return run_static(static_config(args), chat)


def static_config(args: argparse.Namespace) -> StaticConfig:
    """The run's settings from its options."""
    if args.protocol != GameProtocol.FEN and args.prompt != "fen":
        raise ConfigError(f"--prompt {args.prompt} is a template of the fen protocol, not "
                          f"of --protocol {args.protocol}")
    template = template_name(args.prompt) if args.protocol == GameProtocol.FEN \
        else VERSIONS[args.protocol]
    return StaticConfig(
        model=model_label(args), questions=args.questions, template=template,
        split=args.split, filters=tuple(args.filter), limit=args.limit, seed=args.seed,
        bootstrap=args.bootstrap, mcmc=args.mcmc, game_fit=args.game_fit, out=args.out,
        cache=args.cache, no_cache=args.no_cache, concurrency=args.concurrency,
        breaker=args.breaker, cluster=cluster_of(args), stockfish=args.stockfish,
        protocol=args.protocol, price=args.price)
