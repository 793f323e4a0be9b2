"""A `play` session's result: one frozen record per run, serialised here and nowhere else."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class GamesResult:
    """What a session measured, in the order the JSON file lists it."""

    model: str  # as given by --model
    player: str  # the player's id with every option that changes its moves
    prompt: str  # the game prompt's name@version (+legal when the moves are listed)
    legal_moves: bool  # the prompt listed the legal moves
    illegal_retries: int  # illegal answers retried before a forfeit
    settings: dict[str, Any]  # everything that changes the games (also in the file name)
    # The rungs played against: names, Elos, nu, engine, the adjudication rule's version
    # (its games and the ladder's were judged alike), a note.
    ladder: dict[str, Any]
    judge: str  # the adjudicating engine's search per position (the rule's)
    complete: bool  # no game was aborted for infrastructure reasons
    conditions: dict[str, Any]  # per start condition: Elo, games, W/D/L, rungs, forfeits
    comparisons: list[dict[str, Any]]  # condition against condition, Bonferroni
    taxonomy: dict[str, Any]  # every answer's category
    acpl: dict[str, Any]  # the player's cp loss in its games, by the judge
    usage: dict[str, Any]  # tokens, requests, tool calls and cost: in all, per move, per game
    questions_sha256: str | None  # the questions file of mid-game starts (None: no midgame)
    protocol: str = "fen"  # how the model was asked (model.protocols)
    stopped: str | None = None  # why the run stopped before its stop rule (--max-cost)
    # The standard game Elo on Lichess's scale per time control, where the crosswalk's anchors
    # place it (benchmark.human); None on a ladder outside the reference scale or with no anchors.
    human: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)

    def why_incomplete(self) -> str | None:
        """Why the result is incomplete and how to complete it (None: complete)."""
        if self.stopped:
            return self.stopped
        if not self.complete:
            return ("some games were aborted for infrastructure reasons and are not rated; "
                    "run the same command again to play them")
        return None
