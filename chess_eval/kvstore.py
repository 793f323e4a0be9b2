"""A small durable key -> JSON store in SQLite: the checkpoint of long steps."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol

from chess_eval.errors import DataError


class Store(Protocol):
    """What a game needs of its move cache: a JsonStore, or a MemoryStore on a worker."""

    def get(self, key: str) -> Any | None:
        """The stored value, or None."""
        ...

    def put(self, key: str, value: Any) -> None:
        """Store a value."""
        ...

    def commit(self) -> None:
        """Make stored values durable, where the store can."""
        ...


class MemoryStore:
    """Values by key in memory, for one task on a Dask worker: only the client writes files."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}

    def get(self, key: str) -> Any | None:
        """The stored value, or None."""
        return self._values.get(key)

    def put(self, key: str, value: Any) -> None:
        """Store a value for the life of this object."""
        self._values[key] = value

    def commit(self) -> None:
        """Nothing to make durable."""


class JsonStore:
    """Values by key; `put` then `commit` makes them survive a crash (even kill -9).

    Safe to share between threads: one lock serialises every statement. A `lazy` store
    creates its file only with its first value, so a run that stores nothing leaves no file;
    until then it reads the file when another process has made it.
    """

    def __init__(self, path: Path, table: str, lazy: bool = False) -> None:
        self.path = path
        self.table = table
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        if not lazy or path.exists():
            self._connect()

    def _connect(self) -> sqlite3.Connection:
        """The open connection, made (and the file and table with it) on first need."""
        if self._conn is not None:
            return self._conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=60)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} (key TEXT PRIMARY KEY, value TEXT)")
            conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()
        except sqlite3.DatabaseError as exc:
            raise DataError(f"{self.path} is corrupt ({exc}): it only caches finished work, "
                            f"so delete it and run again") from exc
        self._conn = conn
        return conn

    def _reading(self) -> sqlite3.Connection | None:
        """The connection to read through; None while a lazy store has no file to read."""
        if self._conn is None and not self.path.exists():
            return None
        return self._connect()

    @property
    def conn(self) -> sqlite3.Connection:
        """The SQLite connection (made, with the file, if it was not yet)."""
        with self._lock:
            return self._connect()

    def get(self, key: str) -> Any | None:
        """The stored value, or None."""
        with self._lock:
            conn = self._reading()
            row = None if conn is None else conn.execute(
                f"SELECT value FROM {self.table} WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        """Store a value (durable after commit)."""
        text = json.dumps(value, separators=(",", ":"))
        with self._lock:
            self._connect().execute(f"INSERT OR REPLACE INTO {self.table} VALUES (?, ?)",
                                    (key, text))

    def commit(self) -> None:
        """Make stored values durable."""
        with self._lock:
            if self._conn is not None:
                self._conn.commit()

    def values(self) -> list[Any]:
        """Every stored value, in key order."""
        with self._lock:
            conn = self._reading()
            rows = [] if conn is None else conn.execute(
                f"SELECT value FROM {self.table} ORDER BY key").fetchall()
        return [json.loads(r[0]) for r in rows]

    def clear(self) -> None:
        """Remove every value (durable after commit)."""
        with self._lock:
            if (conn := self._reading()) is not None:
                conn.execute(f"DELETE FROM {self.table}")

    def close(self) -> None:
        """Commit and close."""
        with self._lock:
            if self._conn is not None:
                self._conn.commit()
                self._conn.close()
