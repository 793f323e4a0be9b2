"""The crosswalk's statements checked by simulation: the coverage of each kind per time control.

Each repetition draws a world the fit could be wrong about: the slope from its prior (1, sd
0.5, on the grid's 0-3), the anchors' ratings from that line plus the human side's spread
(the sd the fit assumes), and the anchors' readings from their true values (the committed
ones) plus their errors drawn together (their own parts and the ladder's, through the
reference ladder's covariance). The intercept is set so the line passes through the anchors'
middle (the fit's intercept is flat, so any other value moves every statement with it). It
then fits the line as the product does, and reads a run of every true reading on a grid (0
to 3,000) at every half-width (30 to 150, the game Elo's 90%; its error its own), its
observed reading drawn from that error, through the product's statement rules
(human.statement): a figure covers when the run's true Lichess rating (the line at its true
reading) lies in its shown interval, a bound when on its side, a score against an anchor
when the expected score of the true readings lies in its interval (every score shown: alone,
or beside a bound). Coverage is pooled over the grid with each reading weighted by its share
of the line (true readings spread evenly, as the fit's flat prior on a reading has them): at
one true reading it is not the goal, since the kind is chosen from the data (a bound on the
side away from where the run's reading happened to err, a figure near an anchor's reading
mostly when the data pulled it inward). Goals: 87-93% for every kind in every time control,
at every half-width; no figure or bound past an anchor's rating; a statement for every
reading. With --write the cells go to bench/data/crosswalk_coverage.csv, which the docs'
table reads.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from chess_eval.benchmark.arena.ladder import reference_ladder
from chess_eval.benchmark.human.anchors import TimeControl
from chess_eval.benchmark.human.crosswalk import (
    SLOPE_PRIOR,
    SLOPES,
    Crosswalk,
    load_crosswalks,
    mixture_cdf,
    mixture_quantiles,
)
from chess_eval.benchmark.human.reading import Reading
from chess_eval.benchmark.human.statement import (
    LEVELS,
    Kind,
    bound_values,
    deciding,
    figure_ends,
    kinds,
)
from chess_eval.benchmark.stats import btd
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.cli import run_cli
from chess_eval.files import write_csv

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "bench" / "data" / "crosswalk_coverage.csv"  # --write's default
# The runs' true readings: every 100 from 0 to 3,000, and every 10 across the anchors'
# (2,239-2,349) and a little beyond, where the figures and bounds are.
READINGS = tuple(sorted({float(x) for x in range(0, 3001, 100)}
                        | {float(x) for x in range(2150, 2451, 10)}))
HALF_WIDTHS = (30.0, 50.0, 70.0, 90.0, 110.0, 130.0, 150.0)  # their game Elos' 90% half-widths
GOAL = (0.87, 0.93)  # every kind's coverage
FIELDS = ["time_control", "reading", "half_width", "kind", "statements", "covered",
          "coverage", "reps", "seed"]


@dataclass(frozen=True)
class Cell:
    """One kind of statement at one true reading and half-width: how often it was made and
    how often it held."""

    time_control: str  # the crosswalk's time control
    reading: float  # the run's true reading (game Elo, reference scale)
    half_width: float  # its game Elo's 90% half-width
    kind: Kind  # the statement's kind (score: every score shown, alone or beside a bound)
    statements: int  # repetitions that made it
    covered: int  # of those, the ones whose claim held


def slope_draws(rng: np.random.Generator, n: int) -> np.ndarray:
    """n slopes from the prior, kept to the grid the fit is computed on."""
    mean, sd = SLOPE_PRIOR
    found: list[float] = []
    while len(found) < n:
        b = rng.normal(mean, sd, 2 * n)
        found += list(b[(b >= SLOPES[0]) & (b <= SLOPES[-1])])
    return np.array(found[:n])


def world(walk: Crosswalk, slope: float,
          rng: np.random.Generator) -> tuple[Crosswalk, float]:
    """The anchors as they would be observed under a line of `slope` (through their middle):
    the refitted crosswalk, and the line's intercept."""
    x = np.array([a.reading for a in walk.anchors])
    y = np.array([a.rating for a in walk.anchors])
    intercept = float(y.mean() - slope * x.mean())
    ratings = intercept + slope * x + rng.normal(0.0, np.sqrt(np.diag(walk.human())))
    readings = rng.multivariate_normal(x, walk.errors())
    anchors = tuple(replace(a, rating=float(r), measured=replace(a.measured, mean=float(m)))
                    for a, r, m in zip(walk.anchors, ratings, readings, strict=True))
    return replace(walk, anchors=anchors), intercept


def one_world(walk: Crosswalk, slope: float, rng: np.random.Generator,
              readings: Iterable[float], half_widths: Iterable[float]) -> list[dict[str, Any]]:
    """Every grid run's statements in one drawn world, each with whether its claim held."""
    seen, intercept = world(walk, slope, rng)
    runs = [(x, h) for x in readings for h in half_widths]
    sds = np.array([h / Z90 for _, h in runs])
    truth = np.array([x for x, _ in runs])
    observed = truth + rng.standard_normal(len(runs)) * sds
    means, spread, weights = seen.predictives(observed, sds)
    low, high = seen.ratings
    said = kinds(mixture_cdf(means, spread, weights,
                             np.tile(deciding(low, high), (len(runs), 1))), low, high)
    # The quantiles only where a figure or a bound shows them (the rest are scores).
    q = np.full((len(runs), len(LEVELS)), np.nan)
    rated = said != Kind.SCORE.value
    if rated.any():
        q[rated] = mixture_quantiles(means[rated], spread[rated], weights, np.array(LEVELS))
    _, lo, hi = figure_ends(q, low, high)
    most, least = bound_values(q, low, high)
    rating = intercept + slope * truth  # each run's true Lichess rating
    score_lo, score_hi, true_score = scores(walk, seen, observed, sds, truth)
    out = []
    for i, (x, h) in enumerate(runs):
        kind = Kind(str(said[i]))
        if kind == Kind.FIGURE:
            assert low <= lo[i] <= hi[i] <= high
            out.append({"reading": x, "half_width": h, "kind": kind,
                        "covered": bool(lo[i] <= rating[i] <= hi[i])})
            continue
        if kind in (Kind.AT_MOST, Kind.AT_LEAST):
            value = most[i] if kind == Kind.AT_MOST else least[i]
            assert low <= value <= high
            out.append({"reading": x, "half_width": h, "kind": kind,
                        "covered": bool(rating[i] <= value if kind == Kind.AT_MOST
                                        else rating[i] >= value)})
        out.append({"reading": x, "half_width": h, "kind": Kind.SCORE,
                    "covered": bool(score_lo[i] <= true_score[i] <= score_hi[i])})
    return out


def scores(walk: Crosswalk, seen: Crosswalk, observed: np.ndarray, sds: np.ndarray,
           truth: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each run's score interval against the anchor nearest its observed reading (as
    Crosswalk.expected_score gives it, the run's error its own), and the true score (nu at
    the true readings' level)."""
    lo, hi, true = (np.empty(len(observed)) for _ in range(3))
    for i, r in enumerate(observed):
        anchor = seen.nearest(float(r))
        _, lo[i], hi[i] = seen.expected_score(Reading(float(r), float(sds[i]), 0.0), anchor)
        true_anchor = next(a for a in walk.anchors if a.bot == anchor.bot)
        true[i] = float(btd.expected_score(truth[i] - true_anchor.reading,
                                           true_nu(walk, truth[i], true_anchor.reading)))
    return lo, hi, true


def true_nu(walk: Crosswalk, reading: float, anchor: float) -> float:
    """nu where the run truly plays the anchor: the reference ladder's draw model at the two
    true readings' mean (as the statement reads it at the observed ones), else its one nu."""
    return walk.nu if walk.draws is None else float(walk.draws.nu((reading + anchor) / 2))


def coverage(walk: Crosswalk, reps: int, seed: int,
             readings: Iterable[float] = READINGS,
             half_widths: Iterable[float] = HALF_WIDTHS) -> list[Cell]:
    """Each (reading, half-width, kind) cell over `reps` drawn worlds."""
    rng = np.random.default_rng([seed, list(TimeControl).index(walk.time_control)])
    readings, half_widths = list(readings), list(half_widths)
    counts: dict[tuple[float, float, Kind], list[int]] = {}
    for slope in slope_draws(rng, reps):
        for row in one_world(walk, float(slope), rng, readings, half_widths):
            made = counts.setdefault((row["reading"], row["half_width"], row["kind"]), [0, 0])
            made[0] += 1
            made[1] += row["covered"]
    return [Cell(walk.time_control.value, x, h, k, n, c)
            for (x, h, k), (n, c) in sorted(counts.items())]


def spacing(readings: Iterable[float] = READINGS) -> dict[float, float]:
    """Each grid reading's share of the line (half the gap to each neighbour): the grid
    stands for true readings spread evenly, as the fit's flat prior on a reading has them."""
    xs = sorted(set(readings))
    return {x: ((xs[min(i + 1, len(xs) - 1)] - xs[max(i - 1, 0)]) / 2)
            for i, x in enumerate(xs)}


def pooled(cells: Iterable[Cell], by: tuple[str, ...]) -> dict[tuple[Any, ...], tuple[int, int]]:
    """Statements and covered, summed over the cells sharing the fields `by`."""
    found: dict[tuple[Any, ...], list[int]] = {}
    for c in cells:
        key = tuple(getattr(c, f) for f in by)
        got = found.setdefault(key, [0, 0])
        got[0] += c.statements
        got[1] += c.covered
    return {k: (n, m) for k, (n, m) in found.items()}


def even(cells: Iterable[Cell], by: tuple[str, ...]) -> dict[tuple[Any, ...], float]:
    """Coverage over the cells sharing the fields `by`, each reading weighted by its share
    of the line (true readings spread evenly, not as the grid is dense near the anchors)."""
    share = spacing()
    found: dict[tuple[Any, ...], list[float]] = {}
    for c in cells:
        got = found.setdefault(tuple(getattr(c, f) for f in by), [0.0, 0.0])
        got[0] += share[c.reading] * c.statements
        got[1] += share[c.reading] * c.covered
    return {k: m / n for k, (n, m) in found.items() if n}


def rows_of(cells: Iterable[Cell], reps: int, seed: int) -> list[dict[str, Any]]:
    """The table's rows, one per cell."""
    return [{"time_control": c.time_control, "reading": f"{c.reading:.0f}",
             "half_width": f"{c.half_width:.0f}", "kind": c.kind.value,
             "statements": c.statements, "covered": c.covered,
             "coverage": f"{c.covered / c.statements:.4f}", "reps": reps, "seed": seed}
            for c in cells]


def read_table(path: Path = TABLE) -> list[Cell]:
    """The committed cells."""
    with path.open(encoding="utf-8", newline="") as handle:
        return [Cell(r["time_control"], float(r["reading"]), float(r["half_width"]),
                     Kind(r["kind"]), int(r["statements"]), int(r["covered"]))
                for r in csv.DictReader(handle)]


def summary(cells: list[Cell]) -> list[dict[str, Any]]:
    """Per time control and kind: statements, coverage (true readings spread evenly), and
    the lowest and highest coverage over the half-widths (those with 200 statements or
    more)."""
    made = pooled(cells, ("time_control", "kind"))
    whole = even(cells, ("time_control", "kind"))
    counts = pooled(cells, ("time_control", "kind", "half_width"))
    by_width = even(cells, ("time_control", "kind", "half_width"))
    out = []
    for tc in TimeControl:
        for kind in Kind:
            if (tc.value, kind) not in made:
                continue
            widths = [v for key, v in by_width.items()
                      if key[:2] == (tc.value, kind) and counts[key][0] >= 200]
            value = whole[(tc.value, kind)]
            out.append({"time_control": tc.value, "kind": kind.value,
                        "statements": made[(tc.value, kind)][0], "coverage": value,
                        "lowest": min(widths, default=value),
                        "highest": max(widths, default=value)})
    return out


def main() -> None:
    """Simulate every cell, print each kind's coverage per time control, and with --write
    keep the cells."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=1000, help="drawn worlds per time control")
    p.add_argument("--seed", type=int, default=20261203)
    p.add_argument("--workers", type=int, default=3, help="processes (one per time control)")
    p.add_argument("--write", type=Path, nargs="?", const=TABLE, default=None,
                   help=f"keep the cells in this table (default: {TABLE.relative_to(ROOT)})")
    args = p.parse_args()
    walks = load_crosswalks(reference=reference_ladder())
    # A process per time control: each draws from its own seeded stream, so the table is the
    # same however they are scheduled.
    with ProcessPoolExecutor(max_workers=min(len(walks), args.workers)) as pool:
        cells = [c for found in pool.map(coverage, walks, [args.reps] * len(walks),
                                         [args.seed] * len(walks)) for c in found]
    print("| time control | kind | statements | coverage | over the half-widths |\n"
          "|---|---|---|---|---|")
    for s in summary(cells):
        print(f"| {s['time_control']} | {s['kind']} | {s['statements']} | "
              f"{s['coverage']:.1%} | {s['lowest']:.1%}-{s['highest']:.1%} |")
    if args.write:
        write_csv(args.write, FIELDS, rows_of(cells, args.reps, args.seed))
        print(f"wrote {args.write}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
