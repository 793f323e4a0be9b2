"""The committed puzzle pool (`benchmark.py puzzle-pool`): a stratified sample of a Lichess
puzzle file, small enough to commit, that `puzzles` reads when no other file is named.

The source's rows are grouped into rating bands of BAND Elo (everything below LOWEST one band,
everything from HIGHEST up one band), so a run finds puzzles near any rating from the foot of
Lichess's scale to the top. Each band keeps the same number of puzzles; within a band, each
phase (opening, middlegame, endgame) keeps its share of the band's rows (largest remainder);
within a band and phase, the puzzles are taken round-robin over their motifs (the themes
that name a tactic), each motif's in the order of a hash of their ids. Nothing depends on the
source's row order or on a random draw: the same rows give the same pool, byte for byte.
The rows are written verbatim under the source's header, sorted by id, as zstd.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import zstandard

from chess_eval.errors import DataError
from chess_eval.files import atomic_write
from chess_eval.puzzledb import motifs, read_rows

BAND = 100  # Elo width of a rating band
LOWEST = 500  # ... every puzzle rated below it is one band (the sample's foot is 399)
HIGHEST = 3000  # ... and every puzzle rated from it up another (its top is 3308)
PER_BAND = 150  # puzzles each band keeps
PHASES = ("opening", "middlegame", "endgame")  # the database tags each puzzle with one
LEVEL = 19  # zstd level: the pool is written once and read often
SOURCE = "../shared/data/lichess/puzzles/lichess_db_puzzle.sample44k.csv.zst"  # as built


def band(rating: int) -> int:
    """The foot of a rating's band."""
    return min(max(rating // BAND * BAND, LOWEST - BAND), HIGHEST)


def bands() -> list[int]:
    """The foot of every band, lowest first."""
    return list(range(LOWEST - BAND, HIGHEST + 1, BAND))


def phase(themes: list[str]) -> str:
    """The puzzle's phase tag ('' for none)."""
    return next((t for t in themes if t in PHASES), "")


def _key(puzzle_id: str) -> bytes:
    """A puzzle's place in its motif's order: a hash of its id, not the file's order."""
    return hashlib.sha256(puzzle_id.encode()).digest()


def shares(counts: dict[str, int], total: int) -> dict[str, int]:
    """`total` split over the groups in proportion to `counts` (largest remainder; ties by
    name), never more than a group has; what a group lacks goes to the others the same way."""
    take = dict.fromkeys(counts, 0)
    left = min(total, sum(counts.values()))
    while left:
        room = {g: counts[g] - take[g] for g in counts if counts[g] > take[g]}
        whole = sum(room.values())
        exact = {g: left * n / whole for g, n in room.items()}
        add = {g: min(room[g], int(x)) for g, x in exact.items()}
        rest = left - sum(add.values())
        for g in sorted(room, key=lambda g: (-(exact[g] - int(exact[g])), g)):
            if rest and add[g] < room[g]:
                add[g], rest = add[g] + 1, rest - 1
        for g, n in add.items():
            take[g] += n
        left -= sum(add.values())
    return take


def _round_robin(rows: list[list[str]], n: int) -> list[list[str]]:
    """The first `n` rows taken in turn from each motif set, each set's in hash order."""
    groups: dict[tuple[str, ...], list[list[str]]] = defaultdict(list)
    for row in rows:
        groups[tuple(sorted(motifs(row[7].split())))].append(row)
    ranked = []
    for members in groups.values():
        members.sort(key=lambda r: _key(r[0]))
        ranked += [(rank, _key(r[0]), r) for rank, r in enumerate(members)]
    ranked.sort(key=lambda x: (x[0], x[1]))
    return [r for _, _, r in ranked[:n]]


def stratified(rows: list[list[str]], per_band: int = PER_BAND) -> list[list[str]]:
    """The pool of well-formed puzzle rows (see the module docstring), sorted by id."""
    by_stratum: dict[tuple[int, str], list[list[str]]] = defaultdict(list)
    seen: set[str] = set()
    for row in rows:
        if row[0] not in seen:  # a puzzle listed twice counts once
            seen.add(row[0])
            by_stratum[(band(int(row[3])), phase(row[7].split()))].append(row)
    chosen: list[list[str]] = []
    for foot in bands():
        counts = {p: len(by_stratum[(foot, p)]) for p in (*PHASES, "")
                  if by_stratum.get((foot, p))}
        for p, n in shares(counts, per_band).items():
            chosen += _round_robin(by_stratum[(foot, p)], n)
    return sorted(chosen, key=lambda r: r[0])


def pool_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    """The pool file's bytes: the CSV under `header`, zstd-compressed."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return zstandard.ZstdCompressor(level=LEVEL).compress(text.getvalue().encode())


@dataclass(frozen=True)
class Built:
    """What a build wrote."""

    path: Path
    size: int  # bytes written
    per_band: dict[int, int]  # puzzles of each band, by its foot
    phases: dict[str, int]  # puzzles of each phase
    source_rows: int  # the source's well-formed rows
    malformed: int  # ... and its malformed ones


def build_pool(source: Path, out: Path, per_band: int = PER_BAND) -> Built:
    """Read `source`, write its stratified pool to `out` (atomically)."""
    if not source.is_file():
        raise DataError(f"--source: {source} does not exist (a Lichess puzzle CSV or "
                        ".csv.zst, e.g. https://database.lichess.org/#puzzles)")
    header, rows, bad = read_rows(source)
    pool = stratified(rows, per_band)
    if not pool:
        raise DataError(f"{source}: no well-formed puzzle")
    data = pool_bytes(header, pool)
    try:
        with atomic_write(out, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise DataError(f"--out: cannot write {out} ({exc})") from exc
    counts = Counter(band(int(r[3])) for r in pool)
    return Built(out, len(data), {b: counts[b] for b in bands()},
                 dict(Counter(phase(r[7].split()) or "none" for r in pool)), len(rows), bad)
