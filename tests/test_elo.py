"""Elo estimators: Laplace and MCMC agree, the prior pulls, the human line places a model."""

import numpy as np
import pytest

from lib.benchmark.results import load_questions
from lib.elo import human_elo, puzzle_elo_laplace, puzzle_elo_mcmc, world_model_score
from tests.conftest import ROOT

RATINGS = np.array([q.rating for q in load_questions(ROOT / "questions.csv")
                    if q.source == "puzzle"], float)


def _solves(truth: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = 1 / (1 + 10 ** ((RATINGS - truth) / 400))
    return (rng.random(len(RATINGS)) < p).astype(float)


def test_laplace_and_mcmc_agree_and_cover_the_truth() -> None:
    solved = _solves(2100, seed=3)
    laplace = puzzle_elo_laplace(RATINGS, solved)
    mcmc = puzzle_elo_mcmc(RATINGS, solved, seed=1)
    assert abs(laplace.mean - mcmc.mean) < 15
    assert abs((laplace.hi - laplace.lo) - (mcmc.hi - mcmc.lo)) < 25
    assert laplace.lo < 2100 < laplace.hi
    assert "puzzle ratings" in laplace.note


def test_prior_dominates_with_few_puzzles() -> None:
    few = puzzle_elo_laplace(np.array([1500.0]), np.array([1.0]))
    assert 1800 <= few.mean < 1900
    assert few.hi - few.lo > 800  # about 2 x 1.645 x 300


def test_all_solved_stays_finite() -> None:
    est = puzzle_elo_laplace(RATINGS, np.ones(len(RATINGS)))
    assert np.isfinite(est.mean) and est.mean > RATINGS.max() - 200


def test_human_line_places_a_model_at_its_elo() -> None:
    rng = np.random.default_rng(0)
    elo = rng.uniform(1000, 2600, 800)
    strata = np.where(elo < 1800, "low", "high")
    human = 200 - 0.08 * elo + rng.normal(0, 20, 800)
    model = 200 - 0.08 * 2000 + rng.normal(0, 20, 800)
    est = human_elo(elo, human, model, strata, boot=300)
    assert abs(est.mean - 2000) < 60 and est.lo < 2000 < est.hi
    assert est.note == ""


def test_flat_human_line_gives_an_open_interval_not_an_error() -> None:
    rng = np.random.default_rng(1)
    elo = rng.uniform(1400, 2000, 300)
    human = 50 + rng.normal(0, 40, 300)
    model = np.full(300, 10.0)
    est = human_elo(elo, human, model, np.full(300, "all"), boot=200)
    assert est.as_dict()["hi"] is None
    assert "unbounded" in est.note


@pytest.mark.parametrize(("rate", "score"), [(0, 1.0), (0.005, 0.8), (0.015, 0.6),
                                             (0.04, 0.3), (0.05, 0.0), (0.5, 0.0)])
def test_world_model_rubric(rate: float, score: float) -> None:
    assert world_model_score(rate) == score
