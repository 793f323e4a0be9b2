"""A small durable key -> JSON store in SQLite: the checkpoint of long steps."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol

from lib.errors import DataError


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

    Safe to share between threads: one lock serialises every statement.
    """

    def __init__(self, path: Path, table: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.table = table
        self._lock = threading.Lock()
        try:
            self.conn = sqlite3.connect(path, check_same_thread=False, timeout=60)
            self.conn.execute(
                f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, value TEXT)")
            self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        except sqlite3.DatabaseError as exc:
            raise DataError(f"{path} is corrupt ({exc}): it only caches finished work, so "
                            f"delete it and run again") from exc

    def get(self, key: str) -> Any | None:
        """The stored value, or None."""
        with self._lock:
            row = self.conn.execute(f"SELECT value FROM {self.table} WHERE key = ?",
                                    (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        """Store a value (durable after commit)."""
        text = json.dumps(value, separators=(",", ":"))
        with self._lock:
            self.conn.execute(f"INSERT OR REPLACE INTO {self.table} VALUES (?, ?)", (key, text))

    def commit(self) -> None:
        """Make stored values durable."""
        with self._lock:
            self.conn.commit()

    def values(self) -> list[Any]:
        """Every stored value, in key order."""
        with self._lock:
            rows = self.conn.execute(
                f"SELECT value FROM {self.table} ORDER BY key").fetchall()
        return [json.loads(r[0]) for r in rows]

    def clear(self) -> None:
        """Remove every value (durable after commit)."""
        with self._lock:
            self.conn.execute(f"DELETE FROM {self.table}")

    def close(self) -> None:
        """Commit and close."""
        with self._lock:
            self.conn.commit()
            self.conn.close()
