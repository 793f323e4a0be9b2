"""Choosing calibration pairs: the worst-measured part of the ladder gets the next games."""

import numpy as np

from chess_eval.benchmark.arena.ladder import pairs
from chess_eval.benchmark.ladders import design
from chess_eval.benchmark.stats import btd

ELOS = np.array([0.0, 200.0, 400.0, 600.0, 800.0, 1000.0])  # anchor: rung 2
ANCHOR = 2


def _info(per_pair: dict[tuple[int, int], int]) -> np.ndarray:
    weak = np.array([p[0] for p, n in per_pair.items() for _ in range(n)], int)
    strong = np.array([p[1] for p, n in per_pair.items() for _ in range(n)], int)
    return design.information(ELOS, 0.5, weak, strong)


def test_with_no_games_every_rung_is_reached() -> None:
    chosen = design.choose(ELOS, 0.5, np.zeros((6, 6)), ANCHOR, pairs(6), 60)
    touched = {r for pair in chosen for r in pair}
    assert touched == set(range(6))


def test_the_next_games_go_where_the_ladder_is_least_measured() -> None:
    # Every pair well measured but the top one: the next games close that gap.
    per_pair = dict.fromkeys(pairs(6), 200)
    per_pair[(4, 5)] = per_pair[(3, 5)] = 0
    chosen = design.choose(ELOS, 0.5, _info(per_pair), ANCHOR, pairs(6), 5)
    assert all(5 in pair for pair in chosen)


def test_choosing_lowers_the_worst_error_and_games_to_goal_meet_it() -> None:
    info = _info({(0, 1): 5, (1, 2): 5})
    before = design.worst_ratio(design.covariance(info, ANCHOR), ELOS)
    for pair in design.choose(ELOS, 0.5, info, ANCHOR, pairs(6), 300):
        info = info + _info({pair: 1})
    after = design.worst_ratio(design.covariance(info, ANCHOR), ELOS)
    assert after < before
    total, added = design.games_to_goal(ELOS, 0.5, info, ANCHOR, pairs(6), step=100)
    assert total == sum(added.values()) > 0
    for pair, n in added.items():
        info = info + _info({pair: n})
    assert design.worst_ratio(design.covariance(info, ANCHOR), ELOS) <= 1


def test_the_covariance_matches_a_fit_of_that_many_games() -> None:
    # One pair, n games: the variance of the gap is 1 / (n * information per game).
    info = _info({(2, 3): 400})
    cov = design.covariance(info, ANCHOR)
    expected = 1 / (400 * btd.game_information(200.0, 0.5))
    assert abs(cov[3, 3] / expected - 1) < 1e-3
    assert cov[ANCHOR].max() == 0


def test_games_go_to_the_rungs_that_miss_and_still_spread_once_none_does() -> None:
    # The bottom rungs measured to far below their goals, the top two barely: the next games
    # all go to the top; once every rung meets its goal (where the objective changes), they
    # still go where they shrink the variances most, not to a tie's first candidate.
    per_pair = dict.fromkeys(pairs(6), 2000)
    per_pair.update({(3, 4): 5, (2, 4): 5, (1, 4): 5, (4, 5): 5, (3, 5): 5, (2, 5): 5})
    info = _info(per_pair)
    assert design.worst_ratio(design.covariance(info, ANCHOR), ELOS) > 1
    assert all(max(pair) >= 4 for pair in design.choose(ELOS, 0.5, info, ANCHOR, pairs(6), 20))
    met = _info(dict.fromkeys(pairs(6), 20_000))
    assert design.worst_ratio(design.covariance(met, ANCHOR), ELOS) <= 1
    after = {}
    for label, chosen in (("planned", design.choose(ELOS, 0.5, met, ANCHOR, pairs(6), 40)),
                          ("first candidate", [pairs(6)[0]] * 40)):
        cov = design.covariance(met + sum(_info({pair: 1}) for pair in chosen), ANCHOR)
        after[label] = float(np.sum((np.diag(cov) / (35 / btd.Z90) ** 2) ** 2))
    assert after["planned"] < after["first candidate"]  # not a tie broken by order
