"""The anchors: the Maia bots' Lichess ratings per time control (a dated snapshot with its RD,
or a quoted figure without one: data/human/lichess_anchors.csv; a newer snapshot is a new row,
not new code) and their nets' game Elos on the reference ladder (the net alone through the
served path, refitted from its committed games: data/human/maia_players.csv)."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from chess_eval.benchmark.core.data import DATA, REFERENCE_LADDER, ladder_label
from chess_eval.benchmark.human.reading import Reading
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


class TimeControl(StrEnum):
    """Lichess's rating pools that the anchors are rated in, fastest first."""

    BLITZ = "blitz"
    RAPID = "rapid"
    CLASSICAL = "classical"


ORDER = list(TimeControl)  # the order every table shows them in


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


def read_anchors(folder: Path = HUMAN_DIR) -> dict[TimeControl, list[Anchor]]:
    """The committed anchors in `folder` per time control (none where either file is
    missing; a net not rated on the reference ladder yet is left out). DataError in one line
    for a file or a row that cannot be read."""
    anchors_path, readings_path = folder / ANCHORS_FILE, folder / READINGS_FILE
    if not (anchors_path.exists() and readings_path.exists()):
        return {}
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
                continue
            found.setdefault(TimeControl(row["time_control"]), []).append(Anchor(
                row["bot"], net, float(row["rating"]),
                float(row["rd"]) if row["rd"] else RD_UNQUOTED, row["date"], readings[net],
                quoted=not row["rd"]))
        except (KeyError, ValueError) as exc:
            raise DataError(f"{anchors_path}, line {n}: {exc}") from exc
    return found


def _reading(row: dict[str, str]) -> Reading:
    """A net's reading from its table row (its ladder part, weights and games where given)."""
    sd = float(row["game_elo_sd"])
    ladder_sd = float(row.get("game_elo_ladder_sd") or 0.0)
    weights = tuple(float(w) for w in (row.get("ladder_weights") or "").split())
    games = int(row["games"]) if row.get("games") else None
    return Reading(float(row["game_elo"]), math.sqrt(max(sd ** 2 - ladder_sd ** 2, 0.0)),
                   ladder_sd, weights, games)


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path}: cannot be read ({exc})") from exc
