"""A cache of engine probes, so an interrupted selection resumes without re-probing."""

from __future__ import annotations

from pathlib import Path

import chess
import chess.engine

from chess_eval.kvstore import JsonStore
from chess_eval.records import Probe, RankedMove


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
        self.store = JsonStore(path, "probes")
        self.engine_key = engine_key

    def _key(self, fen: str) -> str:
        return f"{self.engine_key}|{fen}"

    def get(self, fen: str) -> Probe | None:
        """The cached probe of a full FEN, if any."""
        value = self.store.get(self._key(fen))
        if value is None:
            return None
        lines = tuple(RankedMove(chess.Move.from_uci(uci), parse_score(score))
                      for uci, score in value["lines"])
        return Probe(fen4=value["fen4"], lines=lines)

    def put(self, fen: str, probe: Probe) -> None:
        """Store a probe (durable after commit)."""
        lines = [(line.move.uci(), score_text(line.score)) for line in probe.lines]
        self.store.put(self._key(fen), {"fen4": probe.fen4, "lines": lines})

    def commit(self) -> None:
        """Make stored probes durable."""
        self.store.commit()

    def close(self) -> None:
        """Commit and close."""
        self.store.close()
