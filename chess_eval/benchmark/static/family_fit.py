"""A predicted game Elo fitted across player families, with their spread in its interval.

The ladder's rungs make their mistakes one way (random blunders, or a shallow search), and
the exchange rate between static accuracy and game results is not the same for every kind of
player: a shallow engine of another family loses little accuracy to small positional errors
that cost few games. So the fit is a linear mixed model over players of several families
(the rungs, engines of other lineages, Stockfish choosing among its best moves):

    game Elo = b0 + b . x + u_family + e,   u ~ N(0, tau^2),   e ~ N(0, sigma^2 + s_i^2)

with x the static features (log-odds of the rates), s_i the player's own game-Elo error, tau
the between-family spread and sigma the within-family one, fitted by restricted maximum
likelihood. A player of a family the fit has not seen gets the line's value with tau, sigma,
the coefficients' error and its own score's error in the interval, and a Student-t quantile
with (families - 1) degrees of freedom, since tau rests on a handful of families.

Before it predicts, the profile check asks whether the player is like the fitted families:
its best-move rate and its blunder rate beside its accuracy (each the residual from the
fitted players' common line) must fall within the span of theirs. A player outside it,
unlike every fitted family, gets no interval.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize, stats

from chess_eval.benchmark.stats.btd import Z90
from chess_eval.benchmark.stats.elo import UNIDENTIFIED, Estimate, bounded
from chess_eval.errors import DataError

KIND = "families"  # the fit file's `kind`, apart from the older one-line fit
# Candidate feature sets, chosen by leave-one-family-out error (bench/family_fit.py).
FEATURE_SETS = (("accuracy",), ("accuracy", "best_move_rate"), ("accuracy", "grade_blunder"))
SCALE = {"accuracy": 100.0, "best_move_rate": 1.0, "grade_blunder": 1.0, "grade_mistake": 1.0}
# The rates the profile check compares beside accuracy: a player's best-move and blunder rates
# at its accuracy tell a random blunderer from a shallow searcher.
PROFILE = ("best_move_rate", "grade_blunder")
EDGE = 1e-3  # a rate is kept this far inside 0 and 1, where its log-odds are finite
# The direction chess fixes for each feature: a higher accuracy or best-move rate never means
# a weaker player, a higher blunder or mistake rate never a stronger one. A fit whose
# coefficient says otherwise is refused, however well it scores.
SIGNS = {"accuracy": 1, "best_move_rate": 1, "grade_blunder": -1, "grade_mistake": -1}
# Two features this correlated over the fitted players cannot be told apart: their
# coefficients trade off freely (accuracy and the blunder rate correlate at r = -0.998 over
# the validation players, so a fit on both put a negative weight on accuracy).
MAX_CORRELATION = 0.95


def logit(metric: str, value: float | np.ndarray) -> np.ndarray:
    """The log-odds of a rate given on its metric's scale (accuracy in %, the rest in 0-1)."""
    p = np.clip(np.asarray(value, float) / SCALE[metric], EDGE, 1 - EDGE)
    out: np.ndarray = np.log(p / (1 - p))
    return out


@dataclass(frozen=True)
class Rated:
    """One player of the fit: its family, measured game Elo and static scores."""

    name: str
    family: str
    elo: float
    elo_sd: float  # the game Elo's standard error (the ladder's part included)
    metrics: dict[str, tuple[float, float, float]]  # metric -> (value, 90% lo, 90% hi)

    def x(self, features: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Its features (log-odds) and their standard errors, from the 90% intervals."""
        return features_of(self.metrics, features)


def features_of(metrics: dict[str, tuple[float, float, float]],
                features: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Features (log-odds) of a static result's metrics and their standard errors."""
    x = np.array([float(logit(m, metrics[m][0])) for m in features])
    sd = np.array([abs(float(logit(m, metrics[m][2]) - logit(m, metrics[m][1]))) / (2 * Z90)
                   for m in features])
    return x, sd


@dataclass(frozen=True)
class Band:
    """One rate of the profile check: the fitted players' common line of that rate on
    accuracy (both in log-odds), and each family's range of residuals from it."""

    metric: str  # the rate compared beside accuracy
    intercept: float
    slope: float
    ranges: dict[str, tuple[float, float]]  # family -> (lowest, highest) residual

    def residual(self, metrics: dict[str, tuple[float, float, float]]) -> tuple[float, float]:
        """The player's residual from the common line, and its standard error."""
        x, sd = features_of(metrics, ("accuracy", self.metric))
        r = float(x[1] - (self.intercept + self.slope * x[0]))
        return r, float(np.hypot(sd[1], self.slope * sd[0]))

    def inside(self, metrics: dict[str, tuple[float, float, float]]) -> bool:
        """Whether the player's residual lies within the span of the fitted families'
        residuals (within its own 90% interval): between families, the spread between them
        is what the interval carries; beyond them, nothing is known."""
        r, sd = self.residual(metrics)
        lo = min(low for low, _ in self.ranges.values())
        hi = max(high for _, high in self.ranges.values())
        return lo - Z90 * sd <= r <= hi + Z90 * sd


def band_of(players: list[Rated], metric: str) -> Band:
    """The profile band of the fitted players for one rate."""
    xs = np.array([features_of(p.metrics, ("accuracy", metric))[0] for p in players])
    slope, intercept = np.polyfit(xs[:, 0], xs[:, 1], 1)
    resid = xs[:, 1] - (intercept + slope * xs[:, 0])
    ranges: dict[str, tuple[float, float]] = {}
    for family in sorted({p.family for p in players}):
        mine = [r for r, p in zip(resid, players, strict=True) if p.family == family]
        ranges[family] = (float(min(mine)), float(max(mine)))
    return Band(metric, float(intercept), float(slope), ranges)


@dataclass(frozen=True)
class FamilyFit:
    """Game Elo = coef . (1, features), with a random effect per family."""

    features: tuple[str, ...]  # the static metrics used, each as log-odds
    coef: tuple[float, ...]  # intercept, then one per feature
    coef_cov: tuple[tuple[float, ...], ...]  # their covariance (generalised least squares)
    residual_sd: float  # sigma: spread of players within a family, beyond their own error
    family_sd: float  # tau: spread between families
    families: tuple[str, ...]  # the families fitted
    n: int  # players fitted
    questions_sha256: str  # the questions file the players answered
    elo_range: tuple[float, float]  # the fitted players' Elos: predictions beyond are bounds
    bands: tuple[Band, ...]  # the profile check, one band per rate of PROFILE
    scale: str  # the game Elo scale of the ladder the players were rated on
    players: list[dict[str, Any]] = field(default_factory=list)  # the data, for the record
    kind: str = KIND

    @property
    def df(self) -> int:
        """Degrees of freedom of the Student-t quantile: families less one."""
        return max(1, len(self.families) - 1)

    def mean_sd(self, x: np.ndarray, x_sd: np.ndarray) -> tuple[float, float]:
        """The prediction for a player of an unseen family, and its standard deviation."""
        z = np.concatenate([[1.0], x])
        coef, cov = np.array(self.coef), np.array(self.coef_cov)
        var = (float(z @ cov @ z) + self.residual_sd ** 2 + self.family_sd ** 2
               + float(np.sum((coef[1:] * x_sd) ** 2)))
        return float(z @ coef), float(np.sqrt(var))


def _design(players: list[Rated], features: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray,
                                                                       np.ndarray, np.ndarray]:
    x = np.array([np.concatenate([[1.0], p.x(features)[0]]) for p in players])
    y = np.array([p.elo for p in players])
    s2 = np.array([p.elo_sd ** 2 for p in players])
    families = sorted({p.family for p in players})
    z = np.array([[float(p.family == f) for f in families] for p in players])
    return x, y, s2, z


def _gls(x: np.ndarray, y: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Coefficients, their covariance and the REML log-likelihood for covariance `v`."""
    vi = np.linalg.inv(v)
    info = x.T @ vi @ x
    cov = np.linalg.inv(info)
    beta = cov @ x.T @ vi @ y
    r = y - x @ beta
    ll = -0.5 * (np.linalg.slogdet(v)[1] + np.linalg.slogdet(info)[1] + float(r @ vi @ r))
    return beta, cov, ll


def fit_families(players: list[Rated], features: tuple[str, ...], questions_sha256: str = "",
                 scale: str = "") -> FamilyFit:
    """The mixed model fitted by restricted maximum likelihood."""
    if len({p.family for p in players}) < 2 or len(players) < len(features) + 3:
        raise DataError("a family fit needs at least two families and more players than "
                        "coefficients")
    x, y, s2, z = _design(players, features)

    def cov(params: np.ndarray) -> np.ndarray:
        sigma, tau = np.exp(params)
        v: np.ndarray = np.diag(sigma ** 2 + s2) + tau ** 2 * (z @ z.T)
        return v

    start = np.log([100.0, 100.0])
    best = optimize.minimize(lambda p: -_gls(x, y, cov(p))[2], start, method="Nelder-Mead",
                             options={"xatol": 1e-4, "fatol": 1e-6, "maxiter": 2000})
    sigma, tau = np.exp(best.x)
    beta, beta_cov, _ = _gls(x, y, cov(best.x))
    return FamilyFit(
        features=features, coef=tuple(float(b) for b in beta),
        coef_cov=tuple(tuple(float(c) for c in row) for row in beta_cov),
        residual_sd=float(sigma), family_sd=float(tau),
        families=tuple(sorted({p.family for p in players})), n=len(players),
        questions_sha256=questions_sha256, elo_range=(float(y.min()), float(y.max())),
        bands=tuple(band_of(players, m) for m in PROFILE), scale=scale,
        players=[{"name": p.name, "family": p.family, "elo": p.elo, "elo_sd": p.elo_sd,
                  **{f"{m}{s}": v for m, (value, lo, hi) in p.metrics.items()
                     for s, v in (("", value), ("_lo", lo), ("_hi", hi))}}
                 for p in players])


def unidentifiable(players: list[Rated], features: tuple[str, ...]) -> str | None:
    """Why a feature set cannot be fitted on these players (two of its features correlate
    beyond MAX_CORRELATION), or None."""
    if len(features) < 2:
        return None
    xs = np.array([p.x(features)[0] for p in players])
    r = np.corrcoef(xs, rowvar=False)
    for i in range(len(features)):
        for j in range(i + 1, len(features)):
            if abs(r[i, j]) > MAX_CORRELATION:
                return (f"{features[i]} and {features[j]} correlate at r = {r[i, j]:.3f} "
                        f"over the {len(players)} players (above {MAX_CORRELATION}): their "
                        "weights are not identified")
    return None


def against_chess(fit: FamilyFit) -> list[str]:
    """The features whose fitted weight runs against the direction chess fixes (SIGNS)."""
    return [f for f, c in zip(fit.features, fit.coef[1:], strict=True)
            if c * SIGNS.get(f, 0) < 0]


def predict(fit: FamilyFit, metrics: dict[str, tuple[float, float, float]]) -> Estimate:
    """The predicted game Elo of a static result's metrics (value, 90% lo, hi), or no
    interval when its profile is unlike every fitted family's."""
    if not all(band.inside(metrics) for band in fit.bands):
        return Estimate(np.nan, -np.inf, np.inf, fit.n, "family fit", kind=UNIDENTIFIED,
                        note="unlike every fitted family: its best-move or blunder rate "
                        "beside its accuracy is outside the fitted families' span, so their "
                        "exchange rate between accuracy and game results may not hold for "
                        "it; play measures")
    x, x_sd = features_of(metrics, fit.features)
    mean, sd = fit.mean_sd(x, x_sd)
    half = float(stats.t.ppf(0.95, fit.df)) * sd
    est = Estimate(mean, mean - half, mean + half, fit.n, "family fit",
                   note=f"predicted from static scores by a fit over {len(fit.families)} "
                   f"player families ({', '.join(fit.families)}; the spread between families "
                   f"included), not measured by games; on {fit.scale}")
    return bounded(est, *fit.elo_range)


def leave_one_family_out(players: list[Rated], features: tuple[str, ...]) -> list[dict[str,
                                                                                      Any]]:
    """Each player predicted by the fit on the other families only."""
    out = []
    for family in sorted({p.family for p in players}):
        fit = fit_families([p for p in players if p.family != family], features)
        for p in (q for q in players if q.family == family):
            est = predict(fit, p.metrics)
            x, x_sd = p.x(features)
            mean, sd = fit.mean_sd(x, x_sd)
            half = float(stats.t.ppf(0.95, fit.df)) * sd
            out.append({"name": p.name, "family": family, "elo": p.elo, "predicted": mean,
                        "lo": mean - half, "hi": mean + half,
                        "unlike": est.kind == UNIDENTIFIED})
    return out


def fit_json(fit: FamilyFit, lofo: list[dict[str, Any]]) -> dict[str, Any]:
    """The fit's JSON form, with its leave-one-family-out check."""
    return {**asdict(fit), "leave_one_family_out": lofo}


def from_json(data: dict[str, Any], path: Path) -> FamilyFit:
    """A family fit read back from its JSON form; DataError in one line if it is not one."""
    try:
        data = dict(data)
        data.pop("leave_one_family_out", None)
        bands = tuple(Band(b["metric"], b["intercept"], b["slope"],
                           {k: tuple(v) for k, v in b["ranges"].items()})
                      for b in data.pop("bands"))
        return FamilyFit(**{**data, "features": tuple(data["features"]),
                            "coef": tuple(data["coef"]),
                            "coef_cov": tuple(tuple(r) for r in data["coef_cov"]),
                            "families": tuple(data["families"]),
                            "elo_range": tuple(data["elo_range"]), "bands": bands})
    except (ValueError, TypeError, KeyError) as exc:
        raise DataError(f"{path}: not a family fit ({exc})") from exc


def read(path: Path) -> FamilyFit:
    """The family fit in `path`."""
    return from_json(json.loads(path.read_text(encoding="utf-8")), path)
