"""What a game Elo means to a chess player: a crosswalk to Lichess ratings, only where measured.

Three Maia-1 nets also play on Lichess as bots (maia1 runs maia-1100, maia5 maia-1500, maia9
maia-1900), so each has two numbers: its game Elo on the reference ladder (measured here, the
net alone through the served path: data/human/maia_players.csv) and its bot's Lichess rating
in a time control (a dated snapshot with its RD: data/human/lichess_anchors.csv; a newer
snapshot is a new row, not new code). Per time control the anchors give a line

    lichess = a + b * reference_elo,    b >= 0 (a stronger player is never placed lower)

and a run's reading is placed on it. The anchors sit within a couple of hundred Elo of each
other, each reading +-40 or so, so they alone hardly fix b: it is drawn toward a prior of 1
(an Elo is an Elo on both scales) with sd 0.5, weighted against the anchors' own spread.
The interval is drawn by simulation (a fixed seed, so the same run always reads the same): each
draw moves every anchor's reading by its error (its games
and the ladder's), every anchor's rating by the human side's spread (the RD; drift between
snapshots; the bots' opening books, which the net alone does not have) and the run's reading by
its own error, fits the line and reads the run off it; the 5th and 95th percentiles are the
interval. Only inside the band the anchors cover (the weakest anchor's reading minus its 90%
error to the strongest's plus its error) is there a figure: outside it the run is "below" or
"above" an anchor's level, never an extrapolation; a bound that straddles the band places
nothing. No FIDE figure: the one published Lichess-to-FIDE conversion (blitz, r 0.54-0.63 on
self-reported FIDE ratings) is too loose to add a number a reader would trust.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from lib.benchmark.core.data import DATA, LADDER_MAP, REFERENCE_LADDER, ladder_label
from lib.benchmark.stats.btd import Z90
from lib.benchmark.stats.elo import ABOVE, BELOW, INTERVAL
from lib.benchmark.stats.ladder_map import REFERENCE_ENGINE, LadderMap, load_map
from lib.errors import DataError

HUMAN_DIR = DATA / "human"  # the crosswalk's committed data: the two files below
ANCHORS_FILE = "lichess_anchors.csv"  # the bots' Lichess ratings, dated
READINGS_FILE = "maia_players.csv"  # the nets' game Elos (bench/maia_players.py)
REFERENCE_LABEL = ladder_label(REFERENCE_LADDER)  # the readings' ladder, as the tables
# name it
# The human side's spread beyond the RD, one sd each (Elo):
DRIFT_SD = 30.0  # between snapshots: maia9 classical 1816 -> 1774 in two months, maia1 +7
BOOK_SD = 30.0  # the bots play from opening books, the net alone does not (not measured)
RD_UNQUOTED = 60.0  # a snapshot quoted without its RD: above any established bot's (45)
SLOPE_SD = 0.5  # the prior's spread of Lichess Elo per Elo here, about 1
DRAWS = 4000  # simulation draws: the 5th/95th percentiles move by about 1 Elo between seeds
SEED = 20261127


class TimeControl(StrEnum):
    """Lichess's rating pools that the anchors are rated in."""

    BLITZ = "blitz"
    RAPID = "rapid"
    CLASSICAL = "classical"


class Placement(StrEnum):
    """Where a run falls against the band the anchors cover."""

    INSIDE = "inside"  # a Lichess figure with its interval
    BELOW = "below"  # below the weakest anchor's level
    ABOVE = "above"  # above the strongest anchor's level
    UNPLACED = "unplaced"  # a bound the band straddles, or no estimate


@dataclass(frozen=True)
class Anchor:
    """One bot in one time control: its net's reading and its rating."""

    bot: str  # the Lichess account ('maia1')
    net: int  # the Maia-1 net it runs
    rating: float  # its Lichess rating in the snapshot
    rd: float  # the snapshot's rating deviation (RD_UNQUOTED where none was quoted)
    date: str  # when the snapshot was read
    reading: float  # the net's game Elo on the reference ladder
    reading_sd: float  # its standard error, the ladder's own included

    @property
    def human_sd(self) -> float:
        """The rating's spread as a measure of the net's human strength."""
        return math.sqrt(self.rd ** 2 + DRIFT_SD ** 2 + BOOK_SD ** 2)


@dataclass(frozen=True)
class Crosswalk:
    """The reference scale to one Lichess time control."""

    time_control: TimeControl
    anchors: tuple[Anchor, ...]  # by reading, weakest first

    @property
    def band(self) -> tuple[float, float]:
        """The readings the anchors cover: the weakest's minus its 90% error to the
        strongest's plus its error."""
        low, high = self.anchors[0], self.anchors[-1]
        return low.reading - Z90 * low.reading_sd, high.reading + Z90 * high.reading_sd

    @property
    def snapshot(self) -> str:
        """The snapshots' dates."""
        return ", ".join(sorted({a.date for a in self.anchors}))

    def predict(self, elo: float, sd: float) -> tuple[float, float, float]:
        """The Lichess rating of a reading `elo` (sd `sd`): median, 5th and 95th percentile."""
        rng = np.random.default_rng(SEED)
        x = np.array([a.reading for a in self.anchors])
        y = np.array([a.rating for a in self.anchors])
        xs = x + rng.standard_normal((DRAWS, len(x))) * [a.reading_sd for a in self.anchors]
        ys = y + rng.standard_normal((DRAWS, len(y))) * [a.human_sd for a in self.anchors]
        run = elo + rng.standard_normal(DRAWS) * sd
        xc = xs - xs.mean(axis=1, keepdims=True)
        # The slope: the anchors' least squares, drawn toward a slope from the prior (one Elo
        # is one Elo on both scales, give or take SLOPE_SD) by the weight the anchors' own
        # spread leaves it. Three anchors a hundred or so Elo apart cannot fix it alone.
        prior = 1.0 + rng.standard_normal(DRAWS) * SLOPE_SD
        weight = np.mean([a.human_sd for a in self.anchors]) ** 2 / SLOPE_SD ** 2
        slope = np.maximum(((xc * (ys - ys.mean(axis=1, keepdims=True))).sum(axis=1)
                            + weight * prior) / ((xc ** 2).sum(axis=1) + weight), 0.0)
        placed = ys.mean(axis=1) + slope * (run - xs.mean(axis=1))
        lo, mid, hi = np.percentile(placed, [5, 50, 95])
        return float(mid), float(lo), float(hi)

    def place(self, elo: dict[str, Any]) -> dict[str, Any]:
        """A run's game Elo (a result's elo block, reference scale) on this time control."""
        low, high = self.band
        weak, strong = self.anchors[0], self.anchors[-1]
        kind = elo.get("kind", INTERVAL)
        placement = Placement.UNPLACED
        if kind == INTERVAL and None not in (elo.get("mean"), elo.get("lo"), elo.get("hi")):
            mean = float(elo["mean"])
            placement = Placement.INSIDE if low <= mean <= high else \
                Placement.BELOW if mean < low else Placement.ABOVE
        elif kind == BELOW and elo.get("hi") is not None and float(elo["hi"]) <= low:
            placement = Placement.BELOW
        elif kind == ABOVE and elo.get("lo") is not None and float(elo["lo"]) >= high:
            placement = Placement.ABOVE
        name = f"Lichess {self.time_control}"
        block: dict[str, Any] = {"time_control": self.time_control.value,
                                 "placement": placement.value, "value": None, "lo": None,
                                 "hi": None, "snapshot": self.snapshot,
                                 "band": [round(low), round(high)],
                                 "anchors": [a.bot for a in self.anchors]}
        if placement == Placement.INSIDE:
            sd = (float(elo["hi"]) - float(elo["lo"])) / (2 * Z90)
            mid, lo, hi = self.predict(float(elo["mean"]), sd)
            block |= {"value": round(mid), "lo": round(lo), "hi": round(hi),
                      "text": f"{name} ~{round(mid):,} [{round(lo):,}, {round(hi):,}]"}
        elif placement == Placement.BELOW:
            block |= {"hi": round(weak.rating), "text": f"below maia-{weak.net}'s level "
                      f"({name} ~{round(weak.rating):,})"}
        elif placement == Placement.ABOVE:
            block |= {"lo": round(strong.rating), "text": f"above maia-{strong.net}'s level "
                      f"({name} ~{round(strong.rating):,})"}
        else:
            block["text"] = f"{name}: not placed (the game Elo does not settle where it " \
                f"falls against the anchors' band, {round(low):,}-{round(high):,})"
        return block


def load_crosswalks(folder: Path = HUMAN_DIR) -> list[Crosswalk]:
    """The crosswalks of the committed anchors and readings in `folder` (none where either
    file is missing); DataError in one line for a file that cannot be read."""
    anchors_path, readings_path = folder / ANCHORS_FILE, folder / READINGS_FILE
    if not (anchors_path.exists() and readings_path.exists()):
        return []
    readings = {}
    for row in _rows(readings_path):
        if row.get("ladder") == REFERENCE_LABEL:
            readings[int(row["net"])] = (float(row["game_elo"]), float(row["game_elo_sd"]))
    found: dict[TimeControl, list[Anchor]] = {}
    for n, row in enumerate(_rows(anchors_path), start=2):
        try:
            net = int(row["net"])
            if net not in readings:
                continue  # its net is not rated on the reference ladder yet
            found.setdefault(TimeControl(row["time_control"]), []).append(Anchor(
                row["bot"], net, float(row["rating"]),
                float(row["rd"]) if row["rd"] else RD_UNQUOTED, row["date"], *readings[net]))
        except (KeyError, ValueError) as exc:
            raise DataError(f"{anchors_path}, line {n}: {exc}") from exc
    return [Crosswalk(tc, tuple(sorted(a, key=lambda x: x.reading)))
            for tc, a in sorted(found.items()) if len(a) >= 2]


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path}: cannot be read ({exc})") from exc


def human_block(elo: dict[str, Any], engine: str, crosswalks: list[Crosswalk],
                ladder_map: LadderMap | None) -> dict[str, Any] | None:
    """A result's `human` block: its standard game Elo on each time control. A run on the
    reference ladder is placed as read; one on a ladder the measured map converts from is
    converted first (its interval widened); any other ladder gets none."""
    if not crosswalks:
        return None
    scale = "reference"
    if not engine.startswith(REFERENCE_ENGINE):
        if ladder_map is None or not engine.startswith(ladder_map.source):
            return None
        elo = ladder_map.convert_elo(elo)
        scale = f"converted from {ladder_map.source}"
    return {"scale": scale, "time_controls": [c.place(elo) for c in crosswalks]}


def human_text(block: dict[str, Any] | None) -> str:
    """The block in one line ('Lichess blitz ~1,450 [1,350, 1,560]; ...'), '' for none."""
    if not block:
        return ""
    places = block["time_controls"]
    if places and all(tc["placement"] == Placement.UNPLACED for tc in places):
        low, high = places[0]["band"]
        return (f"Lichess: not placed (the game Elo does not settle where it falls against the "
                f"anchors' band, {low:,}-{high:,})")
    return "; ".join(tc["text"] for tc in places)


def committed_block(elo: dict[str, Any], engine: str) -> dict[str, Any] | None:
    """human_block with the committed anchors, readings and map."""
    return human_block(elo, engine, load_crosswalks(), load_map(LADDER_MAP))
