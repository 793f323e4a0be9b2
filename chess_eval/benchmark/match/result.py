"""A match's result: one frozen record, serialised here and nowhere else."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.header import Kind, write_result


@dataclass(frozen=True)
class MatchResult:
    """What a match measured, in the order the JSON file lists it."""

    first: dict[str, Any]  # --model: its label, player id and usage (None for a baseline)
    second: dict[str, Any]  # --opponent: the same
    settings: dict[str, Any]  # everything that changes the games (also in the file name)
    games: int  # games in complete pairs (those the score counts)
    aborted: int  # games aborted for infrastructure reasons (unrated: a rerun plays them)
    complete: bool  # stopped by its stop rule, no game aborted
    stopped: str | None  # why it stopped before its stop rule (a budget, the breaker)
    pairs: int  # complete pairs
    pentanomial: list[int]  # the pairs by the first player's total: 0, 0.5, 1, 1.5, 2
    wdl: list[int]  # the first player's wins, draws and losses in the complete pairs
    score: dict[str, Any] | None  # the first player's score with its 90% interval
    elo_difference: dict[str, Any] | None  # the BTD reading of the pairs (arena.ladder_check)
    ladder_check: dict[str, Any] | None = None  # the ladder's prediction and the refit
    ladder_check_missing: str | None = None  # why there is no ladder check

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)

    def why_incomplete(self) -> str | None:
        """Why the result is incomplete and how to complete it (None: complete)."""
        if self.stopped:
            return f"{self.stopped}: the same command resumes the match"
        if self.aborted:
            return (f"incomplete: {self.aborted} games were aborted for infrastructure "
                    "reasons and their pairs are not counted; run the same command again to "
                    "play them")
        return None

    def write(self, path: Path) -> None:
        """The result JSON behind its header, written atomically."""
        write_result(path, Kind.MATCH, self.as_dict(), None if self.complete else
                     self.stopped or f"{self.aborted} games aborted for infrastructure reasons")
