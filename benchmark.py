"""Score a model (or a baseline player) against questions.csv; `leaderboard` ranks all runs."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from lib.benchmark.llm import ChatConfig, parse_extra
from lib.benchmark.players import make_player
from lib.benchmark.prompts import TEMPLATES, template_name
from lib.benchmark.results import (
    SCHEMA_VERSION,
    leaderboard,
    load_questions,
    markdown_report,
    select,
    slug,
    summary_table,
)
from lib.benchmark.runner import ask_all, trace_record
from lib.benchmark.scoring import (
    aggregate,
    by_strata,
    elo_estimates,
    illegal_counts,
    score_item,
    world_model,
)
from lib.cli import positive_float, positive_int, run_cli, setup_logging
from lib.errors import ConfigError
from lib.files import atomic_write, sha256_file
from lib.kvstore import JsonStore

log = logging.getLogger("benchmark")

OPENROUTER = "https://openrouter.ai/api/v1"
KEY_VARS = ("OPENROUTER_API_KEY", "OPENAI_API_KEY")


def build_parser() -> argparse.ArgumentParser:
    """Options of a benchmark run."""
    p = argparse.ArgumentParser(
        description="Score a model against questions.csv: legal-move rate and why moves were "
        "illegal, ACPL, accuracy, best-move and puzzle-solve rates with 90%% intervals, a "
        "Bayesian puzzle Elo and a human-calibrated Elo. Baselines: random, stockfish, "
        "stockfish:elo=N, stockfish:skill=N, stockfish:nodes=N. "
        "Run 'benchmark.py leaderboard --help' for the leaderboard.")
    p.add_argument("--model", required=True,
                   help="model name at the endpoint (e.g. openai/gpt-4o), or a baseline")
    p.add_argument("--questions", type=Path, default=Path("questions.csv"),
                   help="the test set (default: questions.csv)")
    p.add_argument("--prompt", default="fen", choices=sorted(TEMPLATES) + [
        "fen", "fen-board", "fen-history"], help="prompt template (default fen = fen@1)")
    p.add_argument("--base-url", default=OPENROUTER,
                   help=f"OpenAI-compatible API base URL (default {OPENROUTER})")
    p.add_argument("--api-key-env", default=None, metavar="VAR",
                   help="environment variable holding the API key (default: "
                   "OPENROUTER_API_KEY, then OPENAI_API_KEY)")
    p.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (0)")
    p.add_argument("--max-tokens", type=positive_int, default=None,
                   help="maximum tokens of a reply (default: the server's)")
    p.add_argument("--extra", default=None, metavar="JSON",
                   help='extra request fields, e.g. \'{"reasoning": {"effort": "low"}}\'')
    p.add_argument("--concurrency", type=positive_int, default=8,
                   help="requests in flight at once (default 8)")
    p.add_argument("--timeout", type=positive_float, default=120.0,
                   help="seconds per request before it counts as a timeout (default 120)")
    p.add_argument("--retries", type=int, default=6,
                   help="retries of 429, 5xx, timeouts and malformed replies (default 6)")
    p.add_argument("--retry-wait", type=positive_float, default=1.0,
                   help="base seconds of the exponential backoff with jitter (default 1)")
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
    p.add_argument("--stockfish", default=None, help="Stockfish binary for baseline players")
    p.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                   help="engine processes of a Stockfish player (default: cores)")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory: JSON, markdown report, traces (default results)")
    p.add_argument("--cache", type=Path, default=None,
                   help="response cache (default OUT/cache.db)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run; cached answers are always reused, so "
                   "this is the default behaviour, kept for clarity")
    p.add_argument("--no-cache", action="store_true",
                   help="ask every question again (answers are still stored)")
    return p


def leaderboard_parser() -> argparse.ArgumentParser:
    """Options of the leaderboard."""
    p = argparse.ArgumentParser(prog="benchmark.py leaderboard",
                                description="Rank every run in a results directory: writes "
                                "leaderboard.md and leaderboard.svg (Elo with 90% intervals).")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory (default results)")
    return p


def _chat_config(args: argparse.Namespace) -> ChatConfig:
    names = [args.api_key_env] if args.api_key_env else list(KEY_VARS)
    key = next((os.environ[n] for n in names if os.environ.get(n)), None)
    if args.api_key_env and key is None:
        raise ConfigError(f"--api-key-env {args.api_key_env}: that variable is not set")
    try:
        extra = parse_extra(args.extra)
    except ValueError as exc:
        raise ConfigError(f"--extra: {exc}") from exc
    return ChatConfig(base_url=args.base_url, model=args.model, api_key=key,
                      temperature=args.temperature, max_tokens=args.max_tokens, extra=extra,
                      timeout_s=args.timeout, retries=args.retries, backoff_s=args.retry_wait)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Ask, score, estimate and write the results of one run."""
    template = template_name(args.prompt)
    questions = select(load_questions(args.questions), args.split, args.filter, args.limit,
                       args.seed)
    if not questions:
        raise ConfigError("no question matches --split/--filter")
    is_baseline = args.model.split(":")[0] in ("random", "stockfish")
    player = make_player(args.model, None if is_baseline else _chat_config(args),
                         args.stockfish, args.seed, args.workers)
    name = slug(f"{args.model}__{template}__{args.split}")
    if args.filter or args.limit:
        tag = json.dumps([args.filter, args.limit, args.seed])
        name += "__" + hashlib.sha256(tag.encode()).hexdigest()[:8]
    args.out.mkdir(parents=True, exist_ok=True)
    cache = JsonStore(args.cache or args.out / "cache.db", "answers")
    if args.no_cache:
        cache = _Forgetful(cache)  # type: ignore[assignment]
    by_id = {q.id: q for q in questions}
    items = []
    traces_path = args.out / "traces" / f"{name}.jsonl"
    traces_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with open(traces_path, "w", encoding="utf-8") as traces:
            for outcome in ask_all(player, template, TEMPLATES[template], questions, cache,
                                   args.concurrency):
                reply = outcome.reply
                item = score_item(outcome.question, reply.text if reply else None,
                                  outcome.infra_error)
                items.append(item)
                traces.write(trace_record(outcome, item.as_dict()) + "\n")
                traces.flush()
    finally:
        cache.close()
        player.close()
    items.sort(key=lambda i: i.id)
    result = _result(args, template, player.id, items, by_id)
    with atomic_write(args.out / f"{name}.json") as handle:
        json.dump(result, handle, indent=1)
    with atomic_write(args.out / f"{name}.md") as handle:
        handle.write(markdown_report(result))
    print(summary_table(result))
    print(f"wrote {args.out / (name + '.json')}, {name}.md and traces/{name}.jsonl")
    return result


class _Forgetful:
    """A cache that stores answers but never returns them (--no-cache)."""

    def __init__(self, store: JsonStore) -> None:
        self._store = store

    def get(self, key: str) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _result(args: argparse.Namespace, template: str, player_id: str, items: list,
            questions: dict) -> dict[str, Any]:
    scored = [i for i in items if i.category != "infra"]
    intervals = aggregate(items, args.seed, args.bootstrap)
    value = lambda name: (intervals.get(name) or {}).get("value")  # noqa: E731
    return {
        "schema_version": SCHEMA_VERSION,
        "model": args.model, "player": player_id, "prompt": template,
        "questions": str(args.questions), "questions_sha256": sha256_file(args.questions),
        "split": args.split, "filters": args.filter, "limit": args.limit, "seed": args.seed,
        "n": len(scored), "asked": len(items),
        "legal_rate": value("legal_rate"), "acpl": value("acpl"),
        "accuracy": value("accuracy"), "best_move_rate": value("best_move_rate"),
        "puzzle_solve_rate": value("puzzle_solve_rate"),
        "illegal": illegal_counts(items), "infra": len(items) - len(scored),
        "elo": elo_estimates(items, questions, args.seed, args.mcmc),
        "world_model": world_model(items),
        "intervals": {k: v for k, v in intervals.items() if k != "n"},
        "by": by_strata(items, args.seed, min(args.bootstrap, 300)),
        "items": [i.as_dict() for i in items],
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point: `benchmark.py [options]` or `benchmark.py leaderboard [options]`."""
    argv = sys.argv[1:] if argv is None else argv
    setup_logging()
    if argv[:1] == ["leaderboard"]:
        args = leaderboard_parser().parse_args(argv[1:])

        def board() -> None:
            for path in leaderboard(args.out):
                print(f"wrote {path}")
        return run_cli(board)
    args = build_parser().parse_args(argv)
    return run_cli(lambda: run(args) and None)


if __name__ == "__main__":
    sys.exit(main())
