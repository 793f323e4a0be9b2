"""The progress line's counts: never past its total, and the last one says what was done."""

from __future__ import annotations

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


def test_a_resumed_run_says_how_much_it_found_done(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """The same static run twice: the first buys every answer and says nothing of resuming;
    the rerun finds them all stored and says so in one line."""
    caplog.set_level(logging.INFO, logger="chess_eval.benchmark.core.progress")
    argv = ["--model", "random", "--questions", str(ROOT / "questions.csv"), "--limit", "4",
            "--out", str(tmp_path)]
    assert benchmark.main(argv) == 0
    assert not [r for r in caplog.records if "resumed" in r.getMessage()]
    assert benchmark.main(argv) == 0
    [line] = [r.getMessage() for r in caplog.records if "resumed" in r.getMessage()]
    assert "4 of 4 done before and resumed from the store" in line
