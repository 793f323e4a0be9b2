"""The progress line's counts: never past its total, and the last one says what was done."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import benchmark
from chess_eval.benchmark.core.progress import Progress
from tests.conftest import ROOT

KINDS = ("win", "draw", "loss", "aborted")


def _lines(caplog: pytest.LogCaptureFixture, estimate: int, outcomes: tuple[str, ...]
           ) -> tuple[Progress, list[str]]:
    """An adaptive run estimated at `estimate` games that played `outcomes`, then ended."""
    caplog.set_level(logging.INFO, logger="chess_eval.benchmark.core.progress")
    progress = Progress(estimate, "play", every_s=3600.0, kinds=KINDS, unit="game")
    progress.bar.disable = True  # periodic log lines, as when stderr is not a terminal
    for outcome in outcomes:
        progress.update(outcome, cached=False)
    progress.finish()
    progress.close()
    return progress, [r.getMessage() for r in caplog.records]


def test_a_run_past_its_estimate_ends_on_a_line_that_counts_every_outcome(
        caplog: pytest.LogCaptureFixture) -> None:
    """play's estimate can end a batch short (107 games played, 106 estimated): the total
    grows with what is done, and the last line counts all of it."""
    progress, lines = _lines(caplog, 2, ("win", "loss", "draw"))
    assert progress.total == 3
    assert lines[-1].startswith("3/3 done (win 1, draw 1, loss 1, aborted 0)")


def test_a_run_that_stops_before_its_estimate_ends_on_a_line_with_its_own_total(
        caplog: pytest.LogCaptureFixture) -> None:
    """A run that meets its target sooner than estimated (105 games of 107) ends on a line
    that says what it did, not on the last periodic one."""
    progress, lines = _lines(caplog, 5, ("win", "loss", "loss"))
    assert progress.total == 3
    assert lines == ["3/3 done (win 1, draw 0, loss 2, aborted 0), ETA 0s"]


def _ids(out: Path, skip: frozenset[Path] | set[Path] = frozenset()) -> set[str]:
    """The question ids of the static run's result in `out` that is not in `skip`."""
    [result] = set(out.glob("static__*.json")) - skip
    return {item["id"] for item in json.loads(result.read_text())["items"]}


def test_a_resumed_run_says_how_much_it_found_stored_before_its_progress(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A static run, then a larger one on the same --out: the first says nothing of resuming;
    the rerun says first, before any progress line, how many of its answers were stored, and
    the count is the questions the two share."""
    caplog.set_level(logging.INFO, logger="chess_eval.benchmark.core.progress")
    argv = ["--model", "random", "--questions", str(ROOT / "questions.csv"), "--out"]
    assert benchmark.main([*argv, str(tmp_path), "--limit", "4"]) == 0
    assert not [r for r in caplog.records if "resum" in r.getMessage()]
    first, firsts = _ids(tmp_path), set(tmp_path.glob("static__*.json"))
    caplog.clear()
    assert benchmark.main([*argv, str(tmp_path), "--limit", "8"]) == 0
    lines = [r.getMessage() for r in caplog.records]
    shared = len(first & _ids(tmp_path, skip=firsts))
    assert shared, "the two selections share no question"
    assert lines[0] == f"resuming: {shared} of 8 answers already stored in {tmp_path}/cache.db"
    assert [line for line in lines if "resum" in line] == lines[:1]
    assert any(" done (" in line for line in lines[1:])  # the progress came after it
