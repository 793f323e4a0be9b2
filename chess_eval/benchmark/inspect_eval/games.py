"""chess_eval/games: games against the reference ladder with `play`'s own sampler, estimator
and stop rule, each game one sample.

Game k of the schedule is sample k + 1's (its slot). `play` itself runs on a driver thread
(started by the first sample) over a pool that gives each game it decides to play to its slot
(sample.Slots): the slot's sample waits for it, plays it on a worker thread (its requests in
its own transcript) and hands the outcome back to the schedule. Each game's rung is pinned to
its slot the first time it is scheduled, and stored games are found by their keys, so an
eval-retry, a rerun on the same store, or a retried sample records each game under its own
slot, once. The stop rule is the task's early stopping: a slot the run ends without is
stopped early (left out of the metrics; a retry schedules it again). A sample stopped by an
error or a limit hands its game back aborted, unrated, as `play` leaves one.
"""

from __future__ import annotations

import argparse
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from inspect_ai import Task
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from chess_eval.benchmark.arena.game import WHITE_SCORE, GameRecord, pgn
from chess_eval.benchmark.arena.ladder import Ladder, load_ladder, reference_ladder
from chess_eval.benchmark.arena.match import GameJob, Played, play_one
from chess_eval.benchmark.core.data import QUESTIONS
from chess_eval.benchmark.core.run import Run
from chess_eval.benchmark.core.turns import Condition
from chess_eval.benchmark.games import cli
from chess_eval.benchmark.games.play import play
from chess_eval.benchmark.games.report import condition_report
from chess_eval.benchmark.human.block import committed_block, human_metrics
from chess_eval.benchmark.inspect_eval.sample import (
    Driver,
    NoSample,
    PerEval,
    Pins,
    RunFailed,
    Slots,
    Unit,
    adaptive_task,
    hand_back,
    mode_args,
    request_argv,
    slot_outcome,
    work,
)
from chess_eval.benchmark.model.inflight import InFlight
from chess_eval.benchmark.players.player import budget_of
from chess_eval.engine import Engine, EngineSettings
from chess_eval.errors import ConfigError
from chess_eval.kvstore import JsonStore

NOT_PLAYED = "not played: the stop rule was met before this game"
CUT_OFF = "no game: the sample was cut off (a limit or an error) before its game ended"


class Dispatch:
    """play()'s pool inside Inspect: game k of the schedule is slot k's, played by sample
    k + 1 (a game already stored is the run's at once, and its sample records it)."""

    def __init__(self, samples: int) -> None:
        self.slots: Slots[GameJob | Played, Played] = Slots(
            samples, _lost, lambda done: done.result().record is None)
        self.games: JsonStore | None = None
        self.settings: EngineSettings | None = None
        self.folder: Path | None = None  # the run's games.db
        self._next = 0  # the next job's slot: play() hands its jobs in schedule order

    def pool(self, games: JsonStore, cache: JsonStore, settings: EngineSettings,
             size: int) -> Dispatch:
        """play()'s pool factory: the games store and the judge's engine of this session."""
        self.games, self.settings = games, settings
        return self

    def __enter__(self) -> Dispatch:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def play(self, jobs: list[GameJob],
             preflight: Callable[[], None] | None = None) -> Iterator[Played]:
        """Give each job to its slot; their outcomes as they finish. A game already stored
        is the run's at once (its sample, if it runs, records it). A job whose slot has no
        sample in this eval ends the run once the games given before it are in. (No
        preflight: Inspect has made the eval's model already.)"""
        assert self.games is not None
        waiting: list[Future[Played]] = []
        ready: list[Played] = []
        missing: NoSample | None = None
        for job in jobs:
            index, self._next = self._next, self._next + 1
            hit = self.games.get(job.key)
            played = None if hit is None else job.played(GameRecord(**hit), stored=True)
            try:
                handed = self.slots.give(index, job if played is None else played)
            except NoSample as exc:
                if played is None:
                    missing = exc
                    break
            else:
                if played is None:
                    waiting.append(handed)
            if played is not None:
                ready.append(played)
        yield from ready
        for done in as_completed(waiting):
            yield done.result()
        if missing is not None:
            raise missing

    def run(self, job: GameJob | Played) -> Played:
        """Play one game on this thread (a sample's), judged by an engine of its own, on
        stores of its own (a retried sample may play after the run has closed its)."""
        if isinstance(job, Played):  # stored: recorded, not replayed
            return job
        assert self.settings is not None and self.folder is not None
        games = JsonStore(self.folder, "games")
        cache = JsonStore(self.folder, "answers")
        try:
            hit = games.get(job.key)
            if hit is not None:
                return job.played(GameRecord(**hit), stored=True)
            with Engine(self.settings) as judge:
                return play_one(job, judge, games, cache)
        finally:
            games.close()
            cache.close()


def _lost(job: GameJob | Played, why: str) -> Played:
    """A game whose sample was cut off before it began: aborted, unrated (a stored one is
    the run's all the same)."""
    return job if isinstance(job, Played) else job.played(None, why)


class GamesRun(Driver):
    """One eval's schedule: `play` on the driver thread, over a Dispatch, each game's rung
    pinned to its slot."""

    def __init__(self, argv: list[str], samples: int) -> None:
        self.dispatch = Dispatch(samples)
        super().__init__("games", argv, self.dispatch.slots, unkeyed=("--max-games",))
        self.endpoint = ""  # the rated model's endpoint, as its games' keys hold it
        self.ladder: Ladder | None = None  # the condition's ladder (its rungs' names, Elos)

    def drive(self, model: list[str], scratch: Path) -> None:
        """`play` to its stop rule; RunFailed when something else stopped it."""
        args = play_args(self.argv + model + ["--out", str(scratch)])
        setup = cli.play_setup(args)
        # Both set before any game is handed out.
        self.endpoint = setup.player.answered_by
        self.ladder = setup.ladders[args.conditions[0]]
        self.dispatch.folder = scratch / "games.db"
        self.pins = pins = Pins(scratch, "rungs")
        # The run's books: a line per eval of what it bought, on every way out (ledger.py),
        # in the run's folder beside its stores.
        with Run(scratch, [(setup.name, "", budget_of(setup.player))]) as run:
            try:
                session = play(setup.player, setup.ladders, setup.questions, setup.config,
                               scratch / "games.db", setup.settings, pools=self.dispatch.pool,
                               pin=pins, run=run)
            finally:
                pins.close()
        if session.stopped:  # the breaker, or a failure every request would repeat
            raise RunFailed(f"play stopped before its stop rule: {session.stopped}")


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
    runs = PerEval(lambda: GamesRun(argv, samples))
    return adaptive_task("games", runs, "game", game_solver(runs), game_scorer(),
                         games_metrics(argv))


BOUND = "raise max_games or lower target"  # how a games eval plays more games


@solver
def game_solver(runs: PerEval[GamesRun]) -> Solver:
    """A sample records its slot's game: played here, or by a sample that helped while this
    one had not started; none once the stop rule is met."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        got = await slot_game(runs, state, BOUND)
        if got is None:
            return state
        run, n, played = got
        assert run.ladder is not None and played.record is not None
        rung = run.ladder.rungs[played.rung]
        store().set("game", {"index": n, "rung": played.rung, "endpoint": run.endpoint,
                             "request": request_argv(), "rung_name": rung.name,
                             "rung_elo": round(rung.elo),
                             "model_white": played.first_white,
                             "record": played.record.as_dict()})
        return state
    return solve


async def slot_game(runs: PerEval[Any], state: TaskState, bound: str
                    ) -> tuple[Any, int, Played] | None:
    """This sample's run, its slot and the slot's finished game (None, marked not needed,
    when the run ended without it); RunFailed when the game was aborted (unrated, as the
    CLI leaves it: this sample is an error)."""
    got = await slot_outcome(runs, state, bound, play_unit)
    if got is None:
        store().set("not_needed", True)
        return None
    run, unit, played = got
    if played.record is None:
        raise RunFailed(f"game {unit.index + 1} aborted for infrastructure reasons: "
                        f"{played.aborted}")
    return run, unit.index, played


class Dispatched(Protocol):
    """A run whose games a Dispatch hands to the samples (games, match)."""

    dispatch: Dispatch

    def begun(self, index: int) -> None:
        """Slot `index`'s sample begins its game."""


async def play_unit(run: Dispatched, unit: Unit[GameJob | Played, Played]) -> Played:
    """A slot's game, played on a worker thread (a stored one as it is), its outcome handed
    back to the schedule."""
    run.begun(unit.index)
    if isinstance(unit.job, Played):
        hand_back(unit, unit.job)
        return unit.job
    job, gate = own_gate(unit.job)
    return await work(unit, run.dispatch.run, job, stopped=lambda exc: job.played(
        None, f"its sample stopped ({type(exc).__name__}: {exc})"),
        stop=gate.close if gate is not None else None)


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
