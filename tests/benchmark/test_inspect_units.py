"""The adaptive tasks on Inspect's own machinery: each sample plays its own unit (its
transcript holds that unit's requests and no other's), the samples the stop rule does not
need are Inspect's early stops, Inspect's concurrency options bound them, and `inspect
score` re-scores a log to the same metrics."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.log import EvalLog, read_eval_log

from chess_eval.benchmark.inspect_eval.sample import RunFailed
from chess_eval.benchmark.inspect_eval.units import (
    LOST,
    LOST_ROW,
    EvalUnits,
    Lost,
    subset_hole,
)
from tests.benchmark.chatserver import ChatServer, Response
from tests.benchmark.inspect_helpers import (
    INSPECT,
    LIFECYCLE,
    first_legal,
    foreign_requests,
    metrics,
    own_positions,
    requests_of,
    service,
)
from tests.conftest import ROOT

ARGS = {"games": LIFECYCLE["games"][0], "puzzles": LIFECYCLE["puzzles"][0],
        "match": LIFECYCLE["match"][0]}


def run_eval(task: str, tmp_path: Path, *extra: str) -> tuple[EvalLog, int]:
    """`inspect eval chess_eval/TASK` against a local chat server: its log, and the requests
    the server answered."""
    with ChatServer(lambda fen, n: Response(), on_body=first_legal) as server:
        done = subprocess.run(
            [INSPECT, "eval", f"chess_eval/{task}", "--model", "openai-api/local/m",
             *ARGS[task], "--display", "none", "--log-dir", str(tmp_path / "logs"), *extra],
            cwd=ROOT, env={**service(server.base_url),
                           "CHESS_EVAL_CACHE": str(tmp_path / "cache")},
            capture_output=True, text=True, timeout=600)
        asked = len(server.bodies)
    assert done.returncode == 0, done.stderr[-3000:]
    [path] = (tmp_path / "logs").glob("*.eval")
    return read_eval_log(str(path)), asked


@pytest.mark.parametrize("task", ["games", "puzzles", "match"])
def test_each_sample_holds_its_own_unit_s_requests_and_the_rest_are_early_stops(
        task: str, tmp_path: Path) -> None:
    """An undisturbed eval: every request in a sample's transcript asks from a position of
    that sample's own game (line), every played unit's sample asked at least once, the
    transcripts together hold every request the server answered, and the samples the stop
    rule did not need are listed as the log's early stops, never scored."""
    log, asked = run_eval(task, tmp_path)
    assert log.status == "success"
    assert foreign_requests(log) == []
    per_sample = requests_of(log)
    played = [s for s in log.samples or [] if own_positions(s)]
    assert played and all(per_sample[s.id] > 0 for s in played)
    unplayed = [s for s in log.samples or [] if not own_positions(s)]
    assert all(per_sample[s.id] == 0 for s in unplayed if task != "puzzles")
    assert sum(per_sample.values()) == asked
    summary = log.results.early_stopping if log.results else None
    assert summary is not None and summary.manager.startswith("chess_eval")
    stopped = {e.id for e in summary.early_stops}
    ids = {s.id for s in log.samples or []}
    total = {"games": 8, "puzzles": 12, "match": 4}[task]  # the dataset: every unit it may play
    assert len(stopped | ids) == total
    assert not stopped & {s.id for s in played}


@pytest.mark.parametrize("option", [["--max-samples", "1"], ["--max-connections", "1"]])
def test_inspect_s_concurrency_bounds_hold_and_rate_as_the_default(
        option: list[str], tmp_path: Path) -> None:
    """--max-samples 1 (one sample at a time: each decided from the games before it, none
    waiting for one that cannot start) and --max-connections 1 complete, and rate the games
    as an eval with Inspect's defaults does (the same schedule, the same games)."""
    default, _ = run_eval("games", tmp_path / "default")
    bounded, _ = run_eval("games", tmp_path / "bounded", *option)
    assert bounded.status == "success" and foreign_requests(bounded) == []
    assert metrics(bounded) == metrics(default)


def test_inspect_score_rescores_a_games_log_to_the_same_metrics(tmp_path: Path) -> None:
    """`inspect score LOG --scorer chess_eval/game_scorer` (Inspect records a package's
    scorer by its bare name, so a package's scorer is named with its package, as Inspect's
    docs for installed packages do), from another directory, finds the scorer through the
    package's entry point and gives the figures the eval gave."""
    log, _ = run_eval("games", tmp_path)
    [path] = (tmp_path / "logs").glob("*.eval")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([INSPECT, "score", str(path), "--scorer", "chess_eval/game_scorer",
                           "--action", "overwrite", "--overwrite", "--display", "none"],
                          cwd=elsewhere, env=service("http://127.0.0.1:9/v1"),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rescored = read_eval_log(str(path))
    assert rescored.results is not None and rescored.results.scores
    assert metrics(rescored) == metrics(log)


class Sequential:
    """A plan whose unit k is the number of outcomes before it that were in (lost ones
    read as none), stopping at unit 4: as the puzzles' plan decides, one after another."""

    def unit(self, index: int, outcome: Any, pinned: dict[int, int]) -> tuple[int] | None:
        if index >= 4:
            return None
        known = [outcome(j) for j in range(index)]
        return (pinned.get(index, sum(not isinstance(o, Lost) for o in known)),)


Toy = EvalUnits[int, dict[str, int]]


def toy(ids: set[int], folder: Path, tolerant: bool = False) -> Toy:
    """A toy eval's units, read from (and kept in) `folder`."""
    units: Toy = EvalUnits(ids, None, Sequential(), "toy", tolerant=tolerant)
    units.load(folder, ["--model", "x"])
    return units


def bounded(scenario: Any) -> Any:
    """`scenario()` run, failing (never hanging) if a decision waits for good."""
    async def run() -> Any:
        with anyio.fail_after(10):
            return await scenario()
    return anyio.run(run)


def test_a_decision_waits_for_a_unit_in_play_or_yet_to_start(tmp_path: Path) -> None:
    """Unit 1 waits while unit 0's sample plays it, and is decided once it is settled;
    unit 3, asked before unit 2's sample has started, waits for that one too (the run is
    busy meanwhile); a unit cut short (Ctrl-C: no outcome) is read as lost, not waited for;
    the stop rule gives None; units.db keeps each begun unit and outcome, and a later
    attempt's plan reads them back."""
    async def scenario() -> list[Any]:
        units = toy({0, 1, 2, 3, 4}, tmp_path)
        assert await units.decide(0) == (0,)
        units.begin(0)
        seen: list[Any] = []

        async def later(index: int) -> None:
            seen.append((index, await units.decide(index)))
        async with anyio.create_task_group() as group:
            group.start_soon(later, 1)
            await anyio.sleep(0.05)
            assert seen == []  # waiting for unit 0, in play
            units.conclude(0, {"score": 1})
        units.begin(1)
        units.conclude(1, None)  # cut short: not running, no outcome kept
        async with anyio.create_task_group() as group:
            group.start_soon(later, 3)
            await anyio.sleep(0.05)
            assert len(seen) == 1 and units.busy()  # unit 2's sample has not started
            assert await units.decide(2) == (1,)  # unit 1 read as lost, not waited for
            units.begin(2)
            units.conclude(2, {"score": 0})
        units.begin(3)
        units.conclude(3, {"score": 1})
        assert await units.decide(4) is None
        assert not units.busy()
        return seen
    assert bounded(scenario) == [(1, (1,)), (3, (2,))]
    again = toy({1, 2}, tmp_path)
    assert again.pinned == {0: 0, 1: 1, 2: 1, 3: 2}
    assert again.settled == {0: {"score": 1}, 2: {"score": 0}, 3: {"score": 1}}
    assert subset_hole(again.ids, again.settled, pairs=False) is None  # 0 done before
    assert "sample 1 is left out" in (subset_hole({1, 2}, {}, pairs=False) or "")
    assert "half a pair" in (subset_hole({0, 1, 2}, {}, pairs=True) or "")


def test_a_failed_unit_fails_what_is_decided_from_it_unless_errors_are_tolerated(
        tmp_path: Path) -> None:
    """A unit whose sample failed stops a decision that needs it (RunFailed, nothing asked)
    in an eval that fails on errors; in one that tolerates them it is read as lost and kept
    so in units.db, as a unit that ended on a limit is, so a later attempt decides alike and
    refuses to replay it."""
    async def scenario(tolerant: bool) -> Any:
        units = toy({0, 1, 2}, tmp_path / str(tolerant), tolerant)
        await units.decide(0)
        units.begin(0)
        units.conclude(0, None, failed=True)
        try:
            return await units.decide(1)
        except RunFailed as exc:
            return str(exc)
    strict = bounded(lambda: scenario(False))
    assert "unit 1 failed in this eval and unit 2 is decided from its outcome" in strict
    assert bounded(lambda: scenario(True)) == (0,)
    again = toy({0, 1, 2}, tmp_path / "True")
    assert again.settled[0] == LOST_ROW and isinstance(again.outcome(0), Lost)
    assert toy({0}, tmp_path / "False").settled == {}  # a strict failure: a retry plays it

    async def limited() -> Any:
        units = toy({0, 1}, tmp_path / "limit")
        await units.decide(0)
        units.begin(0)
        units.conclude(0, LOST)  # its sample's time limit cut it short: lost for good
        return await units.decide(1)
    assert bounded(limited) == (0,)
    assert toy({0, 1}, tmp_path / "limit").settled[0] == LOST_ROW
