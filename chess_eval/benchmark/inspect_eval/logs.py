"""An Inspect log of a chess_eval task read back as the CLI's result files, so a run made in
Inspect is ranked with the others (`leaderboard` and `report` read the logs under their
--results folder).

Each log is resumed, not re-scored by other code: the CLI's own run is started with a model
that answers nothing, over a cache (static) or a games store (games) filled from the log, or
with the log's lines played back (puzzles), or with the log's answers (worldmodel), so every
answer, game or line comes from the log and the files are the ones the CLI writes.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log

from chess_eval.benchmark.core.cli import model_config
from chess_eval.benchmark.core.data import ROOT
from chess_eval.benchmark.core.header import inspect_logs
from chess_eval.benchmark.core.runner import cache_key
from chess_eval.benchmark.core.turns import GameAborted, Side
from chess_eval.benchmark.games import cli as games_cli
from chess_eval.benchmark.inspect_eval.games import play_args
from chess_eval.benchmark.inspect_eval.puzzles import puzzles_args
from chess_eval.benchmark.inspect_eval.sample import mode_args
from chess_eval.benchmark.inspect_eval.worldmodel import answers_of, worldmodel_args
from chess_eval.benchmark.model.cost import Budget
from chess_eval.benchmark.model.inspect_backend import PREFIX, reply_of
from chess_eval.benchmark.model.interface import InfraError, Reply, Request
from chess_eval.benchmark.model.metered import store_replies
from chess_eval.benchmark.players.player import ModelPlayer
from chess_eval.benchmark.puzzles import cli as puzzles_cli
from chess_eval.benchmark.puzzles.line import BadPuzzle, LineResult
from chess_eval.benchmark.question.questions import load_questions
from chess_eval.benchmark.static import cli as static_cli
from chess_eval.benchmark.static.run import run_static
from chess_eval.benchmark.worldmodel import cli as worldmodel_cli
from chess_eval.engine import Engine
from chess_eval.errors import ChessEvalError, DataError
from chess_eval.kvstore import JsonStore
from chess_eval.puzzledb import LinePuzzle

log = logging.getLogger(__name__)

DONE = ".inspect_logs"  # in the results folder: the logs already read back, one a line


class LoggedModel:
    """The model of an Inspect log, by the endpoint the eval recorded: it answers nothing
    (every answer comes from the log; one missing is an error)."""

    def __init__(self, endpoint: str) -> None:
        self._endpoint = endpoint
        self._budget = Budget(None, None)

    @property
    def endpoint(self) -> str:
        """The endpoint the eval's model had."""
        return self._endpoint

    @property
    def budget(self) -> Budget:
        """Nothing to spend: nothing is bought."""
        return self._budget

    def generate(self, request: Request, label: str = "request") -> Reply:
        """Never answers: the log lacks this request."""
        raise InfraError(f"the Inspect log holds no answer for {label}")

    def preflight(self) -> Reply:
        """Nothing to check: the log's answers are read, none is asked."""
        return Reply(text="")


def read_logs(results: Path) -> list[Path]:
    """Read back every chess_eval log under `results` not read before; the files written.
    A log that is not a chess_eval task's, or that did not finish, is left out with a note."""
    done_file = results / DONE
    done = set(done_file.read_text(encoding="utf-8").split("\n")) if done_file.exists() \
        else set()
    written: list[Path] = []
    for path in inspect_logs(results):
        name = str(path.relative_to(results))
        if name in done:
            continue
        try:
            written += read_log(path, results)
        # A log this clone cannot read back (not a chess_eval one, unfinished, or needing
        # what is not here, such as the engine its ladder was measured with): the others are
        # still ranked, and a later run tries it again.
        except ChessEvalError as exc:
            log.warning("leaving out the Inspect log %s: %s", path.name, exc)
            continue
        with done_file.open("a", encoding="utf-8") as handle:
            handle.write(name + "\n")
    return written


def read_log(path: Path, results: Path) -> list[Path]:
    """One log's result files, written to `results`; DataError when it cannot be."""
    try:
        eval_log = read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - Inspect's reader raises what its format does
        raise DataError(f"not a readable Inspect log ({exc})") from None
    meta = eval_log.eval.metadata or {}
    mode = meta.get("chess_eval")
    if mode is None:
        raise DataError(f"not a chess_eval task's log ({eval_log.eval.task})")
    if mode not in READERS:
        raise DataError(f"a chess_eval/{mode} log is not read back (its figures are in the "
                        "log itself; benchmark.py match writes a result the leaderboard reads)")
    if "argv" not in meta:
        raise DataError("a chess_eval log of an earlier version (no options)")
    if eval_log.status != "success":
        raise DataError(f"the eval did not finish ({eval_log.status})")
    if not eval_log.samples:
        raise DataError("the eval kept no samples (--no-log-samples): its games, answers and "
                        "lines are not in the log to read back; rerun it without that option")
    before = set(results.rglob("*"))
    argv = [_here(a) for a in meta["argv"]]
    with tempfile.TemporaryDirectory(prefix="chess_eval_log_") as scratch:
        READERS[mode](eval_log, argv, results, Path(scratch))
    return sorted(p for p in set(results.rglob("*")) - before if p.is_file())


def _here(arg: str) -> str:
    """A committed file the eval named by its path on another machine (a log made in another
    clone) as this clone's file of that name; any other argument as it is."""
    path = Path(arg)
    if path.is_absolute() and not path.exists() and (ROOT / path.name).is_file():
        return str(ROOT / path.name)
    return arg


def _scores(eval_log: EvalLog) -> list[dict[str, Any]]:
    """Each sample's score metadata."""
    out = []
    for sample in eval_log.samples or []:
        for score in (sample.scores or {}).values():
            out.append(score.metadata or {})
    return out


def _model(eval_log: EvalLog, first: dict[str, Any]) -> list[str]:
    """The CLI's options for the log's model, asked as the eval asked it."""
    return ["--model", PREFIX + eval_log.eval.model, *first.get("request", [])]


def _static(eval_log: EvalLog, argv: list[str], results: Path, scratch: Path) -> None:
    """The static run, every answer from the log's samples (one the log lacks, because its
    sample errored or hit a limit, is an infrastructure failure: the run is incomplete)."""
    scores = _scores(eval_log)
    if not scores:
        raise DataError("the static log holds no scored sample")
    first = scores[0]
    args = mode_args(static_cli.add_parser, "run", argv + _model(eval_log, first)
                     + ["--out", str(results), "--cache", str(scratch / "cache.db")])
    config = static_cli.static_config(args)
    chat = model_config(args)
    player = ModelPlayer(chat, model=LoggedModel(first["endpoint"]))
    questions = {q.id: q for q in load_questions(config.questions)}
    cache = JsonStore(scratch / "cache.db", "answers")
    answered = [s for s in eval_log.samples or [] if s.error is None and s.limit is None
                and s.output.choices]  # errored or cut off by a limit: not answered
    try:
        # The log's replies, stored where the static run looks for them (the eval bought
        # them, so nothing is charged here).
        store_replies(cache, [(cache_key(player, config.template, questions[str(s.id)],
                                         s.input if isinstance(s.input, str) else ""),
                               reply_of(s.output, 0.0)) for s in answered])
    finally:
        cache.close()
    run_static(config, chat, player)


def _games(eval_log: EvalLog, argv: list[str], results: Path, scratch: Path) -> None:
    """The play run, every game from the log's samples (the schedule finds each stored)."""
    played = [m["game"] for m in _scores(eval_log) if m.get("game")]
    if not played:
        raise DataError("the games log holds no game")
    args = play_args(argv + _model(eval_log, played[0])
                               + ["--out", str(results), "--store", str(scratch / "games.db")])
    store = JsonStore(scratch / "games.db", "games")
    try:
        for game in played:
            if game["record"] is not None:
                store.put(game["record"]["key"], game["record"])
        store.commit()
    finally:
        store.close()
    player = ModelPlayer(model_config(args), model=LoggedModel(played[0]["endpoint"]))
    games_cli.play_command(args, player)


def _puzzles(eval_log: EvalLog, argv: list[str], results: Path, scratch: Path) -> None:
    """The puzzle run, every line from the log's samples (the run picks them again, in the
    same order, as each result is the same)."""
    meta = _scores(eval_log)
    played = [m["line"] for m in meta if m.get("line")]
    if not played:
        raise DataError("the puzzles log holds no line")
    lines = {p["line"]["puzzle"]: LineResult(**p["line"]) for p in played}
    bad = {m["bad"]["puzzle"]: m["bad"]["why"] for m in meta if m.get("bad")}

    def logged(puzzle: LinePuzzle, side: Side, engine: Engine, cache: JsonStore) -> LineResult:
        if puzzle.id in bad:
            raise BadPuzzle(bad[puzzle.id])
        if puzzle.id not in lines:
            raise GameAborted(f"the Inspect log holds no line of puzzle {puzzle.id}")
        return lines[puzzle.id]

    args = puzzles_args(argv + _model(eval_log, played[0])
                        + ["--out", str(results), "--store", str(scratch / "puzzles.db")])
    player = ModelPlayer(model_config(args),
                        model=LoggedModel(played[0]["endpoint"]))
    puzzles_cli.puzzles_command(args, player, logged)


def _worldmodel(eval_log: EvalLog, argv: list[str], results: Path, scratch: Path) -> None:
    """The world-model run, its answers the log's samples' (merged as the CLI's run)."""
    meta = _scores(eval_log)
    asked = [m["answers"] for m in meta if m.get("answers")]
    if not asked:
        raise DataError("the worldmodel log holds no answer")
    args = worldmodel_args(argv + _model(eval_log, asked[0])
                           + ["--out", str(results), "--cache", str(scratch / "cache.db")])
    player = ModelPlayer(model_config(args),
                        model=LoggedModel(asked[0]["endpoint"]))
    worldmodel_cli.worldmodel_command(args, player, answers_of(meta))


# The modes whose logs are read back into result files, by the task's name.
READERS = {"static": _static, "games": _games, "puzzles": _puzzles, "worldmodel": _worldmodel}
