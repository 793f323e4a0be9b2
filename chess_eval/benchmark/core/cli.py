"""What every subcommand of benchmark.py shares: default paths, the endpoint's options and the
chat settings built from them, and the exit status of a run that wrote incomplete results."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.data import PUZZLE_POOL
from chess_eval.benchmark.model.backends import connection_for
from chess_eval.benchmark.model.cost import price_arg
from chess_eval.benchmark.model.http_backend import (
    DEFAULT_BASE_URL,
    REASONING_EFFORTS,
    REASONING_MAX_TOKENS,
    parse_extra,
)
from chess_eval.benchmark.model.interface import DEFAULT_MAX_TOKENS, ModelConfig
from chess_eval.benchmark.players.player import BASELINE_SPECS, unknown_baseline
from chess_eval.benchmark.players.protocols import GameProtocol
from chess_eval.cli import (
    add_stockfish_arg,
    non_negative_float,
    non_negative_int,
    port_number,
    positive_float,
    positive_int,
)
from chess_eval.errors import ConfigError

STEP04_PUZZLES = Path("output/lichess_puzzles.csv")  # generate.py's step 04 output


def default_puzzles() -> Path:
    """The puzzle file of `puzzles` without --puzzles: step 04's, else the committed pool."""
    return STEP04_PUZZLES if STEP04_PUZZLES.exists() else PUZZLE_POOL


def add_model_arg(p: argparse.ArgumentParser, extra: str = "") -> None:
    """--model: a model at the endpoint or a baseline, every spec named with its defaults."""
    p.add_argument("--model", required=True, metavar="MODEL",
                   help="a model name at --base-url (e.g. openai/gpt-4o); "
                   "'inspect:PROVIDER/MODEL' for any model Inspect's model API asks (e.g. "
                   "inspect:anthropic/claude-sonnet-4-0, with that provider's own key "
                   f"variable); or a baseline: {BASELINE_SPECS}{extra}")


def add_chat_args(p: argparse.ArgumentParser) -> None:
    """Options of the endpoint and its requests, shared by every subcommand that asks."""
    p.add_argument("--base-url", default=None,
                   help=f"OpenAI-compatible API base URL (default {DEFAULT_BASE_URL}); with "
                   "--model inspect:..., the provider's address (default: Inspect's, from "
                   "the provider's own variable such as OPENAI_BASE_URL)")
    p.add_argument("--api-key-env", default=None, metavar="VAR",
                   help="environment variable holding the API key, sent to --base-url "
                   "whatever it is (default: OPENROUTER_API_KEY for openrouter.ai, "
                   "OPENAI_API_KEY for api.openai.com, no key for any other host; with "
                   "--model inspect:..., the provider's own variable, as Inspect reads it)")
    p.add_argument("--temperature", type=non_negative_float, default=0.0,
                   help="sampling temperature (default 0)")
    p.add_argument("--max-tokens", type=positive_int, default=None,
                   help=f"maximum tokens of a reply (default {DEFAULT_MAX_TOKENS}, or "
                   f"{REASONING_MAX_TOKENS:,} with --reasoning-effort, room for the reasoning "
                   "before the answer). A reply cut at this limit before its final answer "
                   "counts as truncated, apart from the scores, and the report says how many")
    p.add_argument("--reasoning-effort", choices=REASONING_EFFORTS, default=None,
                   help="a reasoning model's effort, sent as the endpoint takes it (OpenAI's "
                   "reasoning_effort; OpenRouter's reasoning.effort); part of the run's "
                   "identity and name, and shown on the leaderboard (default: not sent)")
    p.add_argument("--system", default=None, metavar="TEXT",
                   help="a system prompt sent before every question (default: none)")
    p.add_argument("--stop", action="append", default=[], metavar="TEXT",
                   help="a stop sequence; repeatable (default: none)")
    # An Inspect eval's generation settings beyond these options (the tasks pass them): part
    # of the identity; Inspect sends them itself.
    p.add_argument("--generation", default=None, help=argparse.SUPPRESS)
    p.add_argument("--extra", default=None, metavar="JSON",
                   help='extra request fields, e.g. \'{"top_p": 0.9}\'; they may not set '
                   "model, messages, prompt, max_tokens, temperature, stop, stream, n, tools or "
                   "response_format (the options own them)")
    p.add_argument("--timeout", type=positive_float, default=120.0,
                   help="seconds a request may take, counted from when no older request of "
                   "ours is still waiting, so time queued behind our own requests does not "
                   "count (default 120)")
    p.add_argument("--retries", type=non_negative_int, default=6,
                   help="retries of 429, 5xx, timeouts and dropped connections, each logged "
                   "(default 6); a completed reply that cannot be read is charged and asked "
                   "again once only, and a timed-out attempt is counted as possibly billed "
                   "(the run's ledger, books/RUN.jsonl)")
    p.add_argument("--retry-wait", type=positive_float, default=1.0,
                   help="base seconds of the exponential backoff with jitter (default 1)")
    p.add_argument("--price", type=price_arg, default=None, metavar="IN,OUT",
                   help="cost per million prompt and completion tokens, for answers whose "
                   "cost the provider does not report (OpenRouter reports usage.cost); "
                   "reasoning tokens count as completion tokens (default: none)")
    p.add_argument("--max-cost", type=positive_float, default=None, metavar="AMOUNT",
                   help="stop the run cleanly before this invocation spends more than AMOUNT "
                   "(cached answers are free). Every reply the provider completed is charged, "
                   "readable or not; a request reserves its price before it is sent (the larger "
                   "of its prompt and max_tokens priced at --price, and the dearest reply so "
                   "far), and "
                   "none starts once spent plus reserved would pass AMOUNT, so spend passes it "
                   "only by what replies in flight cost beyond their reservations. What was "
                   "bought is cached the moment it arrives; the result says it stopped on "
                   "budget and the same command resumes it, buying nothing twice (default: no "
                   "limit)")
    p.add_argument("--response-format", choices=("text", "json"), default="text",
                   help="json: ask for {\"move\": ...} through the API's JSON schema "
                   "(response_format); a server that refuses it is asked as text, with a "
                   "logged note (default text; recorded in the result)")
    p.add_argument("--endpoint-id", default=None, metavar="NAME",
                   help="cache and name answers under NAME instead of --base-url's host, port "
                   "and path, so endpoints given one NAME share answers (only for endpoints "
                   "that serve the same weights; recorded in the result). Default: answers "
                   "from two endpoints never mix, even under one model name")


def model_label(args: argparse.Namespace) -> str:
    """The model as results and the leaderboard name it: with its reasoning effort, if any."""
    effort = getattr(args, "reasoning_effort", None)
    return f"{args.model} [effort={effort}]" if effort else str(args.model)


PROTOCOL_HELP = {  # each protocol in a few words, for --help
    GameProtocol.FEN: "one prompt per move with the FEN",
    GameProtocol.BLIND: "the game's moves only, no board",
    GameProtocol.CHAT: "one conversation per game",
    GameProtocol.TOOLS: "tool calls: get_board, get_legal_moves, make_move",
    GameProtocol.PGN: "a PGN to complete at /completions, for base models"}


def add_protocol_arg(p: argparse.ArgumentParser, choices: tuple[GameProtocol, ...]) -> None:
    """--protocol: how the model is asked (docs/protocols.md), recorded in the result."""
    def protocol(text: str) -> GameProtocol:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not a protocol of this mode: use "
                                             + ", ".join(choices))
        return GameProtocol(text)

    p.add_argument("--protocol", type=protocol, default=GameProtocol.FEN,
                   metavar="{" + ",".join(choices) + "}",
                   help="how the model is asked: " + "; ".join(
                       f"{c} ({PROTOCOL_HELP[c]})" for c in choices) + " (default fen)")


def add_breaker_arg(p: argparse.ArgumentParser, what: str, default: int) -> None:
    """--breaker: how many `what` in a row failing for infrastructure reasons (after their
    retries) stop the run (exit 2; a rerun resumes). One failure alone never does."""
    p.add_argument("--breaker", type=positive_int, default=default,
                   help=f"stop the run when this many {what} in a row fail for infrastructure "
                   f"reasons after their retries (default {default}); fewer are left out and "
                   "the result is marked incomplete (exit 3; a rerun completes it)")


def model_config(args: argparse.Namespace) -> ModelConfig:
    """Where and how to ask the model --model names."""
    if (why := unknown_baseline(args.model, args.base_url)) is not None:
        raise ConfigError(why)
    base_url, key, source = connection_for(args.model, args.base_url, args.api_key_env,
                                           dict(os.environ))
    try:
        extra = parse_extra(args.extra)
    except ValueError as exc:
        raise ConfigError(f"--extra: {exc}") from exc
    effort = getattr(args, "reasoning_effort", None)
    if effort and {"reasoning", "reasoning_effort"} & set(extra):
        raise ConfigError("--reasoning-effort and a reasoning field in --extra: give one")
    max_tokens = args.max_tokens or (REASONING_MAX_TOKENS if effort else DEFAULT_MAX_TOKENS)
    return ModelConfig(base_url=base_url, model=args.model, api_key=key, key_source=source,
                      temperature=args.temperature, max_tokens=max_tokens,
                      reasoning_effort=effort,
                      system=args.system, stop=tuple(args.stop), extra=extra,
                      timeout_s=args.timeout, retries=args.retries, backoff_s=args.retry_wait,
                      endpoint_id=args.endpoint_id,
                      completions=getattr(args, "protocol", None) == GameProtocol.PGN,
                      json_answers=args.response_format == "json", price=args.price,
                      max_cost=args.max_cost,
                      generation=json.loads(args.generation) if args.generation else {})


SERVE_PORT = 8000


def add_serve_parser(commands: Any) -> None:
    """Options of `serve`: baseline players behind an OpenAI-compatible endpoint."""
    p = commands.add_parser(
        "serve", help="serve baseline players at an OpenAI-compatible endpoint (to rate a "
        "known player through the model path)",
        description="Answer chat completions for the model name 'served/SPEC', SPEC any "
        "baseline spec (e.g. served/toga2:depth=1): the player's move for the FEN in the "
        "prompt. Rate it as a model: 'benchmark.py play --model served/toga2:depth=1 "
        f"--base-url http://127.0.0.1:{SERVE_PORT}/v1'. Runs until Ctrl-C.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                   "127.0.0.1: this machine only)")
    p.add_argument("--port", type=port_number, default=SERVE_PORT,
                   help=f"port (default {SERVE_PORT}; 0 picks a free one)")
    p.add_argument("--slots", type=positive_int, default=2,
                   help="engines per model name, answering at once (default 2)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the players' random choices (default 0)")
    add_stockfish_arg(p)
    p.set_defaults(handler=serve_command)


def serve_command(args: argparse.Namespace) -> None:
    """Serve until interrupted, then close every engine."""
    from chess_eval.benchmark.core.server import PlayerServer

    try:
        server = PlayerServer(args.host, args.port, args.stockfish, args.seed, args.slots)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from exc
    try:  # Ctrl-C from the moment the address is printed is a stop, not an interruption
        print(f"serving baseline players at {server.base_url} (Ctrl-C stops)", flush=True)
        server.serve()
    except KeyboardInterrupt:
        print("stopped serving", file=sys.stderr)  # nothing to resume: a server's stop
    finally:
        server.close()
