"""Thompson sampling's choices, the stop rule and the honest extremes of the game Elo."""

import numpy as np
import pytest

from lib.benchmark.core import btd
from lib.benchmark.core.elo import ABOVE, BELOW, INTERVAL
from lib.benchmark.games import sampler

ELOS = (-800.0, 300.0, 900.0, 1250.0, 2000.0, 2700.0)
CONFIG = sampler.SamplerConfig(ELOS, nu=0.5)


def test_opening_spreads_three_games_over_three_rungs() -> None:
    assert sampler.opening_rungs(6) == [1, 1, 1, 2, 2, 2, 4, 4, 4]
    assert sampler.opening_rungs(24) == [6] * 3 + [12] * 3 + [17] * 3


def test_a_sharp_posterior_picks_the_rung_nearest_an_even_score() -> None:
    post = btd.Posterior(1200, 1e-6, 1200, 1200, 50, "laplace")
    rng = np.random.default_rng(0)
    assert {sampler.choose(post, CONFIG, rng) for _ in range(20)} == {3}
    # Halfway between two rungs (2000 and 2700), a draw just above picks the upper one.
    post = btd.Posterior(2360, 1e-6, 2360, 2360, 50, "laplace")
    assert sampler.choose(post, CONFIG, rng) == 5


def test_a_wide_posterior_explores_in_proportion() -> None:
    post = btd.Posterior(1500, 600, 500, 2500, 5, "laplace")
    rng = np.random.default_rng(0)
    picks = [sampler.choose(post, CONFIG, rng) for _ in range(2000)]
    counts = np.bincount(picks, minlength=len(ELOS)) / len(picks)
    # Rung 4 (2000) is nearest for draws in (1625, 2350): P = 0.9217 - 0.5825 = 0.339 under
    # Normal(1500, 600).
    assert counts[4] == pytest.approx(0.339, abs=0.03)
    assert counts[0] < 0.01  # -800 is nearest only below -250, 2.9 sd away: P = 0.0018


def test_schedule_opens_then_samples_reproducibly() -> None:
    assert sampler.schedule(0, [], [], CONFIG, 4, seed=1) == [1, 1, 1, 2]
    opp, sc = [300.0] * 3 + [900.0] * 3 + [2000.0] * 3, [1, 1, 1, 1, 0.5, 1, 0, 0, 0.5]
    first = sampler.schedule(9, opp, sc, CONFIG, 3, seed=1)
    assert first == sampler.schedule(9, opp, sc, CONFIG, 3, seed=1)
    assert set(first) <= {2, 3, 4}


def test_stop_at_target_or_cap() -> None:
    narrow = btd.Posterior(1500, 40, 1434, 1566, 90, "laplace")
    wide = btd.Posterior(1500, 100, 1335, 1665, 90, "laplace")
    assert sampler.finished(narrow, 90, CONFIG)
    assert not sampler.finished(wide, 90, CONFIG)
    assert sampler.finished(wide, 200, CONFIG)
    assert not sampler.finished(narrow, 5, CONFIG)  # the opening games come first


def test_every_game_lost_is_an_upper_bound_not_a_prior_figure() -> None:
    est = sampler.game_elo([-800.0] * 6, [0.0] * 6, CONFIG)
    assert est.kind == BELOW and np.isnan(est.mean)
    # At the bound, losing all six to the -800 rung has probability 5%.
    _, _, loss = btd.probabilities(est.hi + 800, 0.5)
    assert loss ** 6 == pytest.approx(0.05, rel=1e-6)
    assert est.text().startswith("below ~")


def test_every_game_won_against_the_top_is_a_lower_bound() -> None:
    est = sampler.game_elo([2700.0] * 8, [1.0] * 8, CONFIG)
    assert est.kind == ABOVE and est.lo > 2700


def test_mixed_results_give_an_interval() -> None:
    est = sampler.game_elo([900.0, 1250.0, 2000.0], [1.0, 0.5, 0.0], CONFIG)
    assert est.kind == INTERVAL and est.lo < est.mean < est.hi
