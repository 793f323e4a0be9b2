"""`benchmark.py play`: its options and handler."""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chess_eval import fingerprint
from chess_eval.benchmark.arena import book
from chess_eval.benchmark.arena.game import (
    PLY_CAP,
    RULE,
    rule_of,
)
from chess_eval.benchmark.arena.ladder import (
    Ladder,
    check_engine,
    condition_path,
    fingerprint_path,
    ladder_engine,
    ladder_of,
    load_ladder,
)
from chess_eval.benchmark.arena.versions import version_of
from chess_eval.benchmark.core.cli import (
    add_breaker_arg,
    add_chat_args,
    add_model_arg,
    add_protocol_arg,
    model_config,
    model_label,
)
from chess_eval.benchmark.core.data import (
    BOOK,
    FIRST_LADDER,
    LADDERS,
    data_path,
    ladder_path,
    questions_path,
)
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import run_name
from chess_eval.benchmark.core.run import Run, finish
from chess_eval.benchmark.core.turns import RETRIES, Condition
from chess_eval.benchmark.games.play import BREAKER as GAMES_BREAKER
from chess_eval.benchmark.games.play import CONDITIONS, PlayConfig, Session, play
from chess_eval.benchmark.games.report import session_result, session_summary, write_session
from chess_eval.benchmark.games.result import GamesResult
from chess_eval.benchmark.games.sampler import MAX_GAMES, PRIOR, TARGET, SamplerConfig, for_ladder
from chess_eval.benchmark.players.player import Player, budget_of, is_baseline, make_player
from chess_eval.benchmark.players.protocols import CHAT_WINDOW, GameProtocol
from chess_eval.benchmark.question.questions import Question, load_questions
from chess_eval.benchmark.stats import btd
from chess_eval.cli import (
    add_stockfish_arg,
    non_negative_int,
    positive_float,
    positive_int,
)
from chess_eval.engine import REFERENCE_ENGINE, EngineSettings, engine_identity, find_stockfish
from chess_eval.errors import ConfigError, DataError
from chess_eval.files import (
    ensure_writable_dir,
    sha256_file,
)

log = logging.getLogger(__name__)


def conditions_list(text: str) -> tuple[Condition, ...]:
    """--conditions: a comma-separated list of known start conditions."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in CONDITIONS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown condition(s) {unknown or [text]}: use {', '.join(CONDITIONS)}")
    return tuple(Condition(n) for n in names)


def add_play_parser(commands: Any) -> None:
    """Options of games against the ladder."""
    p = commands.add_parser(
        "play", help="play full games against the calibrated ladder",
        description="Play full games against the calibrated ladder and rate the "
        "player with a Bradley-Terry-Davidson model: a Bayesian game Elo with a 90% interval "
        "(the ladder's own uncertainty included) per start condition, rungs chosen by "
        "Thompson sampling, stopping at +-TARGET Elo or "
        "MAX_GAMES. The model is asked by --protocol (default: one stateless request per "
        "move with the FEN, the moves so far and the side to move). Writes "
        "a PGN of every game, per-move traces, a JSON and markdown report and PNG figures. "
        "Exit status: 0 complete, 2 error, 3 written but some games "
        "were aborted for infrastructure reasons, 130 interrupted (rerun to resume).")
    add_model_arg(p)
    add_chat_args(p)
    p.add_argument("--ladder", type=ladder_path, default=None,
                   help="the calibrated ladder, measured with the engine found: its ladder.csv, "
                   "its folder, or a committed ladder's name (default: the committed ladder "
                   "whose engine fingerprint the engine's searches match: stockfish-15.1 for "
                   "Stockfish 15.1, stockfish-17.1 for a native or WebAssembly 17.1; they are "
                   "in data/ladders/)")
    p.add_argument("--conditions", type=conditions_list, default=(Condition.STANDARD,),
                   help="start conditions, comma-separated, each rated on its own: standard, "
                   "chess960 (seeded, never the standard position), midgame (game positions "
                   "of --questions) (default standard)")
    p.add_argument("--questions", type=questions_path, default="questions.csv",
                   help="source of mid-game starts (default questions.csv)")
    add_protocol_arg(p, tuple(GameProtocol))
    p.add_argument("--chat-history", type=non_negative_int, default=CHAT_WINDOW, metavar="N",
                   help="chat protocol: keep only the last N exchanges of the conversation "
                   f"(default {CHAT_WINDOW}, which keeps an 80-move game's prompt tokens within "
                   "10x fen's; 0: the whole game; recorded in the result). When the server "
                   "says the conversation does not fit its context, older exchanges are left "
                   "out and the game goes on")
    p.add_argument("--legal-moves", action="store_true",
                   help="list the legal moves in every prompt (recorded in the result)")
    p.add_argument("--illegal-retries", type=non_negative_int, default=RETRIES,
                   help="failed answers followed up before the game is forfeited (default "
                   f"{RETRIES}; what the model is told is the protocol's: under blind one "
                   "fixed line, under pgn at temperature 0 none, the side forfeits at once)")
    p.add_argument("--ply-cap", type=positive_int, default=PLY_CAP,
                   help=f"a game this many plies long is drawn (default {PLY_CAP})")
    p.add_argument("--target", type=positive_float, default=TARGET,
                   help=f"stop a condition when its 90%% interval is within +-TARGET Elo, "
                   "the ladder's part included, or when its own games are and the ladder's "
                   "part is at least as wide as theirs (reported as 'limited by the "
                   f"ladder') (default {TARGET:.0f})")
    p.add_argument("--max-games", type=positive_int, default=MAX_GAMES,
                   help=f"stop a condition after this many rated games (default {MAX_GAMES})")
    p.add_argument("--prior", type=float, nargs=2, default=(PRIOR.mean, PRIOR.sd),
                   metavar=("MEAN", "SD"),
                   help=f"normal prior of the Elo (default {PRIOR.mean:.0f} {PRIOR.sd:.0f}: "
                   "wide enough for anything from a random mover to the top rung; the promptfoo "
                   "gpt5-chess write-up's 1800 300 undercovers weak players, see "
                   "bench/games_coverage.py)")
    p.add_argument("--mcmc", action="store_true",
                   help="report the posterior by MCMC instead of the Laplace approximation")
    add_breaker_arg(p, "games", GAMES_BREAKER)
    p.add_argument("--concurrency", type=positive_int, default=2,
                   help="games at once, and the sampler's batch: the schedule depends on it "
                   "(default 2)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of starts, random rungs and the sampler (default 0)")
    add_stockfish_arg(p)
    p.add_argument("--book", type=data_path, default=BOOK,
                   help="opening book the standard condition's games start from, each "
                   "opening with both colours (default: the committed data/openings.csv)")
    p.add_argument("--no-book", action="store_true",
                   help="start every standard game from the initial position instead (a "
                   "deterministic player then replays the same games: see "
                   "docs/games-and-ladder.md)")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="results directory (default results)")
    p.add_argument("--store", type=Path, default=None,
                   help="finished games and every answer, for resuming (default OUT/games.db)")
    p.set_defaults(handler=play_command)


@dataclass(frozen=True)
class PlaySetup:
    """Everything `play` needs, built from its options (the CLI's and the Inspect task's)."""

    player: Player  # the model or baseline rated
    ladders: dict[str, Ladder]  # each condition's ladder
    questions: list[Question]  # the mid-game starts' source (empty without midgame)
    config: PlayConfig  # how the games are played and scheduled
    settings: EngineSettings  # the rungs' and the judge's engine
    sampler: SamplerConfig  # the stop rule and the Elo's model
    shown: dict[str, Any]  # the settings as the result records them
    name: str  # the run's file name


def play_engine(args: argparse.Namespace) -> EngineSettings:
    """The rungs' engine: among the builds found, one the reference ladder serves (or
    --ladder's); without --ladder, sets it to the ladder this engine's searches match."""
    prefer = ladder_engine(args.ladder) if args.ladder is not None and args.ladder.exists() \
        else REFERENCE_ENGINE
    settings = EngineSettings(find_stockfish(args.stockfish, prefer=prefer))
    if args.ladder is None:
        args.ladder = ladder_of(engine_identity(settings.path), settings.path, LADDERS,
                                FIRST_LADDER)
    return settings


def sampler_of(args: argparse.Namespace, ladder: Ladder) -> SamplerConfig:
    """The stop rule and the Elo's model: the ladder's rungs and --prior, --target,
    --max-games."""
    return for_ladder(SamplerConfig(tuple(ladder.elos), ladder.nu, btd.Prior(*args.prior),
                                    args.target, args.max_games), ladder)


def play_setup(args: argparse.Namespace, player: Player | None = None) -> PlaySetup:
    """The engine, ladders, player and schedule that `args` ask for; `player`: a model
    already made (an Inspect log's, its games in the store), else --model's."""
    settings = play_engine(args)
    engine = engine_identity(settings.path)
    ladder = load_ladder(args.ladder)
    recorded = fingerprint.read(fingerprint_path(args.ladder))
    check_engine(args.ladder, ladder, engine, settings.path, recorded)
    ladders: dict[str, Ladder] = {c: load_ladder(condition_path(args.ladder, c))
               if condition_path(args.ladder, c).exists() else ladder for c in CONDITIONS}
    for c in args.conditions:
        if ladders[c] is not ladder:
            check_engine(condition_path(args.ladder, c), ladders[c], engine, settings.path,
                         recorded)
        elif c != Condition.STANDARD:
            log.warning("no ladder measured in %s (%s): its games are rated on the standard "
                        "ladder", c, condition_path(args.ladder, c).name)
    if not args.questions.is_file():  # refused even where no condition reads it: a typo
        raise DataError(f"{args.questions} does not exist")
    questions = load_questions(args.questions) if Condition.MIDGAME in args.conditions else []
    ensure_writable_dir(args.out, "--out")
    if args.protocol != GameProtocol.FEN and is_baseline(args.model):
        raise ConfigError(f"--protocol {args.protocol}: a baseline reads the board, not a "
                          "prompt; serve it ('benchmark.py serve') and play it as the model "
                          "'served/SPEC' to use a protocol")
    if args.legal_moves and args.protocol in (GameProtocol.TOOLS, GameProtocol.PGN):
        raise ConfigError(f"--legal-moves lists the moves in a prompt; under --protocol "
                          f"{args.protocol} there is none (tools has get_legal_moves)")
    chat = None if is_baseline(args.model) else model_config(args)
    # A Stockfish baseline plays on the rungs' build: one engine, one scale.
    player = player or make_player(args.model, chat, settings.path, args.seed,
                                   args.concurrency)
    sampler = sampler_of(args, ladder)
    openings = () if args.no_book or Condition.STANDARD not in args.conditions else tuple(
        o.start() for o in book.load_book(args.book))
    chat_history = args.chat_history if args.protocol == GameProtocol.CHAT else 0
    rule = rule_of(ladder.adjudication)
    legacy = ladder.engine == ladder_engine(FIRST_LADDER) and rule == RULE
    config = PlayConfig(args.conditions, sampler, args.illegal_retries, args.legal_moves,
                        args.ply_cap, args.concurrency, args.seed, openings, args.breaker,
                        args.protocol, chat_history,
                        () if legacy else (ladder.engine, rule.name))
    shown = {"conditions": list(args.conditions), "prompt": config.template,
             "protocol": str(args.protocol), "chat_history": chat_history,
             "response_format": getattr(args, "response_format", "text"),
             # A model's request settings (its reasoning effort only when given: absent from
             # the names of runs made before the option).
             "request": None if chat is None else {
                 "temperature": chat.temperature, "max_tokens": chat.max_tokens,
                 "extra": chat.extra, **({"reasoning_effort": chat.reasoning_effort}
                                         if chat.reasoning_effort else {})},
             "legal_moves": args.legal_moves, "illegal_retries": args.illegal_retries,
             "ply_cap": args.ply_cap, "target": args.target,
             "max_games": args.max_games, "prior": list(args.prior),
             "concurrency": args.concurrency, "seed": args.seed,
             "ladder_sha256": sha256_file(args.ladder),
             "condition_ladders_sha256": {
                 c: sha256_file(condition_path(args.ladder, c))
                 for c in args.conditions if ladders[c] is not ladder},
             "book_sha256": sha256_file(args.book) if openings else None,
             "answered_by": player.answered_by,
             # The build that played the rungs, as it names itself: its searches match the
             # ladder's fingerprint, whatever the name.
             "rungs_engine": engine}
    label = f"{model_label(args)}__{'-'.join(args.conditions)}" + (
        "" if args.protocol == GameProtocol.FEN else f"__{args.protocol}")
    name = run_name(file_name(Kind.PLAY, label), [player.id, shown])
    return PlaySetup(player, ladders, questions, config, settings, sampler, shown, name)


def play_result(args: argparse.Namespace, setup: PlaySetup, session: Session) -> GamesResult:
    """The rated result of a session played as `setup` says."""
    # Mid-game starts come from the questions file: the leaderboard compares them only with
    # runs on the same file.
    return session_result(model_label(args), setup.player.id, setup.shown, session,
                          setup.ladders, setup.sampler, args.seed, args.mcmc,
                          sha256_file(args.questions) if setup.questions else None,
                          getattr(args, "price", None),
                          getattr(version_of(args.ladder, setup.shown["ladder_sha256"]),
                                  "number", None))


def play_command(args: argparse.Namespace, player: Player | None = None) -> int:
    """Play the games, rate them, write PGN, traces, report and figures; the exit status.
    `player`: as play_setup's."""
    setup = play_setup(args, player)
    with Run(args.out, [(setup.name, "", budget_of(setup.player))]) as run:
        run.owns(setup.player)
        session = play(setup.player, setup.ladders, setup.questions, setup.config,
                       args.store or args.out / "games.db", setup.settings, run=run)
        result = play_result(args, setup, session)
        paths = write_session(args.out, setup.name, result, session, setup.ladders)
        print(session_summary(result.as_dict()))
    return finish(run, result, paths)
