"""Rank probabilities and rank intervals on hand-made posteriors."""

import numpy as np
import pytest
from scipy import stats

from chess_eval.benchmark.leaderboard.ranking import Shared, ranks


def test_probability_of_being_stronger_than_the_next_by_hand() -> None:
    # Two normals 100 apart with sd 50 each: P = Phi(100 / (50 sqrt 2)) = Phi(1.4142).
    result = ranks(["b", "a"], [1500.0, 1600.0], [50.0, 50.0])
    assert [r.name for r in result] == ["a", "b"]
    assert result[0].above_next == pytest.approx(stats.norm.cdf(1.4142), abs=0.01)
    assert result[1].above_next is None


def test_rank_probabilities_by_hand() -> None:
    """Two normals 100 apart with sd 50: the stronger is first with Phi(1.4142); each row and
    each column of the matrix sums to one; a far weaker third is always third."""
    result = ranks(["b", "a", "c"], [1500.0, 1600.0, 500.0], [50.0, 50.0, 50.0])
    matrix = np.array([r.probabilities for r in result])
    first = stats.norm.cdf(1.4142)
    assert matrix[0] == pytest.approx([first, 1 - first, 0.0], abs=0.01)
    assert matrix[2] == pytest.approx([0.0, 0.0, 1.0])
    assert matrix.sum(axis=0) == pytest.approx(1.0, abs=1e-3)
    assert matrix.sum(axis=1) == pytest.approx(1.0, abs=1e-3)


def test_rank_intervals_widen_with_overlap() -> None:
    apart = ranks(["x", "y", "z"], [2400.0, 1800.0, 1200.0], [20.0, 20.0, 20.0])
    assert [(r.place, r.lo, r.hi) for r in apart] == [(1, 1, 1), (2, 2, 2), (3, 3, 3)]
    tied = ranks(["x", "y", "z"], [1810.0, 1800.0, 1200.0], [100.0, 100.0, 20.0])
    assert (tied[0].lo, tied[0].hi) == (1, 2) and (tied[1].lo, tied[1].hi) == (1, 2)
    assert (tied[2].lo, tied[2].hi) == (3, 3)
    assert tied[0].above_next == pytest.approx(stats.norm.cdf(10 / (100 * 2 ** 0.5)), abs=0.02)


def test_a_shared_ladder_cancels_out_of_the_comparison() -> None:
    """Two models 40 apart, each +-10 on its own, rated against the same rung whose Elo is
    uncertain by sd 100: shared, P(a > b) is Phi(40 / (10 sqrt 2)); drawn independently the
    ladder's error would swamp it."""
    shared = Shared(np.array([[1.0], [1.0]]), np.array([[100.0 ** 2]]))
    joint = ranks(["a", "b"], [1540.0, 1500.0], [10.0, 10.0], shared=shared)
    assert joint[0].above_next == pytest.approx(stats.norm.cdf(40 / (10 * 2 ** 0.5)), abs=0.01)
    total = (10.0 ** 2 + 100.0 ** 2) ** 0.5
    apart = ranks(["a", "b"], [1540.0, 1500.0], [total, total])
    assert apart[0].above_next == pytest.approx(stats.norm.cdf(40 / (total * 2 ** 0.5)),
                                                abs=0.01)
