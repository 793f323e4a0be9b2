"""A static run's result: one frozen record per run, serialised here and nowhere else (the
header every result file begins with is core/header.py's)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.header import Kind, write_result
from chess_eval.benchmark.core.scoring import Item


@dataclass(frozen=True)
class StaticResult:
    """Everything a static run measured, in the order the JSON file lists it."""

    model: str  # as given by --model
    player: str  # the player's id: the model with every option that changes its answers
    prompt: str  # the prompt template, name@version
    questions: str  # the questions file's path as given
    questions_sha256: str  # its digest: runs are compared only on the same file
    split: str  # public, private or all
    filters: list[str]  # --filter KEY=VALUE, as given
    limit: int | None  # --limit: a seeded sample of this many questions
    seed: int  # seed of the sample, the random player, the bootstrap and MCMC
    settings: dict[str, Any]  # everything that changes the answers or the selection
    complete: bool  # no question failed for infrastructure reasons
    n: int  # questions scored (neither infra nor truncated)
    asked: int  # questions asked
    legal_rate: float | None  # point values of the summary metrics (intervals below)
    acpl: float | None
    accuracy: float | None
    best_move_rate: float | None
    puzzle_solve_rate: float | None
    illegal: dict[str, int]  # illegal answers by category
    infra: int  # infrastructure failures (not scored)
    truncated: int  # answers cut by the token limit (each a failed answer)
    empty: int  # empty replies or ones a content filter withheld (each a failed answer)
    max_tokens: int | None  # the token limit (None for a baseline player)
    elo: dict[str, Any]  # puzzle, human-move and predicted game Elo
    # The world-model tests' first part alone: the illegal rate with its 90% interval and what
    # it rests on; no score (the consistency tests are `benchmark.py worldmodel`'s).
    world_model: dict[str, Any]
    floor: dict[str, Any]  # a random mover's figures on the same questions
    intervals: dict[str, Any]  # every metric with its 90% interval
    by: dict[str, Any]  # the metrics within each stratum
    items: list[Item]  # every question's outcome
    protocol: str = "fen"  # how the model was asked: fen, blind or pgn (model.protocols)
    usage: dict[str, Any] | None = None  # tokens, requests and cost: in all and per answer
    stopped: str | None = None  # why the run stopped before its last question (--max-cost)

    def as_dict(self) -> dict[str, Any]:
        """JSON form (items as dicts)."""
        return asdict(self)

    def why_incomplete(self) -> str | None:
        """Why the result is incomplete and how to complete it (None: complete)."""
        if self.stopped:
            return f"{self.stopped}: {self.asked} questions answered"
        if not self.complete:
            return (f"incomplete: {self.infra} of {self.asked} questions failed for "
                    "infrastructure reasons; the result is marked incomplete and left off the "
                    "leaderboard; run the same command again to ask only those")
        return None

    def write(self, path: Path) -> None:
        """The results JSON behind its header, written atomically."""
        write_result(path, Kind.STATIC, self.as_dict(),
                     None if self.complete else self.stopped or f"{self.infra} questions "
                     "failed for infrastructure reasons")

