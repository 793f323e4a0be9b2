"""The crosswalk's coverage simulation: the committed table meets its goals, and a short run
of the simulation reads the product's own statements."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.crosswalk_coverage import (
    GOAL,
    HALF_WIDTHS,
    READINGS,
    TABLE,
    coverage,
    pooled,
    read_table,
    summary,
    true_nu,
)
from chess_eval.benchmark.arena.ladder import reference_ladder
from chess_eval.benchmark.human.anchors import TimeControl
from chess_eval.benchmark.human.crosswalk import load_crosswalks
from chess_eval.benchmark.human.statement import Kind

# Below the goal, and said so in the docs: near an anchor's reading a rapid figure is given
# mostly when the data pulled the run's reading inward, and the fit does not undo that.
SHORT = {("rapid", "figure")}


def test_every_kind_covers_87_to_93_percent_in_every_time_control() -> None:
    """bench/data/crosswalk_coverage.csv: each kind, pooled per time control (true readings
    spread evenly) and per half-width (where made 200 times or more), within the goal, but
    the one the docs name."""
    rows = summary(read_table(TABLE))
    assert {(r["time_control"], r["kind"]) for r in rows} == {
        (tc.value, k.value) for tc in TimeControl for k in Kind}
    for r in rows:
        if (r["time_control"], r["kind"]) not in SHORT:
            assert GOAL[0] <= r["coverage"] <= GOAL[1], r
            assert GOAL[0] <= r["lowest"] <= r["highest"] <= GOAL[1], r


@pytest.mark.xfail(strict=True, reason="rapid figures cover under 87%: a known gap (docs)")
def test_rapid_figures_cover_87_percent() -> None:
    rows = {(r["time_control"], r["kind"]): r for r in summary(read_table(TABLE))}
    assert rows[("rapid", "figure")]["coverage"] >= GOAL[0]


def test_the_table_gives_every_reading_a_statement() -> None:
    """Every grid cell of every time control was read in every drawn world: a figure, or a
    statement with its score against the nearest anchor (alone or beside a bound)."""
    cells = read_table(TABLE)
    made = pooled(cells, ("time_control", "reading", "half_width", "kind"))
    reps = max(n for n, _ in made.values())
    for tc in TimeControl:
        for x in READINGS:
            for h in HALF_WIDTHS:
                figures = made.get((tc.value, x, h, Kind.FIGURE), (0, 0))[0]
                scores = made.get((tc.value, x, h, Kind.SCORE), (0, 0))[0]
                assert figures + scores == reps, (tc, x, h)


def test_a_short_simulation_reads_the_products_statements() -> None:
    """Three worlds at a reading between the anchors: each one gives a statement, the kinds
    the product gives there."""
    walk = load_crosswalks(reference=reference_ladder())[0]
    cells = coverage(walk, 3, 7, readings=(2300.0, 500.0), half_widths=(40.0, 150.0))
    made: Counter[tuple[float, float]] = Counter()
    for c in cells:
        if c.kind in (Kind.FIGURE, Kind.SCORE):
            made[(c.reading, c.half_width)] += c.statements
        assert 0 <= c.covered <= c.statements
    for x in (2300.0, 500.0):
        for h in (40.0, 150.0):
            assert made[(x, h)] == 3
    assert all(c.kind == Kind.SCORE for c in cells if c.reading == 500.0)


def test_the_true_score_reads_nu_at_the_true_readings_level() -> None:
    """On the reference ladder's draw model the truth a score is checked against is the
    expected score at nu for the two true readings' mean, as the ladder gives it, not the
    model's nu at its centre (far below the anchors they differ most)."""
    ladder = reference_ladder()
    assert ladder is not None and ladder.draws is not None
    walk = load_crosswalks(reference=ladder)[0]
    anchor = walk.anchors[0].reading
    for x in (0.0, 1200.0, 2300.0, 3000.0):
        assert true_nu(walk, x, anchor) == pytest.approx(ladder.nu_at((x + anchor) / 2))
    assert abs(true_nu(walk, 0.0, anchor) - walk.nu) > 0.05
