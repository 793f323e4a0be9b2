"""chess_eval/match: two models play each other in colour-reversed pairs, as `benchmark.py
match` plays them (its book, rules and stop rule), each game one sample.

The eval's model is the first player, `--model-role opponent=PROVIDER/MODEL` the second.
Sample k + 1 plays game k of the match, and only it: pair k // 2, the first player White in
its first game. A match's games are fixed by their pair and colour, so the task's early
stopping (units.Units) only decides whether a game is needed: `match`'s own batches of
pairs (match.run.next_pairs) and stop rule, from the games before. A subset of samples
must hold whole pairs (an even --limit), or it is refused before any request.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from chess_eval.benchmark.arena.game import WHITE_SCORE, GameRecord, pgn
from chess_eval.benchmark.arena.ladder import reference_nu
from chess_eval.benchmark.arena.match import GameJob, Played, stored_or_played
from chess_eval.benchmark.core.run import Run
from chess_eval.benchmark.inspect_eval.games import (
    CUT_OFF,
    NOT_PLAYED,
    Outcome,
    _nothing,
    own_gate,
    record_of,
)
from chess_eval.benchmark.inspect_eval.sample import (
    RunFailed,
    adaptive_task,
    mode_args,
    request_argv,
    run_dir,
    until_stopped,
)
from chess_eval.benchmark.inspect_eval.units import Lost, Units, played_unit, unit_of
from chess_eval.benchmark.match import cli
from chess_eval.benchmark.match.run import (
    MatchConfig,
    MatchSession,
    claim_match,
    gated,
    match_job,
    next_pairs,
)
from chess_eval.benchmark.players.player import budget_of

ONE_EPOCH = ("chess_eval/match plays one epoch: its run decides how many games are played "
             "(raise max_games or lower target)")


class MatchPlan:
    """`match`'s schedule: batches of pairs, each decided from the games before it."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config
        self.batches: list[range] = []  # the pairs of each batch, in order
        self.stop_at: int | None = None  # the pair where the stop rule was met

    def unit(self, index: int, outcome: Callable[[int], Outcome | Lost],
             pinned: dict[int, None]) -> tuple[None] | None:
        """Whether game `index` is needed ((None,): it is; None: it is not)."""
        session = MatchSession(self.config.nu)
        k = 0
        while True:
            if k == len(self.batches) and not self._extend(session):
                return None
            pairs = self.batches[k]
            if index < 2 * pairs.stop:
                return (None,)
            session.games += [Played("", record_of(outcome(j)), index=j,
                                     first_white=j % 2 == 0)
                              for j in range(2 * pairs.start, 2 * pairs.stop)]
            k += 1

    def _extend(self, session: MatchSession) -> bool:
        if self.stop_at is not None:
            return False
        start = self.batches[-1].stop if self.batches else 0
        pairs = next_pairs(session, start, self.config)
        if pairs is None or not pairs:
            self.stop_at = start
            return False
        self.batches.append(pairs)
        return True


class MatchTable:
    """One eval's match while its samples play (units.Held): `match`'s setup, claim, stores
    and sides, as `match` makes them."""

    def __init__(self, argv: list[str], folder: Path, model: list[str]) -> None:
        args = match_args(argv + model + ["--out", str(folder)])
        setup = cli.match_setup(args)
        self.settings, self.config = setup.settings, setup.config
        with ExitStack() as held:  # left at once when it cannot start: nothing was asked
            held.callback(setup.close)
            # Each model's books: a line per opening of what it bought.
            run = held.enter_context(Run(folder, [
                (f"match__{side}", "", budget_of(player))
                for side, player in (("first", setup.first), ("second", setup.second))]))
            store_path = folder / "match.db"
            first, second = (gated(s, run.gate) for s in setup.sides)
            self.match = claim_match(run, first, second, setup.config, store_path)
            self.first, self.second = first, second
            self.games = run.store(store_path, "games")
            self.cache = run.store(store_path, "answers")
            self._held = held.pop_all()

    def job(self, index: int) -> GameJob:
        """The match's index-th game."""
        return match_job(self.match, self.config, index, self.first, self.second)

    def play(self, job: GameJob) -> Played:
        """The game (on this thread, a sample's); a stored one as it is."""
        return stored_or_played(job, self.settings, self.games, self.cache)

    def close(self) -> None:
        """Leave the run: the requests in flight land, the stores close, the books."""
        self._held.close()


def match_args(argv: list[str]) -> argparse.Namespace:
    """`benchmark.py match ARGV`'s options."""
    return mode_args(cli.add_parser, "match", argv)


def match_task(protocol: str, max_games: int | None, target: float | None, concurrency: int,
               seed: int, endpoint_id: str | None, opponent: dict[str, Any]) -> Task:
    """A match as an Inspect task: `match`'s options and schedule (`opponent`: each given
    --opponent-X by its option's name, X)."""
    argv = ["--protocol", protocol, "--concurrency", str(concurrency), "--seed", str(seed)]
    argv += ["--endpoint-id", endpoint_id] if endpoint_id else []
    argv += [x for name, value in opponent.items() if value is not None
             for x in (f"--opponent-{name.replace('_', '-')}", str(value))]
    argv += ["--max-games", str(max_games)] if max_games is not None else []
    argv += ["--target", str(target)] if target is not None else []
    args = match_args(argv + ["--model", "inspect:eval", "--opponent", "inspect:opponent"])
    config = cli.match_config(args, ())
    units: Units[None, Outcome] = Units(
        "match", lambda: MatchPlan(config),
        lambda model: run_dir("match", argv, model),
        lambda folder, model: MatchTable(argv, folder, model), roles=("opponent",))
    return adaptive_task("match", units, args.max_games, "game", match_solver(units),
                         match_scorer(), match_metrics(), argv)


@solver
def match_solver(units: Units[None, Outcome]) -> Solver:
    """A sample plays its own game of the match (none once the stop rule is met)."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        index = int(state.sample_id) - 1
        got = await unit_of(units, state.epoch, index, ONE_EPOCH)
        if got is None:
            store().set("not_needed", True)
            return state
        mine, held, _ = got
        done: list[Played] = []

        async def play(table: MatchTable, n: int, unit: None) -> Outcome | None:
            job, gate = own_gate(table.job(n))
            played = await until_stopped(table.play, job,
                                         stop=gate.close if gate is not None else _nothing)
            done.append(played)
            return None if played.record is None else {"record": played.record.as_dict()}
        await played_unit(mine, held, index, play)
        played = done[0]
        if played.record is None:
            raise RunFailed(f"game {index + 1} aborted for infrastructure reasons: "
                            f"{played.aborted}")
        # Pairs in order, the first player White in a pair's first game (run.game_key).
        store().set("game", {"index": index, "pair": index // 2, "first_white": index % 2 == 0,
                             "request": request_argv(), "record": played.record.as_dict()})
        return state
    return solve


@scorer(metrics=[])
def match_scorer() -> Scorer:
    """The first player's score in its game (NaN, left out, when none was played), the game
    in the metadata and its PGN as the answer."""
    async def score(state: TaskState, target: Target) -> Score:
        game = store().get("game")
        if game is None:
            return Score(value=math.nan, metadata={"game": None}, explanation=NOT_PLAYED
                         if store().get("not_needed") else CUT_OFF)
        record = game["record"]
        white = WHITE_SCORE[record["result"]]
        headers = {"Event": "chess-eval match",
                   "Round": f"{game['pair'] + 1}.{1 if game['first_white'] else 2}"}
        return Score(value={"score": white if game["first_white"] else 1 - white},
                     answer=pgn(GameRecord(**record), headers),
                     explanation=f"{record['result']} {record['termination']}",
                     metadata={"game": game})
    return score


def session_of(scores: list[SampleScore]) -> MatchSession:
    """The match's games in the scores' metadata, as `match` holds them."""
    session = MatchSession(reference_nu())
    for s in scores:
        g = (s.score.metadata or {}).get("game")
        if g:
            session.games.append(Played("", GameRecord(**g["record"]), index=g["index"],
                                        first_white=g["first_white"]))
    session.games.sort(key=lambda g: g.index)
    return session


@metric
def match_metrics() -> Metric:
    """score, score_lo, score_hi (the first player's, 90%, from the pairs), elo_difference
    (BTD at the reference ladder's nu) with elo_lo and elo_hi (None on an open side: a
    one-sided bound), pairs and games: `match`'s own statistics of the games in the scores."""
    def compute(scores: list[SampleScore]) -> Any:
        session = session_of(scores)
        stats = session.stats()
        if stats is None:
            return {"score": None, "score_lo": None, "score_hi": None, "elo_difference": None,
                    "elo_lo": None, "elo_hi": None, "pairs": 0, "games": 0}
        return {"score": stats.score, "score_lo": stats.score_lo, "score_hi": stats.score_hi,
                "elo_difference": stats.elo, "elo_lo": _finite(stats.elo_lo),
                "elo_hi": _finite(stats.elo_hi), "pairs": stats.pairs,
                "games": 2 * stats.pairs}
    return compute


def _finite(x: float) -> float | None:
    return None if math.isinf(x) else x
