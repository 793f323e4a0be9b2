"""A predicted game Elo from static scores: the ladder's rungs, scored statically, fit a line.

Every rung of the calibrated ladder answers questions.csv like any model; its accuracy there
(illegal answers count as 0, so a model cannot look good by answering little) against its
measured game Elo is fitted by least squares, once, and committed (game_elo_fit.json). A
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

from lib.btd import Z90
from lib.elo import Estimate, bounded
from lib.errors import DataError

METRIC = "accuracy"


@dataclass(frozen=True)
class Fit:
    """Game Elo = intercept + slope * metric, fitted on the ladder's rungs."""

    metric: str  # the static result's metric
    intercept: float
    slope: float
    residual_sd: float  # Elo
    n: int  # rungs fitted
    mean_x: float
    sxx: float  # sum of squared deviations of the metric
    questions_sha256: str  # the questions file the rungs answered
    elo_range: tuple[float, float]  # the fitted rungs' Elos: predictions beyond are bounds
    rungs: list[dict[str, Any]] = field(default_factory=list)  # the data, for the record

    def point(self, x: float) -> float:
        """The line at x."""
        return self.intercept + self.slope * x

    def sd(self, x: float, x_sd: float = 0.0) -> float:
        """Prediction spread at x: residual, parameters and the metric's own uncertainty."""
        line = self.residual_sd ** 2 * (1 + 1 / self.n + (x - self.mean_x) ** 2 / self.sxx)
        return float(np.sqrt(line + (self.slope * x_sd) ** 2))


def fit_line(xs: list[float], elos: list[float], metric: str, questions_sha256: str,
             rungs: list[dict[str, Any]]) -> Fit:
    """Least-squares line of Elo on the metric."""
    x, y = np.asarray(xs, float), np.asarray(elos, float)
    if len(x) < 3:
        raise DataError("a fit needs at least three rungs")
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (intercept + slope * x)
    sd = float(np.sqrt(np.sum(resid ** 2) / (len(x) - 2)))
    return Fit(metric, float(intercept), float(slope), sd, len(x), float(x.mean()),
               float(np.sum((x - x.mean()) ** 2)), questions_sha256,
               (float(y.min()), float(y.max())), rungs)


def predict(fit: Fit, value: float, lo: float, hi: float) -> Estimate:
    """The predicted game Elo of a static score (value with its 90% interval)."""
    x_sd = (hi - lo) / (2 * Z90)
    mean, sd = fit.point(value), fit.sd(value, x_sd)
    est = Estimate(mean, mean - Z90 * sd, mean + Z90 * sd, fit.n, "static fit",
                   "predicted from static accuracy by the ladder's fit, not measured by games")
    return bounded(est, *fit.elo_range)


def leave_one_out(xs: list[float], x_sds: list[float], elos: list[float],
                  metric: str) -> list[dict[str, float]]:
    """Each rung predicted by the line fitted on the others."""
    out = []
    for i in range(len(xs)):
        keep = [j for j in range(len(xs)) if j != i]
        f = fit_line([xs[j] for j in keep], [elos[j] for j in keep], metric, "", [])
        mean, sd = f.point(xs[i]), f.sd(xs[i], x_sds[i])
        out.append({"elo": elos[i], "predicted": mean, "lo": mean - Z90 * sd,
                    "hi": mean + Z90 * sd})
    return out


def fit_json(fit: Fit, loo: list[dict[str, float]]) -> dict[str, Any]:
    """The fit's JSON form, with its leave-one-out check (written by the caller)."""
    return {**asdict(fit), "leave_one_out": loo}


def load_fit(path: Path) -> Fit | None:
    """The committed fit, or None when there is none."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data.pop("leave_one_out", None)
        data["elo_range"] = tuple(data["elo_range"])
        return Fit(**data)
    except (ValueError, TypeError, KeyError) as exc:
        raise DataError(f"{path}: not a static-to-game fit ({exc})") from exc
