"""The progress line's counts: never past its total, and the last one says what was done."""

from __future__ import annotations

import logging

import pytest

from lib.benchmark.core.progress import Progress


def test_a_run_past_its_estimate_ends_on_a_line_that_counts_every_outcome(
        caplog: pytest.LogCaptureFixture) -> None:
    """play's estimate of its games can end one batch short (107 games played, estimated
    106): the total grows with what is done, and the last line counts all of it."""
    caplog.set_level(logging.INFO, logger="lib.benchmark.core.progress")
    progress = Progress(2, "play", every_s=3600.0, kinds=("win", "draw", "loss", "aborted"),
                        unit="game")
    progress.bar.disable = True  # periodic log lines, as when stderr is not a terminal
    for outcome in ("win", "loss", "draw"):
        progress.update(outcome, cached=False)
    progress.close()
    lines = [r.getMessage() for r in caplog.records]
    assert progress.total == 3
    assert lines[-1].startswith("3/3 done (win 1, draw 1, loss 1, aborted 0)")
