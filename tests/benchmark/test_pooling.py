"""Partial pooling of a player's Elo across start conditions (a hierarchical
model)."""

import numpy as np

from bench.condition_pooling import scenario
from chess_eval.benchmark.games.pooling import pool


def test_conditions_far_apart_keep_their_own_estimates() -> None:
    a, b = pool(np.array([1200.0, 300.0]), np.array([40.0, 40.0]))
    assert abs(a.mean - 1200) < 15 and abs(b.mean - 300) < 15
    assert a.shrinkage < 0.05 and a.hi - a.lo < 2 * 1.645 * 40 * 1.1


def test_a_noisy_condition_borrows_from_precise_ones_that_agree() -> None:
    own_half = 1.645 * 150
    std, c960, mid = pool(np.array([1200.0, 1100.0, 1190.0]), np.array([40.0, 150.0, 45.0]))
    assert c960.shrinkage > 0.5 and 1100 < c960.mean < 1200
    assert (c960.hi - c960.lo) / 2 < own_half  # narrower than its own interval
    assert std.shrinkage < c960.shrinkage


def test_the_common_ladder_error_widens_every_pooled_interval() -> None:
    exact = pool(np.array([1200.0, 1150.0]), np.array([40.0, 40.0]), seed=1)
    wide = pool(np.array([1200.0, 1150.0]), np.array([40.0, 40.0]), np.array([60.0, 60.0]),
                seed=1)
    assert all(w.hi - w.lo > e.hi - e.lo + 50 for w, e in zip(wide, exact, strict=True))


def test_smoke_pooling_beats_separate_fits_when_conditions_agree() -> None:
    """Fast version of bench/condition_pooling.py: equal offsets, 60 runs."""
    r = scenario(0.0, 60, 60, np.random.default_rng(2))
    assert r["pooled_rmse"] < r["separate_rmse"]
    assert r["pooled_coverage"] >= 0.8
