"""`benchmark.py calibrate` and `benchmark.py book`: building and measuring the ladder and the
opening book its games start from."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from chess_eval import fingerprint
from chess_eval.benchmark.arena import book
from chess_eval.benchmark.arena.game import (
    NEW_LADDER_RULE,
    PLY_CAP,
    RULES,
    midgame_starts,
)
from chess_eval.benchmark.arena.ladder import (
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
from chess_eval.benchmark.arena.versions import record_version
from chess_eval.benchmark.core.data import (
    BOOK,
    FIRST_LADDER,
    HELD_OUT_GAMES,
    LADDER_GAMES,
    LADDERS,
    REFERENCE_LADDER,
    ROOT,
    data_path,
    games_path,
    ladder_name,
    ladder_path,
    questions_path,
)
from chess_eval.benchmark.core.turns import Condition
from chess_eval.benchmark.ladders import design, held_out
from chess_eval.benchmark.ladders.calibration import (
    CalibrationConfig,
    Usable,
    add_games,
    calibrate,
    games_to_goal,
    read_games,
    usable,
)
from chess_eval.benchmark.ladders.ladder_prior import DRAW_TERMS, prior_from
from chess_eval.benchmark.players.player import is_baseline, make_player
from chess_eval.benchmark.question.questions import load_questions
from chess_eval.benchmark.question.start import GAME_CONDITIONS as CONDITIONS
from chess_eval.benchmark.stats import btd
from chess_eval.cli import (
    add_engine_args,
    cluster_of,
    non_negative_int,
    positive_float,
    positive_int,
)
from chess_eval.engine import EngineSettings, engine_identity, find_stockfish
from chess_eval.errors import DataError, PlayerError
from chess_eval.exits import Exit
from chess_eval.files import (
    ensure_writable_file,
    write_csv,
)

log = logging.getLogger(__name__)

BOOK_SIZE = 600
BOOK_SOURCES = (ROOT.parent / "shared" / "data" / "lichess" / "games",
                ROOT.parent / "shared" / "data" / "lichess" / "games-strong")


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
        "engine no ladder serves (--stockfish), it writes that engine's own ladder, a new "
        "folder data/ladders/ENGINE/, from its games, with the first committed ladder "
        "(stockfish-15.1) as its prior.")
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
    p.add_argument("--questions", type=questions_path, default="questions.csv",
                   help="source of mid-game starts (default questions.csv)")
    p.add_argument("--rungs", type=ladder_path, default=None,
                   help="calibrate these rungs: a CSV with columns rung, spec, anchor (a "
                   "ladder.csv will do), weakest first, one anchored (default: the rungs of "
                   "the ladder written, if it exists, else the default ladder's); a rung "
                   "dropped keeps its games in the games file")
    p.add_argument("--games-file", type=games_path, default=None,
                   help=f"the calibration games, read and extended (default: {LADDER_GAMES} "
                   "in the ladder's folder; a name without .gz is plain CSV)")
    p.add_argument("--ladder", type=ladder_path, default=None,
                   help="the ladder written, with NAME_cov.csv beside it: a file, a folder "
                   "or a committed ladder's name (default: the committed ladder of the engine "
                   "found, data/ladders/ENGINE/ladder.csv, new for a new engine)")
    p.add_argument("--book", type=data_path, default=BOOK,
                   help="opening book the games start from, each opening with both colours "
                   "(default: the committed data/openings.csv)")
    # Short games for tests; the games file does not record the cap, so keep it off real runs.
    p.add_argument("--ply-cap", type=positive_int, default=PLY_CAP, help=argparse.SUPPRESS)
    p.add_argument("--held-out-games", type=non_negative_int, default=0, metavar="N",
                   help="instead of calibration games, play N games between rungs 5 and 6 "
                   "steps apart (pairs the fit never sees) into --held-out-file, then check "
                   "that the engine's ladder predicts their scores within its intervals")
    p.add_argument("--held-out-file", type=games_path, default=None,
                   help=f"the held-out games, read and extended (default: {HELD_OUT_GAMES} "
                   "in the ladder's folder)")
    p.add_argument("--adjudication", type=int, choices=sorted(RULES), default=None,
                   help="the adjudication rule's version a new ladder's games are judged by "
                   "(default: that of the engine's games already in the games file, else "
                   f"{NEW_LADDER_RULE.version}, a search of {NEW_LADDER_RULE.nodes:,} nodes "
                   f"per confirmation where version 1 searches {RULES[1].nodes:,}); an "
                   "existing ladder keeps its own")
    p.add_argument("--goal-low", type=positive_float, default=design.GOAL_LOW, metavar="HALF",
                   help="the 90%% half-width the added games aim at for rungs up to "
                   f"{design.GOAL_SPLIT:,.0f} Elo (default: the ladder's goal, "
                   f"{design.GOAL_LOW:g}); a tighter one sends them to the rungs that miss it")
    p.add_argument("--store", type=Path, default=Path("results/calibration.db"),
                   help="the plan of a run, so that an interrupted one is finished (default "
                   "results/calibration.db)")
    p.set_defaults(handler=calibrate_command)


def add_book_parser(commands: Any) -> None:
    """Options of the opening book's build."""
    p = commands.add_parser(
        "book", help="build the opening book (data/openings.csv) from real games",
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
    p.add_argument("--out", type=data_path, default=BOOK, help="the book written (default: "
                   "the committed data/openings.csv)")
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
    # A committed ladder's own engine first, among the builds found (as play prefers one).
    prefer = ladder_engine(args.ladder) if args.ladder is not None and args.ladder.exists() \
        else None
    settings = EngineSettings(find_stockfish(args.stockfish, prefer=prefer))
    openings = tuple(o.start() for o in book.load_book(args.book))
    condition = Condition(args.condition)
    midgame = tuple(midgame_starts(load_questions(args.questions), args.seed)) \
        if condition == Condition.MIDGAME else ()
    engine = engine_identity(settings.path)
    if args.ladder is None:
        args.ladder = ladder_of(engine, settings.path, LADDERS, FIRST_LADDER)
        found = fingerprint.read(fingerprint_path(args.ladder))
        same = found is not None and found.difference(
            fingerprint.of_binary(settings.path)) is None
        if not same and ladder_engine(args.ladder) not in (None, engine):
            args.ladder = ladder_for(engine, LADDERS)  # a new engine: a new ladder folder
    # The games beside the ladder, unless given.
    args.games_file = args.games_file or args.ladder.with_name(LADDER_GAMES)
    args.held_out_file = args.held_out_file or args.ladder.with_name(HELD_OUT_GAMES)
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
    # The reference ladder is fitted with the draw model (log nu by the pair's level), so is
    # a ladder whose file has one; every other with one nu.
    drawn = args.ladder.resolve() == REFERENCE_LADDER.resolve() or (
        args.ladder.exists() and load_ladder(args.ladder).draws is not None)
    config = CalibrationConfig(cluster_of(args), args.seed, args.ply_cap, openings,
                               condition, midgame, rule, args.goal_low,
                               DRAW_TERMS if drawn and condition == Condition.STANDARD else 1)
    if recorded is not None:
        engine = recorded.engine  # the games are the ladder engine's, whatever this build's name
    ladder_path = condition_path(args.ladder, args.condition)
    rungs_from = args.rungs or (args.ladder if args.ladder.exists() else None)
    rungs = load_rungs(rungs_from)
    check_rungs(rungs, rungs_from, settings.path)  # before anything is written
    ensure_writable_file(ladder_path, "--ladder")
    ensure_writable_file(args.games_file, "--games-file")
    if args.held_out_games:
        return held_out_command(args, rungs, config, settings, engine)
    source = prior_source(args.ladder, engine)
    prior = prior_from(source, rungs) if source else None
    if prior:
        log.info("%s's prior: %s (planned with %s)", ladder_name(args.ladder),
                 FIRST_LADDER.relative_to(ROOT), prior.describe())
    ladder, use, aborted = calibrate(rungs, config, settings, args.games_file, args.store,
                                     args.add_games, engine, prior)
    paths = write_ladder(ladder_path, ladder)
    # A new fit is a new version of the ladder: results rated on the old one still say which.
    paths += [p for p in [record_version(ladder_path, sum(r.games for r in ladder.rungs) // 2)]
              if p is not None]
    if recorded is None:  # a new ladder: the fingerprint of the engine that measured it
        paths.append(fingerprint.of_binary(settings.path).write(fingerprint_path(args.ladder)))
    print(ladder_table(ladder, use))
    if condition == Condition.STANDARD:
        more = games_to_goal(ladder, read_games(args.games_file), prior=prior_from(
            source, ladder.rungs) if source else None, low=args.goal_low)
        goal = "every goal" if args.goal_low == design.GOAL_LOW else \
            f"--goal-low {args.goal_low:g} (and the goals above {design.GOAL_SPLIT:,.0f})"
        print(f"every rung meets {goal}" if not more else
              f"to meet {goal}: about {more:,} more games (the planner's estimate, in "
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


def check_rungs(rungs: list[Rung], path: Path | None, stockfish: str) -> None:
    """Each rung an engine player (random, mix:..., stockfish:...): a bad spec named with its
    rung and file, before a plan is kept or a folder made."""
    for rung in rungs:
        if not is_baseline(rung.spec):
            raise DataError(f"{path}: rung {rung.name}: {rung.spec!r} is not an engine player "
                            "(random, mix:random=P,nodes=N or stockfish:nodes=N)")
        try:
            make_player(rung.spec, None, stockfish, 0, 1)
        except PlayerError as exc:
            raise DataError(f"{path}: rung {rung.name}: {exc}") from None


def prior_source(path: Path, engine: str) -> Ladder | None:
    """The ladder a new engine's ladder at `path` takes its prior from: the first committed
    one (Stockfish 15.1's), when `path` is another engine's ladder; else none."""
    if path.resolve() == FIRST_LADDER.resolve() or ladder_engine(FIRST_LADDER) in (None, engine):
        return None
    return load_ladder(FIRST_LADDER)


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
            score = btd.expected_score(-gap, ladder.nu_at(rung.elo + gap / 2))
            lo, hi = RUNG_SPACING
            mark = "" if lo <= gap <= hi else " !"
            above = f"  {gap:4.0f} to next, {score:4.0%}{mark}"
        lines.append(f"{rung.name:12} {rung.elo:6.0f} +-{half:4.0f} (goal {goal[i]:.0f})"
                     f"{'' if half <= goal[i] else ' *'}  {rung.games:5} games{above}")
    left = [f"{n} of another engine version" for n in [use.other_engine] if n] + \
        [f"{n} with rungs not on the ladder" for n in [use.other_rungs] if n]
    model = ladder.draws
    drawn = f"draw parameter nu = {ladder.nu:.3f}" if model is None else (
        "log nu = " + " ".join(f"{c:+.3f}{['', ' x', ' x^2'][k] if k < 3 else f' x^{k}'}"
                               for k, c in enumerate(model.coef))
        + f", x = (the pair's mean Elo - {model.centre:.0f}) / {model.scale:.0f}")
    lines.append(f"{drawn}; * misses its goal; ! a gap outside "
                 f"{RUNG_SPACING[0]:.0f}-{RUNG_SPACING[1]:.0f} Elo"
                 + (f"; games left out: {', '.join(left)}" if left else ""))
    return "\n".join(lines)
