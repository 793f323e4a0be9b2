"""The SQLite store of kept games (output/games.db)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from chess_eval.errors import DataError
from chess_eval.testset.pgn import GameRecord

SCHEMA = """
CREATE TABLE games (
    id TEXT PRIMARY KEY,       -- Lichess game id, or 'sha-' + a hash of the game's content
    site TEXT,                 -- game URL ('' when the source names none)
    white TEXT,                -- player names
    black TEXT,
    white_elo INTEGER,
    black_elo INTEGER,
    avg_elo REAL,
    elo_bucket TEXT,           -- bucket label of avg_elo, as in chess_eval.tree
    time_control TEXT,         -- TimeControl tag, e.g. 300+3
    tc_class TEXT,             -- blitz, rapid or classical
    eco TEXT,
    opening TEXT,
    result TEXT,
    termination TEXT,
    ply_count INTEGER,
    movetext TEXT              -- SAN moves separated by spaces; no comments, numbers or NAGs
);
CREATE INDEX games_bucket ON games (elo_bucket);
-- Dropped games per source file (games_sources.json's names) and reason.
CREATE TABLE drops (source TEXT NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL,
                    PRIMARY KEY (source, reason));
-- Each source file in the order read, and the games kept from it.
CREATE TABLE sources (source TEXT PRIMARY KEY, position INTEGER NOT NULL, kept INTEGER NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
COLUMNS = list(GameRecord._fields)
INSERT = f"INSERT OR IGNORE INTO games VALUES ({', '.join('?' * len(COLUMNS))})"


def create(path: Path) -> sqlite3.Connection:
    """A new, empty games database at `path` (which must not exist)."""
    conn = sqlite3.connect(path)
    # The file is built under a temporary name and renamed, so durability per insert
    # buys nothing: a crash just means the step runs again.
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.executescript(SCHEMA)
    return conn


def insert(conn: sqlite3.Connection, records: Iterable[GameRecord]) -> int:
    """Insert records, ignoring ids already stored; returns how many were new."""
    before = conn.total_changes
    conn.executemany(INSERT, records)
    return conn.total_changes - before


def open_existing(path: Path) -> sqlite3.Connection:
    """Open a finished games database read-only, with a clear error when it is missing."""
    if not path.is_file():
        raise DataError(f"{path} does not exist: run step 02 (python generate.py --only 2)")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute("SELECT id, white, black, movetext FROM games LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise DataError(f"{path} is corrupt or from an older version ({exc}): delete it and "
                        "run step 02 again (python generate.py --from 2)") from exc
    return conn
