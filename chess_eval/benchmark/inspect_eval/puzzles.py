"""chess_eval/puzzles: whole Lichess puzzle lines chosen adaptively, as `benchmark.py puzzles`
chooses and plays them (its sampler, its rules, its estimate), each line one sample.

Sample k + 1 plays the k-th line of the run, and only it (its requests in its own
transcript). When Inspect schedules it, the task's early stopping (units.Units) picks its
puzzle with the CLI's own function (puzzles.run.next_puzzle), from the lines before it, so
lines are decided one after another as the CLI decides them; or stops it early once the stop
rule is met. Each puzzle is pinned in the run's folder when its line begins, so a retried or
resumed sample plays its own line again (or finds it stored).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai import Task
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from chess_eval.benchmark.core.cli import default_puzzles
from chess_eval.benchmark.core.run import Run
from chess_eval.benchmark.core.turns import GameAborted, Side
from chess_eval.benchmark.inspect_eval.sample import (
    RunFailed,
    adaptive_task,
    mode_args,
    request_argv,
    run_dir,
    until_stopped,
)
from chess_eval.benchmark.inspect_eval.units import Lost, Units, played_unit, unit_of
from chess_eval.benchmark.players.player import budget_of
from chess_eval.benchmark.puzzles import cli
from chess_eval.benchmark.puzzles.line import (
    ALTERNATIVE,
    SOLVED,
    TEMPLATE,
    BadPuzzle,
    LineResult,
    play_line,
)
from chess_eval.benchmark.puzzles.run import (
    POOL,
    PuzzleConfig,
    claim_puzzles,
    estimate,
    next_puzzle,
    pool_of,
)
from chess_eval.engine import Engine
from chess_eval.puzzledb import LinePuzzle, read_puzzles

Outcome = dict[str, Any]  # a line's outcome as units.db keeps it: {"line": ..., "bad": ...}
ONE_EPOCH = ("chess_eval/puzzles plays one epoch: its run decides how many lines are played "
             "(raise max_puzzles or lower target)")


class LinesPlan:
    """The CLI's sequence of puzzles, each picked from the lines before it (a pinned one
    kept)."""

    def __init__(self, puzzles: list[LinePuzzle], config: PuzzleConfig) -> None:
        self.puzzles, self.config, self.pool = puzzles, config, pool_of(puzzles)
        # The choices made so far, each from outcomes that were all in (none lost), so
        # they stay the choices whoever asks again.
        self.chosen: list[int] = []

    def unit(self, index: int, outcome: Callable[[int], Outcome | Lost],
             pinned: dict[int, int]) -> tuple[int] | None:
        """Line `index`'s puzzle (None: the stop rule is met before it); Pending while a
        line it needs is played."""
        lines: list[LineResult] = []
        used = np.zeros(len(self.puzzles), bool)
        played: Counter[str] = Counter()
        sure = True  # every outcome read so far was in (so the choice may be kept)
        for j in range(index + 1):
            if j < len(self.chosen):
                choice: int | None = self.chosen[j]
            else:
                choice = next_puzzle(lines, self.pool, used, played, self.config)
                if choice is None:
                    return None
                kept = pinned.get(j)
                if kept is not None and 0 <= kept < len(self.puzzles) and not used[kept]:
                    choice = kept
                if sure:
                    self.chosen.append(choice)
            assert choice is not None
            if j == index:
                return (choice,)
            used[choice] = True
            got = outcome(j)
            if isinstance(got, Lost):
                sure = False
                continue
            if got.get("line") is not None:  # a bad puzzle, or one left out: used, unrated
                lines.append(LineResult(**got["line"]))
                played.update(self.puzzles[choice].motifs)
        raise AssertionError("unreachable")


class LinesTable:
    """One eval's puzzle run while its samples play (units.Held): the CLI's setup, claim,
    stores and side."""

    def __init__(self, argv: list[str], folder: Path, model: list[str]) -> None:
        args = puzzles_args(argv + model + ["--out", str(folder)])
        setup = cli.puzzles_setup(args)
        self.puzzles, self.settings = setup.puzzles, setup.settings
        self.endpoint = setup.player.answered_by  # the rated model's (read back: its id)
        with ExitStack() as held:  # left at once when it cannot start: nothing was asked
            run = held.enter_context(Run(folder, [("puzzles", "", budget_of(setup.player))]))
            run.owns(setup.player)
            store_path = folder / "puzzles.db"
            self.prefix = claim_puzzles(run, setup.player, store_path)
            self.lines = run.store(store_path, "puzzles")
            self.cache = run.store(store_path, "answers")
            self.side = Side(setup.player, TEMPLATE, retries=0, gate=run.gate)
            self._held = held.pop_all()

    def play(self, choice: int, side: Side) -> LineResult:
        """The line of the pool's puzzle `choice` (on this thread, a sample's), on an engine
        of its own; a stored one as it is. BadPuzzle, GameAborted as play_line raises."""
        puzzle = self.puzzles[choice]
        key = f"{self.prefix}|{puzzle.id}"
        stored = self.lines.get(key)
        if stored is not None:
            return LineResult(**stored)
        with Engine(self.settings) as engine:
            line = play_line(puzzle, side, engine, self.cache)
        self.lines.put(key, line.as_dict())
        self.lines.commit()
        return line

    def close(self) -> None:
        """Leave the run: the requests in flight land, the stores close, the books."""
        self._held.close()


def puzzles_args(argv: list[str]) -> Any:
    """`benchmark.py puzzles ARGV`'s options."""
    return mode_args(cli.add_parser, "puzzles", argv)


def puzzles_task(max_puzzles: int | None, target: float | None, seed: int,
                 endpoint_id: str | None = None) -> Task:
    """Puzzle lines as an Inspect task: `benchmark.py puzzles`' options and run."""
    # The puzzle file named now, wherever the eval runs from.
    argv = ["--seed", str(seed), "--puzzles", str(default_puzzles().resolve())]
    argv += ["--endpoint-id", endpoint_id] if endpoint_id else []
    argv += ["--max-puzzles", str(max_puzzles)] if max_puzzles is not None else []
    argv += ["--target", str(target)] if target is not None else []
    args = puzzles_args(argv + ["--model", "inspect:eval"])
    # The run stops at max_puzzles rated lines; a puzzle that cannot be played takes a
    # sample and is not rated.
    samples = 2 * args.max_puzzles
    config = PuzzleConfig(args.target, args.max_puzzles, args.seed, args.breaker)
    pool: list[list[LinePuzzle]] = []  # read once, by the first eval that needs it

    def plan() -> LinesPlan:
        if not pool:
            pool.append(read_puzzles(args.puzzles, POOL)[0])
        return LinesPlan(pool[0], config)
    units: Units[int, Outcome] = Units(
        "puzzles", plan, lambda model: run_dir("puzzles", argv, model,
                                               unkeyed=("--max-puzzles",)),
        lambda folder, model: LinesTable(argv, folder, model))
    return adaptive_task("puzzles", units, samples, "puzzle line", line_solver(units),
                         line_scorer(), puzzles_metrics(argv), argv)


@solver
def line_solver(units: Units[int, Outcome]) -> Solver:
    """A sample plays its own line (none once the run has stopped)."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        index = int(state.sample_id) - 1
        got = await unit_of(units, state.epoch, index, ONE_EPOCH)
        if got is None:
            store().set("not_needed", True)
            return state
        mine, held, choice = got
        done: list[tuple[LinesTable, LineResult | BaseException]] = []

        async def play(table: LinesTable, n: int, unit: int) -> Outcome | None:
            gate = table.side.gate.child() if table.side.gate is not None else None
            side = table.side if gate is None else Side(
                table.side.player, TEMPLATE, retries=0, gate=gate)
            try:
                line = await until_stopped(table.play, unit, side,
                                           stop=gate.close if gate is not None else _none)
            except BadPuzzle as exc:  # its own moves are illegal: skipped, unrated
                done.append((table, exc))
                return {"line": None, "bad": str(exc)}
            except GameAborted as exc:  # left out: no outcome (a retry plays it)
                done.append((table, exc))
                return None
            done.append((table, line))
            return {"line": line.as_dict(), "bad": None}
        await played_unit(mine, held, index, play)
        table, outcome = done[0]
        puzzle = table.puzzles[choice].id
        if isinstance(outcome, BadPuzzle):
            store().set("bad", {"puzzle": puzzle, "why": str(outcome)})
            return state
        if isinstance(outcome, BaseException):  # left out; the eval fails, as the CLI's
            raise RunFailed(f"puzzle {puzzle} left out for infrastructure reasons: "
                            f"{outcome}")
        store().set("line", {"index": index, "endpoint": table.endpoint,
                             "request": request_argv(), "line": outcome.as_dict()})
        return state
    return solve


def _none() -> None:
    """No gate to close."""


@scorer(metrics=[])
def line_scorer() -> Scorer:
    """Whether the line was solved (by the key or a credited alternative; NaN, left out,
    when no line was played), the line in the metadata."""
    async def score(state: TaskState, target: Target) -> Score:
        played, bad = store().get("line"), store().get("bad")
        if played is None:
            why = bad["why"] if bad else "not played: the run stopped before it" \
                if store().get("not_needed") else "no line: the sample was cut off (a limit " \
                "or an error) before its line ended"
            return Score(value=math.nan, explanation=why, metadata={"line": None, "bad": bad})
        line = LineResult(**played["line"])
        return Score(value=float(line.solved), answer=" ".join(line.moves),
                     explanation=f"{line.puzzle} (rating {line.rating}): {line.outcome}"
                     + (f" ({line.reason})" if line.reason else ""),
                     metadata={"line": played})
    return score


def lines_of(scores: list[SampleScore]) -> list[LineResult]:
    """The lines in the scores' metadata, in the run's order."""
    played = [m["line"] for s in scores if (m := s.score.metadata or {}).get("line")]
    return [LineResult(**p["line"]) for p in sorted(played, key=lambda p: p["index"])]


@metric
def puzzles_metrics(argv: list[str]) -> Metric:
    """puzzle_elo, puzzle_elo_lo, puzzle_elo_hi (90%, Lichess puzzle ratings), puzzles and
    solved (by the key; alternative: credited alternatives): the CLI's own estimate."""
    def compute(scores: list[SampleScore]) -> Any:
        args = puzzles_args(argv + ["--model", "inspect:eval"])
        lines = lines_of(scores)
        est = estimate(lines, args.mcmc, args.seed)
        elo = est.as_dict() if est is not None else {}
        return {"puzzle_elo": elo.get("mean"), "puzzle_elo_lo": elo.get("lo"),
                "puzzle_elo_hi": elo.get("hi"), "puzzles": len(lines),
                "solved": sum(r.outcome == SOLVED for r in lines),
                "alternative": sum(r.outcome == ALTERNATIVE for r in lines)}
    return compute
