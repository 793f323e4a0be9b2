"""chess_eval/puzzles: whole Lichess puzzle lines chosen adaptively, as `benchmark.py puzzles`
chooses and plays them (its sampler, its rules, its estimate), each line one sample.

The run itself runs on a driver thread; line k it picks is slot k's, played by sample k + 1
(its requests in its own transcript), which hands the result back before the run picks the
next: lines are played one after another, as the CLI plays them. Each slot's puzzle is pinned
the first time it is picked, so a retried or resumed sample records its own line. Slots past
the stop are stopped early (left out of the metrics).
"""

from __future__ import annotations

import math
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from chess_eval.benchmark.core.cli import default_puzzles
from chess_eval.benchmark.core.run import Run
from chess_eval.benchmark.core.turns import GameAborted, Side
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
from chess_eval.benchmark.players.player import budget_of
from chess_eval.benchmark.puzzles import cli
from chess_eval.benchmark.puzzles.line import ALTERNATIVE, SOLVED, BadPuzzle, LineResult, play_line
from chess_eval.benchmark.puzzles.run import estimate, run_puzzles
from chess_eval.engine import Engine, EngineSettings
from chess_eval.kvstore import JsonStore
from chess_eval.puzzledb import LinePuzzle

Line = tuple[LinePuzzle, Side, Engine, JsonStore]  # what play_line is given


class LinesRun(Driver):
    """One eval's puzzle run: `run_puzzles` on the driver thread, each line to its slot's
    sample (a line an earlier eval played and stored too, so this eval's log holds every line
    its rating uses)."""

    def __init__(self, argv: list[str], samples: int) -> None:
        self.lines: Slots[Line | LineResult, LineResult] = Slots(
            samples, _lost, lambda done: isinstance(done.exception(), GameAborted))
        super().__init__("puzzles", argv, self.lines, unkeyed=("--max-puzzles",))
        self.endpoint = ""  # the rated model's endpoint (read back, its id is rebuilt)
        self._next = 0  # the next line's slot: run_puzzles plays them one after another
        self.settings: EngineSettings | None = None  # the run's engine (a replay's own)
        self.folder: Path | None = None  # the run's store

    def drive(self, model: list[str], scratch: Path) -> None:
        """The CLI's run to its stop."""
        args = puzzles_args(self.argv + model + ["--out", str(scratch)])
        setup = cli.puzzles_setup(args)
        self.endpoint = setup.player.answered_by  # before any line is handed out
        self.settings, self.folder = setup.settings, scratch / "puzzles.db"
        self.pins = pins = Pins(scratch, "puzzles")
        # The run's books, a line per eval, on every way out (ledger.py).
        with Run(scratch, [("puzzles", "", budget_of(setup.player))]) as run:
            try:
                run_puzzles(setup.player, setup.puzzles, setup.config, scratch / "puzzles.db",
                            setup.settings, self.play, self.reuse, preflight=False, pin=pins,
                            run=run)
            finally:
                pins.close()

    def play(self, puzzle: LinePuzzle, side: Side, engine: Engine,
             cache: JsonStore) -> LineResult:
        """The line, played by its slot's sample (while this thread waits, the engine is the
        sample's alone)."""
        return self._give((puzzle, side, engine, cache)).result()

    def reuse(self, line: LineResult) -> None:
        """A stored line the run takes again (nothing asked), recorded by its slot's sample
        if that runs in this eval; the run does not wait for it (its sample may have
        completed in an earlier attempt)."""
        try:
            self._give(line)
        except NoSample as exc:
            if exc.hole:
                raise

    def replay(self, puzzle: LinePuzzle, side: Side, engine: Engine,
               cache: JsonStore) -> LineResult:
        """A retried sample's line, once the run has taken its first outcome: on an engine
        and store of its own (the run's may be another line's, or closed)."""
        assert self.settings is not None and self.folder is not None
        mine = JsonStore(self.folder, "answers")
        try:
            with Engine(self.settings) as own:
                return play_line(puzzle, side, own, mine)
        finally:
            mine.close()

    def _give(self, job: Line | LineResult) -> Future[LineResult]:
        index, self._next = self._next, self._next + 1
        return self.lines.give(index, job)


def _lost(job: Line | LineResult, why: str) -> LineResult | GameAborted:
    """A line whose sample was cut off before it began: left out, as the CLI leaves one."""
    return job if isinstance(job, LineResult) else GameAborted(why)


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
    runs = PerEval(lambda: LinesRun(argv, samples))
    return adaptive_task("puzzles", runs, "puzzle line", line_solver(runs), line_scorer(),
                         puzzles_metrics(argv))


BOUND = "raise max_puzzles or lower target"  # how a puzzles eval plays more lines


@solver
def line_solver(runs: PerEval[LinesRun]) -> Solver:
    """A sample records its slot's line: played here, or by a sample that helped while this
    one had not started; none once the run has stopped."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        got = await slot_outcome(runs, state, BOUND, _play)
        if got is None:
            store().set("not_needed", True)
            return state
        run, unit, outcome = got
        puzzle = unit.job.puzzle if isinstance(unit.job, LineResult) else unit.job[0].id
        if isinstance(outcome, BadPuzzle):  # its own moves are illegal: skipped, unrated
            store().set("bad", {"puzzle": puzzle, "why": str(outcome)})
            return state
        if isinstance(outcome, BaseException):  # left out; the eval fails, as the CLI's
            raise RunFailed(f"puzzle {puzzle} left out for infrastructure reasons: "
                            f"{outcome}")
        store().set("line", {"index": unit.index, "endpoint": run.endpoint,
                             "request": request_argv(), "line": outcome.as_dict()})
        return state
    return solve


async def _play(run: LinesRun, unit: Unit[Line | LineResult, LineResult]
                ) -> LineResult | BaseException:
    """A slot's line, played on a worker thread (a stored one as it is), its outcome (or
    why it was skipped or left out) handed back to the run."""
    job = unit.job
    run.begun(unit.index)
    if isinstance(job, LineResult):
        hand_back(unit, job)
        return job
    fn = run.replay if unit.result.done() else play_line
    try:
        return await work(unit, fn, *job, stopped=lambda exc: exc if isinstance(
            exc, (BadPuzzle, GameAborted)) else GameAborted(f"its sample stopped ({exc!r})"))
    except (BadPuzzle, GameAborted) as exc:
        return exc


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
