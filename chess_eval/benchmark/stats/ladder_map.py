"""The measured map from Stockfish 15.1's ladder to the reference ladder.

Both ladders fix the random mover at 0, but a player reads higher on the Stockfish 17.1 one:
the rungs' Elo spacing is measured by other engines, so the same games are worth more Elo
there. The map is read from players whose moves do not depend on the ladder's engine (engines
of other families, some mixed with random moves), each rated by `play` on both ladders:

    y = slope * x + e,    e ~ N(0, tau^2 + sy^2 + slope^2 sx^2)

x and y the player's game Elos on the old and the reference ladder, sx and sy their standard
errors (each ladder's own error included), tau the players' spread about the line beyond
them. A line through the origin because both scales put the random mover at 0 exactly; one
slope because a ladder measured with another engine stretches the whole Elo scale, and one
slope is monotone by its sign. Fitted by maximum likelihood. A dozen players fix tau loosely:
its estimate can fall to 0 (the readings scatter no more than their own errors) while a spread
of tens of Elo is still as likely, so the tau a conversion carries is its one-sided 90% upper
bound by profile likelihood, and the slope's error the inverse curvature there. A converted
reading carries its own error, the slope's and that tau.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize, stats

from chess_eval.benchmark.stats.btd import Z90
from chess_eval.benchmark.stats.elo import ABOVE, BELOW, INTERVAL, Estimate
from chess_eval.errors import DataError, FitError


@dataclass(frozen=True)
class Reading:
    """A player's game Elo on both ladders."""

    player: str
    family: str
    x: float  # on the old ladder
    x_sd: float
    y: float  # on the reference ladder
    y_sd: float


@dataclass(frozen=True)
class LadderMap:
    """y = slope * x with tau, from one ladder's engine to the reference ladder's."""

    source: str  # the engine of the ladder it converts from ('Stockfish 15.1')
    target: str  # the reference ladder's engine
    slope: float
    slope_sd: float
    tau: float  # players' spread about the line beyond their own errors (Elo): the
    # one-sided 90% upper bound, which every conversion carries
    readings: list[dict[str, Any]] = field(default_factory=list)  # the data, for the record
    loo: list[dict[str, Any]] = field(default_factory=list)  # each reading left out
    tau_estimate: float | None = None  # tau's maximum-likelihood estimate, for the record

    def convert(self, x: float, x_sd: float) -> tuple[float, float]:
        """A reading on the old ladder as a mean and standard deviation on the reference."""
        var = (self.slope * x_sd) ** 2 + (x * self.slope_sd) ** 2 + self.tau ** 2
        return self.slope * x, math.sqrt(var)

    def convert_elo(self, elo: dict[str, Any]) -> dict[str, Any]:
        """A result's Elo (mean, 90% lo and hi, kind, text) converted, its interval widened
        by the map's error; a bound stays a bound, moved out by the map's error."""
        kind = elo.get("kind", INTERVAL)
        if kind == INTERVAL and None not in (elo.get("mean"), elo.get("lo"), elo.get("hi")):
            sd = (float(elo["hi"]) - float(elo["lo"])) / (2 * Z90)
            mean, out_sd = self.convert(float(elo["mean"]), sd)
            est = Estimate(mean, mean - Z90 * out_sd, mean + Z90 * out_sd, 0, "")
        elif kind == BELOW and elo.get("hi") is not None:
            mean, sd = self.convert(float(elo["hi"]), 0.0)
            est = Estimate(np.nan, -np.inf, mean + Z90 * sd, 0, "", kind=BELOW)
        elif kind == ABOVE and elo.get("lo") is not None:
            mean, sd = self.convert(float(elo["lo"]), 0.0)
            est = Estimate(np.nan, mean - Z90 * sd, np.inf, 0, "", kind=ABOVE)
        else:
            return dict(elo)
        shown = est.as_dict()  # the project's rounding and text
        return {**elo, **{k: shown[k] for k in ("mean", "lo", "hi", "text")}}


def _nll(params: np.ndarray, r: list[Reading]) -> float:
    slope, log_tau = params
    var = np.array([p.y_sd ** 2 + (slope * p.x_sd) ** 2 for p in r]) + math.exp(log_tau) ** 2
    resid = np.array([p.y - slope * p.x for p in r])
    return float(0.5 * np.sum(resid ** 2 / var + np.log(var)))


def fit_map(readings: list[Reading], source: str, target: str) -> LadderMap:
    """The map fitted by maximum likelihood (FitError when it does not converge or its
    slope is not positive: a map that is not monotone)."""
    if len(readings) < 3:
        raise DataError("a ladder map needs at least three players rated on both ladders")
    xs = np.array([p.x for p in readings])
    ys = np.array([p.y for p in readings])
    start = np.array([float(xs @ ys / (xs @ xs)), math.log(50.0)])
    best = optimize.minimize(_nll, start, args=(readings,), method="Nelder-Mead",
                             options={"xatol": 1e-7, "fatol": 1e-9, "maxiter": 4000})
    if not best.success or best.x[0] <= 0:
        raise FitError(f"the ladder map did not converge to a positive slope ({best.message})")
    slope, estimate = float(best.x[0]), math.exp(float(best.x[1]))
    tau = _tau_upper(readings, slope, estimate, float(best.fun))
    h = 1e-4 * slope  # the slope's curvature, tau held at the one carried
    at = np.array([slope, math.log(tau)])
    curv = (_nll(at + [h, 0.0], readings) - 2 * _nll(at, readings)
            + _nll(at - [h, 0.0], readings)) / h ** 2
    return LadderMap(source, target, slope, math.sqrt(1 / curv), tau,
                     [asdict(p) for p in readings], tau_estimate=estimate)


TAU_LEVEL = 0.90  # the one-sided level of the tau a conversion carries


def _profile(readings: list[Reading], tau: float, slope: float) -> float:
    """The negative log-likelihood at this tau, the slope at its best for it."""
    found = optimize.minimize_scalar(
        lambda s: _nll(np.array([s, math.log(tau)]), readings),
        bounds=(slope / 2, slope * 2), method="bounded", options={"xatol": 1e-9})
    return float(found.fun)


def _tau_upper(readings: list[Reading], slope: float, estimate: float, best: float) -> float:
    """tau's one-sided upper bound at TAU_LEVEL by profile likelihood: where twice the
    log-likelihood has fallen by chi-square(1)'s (2 TAU_LEVEL - 1) quantile."""
    drop = float(stats.chi2.ppf(2 * TAU_LEVEL - 1, 1))
    low = max(estimate, 1e-3)

    def excess(tau: float) -> float:
        return 2 * (_profile(readings, tau, slope) - best) - drop
    high = max(2 * low, 10.0)
    while excess(high) < 0:
        high *= 2
        if high > 1e5:
            raise FitError("the ladder map's tau has no upper bound")
    return float(optimize.brentq(excess, low, high, xtol=1e-6)) if excess(low) < 0 else low


def leave_one_out(readings: list[Reading], source: str, target: str) -> list[dict[str, Any]]:
    """Each player's reference reading against the 90% interval the map fitted on the others
    gives for it (its own reference error included: that reading is what is checked)."""
    out = []
    for i, p in enumerate(readings):
        fit = fit_map(readings[:i] + readings[i + 1:], source, target)
        mean, sd = fit.convert(p.x, p.x_sd)
        sd = math.hypot(sd, p.y_sd)
        out.append({"player": p.player, "family": p.family, "x": p.x, "y": p.y,
                    "predicted": round(mean, 1), "lo": round(mean - Z90 * sd, 1),
                    "hi": round(mean + Z90 * sd, 1),
                    "inside": bool(mean - Z90 * sd <= p.y <= mean + Z90 * sd)})
    return out


def map_json(fit: LadderMap, loo: list[dict[str, Any]]) -> dict[str, Any]:
    """The map's JSON form, with its leave-one-out check."""
    return {**asdict(fit), "loo": loo}


def load_map(path: Path) -> LadderMap | None:
    """The committed map (None when there is none); DataError when the file is not one."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LadderMap(**data)
    except (ValueError, TypeError) as exc:
        raise DataError(f"{path}: not a ladder map ({exc})") from exc
