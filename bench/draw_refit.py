"""The reference ladder refitted with the draw model, and what that moves.

bench/draw_model.py found that one BTD draw parameter does not fit the reference ladder's
games and that log nu quadratic in the pair's mean Elo does (chess_eval/benchmark/stats/draws.py).
Here the draw model is taken the whole way:

- `refit`: the committed games fitted with it as production fits them with one nu (the same
  prior from Stockfish 15.1's ladder, averaged over the same settings by their evidence), the
  ratings and the three coefficients at once; its deviance by rung pair and its held-out log
  likelihood against the committed ladder's; every rung's Elo, every map player's and every
  Maia net's reading before (the committed files) and after (their committed games rated on
  the refit with the draw model, play's prior); the adjacent gaps on the refit's posterior.
  No randomness. Writes bench/data/draw_refit.json.
  It compared version 10 (the last one-nu fit) with its refit; version 11 of the reference
  ladder is that refit (calibrate fits it so), so `refit` refuses a ladder already on the
  draw model and its JSON is the record of the comparison.
- `coverage`: play's intervals as production gives them on the reference ladder (its draw
  model, estimator, sampler and stop rule), with the games' outcomes from the draw model:
  each run draws the truth (the rungs' Elos and the three coefficients) from the ladder's
  joint posterior, its measured ladder the truth plus an error from the same covariance
  (bench/ladder_coverage.py's re-measurement of a ladder fitted with a prior), and rates a
  player of each true strength on it. Writes bench/data/draw_coverage.csv.

    python -m bench.draw_refit refit [--write]
    python -m bench.draw_refit coverage [--runs 200] [--seed 0] [--write]
"""

from __future__ import annotations

import argparse
import json
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from bench import ladder_coverage
from bench.draw_model import GAP_GOAL, gaps
from bench.served_games import player_games
from chess_eval.benchmark.arena.ladder import Ladder, load_ladder
from chess_eval.benchmark.arena.versions import version_of
from chess_eval.benchmark.core.data import (
    FIRST_LADDER,
    HELD_OUT_GAMES,
    LADDER_GAMES,
    MAP_PLAYERS,
    REFERENCE_LADDER,
    ladder_label,
)
from chess_eval.benchmark.games.sampler import PRIOR
from chess_eval.benchmark.human.anchors import HUMAN_DIR, READINGS_FILE
from chess_eval.benchmark.ladders import held_out
from chess_eval.benchmark.ladders.calibration import Usable, fit, read_games, usable
from chess_eval.benchmark.ladders.ladder_prior import RUNG_GRID, SHIFT_GRID, LadderPrior, prior_from
from chess_eval.benchmark.stats import btd, draws
from chess_eval.cli import run_cli
from chess_eval.files import atomic_write, sha256_file, write_csv

ROOT = Path(__file__).resolve().parents[1]
REFIT = ROOT / "bench" / "data" / "draw_refit.json"  # `refit --write`
COVERAGE = ROOT / "bench" / "data" / "draw_coverage.csv"  # `coverage --write`
TERMS = 3  # log nu's coefficients: constant, linear, quadratic in the pair's mean Elo
ELOS = (800.0, 1400.0, 2000.0, 2350.0, 2600.0)  # the players' true strengths simulated
COVER = (0.87, 0.93)  # the goal for play's 90% intervals
MAP_GAMES = MAP_PLAYERS.with_name("ladder_map_games.csv.gz")  # the map players' games
MAIA_GAMES = HUMAN_DIR / "maia_games.csv.gz"  # the Maia nets' games
FIELDS = ("ladder", "version", "true_elo", "runs", "target", "seed", "coverage",
          "one_sided", "median_games", "games_p10", "games_p90", "median_half_width",
          "median_error", "limited")


@dataclass(frozen=True)
class Refit:
    """The ladder's rungs and draw model fitted together, averaged over the prior's
    settings as production averages its one-nu fits."""

    elos: np.ndarray  # Elo of each rung, in the committed ladder's order (anchor first, 0)
    model: draws.DrawModel  # the coefficients, the range of the pairs' mean Elos fitted
    joint_cov: np.ndarray  # (rungs, coefficients): within and between settings
    weights: dict[tuple[float, float], float]  # (shift sd, rung sd) -> evidence weight

    @property
    def cov(self) -> np.ndarray:
        """The rungs' covariance (relative to the anchor)."""
        n = len(self.elos)
        out: np.ndarray = self.joint_cov[:n, :n]
        return out


def _evidence(prior: LadderPrior, pool: draws.Pool, use: Usable) -> float:
    """ladder_prior.evidence with the draw model's likelihood: log p(games | fit) + log
    prior density + log det of the ratings' posterior covariance (Laplace, up to a constant
    the same for every setting)."""
    ll = draws.log_likelihood(pool.ratings[use.weak], pool.ratings[use.strong],
                              use.weak_score, pool.model)
    off = pool.ratings[1:] - (prior.mean[1:] - prior.mean[0])
    cov = prior.cov[1:, 1:]
    _, log_det_prior = np.linalg.slogdet(cov)
    _, log_det_post = np.linalg.slogdet(pool.cov[1:, 1:])
    return float(ll - 0.5 * off @ np.linalg.solve(cov, off) - 0.5 * log_det_prior
                 + 0.5 * log_det_post)


def refit(ladder: Ladder, use: Usable, prior: LadderPrior) -> Refit:
    """The draw-model fit of the games under every setting of the prior, averaged with
    weights by evidence (ladder_prior.averaged's rule), the clip range set to the pairs'
    mean Elos on the result."""
    form = draws.DrawModel((float(np.log(ladder.nu)),) + (0.0,) * (TERMS - 1))
    settings = [(s, r) for s in SHIFT_GRID for r in RUNG_GRID]
    pools, logs = [], []
    for shift, rung in settings:
        setting = prior.with_settings(shift, rung)
        pool = draws.fit_pool(len(ladder.rungs), use.weak, use.strong, use.weak_score, form,
                              setting.pool_prior(0))
        pools.append(pool)
        logs.append(_evidence(setting, pool, use))
    w = np.exp(np.array(logs) - max(logs))
    w /= w.sum()
    points = [np.concatenate([p.ratings, p.model.coef]) for p in pools]
    mean = sum(wk * x for wk, x in zip(w, points, strict=True))
    joint = sum(wk * (p.joint_cov + np.outer(x - mean, x - mean))
                for wk, p, x in zip(w, pools, points, strict=True))
    n = len(ladder.rungs)
    elos = np.asarray(mean)[:n]
    pair_mean = (elos[use.weak] + elos[use.strong]) / 2
    model = draws.DrawModel(tuple(float(c) for c in np.asarray(mean)[n:]),
                            float(pair_mean.min()), float(pair_mean.max()))
    return Refit(elos, model, np.asarray(joint),
                 {k: float(wk) for k, wk in zip(settings, w, strict=True)})


def pair_deviance(elos: np.ndarray, model: draws.DrawModel, use: Usable) -> dict[str, float]:
    """The games grouped by rung pair against the fit: the deviance (G^2) of the
    win/draw/loss counts, and its part in the draws alone (draw or not, binomial)."""
    pair = np.minimum(use.weak, use.strong) * 1000 + np.maximum(use.weak, use.strong)
    # Every pair's games from its weaker-listed rung's side (the model is symmetric).
    flip = use.weak > use.strong
    first = np.where(flip, use.strong, use.weak)
    second = np.where(flip, use.weak, use.strong)
    score = np.where(flip, 1 - use.weak_score, use.weak_score)
    win, draw, loss = draws.probabilities(elos[first], elos[second], model)
    total = draws_part = 0.0
    keys = np.unique(pair)
    for key in keys:
        sel = pair == key
        observed = np.array([np.sum(score[sel] == s) for s in (btd.WIN, btd.DRAW, btd.LOSS)])
        expected = np.array([win[sel].sum(), draw[sel].sum(), loss[sel].sum()])
        total += 2 * float(np.sum(np.where(observed > 0, observed * np.log(
            np.where(observed > 0, observed, 1) / expected), 0.0)))
        o2 = np.array([observed[1], observed[0] + observed[2]])
        e2 = np.array([expected[1], expected[0] + expected[2]])
        draws_part += 2 * float(np.sum(np.where(o2 > 0, o2 * np.log(
            np.where(o2 > 0, o2, 1) / e2), 0.0)))
    return {"pairs": len(keys), "deviance": round(total, 1), "draws": round(draws_part, 1)}


def held_out_log_lik(ladder: Ladder, elos: np.ndarray, model: draws.DrawModel,
                     fitted_games: Path, held_games: Path) -> tuple[int, float]:
    """The held-out games (held_out.unseen: no fitted game pairs their rungs) and their log
    likelihood at these Elos (the committed ladder's order) and draw model."""
    kept = held_out.unseen(read_games(held_games), read_games(fitted_games))
    found = usable(ladder.rungs, kept, ladder.engine, rule=ladder.adjudication)
    return len(found.weak), draws.log_likelihood(elos[found.weak], elos[found.strong],
                                                 found.weak_score, model)


def rate(rungs: list[int], scores: list[float], fitted: Refit) -> dict[str, float]:
    """One player's reading on the refit (draws.fit, play's prior), with the ladder's part of
    its sd (the rungs' and the coefficients' covariance through its sensitivity), combined
    as play combines them (sampler.posterior)."""
    opp = fitted.elos[np.asarray(rungs, int)]
    sc = np.asarray(scores, float)
    own = draws.fit(opp, sc, fitted.model, PRIOR)
    per_game, per_coef = draws.sensitivity(own.mean, opp, sc, fitted.model, PRIOR)
    g = np.concatenate([np.bincount(rungs, per_game, len(fitted.elos)), per_coef])
    ladder_sd = float(np.sqrt(max(g @ fitted.joint_cov @ g, 0.0)))
    half = float(np.hypot(own.mean - own.lo, btd.Z90 * ladder_sd))
    return {"elo": own.mean, "lo": own.mean - half, "hi": own.mean + half,
            "sd": float(np.hypot(own.sd, ladder_sd)), "ladder_sd": ladder_sd}


def readings(kind: str, games: Path, table: Path, ladder: Ladder, fitted: Refit
             ) -> list[dict[str, Any]]:
    """Each player's committed reading on the reference ladder beside its reading on the
    refit, from the same committed games."""
    label = ladder_label(REFERENCE_LADDER)
    played = player_games(games, ladder, REFERENCE_LADDER, label)
    out = []
    for row in ladder_coverage.read_table(table):
        if row["ladder"] != label:
            continue
        after = rate(*played[row["player"]], fitted)
        before = float(row["game_elo"])
        sd = float(row["game_elo_sd"])
        out.append({"kind": kind, "name": row["player"], "games": len(played[row["player"]][1]),
                    "before": before, "before_lo": float(row["game_elo_lo"]),
                    "before_hi": float(row["game_elo_hi"]), "before_sd": sd,
                    "after": round(after["elo"], 1), "after_lo": round(after["lo"], 1),
                    "after_hi": round(after["hi"], 1), "after_sd": round(after["sd"], 1),
                    "change": round(after["elo"] - before, 1),
                    "change_in_sd": round((after["elo"] - before) / sd, 2)})
    return out


def refit_summary(ladder_file: Path = REFERENCE_LADDER) -> dict[str, Any]:
    """Everything `refit` reports (see the module's docstring)."""
    ladder = load_ladder(ladder_file)
    games_file = ladder_file.with_name(LADDER_GAMES)
    use = usable(ladder.rungs, read_games(games_file), ladder.engine, rule=ladder.adjudication)
    prior = prior_from(load_ladder(FIRST_LADDER), ladder.rungs)
    again = fit(ladder.rungs, use, ladder.engine, prior, rule=ladder.adjudication)
    flat = fit(ladder.rungs, use, ladder.engine, rule=ladder.adjudication)
    order = [r.name for r in ladder.rungs]
    flat_elos = np.array([{r.name: r.elo for r in flat.rungs}[n] for n in order])
    fitted = refit(ladder, use, prior)
    one = draws.constant(ladder.nu)
    before_sd = np.sqrt(np.diag(ladder.cov))
    after_sd = np.sqrt(np.diag(fitted.cov))
    rungs = []
    for i, r in enumerate(ladder.rungs):
        change = float(fitted.elos[i] - r.elo)
        rungs.append({"kind": "rung", "name": r.name, "games": r.games, "before": r.elo,
                      "before_lo": r.lo, "before_hi": r.hi,
                      "before_sd": round(float(before_sd[i]), 1),
                      "after": round(float(fitted.elos[i]), 1),
                      "after_lo": round(float(fitted.elos[i] - btd.Z90 * after_sd[i]), 1),
                      "after_hi": round(float(fitted.elos[i] + btd.Z90 * after_sd[i]), 1),
                      "after_sd": round(float(after_sd[i]), 1), "change": round(change, 1),
                      "change_in_sd": round(change / before_sd[i], 2) if before_sd[i] else
                      None})
    players = readings("map player", MAP_GAMES, MAP_PLAYERS, ladder, fitted) \
        + readings("Maia net", MAIA_GAMES, HUMAN_DIR / READINGS_FILE, ladder, fitted)
    n_held, ll_held_one = held_out_log_lik(ladder, ladder.elos, one, games_file,
                                           ladder_file.with_name(HELD_OUT_GAMES))
    _, ll_held_draws = held_out_log_lik(ladder, fitted.elos, fitted.model, games_file,
                                        ladder_file.with_name(HELD_OUT_GAMES))
    ll_one = draws.log_likelihood(ladder.elos[use.weak], ladder.elos[use.strong],
                                  use.weak_score, one)
    ll_draws = draws.log_likelihood(fitted.elos[use.weak], fitted.elos[use.strong],
                                    use.weak_score, fitted.model)
    dev_one = pair_deviance(ladder.elos, one, use)
    dev_draws = pair_deviance(fitted.elos, fitted.model, use)
    params = len(ladder.rungs) - 1
    coef_sd = np.sqrt(np.diag(fitted.joint_cov)[len(ladder.rungs):])
    after_ladder = Ladder([replace(r, elo=float(e)) for r, e in
                           zip(ladder.rungs, fitted.elos, strict=True)],
                          float(np.exp(fitted.model.coef[0])), ladder.engine, fitted.cov)
    version = version_of(ladder_file, sha256_file(ladder_file))
    top = max(fitted.weights, key=lambda k: fitted.weights[k])
    return {
        "ladder": ladder_file.parent.name, "version": version.number if version else None,
        "ladder_sha256": sha256_file(ladder_file), "games": len(use.weak),
        "reproduced": round(float(np.max(np.abs(again.elos - ladder.elos))), 2),
        "flat_one_nu": round(float(np.max(np.abs(flat_elos - ladder.elos))), 1),
        "nu": ladder.nu, "coef": [round(c, 4) for c in fitted.model.coef],
        "coef_sd": [round(float(s), 4) for s in coef_sd],
        "range": [round(fitted.model.low, 1), round(fitted.model.high, 1)],
        "centre": fitted.model.centre, "scale": fitted.model.scale,
        "prior_weight": {"shift_sd": top[0], "rung_sd": top[1],
                         "weight": round(fitted.weights[top], 3)},
        "log_lik": {"one_nu": round(ll_one, 1), "draw_model": round(ll_draws, 1)},
        "deviance": {"one_nu": {**dev_one, "df": 2 * dev_one["pairs"] - params - 1},
                     "draw_model": {**dev_draws, "df": 2 * dev_draws["pairs"] - params - TERMS}},
        "held_out": {"games": n_held, "one_nu": round(ll_held_one, 1),
                     "draw_model": round(ll_held_draws, 1)},
        "ratings": rungs + players,
        "gaps": gaps(after_ladder),
        # The refit unrounded, for the simulation's truth: the coefficients, and the
        # covariance of (rungs, coefficients).
        "elos_full": [float(e) for e in fitted.elos],
        "coef_full": list(fitted.model.coef),
        "range_full": [fitted.model.low, fitted.model.high],
        "joint_cov": [[float(v) for v in row] for row in fitted.joint_cov],
    }


def refit_command(args: argparse.Namespace) -> None:
    """Refit, print the summary, and with --write keep it."""
    if load_ladder(REFERENCE_LADDER).draws is not None:
        raise SystemExit(f"{REFERENCE_LADDER.relative_to(ROOT)} is fitted with the draw model "
                         f"already (version 11 on): {REFIT.relative_to(ROOT)} keeps the "
                         "comparison made on version 10, its last one-nu fit")
    data = refit_summary()
    print(refit_markdown(data))
    if args.write:
        with atomic_write(REFIT) as handle:
            json.dump(data, handle, indent=1)
            handle.write("\n")
        print(f"wrote {REFIT}")


def production_rows(ladder_file: Path, runs: int, target: float, seed: int,
                    elos: tuple[float, ...] = ELOS) -> list[dict[str, str]]:
    """play as a user runs it on the reference ladder (its draw model, estimator, sampler
    and stop rule: ladder_coverage.coverage), the games' outcomes from the draw model: each
    run's truth (the rungs' Elos and the coefficients) drawn from the ladder's joint
    posterior, its measured ladder the truth plus an error from the same covariance."""
    ladder = load_ladder(ladder_file)
    if ladder.draws is None:
        raise SystemExit(f"{ladder_file}: a one-nu ladder; the draw model's coverage is of "
                         "a ladder fitted with it")
    use = usable(ladder.rungs, read_games(ladder_file.with_name(LADDER_GAMES)), ladder.engine,
                 rule=ladder.adjudication)
    version = version_of(ladder_file, sha256_file(ladder_file))
    rows = []
    for elo in elos:
        result = ladder_coverage.coverage(ladder, use, elo, runs, target, seed)
        two = [r for r in result if not r.one_sided]
        rows.append({
            "ladder": ladder_file.parent.name, "version": str(version.number if version else ""),
            "true_elo": f"{elo:.0f}", "runs": str(len(result)), "target": f"{target:g}",
            "seed": str(seed), "coverage": f"{np.mean([r.covered for r in result]):.3f}",
            "one_sided": f"{np.mean([r.one_sided for r in result]):.3f}",
            "median_games": f"{np.median([r.games for r in result]):.0f}",
            "games_p10": f"{np.percentile([r.games for r in result], 10):.0f}",
            "games_p90": f"{np.percentile([r.games for r in result], 90):.0f}",
            "median_half_width": f"{np.median([r.half_width for r in two]):.1f}",
            "median_error": f"{np.median([r.mean - elo for r in two]):.1f}",
            "limited": f"{np.mean([r.limited for r in result]):.3f}"})
    return rows


def coverage_command(args: argparse.Namespace) -> None:
    """Simulate, print a row per strength, and with --write keep them."""
    rows = production_rows(REFERENCE_LADDER, args.runs, args.target, args.seed)
    print(coverage_markdown(rows))
    if args.write:
        write_csv(COVERAGE, list(FIELDS), rows)
        print(f"wrote {COVERAGE}")


def refit_markdown(data: dict[str, Any]) -> str:
    """The refit's fit against one nu, every rating before and after, the doubtful gaps."""
    dev, ll, held = data["deviance"], data["log_lik"], data["held_out"]
    one, new = dev["one_nu"], dev["draw_model"]
    def p_value(d: dict[str, Any]) -> str:
        p = float(stats.chi2.sf(d["deviance"], d["df"]))
        return f"p = {p:.2g}" if p >= 1e-10 else "p < 1e-10"
    coef = ", ".join(f"{c:+.3f} (sd {s:.3f})" for c, s in zip(data["coef"], data["coef_sd"],
                                                               strict=True))
    lo, hi = data["range"]
    head = (
        f"Refitted with the draw model (version {data['version']}, {data['games']:,} games; "
        f"the same prior and settings, most weight on {data['prior_weight']['shift_sd']:g} "
        f"and {data['prior_weight']['rung_sd']:g} ({data['prior_weight']['weight']:.0%}); "
        f"the one-nu fit from the same code reproduces the committed ladder within "
        f"{data['reproduced']:.2f} Elo): log nu = {coef} in x, x = (the pair's mean Elo - "
        f"{data['centre']:,.0f}) / {data['scale']:,.0f}, the mean clipped to {lo:,.0f}-"
        f"{hi:,.0f} (the range of the pairs fitted).")
    text = [*textwrap.wrap(head, 95), "",
        "| | one nu (committed) | draw model (refit) |", "|---|---|---|",
        f"| log likelihood, the fitted games | {ll['one_nu']:,.1f} | {ll['draw_model']:,.1f} |",
        f"| deviance by rung pair ({one['pairs']} pairs; win/draw/loss) | {one['deviance']:,.0f}"
        f" on {one['df']} df ({p_value(one)}) | {new['deviance']:,.0f} on {new['df']} df "
        f"({p_value(new)}) |",
        f"| of it, draw or not | {one['draws']:,.0f} | {new['draws']:,.0f} |",
        f"| log likelihood, {held['games']:,} held-out games | {held['one_nu']:,.1f} | "
        f"{held['draw_model']:,.1f} |"]
    moves = []
    for kind in dict.fromkeys(r["kind"] for r in data["ratings"]):
        mine = [r for r in data["ratings"] if r["kind"] == kind and r["change_in_sd"] is not None]
        change = [r["change"] for r in mine]
        sds = [abs(r["change_in_sd"]) for r in mine]
        moves.append(f"{len(mine)} {kind}s by {min(change):+.0f} to {max(change):+.0f} Elo "
                     f"({min(sds):.2f}-{max(sds):.2f} of their own sds)")
    text += ["", *textwrap.wrap("On the refit, with the random mover still the zero: "
                                + "; ".join(moves) + ".", 95), ""]
    text += ["| rating | games | before: one nu (90%) | after: draw model (90%) | change | "
             "in sds of before |", "|---|---|---|---|---|---|"]
    for r in data["ratings"]:
        in_sd = "-" if r["change_in_sd"] is None else f"{r['change_in_sd']:+.1f}"
        text.append(f"| {r['kind']}: {r['name']} | {r['games']:,} | {r['before']:.0f} "
                    f"[{r['before_lo']:.0f}, {r['before_hi']:.0f}] | {r['after']:.0f} "
                    f"[{r['after_lo']:.0f}, {r['after_hi']:.0f}] | {r['change']:+.0f} | "
                    f"{in_sd} |")
    doubtful = [g for g in data["gaps"] if g["p_under"] > 0.1 or g["p_over"] > 0.1]
    low, high = GAP_GOAL
    text += ["", f"Adjacent gaps on the refit's posterior with a chance above 10% of lying "
             f"outside {low:.0f}-{high:.0f} Elo (of {len(data['gaps'])}):", "",
             "| rungs | gap | sd | P(under 50) | P(over 150) |", "|---|---|---|---|---|"]
    text += [f"| {g['low']} -> {g['high']} | {g['gap']:.0f} | {g['sd']:.0f} | "
             f"{g['p_under']:.0%} | {g['p_over']:.0%} |" for g in doubtful]
    return "\n".join(text)


def decision(rows: list[dict[str, str]]) -> tuple[bool, str]:
    """The goal: play's 90% intervals cover COVER of the true Elos at every strength when the
    games follow the draw model, and the median run reaches the target."""
    covered = [float(r["coverage"]) for r in rows]
    cover_ok = all(COVER[0] <= c <= COVER[1] for c in covered)
    target = float(rows[0]["target"])
    width_ok = all(float(r["median_half_width"]) <= target for r in rows)
    return cover_ok and width_ok, (
        f"coverage {min(covered):.1%}-{max(covered):.1%} at the five strengths "
        f"({'inside' if cover_ok else 'outside'} {COVER[0]:.0%}-{COVER[1]:.0%}), the median "
        f"half-width {'at' if width_ok else 'above'} +-{target:.0f} in a median of "
        f"{min(int(r['median_games']) for r in rows)}-"
        f"{max(int(r['median_games']) for r in rows)} games")


def coverage_markdown(rows: list[dict[str, str]]) -> str:
    """The simulation's table and the goal's verdict."""
    lines = ["| true Elo | coverage | median error | median games (10th-90th percentile) | "
             "median half-width | one-sided | stopped by the ladder |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {float(r['true_elo']):,.0f} | {float(r['coverage']):.1%} | "
                     f"{float(r['median_error']):+.0f} | {r['median_games']} ({r['games_p10']}"
                     f"-{r['games_p90']}) | +-{float(r['median_half_width']):.0f} | "
                     f"{float(r['one_sided']):.1%} | {float(r['limited']):.1%} |")
    runs = min(int(r["runs"]) for r in rows)
    ok, why = decision(rows)
    text = (f"{runs} runs per strength on {rows[0]['ladder']} version {rows[0]['version']}, "
            f"--seed={rows[0]['seed']} (Monte Carlo sd of a coverage about "
            f"+-{100 * np.sqrt(0.09 / runs):.1f} points), target "
            f"+-{float(rows[0]['target']):.0f}. The goal is "
            + ("met: " if ok else "not met: ") + why + ".")
    return "\n".join([*lines, "", *textwrap.wrap(text, 95)])


def main() -> None:
    """Dispatch to refit or coverage."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("refit", help="the draw-model refit and every rating's change")
    r.add_argument("--write", action="store_true", help=f"keep it in {REFIT.name}")
    r.set_defaults(handler=refit_command)
    c = sub.add_parser("coverage", help="play's coverage when games follow the draw model")
    c.add_argument("--runs", type=int, default=200, help="truths (runs per strength)")
    c.add_argument("--target", type=float, default=70.0)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--write", action="store_true", help=f"keep the rows in {COVERAGE.name}")
    c.set_defaults(handler=coverage_command)
    args = parser.parse_args()
    args.handler(args)


if __name__ == "__main__":
    run_cli(main)
