"""Rank probabilities and rank intervals on hand-made posteriors."""

import pytest
from scipy import stats

from lib.benchmark.leaderboard.ranking import ranks


def test_probability_of_being_stronger_than_the_next_by_hand() -> None:
    # Two normals 100 apart with sd 50 each: P = Phi(100 / (50 sqrt 2)) = Phi(1.4142).
    result = ranks(["b", "a"], [1500.0, 1600.0], [50.0, 50.0])
    assert [r.name for r in result] == ["a", "b"]
    assert result[0].above_next == pytest.approx(stats.norm.cdf(1.4142), abs=0.01)
    assert result[1].above_next is None


def test_rank_intervals_widen_with_overlap() -> None:
    apart = ranks(["x", "y", "z"], [2400.0, 1800.0, 1200.0], [20.0, 20.0, 20.0])
    assert [(r.place, r.lo, r.hi) for r in apart] == [(1, 1, 1), (2, 2, 2), (3, 3, 3)]
    tied = ranks(["x", "y", "z"], [1810.0, 1800.0, 1200.0], [100.0, 100.0, 20.0])
    assert (tied[0].lo, tied[0].hi) == (1, 2) and (tied[1].lo, tied[1].hi) == (1, 2)
    assert (tied[2].lo, tied[2].hi) == (3, 3)
    assert tied[0].above_next == pytest.approx(stats.norm.cdf(10 / (100 * 2 ** 0.5)), abs=0.02)
