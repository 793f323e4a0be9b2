"""Step 02's work: stream a PGN file, classify each game, store the kept ones, per source."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from chess_eval.files import mb_bar
from chess_eval.records import Counter
from chess_eval.testset import gamesdb
from chess_eval.testset.pgn import GameRecord, classify, iter_games
from chess_eval.testset.sources import RangeReader, read_sources

log = logging.getLogger(__name__)

BATCH = 5000  # rows per executemany: bounded memory, few round trips


@dataclass
class ProcessReport:
    """What step 02 kept and dropped, in all and per source file."""

    kept: int = 0
    drops: Counter = field(default_factory=Counter)
    kept_by_source: dict[str, int] = field(default_factory=dict)
    drops_by_source: dict[str, Counter] = field(default_factory=dict)


def process_pgn(path: Path, conn: sqlite3.Connection) -> ProcessReport:
    """Classify every game of `path` and insert the kept ones into `conn`; drops and kept
    games are counted per source (step 01's ranges of the file, else the file itself)."""
    report = ProcessReport()
    with open(path, "rb") as handle, mb_bar(path, "process games") as bar:
        for source in read_sources(path):
            kept, drops = _process_range(RangeReader(handle, source), conn, bar)
            report.kept += kept
            report.drops.update(drops)
            report.kept_by_source[source.name] = report.kept_by_source.get(source.name, 0) + kept
            report.drops_by_source.setdefault(source.name, Counter()).update(drops)
    conn.executemany("INSERT INTO drops VALUES (?, ?, ?)", [
        (name, reason, n) for name, counts in report.drops_by_source.items()
        for reason, n in sorted(counts.counts.items())])
    conn.executemany("INSERT INTO sources VALUES (?, ?, ?)", [
        (name, i, report.kept_by_source[name])
        for i, name in enumerate(report.drops_by_source)])
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("source", str(path)),
                                                        ("kept", str(report.kept))])
    return report


def _process_range(reader: RangeReader, conn: sqlite3.Connection, bar: tqdm) -> tuple[int, Counter]:
    """Kept count and drops of one source's games (the batch is flushed at its end, so a
    duplicate is counted under the source that repeats a game)."""
    drops = Counter()
    kept = 0
    batch: list[GameRecord] = []
    known: set[str] = set()  # the tokens seen to be SAN in this range's games
    for game in iter_games(reader):
        bar.update(len(game) / (1 << 20))
        reason, record = classify(game, known)
        if record is None:
            drops.add(reason or "unknown")
            continue
        batch.append(record)
        if len(batch) >= BATCH:
            kept += _flush(conn, batch, drops)
    kept += _flush(conn, batch, drops)
    return kept, drops


def _flush(conn: sqlite3.Connection, batch: list[GameRecord], drops: Counter) -> int:
    new = gamesdb.insert(conn, batch)
    if len(batch) > new:
        drops.add("duplicate", len(batch) - new)
    batch.clear()
    return new
