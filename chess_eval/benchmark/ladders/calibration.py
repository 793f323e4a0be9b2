"""Calibrate the ladder: games between rungs, kept in a committed results file, fitted jointly.

`ladder_games.csv.gz` holds one row per calibration game (pair, colours, opening, result,
plies, termination, engine): a CSV, gzip-compressed so that tens of thousands of games stay a
small file (`gzip -dc ladder_games.csv.gz | less` reads it; a name without .gz is plain
CSV). `calibrate` adds games to it: the pairs come from `design.choose`, the games run on the
Dask cluster (`chess_eval.cluster`, `match.play_job`), and the client appends each finished game
to a log in the store (SQLite, one commit per game, so Ctrl-C or kill -9 loses none). The
games file is rewritten (sorted, to a temporary name, renamed) once at the end, on
Ctrl-C, and every MERGE_EVERY_S seconds of a long run: its bytes never depend on the order
games finished in. The plan of a run is kept in the store until all its games are in the file:
a rerun finishes that plan instead of making a new one, so an interrupted run ends
byte-identical to an undisturbed one. `ladder.csv` and its covariance are then derived from
every game of the current engine.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import logging
import time
import zlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np

from chess_eval.benchmark.arena.game import (
    PLY_CAP,
    RULE,
    RULES,
    WHITE_SCORE,
    chess960_start,
    standard_start,
)
from chess_eval.benchmark.arena.ladder import (
    CONDITION_TAU,
    Ladder,
    Rung,
    anchor_elo,
    anchor_of,
    by_elo,
    pairs,
    rate,
    rate_in_condition,
    rungs_measured,
)
from chess_eval.benchmark.arena.match import GameJob, play_job
from chess_eval.benchmark.core.progress import Progress
from chess_eval.benchmark.core.turns import ENGINE_TEMPLATE, Condition, Side, Start
from chess_eval.benchmark.ladders import design
from chess_eval.benchmark.ladders.ladder_prior import LadderPrior, averaged, averaged_draws
from chess_eval.benchmark.players.player import make_player
from chess_eval.benchmark.stats import btd, draws
from chess_eval.cluster import ClusterSettings, EngineCluster
from chess_eval.engine import EngineSettings
from chess_eval.errors import DataError, FitError
from chess_eval.files import atomic_write, open_text, remove_stale_temps, write_csv
from chess_eval.kvstore import JsonStore

log = logging.getLogger(__name__)

PLAN_KEY = "pending plan"
MERGE_EVERY_S = 600.0  # a long run rewrites the games file this often, so it can be committed


@dataclass(frozen=True)
class CalibrationConfig:
    """How calibration games are played."""

    cluster: ClusterSettings  # where the games run (one game per worker at a time)
    seed: int  # seeds the mix and random rungs (part of each game's key)
    ply_cap: int = PLY_CAP
    openings: tuple[Start, ...] = ()  # the book: each pair plays each opening with both
    # colours; none: every game starts from the initial position
    condition: Condition = Condition.STANDARD  # the start condition of the games added
    midgame: tuple[Start, ...] = ()  # mid-game starts (the midgame condition)
    rule: int = RULE.version  # the adjudication rule's version: the ladder's (game.RULES)
    goal_low: float = design.GOAL_LOW  # the 90% half-width the planner aims at up to
    # design.GOAL_SPLIT (a tighter one than the ladder's sends the games where it is missed)
    draw_terms: int = 1  # log nu's coefficients in the pair's mean Elo (fit's draw_terms):
    # the reference ladder's draw model, ladder_prior.DRAW_TERMS; 1: one nu


@dataclass(frozen=True, order=True)
class CalibrationGame:
    """One row of the games file; the field order is the file's sort order."""

    condition: str  # the start condition: standard (book openings), chess960, midgame
    weak: str  # the pair's rungs by name, weaker first (ladder order)
    strong: str
    seed: int  # the calibration's seed
    number: int  # the pair's n-th game of this seed: odd, the weaker rung has White
    opening: str  # the start's label (book#ID, or standard)
    result: str  # 1-0, 1/2-1/2 or 0-1, White's view
    termination: str  # checkmate, threefold repetition, adjudication: decisive, ...
    plies: int
    # The name and version of the engine that played it: the ladder's, for a build whose
    # searches match the ladder's fingerprint under another name (the workers' is checked).
    engine: str
    # The version of the adjudication rule it was judged by (game.RULES). A file without the
    # column holds version 1's games only: the column is written once a game of another is.
    adjudication: int = RULE.version

    @property
    def weak_score(self) -> float:
        """The weaker rung's score."""
        white = WHITE_SCORE[self.result]
        return white if self.number % 2 else 1 - white


GAME_FIELDS = [f.name for f in fields(CalibrationGame)]
REQUIRED_FIELDS = GAME_FIELDS[:-1]  # a file without the adjudication column: version 1


def read_games(path: Path) -> list[CalibrationGame]:
    """The calibration games file (none yet when it is missing); one line naming a bad row."""
    if not path.exists():
        return []
    try:
        with open_text(path) as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as exc:
        raise DataError(f"cannot read the calibration games {path}: {exc}") from exc
    if rows and set(REQUIRED_FIELDS) - set(rows[0]):
        raise DataError(f"{path}: not a calibration games file (columns {REQUIRED_FIELDS}, "
                        "and adjudication where a game was judged by another rule than 1)")
    out = []
    for line, row in enumerate(rows, start=2):
        try:
            game = CalibrationGame(
                row["condition"], row["weak"], row["strong"], int(row["seed"]),
                int(row["number"]), row["opening"], row["result"], row["termination"],
                int(row["plies"]), row["engine"],
                int(row.get("adjudication") or RULE.version))
        except (TypeError, ValueError) as exc:
            raise DataError(f"{path}: line {line}: {exc}") from exc
        if game.result not in WHITE_SCORE or game.number < 1 or \
                game.adjudication not in RULES:
            raise DataError(f"{path}: line {line}: result must be one of {list(WHITE_SCORE)}, "
                            f"number at least 1 and adjudication one of {list(RULES)}")
        out.append(game)
    return out


def write_games(path: Path, games: list[CalibrationGame]) -> None:
    """The games file, sorted (the order never depends on which game finished first); under
    a .gz name compressed with no time stamp, so that the same games give the same bytes.
    The adjudication column only once a game of a rule other than version 1 is in it."""
    columns = GAME_FIELDS if any(g.adjudication != RULE.version for g in games) \
        else REQUIRED_FIELDS
    rows = ({k: v for k, v in asdict(g).items() if k in columns} for g in sorted(games))
    if path.suffix != ".gz":
        write_csv(path, columns, rows)
        return
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    with atomic_write(path, "wb") as handle:
        handle.write(gzip.compress(text.getvalue().encode("utf-8"), mtime=0))


@dataclass(frozen=True)
class Usable:
    """The games a fit may use, as rung indices, and what was left out."""

    weak: np.ndarray
    strong: np.ndarray
    weak_score: np.ndarray
    other_engine: int  # games of another engine version (or adjudication rule)
    other_rungs: int  # games with a rung that is not on the ladder


def usable(rungs: list[Rung], games: list[CalibrationGame], engine: str,
           condition: str = Condition.STANDARD, rule: int = RULE.version) -> Usable:
    """The games of one start condition between the ladder's rungs played by this engine
    and judged by this adjudication rule (a game of another engine or rule is another
    engine's, as far as the ladder is concerned)."""
    index = {r.name: i for i, r in enumerate(rungs)}
    games = [g for g in games if g.condition == condition]
    mine = [g for g in games if g.engine == engine and g.adjudication == rule]
    known = [g for g in mine if g.weak in index and g.strong in index]
    return Usable(np.array([index[g.weak] for g in known], int),
                  np.array([index[g.strong] for g in known], int),
                  np.array([g.weak_score for g in known], float),
                  len(games) - len(mine), len(mine) - len(known))


def fit(rungs: list[Rung], games: Usable, engine: str,
        prior: LadderPrior | None = None, rule: int = RULE.version,
        draw_terms: int = 1) -> Ladder:
    """The ladder from a joint fit of the usable games (colours do not enter the model):
    the rungs that have games, weakest first by measured Elo. With a `prior` (a new engine's
    ladder, from another engine's), every rung, with or without games; and with
    `draw_terms` > 1 (the reference ladder's, ladder_prior.DRAW_TERMS), log nu a polynomial
    in the pair's mean Elo of that many coefficients fitted with the rungs (draws.py), else
    one nu. `rule`: the adjudication rule's version the games were judged by, recorded in
    the ladder."""
    return replace(_fit(rungs, games, engine, prior, draw_terms), adjudication=rule)


def _fit(rungs: list[Rung], games: Usable, engine: str,
         prior: LadderPrior | None, draw_terms: int = 1) -> Ladder:
    if prior is not None and draw_terms > 1:
        if anchor_of(rungs) != 0:
            raise DataError("a ladder with a prior must list its anchor rung first")
        fitted = averaged_draws(prior, games.weak, games.strong, games.weak_score, draw_terms)
        measured = rungs_measured(rungs, fitted.elos + anchor_elo(rungs), fitted.cov,
                                  games.weak, games.strong, games.weak_score)
        model = fitted.model  # x from Elos relative to the anchor (0 on every ladder)
        return by_elo(Ladder(measured, float(model.nu(model.centre)), engine, fitted.cov,
                             fitted.describe(prior), draws=model, joint=fitted.joint_cov))
    if draw_terms > 1:
        raise DataError("a draw model is fitted only with a prior (the reference ladder's)")
    if prior is not None:
        if anchor_of(rungs) != 0:
            raise DataError("a ladder with a prior must list its anchor rung first")
        avg = averaged(prior, games.weak, games.strong, games.weak_score)
        measured = rungs_measured(rungs, avg.elos + anchor_elo(rungs), avg.cov, games.weak,
                                  games.strong, games.weak_score)
        return by_elo(Ladder(measured, avg.nu, engine, avg.cov, avg.describe(prior)))
    played = sorted(set(games.weak) | set(games.strong))
    if anchor_of(rungs) not in played:
        raise DataError("no calibration games of this engine with the anchor rung "
                        f"{rungs[anchor_of(rungs)].name}: run 'benchmark.py calibrate "
                        "--add-games N' first")
    if len(played) < len(rungs):
        log.warning("rungs without games yet, left out of the ladder: %s",
                    ", ".join(r.name for i, r in enumerate(rungs) if i not in played))
    new = {old: k for k, old in enumerate(played)}
    weak = np.array([new[i] for i in games.weak], int)
    strong = np.array([new[i] for i in games.strong], int)
    try:
        ladder = rate([rungs[i] for i in played], weak, strong, games.weak_score)
    except FitError as exc:
        reason = str(exc).removesuffix("; give nu")
        raise FitError(f"{reason}: the calibration needs more games ('benchmark.py "
                       "calibrate --add-games N')") from exc
    return by_elo(Ladder(ladder.rungs, ladder.nu, engine, ladder.cov))


def planning_elos(rungs: list[Rung], games: Usable, prior: LadderPrior | None = None
                  ) -> tuple[np.ndarray, float, np.ndarray]:
    """The Elos, nu and variance inflation (see `inflation`) the planner assumes: the fit's
    once every rung has games, else even gaps of PLAN_GAP around the anchor and none. With a
    prior: the fit with it (averaged over its settings, as the ladder is written) once
    there are draws and decisive games, else its mean."""
    if prior is not None:
        scores = games.weak_score
        if (scores == btd.DRAW).any() and (scores != btd.DRAW).any():
            if anchor_of(rungs) != 0:
                raise DataError("a ladder with a prior must list its anchor rung first")
            avg = averaged(prior, games.weak, games.strong, scores)
            elos = avg.elos + anchor_elo(rungs)
            ladder = Ladder([replace(r, elo=e) for r, e in zip(rungs, elos, strict=True)],
                            avg.nu, "", avg.cov)
            return elos, avg.nu, inflation(ladder, games, prior)
        return prior.mean, design.PLAN_NU, np.ones(len(rungs))
    played = np.zeros(len(rungs), bool)
    played[games.weak] = played[games.strong] = True
    if played.all():
        try:
            ladder = rate(rungs, games.weak, games.strong, games.weak_score)
            return ladder.elos, ladder.nu, inflation(ladder, games)
        except FitError as exc:
            log.info("planning with assumed gaps: %s", exc)
    k = anchor_of(rungs)
    gaps = design.PLAN_GAP * (np.arange(len(rungs)) - k)
    return anchor_elo(rungs) + gaps, design.PLAN_NU, np.ones(len(rungs))


def inflation(ladder: Ladder, games: Usable, prior: LadderPrior | None = None) -> np.ndarray:
    """Each rung's variance as the fit reports it (ladder.cov: the Laplace covariance, with
    nu's uncertainty in it) over the planner's (the expected information of the same games
    at the fitted Elos and nu, plus the prior's at its planning settings), 1 at the anchor.
    On ladder III it is 1.00-1.05: without it the planner stopped while two rungs still
    reported +-35.4 and +-36 against a goal of 35. With a prior it also carries the spread
    between the prior's settings (ladder_prior.averaged): without it the 17.1 ladder's
    planner stopped while five rungs reported 1-2 Elo over their goals.
    `ladder` is in the order of the rungs the games index."""
    info = design.information(ladder.elos, ladder.nu, games.weak, games.strong)
    if prior is not None:
        info = info + prior.information()
    planned = np.diag(design.covariance(info, anchor_of(ladder.rungs)))
    reported = np.diag(ladder.cov)
    return np.where(planned > 0, reported / np.where(planned > 0, planned, 1.0), 1.0)


def plan(rungs: list[Rung], games: list[CalibrationGame], engine: str, add: int,
         seed: int, condition: str = Condition.STANDARD,
         prior: LadderPrior | None = None, rule: int = RULE.version,
         low: float = design.GOAL_LOW) -> list[CalibrationGame]:
    """The next `add` games of a condition (result fields blank): their pairs by
    design.choose (toward half-width `low` up to design.GOAL_SPLIT), numbered on from the
    pair's last game of this seed, condition and rule. In a condition other than standard
    the standard ladder's measurement is prior information; a new engine's ladder has its
    `prior` (ladder_prior.py)."""
    use = usable(rungs, games, engine, condition, rule)
    standard = usable(rungs, games, engine, rule=rule)
    elos, nu, inflate = planning_elos(rungs, standard, prior)
    info = design.information(elos, nu, use.weak, use.strong)
    if prior is not None and condition == Condition.STANDARD:
        info = info + prior.information()
    if condition != Condition.STANDARD:
        info = info + _prior_information(rungs, standard, elos, nu)
        inflate = np.ones(len(rungs))  # the condition's fit is another model: none known
    chosen = design.choose(elos, nu, info, anchor_of(rungs), pairs(len(rungs)), add, low,
                           inflate=inflate)
    numbers: dict[tuple[str, str], int] = {}
    for g in games:
        if g.seed == seed and g.condition == condition and g.adjudication == rule:
            key = (g.weak, g.strong)
            numbers[key] = max(numbers.get(key, 0), g.number)
    out = []
    for weak, strong in chosen:
        key = (rungs[weak].name, rungs[strong].name)
        numbers[key] = numbers.get(key, 0) + 1
        out.append(CalibrationGame(condition, *key, seed, numbers[key], "", "", "", 0, engine,
                                   rule))
    return out


def games_to_goal(ladder: Ladder, games: list[CalibrationGame],
                  condition: str = Condition.STANDARD, prior: LadderPrior | None = None,
                  low: float = design.GOAL_LOW) -> int:
    """The planner's estimate of the games still needed for every rung of a fitted ladder to
    meet its goal (design.goals), played as `plan` would choose them. `prior`: the one the
    ladder was fitted with, for its rungs in the ladder's order."""
    use = usable(ladder.rungs, games, ladder.engine, condition, ladder.adjudication)
    info = design.information(ladder.elos, ladder.nu, use.weak, use.strong)
    inflate = inflation(ladder, use, prior) if condition == Condition.STANDARD else None
    if prior is not None:
        info = info + prior.information()
    total, _ = design.games_to_goal(ladder.elos, ladder.nu, info, anchor_of(ladder.rungs),
                                    pairs(len(ladder.rungs)), step=500, low=low,
                                    inflate=inflate)
    return total


@dataclass(frozen=True)
class SpanFit:
    """How well the fitted ladder predicts the games between rungs a given number of steps
    apart: the model check behind pairing rungs up to ladder.MAX_SPAN apart."""

    span: int  # steps apart on the fitted ladder (1: neighbours)
    games: int  # games between rungs this far apart
    observed: float  # the weaker rung's mean score in them
    expected: float  # its mean expected score under the fitted ladder (BTD, nu)
    z: float  # (observed - expected) in standard errors of the observed mean under the model


def fit_by_span(ladder: Ladder, games: Usable) -> list[SpanFit]:
    """Observed against expected scores of the weaker rung, by how far apart the rungs are
    (indices into ladder.rungs). The ratings were fitted to these games, so |z| reads a
    little small; a span whose |z| is large says the model does not hold that far."""
    elos, span = ladder.elos, np.abs(games.strong - games.weak)
    low, high = np.minimum(games.weak, games.strong), np.maximum(games.weak, games.strong)
    weak_score = np.where(games.strong > games.weak, games.weak_score, 1 - games.weak_score)
    # nu at each pair's mean Elo (the ladder's draw model; one nu's everywhere without one)
    win, draw, _ = draws.probabilities(elos[low], elos[high], ladder.draw_model)
    mean = win + draw / 2
    var = win + draw / 4 - mean ** 2
    out = []
    for k in sorted(set(span.tolist())):
        at = span == k
        sd = float(np.sqrt(var[at].sum()))
        z = float((weak_score[at].sum() - mean[at].sum()) / sd) if sd > 0 else 0.0
        out.append(SpanFit(int(k), int(at.sum()), float(weak_score[at].mean()),
                           float(mean[at].mean()), z))
    return out


def _prior_information(rungs: list[Rung], standard: Usable, elos: np.ndarray,
                       nu: float) -> np.ndarray:
    """The precision of rate_in_condition's prior (standard games' information, widened by
    CONDITION_TAU per rung), as an information matrix with the anchor's row and column 0."""
    k = anchor_of(rungs)
    cov = design.covariance(design.information(elos, nu, standard.weak, standard.strong), k)
    free = np.arange(len(rungs)) != k
    out = np.zeros_like(cov)
    out[np.ix_(free, free)] = np.linalg.inv(cov[np.ix_(free, free)]
                                            + CONDITION_TAU ** 2 * np.eye(free.sum()))
    return out


def game_key(game: CalibrationGame) -> str:
    """A game's identity, and the seed of everything random in it (version 1's keys are the
    ones every committed game has; another rule's are marked)."""
    tail = f"{game.seed}:{game.weak}:{game.strong}:{game.number}:{game.opening}"
    if game.adjudication != RULE.version:
        tail += f":adj{game.adjudication}"
    return f"cal:{tail}" if game.condition == Condition.STANDARD else \
        f"cal:{game.condition}:{tail}"


def _opening(config: CalibrationConfig, game: CalibrationGame) -> Start:
    """The pair's starts in turn from a place set by the pair, each start played twice
    (both colours): book openings, Chess960 positions or mid-game positions."""
    index = (game.number - 1) // 2
    if config.condition == Condition.CHESS960:
        return chess960_start(config.seed, _offset(config, game) + index)
    starts = config.midgame if config.condition == Condition.MIDGAME else config.openings
    if not starts:
        return standard_start()
    return starts[(_offset(config, game) + index) % len(starts)]


def _offset(config: CalibrationConfig, game: CalibrationGame) -> int:
    pair = f"{config.seed}:{game.weak}:{game.strong}"
    return int(hashlib.sha256(pair.encode()).hexdigest()[:8], 16) % 1_000_003

def _jobs(rungs: list[Rung], todo: list[CalibrationGame], config: CalibrationConfig,
          settings: EngineSettings) -> dict[str, tuple[CalibrationGame, GameJob]]:
    specs = {r.name: r.spec for r in rungs}
    out = {}
    for game in todo:
        start = _opening(config, game)
        game = CalibrationGame(**(asdict(game) | {"opening": start.label}))
        players = [Side(make_player(specs[name], None, settings.path, config.seed, 1),
                        ENGINE_TEMPLATE) for name in (game.weak, game.strong)]
        white, black = players if game.number % 2 else players[::-1]
        out[game_key(game)] = game, GameJob(game_key(game), white, black, start,
                                            config.ply_cap, RULES[game.adjudication])
    return out


class GameLog:
    """The store of a calibration run: its plan, and every game of it that finished (the
    append-only log the games file is rewritten from)."""

    def __init__(self, path: Path) -> None:
        self.plans = JsonStore(path, "plans")
        self.finished = JsonStore(path, "finished")

    def pending(self) -> list[CalibrationGame]:
        """The plan of an interrupted run, not yet all in the games file."""
        return [CalibrationGame(**g) for g in self.plans.get(PLAN_KEY) or []]

    def start(self, todo: list[CalibrationGame]) -> None:
        """Keep a new plan (and no games of an older one)."""
        self.finished.clear()
        self.finished.commit()
        self.plans.put(PLAN_KEY, [asdict(g) for g in todo])
        self.plans.commit()

    def games(self) -> list[CalibrationGame]:
        """The plan's finished games logged so far."""
        return [CalibrationGame(**g) for g in self.finished.values()]

    def add(self, game: CalibrationGame) -> None:
        """Log one finished game, durably."""
        self.finished.put(game_key(game), asdict(game))
        self.finished.commit()

    def done(self) -> None:
        """The plan is in the games file: forget it and its log."""
        self.finished.clear()
        self.finished.commit()
        self.plans.put(PLAN_KEY, None)
        self.plans.commit()

    def close(self) -> None:
        """Close the store."""
        self.plans.close()
        self.finished.close()


def merged(games: list[CalibrationGame],
           logged: list[CalibrationGame]) -> list[CalibrationGame]:
    """The file's games and the log's, each game once (a log merged before a kill -9 is
    merged again), sorted."""
    return sorted({game_key(g): g for g in [*games, *logged]}.values())


def calibrate(rungs: list[Rung], config: CalibrationConfig, settings: EngineSettings,
              games_path: Path, store: Path, add: int, engine: str,
              prior: LadderPrior | None = None) -> tuple[Ladder, Usable, int]:
    """Add `add` games with `engine` (or finish an interrupted run's plan first), then fit
    the ladder (with `prior`, for a new engine's); also how many planned games were aborted
    (they stay planned: a rerun plays them)."""
    games, aborted = add_games(rungs, config, settings, games_path, store, add, lambda known: plan(
        rungs, known, engine, add, config.seed, config.condition, prior, config.rule,
        config.goal_low))
    # The file's order, not the order games finished in: the fit's sums must not depend on it.
    use = usable(rungs, games, engine, rule=config.rule)
    ladder = fit(rungs, use, engine, prior, config.rule, config.draw_terms)
    if config.condition == Condition.STANDARD:
        return ladder, use, aborted
    there = usable(ladder.rungs, games, engine, config.condition, config.rule)
    return (rate_in_condition(ladder, there.weak, there.strong, there.weak_score), there,
            aborted)


def add_games(rungs: list[Rung], config: CalibrationConfig, settings: EngineSettings,
              games_path: Path, store: Path, add: int,
              make_plan: Callable[[list[CalibrationGame]], list[CalibrationGame]]
              ) -> tuple[list[CalibrationGame], int]:
    """Play the games `make_plan` chooses (given the file's), each logged as it finishes, or
    finish an interrupted run's plan first; every game of the file after, and how many
    planned games were aborted (they stay planned: a rerun plays them)."""
    remove_stale_temps(games_path)  # a rewrite cut by kill -9 leaves its temporary file
    if not add and not games_path.exists() and not store.exists():  # a refit: a typo?
        raise DataError(f"no calibration games file at {games_path}: 'benchmark.py "
                        "calibrate --add-games N' starts one")
    games = read_games(games_path)
    log_ = GameLog(store)
    try:
        todo = log_.pending()
        if todo:
            if todo[0].condition != config.condition:
                raise DataError(f"an interrupted run planned {len(todo)} games in the "
                                f"{todo[0].condition} condition: rerun with --condition "
                                f"{todo[0].condition} to finish them first")
            if todo[0].adjudication != config.rule:
                raise DataError(f"an interrupted run planned {len(todo)} games under "
                                f"adjudication rule {todo[0].adjudication}: rerun with "
                                f"--adjudication {todo[0].adjudication} to finish them first")
            done = {_slot(g) for g in log_.games()}
            todo = _on_rungs(todo, rungs, done)
            log.warning("finishing the %d games left of %d planned by an interrupted run "
                        "(instead of planning %d new ones)",
                        sum(_slot(g) not in done for g in todo), len(todo), add)
        else:
            if not add and not games_path.exists():  # a refit of a file not there: a typo?
                raise DataError(f"no calibration games file at {games_path}: 'benchmark.py "
                                "calibrate --add-games N' starts one")
            todo = make_plan(games) if add else []
            log_.start(todo)
        games = merged(games, log_.games())
        jobs = _jobs(rungs, todo, config, settings)
        have = {game_key(g) for g in games}
        missing = [jobs[k] for k in jobs if k not in have]
        aborted = 0
        try:
            if missing:
                aborted = _play(missing, log_, games, games_path, settings, config)
        finally:
            # Once at the end, and on Ctrl-C: the file then holds every finished game.
            if todo:
                games = merged(games, log_.games())
                write_games(games_path, games)
        if not aborted:
            log_.done()
    finally:
        log_.close()
    return games, aborted


def _slot(game: CalibrationGame) -> tuple[str, str, str, int, int]:
    """A game's place in a plan (a planned game has no opening yet, so no key)."""
    return game.condition, game.weak, game.strong, game.seed, game.number


def _on_rungs(todo: list[CalibrationGame], rungs: list[Rung],
              done: set[tuple[str, str, str, int, int]]) -> list[CalibrationGame]:
    """An interrupted plan's games between rungs still calibrated: a rung dropped since
    (--rungs) keeps the games it finished (`done`), as a dropped rung does, and plays no
    more."""
    names = {r.name for r in rungs}
    kept = [g for g in todo if g.weak in names and g.strong in names]
    left = [g for g in todo if {g.weak, g.strong} - names and _slot(g) not in done]
    if left:
        gone = sorted({n for g in left for n in (g.weak, g.strong)} - names)
        log.warning("%d games of the interrupted run's plan are with %s, no longer among the "
                    "rungs: not played (the finished ones stay in the games file, unused)",
                    len(left), ", ".join(gone))
    return kept


def _play(missing: list[tuple[CalibrationGame, GameJob]], log_: GameLog,
          games: list[CalibrationGame], path: Path, settings: EngineSettings,
          config: CalibrationConfig) -> int:
    """Play the missing games, each logged as it finishes; a long run rewrites the games
    file every MERGE_EVERY_S seconds. How many were aborted (each named in a warning)."""
    progress = Progress(len(missing), "calibrate", kinds=("decisive", "draw", "aborted"),
                        unit="game")
    aborted = 0
    merged_at = time.monotonic()
    try:
        with EngineCluster(settings, config.cluster) as cluster:
            rows = {job.key: game for game, job in missing}
            for job, (record, why) in cluster.as_completed(play_job, [j for _, j in missing]):
                if record is None:
                    log.warning("game %s aborted, not recorded: %s", job.key, why)
                    aborted += 1
                    progress.update("aborted", False)
                    continue
                row = CalibrationGame(**(asdict(rows[job.key]) | {
                    "result": record.result, "termination": record.termination,
                    "plies": len(record.moves)}))  # the planned engine: the ladder's name
                log_.add(row)
                progress.update("draw" if row.result == "1/2-1/2" else "decisive", False)
                if time.monotonic() - merged_at > MERGE_EVERY_S:
                    write_games(path, merged(games, log_.games()))
                    merged_at = time.monotonic()
    finally:
        progress.close()
    return aborted
