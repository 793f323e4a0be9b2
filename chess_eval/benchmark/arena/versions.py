"""A ladder's versions: every fit of its rungs that was ever committed, numbered in order.

A refit (more calibration games) moves the rungs' Elos and shrinks their covariance, so a
game Elo rated on one fit is not exactly the number the next would give. A play result
records the SHA-256 of the ladder file it was rated on (`settings.ladder_sha256`); this
registry, `ladder_versions.csv` beside the ladder, turns that digest into "version N", so a
result rated on an earlier fit still reads and says which fit it used, and that the ladder
was refitted since. `benchmark.py calibrate` appends a row whenever it writes a ladder whose
digest is not listed yet; the rows before it were read off the repository's history.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chess_eval.benchmark.arena.ladder import ladder_for
from chess_eval.errors import DataError
from chess_eval.files import sha256_file, write_csv

VERSION_FIELDS = ["version", "ladder_sha256", "games"]


@dataclass(frozen=True)
class LadderVersion:
    """One committed fit of a ladder."""

    number: int  # 1, 2, ...: in the order the fits were made
    sha256: str  # the ladder file's SHA-256: what a play result records
    games: int  # the calibration games it was fitted on (each counted once)
    latest: int  # the registry's newest version number: this one is current when equal

    @property
    def current(self) -> bool:
        """Whether no later fit of this ladder exists."""
        return self.number == self.latest

    def text(self) -> str:
        """'version 8 (41,800 games)', with ', refitted since as version 9' when superseded."""
        since = "" if self.current else f"; refitted since as version {self.latest}"
        return f"version {self.number} ({self.games:,} games{since})"


def versions_path(ladder: Path) -> Path:
    """Where the versions of the ladder at `ladder` are listed: NAME_versions.csv beside it."""
    return ladder.with_name(f"{ladder.stem}_versions.csv")


def read_versions(ladder: Path) -> list[LadderVersion]:
    """The ladder's versions, oldest first ([] where no registry is beside it)."""
    path = versions_path(ladder)
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    try:
        numbered = [(int(r["version"]), r["ladder_sha256"], int(r["games"])) for r in rows]
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path}: expected columns {VERSION_FIELDS} with whole numbers") from exc
    if [n for n, _, _ in numbered] != list(range(1, len(numbered) + 1)):
        raise DataError(f"{path}: versions must be numbered 1, 2, ... in order")
    return [LadderVersion(n, sha, games, len(numbered)) for n, sha, games in numbered]


def version_of(ladder: Path, sha256: str | None) -> LadderVersion | None:
    """The version of the ladder at `ladder` whose file had this digest (None: not listed)."""
    found = [v for v in read_versions(ladder) if v.sha256 == sha256]
    return found[-1] if found else None


def record_version(ladder: Path, games: int) -> Path | None:
    """Append the ladder file's current fit to its registry unless it is listed already;
    the registry's path when a row was added."""
    sha = sha256_file(ladder)
    known = read_versions(ladder)
    if any(v.sha256 == sha for v in known):
        return None
    rows = [{"version": v.number, "ladder_sha256": v.sha256, "games": v.games} for v in known]
    rows.append({"version": len(known) + 1, "ladder_sha256": sha, "games": games})
    write_csv(versions_path(ladder), VERSION_FIELDS, rows)
    return versions_path(ladder)


def describe(ladder: Path, sha256: str | None) -> str:
    """How a result's ladder digest reads: its version, or that it is not a listed fit."""
    version = version_of(ladder, sha256)
    if version is not None:
        return version.text()
    return f"a fit not listed in {versions_path(ladder).name} ({(sha256 or 'unknown')[:12]})"


def ladder_version_text(result: dict[str, Any]) -> str:
    """Which fit of its ladder a play result was rated on, as the ladder's registry reads
    its digest now ('version 7 (28,326 games; refitted since as version 8)')."""
    return describe(ladder_for(result["ladder"]["engine"]),
                    result.get("settings", {}).get("ladder_sha256"))
