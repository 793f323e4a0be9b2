"""Elo estimators: Laplace and MCMC agree, the prior pulls, the human line places a model."""

import numpy as np
import pytest

from chess_eval.benchmark.question.questions import load_questions
from chess_eval.benchmark.stats import elo
from chess_eval.benchmark.stats.elo import (
    ABOVE,
    BELOW,
    UNIDENTIFIED,
    human_elo,
    puzzle_elo_laplace,
    puzzle_elo_mcmc,
    world_model_score,
)
from chess_eval.errors import FitError
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


def _p(ratings: np.ndarray, r: float) -> np.ndarray:
    return 1 / (1 + 10 ** ((ratings - r) / 400))


@pytest.mark.parametrize("estimator", [puzzle_elo_laplace, puzzle_elo_mcmc])
def test_nothing_solved_is_an_upper_bound_not_a_prior(estimator) -> None:
    sixteen = RATINGS[:16]
    est = estimator(sixteen, np.zeros(16))
    assert est.kind == BELOW and est.as_dict()["mean"] is None
    # The bound is where solving none of these 16 puzzles has probability 5%.
    assert np.prod(1 - _p(sixteen, est.hi)) == pytest.approx(0.05, rel=1e-3)
    assert est.text() == f"below ~{round(est.hi)}"
    assert est.hi < 1500  # the old prior put this model at 1167 [819, 1514]


def test_everything_solved_is_a_lower_bound() -> None:
    est = puzzle_elo_laplace(RATINGS, np.ones(len(RATINGS)))
    assert est.kind == ABOVE and est.text().startswith("above ~")
    assert np.prod(_p(RATINGS, est.lo)) == pytest.approx(0.05, rel=1e-3)


def test_a_weak_solver_is_not_pulled_to_the_middle() -> None:
    # Truth 500: about one easy puzzle in ten solved.
    solved = _solves(500, seed=7)
    est = puzzle_elo_laplace(RATINGS, solved)
    assert 0 < solved.sum() < len(solved)
    assert est.lo < 500 < est.hi and est.hi < 900


def test_human_line_places_a_model_at_its_elo() -> None:
    rng = np.random.default_rng(0)
    elo = rng.uniform(1000, 2600, 800)
    strata = np.where(elo < 1800, "low", "high")
    human = 200 - 0.08 * elo + rng.normal(0, 20, 800)
    model = 200 - 0.08 * 2000 + rng.normal(0, 20, 800)
    est = human_elo(elo, human, model, strata, boot=300)
    assert abs(est.mean - 2000) < 60 and est.lo < 2000 < est.hi
    assert est.note == ""


def test_flat_human_line_is_not_identifiable() -> None:
    """A model losing what the humans lose, on a line that does not fall: any Elo fits."""
    rng = np.random.default_rng(1)
    elo = rng.uniform(1400, 2000, 300)
    human = 50 + rng.normal(0, 40, 300)
    model = np.full(300, 50.0)
    est = human_elo(elo, human, model, np.full(300, "all"), boot=200)
    assert est.kind == UNIDENTIFIED and est.text() == "not identifiable"
    assert est.as_dict()["mean"] is est.as_dict()["hi"] is None


def test_a_flat_line_still_places_a_model_far_better_than_every_human() -> None:
    """Humans of every Elo here lose about 50; a model losing 10 is above all of them, which
    is all the data say: a lower bound at the top of their range, never a number."""
    rng = np.random.default_rng(1)
    elo = rng.uniform(1400, 2000, 300)
    human = 50 + rng.normal(0, 40, 300)
    est = human_elo(elo, human, np.full(300, 10.0), np.full(300, "all"), boot=200)
    assert est.kind == ABOVE and est.text() == f"above ~{round(elo.max())}"
    assert est.as_dict()["mean"] is None


def test_a_model_far_below_the_humans_is_below_their_range() -> None:
    rng = np.random.default_rng(2)
    elo = rng.uniform(1000, 2600, 600)
    human = 200 - 0.08 * elo + rng.normal(0, 20, 600)
    model = np.full(600, 900.0)  # the line would put it near -8000
    est = human_elo(elo, human, model, np.full(600, "all"), boot=200)
    assert est.kind == BELOW and est.text() == f"below ~{round(elo.min())}"


@pytest.mark.parametrize(("rate", "score"), [(0, 1.0), (0.005, 0.8), (0.015, 0.6),
                                             (0.04, 0.3), (0.05, 0.0), (0.5, 0.0)])
def test_world_model_rubric(rate: float, score: float) -> None:
    assert world_model_score(rate) == score


def test_a_mode_on_the_search_bound_is_an_error(monkeypatch) -> None:
    """A posterior mode found on the edge of its search interval is no estimate."""
    monkeypatch.setattr(elo, "MODE_BOUNDS", (0, 1000))  # the real mode lies near 2000
    ratings = np.array([1800.0, 1900, 2000, 2100, 2200])
    solved = np.array([1.0, 1, 0, 1, 0])
    with pytest.raises(FitError, match="puzzle-Elo fit on 5 puzzles"):
        elo.puzzle_posterior(ratings, solved)
    monkeypatch.undo()
    mode, _ = elo.puzzle_posterior(ratings, solved)
    assert 1000 < mode < 3000
