"""Paired rank draws for static runs on the same questions.

Two static runs on one question set are not independent: a hard position is hard for both.
Drawing each run's Elo from its own normal, as for unrelated runs, overstates the doubt about
their order. Here every draw resamples the same questions for all the runs of a table and
recomputes each run's Elo on that resample (the human-move line, or the first-move
puzzle Elo), so P(A above B) and the rank intervals keep the pairing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from chess_eval.benchmark.question.questions import Question
from chess_eval.benchmark.stats.bootstrap import resample
from chess_eval.benchmark.stats.elo import human_elo_replicates, puzzle_elo_replicates
from chess_eval.grading import CP_LOSS_CAP, score_move

MIN_COMMON = 10  # fewer shared questions than this: no pairing (the normal draws instead)
BOOT = 2000  # paired draws of a table


@dataclass(frozen=True)
class Point:
    """One question as a paired draw needs it."""

    bucket: str  # its Elo bucket: resampling is stratified by it, as the run's interval
    value: float  # the model's loss (human) or 1 when the puzzle was solved (puzzle)
    ref: float  # the human's Elo (human) or the puzzle's rating (puzzle)
    human_loss: float = 0.0  # the human's loss on it (human)


@dataclass(frozen=True)
class PairedPart:
    """What a static run's Elo of one kind is recomputed from on a resample of questions."""

    kind: str  # human or puzzle
    points: tuple[tuple[str, Point], ...]  # by question id


def paired_part(result: dict[str, Any], kind: str,
                questions: dict[str, Question]) -> PairedPart | None:
    """A static run's per-question values behind its `kind` Elo (None without items)."""
    points = []
    for i in result.get("items", []):
        q = questions.get(i["id"])
        if q is None or i.get("category") == "infra":
            continue
        if kind == "human" and q.source == "game" and q.played_move and q.played_elo:
            loss = float(CP_LOSS_CAP if i["cp_loss"] is None else i["cp_loss"])
            human = float(score_move(q.expected, q.played_move).cp_loss)
            points.append((q.id, Point(q.elo_bucket, loss, float(q.played_elo), human)))
        elif kind == "puzzle" and q.source == "puzzle" and q.rating is not None:
            points.append((q.id, Point(q.elo_bucket, float(bool(i["solved"])),
                                       float(q.rating))))
    return PairedPart(kind, tuple(points)) if points else None


def joint_draws(parts: list[PairedPart], seed: int = 0, boot: int = BOOT) -> np.ndarray | None:
    """(boot, runs) Elo draws on shared resamples of the questions every run answered, or
    None when they share too few (or are of different kinds)."""
    if not parts or len({p.kind for p in parts}) != 1:
        return None
    maps = [dict(p.points) for p in parts]
    common = sorted(set.intersection(*(set(m) for m in maps)))
    if len(common) < MIN_COMMON:
        return None
    first = maps[0]
    strata = np.array([first[i].bucket for i in common])
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    idx = resample(np.random.default_rng(seed), groups, boot)
    values = np.array([[m[i].value for i in common] for m in maps])
    refs = np.array([first[i].ref for i in common])
    if parts[0].kind == "human":
        human = np.array([first[i].human_loss for i in common])
        return human_elo_replicates(refs, human, values, idx)
    return puzzle_elo_replicates(refs, values, idx)
