"""A player's games against the ladder, per start condition, until its Elo is pinned down."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from chess_eval.benchmark.arena.game import (
    chess960_start,
    midgame_starts,
    rule_of,
    standard_start,
)
from chess_eval.benchmark.arena.ladder import Ladder
from chess_eval.benchmark.arena.match import GameJob, GamePool, Played, Pool, PoolFactory
from chess_eval.benchmark.core.progress import Progress
from chess_eval.benchmark.core.run import Breaker, CircuitOpen, Run, within
from chess_eval.benchmark.core.turns import ENGINE_TEMPLATE, Condition, Side, Start
from chess_eval.benchmark.games.sampler import (
    SamplerConfig,
    finished,
    for_ladder,
    games_expected,
    posterior,
    schedule,
)
from chess_eval.benchmark.model.cost import Books
from chess_eval.benchmark.model.inflight import InFlight
from chess_eval.benchmark.model.interface import FatalInfraError, InfraError
from chess_eval.benchmark.players.player import Player, budget_of, budget_stop, make_player
from chess_eval.benchmark.players.protocols import CHAT_WINDOW, GameProtocol
from chess_eval.benchmark.players.protocols import template as protocol_template
from chess_eval.benchmark.question.questions import Question
from chess_eval.benchmark.question.start import GAME_CONDITIONS
from chess_eval.benchmark.stats.btd import Posterior
from chess_eval.engine import EngineSettings
from chess_eval.errors import ConfigError

log = logging.getLogger(__name__)

CONDITIONS = GAME_CONDITIONS  # of play
BREAKER = 3  # this many games in a row aborted for infrastructure reasons stop the run


@dataclass(frozen=True)
class PlayConfig:
    """How the games are played and scheduled."""

    conditions: tuple[str, ...]  # start conditions, each rated on its own
    sampler: SamplerConfig  # the stop rule and the Elo's model (its ladder's rungs, the prior)
    retries: int  # illegal answers retried (with what was wrong) before a forfeit
    legal: bool  # the prompt lists the legal moves
    ply_cap: int  # a game this long is a draw
    concurrency: int  # games at once; also the sampler's batch (the schedule depends on it)
    seed: int  # Chess960 and mid-game starts, mix and random rungs, the sampler's draws
    openings: tuple[Start, ...] = ()  # the standard condition's starts (the opening book);
    # none: every standard game starts from the initial position
    breaker: int = BREAKER  # games in a row aborted for infrastructure reasons stop the run
    protocol: GameProtocol = GameProtocol.FEN  # how the model is asked for its moves
    chat_history: int = CHAT_WINDOW  # chat: the exchanges kept in the conversation (0: all)
    # The ladder's engine and adjudication rule, part of every game's key: a rung is another
    # player under another engine. Empty for the committed ladder.csv's, whose games keep
    # the keys they had before ladders of other engines existed.
    ladder_key: tuple[str, ...] = ()

    @property
    def template(self) -> str:
        """The protocol's version, part of every cached answer's key."""
        return protocol_template(self.protocol, self.legal, self.chat_history)


@dataclass
class Session:
    """Everything played, per condition."""

    games: dict[str, list[Played]] = field(default_factory=dict)
    stopped: str | None = None  # why the run stopped before its stop rule (the budget)
    books: Books | None = None  # a model's purchases this invocation (its ledger's line)

    def rated(self, condition: str) -> list[Played]:
        """The condition's finished games."""
        return [g for g in self.games.get(condition, []) if g.record is not None]


def game_key(name: str, seed: int, opening: str, model_white: bool, rung: str,
             repeat: int) -> str:
    """A game's identity in the store (and the seed of everything random in it): the
    session and condition, the seed, the opening, the player's colour, the rung, and how many
    games of that same kind came before it. Not its place in the schedule, so a rerun after
    an aborted game finds every stored game the schedule asks for again, wherever it falls."""
    colour = "white" if model_white else "black"
    return f"{name}:{seed}:{opening}:{colour}:{rung}:{repeat}"


def start_for(condition: str, index: int, seed: int, mid: list[Start],
              openings: tuple[Start, ...] = ()) -> Start:
    """The start of a condition's index-th game; each start is played with both colours."""
    if condition == Condition.STANDARD:
        # The seed picks where in the book a run begins, so two seeds play other openings.
        return openings[(seed + index // 2) % len(openings)] if openings else standard_start()
    if condition == Condition.CHESS960:
        return chess960_start(seed, index // 2)
    return mid[(index // 2) % len(mid)]


def play(player: Player, ladders: dict[str, Ladder], questions: list[Question],
         config: PlayConfig, store: Path, settings: EngineSettings,
         pools: PoolFactory = GamePool, run: Run | None = None) -> Session:
    """Play each condition's adaptive schedule to its stop (resuming stored games) against
    that condition's ladder; `pools` makes where the games are played; `run`: the
    invocation that claims the store and owns the requests (else one of its own)."""
    mid = midgame_starts(questions, config.seed)
    if Condition.MIDGAME in config.conditions and not mid:
        raise ConfigError("no game positions in the questions file for mid-game starts")
    with within(run) as owner:
        prefix = claim_play(owner, player, config, store)
        return _play(player, ladders, mid, config, store, settings, pools, prefix, owner)


def claim_play(run: Run, player: Player, config: PlayConfig, store: Path) -> str:
    """Claim the player's games in `store` for `run`: their key prefix. Stored games are
    keyed by everything that changes how the player plays them, so runs of other players or
    settings sharing the store never read each other's games; one process at a time plays
    them (a second would buy every move the first is buying)."""
    ident = json.dumps([player.id, config.template, config.retries, config.ply_cap,
                        *config.ladder_key])
    return run.claim(store, f"play {ident}", f"play of {player.id}")


def _play(player: Player, ladders: dict[str, Ladder], mid: list[Start], config: PlayConfig,
          store: Path, settings: EngineSettings, pools: PoolFactory, prefix: str,
          run: Run) -> Session:
    """play() once its run is claimed (`prefix`: its stored games' key prefix)."""
    rungs = {r.name: run.owns(make_player(r.spec, None, settings.path, config.seed,
                                          config.concurrency))
             for ladder in ladders.values() for r in ladder.rungs}
    games_db, cache = run.store(store, "games"), run.store(store, "answers")
    session = Session()
    # The bar counts the games the runs will most likely play, re-estimated as they go.
    total = games_expected(None, 0, config.sampler) * len(config.conditions)
    progress = Progress(total, f"play {player.id[:30]}", kinds=("win", "draw", "loss",
                                                                  "aborted"), unit="game")
    preflight = _once(player)
    budget = budget_of(player)
    gate = run.gate  # the run's requests in flight
    try:
        with pools(games_db, cache, settings, config.concurrency) as pool:
            later = len(config.conditions) - 1  # conditions after this one
            for condition in config.conditions:
                ladder = ladders[condition]
                session.games[condition], stopped = _condition(
                    player, [rungs[r.name] for r in ladder.rungs], ladder, mid, config,
                    f"{prefix}:{condition}", pool, progress, preflight, later, gate)
                later -= 1
                if isinstance(stopped, InfraError):
                    # A failure every request would repeat, or the breaker: what was played
                    # is written (exit 3); with nothing played there is nothing to write.
                    if not any(session.rated(c) for c in session.games):
                        raise stopped
                    session.stopped = str(stopped)
                    break
                if stopped:  # on budget: the conditions after it are not begun
                    session.stopped = budget_stop(player)
                    break
        progress.finish()
    finally:
        # (Ctrl-C, or a failure: the run lets the requests in flight land and be stored
        # before it closes the rungs and the stores.)
        if budget is not None:
            session.books = budget.books
        progress.close()
    return session


def _once(player: Player) -> Callable[[], None]:
    """The player's preflight, run at most once per session."""
    done: list[bool] = []

    def check() -> None:
        if not done:
            player.preflight()
            done.append(True)
    return check


@dataclass(frozen=True)
class Lineup:
    """What a condition's games are made of: the rated side, the rungs and the starts."""

    me: Side  # the rated player, as it is asked
    rungs: list[Player]  # the ladder's players, by rung
    ladder: Ladder  # the condition's ladder
    mid: list[Start]  # the mid-game starts
    config: PlayConfig  # how the games are played
    name: str  # the games' key prefix and the condition

    def ident(self, index: int, rung: int) -> tuple[str, bool, str]:
        """What makes the index-th game of this kind: its start, the colour, the rung."""
        condition = Condition(self.name.rsplit(":", 1)[1])
        start = start_for(condition, index, self.config.seed, self.mid, self.config.openings)
        return start.label, index % 2 == 0, self.ladder.rungs[rung].name

    def job(self, index: int, rung: int, repeat: int) -> GameJob:
        """The index-th game, against `rung`, the `repeat`-th of its kind (game_key)."""
        config, condition = self.config, Condition(self.name.rsplit(":", 1)[1])
        model_white = index % 2 == 0  # each start twice, the model White first
        them = Side(self.rungs[rung], ENGINE_TEMPLATE)
        start = start_for(condition, index, config.seed, self.mid, config.openings)
        key = game_key(self.name, config.seed, *self.ident(index, rung), repeat)
        return GameJob(key, *((self.me, them) if model_white else (them, self.me)), start,
                       config.ply_cap, rule_of(self.ladder.adjudication), rung, index,
                       model_white, condition)


def next_batch(games: list[Played], ladder: Ladder, sampler: SamplerConfig, concurrency: int,
               seed: int) -> tuple[Posterior, list[int] | None]:
    """After a condition's `games` (in schedule order, aborted ones included): the rating's
    posterior, and the rungs of the next batch, or None once the stop rule is met (the CLI's
    schedule and the Inspect task's, the same function)."""
    rated = [g for g in games if g.record is not None]
    opponents = [float(ladder.elos[g.rung]) for g in rated]
    scores = [g.score for g in rated]
    post = posterior(opponents, scores, sampler)
    if finished(post, len(rated), sampler) or len(games) >= 2 * sampler.max_games:
        return post, None
    return post, schedule(len(games), opponents, scores, sampler, concurrency,
                          seed)[: sampler.max_games - len(rated)]


def _condition(player: Player, rungs: list[Player], ladder: Ladder, mid: list[Start],
               config: PlayConfig, name: str, pool: Pool, progress: Progress,
               preflight: Callable[[], None], later: int,
               gate: InFlight) -> tuple[list[Played], bool | InfraError]:
    """One condition's games (`name`: the session's key prefix and the condition; `later`:
    conditions still to play after it, for the progress bar's estimate; `gate`: the run's
    requests in flight), and whether
    --max-cost stopped them before the stop rule did (or the failure that stopped them)."""
    sampler = for_ladder(config.sampler, ladder)
    lineup = Lineup(Side(player, config.template, config.legal, config.retries,
                         config.protocol, config.chat_history, gate),
                    rungs, ladder, mid, config, name)
    games: list[Played] = []
    repeats: Counter[tuple[str, bool, str]] = Counter()  # games so far per identity
    breaker = Breaker(config.breaker, "games", "were aborted")
    while True:
        post, batch = next_batch(games, ladder, sampler, config.concurrency, config.seed)
        if batch is None:
            return games, False
        if budget_stop(player) is not None:
            return games, True  # spent: the rest is the rerun's
        rated = sum(g.record is not None for g in games)
        progress.expect(progress.done - rated + games_expected(post, rated, sampler)
                        + later * games_expected(None, 0, sampler))
        jobs, meta = [], {}
        for k, rung in enumerate(batch):
            ident = lineup.ident(len(games) + k, rung)
            job = lineup.job(len(games) + k, rung, repeats[ident])
            repeats[ident] += 1
            jobs.append(job)
            meta[job.key] = job.played(None)
        try:
            for played in pool.play(jobs, preflight):
                meta[played.key] = played
                progress.update("aborted" if played.aborted else
                                {1.0: "win", 0.5: "draw", 0.0: "loss"}[played.score],
                                played.stored)
                if played.aborted is None:
                    breaker.passed()
                elif budget_stop(player) is None:
                    # (on budget the run stops after this batch, not on the breaker)
                    breaker.fail(played.aborted)
        except (FatalInfraError, CircuitOpen) as exc:
            ended = [g for g in meta.values() if g.record is not None or g.aborted]
            return games + sorted(ended, key=lambda g: g.index), exc
        games += sorted(meta.values(), key=lambda g: g.index)
