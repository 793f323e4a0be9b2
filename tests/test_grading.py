"""Move grading: Lichess's win chances and accuracy, the five grades Excellent
to Blunder, puzzle solving."""

import pytest

from lib.engine import MATE_CP
from lib.grading import accuracy, grade, puzzle_solved, score_move, win_percent


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
