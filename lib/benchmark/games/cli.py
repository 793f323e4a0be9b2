"""`benchmark.py play` and `benchmark.py calibrate`: their options and handlers."""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lib import fingerprint
from lib.benchmark.core import btd, cost
from lib.benchmark.core.cli import (
    HELD_OUT_GAMES,
    LADDER_GAMES,
    ROOT,
    add_breaker_arg,
    add_chat_args,
    add_model_arg,
    add_protocol_arg,
    chat_config,
    model_label,
)
from lib.benchmark.core.header import Kind, file_name
from lib.benchmark.core.ladder_map import REFERENCE_ENGINE
from lib.benchmark.core.players import Player, budget_of, is_baseline, make_player
from lib.benchmark.core.protocols import CHAT_WINDOW, GameProtocol
from lib.benchmark.core.questions import Question, load_questions
from lib.benchmark.core.results import run_name
from lib.benchmark.core.turns import RETRIES, Condition
from lib.benchmark.games import book, design, held_out
from lib.benchmark.games.calibration import (
    CalibrationConfig,
    Usable,
    add_games,
    calibrate,
    games_to_goal,
    read_games,
    usable,
)
from lib.benchmark.games.game import (
    NEW_LADDER_RULE,
    PLY_CAP,
    RULE,
    RULES,
    midgame_starts,
    rule_of,
)
from lib.benchmark.games.ladder import (
    RUNG_SPACING,
    Ladder,
    Rung,
    check_engine,
    condition_path,
    fingerprint_path,
    ladder_engine,
    ladder_for,
    ladder_of,
    load_ladder,
    load_rungs,
    write_ladder,
)
from lib.benchmark.games.ladder_prior import prior_from
from lib.benchmark.games.play import BREAKER as GAMES_BREAKER
from lib.benchmark.games.play import CONDITIONS, PlayConfig, Session, play
from lib.benchmark.games.report import session_result, session_summary, write_session
from lib.benchmark.games.result import GamesResult
from lib.benchmark.games.sampler import MAX_GAMES, PRIOR, TARGET, SamplerConfig
from lib.cli import (
    add_engine_args,
    add_stockfish_arg,
    cluster_of,
    non_negative_int,
    positive_float,
    positive_int,
)
from lib.engine import EngineSettings, engine_identity, find_stockfish
from lib.errors import ConfigError, DataError
from lib.exits import Exit
from lib.files import (
    ensure_writable_dir,
    ensure_writable_file,
    sha256_file,
    write_csv,
)

log = logging.getLogger(__name__)

LADDER = ROOT / "ladder.csv"  # the committed, calibrated ladder (derived from GAMES)
GAMES = ROOT / LADDER_GAMES  # the committed calibration games
HELD_OUT = ROOT / HELD_OUT_GAMES  # games no fit reads (held_out.py)
BOOK = ROOT / "openings.csv"  # the committed opening book
BOOK_SIZE = 600
BOOK_SOURCES = (ROOT.parent / "shared" / "data" / "lichess" / "games",
                ROOT.parent / "shared" / "data" / "lichess" / "games-strong")


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
        description="Play full games against the calibrated ladder (ladder.csv) and rate the "
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
    p.add_argument("--ladder", type=Path, default=None,
                   help="the calibrated ladder, measured with the engine found (default: the "
                   "committed ladder whose engine fingerprint the engine's searches match: "
                   "ladder.csv for Stockfish 15.1, ladder@stockfish-17.1.csv for a native or "
                   "WebAssembly 17.1)")
    p.add_argument("--conditions", type=conditions_list, default=(Condition.STANDARD,),
                   help="start conditions, comma-separated, each rated on its own: standard, "
                   "chess960 (seeded, never the standard position), midgame (game positions "
                   "of --questions) (default standard)")
    p.add_argument("--questions", type=Path, default=Path("questions.csv"),
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
    p.add_argument("--book", type=Path, default=BOOK,
                   help="opening book the standard condition's games start from, each "
                   "opening with both colours (default: the committed openings.csv)")
    p.add_argument("--no-book", action="store_true",
                   help="start every standard game from the initial position instead (a "
                   "deterministic player then replays the same games: see README)")
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
        args.ladder = ladder_of(LADDER, engine_identity(settings.path), settings.path)
    return settings


def sampler_of(args: argparse.Namespace, ladder: Ladder) -> SamplerConfig:
    """The stop rule and the Elo's model: the ladder's rungs and --prior, --target,
    --max-games."""
    return SamplerConfig(tuple(ladder.elos), ladder.nu, btd.Prior(*args.prior), args.target,
                         args.max_games, tuple(map(tuple, ladder.cov)))


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
    questions = load_questions(args.questions) if Condition.MIDGAME in args.conditions else []
    ensure_writable_dir(args.out, "--out")
    if args.protocol != GameProtocol.FEN and is_baseline(args.model):
        raise ConfigError(f"--protocol {args.protocol}: a baseline reads the board, not a "
                          "prompt; serve it ('benchmark.py serve') and play it as the model "
                          "'served/SPEC' to use a protocol")
    if args.legal_moves and args.protocol in (GameProtocol.TOOLS, GameProtocol.PGN):
        raise ConfigError(f"--legal-moves lists the moves in a prompt; under --protocol "
                          f"{args.protocol} there is none (tools has get_legal_moves)")
    chat = None if is_baseline(args.model) else chat_config(args)
    # A Stockfish baseline plays on the rungs' build: one engine, one scale.
    player = player or make_player(args.model, chat, settings.path, args.seed,
                                   args.concurrency)
    sampler = sampler_of(args, ladder)
    openings = () if args.no_book or Condition.STANDARD not in args.conditions else tuple(
        o.start() for o in book.load_book(args.book))
    chat_history = args.chat_history if args.protocol == GameProtocol.CHAT else 0
    rule = rule_of(ladder.adjudication)
    legacy = ladder.engine == ladder_engine(LADDER) and rule == RULE
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
                          getattr(args, "price", None))


def play_command(args: argparse.Namespace, player: Player | None = None) -> int:
    """Play the games, rate them, write PGN, traces, report and figures; the exit status.
    `player`: as play_setup's."""
    setup = play_setup(args, player)
    try:
        session = play(setup.player, setup.ladders, setup.questions, setup.config,
                       args.store or args.out / "games.db", setup.settings)
    except BaseException:
        # Ctrl-C or a crash (the requests in flight landed in `play`): what this invocation
        # bought goes to the run's ledger.
        budget = budget_of(setup.player)
        if budget is not None and budget.books.sent:
            cost.record_books(args.out, setup.name, budget.books)
        raise
    finally:
        setup.player.close()
    result = play_result(args, setup, session)
    paths = write_session(args.out, setup.name, result, session, setup.ladders)
    print(session_summary(result.as_dict()))
    if session.books is not None:
        paths.append(cost.record_books(args.out, setup.name, session.books))
        print(f"  {cost.books_text(session.books)}")
    print("wrote " + ", ".join(str(p) for p in paths))
    if result.stopped:
        log.error("%s", result.stopped)
        return Exit.INCOMPLETE
    if not result.complete:
        log.error("some games were aborted for infrastructure reasons and are not rated; run "
                  "the same command again to play them")
        return Exit.INCOMPLETE
    return 0


def add_calibrate_parser(commands: Any) -> None:
    """Options of the ladder's calibration."""
    p = commands.add_parser(
        "calibrate", help="calibrate the ladder: add games between its rungs, refit",
        description="Add games between the ladder's rungs (random mover, mix rungs, "
        "node-limited Stockfish, one thread each) to the calibration games file, choosing "
        "the pairs that shrink the ladder's largest uncertainty most, then fit every game "
        "jointly (BTD with draws, the random mover at 0 exactly) and write the ladder and its "
        "covariance. "
        "Each finished game is written at once, so Ctrl-C or kill -9 loses none; rerun the "
        "same command to finish. With --add-games 0 (the default) it only refits. With an "
        "engine no ladder serves (--stockfish), it writes that engine's own ladder "
        "(ladder@ENGINE.csv beside ladder.csv) from its games, with the committed ladder as "
        "its prior.")
    p.add_argument("--add-games", type=non_negative_int, default=0,
                   help="games to add (default 0: refit the ladder from the games file)")
    add_engine_args(p, "worker processes of the embedded Dask cluster, one game each at a "
                    "time")
    # The option's name before the games ran on Dask: the same number.
    p.add_argument("--concurrency", dest="workers", type=positive_int, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random and mix rungs, part of each game's key (default 0; "
                   "machines adding games to one file at once should use different seeds)")
    p.add_argument("--condition", type=str, default=Condition.STANDARD.value,
                   choices=[c.value for c in CONDITIONS],
                   help="start condition of the games added: standard (book openings), "
                   "chess960 or midgame (game positions of --questions); a condition other "
                   "than standard re-measures the standard ladder there and writes "
                   "LADDER_CONDITION.csv, which play uses for that condition (default "
                   "standard)")
    p.add_argument("--questions", type=Path, default=Path("questions.csv"),
                   help="source of mid-game starts (default questions.csv)")
    p.add_argument("--rungs", type=Path, default=None,
                   help="calibrate these rungs: a CSV with columns rung, spec, anchor (a "
                   "ladder.csv will do), weakest first, one anchored (default: the rungs of "
                   "the ladder written, if it exists, else the default ladder's); a rung "
                   "dropped keeps its games in the games file")
    p.add_argument("--games-file", type=Path, default=GAMES,
                   help="the calibration games, read and extended (default: the committed "
                   "ladder_games.csv.gz; a name without .gz is plain CSV)")
    p.add_argument("--ladder", type=Path, default=None,
                   help="the ladder written, with NAME_cov.csv beside it (default: the "
                   "committed ladder.csv for its engine, else ladder@ENGINE.csv beside it)")
    p.add_argument("--book", type=Path, default=BOOK,
                   help="opening book the games start from, each opening with both colours "
                   "(default: the committed openings.csv)")
    # Short games for tests; the games file does not record the cap, so keep it off real runs.
    p.add_argument("--ply-cap", type=positive_int, default=PLY_CAP, help=argparse.SUPPRESS)
    p.add_argument("--held-out-games", type=non_negative_int, default=0, metavar="N",
                   help="instead of calibration games, play N games between rungs 5 and 6 "
                   "steps apart (pairs the fit never sees) into --held-out-file, then check "
                   "that the engine's ladder predicts their scores within its intervals")
    p.add_argument("--held-out-file", type=Path, default=HELD_OUT,
                   help="the held-out games, read and extended (default: the committed "
                   "ladder_held_out_games.csv.gz)")
    p.add_argument("--adjudication", type=int, choices=sorted(RULES), default=None,
                   help="the adjudication rule's version a new ladder's games are judged by "
                   "(default: that of the engine's games already in the games file, else "
                   f"{NEW_LADDER_RULE.version}, a search of {NEW_LADDER_RULE.nodes:,} nodes "
                   f"per confirmation where version 1 searches {RULES[1].nodes:,}); an "
                   "existing ladder keeps its own")
    p.add_argument("--store", type=Path, default=Path("results/calibration.db"),
                   help="the plan of a run, so that an interrupted one is finished (default "
                   "results/calibration.db)")
    p.set_defaults(handler=calibrate_command)


def add_book_parser(commands: Any) -> None:
    """Options of the opening book's build."""
    p = commands.add_parser(
        "book", help="build the opening book (openings.csv) from real games",
        description="Build the opening book that play and calibrate start from: one position "
        f"per real standard game after {book.FIRST_PLY}-{book.LAST_PLY} plies (chosen by a "
        "hash of the game's id), no position twice, kept when the engine's eval at "
        f"{book.NODES:,} nodes is within {book.MAX_CP} cp of equality.")
    p.add_argument("--games", type=Path, action="append", default=None, metavar="PGN_ZST",
                   help="games (.pgn.zst); repeatable (default: every file in "
                   "../shared/data/lichess/games and games-strong)")
    p.add_argument("--size", type=positive_int, default=BOOK_SIZE,
                   help=f"openings in the book (default {BOOK_SIZE})")
    p.add_argument("--seed", type=int, default=0, help="seed of the ply and order (default 0)")
    p.add_argument("--out", type=Path, default=BOOK, help="the book written (default: the "
                   "committed openings.csv)")
    add_engine_args(p, "worker processes of the embedded Dask cluster")
    p.set_defaults(handler=book_command)


def book_command(args: argparse.Namespace) -> None:
    """Build and write the opening book."""
    paths = args.games or sorted(p for d in BOOK_SOURCES for p in d.glob("*.pgn.zst"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing or not paths:
        raise DataError("no games to build the book from: "
                        f"{', '.join(missing) or 'none found'}")
    ensure_writable_file(args.out, "--out")
    settings = EngineSettings(find_stockfish(args.stockfish))
    rows, counts = book.build(paths, args.size, args.seed, settings, cluster_of(args))
    if len(rows) < args.size:
        raise DataError(f"only {len(rows)} balanced openings in {counts['candidates']} "
                        f"candidates; give more games (--games)")
    write_csv(args.out, book.FIELDS, rows)
    print(f"wrote {args.out}: {len(rows)} openings from {counts['candidates']} candidate "
          f"positions ({counts['evaluated']} evaluated, {counts['unbalanced']} beyond "
          f"+-{book.MAX_CP} cp)")


def calibrate_command(args: argparse.Namespace) -> int:
    """Add games, fit the ladder, write it, print it with its goals."""
    settings = EngineSettings(find_stockfish(args.stockfish))
    openings = tuple(o.start() for o in book.load_book(args.book))
    condition = Condition(args.condition)
    midgame = tuple(midgame_starts(load_questions(args.questions), args.seed)) \
        if condition == Condition.MIDGAME else ()
    engine = engine_identity(settings.path)
    if args.ladder is None:
        args.ladder = ladder_of(LADDER, engine, settings.path)
        found = fingerprint.read(fingerprint_path(args.ladder))
        same = found is not None and found.difference(
            fingerprint.of_binary(settings.path)) is None
        if not same and ladder_engine(args.ladder) not in (None, engine):
            args.ladder = ladder_for(LADDER, engine)  # a new engine: a new ladder file
    recorded = fingerprint.read(fingerprint_path(args.ladder))
    rule = args.adjudication or rule_in_games(args.games_file, engine)
    if args.ladder.exists():
        existing = load_ladder(args.ladder)
        check_engine(args.ladder, existing, engine, settings.path, recorded)
        if args.adjudication not in (None, existing.adjudication):
            raise DataError(f"{args.ladder} was measured under adjudication rule "
                            f"{existing.adjudication}, not {args.adjudication}: a ladder's "
                            "games all have one rule (another --ladder starts a new ladder)")
        rule = existing.adjudication
    config = CalibrationConfig(cluster_of(args), args.seed, args.ply_cap, openings,
                               condition, midgame, rule)
    if recorded is not None:
        engine = recorded.engine  # the games are the ladder engine's, whatever this build's name
    ladder_path = condition_path(args.ladder, args.condition)
    ensure_writable_file(ladder_path, "--ladder")
    ensure_writable_file(args.games_file, "--games-file")
    rungs = load_rungs(args.rungs or (args.ladder if args.ladder.exists() else None))
    if args.held_out_games:
        return held_out_command(args, rungs, config, settings, engine)
    source = prior_source(args.ladder, engine)
    prior = prior_from(source, rungs) if source else None
    if prior:
        log.info("a new engine's ladder: %s is its prior (planned with %s)", LADDER.name,
                 prior.describe())
    ladder, use, aborted = calibrate(rungs, config, settings, args.games_file, args.store,
                                     args.add_games, engine, prior)
    paths = write_ladder(ladder_path, ladder)
    if recorded is None:  # a new ladder: the fingerprint of the engine that measured it
        paths.append(fingerprint.of_binary(settings.path).write(fingerprint_path(args.ladder)))
    print(ladder_table(ladder, use))
    if condition == Condition.STANDARD:
        more = games_to_goal(ladder, read_games(args.games_file), prior=prior_from(
            source, ladder.rungs) if source else None)
        print("every rung meets its goal" if not more else
              f"to meet every goal: about {more:,} more games (the planner's estimate, in "
              "steps of 500)")
    print(f"wrote {', '.join(str(p) for p in paths)} from {len(use.weak)} {args.condition} "
          f"games in {args.games_file}")
    if aborted:
        log.error("incomplete: %d calibration game(s) were aborted (see the warnings); the "
                  "ladder was fitted without them; run the same command again to play them",
                  aborted)
        return Exit.INCOMPLETE
    return Exit.OK


def rule_in_games(path: Path, engine: str) -> int:
    """The adjudication rule of a new ladder: that of the engine's games in the games file
    (a refit of them into another file), else a new ladder's (game.NEW_LADDER_RULE)."""
    rules = {g.adjudication for g in read_games(path) if g.engine == engine}
    if len(rules) > 1:
        raise DataError(f"{path} holds games of {engine} under adjudication rules "
                        f"{sorted(rules)}: say which with --adjudication")
    return rules.pop() if rules else NEW_LADDER_RULE.version


def held_out_command(args: argparse.Namespace, rungs: list[Rung], config: CalibrationConfig,
                     settings: EngineSettings, engine: str) -> int:
    """Play held-out games, then print how well the engine's ladder predicts them."""
    if args.add_games:
        raise DataError("--held-out-games and --add-games: one at a time (the held-out "
                        "games must stay out of the fit)")
    ensure_writable_file(args.held_out_file, "--held-out-file")
    ladder = load_ladder(args.ladder)
    games, aborted = add_games(
        rungs, config, settings, args.held_out_file, args.store.with_name("held_out.db"),
        args.held_out_games, lambda known: held_out.plan(rungs, known, engine,
                                                         args.held_out_games, args.seed,
                                                         config.rule))
    kept = held_out.unseen(games, read_games(args.games_file))
    checks, pooled = held_out.check(ladder, usable(ladder.rungs, kept, engine,
                                                   rule=config.rule))
    print(held_out_table(checks, pooled))
    print(f"{sum(c.games for c in checks)} held-out games of {engine} in "
          f"{args.held_out_file}, against {args.ladder.name}")
    if aborted:
        log.error("incomplete: %d held-out game(s) were aborted; run the same command again",
                  aborted)
        return Exit.INCOMPLETE
    return Exit.OK


def held_out_table(checks: list[held_out.PairCheck], pooled: float) -> str:
    """Each held-out pair's observed against predicted score, and the summary."""
    lines = [f"{c.weak:12} {c.strong:12} {c.games:4} games  observed {c.observed:5.1%}  "
             f"predicted {c.expected:5.1%} +-{btd.Z90 * c.sd:5.1%}"
             f"{'' if c.inside else '  outside'}" for c in checks]
    inside = sum(c.inside for c in checks)
    lines.append(f"{inside} of {len(checks)} pairs inside their 90% intervals; pooled z = "
                 f"{pooled:+.2f} (within +-{btd.Z90:.3f} nine times in ten)")
    return "\n".join(lines)


def prior_source(path: Path, engine: str) -> Ladder | None:
    """The ladder a new engine's ladder at `path` takes its prior from: the committed one
    (ladder.csv), when `path` is another engine's ladder beside it; else none."""
    if path.resolve() == LADDER.resolve() or ladder_engine(LADDER) in (None, engine):
        return None
    return load_ladder(LADDER)


def ladder_table(ladder: Ladder, use: Usable) -> str:
    """The rungs, their intervals against the goals, and each adjacent gap with its
    expected score (! outside RUNG_SPACING)."""
    goal = design.goals(ladder.elos)
    lines = []
    for i, rung in enumerate(ladder.rungs):
        half = (rung.hi - rung.lo) / 2
        above = ""
        if i + 1 < len(ladder.rungs):
            gap = ladder.rungs[i + 1].elo - rung.elo
            score = btd.expected_score(-gap, ladder.nu)
            lo, hi = RUNG_SPACING
            mark = "" if lo <= gap <= hi else " !"
            above = f"  {gap:4.0f} to next, {score:4.0%}{mark}"
        lines.append(f"{rung.name:12} {rung.elo:6.0f} +-{half:4.0f} (goal {goal[i]:.0f})"
                     f"{'' if half <= goal[i] else ' *'}  {rung.games:5} games{above}")
    left = [f"{n} of another engine version" for n in [use.other_engine] if n] + \
        [f"{n} with rungs not on the ladder" for n in [use.other_rungs] if n]
    lines.append(f"draw parameter nu = {ladder.nu:.3f}; * misses its goal; ! a gap outside "
                 f"{RUNG_SPACING[0]:.0f}-{RUNG_SPACING[1]:.0f} Elo"
                 + (f"; games left out: {', '.join(left)}" if left else ""))
    return "\n".join(lines)
