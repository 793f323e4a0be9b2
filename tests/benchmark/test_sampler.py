"""Thompson sampling's choices, the stop rule and the honest extremes of the game Elo."""

import numpy as np
import pytest

from chess_eval.benchmark.games import sampler
from chess_eval.benchmark.stats import btd
from chess_eval.benchmark.stats.elo import ABOVE, BELOW, INTERVAL

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


def _ladder_config(sd: float, target: float = 70.0) -> sampler.SamplerConfig:
    """ELOS with every rung's Elo uncertain by `sd`, rung 2 the anchor, errors correlated
    along the chain (each rung's error is the sum of the gaps' errors to the anchor)."""
    steps = np.array([[1, 1, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0],
                      [0, 0, 0, 1, 0, 0], [0, 0, 0, 1, 1, 0], [0, 0, 0, 1, 1, 1]], float)
    cov = sd ** 2 * steps @ steps.T
    return sampler.SamplerConfig(ELOS, nu=0.5, target=target,
                                 ladder_cov=tuple(map(tuple, cov)))


def test_the_ladders_part_matches_refits_on_drawn_ladders() -> None:
    """The delta method's sd against brute force: refit the MAP on 2000 ladders drawn from
    the covariance and take the spread of the MAPs."""
    config = _ladder_config(40.0)
    rng = np.random.default_rng(5)
    opponents = [ELOS[r] for r in rng.choice([1, 2, 3, 4], 120)]
    scores = [float(rng.choice([1, 0.5, 0], p=btd.probabilities(1100 - o, 0.5)))
              for o in opponents]
    post = sampler.posterior(opponents, scores, config)
    exact = sampler.posterior(opponents, scores, sampler.SamplerConfig(ELOS, nu=0.5))
    assert post.mean == exact.mean and post.ladder > 0
    assert post.half_width ** 2 == pytest.approx(
        exact.half_width ** 2 + post.ladder_half_width ** 2, rel=1e-6)
    shift = rng.multivariate_normal(np.zeros(6), config.cov(), size=2000)
    index = sampler.rung_indices(opponents, config)
    maps = [btd.fit(np.array(ELOS)[index] + s[index], np.array(scores), 0.5, config.prior).mean
            for s in shift]
    assert np.std(maps) == pytest.approx(post.ladder, rel=0.1)


def test_a_ladder_wider_than_the_target_stops_the_run_and_says_so() -> None:
    opponents = [ELOS[5]] * 400
    scores = [1.0, 0.0, 0.5, 0.5] * 100
    wide, exact = _ladder_config(60.0), _ladder_config(0.0)
    post = sampler.posterior(opponents, scores, wide)
    assert post.ladder_half_width > 70 >= post.own_half_width
    assert sampler.finished(post, 400, wide) and sampler.limited_by_ladder(post, wide)
    assert "limited by the ladder" in sampler.game_elo(opponents, scores, wide).note
    # The same games on an exact ladder: stopped by the interval, not by the ladder.
    post = sampler.posterior(opponents, scores, exact)
    assert sampler.finished(post, 400, exact) and not sampler.limited_by_ladder(post, exact)
    # Few games: the player's own part is still wide, so the run goes on.
    post = sampler.posterior(opponents[:12], scores[:12], wide)
    assert not sampler.finished(post, 12, wide)


def test_a_ladder_nearly_as_wide_as_the_target_stops_once_it_is_the_larger_part() -> None:
    """Aimed at the total alone, a ladder of +-57 would need the player's own part within
    +-41 (about 3 times the games); the run stops once its own part is within the target and
    no wider than the ladder's."""
    opponents = [ELOS[5]] * 400
    scores = [1.0, 0.0, 0.5, 0.5] * 100
    config = _ladder_config(20.0)
    stops = []
    for n in range(20, 401, 4):
        post = sampler.posterior(opponents[:n], scores[:n], config)
        if sampler.finished(post, n, config):
            stops.append((n, post))
    n, post = stops[0]
    assert 70 > post.ladder_half_width > 70 / 2 ** 0.5  # narrower than the target alone
    assert post.half_width > 70 >= post.own_half_width
    assert post.ladder_half_width >= post.own_half_width
    assert sampler.limited_by_ladder(post, config)
    # Four games fewer, the player's own part was still the wider: the run went on.
    before = sampler.posterior(opponents[:n - 4], scores[:n - 4], config)
    assert before.own_half_width > before.ladder_half_width


def test_the_expected_games_of_a_run_approach_where_it_stops() -> None:
    """The progress bar's total: before any game the typical run; then games x (own/target)^2,
    which lands near where a simulated run really stops."""
    rng = np.random.default_rng(3)
    assert sampler.games_expected(None, 0, CONFIG) == sampler.TYPICAL_GAMES
    opponents: list[float] = []
    scores: list[float] = []
    estimates = {}
    while True:
        post = sampler.posterior(opponents, scores, CONFIG)
        if sampler.finished(post, len(scores), CONFIG):
            break
        estimates[len(scores)] = sampler.games_expected(post, len(scores), CONFIG)
        (rung,) = sampler.schedule(len(scores), opponents, scores, CONFIG, 1, seed=len(scores))
        win, draw, _ = btd.probabilities(np.array([1100.0 - ELOS[rung]]), CONFIG.nu)
        u = rng.random()
        opponents.append(ELOS[rung])
        scores.append(1.0 if u < win[0] else 0.5 if u < win[0] + draw[0] else 0.0)
    stop = len(scores)
    assert sampler.games_expected(post, stop, CONFIG) == stop
    assert 0.7 * stop <= estimates[stop // 2] <= 1.4 * stop  # halfway, within 40%
    assert estimates[stop - 1] == stop  # one game before the end, that game is expected
    assert all(n < est <= CONFIG.max_games for n, est in estimates.items())


def test_the_expected_games_aim_where_the_stop_rule_ends_with_a_ladder() -> None:
    """With a ladder part of +-52 (under the +-70 target), the run stops when its own part
    reaches +-52 (the ladder is then the wider part), not +-70: a player at +-104 after 30
    games is expected near 30 x (104/52)^2 = 120 games; with a ladder of +-90 (wider than the
    target), at 30 x (104/70)^2 = 67."""
    def post(ladder_hw: float) -> btd.Posterior:
        total = float(np.hypot(104.0, ladder_hw))
        return btd.Posterior(1500, total / btd.Z90, 1500 - total, 1500 + total, 30, "laplace",
                             ladder_hw / btd.Z90)
    assert sampler.games_expected(post(52.0), 30, CONFIG) == 120
    assert sampler.games_expected(post(90.0), 30, CONFIG) == 67
