"""Move grading: Lichess's win chances and accuracy, the five grades Excellent
to Blunder, puzzle solving."""

import pytest

from chess_eval.engine import MATE_CP
from chess_eval.grading import (
    Judgement,
    accuracy,
    game_notes,
    grade,
    judgement,
    puzzle_solved,
    score_move,
    win_percent,
)


def test_win_percent_curve() -> None:
    assert win_percent(0) == 50
    assert win_percent(300) == pytest.approx(75.1, abs=0.1)
    assert win_percent(-300) == pytest.approx(100 - win_percent(300))
    assert win_percent(MATE_CP) == win_percent(1000)  # clipped


def test_accuracy_curve() -> None:
    assert accuracy(0) == pytest.approx(100, abs=0.01)
    assert accuracy(100) == 0
    assert 0 < accuracy(20) < accuracy(5) < 100


@pytest.mark.parametrize(("loss", "name"), [(0, "Excellent"), (10, "Excellent"), (11, "Good"),
                                            (30, "Good"), (60, "Inaccuracy"), (100, "Mistake"),
                                            (101, "Blunder")])
def test_grades(loss: int, name: str) -> None:
    assert grade(loss) == name


def test_score_move_caps_loss_and_counts_ties_as_best() -> None:
    expected = {"a": 50, "b": 50, "c": -2000, "d": 20}
    assert score_move(expected, "b").best and score_move(expected, "b").cp_loss == 0
    assert score_move(expected, "c").cp_loss == 1000
    assert score_move(expected, "d").grade == "Good"


def test_puzzle_solved_rules() -> None:
    mate = {"h5f7": MATE_CP - 100, "d1h5": MATE_CP - 300, "a2a3": -50}
    assert puzzle_solved(mate, "h5f7", "h5f7 e8e7", is_mate=True)
    assert puzzle_solved(mate, "d1h5", "h5f7 e8e7", is_mate=True)  # another forced mate
    assert not puzzle_solved(mate, "a2a3", "h5f7 e8e7", is_mate=True)
    near = {"a1a8": 400, "b1b8": 392, "c1c8": 100}
    assert puzzle_solved(near, "b1b8", "a1a8", is_mate=False)  # within 10 cp
    assert not puzzle_solved(near, "c1c8", "a1a8", is_mate=False)


@pytest.mark.parametrize(("drop", "mark"), [(4.99, None), (5.0, Judgement.INACCURACY),
                                            (9.99, Judgement.INACCURACY),
                                            (10.0, Judgement.MISTAKE),
                                            (15.0, Judgement.BLUNDER), (60.0, Judgement.BLUNDER)])
def test_lichess_marks_a_move_by_its_drop_in_win_percent(drop: float,
                                                         mark: Judgement | None) -> None:
    """Lichess's 0.1, 0.2 and 0.3 on its -1..1 winning-chances scale: 5, 10, 15 win% points."""
    assert judgement(drop) == mark


def test_a_game_s_notes_follow_the_mover() -> None:
    """A black move of a replay game once committed (6...Bf5): White's eval -0.69 before,
    +4.22 after. Black's win% falls from 50 + 50 (2 / (1 + e^(-0.00368208 x 69)) - 1) =
    56.318 to 17.453: a drop of 38.864 points, a blunder, move accuracy
    103.1668 e^(-0.04354 x 38.864) - 3.1669 = 15.83. A move that gains loses nothing."""
    [note] = game_notes([-69, 422], white_first=False)
    assert not note.white and note.mark == Judgement.BLUNDER
    assert note.win_loss == pytest.approx(38.864, abs=1e-3)
    assert note.win == pytest.approx(100 - 17.453, abs=1e-3)  # White's win% after it
    assert note.accuracy == pytest.approx(15.83, abs=0.01)
    gains = game_notes([0, 10, -300], white_first=True)  # each side's move helps itself
    assert [(n.white, n.win_loss, n.mark) for n in gains] == [(True, 0.0, None),
                                                               (False, 0.0, None)]
