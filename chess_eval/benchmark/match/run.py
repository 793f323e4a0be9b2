"""A match: two players play each other in colour-reversed pairs from the opening book, a
batch of pairs at a time, until the Elo difference is pinned down (stats.pairs.finished).

Each game is stored under a key of the match (both players' identities, the seed, the pair
and who has White), so a rerun after Ctrl-C, a crash or a budget finds every finished game
and buys none of its replies again; a game cut short resumes from the answer cache."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from chess_eval.benchmark.arena.game import standard_start
from chess_eval.benchmark.arena.match import GameJob, GamePool, Played, PoolFactory
from chess_eval.benchmark.core.progress import Progress
from chess_eval.benchmark.core.run import Breaker, CircuitOpen, Run, within
from chess_eval.benchmark.core.turns import ENGINE_TEMPLATE, Side, Start
from chess_eval.benchmark.model.inflight import InFlight
from chess_eval.benchmark.players.player import budget_stop
from chess_eval.benchmark.stats.pairs import PairStats, finished, pair_stats
from chess_eval.engine import EngineSettings

BREAKER = 3  # games in a row aborted for infrastructure reasons stop the match


@dataclass(frozen=True)
class MatchConfig:
    """How a match is played and when it stops."""

    target: float  # stop when the Elo difference's 90% half-width is at most this
    max_games: int  # or at this many games
    pairs_at_once: int  # pairs played at once (the schedule's batch)
    seed: int  # where in the book the match begins
    ply_cap: int  # a game this long is a draw
    openings: tuple[Start, ...]  # the book's starts (none: the initial position)
    nu: float  # the BTD draw parameter the Elo difference is read with (the reference ladder's)
    breaker: int = BREAKER  # games in a row aborted for infrastructure reasons stop it


@dataclass
class MatchSession:
    """Every game played, and why the match stopped before its stop rule (if it did)."""

    nu: float  # the BTD draw parameter its Elo difference is read with
    games: list[Played] = field(default_factory=list)
    stopped: str | None = None

    def totals(self) -> list[float]:
        """The first player's total in each complete pair, in pair order."""
        by_pair: dict[int, list[Played]] = {}
        for g in self.games:
            if g.record is not None:
                by_pair.setdefault(g.pair, []).append(g)
        return [sum(g.score for g in gs) for _, gs in sorted(by_pair.items()) if len(gs) == 2]

    def wins_draws_losses(self) -> tuple[int, int, int]:
        """The first player's wins, draws and losses in the complete pairs."""
        by_pair: dict[int, list[Played]] = {}
        for g in self.games:
            if g.record is not None:
                by_pair.setdefault(g.pair, []).append(g)
        scores = [g.score for gs in by_pair.values() if len(gs) == 2 for g in gs]
        return scores.count(1.0), scores.count(0.5), scores.count(0.0)

    def stats(self) -> PairStats | None:
        """The pairs' statistics (None before a pair is complete)."""
        totals = self.totals()
        return pair_stats(totals, self.nu) if totals else None


def opening_of(config: MatchConfig, pair: int) -> Start:
    """A pair's start: the book's next opening (the seed picks where the match begins)."""
    if not config.openings:
        return standard_start()
    return config.openings[(config.seed + pair) % len(config.openings)]


def game_key(match: str, seed: int, pair: int, first_white: bool) -> str:
    """A game's key in the store, and the seed of everything random in it."""
    return f"match:{match}:{seed}:{pair}:{'first' if first_white else 'second'}-white"


def play_match(first: Side, second: Side, config: MatchConfig, store: Path,
               settings: EngineSettings, pools: PoolFactory = GamePool,
               run: Run | None = None) -> MatchSession:
    """Play pairs to the stop rule, resuming stored games; one process at a time on a store.
    `pools` makes where the games are played (the Inspect task's gives each game to its
    sample); `run`: the invocation that claims the store and owns the requests (else one of
    its own)."""
    with within(run) as owner:
        match = claim_match(owner, first, second, config, store)
        return _play(first, second, config, store, settings, match, pools, owner)


def claim_match(run: Run, first: Side, second: Side, config: MatchConfig, store: Path) -> str:
    """Claim the match's games in `store` for `run`: their key prefix (both players as they
    are asked, and the rules)."""
    ident = json.dumps([first.player.id, first.template, first.retries,
                        second.player.id, second.template, second.retries, config.ply_cap])
    return run.claim(store, f"match {ident}",
                     f"the match {first.player.id} - {second.player.id}")


def next_pairs(session: MatchSession, pair: int, config: MatchConfig) -> range | None:
    """The pairs of the next batch, once those before `pair` are played (`session`: their
    games), or None once the stop rule is met (the CLI's schedule and the Inspect task's)."""
    totals = session.totals()
    if finished(session.stats(), len(totals) * 2, config.target, config.max_games):
        return None
    left = (config.max_games - 2 * len(totals) + 1) // 2
    return range(pair, pair + min(config.pairs_at_once, left))


def match_job(match: str, config: MatchConfig, index: int, first: Side,
              second: Side) -> GameJob:
    """The match's index-th game: pair index // 2, the first player White in its first."""
    pair, first_white = index // 2, index % 2 == 0
    white, black = (first, second) if first_white else (second, first)
    return GameJob(game_key(match, config.seed, pair, first_white), white, black,
                   opening_of(config, pair), config.ply_cap, index=index,
                   first_white=first_white)


def _play(first: Side, second: Side, config: MatchConfig, store: Path,
          settings: EngineSettings, match: str, pools: PoolFactory, run: Run) -> MatchSession:
    games, cache = run.store(store, "games"), run.store(store, "answers")
    first, second = (gated(s, run.gate) for s in (first, second))
    session = MatchSession(config.nu)
    progress = Progress(config.max_games, f"match {first.player.id[:20]} - "
                        f"{second.player.id[:20]}", kinds=("first", "draw", "second",
                                                           "aborted"), unit="game")
    breaker, pair = Breaker(config.breaker, "games", "were aborted"), 0
    checked: list[bool] = []

    def preflight() -> None:
        """Both players checked once, before the first game not stored (an endpoint that
        cannot answer fails here, not game after game)."""
        if not checked:
            for side in (first, second):
                side.player.preflight()
            checked.append(True)
    try:
        with pools(games, cache, settings, 2 * config.pairs_at_once) as pool:
            while (pairs := next_pairs(session, pair, config)) is not None:
                if (spent := budget_stop(first.player, second.player)) is not None:
                    session.stopped = spent
                    break
                jobs = [match_job(match, config, 2 * p + k, first, second)
                        for p in pairs for k in (0, 1)]
                pair = pairs.stop
                for played in pool.play(jobs, preflight):
                    session.games.append(played)
                    progress.update("aborted" if played.aborted else
                                    {1.0: "first", 0.5: "draw", 0.0: "second"}[played.score],
                                    played.stored)
                    if played.aborted is None:
                        breaker.passed()
                    else:
                        breaker.fail(played.aborted)
        progress.finish()
    except CircuitOpen as exc:
        # What was played is written (exit 3); with no game finished there is nothing to
        # write (exit 2), as in play.
        if not any(g.record is not None for g in session.games):
            raise
        session.stopped = str(exc)
    finally:
        # (Ctrl-C, or a failure: the run lets the replies in flight land and be stored
        # before it closes the stores.)
        progress.close()
    session.games.sort(key=lambda g: g.index)
    return session


def gated(side: Side, gate: InFlight) -> Side:
    """A model's side asks through the match's gate (an engine asks no one)."""
    return side if side.template == ENGINE_TEMPLATE else replace(side, gate=gate)
