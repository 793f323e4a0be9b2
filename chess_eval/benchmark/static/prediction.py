"""A predicted game Elo from static scores: the ladder's rungs, scored statically, fit a line.

Every rung of the calibrated ladder answers questions.csv like any model; its accuracy there
(illegal answers count as 0, so a model cannot look good by answering little) against its
measured game Elo is fitted by least squares, once, and committed (data/game_elo_fit.json). A
model's static accuracy then gives a predicted game Elo whose interval holds the line's own
uncertainty (residual spread and the fit's parameters) and the model's accuracy interval.
Engines' errors differ from a model's (an engine never forgets where its pieces are), so this
is a prediction, not a measurement: `play` measures.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chess_eval.benchmark.static.family_fit import KIND as FAMILIES
from chess_eval.benchmark.static.family_fit import PROFILE, FamilyFit, from_json
from chess_eval.benchmark.static.family_fit import predict as predict_families
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.benchmark.stats.elo import BELOW, Estimate, bounded
from chess_eval.errors import DataError

METRIC = "accuracy"
# A fit without a scale was made on the first ladder, before its rungs were re-measured.
PREVIOUS_SCALE = "the first ladder's UCI_Elo-anchored, CCRL-Blitz-like scale"
CURRENT_SCALE = "Elo above a random mover (ladder.csv)"
REFERENCE_SCALE = "Elo above a random mover on the reference ladder (Stockfish 17.1)"
TRANSFORMS = ("linear", "log-gap", "logit")  # x = accuracy, ln(100 - accuracy), or
# ln(accuracy / (100 - accuracy))
EDGE = 1e-3  # accuracy is kept this far inside 0 and 100, where the logs are finite


def transform(accuracy: float | np.ndarray, kind: str) -> float | np.ndarray:
    """The fit's x for an accuracy: itself, the log of its gap to 100 (which keeps the
    strong rungs, all near 96, apart), or its log-odds (which also spreads the weak end,
    where the random mover and the mostly random rungs bunch up)."""
    if kind == "linear":
        return accuracy
    a = np.clip(np.asarray(accuracy, float), EDGE, 100 - EDGE)
    x: np.ndarray = np.log(100 - a) if kind == "log-gap" else np.log(a / (100 - a))
    return x


@dataclass(frozen=True)
class Fit:
    """Game Elo = intercept + slope * x, x = transform(metric), fitted on the ladder's rungs."""

    metric: str  # the static result's metric
    transform: str  # one of TRANSFORMS
    intercept: float
    slope: float
    residual_sd: float  # Elo
    n: int  # rungs fitted
    mean_x: float
    sxx: float  # sum of squared deviations of the metric
    questions_sha256: str  # the questions file the rungs answered
    elo_range: tuple[float, float]  # the fitted rungs' Elos: predictions beyond are bounds
    rungs: list[dict[str, Any]] = field(default_factory=list)  # the data, for the record
    scale: str = PREVIOUS_SCALE  # the game Elo scale of the ladder it was fitted on

    def point(self, x: float) -> float:
        """The line at x."""
        return self.intercept + self.slope * x

    def sd(self, x: float, x_sd: float = 0.0) -> float:
        """Prediction spread at x: residual, parameters and the metric's own uncertainty."""
        line = self.residual_sd ** 2 * (1 + 1 / self.n + (x - self.mean_x) ** 2 / self.sxx)
        return float(np.sqrt(line + (self.slope * x_sd) ** 2))


def fit_line(values: list[float], elos: list[float], metric: str, kind: str,
             questions_sha256: str, rungs: list[dict[str, Any]]) -> Fit:
    """Least-squares line of Elo on the transformed metric."""
    x, y = np.asarray(transform(np.asarray(values, float), kind)), np.asarray(elos, float)
    if len(x) < 3:
        raise DataError("a fit needs at least three rungs")
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (intercept + slope * x)
    sd = float(np.sqrt(np.sum(resid ** 2) / (len(x) - 2)))
    return Fit(metric, kind, float(intercept), float(slope), sd, len(x), float(x.mean()),
               float(np.sum((x - x.mean()) ** 2)), questions_sha256,
               (float(y.min()), float(y.max())), rungs)


def _x(fit_kind: str, value: float, lo: float, hi: float) -> tuple[float, float]:
    """x and its standard deviation from a metric's value and 90% interval."""
    ends = np.asarray(transform(np.array([lo, hi]), fit_kind))
    return float(transform(value, fit_kind)), float(abs(ends[1] - ends[0])) / (2 * Z90)


def predict(fit: Fit, value: float, lo: float, hi: float) -> Estimate:
    """The predicted game Elo of a static score (value with its 90% interval)."""
    x, x_sd = _x(fit.transform, value, lo, hi)
    mean, sd = fit.point(x), fit.sd(x, x_sd)
    est = Estimate(mean, mean - Z90 * sd, mean + Z90 * sd, fit.n, "static fit",
                   "predicted from static accuracy by the ladder's fit, not measured by "
                   f"games; on {fit.scale}")
    return bounded(est, *fit.elo_range)


def predict_result(fit: Fit | FamilyFit, intervals: dict[str, dict[str, float]]) -> Estimate:
    """The predicted game Elo of a static result's metric intervals, by either kind of fit;
    DataError when a metric the fit needs is missing."""
    if isinstance(fit, Fit):
        acc = intervals[fit.metric]
        return predict(fit, acc["value"], acc["lo"], acc["hi"])
    needed = {*fit.features, "accuracy", *PROFILE}
    missing = sorted(m for m in needed if m not in intervals)
    if missing:
        raise DataError(f"the static result has no {', '.join(missing)} for the family fit")
    if any((intervals[m] or {}).get("value") is None for m in needed):
        # No legal answer: rates among legal moves are undefined, and a player that never
        # moves legally loses every game: below the weakest player the fit was made on.
        floor = fit.elo_range[0]
        return bounded(Estimate(np.nan, -np.inf, floor, 0, "static fit",
                                "no legal answer: below the fitted range", kind=BELOW),
                       *fit.elo_range)
    return predict_families(fit, {m: (intervals[m]["value"], intervals[m]["lo"],
                                      intervals[m]["hi"]) for m in needed})


def leave_one_out(values: list[tuple[float, float, float]], elos: list[float], metric: str,
                  kind: str) -> list[dict[str, float]]:
    """Each rung (value, lo, hi of the metric) predicted by the line fitted on the others."""
    out = []
    for i, (value, lo, hi) in enumerate(values):
        keep = [j for j in range(len(values)) if j != i]
        f = fit_line([values[j][0] for j in keep], [elos[j] for j in keep], metric, kind, "",
                     [])
        x, x_sd = _x(kind, value, lo, hi)
        mean, sd = f.point(x), f.sd(x, x_sd)
        out.append({"elo": elos[i], "predicted": mean, "lo": mean - Z90 * sd,
                    "hi": mean + Z90 * sd})
    return out


def fit_json(fit: Fit, loo: list[dict[str, float]]) -> dict[str, Any]:
    """The fit's JSON form, with its leave-one-out check (written by the caller)."""
    return {**asdict(fit), "leave_one_out": loo}


def load_fit(path: Path) -> Fit | FamilyFit | None:
    """The committed fit (a line on the rungs, or the fit across player families), or None
    when there is none."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("kind") == FAMILIES:
            return from_json(data, path)
        data.pop("leave_one_out", None)
        data["elo_range"] = tuple(data["elo_range"])
        return Fit(**data)
    except (ValueError, TypeError, KeyError) as exc:
        raise DataError(f"{path}: not a static-to-game fit ({exc})") from exc
