"""Static accuracy to game Elo: the fit, its leave-one-out check, predictions, the file."""

import json
from pathlib import Path

import numpy as np
import pytest

from chess_eval.benchmark.arena.ladder import load_ladder
from chess_eval.benchmark.core.data import GAME_FIT, REFERENCE_LADDER
from chess_eval.benchmark.static import family_fit, prediction
from chess_eval.benchmark.static.family_fit import FamilyFit
from chess_eval.benchmark.stats.elo import ABOVE, BELOW, INTERVAL
from chess_eval.files import sha256_file
from tests.conftest import ROOT


def _rungs(noise: float = 0.0) -> tuple[list[float], list[float]]:
    acc = [50.0, 60.0, 70.0, 80.0, 90.0, 95.0]
    rng = np.random.default_rng(0)
    elos = [float(3000 - 700 * np.log(100 - a) + noise * rng.standard_normal()) for a in acc]
    return acc, elos


def test_an_exact_relation_is_recovered_and_predicts_left_out_rungs() -> None:
    acc, elos = _rungs()
    fit = prediction.fit_line(acc, elos, "accuracy", "log-gap", "sha", [])
    assert fit.slope == pytest.approx(-700) and fit.intercept == pytest.approx(3000)
    assert fit.residual_sd == pytest.approx(0, abs=1e-6)
    loo = prediction.leave_one_out([(a, a, a) for a in acc], elos, "accuracy", "log-gap")
    assert [x["predicted"] for x in loo] == pytest.approx(elos)


def test_log_odds_recover_a_logistic_relation_that_the_other_forms_bend() -> None:
    acc = [47.0, 55.0, 65.0, 76.0, 86.0, 92.0, 95.0]
    elos = [float(300 + 900 * np.log(a / (100 - a))) for a in acc]
    errors = {kind: np.mean([abs(x["predicted"] - x["elo"]) for x in prediction.leave_one_out(
        [(a, a, a) for a in acc], elos, "accuracy", kind)]) for kind in prediction.TRANSFORMS}
    assert errors["logit"] == pytest.approx(0, abs=1e-6)
    assert min(errors["linear"], errors["log-gap"]) > 50


def test_a_prediction_widens_with_the_scores_own_interval_and_stops_at_the_range() -> None:
    acc, elos = _rungs(noise=60)
    fit = prediction.fit_line(acc, elos, "accuracy", "log-gap", "sha", [])
    sharp = prediction.predict(fit, 75.0, 75.0, 75.0)
    loose = prediction.predict(fit, 75.0, 70.0, 80.0)
    assert sharp.kind == loose.kind == INTERVAL
    assert sharp.mean == pytest.approx(loose.mean)
    assert loose.hi - loose.lo > sharp.hi - sharp.lo > 2 * 1.6 * fit.residual_sd
    assert prediction.predict(fit, 20.0, 18.0, 22.0).kind == BELOW
    assert prediction.predict(fit, 99.5, 99.3, 99.7).kind == ABOVE


def test_the_fit_file_round_trips(tmp_path: Path) -> None:
    acc, elos = _rungs(noise=60)
    fit = prediction.fit_line(acc, elos, "accuracy", "linear", "sha", [{"rung": "x"}])
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(prediction.fit_json(fit, [])))
    assert prediction.load_fit(path) == fit
    assert prediction.load_fit(tmp_path / "none.json") is None


def test_the_committed_fit_is_across_families_for_the_committed_questions() -> None:
    fit = prediction.load_fit(GAME_FIT)
    assert isinstance(fit, FamilyFit)
    assert fit.questions_sha256 == sha256_file(ROOT / "questions.csv")
    # Along the rungs, stronger players are predicted stronger (the coefficients of correlated
    # scores need not each have the sign of the whole).
    predicted = [fit.mean_sd(*family_fit.features_of(
        {m: (r[m], r[f"{m}_lo"], r[f"{m}_hi"]) for m in fit.features}, fit.features))[0]
                 for r in fit.players if r["family"] == "rungs"]
    assert predicted[-1] > predicted[len(predicted) // 2] > predicted[0]
    assert fit.n >= 40 and len(fit.families) >= 5 and "rungs" in fit.families


def test_a_static_run_over_the_whole_set_reports_a_predicted_game_elo(tmp_path: Path) -> None:
    import benchmark

    argv = ["--model", "random", "--out", str(tmp_path), "--bootstrap", "100",
            "--questions", str(ROOT / "questions.csv")]
    assert benchmark.main(argv) == 0
    result = json.loads(next(tmp_path.glob("*.json")).read_text())
    predicted = result["elo"]["predicted_game"]
    # A random mover's accuracy puts it below the about half-random mix52@1 rung of the
    # reference ladder (the fit's scale). (Not at the random rung's own 0: the line runs
    # above it there, README.)
    ladder = {r.name: r.elo for r in load_ladder(REFERENCE_LADDER).rungs}
    assert predicted["kind"] == INTERVAL and predicted["hi"] < ladder["mix52@1"]
    assert f"predicted_game: {predicted['text']}" in next(tmp_path.glob("*.md")).read_text()
    # A sample of the set is not what the line was fitted on: no prediction.
    assert benchmark.main([*argv, "--limit", "50", "--out", str(tmp_path / "s")]) == 0
    sample = json.loads(next((tmp_path / "s").glob("*.json")).read_text())
    assert sample["elo"]["predicted_game"] is None


@pytest.mark.parametrize("spec", ["gnuchess:depth=1", "toga2:depth=1"])
def test_a_shallow_engine_s_prediction_covers_its_game_elo_or_says_it_is_unlike(
        spec: str, tmp_path: Path) -> None:
    """The players whose game Elo the rungs' line missed by 350-430: the static report's
    predicted game Elo now covers the rating `play` measured (bench/data/validation_players.csv), or
    says the player is unlike every fitted family."""
    import benchmark
    from bench.family_fit import DATA, REFERENCE_TABLE, load

    assert benchmark.main(["--model", spec, "--out", str(tmp_path), "--bootstrap", "100",
                           "--questions", str(ROOT / "questions.csv")]) == 0
    predicted = json.loads(next(tmp_path.glob("*.json")).read_text())["elo"]["predicted_game"]
    # Its game Elo on the fit's scale, the reference ladder's (measured there, or its
    # ladder.csv rating through the map).
    [measured] = [p.elo for p in load(DATA, REFERENCE_TABLE) if p.name == spec]
    if predicted["kind"] != INTERVAL:
        assert "unlike every fitted family" in predicted["note"]
    else:
        assert predicted["lo"] <= measured <= predicted["hi"], (predicted, measured)


def test_no_predicted_game_elo_falls_as_accuracy_rises_at_a_fixed_blunder_rate() -> None:
    """The committed fit weighs every feature as chess says it must: at any fixed blunder
    (and best-move) rate, a higher accuracy never predicts a lower game Elo; and its features
    can be told apart on the players it was fitted on."""
    fit = family_fit.read(GAME_FIT)
    assert family_fit.against_chess(fit) == []
    for blunder in (0.01, 0.05, 0.15, 0.4):
        for best in (0.05, 0.3, 0.6):
            means = []
            for accuracy in np.linspace(30, 99, 70):
                metrics = {"accuracy": (accuracy,) * 3, "best_move_rate": (best,) * 3,
                           "grade_blunder": (blunder,) * 3, "grade_mistake": (0.1,) * 3}
                x, x_sd = family_fit.features_of(metrics, fit.features)
                means.append(fit.mean_sd(x, x_sd)[0])
            assert np.all(np.diff(means) >= 0), (blunder, best)


def test_the_selection_refuses_features_that_cannot_be_told_apart() -> None:
    """Accuracy and the blunder rate move together over the validation players (r below
    -0.95): a fit on both is refused, whatever its held-out score."""
    from bench.family_fit import DATA, load

    players = load(DATA, "ladder.csv")
    why = family_fit.unidentifiable(players, ("accuracy", "grade_blunder"))
    assert why is not None and "not identified" in why
    assert family_fit.unidentifiable(players, ("accuracy",)) is None
