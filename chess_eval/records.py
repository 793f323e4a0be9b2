"""Small dataclasses shared between modules."""

from __future__ import annotations

from dataclasses import dataclass, field

import chess
import chess.engine


@dataclass(frozen=True)
class RankedMove:
    """One line of a MultiPV search: the first move and its score from the mover's side."""

    move: chess.Move
    score: chess.engine.Score  # relative to the side to move, python-chess score object


@dataclass(frozen=True)
class Probe:
    """Result of the light engine probe used for tactical/quiet labeling."""

    fen4: str
    lines: tuple[RankedMove, ...]  # best first, at most MultiPV of them


@dataclass
class Counter:
    """Counts of dropped or failed records by reason, reported at the end of a step."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, reason: str, n: int = 1) -> None:
        """Count `n` more records under `reason`."""
        self.counts[reason] = self.counts.get(reason, 0) + n

    def update(self, other: Counter) -> None:
        """Add every count of `other`."""
        for reason, n in other.counts.items():
            self.add(reason, n)

    def total(self) -> int:
        """All counted records."""
        return sum(self.counts.values())
