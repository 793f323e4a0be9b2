"""Score a model (or a baseline player) against questions.csv; `leaderboard` ranks all runs."""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from lib import btd
from lib.benchmark.calibration import CalibrationConfig, calibrate, engine_range
from lib.benchmark.game import PLY_CAP, RETRIES
from lib.benchmark.gamereport import session_result, session_summary, write_session
from lib.benchmark.ladder import LADDER_FIELDS, default_rungs, ladder_rows, load_ladder
from lib.benchmark.leaderboard import leaderboard
from lib.benchmark.llm import (
    DEFAULT_MAX_TOKENS,
    ChatConfig,
    check_base_url,
    key_for,
    parse_extra,
)
from lib.benchmark.play import CONDITIONS, PlayConfig, play
from lib.benchmark.players import Player, is_baseline, make_player
from lib.benchmark.prediction import load_fit, predict
from lib.benchmark.progress import Progress
from lib.benchmark.prompts import TEMPLATES, Question, template_name
from lib.benchmark.puzzleline import RULES as PUZZLE_RULES
from lib.benchmark.puzzleline import TEMPLATE as PUZZLE_TEMPLATE
from lib.benchmark.puzzlerun import POOL, PuzzleConfig, run_puzzles, run_result, write_run
from lib.benchmark.puzzlerun import summary as puzzle_summary
from lib.benchmark.puzzlesampler import MAX_PUZZLES
from lib.benchmark.puzzlesampler import TARGET as PUZZLE_TARGET
from lib.benchmark.questions import load_questions, select
from lib.benchmark.results import (
    SCHEMA_VERSION,
    markdown_report,
    slug,
    summary_table,
)
from lib.benchmark.runner import BREAKER, ask_all, trace_record
from lib.benchmark.sampler import MAX_GAMES, PRIOR, TARGET, SamplerConfig
from lib.benchmark.scoring import (
    TRUNCATED,
    Item,
    aggregate,
    by_strata,
    elo_estimates,
    floor_figures,
    illegal_counts,
    score_item,
    scored_count,
    world_model,
)
from lib.benchmark.wmrun import WorldModelConfig, ask_tests, summarise
from lib.benchmark.wmrun import summary as wm_summary
from lib.benchmark.wmrun import write_run as write_wm
from lib.benchmark.worldmodel import CHOOSE_TEMPLATE, LIST_TEMPLATE, MOVE_TEMPLATE
from lib.cli import (
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    run_cli,
    setup_logging,
)
from lib.engine import EngineSettings, find_stockfish
from lib.errors import ConfigError, DataError
from lib.files import (
    atomic_write,
    ensure_writable_dir,
    ensure_writable_file,
    sha256_file,
    write_csv,
)
from lib.kvstore import JsonStore
from lib.puzzledb import read_puzzles

log = logging.getLogger("benchmark")

OPENROUTER = "https://openrouter.ai/api/v1"
GAME_FIT = Path(__file__).resolve().parent / "game_elo_fit.json"
LADDER = Path(__file__).resolve().parent / "ladder.csv"
STEP04_PUZZLES = Path("output/lichess_puzzles.csv")  # generate.py's step 04 output
SHARED_PUZZLES = (Path(__file__).resolve().parent.parent / "shared/data/lichess/puzzles"
                  / "lichess_db_puzzle.sample44k.csv.zst")
EXIT_INCOMPLETE = 3  # results written, but some questions failed for infrastructure reasons


def run_name(label: str, key: list[Any]) -> str:
    """A result file's stem: the label made file-safe, then a hash of everything that changes
    the answers, so no run replaces another."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
    return slug(label) + "__" + digest


def add_chat_args(p: argparse.ArgumentParser) -> None:
    """Options of the endpoint and its requests, shared by the static run and play."""
    p.add_argument("--base-url", default=OPENROUTER,
                   help=f"OpenAI-compatible API base URL (default {OPENROUTER})")
    p.add_argument("--api-key-env", default=None, metavar="VAR",
                   help="environment variable holding the API key, sent to --base-url "
                   "whatever it is (default: OPENROUTER_API_KEY for openrouter.ai, "
                   "OPENAI_API_KEY for api.openai.com, no key for any other host)")
    p.add_argument("--temperature", type=non_negative_float, default=0.0,
                   help="sampling temperature (default 0)")
    p.add_argument("--max-tokens", type=positive_int, default=DEFAULT_MAX_TOKENS,
                   help=f"maximum tokens of a reply (default {DEFAULT_MAX_TOKENS}; raise it "
                   "for reasoning models). A reply cut at this limit before its final answer "
                   "counts as truncated, apart from the scores")
    p.add_argument("--system", default=None, metavar="TEXT",
                   help="a system prompt sent before every question (default: none)")
    p.add_argument("--stop", action="append", default=[], metavar="TEXT",
                   help="a stop sequence; repeatable (default: none)")
    p.add_argument("--extra", default=None, metavar="JSON",
                   help='extra request fields, e.g. \'{"reasoning": {"effort": "low"}}\'; '
                   "they may not set model, messages, max_tokens, temperature, stop, stream "
                   "or n")
    p.add_argument("--timeout", type=positive_float, default=120.0,
                   help="seconds a request may take, counted from when no older request of "
                   "ours is still waiting, so time queued behind our own requests does not "
                   "count (default 120)")
    p.add_argument("--retries", type=non_negative_int, default=6,
                   help="retries of 429, 5xx, timeouts and malformed replies, each logged "
                   "(default 6)")
    p.add_argument("--retry-wait", type=positive_float, default=1.0,
                   help="base seconds of the exponential backoff with jitter (default 1)")


def build_parser() -> argparse.ArgumentParser:
    """Options of a benchmark run."""
    p = argparse.ArgumentParser(
        description="Score a model against questions.csv: legal-move rate and why moves were "
        "illegal, ACPL, accuracy, best-move and puzzle-solve rates with 90% intervals, a "
        "Bayesian puzzle Elo and a human-calibrated Elo, beside a random mover's figures. "
        "Baselines: random, stockfish, stockfish:elo=N, stockfish:skill=N, "
        "stockfish:nodes=N. Exit status: 0 complete, 2 error (nothing written), 3 written "
        "but incomplete (infrastructure failures; rerun to complete), 130 interrupted. "
        "Run 'benchmark.py leaderboard --help' for the leaderboard.")
    p.add_argument("--model", required=True,
                   help="model name at the endpoint (e.g. openai/gpt-4o), or a baseline")
    p.add_argument("--questions", type=Path, default=Path("questions.csv"),
                   help="the test set (default: questions.csv)")
    p.add_argument("--prompt", default="fen", choices=sorted(TEMPLATES) + [
        "fen", "fen-board", "fen-history"], help="prompt template (default fen = fen@1)")
    add_chat_args(p)
    p.add_argument("--concurrency", type=positive_int, default=8,
                   help="requests in flight at once (default 8; a single-slot local server "
                   "answers them in turn)")
    p.add_argument("--breaker", type=positive_int, default=BREAKER,
                   help="stop the run when this many questions in a row fail for "
                   f"infrastructure reasons after their retries (default {BREAKER})")
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
    p.add_argument("--game-fit", type=Path, default=GAME_FIT,
                   help="the ladder's static-to-game fit, for a predicted game Elo from the "
                   "accuracy (default: the committed game_elo_fit.json; used only for a run "
                   "over the whole questions file it was fitted on)")
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
                                description="Rank the complete results in a directory: "
                                "static runs, play (games against the ladder), puzzles "
                                "(adaptive) and worldmodel, on the same questions file only. "
                                "Each Elo scale in its own table, with 90%% intervals, "
                                "P(stronger than the next), a 90%% rank interval and seed "
                                "003's low-confidence dagger; the world-model table and "
                                "breakdown. Writes leaderboard.md, .svg, .png and "
                                "leaderboard-worldmodel.png.")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory (default results)")
    p.add_argument("--questions", type=Path, default=Path("questions.csv"),
                   help="only runs on this questions file (by its SHA-256) are compared "
                   "(default questions.csv)")
    p.add_argument("--puzzles", type=Path, default=None,
                   help="only puzzle runs on this puzzle file (by its SHA-256) are compared "
                   "(default: the puzzles subcommand's default file)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random mover and the rank draws (default 0)")
    return p


def default_puzzles() -> Path:
    """The puzzle file of `puzzles` without --puzzles: step 04's, else the shared sample."""
    return STEP04_PUZZLES if STEP04_PUZZLES.exists() else SHARED_PUZZLES


def play_parser() -> argparse.ArgumentParser:
    """Options of games against the ladder."""
    p = argparse.ArgumentParser(
        prog="benchmark.py play",
        description="Play full games against the calibrated ladder (ladder.csv) and rate the "
        "player with a Bradley-Terry-Davidson model: a Bayesian game Elo with a 90%% interval "
        "per start condition, rungs chosen by Thompson sampling, stopping at +-TARGET Elo or "
        "MAX_GAMES. One stateless request per move (FEN, moves so far, side to move). Writes "
        "a PGN of every game, per-move traces, a JSON and markdown report and PNG figures. "
        "Players: a model at --base-url, or random, stockfish:elo=N,nodes=N, "
        "mix:random=P,nodes=N. Exit status: 0 complete, 2 error, 3 written but some games "
        "were aborted for infrastructure reasons, 130 interrupted (rerun to resume).")
    p.add_argument("--model", required=True,
                   help="model name at the endpoint (e.g. openai/gpt-4o), or a baseline")
    add_chat_args(p)
    p.add_argument("--ladder", type=Path, default=LADDER,
                   help="the calibrated ladder (default: the committed ladder.csv)")
    p.add_argument("--conditions", type=conditions_list, default=("standard",),
                   help="start conditions, comma-separated, each rated on its own: standard, "
                   "chess960 (seeded, never the standard position), midgame (game positions "
                   "of --questions) (default standard)")
    p.add_argument("--questions", type=Path, default=Path("questions.csv"),
                   help="source of mid-game starts (default questions.csv)")
    p.add_argument("--legal-moves", action="store_true",
                   help="list the legal moves in every prompt (recorded in the result)")
    p.add_argument("--illegal-retries", type=non_negative_int, default=RETRIES,
                   help="illegal answers retried, each told what was wrong, before the game "
                   f"is forfeited (default {RETRIES})")
    p.add_argument("--ply-cap", type=positive_int, default=PLY_CAP,
                   help=f"a game this many plies long is drawn (default {PLY_CAP})")
    p.add_argument("--target", type=positive_float, default=TARGET,
                   help=f"stop a condition when its 90%% interval is within +-TARGET Elo "
                   f"(default {TARGET:.0f})")
    p.add_argument("--max-games", type=positive_int, default=MAX_GAMES,
                   help=f"stop a condition after this many rated games (default {MAX_GAMES})")
    p.add_argument("--prior", type=float, nargs=2, default=(PRIOR.mean, PRIOR.sd),
                   metavar=("MEAN", "SD"),
                   help=f"normal prior of the Elo (default {PRIOR.mean:.0f} {PRIOR.sd:.0f}: "
                   "wide enough for anything from a random mover to the top rung; seed 001's "
                   "1800 300 undercovers weak players, see bench/games_coverage.py)")
    p.add_argument("--mcmc", action="store_true",
                   help="report the posterior by MCMC instead of the Laplace approximation")
    p.add_argument("--concurrency", type=positive_int, default=2,
                   help="games at once, and the sampler's batch: the schedule depends on it "
                   "(default 2)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of starts, random rungs and the sampler (default 0)")
    p.add_argument("--stockfish", default=None, help="Stockfish binary (rungs and judge)")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory (default results)")
    p.add_argument("--store", type=Path, default=None,
                   help="finished games and every answer, for resuming (default OUT/games.db)")
    return p


def conditions_list(text: str) -> tuple[str, ...]:
    """--conditions: a comma-separated list of known start conditions."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in CONDITIONS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown condition(s) {unknown or [text]}: use {', '.join(CONDITIONS)}")
    return names


def play_command(args: argparse.Namespace) -> int:
    """Play the games, rate them, write PGN, traces, report and figures; the exit status."""
    ladder = load_ladder(args.ladder)
    settings = EngineSettings(find_stockfish(args.stockfish))
    questions = load_questions(args.questions) if "midgame" in args.conditions else []
    ensure_writable_dir(args.out, "--out")
    chat = None if is_baseline(args.model) else _chat_config(args)
    player = make_player(args.model, chat, args.stockfish, args.seed, args.concurrency)
    sampler = SamplerConfig(tuple(ladder.elos), ladder.nu, btd.Prior(*args.prior),
                            args.target, args.max_games)
    config = PlayConfig(args.conditions, sampler, args.illegal_retries, args.legal_moves,
                        args.ply_cap, args.concurrency, args.seed)
    settings_shown = {"conditions": list(args.conditions), "prompt": config.template,
                      "legal_moves": args.legal_moves, "illegal_retries": args.illegal_retries,
                      "ply_cap": args.ply_cap, "target": args.target,
                      "max_games": args.max_games, "prior": list(args.prior),
                      "concurrency": args.concurrency, "seed": args.seed,
                      "ladder_sha256": sha256_file(args.ladder)}
    name = run_name(f"play__{args.model}__{'-'.join(args.conditions)}",
                    [player.id, settings_shown])
    try:
        session = play(player, ladder, questions, config, args.store or args.out / "games.db",
                       settings)
    finally:
        player.close()
    result = session_result(args.model, player.id, settings_shown, session, ladder, sampler,
                            args.seed, args.mcmc)
    # Mid-game starts come from the questions file: the leaderboard compares them only with
    # runs on the same file.
    result["questions_sha256"] = sha256_file(args.questions) if questions else None
    paths = write_session(args.out, name, result, session, ladder)
    print(session_summary(result))
    print("wrote " + ", ".join(str(p) for p in paths))
    if any(c["aborted"] for c in result["conditions"].values()):
        log.error("some games were aborted for infrastructure reasons and are not rated; run "
                  "the same command again to play them")
        return EXIT_INCOMPLETE
    return 0


def puzzles_parser() -> argparse.ArgumentParser:
    """Options of an adaptive puzzle run."""
    p = argparse.ArgumentParser(
        prog="benchmark.py puzzles",
        description="Solve Lichess puzzles as whole lines (one stateless request per solver "
        "move, the opponent's replies from the solution; any mate counts; a move off the key "
        "that the engine finds winning and within the puzzle generator's margin of the key "
        "is credited apart as an alternative), chosen adaptively by Thompson sampling on "
        "the puzzle-Elo posterior, never repeated, spread over themes; stop at +-TARGET or "
        "MAX_PUZZLES. Finished puzzles and every answer are stored: a rerun resumes. Exit "
        "status: 0 complete, 2 error (finished puzzles kept), 130 interrupted.")
    p.add_argument("--model", required=True,
                   help="model name at the endpoint (e.g. openai/gpt-4o), or a baseline")
    add_chat_args(p)
    p.add_argument("--puzzles", type=Path, default=None,
                   help=f"Lichess puzzle CSV or .csv.zst (default: {STEP04_PUZZLES} when "
                   "step 04 has written it, else ../shared's 44k sample)")
    p.add_argument("--target", type=positive_float, default=PUZZLE_TARGET,
                   help=f"stop when the 90%% interval is within +-TARGET Elo "
                   f"(default {PUZZLE_TARGET:.0f})")
    p.add_argument("--max-puzzles", type=positive_int, default=MAX_PUZZLES,
                   help=f"stop after this many puzzles (default {MAX_PUZZLES})")
    p.add_argument("--mcmc", action="store_true",
                   help="report the posterior by MCMC instead of the Laplace approximation")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the Thompson draws and the random player (default 0)")
    p.add_argument("--stockfish", default=None,
                   help="Stockfish binary (baselines and the alternative check)")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory (default results)")
    p.add_argument("--store", type=Path, default=None,
                   help="finished puzzles and every answer, for resuming "
                   "(default OUT/puzzles.db)")
    return p


def puzzles_command(args: argparse.Namespace) -> None:
    """Run the adaptive puzzle sequence; write the JSON, markdown report and figure."""
    path = args.puzzles or default_puzzles()
    if not path.exists():
        raise ConfigError(f"--puzzles: {path} does not exist")
    puzzles, rows, bad = read_puzzles(path, POOL)
    if not puzzles:
        raise DataError(f"{path}: no well-formed puzzle")
    if bad:
        log.warning("%s: %d malformed rows left out", path, bad)
    if rows - bad > len(puzzles):
        log.info("%s: %d puzzles, a seeded sample of %d is the pool (the same for every "
                 "model)", path, rows - bad, len(puzzles))
    settings = EngineSettings(find_stockfish(args.stockfish))
    ensure_writable_dir(args.out, "--out")
    chat = None if is_baseline(args.model) else _chat_config(args, slots=1)
    player = make_player(args.model, chat, args.stockfish, args.seed, 1)
    digest = sha256_file(path)
    shown = {"puzzles": str(path), "puzzles_sha256": digest, "target": args.target,
             "max_puzzles": args.max_puzzles, "seed": args.seed, "prompt": PUZZLE_TEMPLATE,
             "rules": PUZZLE_RULES,
             "malformed_rows": bad, "pool": len(puzzles)}
    name = run_name(f"puzzles__{args.model}",
                    [player.id, {k: v for k, v in shown.items() if k != "puzzles"}])
    config = PuzzleConfig(args.target, args.max_puzzles, args.seed)
    try:
        session = run_puzzles(player, puzzles, config, args.store or args.out / "puzzles.db",
                              settings)
    finally:
        player.close()
    result = run_result(args.model, player.id, shown, session, args.mcmc, args.seed)
    paths = write_run(args.out, name, result)
    print(puzzle_summary(result))
    print("wrote " + ", ".join(str(p) for p in paths))


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


def worldmodel_parser() -> argparse.ArgumentParser:
    """Options of the world-model tests."""
    p = argparse.ArgumentParser(
        prog="benchmark.py worldmodel",
        description="Seed 001's world-model tests on a seeded sample of questions.csv: "
        "self-consistency (prompt A lists the legal moves, prompt B chooses from that list), "
        "symmetry (each position and its colour-flipped mirror) and the illegal rate at "
        "several temperatures with a trend test; then the rubric score and the hypothesis "
        "test (H0 pattern matching: illegal rate >= 2%% at T = 0) with the power reached. "
        "--temperature is the temperature of the self-consistency and symmetry prompts. "
        "Same client, cache and taxonomy as the static run. Exit status: 0 complete, 2 "
        "error, 3 written but incomplete (rerun to complete), 130 interrupted.")
    p.add_argument("--model", required=True,
                   help="model name at the endpoint (e.g. openai/gpt-4o), or a baseline "
                   "(baselines answer every prompt with a move and ignore temperature)")
    p.add_argument("--questions", type=Path, default=Path("questions.csv"),
                   help="the test set (default: questions.csv)")
    p.add_argument("--limit", type=positive_int, default=100,
                   help="positions, a seeded sample (default 100)")
    p.add_argument("--temperatures", type=temperature_list, default=(0.0, 0.5, 1.0),
                   help="temperatures of the temperature test (default 0,0.5,1)")
    add_chat_args(p)
    p.add_argument("--concurrency", type=positive_int, default=8,
                   help="requests in flight at once (default 8)")
    p.add_argument("--breaker", type=positive_int, default=BREAKER,
                   help=f"stop after this many infrastructure failures in a row "
                   f"(default {BREAKER})")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the sample, the random player and the bootstrap (default 0)")
    p.add_argument("--stockfish", default=None, help="Stockfish binary for baseline players")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory (default results)")
    p.add_argument("--cache", type=Path, default=None,
                   help="response cache, shared with the static run (default OUT/cache.db)")
    return p


def worldmodel_command(args: argparse.Namespace) -> int:
    """Ask the three tests, score them, write JSON, report and figure; the exit status."""
    questions = select(load_questions(args.questions), "all", [], args.limit, args.seed)
    ensure_writable_dir(args.out, "--out")
    chat = None if is_baseline(args.model) else _chat_config(args)
    base = make_player(args.model, chat, args.stockfish, args.seed, args.concurrency)
    players: dict[float, Player] = {args.temperature: base}

    def at(t: float) -> Player:
        if t not in players:
            players[t] = base if chat is None else make_player(
                args.model, replace(chat, temperature=t), None, args.seed, args.concurrency)
        return players[t]
    config = WorldModelConfig(args.temperatures, args.temperature, args.concurrency,
                              args.breaker, args.seed)
    digest = sha256_file(args.questions)
    shown = {"limit": args.limit, "seed": args.seed, "temperatures": list(args.temperatures),
             "temperature": args.temperature, "max_tokens": args.max_tokens,
             "templates": [MOVE_TEMPLATE, LIST_TEMPLATE, CHOOSE_TEMPLATE]}
    name = run_name(f"worldmodel__{args.model}", [base.id, shown, digest])
    cache = JsonStore(args.cache or args.out / "cache.db", "answers")
    try:
        answers_ = ask_tests(at, questions, cache, config)
    finally:
        cache.close()
        for player in {id(p): p for p in players.values()}.values():
            player.close()
    result = {"kind": "worldmodel", "schema_version": 1, "model": args.model,
              "player": base.id, "questions": str(args.questions), "questions_sha256": digest,
              "positions": len(questions), "settings": shown, **summarise(answers_, config)}
    paths = write_wm(args.out, name, result)
    print(wm_summary(result))
    print("wrote " + ", ".join(str(p) for p in paths))
    if not result["complete"]:
        log.error("incomplete: %d requests failed for infrastructure reasons; run the same "
                  "command again to ask only those", result["infra"])
        return EXIT_INCOMPLETE
    return 0


def calibrate_parser() -> argparse.ArgumentParser:
    """Options of the ladder's calibration."""
    p = argparse.ArgumentParser(
        prog="benchmark.py calibrate",
        description="Play a gauntlet between the ladder's rungs (random mover, mix rungs, "
        "UCI_Elo settings across the engine's range, full strength) at the node limits "
        "'play' uses, one thread each, rate them with the BTD estimator anchored to the "
        "UCI_Elo values, and write the ladder CSV. Finished games are stored, so a rerun "
        "resumes.")
    p.add_argument("--games", type=positive_int, default=20,
                   help="games per pair of adjacent rungs, colours alternating; rungs two "
                   "apart play half as many (default 20)")
    p.add_argument("--step", type=positive_int, default=150,
                   help="UCI_Elo step between engine rungs above the lowest three, which are "
                   "100 apart (default 150)")
    p.add_argument("--concurrency", type=positive_int, default=os.cpu_count() or 1,
                   help="games at once (default: cores)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random and mix rungs")
    p.add_argument("--ladder", type=Path, default=LADDER,
                   help="the ladder file written (default: the committed ladder.csv)")
    p.add_argument("--store", type=Path, default=Path("results/calibration.db"),
                   help="finished games and cached moves, for resuming "
                   "(default results/calibration.db)")
    p.add_argument("--stockfish", default=None, help="Stockfish binary")
    return p


def calibrate_command(args: argparse.Namespace) -> None:
    """Play the gauntlet, rate the rungs, write the ladder."""
    settings = EngineSettings(find_stockfish(args.stockfish))
    low, high, name = engine_range(settings)
    rungs = default_rungs(low, high, args.step)
    config = CalibrationConfig(args.games, args.concurrency, args.seed)
    ensure_writable_file(args.ladder, "--ladder")
    ladder = calibrate(rungs, config, settings, args.store, name)
    write_csv(args.ladder, LADDER_FIELDS, ladder_rows(ladder))
    for rung, above in zip(ladder.rungs, ladder.rungs[1:] + [None], strict=True):
        against = "" if above is None else (
            f", expected {btd.expected_score(rung.elo - above.elo, ladder.nu):.0%} against "
            f"{above.name}")
        print(f"{rung.name:12} {rung.elo:7.0f}  90% [{rung.lo:.0f}, {rung.hi:.0f}]  "
              f"{rung.games} games, score {rung.score:.2f}{against}")
    print(f"draw parameter nu = {ladder.nu:.3f}; wrote {args.ladder} (games in {args.store})")


def _chat_config(args: argparse.Namespace, slots: int | None = None) -> ChatConfig:
    """The endpoint's settings; `slots`: requests in flight (default --concurrency)."""
    check_base_url(args.base_url)
    key, source = key_for(args.base_url, args.api_key_env, dict(os.environ))
    try:
        extra = parse_extra(args.extra)
    except ValueError as exc:
        raise ConfigError(f"--extra: {exc}") from exc
    return ChatConfig(base_url=args.base_url, model=args.model, api_key=key, key_source=source,
                      temperature=args.temperature, max_tokens=args.max_tokens,
                      system=args.system, stop=tuple(args.stop), extra=extra,
                      timeout_s=args.timeout, retries=args.retries, backoff_s=args.retry_wait,
                      slots=slots or args.concurrency)


def _settings(args: argparse.Namespace, template: str,
              chat: ChatConfig | None) -> dict[str, Any]:
    """Everything that changes the answers or the selection (recorded and in the name)."""
    settings: dict[str, Any] = {"prompt": template, "split": args.split,
                                "filters": args.filter, "limit": args.limit, "seed": args.seed}
    if chat is not None:
        settings.update(temperature=chat.temperature, max_tokens=chat.max_tokens,
                        system=chat.system, stop=list(chat.stop), extra=chat.extra,
                        base_url=chat.base_url)
    return settings


def run(args: argparse.Namespace) -> int:
    """Ask, score, estimate and write the results of one run; the exit status."""
    template = template_name(args.prompt)
    questions = select(load_questions(args.questions), args.split, args.filter, args.limit,
                       args.seed)
    if not questions:
        raise ConfigError("no question matches --split/--filter")
    ensure_writable_dir(args.out, "--out")
    chat = None if is_baseline(args.model) else _chat_config(args)
    settings = _settings(args, template, chat)
    digest = sha256_file(args.questions)
    player = make_player(args.model, chat, args.stockfish, args.seed, args.workers)
    # The endpoint is recorded but not keyed, like the answer cache: a resumed run may reach
    # the same model through another address.
    keyed = {k: v for k, v in settings.items() if k != "base_url"}
    name = run_name(f"{args.model}__{template}__{args.split}", [player.id, keyed, digest])
    try:
        items = _ask(args, player, template, questions, name)
    finally:
        player.close()
    result = _result(args, player.id, settings, digest, items, {q.id: q for q in questions})
    with atomic_write(args.out / f"{name}.json") as handle:
        json.dump(result, handle, indent=1)
    with atomic_write(args.out / f"{name}.md") as handle:
        handle.write(markdown_report(result))
    print(summary_table(result))
    print(f"wrote {args.out / (name + '.json')}, {name}.md and traces/{name}.jsonl")
    if not result["complete"]:
        log.error("incomplete: %d of %d questions failed for infrastructure reasons; the "
                  "result is marked incomplete and left off the leaderboard; run the same "
                  "command again to ask only those", result["infra"], result["asked"])
        return EXIT_INCOMPLETE
    return 0


def _ask(args: argparse.Namespace, player: Any, template: str, questions: list[Question],
         name: str) -> list[Item]:
    """Every question's scored item; traces are written under a temporary name and renamed."""
    cache = JsonStore(args.cache or args.out / "cache.db", "answers")
    if args.no_cache:
        cache = _Forgetful(cache)  # type: ignore[assignment]
    traces_path = args.out / "traces" / f"{name}.jsonl"
    traces_path.parent.mkdir(parents=True, exist_ok=True)
    items: list[Item] = []
    progress = Progress(len(questions), f"ask {args.model[:30]}")
    try:
        with atomic_write(traces_path, encoding="utf-8") as traces:
            for outcome in ask_all(player, template, TEMPLATES[template], questions, cache,
                                   args.concurrency, args.breaker):
                reply = outcome.reply
                item = score_item(outcome.question, reply.text if reply else None,
                                  outcome.infra_error, outcome.prompt,
                                  reply.finish_reason if reply else None)
                items.append(item)
                progress.update(item.category, outcome.cached)
                traces.write(trace_record(outcome, item.as_dict()) + "\n")
    except BaseException:
        kept = progress.done - progress.counts["infra"]
        if kept:
            log.info("%d answers are kept in %s; the same command resumes", kept,
                     args.cache or args.out / "cache.db")
        raise
    finally:
        progress.close()
        cache.close()
    items.sort(key=lambda i: i.id)
    return items


class _Forgetful:
    """A cache that stores answers but never returns them (--no-cache)."""

    def __init__(self, store: JsonStore) -> None:
        self._store = store

    def get(self, key: str) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _result(args: argparse.Namespace, player_id: str, settings: dict[str, Any], digest: str,
            items: list[Item], questions: dict[str, Question]) -> dict[str, Any]:
    n = scored_count(items)
    infra = sum(i.category == "infra" for i in items)
    intervals = aggregate(items, args.seed, args.bootstrap)
    value = lambda name: (intervals.get(name) or {}).get("value")  # noqa: E731
    return {
        "schema_version": SCHEMA_VERSION,
        "model": args.model, "player": player_id, "prompt": settings["prompt"],
        "questions": str(args.questions), "questions_sha256": digest,
        "split": args.split, "filters": args.filter, "limit": args.limit, "seed": args.seed,
        "settings": settings,
        "complete": infra == 0, "n": n, "asked": len(items),
        "legal_rate": value("legal_rate"), "acpl": value("acpl"),
        "accuracy": value("accuracy"), "best_move_rate": value("best_move_rate"),
        "puzzle_solve_rate": value("puzzle_solve_rate"),
        "illegal": illegal_counts(items), "infra": infra,
        "truncated": sum(i.category == TRUNCATED for i in items),
        "max_tokens": settings.get("max_tokens"),
        "elo": {**elo_estimates(items, questions, args.seed, args.mcmc),
                "predicted_game": _predicted(args, digest, intervals.get("accuracy"))},
        "world_model": world_model(items, settings.get("temperature")),
        "floor": floor_figures(list(questions.values()), args.seed),
        "intervals": {k: v for k, v in intervals.items() if k != "n"},
        "by": by_strata(items, args.seed, min(args.bootstrap, 300)),
        "items": [i.as_dict() for i in items],
    }


def _predicted(args: argparse.Namespace, digest: str,
               accuracy: dict[str, float] | None) -> dict[str, Any] | None:
    """The game Elo the ladder's static fit predicts from the accuracy, when it applies."""
    fit = load_fit(args.game_fit)
    if fit is None or accuracy is None:
        return None
    if fit.questions_sha256 != digest or args.split != "all" or args.filter or args.limit:
        log.info("no predicted game Elo: the fit in %s applies only to the whole questions "
                 "file it was made on", args.game_fit)
        return None
    return predict(fit, accuracy["value"], accuracy["lo"], accuracy["hi"]).as_dict()


def _with_status(command: Callable[[], int]) -> int:
    """run_cli for a command that returns its own exit status (0 or EXIT_INCOMPLETE)."""
    status = [0]

    def call() -> None:
        status[0] = command()
    return run_cli(call) or status[0]


def main(argv: list[str] | None = None) -> int:
    """Entry point: `benchmark.py [options]`, or the subcommands play, puzzles, worldmodel,
    calibrate, leaderboard."""
    argv = sys.argv[1:] if argv is None else argv
    setup_logging()
    if argv[:1] == ["play"]:
        args = play_parser().parse_args(argv[1:])
        return _with_status(lambda: play_command(args))
    if argv[:1] == ["puzzles"]:
        args = puzzles_parser().parse_args(argv[1:])
        return run_cli(lambda: puzzles_command(args))
    if argv[:1] == ["worldmodel"]:
        args = worldmodel_parser().parse_args(argv[1:])
        return _with_status(lambda: worldmodel_command(args))
    if argv[:1] == ["calibrate"]:
        args = calibrate_parser().parse_args(argv[1:])
        return run_cli(lambda: calibrate_command(args))
    if argv[:1] == ["leaderboard"]:
        args = leaderboard_parser().parse_args(argv[1:])

        def board() -> None:
            floor = floor_figures(load_questions(args.questions), args.seed)
            puzzles = args.puzzles or default_puzzles()
            for path in leaderboard(args.out, args.questions, puzzles, floor, args.seed):
                print(f"wrote {path}")
        return run_cli(board)
    args = build_parser().parse_args(argv)
    return _with_status(lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
