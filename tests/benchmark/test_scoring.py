"""Per-answer scoring on real rows of the committed questions.csv."""

from __future__ import annotations

from lib.benchmark.core.answers import Category
from lib.benchmark.core.questions import load_questions
from lib.benchmark.core.scoring import aggregate, score_item
from tests.conftest import ROOT

QUESTIONS = load_questions(ROOT / "questions.csv")


def test_a_truncated_puzzle_answer_is_an_unsolved_failure() -> None:
    """Cut by the token limit: its own category, unsolved, no accuracy, no best move."""
    puzzle = next(q for q in QUESTIONS if q.source == "puzzle")
    item = score_item(puzzle, "Let me think about the knight on", None, None, "length")
    assert item.category == Category.TRUNCATED and item.move is None
    assert (item.solved, item.best, item.accuracy) == (False, False, 0.0)


def test_truncated_answers_weigh_in_every_rate() -> None:
    """Two puzzles, one solved by its key, one truncated: every rate is a half, and ACPL
    averages the key's loss with the cap."""
    first, second = [q for q in QUESTIONS if q.source == "puzzle"][:2]
    key = first.solution.split()[0]
    items = [score_item(first, f"Final answer: {key}", None),
             score_item(second, "I am still thinking", None, None, "length")]
    out = aggregate(items, boot=50)
    assert out["n"] == 2 and out["legal_rate"]["value"] == 0.5
    assert out["puzzle_solve_rate"]["value"] == 0.5
    assert out["acpl"]["value"] == (items[0].cp_loss + 1000) / 2
