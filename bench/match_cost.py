"""What an Elo difference costs, on one scale: `match` against `play`, simulated.

Both routes are read through the reference ladder's model (BTD with its draw parameter nu),
so their half-widths are comparable. For players DISTANCES apart (centred on CENTRE), each
repetition draws the rungs' true Elos from the reference ladder's posterior and a measured
ladder from them (bench/ladder_coverage.py's remeasure_normal), then:

- **match**: colour-reversed pairs, each opening giving White an advantage drawn from
  N(WHITE, OPENING_SD) Elo (so the two games of a pair are not independent, as real openings
  are not), until match's stop rule (stats.pairs.finished) at +-target (each of TARGETS, a
  90% half-width on the difference); its 90% interval is
  checked against the true difference, and so is the logistic reading of the same games
  (the figure earlier versions printed), to show what reading it on another scale cost.
- **two play runs**: each player rated by play's own sampler and stop rule against the
  measured ladder (ladder_coverage.rate_player) to +-target / sqrt(2); the difference's
  half-width from both runs' own errors and the ladder's shared part through their
  weights, as compare reads it.
- **one play run**: one player already rated (to +-target / sqrt(2)): only the other's run
  is bought.

Requests: a match game asks both players, a play game one; the requests a game costs are the
real ones measured on the served engine players (bench/data/head_to_head_cost.csv: a match
game and a play game of the same pair), so requests = games x that pair's per-game count.

    python -m bench.match_cost [--reps 40] [--match-reps 1000] [--write]
    # --write: bench/data/match_cost.csv
"""

from __future__ import annotations

import argparse
import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.ladder_coverage import _cov_in, draw_truth, rate_player, remeasure_normal
from chess_eval.benchmark.arena.ladder import Ladder, load_ladder
from chess_eval.benchmark.core.data import REFERENCE_LADDER
from chess_eval.benchmark.stats import btd
from chess_eval.benchmark.stats.pairs import MAX_GAMES, finished, pair_stats
from chess_eval.cli import run_cli
from chess_eval.files import atomic_write

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "bench" / "data" / "match_cost.csv"
REAL = ROOT / "bench" / "data" / "head_to_head_cost.csv"  # the real per-game requests
DISTANCES = (0.0, 150.0, 300.0)  # true A - B, Elo
# The difference's 90% half-widths asked for: match's default (70) is out of two play runs'
# reach (each would need +-49, below what the ladder's own error lets play reach).
TARGETS = (100.0, 150.0)
CENTRE = 1500.0  # the pair's mean true Elo
WHITE = 35.0  # White's mean advantage from an opening, Elo (engine games)
OPENING_SD = 60.0  # its spread over the book's openings, Elo
FIELDS = ("target", "distance", "reps", "route", "median_games", "games_p10", "games_p90",
          "median_requests", "median_half_width", "coverage", "logistic_coverage")


@dataclass(frozen=True)
class MatchRun:
    """One simulated match."""

    games: int
    half_width: float  # the BTD interval's (inf: a one-sided bound)
    covered: bool  # the BTD interval holds the true difference
    logistic_covered: bool  # the logistic reading of the same games holds it


def play_match(d: float, nu: float, target: float, rng: np.random.Generator) -> MatchRun:
    """Pairs to the stop rule between players d Elo apart; the opening favours White."""
    totals: list[float] = []
    while True:
        stats = pair_stats(totals, nu) if totals else None
        if finished(stats, 2 * len(totals), target, MAX_GAMES):
            break
        edge = rng.normal(WHITE, OPENING_SD)
        total = 0.0
        for delta in (d + edge, d - edge):  # A with White, then with Black
            win, draw, _ = btd.probabilities(delta, nu)
            u = rng.random()
            total += btd.WIN if u < win else btd.DRAW if u < win + draw else btd.LOSS
        totals.append(total)
    assert stats is not None
    logistic = pair_stats(totals, 0.0)
    return MatchRun(2 * len(totals), stats.half_width, stats.elo_lo <= d <= stats.elo_hi,
                    logistic.elo_lo <= d <= logistic.elo_hi)


def play_routes(d: float, ladder: Ladder, target: float, rng: np.random.Generator,
                seed: int) -> tuple[int, int, float, float, bool]:
    """Two play runs on one measured ladder: A's games, B's games, the difference's half-
    width from both runs and from A's run beside B's existing rating, and whether the
    two-run interval holds the truth."""
    truth = draw_truth(ladder, rng)
    measured = remeasure_normal(truth, ladder, rng)
    a = rate_player(CENTRE + d / 2, truth, measured, target, rng, 2 * seed)
    b = rate_player(CENTRE - d / 2, truth, measured, target, rng, 2 * seed + 1)
    cov = _cov_in(truth, measured)
    shared = a.weights - b.weights
    var = a.own_sd ** 2 + b.own_sd ** 2 + float(shared @ cov @ shared)
    half = btd.Z90 * math.sqrt(var)
    covered = abs((a.mean - b.mean) - d) <= half if not (a.one_sided or b.one_sided) else False
    return a.games, b.games, half, half, covered


def per_game_requests() -> tuple[float, float]:
    """Requests a match game and a play game cost, from the real served-engine run."""
    rows = {r["route"]: r for r in csv.DictReader(REAL.open(encoding="utf-8"))}
    match, play = rows["match"], rows["two play runs"]
    return (int(match["requests"]) / int(match["games"]),
            int(play["requests"]) / int(play["games"]))


def _quantiles(values: list[float]) -> tuple[float, float, float]:
    q = np.quantile(np.array(values, float), [0.5, 0.1, 0.9])
    return float(q[0]), float(q[1]), float(q[2])


def rows_at(target: float, d: float, ladder: Ladder, reps: int, match_reps: int,
            seed: int) -> list[dict[str, object]]:
    """The three routes' rows at one target half-width and distance (matches, cheap to
    simulate, repeated more often: their coverage is the figure that needs it)."""
    rng = np.random.default_rng([seed, int(target), int(d)])
    match_req, play_req = per_game_requests()
    matches = [play_match(d, ladder.nu, target, rng) for _ in range(match_reps)]
    plays = [play_routes(d, ladder, target / math.sqrt(2), rng, seed * 10_007 + i)
             for i in range(reps)]
    out = []
    m_games = [float(m.games) for m in matches]
    med, p10, p90 = _quantiles(m_games)
    out.append({"route": "match", "median_games": med, "games_p10": p10, "games_p90": p90,
                "median_requests": med * match_req,
                "median_half_width": _quantiles([m.half_width for m in matches])[0],
                "coverage": float(np.mean([m.covered for m in matches])),
                "logistic_coverage": float(np.mean([m.logistic_covered for m in matches]))})
    two = [float(a + b) for a, b, *_ in plays]
    med, p10, p90 = _quantiles(two)
    out.append({"route": "two play runs", "median_games": med, "games_p10": p10,
                "games_p90": p90, "median_requests": med * play_req,
                "median_half_width": _quantiles([p[2] for p in plays])[0],
                "coverage": float(np.mean([p[4] for p in plays])), "logistic_coverage": ""})
    one = [float(a) for a, *_ in plays]
    med, p10, p90 = _quantiles(one)
    out.append({"route": "one play run (the other rated)", "median_games": med,
                "games_p10": p10, "games_p90": p90, "median_requests": med * play_req,
                "median_half_width": _quantiles([p[3] for p in plays])[0], "coverage": "",
                "logistic_coverage": ""})
    return [{"target": int(target), "distance": int(d), "reps": n, **_rounded(r)}
            for r, n in zip(out, (match_reps, reps, reps), strict=True)]


def _rounded(row: dict[str, object]) -> dict[str, object]:
    return {k: (round(v, 3) if isinstance(v, float) and k.endswith("coverage") else
                round(v) if isinstance(v, float) else v) for k, v in row.items()}


def markdown(rows: list[dict[str, str]]) -> str:
    """The committed table as the docs show it, and what it says in one line per target."""
    lines = ["| 90% half-width asked | true difference | route | games (median; 10-90%) | "
             "requests (median) | half-width reached (median) | 90% interval holding |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        held = f"{float(r['coverage']):.0%}" if r["coverage"] else ""
        if r["logistic_coverage"]:
            held += f" (logistic reading: {float(r['logistic_coverage']):.0%})"
        lines.append(f"| +-{r['target']} | {r['distance']} | {r['route']} | "
                     f"{r['median_games']} ({r['games_p10']}-{r['games_p90']}) | "
                     f"{int(r['median_requests']):,} | +-{r['median_half_width']} | {held} |")
    lines.append("")
    for target in sorted({r["target"] for r in rows}, key=int):
        at = [r for r in rows if r["target"] == target]
        ratio = [float(m["median_games"]) / float(p["median_games"]) for m, p in
                 zip(at[0::3], at[1::3], strict=True)]
        req = [float(m["median_requests"]) / float(p["median_requests"]) for m, p in
               zip(at[0::3], at[1::3], strict=True)]
        one = [float(m["median_requests"]) / float(o["median_requests"]) for m, o in
               zip(at[0::3], at[2::3], strict=True)]
        lines.append(f"At +-{target}: the match takes {min(ratio):.2f}-{max(ratio):.2f} of two "
                     f"play runs' games and {min(req):.2f}-{max(req):.2f} of their requests; "
                     f"{min(one):.2f}-{max(one):.2f} of the requests of one play run where "
                     "the other model is already rated.")
    return "\n".join(lines)


def read(path: Path = TABLE) -> list[dict[str, str]]:
    """The committed table's rows."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def main() -> None:
    """Simulate every distance; print the table; with --write, commit it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=40, help="play routes a row")
    parser.add_argument("--match-reps", type=int, default=1000, help="matches a row")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    ladder = load_ladder(REFERENCE_LADDER)
    rows = [row for t in TARGETS for d in DISTANCES
            for row in rows_at(t, d, ladder, args.reps, args.match_reps, args.seed)]
    for row in rows:
        print(row)
    if args.write:
        with atomic_write(TABLE) as handle:
            writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {TABLE}")


if __name__ == "__main__":
    run_cli(main)
