"""A world-model run's result: one frozen record, serialised here and nowhere else."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class WorldModelResult:
    """What the three tests measured, in the order the JSON file lists it."""

    model: str  # as given by --model
    player: str  # the player's id at the tests' temperature
    questions: str  # the questions file's path as given
    questions_sha256: str  # its digest
    positions: int  # positions in the seeded sample
    settings: dict[str, Any]  # sample, seed, temperatures, token limit, templates
    self_consistency: dict[str, Any]  # prompt A's list against the board, B against A
    symmetry: dict[str, Any]  # each position against its mirror, paired
    temperature: dict[str, Any]  # the illegal rate per temperature and the trend test
    t0: dict[str, Any]  # the single-move answers at T = 0: illegal rate and taxonomy
    score: dict[str, Any]  # the world-model rubric, with its thresholds
    hypothesis: dict[str, Any]  # H0 pattern matching: the test and the power reached
    infra: int  # requests that failed for infrastructure reasons
    complete: bool  # no request failed
    figure: str | None = None  # the breakdown figure's file name, once written
    usage: dict[str, Any] | None = None  # tokens, requests and cost: in all, per answer
    stopped: str | None = None  # why the run stopped before asking everything (--max-cost)

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)

    def why_incomplete(self) -> str | None:
        """Why the result is incomplete and how to complete it (None: complete)."""
        if self.stopped:
            return f"{self.stopped}: the requests it left are asked by the same command"
        if not self.complete:
            return (f"incomplete: {self.infra} requests failed for infrastructure reasons; "
                    "run the same command again to ask only those")
        return None
