"""Does one draw parameter fit the reference ladder's games? One nu against nu by strength.

The ladder is fitted with one BTD draw parameter nu for every pair of rungs. Here, with the
rungs held at their committed Elos, the same games are fitted by two draw models: one nu, and
log nu = a + b x + c x^2 with x = (the pair's mean Elo - CENTRE) / 1000 (smooth in strength:
weak engines blunder into decisive games and strong ones into draws, so a draw rate that
varies with the pair's level is the first alternative to try). Each is judged in sample
(deviance, a likelihood-ratio test on 2 degrees of freedom) and out of sample (FOLDS-fold
cross-validation by rung pair: each pair's games held out together, the draw model fitted on
the rest). Observed against expected draws by band of mean Elo shows where one nu fails. The
Elos held fixed are the one-nu fit's, which can only favour one nu. Beside it, the ladder's
adjacent-gap goal (50-150 Elo between neighbouring rungs) judged on the ladder's posterior:
each gap's chance of lying under 50 or over 150.

    python -m bench.draw_model [--write]     # --write: bench/data/draw_model.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from chess_eval.benchmark.arena.ladder import Ladder, load_ladder
from chess_eval.benchmark.core.data import LADDER_GAMES, REFERENCE_LADDER
from chess_eval.benchmark.ladders.calibration import read_games, usable
from chess_eval.benchmark.stats import btd
from chess_eval.cli import run_cli
from chess_eval.files import atomic_write

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "data" / "draw_model.json"
CENTRE = 1600.0  # Elo the strength term is centred on
FOLDS = 5
BANDS = (0, 400, 800, 1200, 1600, 2000, 2400, 2800, 3200, 4000)  # mean-Elo bands, Elo
GAP_GOAL = (50.0, 150.0)  # adjacent rungs this far apart, Elo


@dataclass(frozen=True)
class Games:
    """The ladder's games, the weaker-listed rung's view."""

    delta: np.ndarray  # Elo of the first rung minus the second's
    level: np.ndarray  # (mean Elo - CENTRE) / 1000
    score: np.ndarray  # the first rung's score: 1, 1/2, 0
    pair: np.ndarray  # a key per rung pair (for the folds)


def games_of(ladder: Ladder) -> Games:
    """The committed games between the ladder's rungs, with the rungs' committed Elos."""
    found = usable(ladder.rungs, read_games(REFERENCE_LADDER.with_name(LADDER_GAMES)),
                   ladder.engine, rule=ladder.adjudication)
    elos = np.asarray(ladder.elos, float)
    a, b = elos[found.weak], elos[found.strong]
    pair = np.array([min(w, s) * 1000 + max(w, s) for w, s in zip(found.weak, found.strong,
                                                                   strict=True)])
    return Games(a - b, ((a + b) / 2 - CENTRE) / 1000, np.asarray(found.weak_score, float),
                 pair)


def log_lik(theta: np.ndarray, g: Games, mask: np.ndarray) -> float:
    """The games' BTD log likelihood (those in `mask`) with log nu = theta . (1, x, x^2)."""
    x = g.level[mask]
    log_nu = sum(t * x ** k for k, t in enumerate(theta))
    half = btd.C * g.delta[mask] / 2
    log_z = np.logaddexp(np.logaddexp(half, -half), log_nu)
    s = g.score[mask]
    own = np.where(s == btd.WIN, half, np.where(s == btd.LOSS, -half, log_nu))
    return float(np.sum(own - log_z))


def fit(g: Games, mask: np.ndarray, terms: int) -> np.ndarray:
    """The draw model's MLE (1 term: one nu; 3: quadratic in the pair's level)."""
    result = optimize.minimize(lambda t: -log_lik(t, g, mask), np.zeros(terms),
                               method="BFGS")
    return np.asarray(result.x)


def cross_validated(g: Games, terms: int) -> float:
    """Held-out log likelihood, every rung pair's games held out together in one fold."""
    fold = np.array([int(hashlib.sha256(str(p).encode()).hexdigest(), 16) % FOLDS
                     for p in g.pair])
    total = 0.0
    for k in range(FOLDS):
        theta = fit(g, fold != k, terms)
        total += log_lik(theta, g, fold == k)
    return total


def draw_bands(g: Games, thetas: dict[str, np.ndarray]) -> list[dict[str, object]]:
    """Observed draws against each model's expected, by band of the pair's mean Elo."""
    mean = g.level * 1000 + CENTRE
    rows = []
    for lo, hi in zip(BANDS, BANDS[1:], strict=False):
        sel = (mean >= lo) & (mean < hi)
        if not sel.any():
            continue
        row: dict[str, object] = {"band": f"{lo}-{hi}", "games": int(sel.sum()),
                                  "draws": int(np.sum(g.score[sel] == btd.DRAW))}
        for name, theta in thetas.items():
            nu = np.exp(sum(t * g.level[sel] ** k for k, t in enumerate(theta)))
            _, p_draw, _ = btd.probabilities(g.delta[sel], nu)
            row[f"expected_{name}"] = round(float(np.sum(p_draw)), 1)
        rows.append(row)
    return rows


def gaps(ladder: Ladder) -> list[dict[str, object]]:
    """Each adjacent gap: its mean, sd (the ladder's covariance) and the posterior chance it
    lies under or over the goal."""
    order = np.argsort(ladder.elos)
    elos, cov = np.asarray(ladder.elos, float), np.asarray(ladder.cov, float)
    rows = []
    for i, j in zip(order, order[1:], strict=False):
        gap = elos[j] - elos[i]
        sd = float(np.sqrt(max(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0.0)))
        under = float(stats.norm.cdf((GAP_GOAL[0] - gap) / sd)) if sd else float(gap < 50)
        over = float(stats.norm.sf((GAP_GOAL[1] - gap) / sd)) if sd else float(gap > 150)
        rows.append({"low": ladder.rungs[i].name, "high": ladder.rungs[j].name,
                     "gap": round(float(gap), 1), "sd": round(sd, 1),
                     "p_under": round(under, 3), "p_over": round(over, 3)})
    return rows


def summary(ladder: Ladder) -> dict[str, object]:
    """Both draw models' fits, the held-out comparison, the bands and the gaps."""
    g = games_of(ladder)
    everything = np.ones(len(g.score), bool)
    one, smooth = fit(g, everything, 1), fit(g, everything, 3)
    ll_one, ll_smooth = log_lik(one, g, everything), log_lik(smooth, g, everything)
    lr = 2 * (ll_smooth - ll_one)
    return {
        "games": len(g.score), "committed_nu": round(float(ladder.nu), 4),
        "one_nu": round(float(np.exp(one[0])), 4),
        "smooth": [round(float(t), 4) for t in smooth],
        "log_lik": {"one_nu": round(ll_one, 1), "smooth": round(ll_smooth, 1)},
        "lr_statistic": round(lr, 1), "lr_p": float(stats.chi2.sf(lr, 2)),
        "held_out": {"one_nu": round(cross_validated(g, 1), 1),
                     "smooth": round(cross_validated(g, 3), 1)},
        "bands": draw_bands(g, {"one_nu": one, "smooth": smooth}),
        "gaps": gaps(ladder),
    }


def markdown(data: dict[str, object]) -> str:
    """The docs' block: the comparison in a line, the bands, the doubtful gaps."""
    ll, held = data["log_lik"], data["held_out"]
    assert isinstance(ll, dict) and isinstance(held, dict)
    gain = held["smooth"] - held["one_nu"]
    lines = [f"On the reference ladder's {data['games']:,} games (rungs at their committed "
             f"Elos): one nu = {data['one_nu']} (the fit's own {data['committed_nu']}); "
             f"log nu quadratic in the pair's mean Elo raises the log likelihood by "
             f"{ll['smooth'] - ll['one_nu']:.1f} (likelihood ratio {data['lr_statistic']} on 2 "
             f"degrees of freedom, p = {data['lr_p']:.2g}) and the held-out log likelihood "
             f"({FOLDS} folds by rung pair) by {gain:.1f}.", "",
             "| pair's mean Elo | games | draws | expected, one nu | expected, nu by "
             "strength |", "|---|---|---|---|---|"]
    for b in data["bands"]:  # type: ignore[attr-defined]
        lines.append(f"| {b['band']} | {b['games']:,} | {b['draws']:,} | "
                     f"{b['expected_one_nu']:,.0f} | {b['expected_smooth']:,.0f} |")
    doubtful = [g for g in data["gaps"] if g["p_under"] > 0.1 or g["p_over"] > 0.1]  # type: ignore[attr-defined]
    lines += ["", "Adjacent gaps with a chance above 10% of lying outside 50-150 Elo on the "
              "ladder's posterior:", "", "| rungs | gap | sd | P(under 50) | P(over 150) |",
              "|---|---|---|---|---|"]
    lines += [f"| {g['low']} -> {g['high']} | {g['gap']:.0f} | {g['sd']:.0f} | "
              f"{g['p_under']:.0%} | {g['p_over']:.0%} |" for g in doubtful]
    return "\n".join(lines)


def main() -> None:
    """Fit, print, and with --write keep the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    data = summary(load_ladder(REFERENCE_LADDER))
    print(markdown(data))
    if args.write:
        with atomic_write(OUT) as handle:
            json.dump(data, handle, indent=1)
            handle.write("\n")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    run_cli(main)
