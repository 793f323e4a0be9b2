"""Step 02's work: stream a PGN file, classify each game, store the kept ones."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from lib.files import ProgressReader, mb_bar
from lib.records import Counter
from lib.testset import gamesdb
from lib.testset.pgn import GameRecord, classify, iter_games

log = logging.getLogger(__name__)

BATCH = 5000  # rows per executemany: bounded memory, few round trips


@dataclass
class ProcessReport:
    """What step 02 kept and dropped."""

    kept: int = 0
    drops: Counter = field(default_factory=Counter)


def process_pgn(path: Path, conn: sqlite3.Connection) -> ProcessReport:
    """Classify every game of `path` and insert the kept ones into `conn`."""
    report = ProcessReport()
    batch: list[GameRecord] = []
    with open(path, encoding="utf-8", errors="replace") as handle, \
            mb_bar(path, "process games") as bar:
        for game in iter_games(ProgressReader(handle, bar)):
            reason, record = classify(game)
            if record is None:
                report.drops.add(reason or "unknown")
                continue
            batch.append(record)
            if len(batch) >= BATCH:
                _flush(conn, batch, report)
        _flush(conn, batch, report)
    conn.executemany("INSERT INTO drops VALUES (?, ?)", sorted(report.drops.counts.items()))
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("source", str(path)),
                                                        ("kept", str(report.kept))])
    return report


def _flush(conn: sqlite3.Connection, batch: list[GameRecord], report: ProcessReport) -> None:
    new = gamesdb.insert(conn, batch)
    report.kept += new
    if len(batch) > new:
        report.drops.add("duplicate", len(batch) - new)
    batch.clear()
