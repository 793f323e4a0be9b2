"""An adaptive puzzle run's result: one frozen record, serialised here and nowhere else."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class PuzzlesResult:
    """What a puzzle run measured, in the order the JSON file lists it."""

    model: str  # as given by --model
    player: str  # the player's id with every option that changes its moves
    settings: dict[str, Any]  # puzzle file and digest, target, cap, seed, prompt, rules' version
    complete: bool  # no puzzle was left unplayed for infrastructure reasons
    infra: int  # puzzles whose line failed for infrastructure reasons (asked again on a rerun)
    n: int  # puzzles played
    solved: int  # by the solution's line or any mate
    alternative: int  # credited moves off the key (engine-confirmed)
    failed: int
    mates_off_key: int  # mates that were not the solution's move
    bad_puzzles: list[str]  # ids of the puzzles left out: their line was not playable
    illegal: dict[str, int]  # illegal answers by category
    elo: dict[str, Any] | None  # the puzzle Elo, alternatives credited
    elo_lichess_rule: dict[str, Any] | None  # the same, alternatives counted as failures
    themes: dict[str, int]  # the 15 most played motifs
    sequence: list[dict[str, Any]]  # each puzzle in turn with the posterior after it
    lines: list[dict[str, Any]]  # every line as played
    rules: str  # what counted as solved, in words
    usage: dict[str, Any] | None = None  # tokens, requests and cost: in all, per answer
    stopped: str | None = None  # why the run stopped before its stop rule (--max-cost)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)

    def why_incomplete(self) -> str | None:
        """Why the result is incomplete and how to complete it (None: complete)."""
        if self.stopped:
            return self.stopped
        if not self.complete:
            return (f"incomplete: {self.infra} puzzles failed for infrastructure reasons and "
                    "are left out of the estimate; run the same command again to play them")
        return None
