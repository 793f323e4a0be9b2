"""chess_eval/games: games against the reference ladder with `play`'s own sampler, estimator
and stop rule, each game one sample.

Sample k + 1 plays game k of the schedule, and only it (its requests in its own transcript).
When Inspect schedules it, the task's early stopping (units.Units) decides its rung with
`play`'s own function (games.play.next_batch: the same batches, from the games before),
or stops it early once the stop rule is met. Its rung is pinned in the run's folder when its
game begins, and stored games are found by their keys, so an eval-retry, a rerun on the same
folder or a retried sample plays (or finds) the same game. A sample stopped by an error or a
limit leaves its game aborted, unrated, as `play` leaves one; the CLI's breaker is Inspect's
own --fail-on-error here.
"""

from __future__ import annotations

import argparse
import math
import re
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from chess_eval.benchmark.arena.game import WHITE_SCORE, GameRecord, midgame_starts, pgn
from chess_eval.benchmark.arena.ladder import (
    Ladder,
    condition_path,
    load_ladder,
    reference_ladder,
)
from chess_eval.benchmark.arena.match import GameJob, Played, stored_or_played
from chess_eval.benchmark.core.data import QUESTIONS
from chess_eval.benchmark.core.run import Run
from chess_eval.benchmark.core.turns import Condition, Side
from chess_eval.benchmark.games import cli
from chess_eval.benchmark.games.play import Lineup, claim_play, next_batch
from chess_eval.benchmark.games.report import condition_report
from chess_eval.benchmark.games.sampler import SamplerConfig, for_ladder
from chess_eval.benchmark.human.block import committed_block, human_metrics
from chess_eval.benchmark.inspect_eval.sample import (
    RunFailed,
    adaptive_task,
    mode_args,
    request_argv,
    run_dir,
    until_stopped,
)
from chess_eval.benchmark.inspect_eval.units import (
    Lost,
    Units,
    played_unit,
    unit_of,
)
from chess_eval.benchmark.model.inflight import InFlight
from chess_eval.benchmark.players.player import budget_of, make_player
from chess_eval.errors import ConfigError

NOT_PLAYED = "not played: the stop rule was met before this game"
CUT_OFF = "no game: the sample was cut off (a limit or an error) before its game ended"
Outcome = dict[str, Any]  # a game's outcome as units.db keeps it: {"record": ... or None}


def record_of(outcome: Outcome | Lost) -> GameRecord | None:
    """The game an outcome holds (None: aborted, or lost)."""
    if isinstance(outcome, Lost) or outcome.get("record") is None:
        return None
    return GameRecord(**outcome["record"])


class GamesPlan:
    """`play`'s schedule of one condition, as batches decided from the games before them
    (each batch's rungs, pinned ones kept)."""

    def __init__(self, ladder: Ladder, sampler: SamplerConfig, concurrency: int,
                 seed: int) -> None:
        self.ladder, self.sampler = ladder, for_ladder(sampler, ladder)
        self.concurrency, self.seed = concurrency, seed
        self.batches: list[tuple[int, list[int]]] = []  # (first index, rungs), in order
        self.stop_at: int | None = None  # where the stop rule was met

    def unit(self, index: int, outcome: Callable[[int], Outcome | Lost],
             pinned: dict[int, int]) -> tuple[int] | None:
        """Game `index`'s rung (None: not needed); Pending while a game it needs plays."""
        games: list[Played] = []
        k = 0
        while True:
            if k == len(self.batches) and not self._extend(games, pinned):
                return None
            start, rungs = self.batches[k]
            if index < start + len(rungs):
                return (rungs[index - start],)
            games += [Played("", record_of(outcome(start + i)), index=start + i,
                             first_white=(start + i) % 2 == 0, rung=r)
                      for i, r in enumerate(rungs)]
            k += 1

    def _extend(self, games: list[Played], pinned: dict[int, int]) -> bool:
        """The next batch after `games`; False once the stop rule is met."""
        if self.stop_at is None:
            _, batch = next_batch(games, self.ladder, self.sampler, self.concurrency,
                                  self.seed)
            if batch is None or not batch:
                self.stop_at = len(games)
                return False
            self.batches.append((len(games), [int(pinned.get(len(games) + i, r))
                                              for i, r in enumerate(batch)]))
            return True
        return False

    def rung_of(self, index: int) -> int:
        """The rung of a game already decided."""
        for start, rungs in self.batches:
            if start <= index < start + len(rungs):
                return rungs[index - start]
        raise KeyError(index)


class GamesTable:
    """One eval's run while its samples play (units.Held): `play`'s setup, claim, stores,
    rungs and rated side, as `play` makes them."""

    def __init__(self, argv: list[str], folder: Path, model: list[str]) -> None:
        args = play_args(argv + model + ["--out", str(folder)])
        setup = cli.play_setup(args)
        self.endpoint = setup.player.answered_by  # the rated model's, as its games' keys hold
        self.settings = setup.settings
        self.ladder = setup.ladders[args.conditions[0]]
        with ExitStack() as held:  # left at once when it cannot start: nothing was asked
            # The run's books: a line per opening of what it bought, beside its stores.
            run = held.enter_context(Run(folder, [(setup.name, "",
                                                   budget_of(setup.player))]))
            run.owns(setup.player)
            store_path, config = folder / "games.db", setup.config
            prefix = claim_play(run, setup.player, config, store_path)
            self.games = run.store(store_path, "games")
            self.cache = run.store(store_path, "answers")
            rungs = [run.owns(make_player(r.spec, None, setup.settings.path, config.seed,
                                          config.concurrency)) for r in self.ladder.rungs]
            me = Side(setup.player, config.template, config.legal, config.retries,
                      config.protocol, config.chat_history, run.gate)
            self.lineup = Lineup(me, rungs, self.ladder,
                                 midgame_starts(setup.questions, config.seed), config,
                                 f"{prefix}:{args.conditions[0]}")
            self._held = held.pop_all()

    def job(self, plan: GamesPlan, index: int, rung: int) -> GameJob:
        """Game `index` against `rung`: its key counts the games of its kind before it."""
        ident = self.lineup.ident(index, rung)
        repeat = sum(self.lineup.ident(j, plan.rung_of(j)) == ident for j in range(index))
        return self.lineup.job(index, rung, repeat)

    def play(self, job: GameJob) -> Played:
        """The game (on this thread, a sample's); a stored one as it is."""
        return stored_or_played(job, self.settings, self.games, self.cache)

    def close(self) -> None:
        """Leave the run: the requests in flight land, the stores close, the books."""
        self._held.close()


def play_args(argv: list[str]) -> argparse.Namespace:
    """`benchmark.py play ARGV`'s options."""
    return mode_args(cli.add_play_parser, "play", argv)


def games_task(protocol: str, max_games: int | None, target: float | None,
               ladder: str | None, concurrency: int, seed: int, condition: str,
               endpoint_id: str | None) -> Task:
    """Games against the ladder as an Inspect task: `play`'s options and schedule."""
    if not isinstance(condition, str):  # -T condition=a,b arrives as a list
        raise ConfigError(f"condition={','.join(map(str, condition))}: one start condition "
                          "an eval (run one eval per condition)")
    argv = ["--protocol", protocol, "--concurrency", str(concurrency), "--seed", str(seed),
            "--conditions", condition, "--questions", str(QUESTIONS)]
    argv += ["--endpoint-id", endpoint_id] if endpoint_id else []
    argv += ["--max-games", str(max_games)] if max_games is not None else []
    argv += ["--target", str(target)] if target is not None else []
    argv += ["--ladder", ladder] if ladder is not None else []
    args = play_args(argv + ["--model", "inspect:eval"])
    if ladder is not None and not args.ladder.is_file():
        raise ConfigError(f"ladder={ladder}: no such file (a ladder.csv, its folder, or a "
                          "committed ladder's name such as stockfish-17.1)")
    cli.play_engine(args)  # the ladder the engine found serves, checked now (one line)
    argv += [] if ladder is not None else ["--ladder", str(args.ladder)]
    # play stops a condition at 2 x max_games games, aborted ones included.
    samples = 2 * args.max_games
    ladder_of = load_ladder(Path(args.ladder))
    condition_ladder = condition_path(args.ladder, args.conditions[0])
    if condition_ladder.exists():
        ladder_of = load_ladder(condition_ladder)
    sampler = cli.sampler_of(args, ladder_of)
    units: Units[int, Outcome] = Units(
        "games", lambda: GamesPlan(ladder_of, sampler, args.concurrency, args.seed),
        lambda model: run_dir("games", argv, model, unkeyed=("--max-games",)),
        lambda folder, model: GamesTable(argv, folder, model))
    return adaptive_task("games", units, samples, "game", game_solver(units), game_scorer(),
                         games_metrics(argv), argv)


BOUND = "raise max_games or lower target"  # how a games eval plays more games


@solver
def game_solver(units: Units[int, Outcome]) -> Solver:
    """A sample plays its own game (none once the stop rule is met): the rung decided for
    it, in the eval's shared run."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        index = int(state.sample_id) - 1
        got = await unit_of(units, state.epoch, index, ONE_EPOCH)
        if got is None:
            store().set("not_needed", True)
            return state
        mine, held, rung = got
        plan = mine.plan
        assert isinstance(plan, GamesPlan)
        done: list[tuple[GamesTable, Played]] = []

        async def play(table: GamesTable, n: int, unit: int) -> Outcome | None:
            job, gate = own_gate(table.job(plan, n, unit))
            played = await until_stopped(table.play, job,
                                         stop=gate.close if gate is not None else _nothing)
            done.append((table, played))
            return None if played.record is None else {"record": played.record.as_dict()}
        await played_unit(mine, held, index, play)
        table, played = done[0]
        if played.record is None:
            raise RunFailed(f"game {index + 1} aborted for infrastructure reasons: "
                            f"{played.aborted}")
        step = table.ladder.rungs[rung]
        store().set("game", {"index": index, "rung": rung, "endpoint": table.endpoint,
                             "request": request_argv(), "rung_name": step.name,
                             "rung_elo": round(step.elo),
                             "model_white": played.first_white,
                             "record": played.record.as_dict()})
        return state
    return solve


ONE_EPOCH = ("chess_eval/games plays one epoch: its run decides how many games are played "
             "(raise max_games or lower target)")


def _nothing() -> None:
    """No gate of its own to close (an engine-only game)."""


def own_gate(job: GameJob) -> tuple[GameJob, InFlight | None]:
    """The job with its model's requests through a gate of this game's own (a child of the
    run's): closing it stops this game at its next request, and the run still waits for
    them when it stops."""
    gate = next((s.gate for s in (job.white, job.black) if s.gate is not None), None)
    if gate is None:
        return job, None
    mine = gate.child()
    white, black = (side if side.gate is None else replace(side, gate=mine)
                    for side in (job.white, job.black))
    return replace(job, white=white, black=black), mine


@scorer(metrics=[])
def game_scorer() -> Scorer:
    """The model's score in its game (1, 0.5, 0; NaN, left out, when no game was played),
    the game in the metadata and its PGN as the answer."""
    async def score(state: TaskState, target: Target) -> Score:
        game = store().get("game")
        if game is None:  # not needed, or cut off by a limit or an error: said apart
            return Score(value=math.nan, metadata={"game": None}, explanation=NOT_PLAYED
                         if store().get("not_needed") else CUT_OFF)
        record = game["record"]
        white = WHITE_SCORE[record["result"]]
        headers = {"Round": str(game["index"] + 1), "Rung": game["rung_name"],
                   "BlackElo" if game["model_white"] else "WhiteElo": str(game["rung_elo"])}
        return Score(value={"score": white if game["model_white"] else 1 - white},
                     answer=pgn(GameRecord(**record), headers),
                     explanation=f"{record['result']} {record['termination']}" + (
                         f" (forfeit: {record['forfeit']})" if record["forfeit"] else ""),
                     metadata={"game": game})
    return score


def games_of(scores: list[SampleScore], condition: str) -> list[Played]:
    """The games in the scores' metadata, in schedule order."""
    games = []
    for s in scores:
        g = (s.score.metadata or {}).get("game")
        if g:
            games.append(Played("", GameRecord(**g["record"]), index=g["index"],
                                first_white=g["model_white"], rung=g["rung"],
                                condition=Condition(condition)))
    return sorted(games, key=lambda g: g.index)


@metric
def games_metrics(argv: list[str]) -> Metric:
    """elo, elo_lo, elo_hi (90%, the ladder's error included), games and forfeits by reason:
    `play`'s own estimate of the games in the scores; per time control TC what the Maia
    anchors say of it (human.block.human_metrics): lichess_TC with _lo and _hi between the
    anchors, lichess_TC_at_most / _at_least across one, and lichess_TC_expected_score (with
    _lo, _hi and the anchor's lichess_TC_anchor_rating) against the nearest anchor outside."""
    def compute(scores: list[SampleScore]) -> Any:
        args = play_args(argv + ["--model", "inspect:eval"])
        ladder = load_ladder(Path(args.ladder))
        games = games_of(scores, args.conditions[0])
        report = condition_report(games, ladder, cli.sampler_of(args, ladder), args.seed,
                                  args.mcmc)
        elo = report["elo"]
        if not report["games"]:  # nothing rated: the prior is no rating, so none is given
            return {"elo": None, "elo_lo": None, "elo_hi": None, "games": 0}
        out: dict[str, float | None] = {"elo": elo["mean"], "elo_lo": elo["lo"],
                                        "elo_hi": elo["hi"], "games": report["games"]}
        reasons = Counter(re.sub(r"\W+", "_", f["reason"]).strip("_")
                          for f in report["forfeits"])
        out.update({f"forfeits_{reason}": n for reason, n in sorted(reasons.items())})
        human = committed_block(elo, ladder.engine, reference_ladder(),
                                report["ladder"]) or {"time_controls": []}
        for tc in human["time_controls"]:
            out |= human_metrics(tc)
        return out
    return compute
