"""Per-question scores and aggregates with stratified-bootstrap 90% intervals."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import chess
import numpy as np
from scipy import stats

from chess_eval.benchmark.players import protocols
from chess_eval.benchmark.players.player import RandomPlayer
from chess_eval.benchmark.question import answers
from chess_eval.benchmark.question.answers import Category
from chess_eval.benchmark.question.questions import Question
from chess_eval.benchmark.stats.bootstrap import percentile_interval, resample
from chess_eval.benchmark.stats.elo import (
    LEVEL,
    Estimate,
    human_elo,
    puzzle_elo_laplace,
    puzzle_elo_mcmc,
)
from chess_eval.grading import ALL_GRADES, CP_LOSS_CAP, puzzle_solved, score_move

# Outcomes that say nothing of the model: only infrastructure failures. A truncated answer is
# the model's failure (it did not commit to a move within --max-tokens) and scores as one.
UNSCORED = (Category.INFRA,)
TRUNCATED_HINT = 0.10  # above this share of truncated answers, the report says to raise it
STRATA = ("source", "elo_bucket", "phase", "type", "color")
MIN_INTERVAL_N = 10  # a group of fewer answers is reported without an interval (too few)
CELLS = "elo_bucket x phase x type"  # the strata crossed as the test set's tree crosses them
SUMMARY_METRICS = ("legal_rate", "acpl", "accuracy", "best_move_rate", "puzzle_solve_rate")


@dataclass(frozen=True)
class Item:
    """One question's outcome, as stored in the results file."""

    id: str
    source: str
    elo_bucket: str
    phase: str
    type: str
    color: str
    answer: str | None  # the raw reply (None after an infrastructure failure)
    text: str | None  # the move text the answer committed to
    move: str | None  # the legal move in UCI
    category: Category  # legal, an illegal category, truncated or infra
    detail: str
    found_by: str | None = None  # where the answer held the move: final, json, marker, ...
    finish_reason: str | None = None  # the server's: stop, length (cut by max_tokens), ...
    cp_loss: int | None = None
    win_loss: float | None = None
    accuracy: float | None = None
    grade: str | None = None
    best: bool | None = None
    solved: bool | None = None  # puzzles only

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)

    @classmethod
    def stored(cls, data: dict[str, Any]) -> Item:
        """An item from its JSON form."""
        return cls(**{**data, "category": Category(data["category"])})


def score_item(question: Question, answer: str | None, infra_error: str | None,
               prompt: str | None = None, finish_reason: str | None = None,
               continuation: bool = False) -> Item:
    """Parse and grade one answer to `prompt` (whose echoes are never the answer);
    `continuation`: the answer continues a PGN (the pgn protocol), its first move counts."""
    base: dict[str, Any] = {
        "id": question.id, "source": question.source, "elo_bucket": question.elo_bucket,
        "phase": question.phase, "type": question.type, "color": question.color}
    if infra_error is not None or answer is None:
        return Item(**base, answer=None, text=None, move=None, category=Category.INFRA,
                    detail=infra_error or "no answer")
    base["finish_reason"] = finish_reason
    parsed = protocols.parse_continuation(answer, chess.Board(question.fen)) if continuation \
        else answers.parse(answer, chess.Board(question.fen), prompt,
                           truncated=finish_reason == "length",
                           filtered=finish_reason == "content_filter")
    base["found_by"] = parsed.found_by
    if parsed.move is None:  # illegal or truncated: a failure in every metric
        solved = False if question.source == "puzzle" else None
        truncated = parsed.category == Category.TRUNCATED
        return Item(**base, answer=answer, text=None if truncated else parsed.text, move=None,
                    category=parsed.category or Category.FORMAT, detail=parsed.detail,
                    accuracy=0.0, best=False, solved=solved)
    uci = parsed.move.uci()
    scored = score_move(question.expected, uci)
    solved = None
    if question.source == "puzzle":
        is_mate = any(t.startswith("mate") for t in question.themes.split())
        solved = puzzle_solved(question.expected, uci, question.solution, is_mate)
    return Item(**base, answer=answer, text=parsed.text, move=uci, category=Category.LEGAL,
                detail="legal", cp_loss=scored.cp_loss, win_loss=round(scored.win_loss, 3),
                accuracy=round(scored.accuracy, 3), grade=scored.grade, best=scored.best,
                solved=solved)


def truncation_hint(truncated: int, answered: int, max_tokens: int | None) -> str | None:
    """One line asking for a larger --max-tokens when over TRUNCATED_HINT were cut off."""
    if not answered or truncated <= TRUNCATED_HINT * answered:
        return None
    limit = "" if max_tokens is None else f" at max_tokens={max_tokens}"
    return (f"hint: {truncated} of {answered} answers ({truncated / answered:.0%}) were cut"
            f"{limit} before a move; raise --max-tokens")


def metric_arrays(items: list[Item]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Numerator and denominator per item for every ratio metric."""
    legal = np.array([i.category == Category.LEGAL for i in items], float)
    truncated = np.array([i.category == Category.TRUNCATED for i in items], float)
    ones = np.ones(len(items))
    puzzle = np.array([i.solved is not None for i in items], float)
    out = {
        "legal_rate": (legal, ones),
        # A truncated answer's loss is the cap; an illegal one stays out of ACPL, as before.
        "acpl": (np.array([CP_LOSS_CAP if i.category == Category.TRUNCATED else i.cp_loss or 0
                           for i in items], float), legal + truncated),
        "accuracy": (np.array([i.accuracy or 0.0 for i in items], float), ones),
        "best_move_rate": (np.array([bool(i.best) for i in items], float), ones),
        "puzzle_solve_rate": (np.array([bool(i.solved) for i in items], float), puzzle),
    }
    for name in ALL_GRADES:
        out[f"grade_{name.lower()}"] = (np.array([i.grade == name for i in items], float), legal)
    return out


# The range of each metric's per-answer value: an interval at an edge of it comes from here.
BOUNDS = {"legal_rate": 1.0, "acpl": float(CP_LOSS_CAP), "accuracy": 100.0,
          "best_move_rate": 1.0, "puzzle_solve_rate": 1.0}


def edge_interval(values: np.ndarray, bound: float) -> tuple[float, float] | None:
    """The 90% interval of a mean of values in [0, bound] whose every value sits at one end:
    `bound` times Clopper-Pearson's exact interval of the share off that end (none of n), so
    0/20 reaches 0.139 where a bootstrap collapses to [0, 0]; None when the values vary."""
    n = len(values)
    if n == 0 or not (np.all(values == 0) or np.all(values == bound)):
        return None
    at_top = bool(values[0] == bound)
    ci = stats.binomtest(n if at_top else 0, n).proportion_ci(LEVEL, method="exact")
    return bound * float(ci.low), bound * float(ci.high)


def metric_digits(metric: str) -> int:
    """Decimals a metric is shown with, one format per kind: rates (on [0, 1]) 3, cp losses
    and accuracies 1, Elos 0."""
    if "elo" in metric:
        return 0
    return 3 if BOUNDS.get(metric, 1.0) <= 1 else 1


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, NaN (not a warning) where den is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(num / den, dtype=float)


def aggregate(items: list[Item], seed: int = 0, boot: int = 1000) -> dict[str, Any]:
    """Every metric with its point value and a 90% interval, from a bootstrap stratified by
    source and Elo bucket, or an exact one when every answer sits at an end of the metric's
    range. Infrastructure failures are left out; truncated answers fail."""
    scored = [i for i in items if i.category not in UNSCORED]
    if not scored:
        return {"n": 0}
    strata = np.array([f"{i.source}|{i.elo_bucket}" for i in scored])
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    idx = resample(np.random.default_rng(seed), groups, boot)
    out: dict[str, Any] = {"n": len(scored)}
    for name, (num, den) in metric_arrays(scored).items():
        if den.sum() == 0:
            out[name] = None
            continue
        value = float(num.sum() / den.sum())
        edge = edge_interval(num[den > 0] / den[den > 0],
                             BOUNDS.get(name, 1.0))  # grade shares: 0 or 1 per answer
        if edge is not None:
            lo, hi = edge
        else:
            reps = ratio(num[idx].sum(axis=1), den[idx].sum(axis=1))
            lo, hi = percentile_interval(reps[np.isfinite(reps)], LEVEL)
        out[name] = {"value": round(value, 4), "lo": round(lo, 4), "hi": round(hi, 4)}
    return out


def by_strata(items: list[Item], seed: int = 0, boot: int = 1000) -> dict[str, Any]:
    """The aggregates within each value of source, Elo bucket, phase, type and side, and
    within each cell of the test set's tree (Elo bucket x phase x type)."""
    out: dict[str, Any] = {}
    for key in STRATA:
        values = sorted({getattr(i, key) for i in items})
        out[key] = {v: aggregate([i for i in items if getattr(i, key) == v], seed, boot)
                    for v in values}
    cells: dict[str, list[Item]] = {}
    for i in items:
        cells.setdefault(f"{i.elo_bucket} / {i.phase} / {i.type}", []).append(i)
    out[CELLS] = {c: aggregate(cells[c], seed, boot) for c in sorted(cells)}
    return out


def scored_count(items: list[Item]) -> int:
    """Items whose answer was scored (all but infrastructure failures)."""
    return sum(i.category not in UNSCORED for i in items)


def illegal_counts(items: list[Item]) -> dict[str, int]:
    """Illegal answers by category."""
    return {c: sum(i.category == c for i in items) for c in answers.ILLEGAL_CATEGORIES}


def elo_estimates(items: list[Item], questions: dict[str, Question], seed: int = 0,
                  mcmc: bool = False) -> dict[str, Any]:
    """Puzzle Elo (Bayesian) and human-move Elo, each with a 90% interval."""
    scored = [i for i in items if i.category not in UNSCORED]
    puzzles = [i for i in scored if i.source == "puzzle"]
    out: dict[str, Any] = {"puzzle": None, "human": None}
    if puzzles:
        ratings = np.array([questions[i.id].rating for i in puzzles], float)
        solved = np.array([bool(i.solved) for i in puzzles], float)
        estimate: Estimate = (puzzle_elo_mcmc(ratings, solved, seed) if mcmc
                              else puzzle_elo_laplace(ratings, solved))
        out["puzzle"] = estimate.as_dict()
    games = [i for i in scored if i.source == "game" and questions[i.id].played_move
             and questions[i.id].played_elo]
    if len(games) >= 10:
        human_loss = [score_move(questions[i.id].expected, questions[i.id].played_move).cp_loss
                      for i in games]
        model_loss = [CP_LOSS_CAP if i.cp_loss is None else i.cp_loss for i in games]
        out["human"] = human_elo(
            np.array([questions[i.id].played_elo for i in games]), np.array(human_loss),
            np.array(model_loss), np.array([i.elo_bucket for i in games]), seed=seed).as_dict()
    return out


NOT_APPLICABLE = ("not applicable: a baseline player answers with a legal move by "
                  "construction, so its illegal rate says nothing of a world model")
NO_SCORE = ("no world-model score: a static run measures the illegal rate only; the "
            "consistency tests (self-consistency, mirror symmetry, temperature) were not run "
            "(benchmark.py worldmodel runs them)")


def illegal_rate(items: list[Item], temperature: float | None = None) -> dict[str, Any]:
    """A static run's part of the world-model evidence: the illegal rate with its exact 90%
    interval and the taxonomy's shares, and what it rests on (`temperature`: the run's; None
    for a baseline player, legal by construction). Never a rubric score: that needs the
    consistency tests, which only `benchmark.py worldmodel` runs."""
    answered = [i for i in items if i.category not in UNSCORED]
    at = "a baseline player" if temperature is None else f"temperature {temperature:g}"
    rests_on = (f"{len(answered)} single-move answers ({at}; a truncated answer counts as a "
                "failure)")
    if not answered:
        return {"illegal_rate": None, "answers": 0, "shares": {}, "rests_on": rests_on,
                "note": "no scored answer"}
    illegal = [i for i in answered if i.category != Category.LEGAL]
    ci = stats.binomtest(len(illegal), len(answered)).proportion_ci(LEVEL, "exact")
    rate = {"value": round(len(illegal) / len(answered), 4), "lo": round(ci.low, 4),
            "hi": round(ci.high, 4)}
    shares = {c: (sum(i.category == c for i in illegal) / len(illegal) if illegal else 0.0)
              for c in (*answers.ILLEGAL_CATEGORIES, Category.TRUNCATED)}
    return {"illegal_rate": rate, "answers": len(answered),
            "shares": {} if temperature is None else {k: round(v, 3) for k, v in shares.items()},
            "rests_on": rests_on, "note": NOT_APPLICABLE if temperature is None else NO_SCORE}


def illegal_interval(part: dict[str, Any]) -> dict[str, float] | None:
    """A static result's illegal rate as {value, lo, hi}; None when nothing was answered. A
    file written before the interval was recorded holds a bare rate: lo = hi = the rate,
    shown without an interval."""
    rate = part.get("illegal_rate")
    if rate is None:
        return None
    if isinstance(rate, dict):
        return {k: float(rate[k]) for k in ("value", "lo", "hi")}
    return {"value": float(rate), "lo": float(rate), "hi": float(rate)}


def illegal_text(part: dict[str, Any]) -> str:
    """The illegal rate as shown: 1.2% [0.6%, 2.1%], or 'n/a' for a baseline."""
    rate = illegal_interval(part)
    if rate is None or part.get("note") == NOT_APPLICABLE:
        return "n/a"
    if rate["lo"] == rate["hi"] == rate["value"]:
        return f"{rate['value']:.1%}"
    return f"{rate['value']:.1%} [{rate['lo']:.1%}, {rate['hi']:.1%}]"


def floor_figures(questions: list[Question], seed: int) -> dict[str, Any]:
    """A uniformly random mover's figures on the same questions: the floor of every metric."""
    rnd = RandomPlayer(seed=seed)
    items = [score_item(q, rnd.answer(q, "").text, None) for q in questions]
    values = aggregate(items, seed, boot=100)
    by_id = {q.id: q for q in questions}
    return {"player": rnd.id,
            **{m: (values.get(m) or {}).get("value") for m in SUMMARY_METRICS},
            "elo": elo_estimates(items, by_id, seed)}
