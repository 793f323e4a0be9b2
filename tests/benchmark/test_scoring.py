"""Per-answer scoring on real rows of the committed questions.csv."""

from __future__ import annotations

from chess_eval.benchmark.core.scoring import CELLS, aggregate, by_strata, score_item
from chess_eval.benchmark.question.answers import Category
from chess_eval.benchmark.question.questions import load_questions
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


def test_strata_cross_as_the_tree_does() -> None:
    """Each cell of Elo bucket x phase x type gets its own aggregate over exactly its rows."""
    games = [q for q in QUESTIONS if q.source == "game"][:40]
    items = [score_item(q, "Final answer: " + max(q.expected, key=q.expected.get), None)
             for q in games]
    cells = by_strata(items, boot=50)[CELLS]
    expected: dict[str, int] = {}
    for q in games:
        key = f"{q.elo_bucket} / {q.phase} / {q.type}"
        expected[key] = expected.get(key, 0) + 1
    assert {k: v["n"] for k, v in cells.items()} == expected
    assert all(v["best_move_rate"]["value"] == 1.0 for v in cells.values())  # best played


def test_a_rate_at_an_edge_gets_an_interval_that_cannot_collapse() -> None:
    """20 real game positions, each answered with a move that is not legal there: 0/20 legal.
    A percentile bootstrap gives [0, 0]; the exact interval reaches 1 - 0.05^(1/20)."""
    games = [q for q in QUESTIONS if q.source == "game"][:20]
    items = [score_item(q, "Final answer: Ke9", None) for q in games]
    out = aggregate(items, boot=200)
    legal = out["legal_rate"]
    assert (legal["value"], legal["lo"]) == (0.0, 0.0)
    assert legal["hi"] == round(1 - 0.05 ** (1 / 20), 4) == 0.1391
    assert out["accuracy"]["hi"] == round(100 * (1 - 0.05 ** (1 / 20)), 4)
    # Every answer the best move: n/n, the mirror image; ACPL 0 is bounded by the cap.
    best = [score_item(q, "Final answer: " + max(q.expected, key=q.expected.get), None)
            for q in games]
    out = aggregate(best, boot=200)
    assert out["best_move_rate"]["value"] == 1.0 == out["best_move_rate"]["hi"]
    assert out["best_move_rate"]["lo"] == round(0.05 ** (1 / 20), 4)
    assert out["acpl"]["value"] == 0
    assert out["acpl"]["hi"] == round(1000 * (1 - 0.05 ** (1 / 20)), 4)
    # Answers that vary keep the stratified bootstrap.
    mixed = aggregate(items[:10] + best[10:], boot=200)["legal_rate"]
    assert 0 < mixed["lo"] < 0.5 < mixed["hi"] < 1
