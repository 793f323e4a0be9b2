"""What a run is told on one time control, every number from the fit's posterior predictive
(the intercept, the slope, both readings' errors and the ladder's covariance), never clipped:

- a figure, "Lichess blitz ~1,710 [1,600, 1,830]", only where the whole 90% predictive
  interval lies between the anchors' ratings;
- otherwise a one-sided 90% bound, "at most ~N" (the 90th percentile) or "at least ~N" (the
  10th), where that percentile lies between the anchors' ratings (the side whose tail leaves
  them; both tails out, the side of the ratings' middle the median is on);
- otherwise the expected score against the anchor nearest the reading, with its interval:
  what was measured, on the reference scale. Every reading gets a statement.

Where a run gets no figure, it is told the half-width of game Elo a figure needs at its
reading and about how many games give it (the games' error falling as one over their number);
where no half-width does (the anchors' ratings closer than the fit's 90% interval is wide, as
classical's are), it is told that. A figure is rounded to 10 where its interval is wider than
+-100 and a bound to 10, never past the anchors' ratings.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from chess_eval.benchmark.human.anchors import Anchor
from chess_eval.benchmark.human.crosswalk import (
    BOUND_HI,
    BOUND_LO,
    LEVEL_HI,
    LEVEL_LO,
    Crosswalk,
    Predictive,
)
from chess_eval.benchmark.human.reading import Reading, run_reading
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.benchmark.stats.elo import ABOVE, BELOW

LEVELS = (LEVEL_LO, BOUND_LO, 0.5, BOUND_HI, LEVEL_HI)  # the predictive's quantiles used
WIDE = 100.0  # a figure whose interval is wider than +- this is rounded to 10
MOST_OWN_SD = 400.0  # the widest own error searched for the half-width a figure needs
HALVINGS = 30  # bisections of that search


class Kind(StrEnum):
    """The kinds of statement, weakest claim last."""

    FIGURE = "figure"  # the whole 90% predictive between the anchors' ratings
    AT_MOST = "at_most"  # its 90th percentile between them: a one-sided 90% bound
    AT_LEAST = "at_least"  # its 10th percentile between them
    SCORE = "score"  # neither: the expected score against the anchor nearest the reading


RATING_KINDS = (Kind.AT_MOST, Kind.FIGURE, Kind.AT_LEAST)  # those that say a rating, in order


def kinds(below: np.ndarray, low: float, high: float) -> np.ndarray:
    """The kind of statement from the predictive's CDF at the anchors' lowest rating, their
    middle and their highest (below: ... x 3), which decide it exactly: a figure where the
    5th percentile is at least `low` and the 95th at most `high`, and so on."""
    at_low, at_mid, at_high = np.moveaxis(np.asarray(below, float), -1, 0)
    figure = (at_low <= LEVEL_LO) & (at_high >= LEVEL_HI)
    most = (at_low <= BOUND_HI) & (at_high >= BOUND_HI)  # the 90th between the ratings
    least = (at_low <= BOUND_LO) & (at_high >= BOUND_LO)  # the 10th
    # The side whose tail leaves the ratings; both out, the side of their middle.
    lower_side = (at_low > LEVEL_LO) & ((at_high >= LEVEL_HI) | (at_mid > 0.5))
    return np.select(
        [figure, most & (lower_side | ~least), least],
        [Kind.FIGURE.value, Kind.AT_MOST.value, Kind.AT_LEAST.value], Kind.SCORE.value)


def deciding(low: float, high: float) -> tuple[float, float, float]:
    """The ratings at which the predictive's CDF decides the kind (kinds)."""
    return low, (low + high) / 2, high


def figure_ends(q: np.ndarray, low: float, high: float) -> tuple[np.ndarray, ...]:
    """A figure's median and ends as shown: to the nearest 10 where wider than +-WIDE (else
    to 1), within [low, high]."""
    q = np.asarray(q, float)
    step = np.where((q[..., 4] - q[..., 0]) / 2 > WIDE, 10.0, 1.0)
    mid, lo, hi = (np.clip(np.round(q[..., i] / step) * step, low, high) for i in (2, 0, 4))
    return mid, lo, hi


def bound_values(q: np.ndarray, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """The one-sided bounds as shown, to the nearest 10 within [low, high]: at most, at
    least (rounded outward they covered 1-2 points more than their 90%: the simulation)."""
    q10, q90 = np.asarray(q, float)[..., 1], np.asarray(q, float)[..., 3]
    return (np.clip(np.round(q90 / 10) * 10, low, high),
            np.clip(np.round(q10 / 10) * 10, low, high))


@dataclass(frozen=True)
class FigureNeeds:
    """The game Elo a figure needs at a run's reading, where it gets none."""

    half_width: int | None  # the 90% half-width of game Elo that gives one; None: none does
    games: int | None  # about how many games give it (the run's own error as 1/games)
    reason: str  # 'half_width', 'never' (no reading gets one here) or 'outside' (this one)


def _figure_at(p: Predictive, low: float, high: float) -> bool:
    lo, hi = p.quantiles((LEVEL_LO, LEVEL_HI))
    return lo >= low and hi <= high


def narrowest(walk: Crosswalk) -> float:
    """The narrowest 90% predictive interval the crosswalk gives: a reading with no error at
    the middle of the anchors'."""
    p = walk.predictive(Reading(sum(walk.band) / 2, 0.0, 0.0)).prediction()
    return p.hi - p.lo


def figure_needs(walk: Crosswalk, run: Reading) -> FigureNeeds:
    """The half-width of game Elo a figure needs at the run's reading (its ladder part as it
    is, its own error searched), and about how many games give it."""
    low, high = walk.ratings
    exact = walk.predictive(Reading(run.mean, 0.0, run.ladder_sd, run.weights))
    if not _figure_at(exact, low, high):
        within = walk.band[0] <= run.mean <= walk.band[1]
        never = within and narrowest(walk) > high - low
        return FigureNeeds(None, None, "never" if never else "outside")
    lo, hi = 0.0, MOST_OWN_SD
    for _ in range(HALVINGS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _figure_at(exact.widened(mid), low, high) else (lo, mid)
    own = lo
    half = Z90 * math.hypot(own, run.ladder_sd)
    games = None
    if run.games and run.own_sd > 0 and own > 0:
        games = _about(run.games * (run.own_sd / own) ** 2)
    return FigureNeeds(math.floor(half), games, "half_width")


def _about(n: float) -> int:
    """A count to two significant figures, rounded up."""
    digits = max(int(math.floor(math.log10(max(n, 1.0)))) - 1, 0)
    return int(math.ceil(n / 10 ** digits) * 10 ** digits)


def percent(p: float) -> str:
    """A share as a reader takes it, to two figures near the ends: '<0.1%', '1.6%', '12%',
    '98.4%', '>99.9%'."""
    if p < 0.001:
        return "<0.1%"
    if p > 0.999:
        return ">99.9%"
    if p < 0.1 or p > 0.9:
        return f"{p:.1%}"
    return f"{p:.0%}"


def state(walk: Crosswalk, elo: dict[str, Any],
          ladder: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """A run's game Elo (a result's elo block, reference scale; `ladder`: its condition's
    ladder part, for the errors it shares with the anchors) on this time control: its
    statement as JSON, None where there is no game Elo."""
    run = run_reading(elo, ladder)
    if run is None:
        return None
    low, high = walk.ratings
    name = f"Lichess {walk.time_control}"
    block: dict[str, Any] = {
        "time_control": walk.time_control.value, "kind": Kind.SCORE.value, "value": None,
        "lo": None, "hi": None, "bound": None, "anchor": None, "anchor_net": None,
        "anchor_rating": None, "expected_score": None, "figure_needs": None,
        "snapshot": walk.snapshot, "basis": walk.basis,
        "band": [round(b) for b in walk.band], "ratings": [round(low), round(high)],
        "anchors": [a.bot for a in walk.anchors]}
    side = {BELOW: "at most", ABOVE: "at least"}.get(str(elo.get("kind")))
    if side is not None:  # every game lost (won): the score is a bound too, and all there is
        fields, said = _against(walk, run, walk.nearest(run.mean), side)
        return block | fields | {"text": said}
    predictive = walk.predictive(run)
    kind = Kind(str(kinds(np.array(predictive.cdf(deciding(low, high))), low, high)))
    q = np.array(predictive.quantiles(LEVELS))
    block["kind"] = kind.value
    if kind == Kind.FIGURE:
        mid, lo, hi = (int(v) for v in figure_ends(q, low, high))
        return block | {"value": mid, "lo": lo, "hi": hi,
                        "text": f"{name} ~{mid:,} [{lo:,}, {hi:,}]"}
    fields, said = _against(walk, run, walk.nearest(run.mean))
    needs = figure_needs(walk, run)
    block |= fields | {"figure_needs": asdict(needs)}
    text = said
    if kind in (Kind.AT_MOST, Kind.AT_LEAST):
        most, least = bound_values(q, low, high)
        value = int(most if kind == Kind.AT_MOST else least)
        words = "at most" if kind == Kind.AT_MOST else "at least"
        block["bound"] = {"side": kind.value, "value": value}
        text = f"{name} {words} ~{value:,} (90%); {said}"
    return block | {"text": text + _needs_text(walk, needs)}


def _needs_text(walk: Crosswalk, needs: FigureNeeds) -> str:
    """What a figure would take, in words ('' where this reading gets none at any games)."""
    if needs.reason == "half_width":
        games = f", about {needs.games:,} games" if needs.games else ""
        return f"; a figure needs a game Elo of +-{needs.half_width}{games}"
    if needs.reason == "never":
        low, high = walk.ratings
        return (f"; no number of games gives a figure: the anchors' ratings are "
                f"{high - low:,.0f} apart, the fit's 90% interval at least "
                f"{narrowest(walk):,.0f} wide")
    return ""


def _against(walk: Crosswalk, run: Reading, anchor: Anchor,
             side: str | None = None) -> tuple[dict[str, Any], str]:
    """The expected score against an anchor: its fields and its words (`side`: 'at most'
    / 'at least' where the run's Elo is itself a bound, so the score is one too)."""
    value, lo, hi = walk.expected_score(run, anchor)
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
            f"{walk.time_control} {round(anchor.rating):,})")
