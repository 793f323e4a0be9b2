"""A SQLite cache of engine probes, so an interrupted selection resumes without re-probing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import chess
import chess.engine

from lib.records import Probe, RankedMove


def score_text(score: chess.engine.Score) -> str:
    """'cp:N' or 'mate:N', a lossless text form of a relative score."""
    mate = score.mate()
    return f"mate:{mate}" if mate is not None else f"cp:{score.score()}"


def parse_score(text: str) -> chess.engine.Score:
    """Inverse of score_text."""
    kind, value = text.split(":")
    return chess.engine.Mate(int(value)) if kind == "mate" else chess.engine.Cp(int(value))


class ProbeCache:
    """Probes keyed by engine, search setting and full FEN; committed by the caller."""

    def __init__(self, path: Path, engine_key: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path)
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS probes (key TEXT PRIMARY KEY, fen4 TEXT, lines TEXT)"
        )
        self.engine_key = engine_key
        self.hits = 0

    def _key(self, fen: str) -> str:
        return f"{self.engine_key}|{fen}"

    def get(self, fen: str) -> Probe | None:
        """The cached probe of a full FEN, if any."""
        row = self.conn.execute(
            "SELECT fen4, lines FROM probes WHERE key = ?", (self._key(fen),)
        ).fetchone()
        if row is None:
            return None
        self.hits += 1
        lines = tuple(RankedMove(chess.Move.from_uci(uci), parse_score(score))
                      for uci, score in json.loads(row[1]))
        return Probe(fen4=row[0], lines=lines)

    def put(self, fen: str, probe: Probe) -> None:
        """Store a probe (visible to others after commit)."""
        lines = [(line.move.uci(), score_text(line.score)) for line in probe.lines]
        self.conn.execute("INSERT OR REPLACE INTO probes VALUES (?, ?, ?)",
                          (self._key(fen), probe.fen4, json.dumps(lines)))

    def commit(self) -> None:
        """Make stored probes durable."""
        self.conn.commit()

    def close(self) -> None:
        """Commit and close."""
        self.conn.commit()
        self.conn.close()
