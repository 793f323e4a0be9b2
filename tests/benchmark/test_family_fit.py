"""The static-to-game fit across player families: the mixed model, its intervals, the
profile check and the fit file."""

from pathlib import Path

import numpy as np
import pytest

from chess_eval.benchmark.static import family_fit
from chess_eval.benchmark.static.family_fit import Rated
from chess_eval.benchmark.stats.elo import INTERVAL, UNIDENTIFIED


def _family(name: str, offset: float, best_shift: float, rng: np.random.Generator,
            n: int = 6) -> list[Rated]:
    """Players whose game Elo is 300 + 900 logit(accuracy) + offset + N(0, 60), each with a
    best-move rate that follows accuracy, shifted per family (its profile)."""
    out = []
    for acc in np.linspace(55, 93, n):
        x = np.log(acc / (100 - acc))
        elo = 300 + 900 * x + offset + 60 * rng.standard_normal()
        best = 1 / (1 + np.exp(-(x - 1.5 + best_shift)))
        out.append(Rated(f"{name}{acc:.0f}", name, float(elo), 25.0,
                         {"accuracy": (acc, acc - 1, acc + 1),
                          "best_move_rate": (best, best - 0.02, best + 0.02),
                          "grade_blunder": (0.1, 0.09, 0.11)}))
    return out


def _players(offsets: dict[str, float]) -> list[Rated]:
    rng = np.random.default_rng(1)
    return [p for i, (name, off) in enumerate(offsets.items())
            for p in _family(name, off, 0.1 * i, rng)]


def test_the_between_family_spread_is_measured_and_widens_the_interval() -> None:
    same = family_fit.fit_families(_players({"a": 0, "b": 0, "c": 0, "d": 0}), ("accuracy",))
    apart = family_fit.fit_families(_players({"a": -300, "b": 0, "c": 300, "d": 100}),
                                    ("accuracy",))
    assert same.coef[1] == pytest.approx(900, rel=0.05)
    assert same.family_sd < 60 < 150 < apart.family_sd
    assert 20 < same.residual_sd < 100  # 60 drawn, beside an error of 25 stated
    metrics = {"accuracy": (80.0, 79.0, 81.0), "best_move_rate": (0.45, 0.43, 0.47),
               "grade_blunder": (0.1, 0.09, 0.11)}
    narrow, wide = family_fit.predict(same, metrics), family_fit.predict(apart, metrics)
    assert narrow.kind == wide.kind == INTERVAL
    assert wide.hi - wide.lo > 2 * (narrow.hi - narrow.lo)


def test_a_family_left_out_is_covered_when_families_differ_by_their_spread() -> None:
    lofo = family_fit.leave_one_family_out(
        _players({"a": -200, "b": 0, "c": 200, "d": 50, "e": -100}), ("accuracy",))
    held = [x["lo"] <= x["elo"] <= x["hi"] for x in lofo if not x["unlike"]]
    assert len(held) >= 12 and np.mean(held) >= 0.85
    # The families at the ends of the profiles (a's and e's best-move rates) are outside
    # the others' span when left out: called unlike, not given an interval.
    assert {x["family"] for x in lofo if x["unlike"]} == {"a", "e"}


def test_a_profile_unlike_every_family_gets_no_interval() -> None:
    fit = family_fit.fit_families(_players({"a": 0, "b": 100, "c": -100}), ("accuracy",))
    acc = 80.0
    typical = 1 / (1 + np.exp(-(np.log(acc / (100 - acc)) - 1.5 + 0.1)))
    like = {"accuracy": (acc, acc - 1, acc + 1),
            "best_move_rate": (typical, typical - 0.02, typical + 0.02),
            "grade_blunder": (0.1, 0.09, 0.11)}
    unlike = {**like, "best_move_rate": (0.02, 0.01, 0.03)}  # accurate, never the best move
    assert family_fit.predict(fit, like).kind == INTERVAL
    est = family_fit.predict(fit, unlike)
    assert est.kind == UNIDENTIFIED and "unlike every fitted family" in est.note
    # As accurate, but with four times the blunders (random moves among best ones).
    blunders = {**like, "grade_blunder": (0.4, 0.38, 0.42)}
    assert family_fit.predict(fit, blunders).kind == UNIDENTIFIED


def test_the_fit_file_round_trips(tmp_path: Path) -> None:
    import json

    fit = family_fit.fit_families(_players({"a": 0, "b": 100, "c": -100}),
                                  ("accuracy", "best_move_rate"), "sha", "scale")
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(family_fit.fit_json(fit, [])))
    assert family_fit.read(path) == fit
