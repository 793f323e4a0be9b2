"""Static scores to game Elo across player families: the fit, left out one family at a time.

Reads the validation table (bench/data/validation_players.csv: the ladder's rungs and players
of other families, each with its static scores and its game Elo by `play`, made by
bench/validation_players.py), fits the mixed model of chess_eval/benchmark/static/family_fit.py with
each candidate feature set, and predicts every player from the fit on the other families.
Prints, per feature set, the mean absolute error by family, how many 90% intervals hold the
player's game Elo (goal 85-95%) and how many players the profile check calls unlike every
fitted family. A feature set is admissible only when its features can be told apart (no two
correlate beyond MAX_CORRELATION over the players) and its fit weighs each as chess says it
must (a higher accuracy never predicts a lower Elo); among those, the one with the smallest
held-out error is chosen: the 90% interval score (width, plus 20 times any miss), averaged
within each family, then over families.
With --write it writes the committed fit (data/game_elo_fit.json) that static runs read.

    python -m bench.family_fit                          # the table
    python -m bench.family_fit --write data/game_elo_fit.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from bench.ladder_map import SOURCE, TARGET
from bench.validation_players import MAP_DATA, read_table
from chess_eval.benchmark.core.data import LADDER_MAP, ROOT
from chess_eval.benchmark.static.family_fit import (
    FEATURE_SETS,
    Rated,
    against_chess,
    fit_families,
    fit_json,
    leave_one_family_out,
    unidentifiable,
)
from chess_eval.benchmark.static.prediction import REFERENCE_SCALE
from chess_eval.benchmark.stats.ladder_map import load_map
from chess_eval.figures import save_figure
from chess_eval.files import atomic_write, sha256_file

DATA = ROOT / "bench" / "data" / "validation_players.csv"
METRICS = ("accuracy", "best_move_rate", "grade_blunder", "grade_mistake")
REFERENCE_TABLE = "reference"  # the rows of the players' game Elos on the reference scale


def load(path: Path, ladder: str = "ladder.csv") -> list[Rated]:
    """The table's players with their game Elos on `ladder`; REFERENCE_TABLE: on the
    reference scale, measured on the 17.1 ladder where there is that reading (the table's,
    or the map's players'), else the Stockfish 15.1 reading converted by the committed map (its
    error added)."""
    rows = read_table(path)
    if ladder != REFERENCE_TABLE:
        return [_rated(r, float(r["game_elo"]), float(r["game_elo_sd"]))
                for r in rows if r["ladder"] == ladder and r["accuracy"]]
    conv = load_map(LADDER_MAP)
    if conv is None:
        name = LADDER_MAP.relative_to(ROOT)
        raise SystemExit(f"no {name}: fit the map first (python -m bench.ladder_map "
                         f"--write {name}), or give --ladder ladder.csv")
    # Measured on the reference ladder: the cross-ladder rows, and the map's players.
    extra = read_table(MAP_DATA) if MAP_DATA.exists() else []
    measured = {r["player"]: r for r in [*rows, *extra] if r["ladder"] == TARGET}
    out = []
    for r in (r for r in rows if r["ladder"] == SOURCE and r["accuracy"]):  # static known
        if r["player"] in measured:
            m = measured[r["player"]]
            out.append(_rated(r, float(m["game_elo"]), float(m["game_elo_sd"])))
        else:
            out.append(_rated(r, *conv.convert(float(r["game_elo"]),
                                               float(r["game_elo_sd"]))))
    return out


def _rated(r: dict[str, str], elo: float, sd: float) -> Rated:
    return Rated(r["player"], r["family"], elo, sd,
                 {m: (float(r[m]), float(r[f"{m}_lo"]), float(r[f"{m}_hi"])) for m in METRICS})


def summary(lofo: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per family and overall: players, MAE, coverage of the 90% intervals (players the
    profile check let through), and how many it called unlike every fitted family."""
    out = {}
    groups = sorted({x["family"] for x in lofo})
    for name in [*groups, "all"]:
        mine = [x for x in lofo if name in ("all", x["family"])]
        shown = [x for x in mine if not x["unlike"]]
        out[name] = {
            "players": len(mine),
            "mae": float(np.mean([abs(x["predicted"] - x["elo"]) for x in mine])),
            "covered": float(np.mean([x["lo"] <= x["elo"] <= x["hi"] for x in shown]))
            if shown else float("nan"),
            "shown": len(shown),
            "unlike": len(mine) - len(shown),
        }
    return out


def interval_score(x: dict[str, Any]) -> float:
    """The 90% interval's score (Gneiting and Raftery's, alpha 0.1): its width, plus 20 times
    how far the measured Elo falls outside it. Lower is better; it rewards narrow intervals
    only while they hold."""
    miss = max(0.0, x["lo"] - x["elo"]) + max(0.0, x["elo"] - x["hi"])
    return float(x["hi"] - x["lo"] + 2 / 0.1 * miss)


def family_error(lofo: list[dict[str, Any]]) -> float:
    """The held-out error of a feature set: the mean over families of each family's mean
    interval score when left out (a family of 32 rungs counts as much as one of three)."""
    families = sorted({x["family"] for x in lofo})
    return float(np.mean([np.mean([interval_score(x) for x in lofo if x["family"] == f])
                          for f in families]))


def table(features: tuple[str, ...], lofo: list[dict[str, Any]]) -> str:
    """The leave-one-family-out table of one feature set, as markdown."""
    lines = [f"features: {' + '.join(features)}; held-out interval score "
             f"{family_error(lofo):.0f} (mean over families)", "",
             "| family left out | players | MAE (Elo) | 90% intervals holding | called unlike |",
             "|---|---|---|---|---|"]
    for name, s in summary(lofo).items():
        held = (f"{s['covered']:.0%} of {s['shown']}" if s["shown"] else "none shown")
        lines.append(f"| {name} | {s['players']} | {s['mae']:.0f} | {held} | {s['unlike']} |")
    return "\n".join(lines)


def main() -> None:
    """Fit, check by family, print; optionally write the fit."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--ladder", default=REFERENCE_TABLE,
                   help=f"the ladder whose game Elos are fitted (default {REFERENCE_TABLE}: "
                   "the reference scale, ladder.csv's players converted by the map)")
    p.add_argument("--scale", default=REFERENCE_SCALE, help="the scale the fit records")
    p.add_argument("--questions", type=Path, default=ROOT / "questions.csv")
    p.add_argument("--write", type=Path, default=None,
                   help="write the chosen fit here (the committed one is data/game_elo_fit.json)")
    args = p.parse_args()
    players = load(args.data, args.ladder)
    results = {}
    for features in FEATURE_SETS:
        why = unidentifiable(players, features)
        if why is None:
            wrong = against_chess(fit_families(players, features))
            why = f"{', '.join(wrong)} weighed against chess" if wrong else None
        if why is not None:
            print(f"features: {' + '.join(features)}: refused, {why}\n")
            continue
        lofo = leave_one_family_out(players, features)
        results[features] = lofo
        print(table(features, lofo) + "\n")
    chosen = min(results, key=lambda f: family_error(results[f]))
    print(f"chosen: {' + '.join(chosen)} (the smallest leave-one-family-out interval score "
          "among the admissible sets, each family weighed alike)")
    fit = fit_families(players, chosen, sha256_file(args.questions), args.scale)
    print(f"fit on all {fit.n} players of {len(fit.families)} families: coefficients "
          f"{', '.join(f'{c:.0f}' for c in fit.coef)}; within-family sd "
          f"{fit.residual_sd:.0f}, between-family sd {fit.family_sd:.0f}")
    if args.write:
        with atomic_write(args.write) as handle:
            json.dump(fit_json(fit, results[chosen]), handle, indent=1)
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()


def figure(data: dict[str, Any], path: Path) -> None:
    """docs/static_vs_game.png: every player's static accuracy against its game Elo, by
    family; and each player's game Elo predicted with its family left out, against the
    measured one (drawn from the committed fit file's data and its check)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    players, lofo = data["players"], data["leave_one_family_out"]
    families = sorted({p["family"] for p in players})
    colours = {f: plt.get_cmap("tab10")(i) for i, f in enumerate(families)}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    for family in families:
        mine = [p for p in players if p["family"] == family]
        elo = np.array([p["elo"] for p in mine])
        acc = np.array([p["accuracy"] for p in mine])
        axes[0].errorbar(elo, acc, xerr=1.645 * np.array([p["elo_sd"] for p in mine]),
                         yerr=[acc - [p["accuracy_lo"] for p in mine],
                               [p["accuracy_hi"] for p in mine] - acc],
                         fmt="o", ms=4, capsize=2, color=colours[family], label=family)
        held = [x for x in lofo if x["family"] == family]
        measured = np.array([x["elo"] for x in held])
        predicted = np.array([x["predicted"] for x in held])
        axes[1].errorbar(measured, predicted, yerr=[predicted - [x["lo"] for x in held],
                                                    [x["hi"] for x in held] - predicted],
                         fmt="o", ms=4, capsize=2, color=colours[family], label=family)
        unlike = [x for x in held if x["unlike"]]
        if unlike:  # no interval is reported for these: marked apart
            axes[1].plot([x["elo"] for x in unlike], [x["predicted"] for x in unlike], "kx",
                         ms=7)
    top = max(p["elo"] for p in players) + 200
    axes[1].plot([-200, top], [-200, top], "k--", lw=1)
    axes[0].set(xlabel="game Elo by play (90%)", ylabel="static accuracy (90%)",
                title="Static accuracy and game Elo, by family")
    axes[1].set(xlabel="game Elo by play", ylabel="predicted, family left out (90%)",
                title="Each family predicted by the others (x: called unlike)")
    axes[0].legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path)
