"""What a game Elo means to a chess player: a crosswalk to Lichess ratings, only where measured.

Three Maia-1 nets also play on Lichess as bots (maia1 runs maia-1100, maia5 maia-1500, maia9
maia-1900), so each has two numbers: its game Elo on the reference ladder (measured here, the
net alone through the served path: data/human/maia_players.csv, refitted from its committed
games) and its bot's Lichess rating in a time control (a dated snapshot with its RD, or a
quoted figure without one: data/human/lichess_anchors.csv; a newer snapshot is a new row, not
new code). Per time control the anchors give a line

    lichess = a + b * true_reading,    b >= 0 (a stronger player is never placed lower)

fitted with the readings' errors in the model (errors in variables): a reading is its true
value plus its error, and the errors of all readings (the anchors' and the run's) are drawn
together, each reading's own part (its games) independent and the ladder's part shared through
the rungs' covariance (the weights of each rung's Elo in each reading). Each rating is the line
plus the human side's spread (the RD; drift between snapshots; the bots' opening books, which
the net alone does not have). The slope has a prior of 1 (an Elo is an Elo on both scales) with
sd 0.5; the intercept is flat. Given the slope everything is Gaussian, so the posterior is
computed exactly on a grid of slopes, with no simulation.

A run gets a Lichess figure only when its reading's 90% interval lies between the weakest and
the strongest anchor's readings, and the figure's interval stops at their ratings: nothing is
ever extrapolated. A reading whose interval crosses the weakest (strongest) anchor's reading
gets a one-sided figure, "at most" ("at least"). A reading wholly below (above) the anchors
gets what was measured: its expected score against that anchor, with both readings' errors,
"scores 2% [1%, 4%] against maia1 (Lichess blitz 1,417)". No FIDE figure: the one published
Lichess-to-FIDE conversion (blitz, r 0.54-0.63 on self-reported FIDE ratings) is too loose to
add a number a reader would trust.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from scipy import stats

from chess_eval.benchmark.core.data import DATA, LADDER_MAP, REFERENCE_LADDER, ladder_label
from chess_eval.benchmark.stats import btd
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.benchmark.stats.elo import ABOVE, BELOW, INTERVAL
from chess_eval.benchmark.stats.ladder_map import LadderMap, load_map
from chess_eval.engine import REFERENCE_ENGINE
from chess_eval.errors import DataError

HUMAN_DIR = DATA / "human"  # the crosswalk's committed data: the two files below
ANCHORS_FILE = "lichess_anchors.csv"  # the bots' Lichess ratings, dated
READINGS_FILE = "maia_players.csv"  # the nets' game Elos (bench/maia_players.py)
REFERENCE_LABEL = ladder_label(REFERENCE_LADDER)  # the readings' ladder, as the tables
# name it
# The human side's spread beyond the RD, one sd each (Elo):
DRIFT_SD = 30.0  # between snapshots: maia9 classical 1816 -> 1774 in two months, maia1 +7
BOOK_SD = 30.0  # the bots play from opening books, the net alone does not (not measured)
RD_UNQUOTED = 60.0  # a figure quoted without its RD: above any established bot's (45), which
# is Lichess's floor for a rated player (lila's minDeviation), not a measured spread
SLOPE_PRIOR = (1.0, 0.5)  # the slope's prior, Lichess Elo per Elo here: mean and sd
SLOPES = np.linspace(0.0, 3.0, 601)  # the grid the slope's posterior is computed on (b >= 0)
INTERCEPT_SD = 1e4  # the intercept's prior: flat for every purpose here (sd 10,000 Elo)
LEVEL_LO, LEVEL_HI = 0.05, 0.95  # the 90% interval's ends


class Reference(Protocol):
    """What the crosswalk needs of the reference ladder (arena.ladder.Ladder has it)."""

    @property
    def cov(self) -> np.ndarray:
        """The rungs' Elo covariance: the errors every reading on it shares."""

    @property
    def nu(self) -> float:
        """Its draw parameter: expected scores."""


class TimeControl(StrEnum):
    """Lichess's rating pools that the anchors are rated in, fastest first."""

    BLITZ = "blitz"
    RAPID = "rapid"
    CLASSICAL = "classical"


ORDER = list(TimeControl)  # the order every table shows them in


class Placement(StrEnum):
    """What can be said of a run against the anchors' readings, weakest to strongest."""

    BELOW = "below"  # wholly below the weakest anchor: its expected score against it
    AT_MOST = "at_most"  # crosses the weakest anchor's reading: a one-sided figure
    INSIDE = "inside"  # between the anchors: a Lichess figure with its interval
    AT_LEAST = "at_least"  # crosses the strongest anchor's reading: a one-sided figure
    ABOVE = "above"  # wholly above the strongest anchor: its expected score against it
    UNPLACED = "unplaced"  # crosses both anchors, or no estimate


@dataclass(frozen=True)
class Reading:
    """A game Elo on the reference ladder, its error split into the run's own and the
    ladder's (which every reading on the ladder shares through the rungs)."""

    mean: float  # the estimate (Elo)
    own_sd: float  # the games' part of its error, independent of every other reading
    ladder_sd: float  # the ladder's part (used alone where the weights are unknown)
    weights: tuple[float, ...] = ()  # d(reading)/d(rung Elo), ladder order; () unknown

    @property
    def sd(self) -> float:
        """The whole standard error."""
        return math.hypot(self.own_sd, self.ladder_sd)


def covariance(a: Reading, b: Reading, cov: np.ndarray | None, same: bool = False) -> float:
    """The covariance of two readings' errors: their own parts where they are one reading,
    the ladder's part through the rungs' covariance where both know their weights (else
    independent)."""
    own = a.own_sd ** 2 if same else 0.0
    if cov is not None and len(a.weights) == len(b.weights) == len(cov):
        return own + float(np.asarray(a.weights) @ cov @ np.asarray(b.weights))
    return own + (a.ladder_sd ** 2 if same else 0.0)


@dataclass(frozen=True)
class Anchor:
    """One bot in one time control: its net's reading and its rating."""

    bot: str  # the Lichess account ('maia1')
    net: int  # the Maia-1 net it runs
    rating: float  # its Lichess rating in the snapshot
    rd: float  # the snapshot's rating deviation (RD_UNQUOTED where none was quoted)
    date: str  # when the snapshot was read
    measured: Reading  # the net's game Elo on the reference ladder
    quoted: bool = False  # the rating was quoted without an RD, not read from a profile

    @property
    def reading(self) -> float:
        """The net's game Elo."""
        return self.measured.mean

    @property
    def reading_sd(self) -> float:
        """Its standard error, the ladder's own included."""
        return self.measured.sd

    @property
    def human_sd(self) -> float:
        """The rating's spread as a measure of the net's human strength."""
        return math.sqrt(self.rd ** 2 + DRIFT_SD ** 2 + BOOK_SD ** 2)


@dataclass(frozen=True)
class Prediction:
    """A reading's Lichess rating on one crosswalk: median and 90% interval."""

    median: float
    lo: float
    hi: float


@dataclass(frozen=True)
class Crosswalk:
    """The reference scale to one Lichess time control."""

    time_control: TimeControl
    anchors: tuple[Anchor, ...]  # by reading, weakest first
    cov: np.ndarray | None = None  # the reference ladder's rung covariance (shared errors)
    nu: float = 0.5  # the reference ladder's draw parameter (expected scores)

    @property
    def band(self) -> tuple[float, float]:
        """The readings a figure is given for: the weakest anchor's to the strongest's."""
        return self.anchors[0].reading, self.anchors[-1].reading

    @property
    def ratings(self) -> tuple[float, float]:
        """The lowest and highest anchor rating: no figure is ever outside them."""
        found = [a.rating for a in self.anchors]
        return min(found), max(found)

    @property
    def snapshot(self) -> str:
        """The snapshots' dates."""
        return ", ".join(sorted({a.date for a in self.anchors}))

    @property
    def basis(self) -> str:
        """How many anchors, and whether their ratings were read with an RD or quoted."""
        kind = "quoted, no RD" if any(a.quoted for a in self.anchors) else "profiles with RD"
        return f"{len(self.anchors)} anchors, {kind}, {self.snapshot}"

    def _errors(self) -> np.ndarray:
        """The anchors' reading errors' covariance."""
        m = [a.measured for a in self.anchors]
        return np.array([[covariance(x, y, self.cov, i == j) for j, y in enumerate(m)]
                         for i, x in enumerate(m)])

    def slope_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """The slope's grid and its posterior weights (the intercept integrated out)."""
        return self._slopes

    @cached_property
    def _slopes(self) -> tuple[np.ndarray, np.ndarray]:
        """slope_posterior, computed once per crosswalk (every placement reads it)."""
        x = np.array([a.reading for a in self.anchors])
        y = np.array([a.rating for a in self.anchors])
        errors, human = self._errors(), np.diag([a.human_sd ** 2 for a in self.anchors])
        ones = np.ones((len(x), len(x)))
        logs = []
        for b in SLOPES:
            # y - b x = a - b (error of x) + (human spread): Gaussian given b.
            v = INTERCEPT_SD ** 2 * ones + b ** 2 * errors + human
            logs.append(stats.multivariate_normal.logpdf(y - b * x, cov=v))
        mean, sd = SLOPE_PRIOR
        log_post = np.array(logs) + stats.norm.logpdf(SLOPES, mean, sd)
        w = np.exp(log_post - log_post.max())
        return SLOPES, w / w.sum()

    def predict(self, run: Reading | float, sd: float | None = None) -> Prediction:
        """The Lichess rating of a reading (or of `run` +- `sd`, its error independent):
        the median and 90% interval of the fit's posterior predictive."""
        if not isinstance(run, Reading):
            run = Reading(float(run), float(sd or 0.0), 0.0)
        x = np.array([a.reading for a in self.anchors])
        y = np.array([a.rating for a in self.anchors])
        errors, human = self._errors(), np.diag([a.human_sd ** 2 for a in self.anchors])
        shared = np.array([covariance(run, a.measured, self.cov) for a in self.anchors])
        own = covariance(run, run, self.cov, same=True)
        slopes, weights = self.slope_posterior()
        means, sds = [], []
        big = INTERCEPT_SD ** 2
        for b in slopes:
            # Q = a - b e_run given r = y - b x: jointly Gaussian (a ~ N(0, big)).
            v = big * np.ones((len(x), len(x))) + b ** 2 * errors + human
            k = big + b ** 2 * shared
            solved = np.linalg.solve(v, k)
            means.append(b * run.mean + float(solved @ (y - b * x)))
            sds.append(math.sqrt(max(big + b ** 2 * own - float(solved @ k), 1e-9)))
        return _mixture(np.array(means), np.array(sds), weights)

    def expected_score(self, run: Reading, anchor: Anchor) -> tuple[float, float, float]:
        """The run's expected score against an anchor on the reference scale, with both
        readings' errors (the ladder's shared part cancelling): value, 5th and 95th."""
        gap = run.mean - anchor.reading
        var = covariance(run, run, self.cov, True) + covariance(
            anchor.measured, anchor.measured, self.cov, True) - 2 * covariance(
            run, anchor.measured, self.cov)
        sd = math.sqrt(max(var, 0.0))
        value, lo, hi = (float(btd.expected_score(g, self.nu))
                         for g in (gap, gap - Z90 * sd, gap + Z90 * sd))
        return value, lo, hi

    def place(self, elo: dict[str, Any], ladder: dict[str, Any] | None = None) -> dict[str, Any]:
        """A run's game Elo (a result's elo block, reference scale; `ladder`: its condition's
        ladder part, for the errors it shares with the anchors) on this time control."""
        low, high = self.band
        weak, strong = self.anchors[0], self.anchors[-1]
        run = run_reading(elo, ladder)
        kind = elo.get("kind", INTERVAL)
        lo = elo.get("lo") if kind in (INTERVAL, ABOVE) else None
        hi = elo.get("hi") if kind in (INTERVAL, BELOW) else None
        placement = _placement(None if lo is None else float(lo),
                               None if hi is None else float(hi), low, high, kind)
        r_low, r_high = self.ratings
        p = None if run is None or placement in (Placement.BELOW, Placement.ABOVE,
                                                 Placement.UNPLACED) else self.predict(run)
        name = f"Lichess {self.time_control}"
        block: dict[str, Any] = {
            "time_control": self.time_control.value, "placement": placement.value,
            "value": None, "lo": None, "hi": None, "bound": None, "anchor": None,
            "anchor_rating": None, "expected_score": None, "snapshot": self.snapshot,
            "basis": self.basis, "band": [round(low), round(high)],
            "anchors": [a.bot for a in self.anchors]}
        if placement == Placement.INSIDE and p is not None:
            step = 10 if (p.hi - p.lo) / 2 > 100 else 1
            mid, lo_, hi_ = (_round(min(max(v, r_low), r_high), step)
                             for v in (p.median, p.lo, p.hi))
            block |= {"value": mid, "lo": lo_, "hi": hi_,
                      "text": f"{name} ~{mid:,} [{lo_:,}, {hi_:,}]"}
        elif placement in (Placement.AT_MOST, Placement.AT_LEAST) and p is not None and \
                run is not None:
            most = placement == Placement.AT_MOST
            # The reading's interval ends between the anchors' readings, so (the line rising)
            # the rating is within their ratings: the bound stops there too. Outward to 10:
            # rounded, it never claims more than the fit gives.
            end = min(max(p.hi if most else p.lo, r_low), r_high)
            value = math.ceil(end / 10) * 10 if most else math.floor(end / 10) * 10
            anchor = weak if most else strong
            fields, said = self._against(run, anchor)
            block |= {"bound": {"side": placement.value, "value": value}, **fields,
                      "text": f"{name} {'at most' if most else 'at least'} ~{value:,}, {said}"}
        elif placement in (Placement.BELOW, Placement.ABOVE) and run is not None:
            anchor = weak if placement == Placement.BELOW else strong
            # A game Elo that is itself a bound (every game lost or won) gives a bound on
            # the score too.
            fields, said = self._against(run, anchor, {BELOW: "at most",
                                                       ABOVE: "at least"}.get(kind))
            block |= {**fields, "text": said}
        else:
            block["text"] = f"{name}: not placed (" + (
                "no game Elo to place" if run is None else
                f"the game Elo's interval spans the anchors' readings, "
                f"{round(low):,}-{round(high):,}") + ")"
        return block

    def _against(self, run: Reading, anchor: Anchor,
                 side: str | None = None) -> tuple[dict[str, Any], str]:
        """The expected score against an anchor: its fields and its words (`side`: 'at most'
        / 'at least' where the run's Elo is itself a bound, so the score is one too)."""
        value, lo, hi = self.expected_score(run, anchor)
        score: dict[str, float | None] = {"value": round(value, 4), "lo": round(lo, 4),
                                          "hi": round(hi, 4)}
        if side == "at most":
            score |= {"value": None, "lo": None}
        elif side == "at least":
            score |= {"value": None, "hi": None}
        shown = f"{percent(value)} [{percent(lo)}, {percent(hi)}]" if side is None else \
            f"{side} {percent(hi if side == 'at most' else lo)}"
        return ({"anchor": anchor.bot, "anchor_net": anchor.net,
                 "anchor_rating": round(anchor.rating), "expected_score": score},
                f"scores {shown} against {anchor.bot} (maia-{anchor.net}, Lichess "
                f"{self.time_control} {round(anchor.rating):,})")


def _placement(lo: float | None, hi: float | None, low: float, high: float,
               kind: str) -> Placement:
    """Where a reading's 90% interval [lo, hi] (a side None: unbounded) falls against the
    anchors' readings [low, high]."""
    if kind not in (INTERVAL, BELOW, ABOVE) or (lo is None and hi is None):
        return Placement.UNPLACED
    if hi is not None and hi < low:
        return Placement.BELOW
    if lo is not None and lo > high:
        return Placement.ABOVE
    crosses_low = lo is None or lo < low
    crosses_high = hi is None or hi > high
    if crosses_low and crosses_high:
        return Placement.UNPLACED
    if crosses_low:
        return Placement.AT_MOST if kind == INTERVAL else Placement.UNPLACED
    if crosses_high:
        return Placement.AT_LEAST if kind == INTERVAL else Placement.UNPLACED
    return Placement.INSIDE


def run_reading(elo: dict[str, Any], ladder: dict[str, Any] | None) -> Reading | None:
    """A result's game Elo as a Reading: its mean and sd from the interval (or a one-sided
    bound taken as the mean, for its expected score), the ladder's part from its condition's
    ladder block where given."""
    kind = elo.get("kind", INTERVAL)
    if kind == INTERVAL and None not in (elo.get("mean"), elo.get("lo"), elo.get("hi")):
        mean, sd = float(elo["mean"]), (float(elo["hi"]) - float(elo["lo"])) / (2 * Z90)
    elif kind == BELOW and elo.get("hi") is not None:
        mean, sd = float(elo["hi"]), 0.0  # a 95% bound: its score is a bound too
    elif kind == ABOVE and elo.get("lo") is not None:
        mean, sd = float(elo["lo"]), 0.0
    else:
        return None
    part = ladder or {}
    ladder_sd = min(float(part.get("sd") or 0.0), sd)
    own = math.sqrt(max(sd ** 2 - ladder_sd ** 2, 0.0))
    return Reading(mean, own, ladder_sd, tuple(float(w) for w in part.get("weights") or ()))


def percent(p: float) -> str:
    """A share as a reader takes it: '<0.1%', '0.4%', '12%', '>99.9%'."""
    if p < 0.001:
        return "<0.1%"
    if p > 0.999:
        return ">99.9%"
    if p < 0.01 or p > 0.99:
        return f"{p:.1%}"
    return f"{p:.0%}"


def _round(value: float, step: int) -> int:
    return int(round(value / step) * step)


def _mixture(means: np.ndarray, sds: np.ndarray, weights: np.ndarray) -> Prediction:
    """The median and 90% interval of a mixture of normals."""
    keep = weights > 1e-12
    means, sds, weights = means[keep], sds[keep], weights[keep]
    grid = np.linspace((means - 6 * sds).min(), (means + 6 * sds).max(), 4001)
    cdf = (weights[:, None] * stats.norm.cdf(grid[None, :], means[:, None],
                                             sds[:, None])).sum(axis=0)
    lo, mid, hi = np.interp([LEVEL_LO, 0.5, LEVEL_HI], cdf, grid)
    return Prediction(float(mid), float(lo), float(hi))


def load_crosswalks(folder: Path = HUMAN_DIR,
                    reference: Reference | None = None) -> list[Crosswalk]:
    """The crosswalks of the committed anchors and readings in `folder` (none where either
    file is missing), blitz first; `reference`: the reference ladder, whose covariance the
    readings share (without it their ladder parts are taken as independent). DataError in
    one line for a file that cannot be read."""
    anchors_path, readings_path = folder / ANCHORS_FILE, folder / READINGS_FILE
    if not (anchors_path.exists() and readings_path.exists()):
        return []
    readings = {}
    for n, row in enumerate(_rows(readings_path), start=2):
        if row.get("ladder") != REFERENCE_LABEL:
            continue
        try:
            readings[int(row["net"])] = _reading(row)
        except (KeyError, ValueError) as exc:
            raise DataError(f"{readings_path}, line {n}: {exc}") from exc
    found: dict[TimeControl, list[Anchor]] = {}
    for n, row in enumerate(_rows(anchors_path), start=2):
        try:
            net = int(row["net"])
            if net not in readings:
                continue  # its net is not rated on the reference ladder yet
            found.setdefault(TimeControl(row["time_control"]), []).append(Anchor(
                row["bot"], net, float(row["rating"]),
                float(row["rd"]) if row["rd"] else RD_UNQUOTED, row["date"], readings[net],
                quoted=not row["rd"]))
        except (KeyError, ValueError) as exc:
            raise DataError(f"{anchors_path}, line {n}: {exc}") from exc
    cov = None if reference is None else np.asarray(reference.cov, float)
    nu = 0.5 if reference is None else float(reference.nu)
    return [Crosswalk(tc, tuple(sorted(found[tc], key=lambda x: x.reading)), cov, nu)
            for tc in ORDER if len(found.get(tc, [])) >= 2]


def _reading(row: dict[str, str]) -> Reading:
    """A net's reading from its table row (its ladder part and weights where given)."""
    sd = float(row["game_elo_sd"])
    ladder_sd = float(row.get("game_elo_ladder_sd") or 0.0)
    weights = tuple(float(w) for w in (row.get("ladder_weights") or "").split())
    return Reading(float(row["game_elo"]), math.sqrt(max(sd ** 2 - ladder_sd ** 2, 0.0)),
                   ladder_sd, weights)


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path}: cannot be read ({exc})") from exc


def human_block(elo: dict[str, Any], engine: str, crosswalks: list[Crosswalk],
                ladder_map: LadderMap | None,
                ladder: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A result's `human` block: its standard game Elo on each time control. A run on the
    reference ladder is placed as read (`ladder`: its condition's ladder part); one on a
    ladder the measured map converts from is converted first (its interval widened, its
    error its own); any other ladder gets none."""
    if not crosswalks:
        return None
    scale = "reference"
    if not engine.startswith(REFERENCE_ENGINE):
        if ladder_map is None or not engine.startswith(ladder_map.source):
            return None
        elo, ladder = ladder_map.convert_elo(elo), None
        scale = f"converted from {ladder_map.source}"
    return {"scale": scale, "time_controls": [c.place(elo, ladder) for c in crosswalks]}


def human_text(block: dict[str, Any] | None) -> str:
    """The block in one line ('Lichess blitz ~1,450 [1,420, 1,560]; ...'), '' for none."""
    if not block:
        return ""
    places = block["time_controls"]
    if places and all(tc["placement"] == Placement.UNPLACED for tc in places):
        return "Lichess: " + str(places[0]["text"]).split(": ", 1)[1]
    # Outside the anchors every time control scores the same against one net: said once.
    same = {(tc["placement"], tc["anchor"], repr(tc["expected_score"])) for tc in places}
    outside = (Placement.BELOW, Placement.ABOVE)
    if len(places) > 1 and len(same) == 1 and places[0]["placement"] in outside:
        ratings = ", ".join(f"{tc['time_control']} {tc['anchor_rating']:,}" for tc in places)
        return f"{str(places[0]['text']).split(', Lichess ', 1)[0]}, Lichess {ratings})"
    return "; ".join(tc["text"] for tc in places)


def human_metrics(place: dict[str, Any]) -> dict[str, float | None]:
    """One time control's place as flat metrics (Inspect's), each named for what it is:
    lichess_TC (_lo, _hi) for a figure, lichess_TC_at_most / _at_least for a one-sided one,
    lichess_TC_expected_score (_lo, _hi) against the anchor lichess_TC_anchor_rating."""
    name = f"lichess_{place['time_control']}"
    bound = place.get("bound") or {}
    score = place.get("expected_score") or {}
    return {name: place["value"], f"{name}_lo": place["lo"], f"{name}_hi": place["hi"],
            f"{name}_at_most": bound.get("value") if bound.get("side") == Placement.AT_MOST
            else None,
            f"{name}_at_least": bound.get("value") if bound.get("side") == Placement.AT_LEAST
            else None,
            f"{name}_expected_score": score.get("value"),
            f"{name}_expected_score_lo": score.get("lo"),
            f"{name}_expected_score_hi": score.get("hi"),
            f"{name}_anchor_rating": place.get("anchor_rating")}


def committed_block(elo: dict[str, Any], engine: str, reference: Reference | None,
                    ladder: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """human_block with the committed anchors, readings and map (`reference`: the loaded
    reference ladder; `ladder`: the run's condition's ladder part)."""
    return human_block(elo, engine, load_crosswalks(HUMAN_DIR, reference), load_map(LADDER_MAP),
                       ladder)
