"""Move grading against an all-moves evaluation: cp loss, win chance, accuracy, grade."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from chess_eval.engine import MATE_CP

CP_LOSS_CAP = 1000  # cp loss counts at most this much (a blunder is a blunder)
WIN_CP_CLIP = 1000  # evaluations are clipped to +-this before the win-chance curve
# Lichess's logistic: win% = 50 + 50 (2 / (1 + exp(-K cp)) - 1).
WIN_K = 0.00368208


class Grade(StrEnum):
    """The grade, Excellent to Blunder, of a move by its cp loss."""

    EXCELLENT = "Excellent"
    GOOD = "Good"
    INACCURACY = "Inaccuracy"
    MISTAKE = "Mistake"
    BLUNDER = "Blunder"


# The five grades Excellent to Blunder by cp loss: upper bounds, inclusive; anything worse is
# a blunder.
GRADES = ((Grade.EXCELLENT, 10), (Grade.GOOD, 30), (Grade.INACCURACY, 60), (Grade.MISTAKE, 100))
ALL_GRADES = tuple(Grade)
PUZZLE_TOLERANCE = 10  # a puzzle also counts as solved by a move this close to the best (cp)
MATE_FLOOR = MATE_CP - 100 * 150  # scores this large are forced mates (mate in <= 150)


def win_percent(cp: int) -> float:
    """Lichess's winning chances (0-100) of an evaluation from the mover's side."""
    clipped = max(-WIN_CP_CLIP, min(WIN_CP_CLIP, cp))
    return 50 + 50 * (2 / (1 + math.exp(-WIN_K * clipped)) - 1)


def accuracy(win_loss: float) -> float:
    """Lichess's move accuracy (0-100) from the drop in winning chances."""
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * win_loss) - 3.1669))


def grade(cp_loss: int) -> Grade:
    """Excellent <= 10, Good <= 30, Inaccuracy <= 60, Mistake <= 100, else Blunder."""
    for name, bound in GRADES:
        if cp_loss <= bound:
            return name
    return Grade.BLUNDER


@dataclass(frozen=True)
class MoveScore:
    """How good one legal move is, against the best move of the position."""

    cp: int  # the move's evaluation, side to move
    cp_loss: int  # best minus this move, capped at CP_LOSS_CAP
    win_loss: float  # drop in Lichess winning chances, percentage points
    accuracy: float  # Lichess move accuracy, 0-100
    grade: str
    best: bool  # as good as the best move (ties count)


def score_move(expected: dict[str, int], uci: str) -> MoveScore:
    """Grade a legal move (in `expected`, the all-moves evaluation) against the best one."""
    best = max(expected.values())
    cp = expected[uci]
    cp_loss = min(best - cp, CP_LOSS_CAP)
    win_loss = max(0.0, win_percent(best) - win_percent(cp))
    return MoveScore(cp=cp, cp_loss=cp_loss, win_loss=win_loss, accuracy=accuracy(win_loss),
                     grade=grade(cp_loss), best=cp == best)


def puzzle_solved(expected: dict[str, int], uci: str, solution: str, is_mate: bool) -> bool:
    """The solution's first move, any mating move of a mate puzzle, or a move within
    PUZZLE_TOLERANCE cp of the best."""
    if uci == solution.split()[0]:
        return True
    cp = expected.get(uci)
    if cp is None:
        return False
    if is_mate and cp >= MATE_FLOOR:
        return True
    return max(expected.values()) - cp <= PUZZLE_TOLERANCE


class Judgement(StrEnum):
    """Lichess's mark of a move in a game, by how much it lowers the mover's winning chances."""

    INACCURACY = "inaccuracy"
    MISTAKE = "mistake"
    BLUNDER = "blunder"


# Lichess's thresholds (lila's Advice.scala): a drop in winning chances, on its -1..1 scale,
# of at least 0.3, 0.2, 0.1; on the win% scale (0-100, 50 points per unit) 15, 10 and 5.
JUDGEMENTS = ((Judgement.BLUNDER, 15.0), (Judgement.MISTAKE, 10.0),
              (Judgement.INACCURACY, 5.0))


def judgement(win_loss: float) -> Judgement | None:
    """The mark of a move that lowers the mover's win% by `win_loss` points (None: none)."""
    return next((name for name, bound in JUDGEMENTS if win_loss >= bound), None)


@dataclass(frozen=True)
class MoveNote:
    """One move of a game read off the judge's evals."""

    white: bool  # White made it
    win: float  # White's win% after it
    win_loss: float  # how far it lowered the mover's win% (points, >= 0)
    accuracy: float  # Lichess's move-accuracy formula on that drop, 0-100
    mark: Judgement | None


def game_notes(evals: list[int], white_first: bool) -> list[MoveNote]:
    """Every move's note from the evals (cp for White) of the positions before and after
    it: evals[0] the start, evals[i + 1] after move i."""
    notes = []
    for i, (before, after) in enumerate(zip(evals, evals[1:], strict=False)):
        white = (i % 2 == 0) == white_first
        sign = 1 if white else -1
        loss = max(0.0, win_percent(sign * before) - win_percent(sign * after))
        notes.append(MoveNote(white, win_percent(after), loss, accuracy(loss),
                              judgement(loss)))
    return notes
