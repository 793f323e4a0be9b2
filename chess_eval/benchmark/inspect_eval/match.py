"""chess_eval/match: two models play each other in colour-reversed pairs, as `benchmark.py
match` plays them (its book, rules and stop rule), each game one sample.

The eval's model is the first player, `--model-role opponent=PROVIDER/MODEL` the second. Game
k of the match is sample k + 1's (its slot): `match` runs on a driver thread over the games
task's Dispatch, which gives each game to its slot's sample, so an eval-retry, a rerun on the
same store or a retried sample records each game under its own slot, once (a match's games
are fixed by their pair and colour: nothing needs pinning). The stop rule is the task's early
stopping, as for the other adaptive tasks.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from chess_eval.benchmark.arena.game import WHITE_SCORE, GameRecord, pgn
from chess_eval.benchmark.arena.ladder import reference_nu
from chess_eval.benchmark.arena.match import Played
from chess_eval.benchmark.core.run import Run
from chess_eval.benchmark.inspect_eval.games import CUT_OFF, NOT_PLAYED, Dispatch, slot_game
from chess_eval.benchmark.inspect_eval.sample import (
    Driver,
    PerEval,
    RunFailed,
    adaptive_task,
    mode_args,
    request_argv,
)
from chess_eval.benchmark.match import cli
from chess_eval.benchmark.match.run import MatchSession, play_match
from chess_eval.benchmark.players.player import budget_of

BOUND = "raise max_games or lower target"  # how a match eval plays more games


class MatchRun(Driver):
    """One eval's match: `match` on the driver thread, over a Dispatch."""

    def __init__(self, argv: list[str], samples: int) -> None:
        self.dispatch = Dispatch(samples)
        super().__init__("match", argv, self.dispatch.slots)
        self.roles = ("opponent",)
        self.pairs: dict[str, tuple[int, bool]] = {}  # a game's pair and colour by its key

    def drive(self, model: list[str], scratch: Path) -> None:
        """`match` to its stop rule; RunFailed when something else stopped it."""
        args = match_args(self.argv + model + ["--out", str(scratch)])
        setup = cli.match_setup(args)
        self.dispatch.folder = scratch / "match.db"
        # Each model's books, a line per eval, on every way out (ledger.py).
        with Run(scratch, [(f"match__{side}", "", budget_of(player))
                           for side, player in (("first", setup.first),
                                                ("second", setup.second))]) as run:
            try:
                session = play_match(*setup.sides, setup.config, scratch / "match.db",
                                     setup.settings, pools=self.dispatch.pool, run=run)
            finally:
                setup.close()
        if session.stopped:  # the breaker, a budget, or a failure every request would repeat
            raise RunFailed(f"match stopped before its stop rule: {session.stopped}")


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
    runs = PerEval(lambda: MatchRun(argv, args.max_games))
    return adaptive_task("match", runs, "game", match_solver(runs), match_scorer(),
                         match_metrics())


@solver
def match_solver(runs: PerEval[MatchRun]) -> Solver:
    """A sample records its slot's game (played here or by a sample that helped); none once
    the stop rule is met."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        got = await slot_game(runs, state, BOUND)
        if got is None:
            return state
        _, n, played = got
        assert played.record is not None
        # Pairs in order, the first player White in a pair's first game (run.game_key).
        store().set("game", {"index": n, "pair": n // 2, "first_white": n % 2 == 0,
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
