"""Game Elo end to end, the ladder's error included: coverage of play's 90% intervals.

Each run draws the rungs' true Elos from the committed ladder's own posterior (its Elos and
covariance, the random mover fixed at 0), re-measures the ladder as it was really measured
(every pair and game count of the games file, outcomes drawn from those true Elos), refits it
(Elos and covariance), then rates a simulated player of known Elo against the refitted ladder
with play's sampler and stop rule, outcomes from the true Elos of the rungs it chose. A ladder
measured with too few games shows up here as undercoverage unless its error is in the
interval. Goals: coverage 87-93% at every true Elo 0, 200, ..., 2800; a median total
half-width (the ladder's part included) of 70 or less in a median of at most 150 games at true
Elos 0-2000, and at most 110 at 2,350 on the reference ladder; reported with the share of runs
stopped by the ladder. With --write, each true Elo's row is kept in a table under the ladder's
name and version (the docs' before/after table reads it). Rank
probabilities: two players at most 150 Elo apart rated against one re-measured ladder,
compared with the leaderboard's shared-ladder draws; the event "A above B" stated at p should
happen about p of the time. `remeasure` and `rate_player` also take a draw model (log nu by
the pair's level, chess_eval/benchmark/stats/draws.py) to draw outcomes from: bench/draw_refit.py's
coverage under it.
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bench.elo_coverage import covers
from bench.games_coverage import outcome
from chess_eval.benchmark.arena.ladder import Ladder, by_elo, load_ladder
from chess_eval.benchmark.arena.versions import version_of
from chess_eval.benchmark.core.data import FIRST_LADDER, LADDER_GAMES, games_path, ladder_path
from chess_eval.benchmark.games.sampler import (
    PRIOR,
    SamplerConfig,
    finished,
    for_ladder,
    game_elo,
    ladder_weights,
    limited_by_ladder,
    posterior,
    schedule,
)
from chess_eval.benchmark.ladders.calibration import Usable, fit, read_games, usable
from chess_eval.benchmark.leaderboard.ranking import Shared, ranks
from chess_eval.benchmark.stats import btd, draws
from chess_eval.benchmark.stats.elo import ABOVE, BELOW
from chess_eval.cli import run_cli
from chess_eval.files import atomic_write, sha256_file

ROOT = Path(__file__).resolve().parents[1]
CLOSE = 150.0  # rank calibration: the two players' true Elos are at most this far apart
TABLE = ROOT / "bench" / "data" / "ladder_coverage.csv"  # --write's default
FIELDS = ("ladder", "version", "ladder_games", "true_elo", "runs", "target", "seed",
          "coverage", "one_sided", "median_games", "median_half_width", "limited")


@dataclass(frozen=True)
class Run:
    """One simulated play run against one re-measured ladder."""

    covered: bool
    one_sided: bool
    games: int
    half_width: float  # the total 90% half-width, the ladder's part included (NaN: one-sided)
    limited: bool
    mean: float  # NaN for a one-sided result
    weights: np.ndarray  # dR/dE over the refitted ladder's rungs (in the truth's order)
    own_sd: float


def _joint_error(ladder: Ladder, rng: np.random.Generator) -> np.ndarray:
    """One draw of N(0, the ladder's joint covariance): its rungs' Elos and, on a ladder with
    a draw model, its coefficients after them."""
    values, vectors = np.linalg.eigh(ladder.joint_cov)
    root = vectors * np.sqrt(np.clip(values, 0, None))
    out: np.ndarray = root @ rng.standard_normal(len(values))
    return out


def _moved(ladder: Ladder, error: np.ndarray) -> Ladder:
    """The ladder with its rungs' Elos (and its draw model's coefficients) moved by `error`."""
    n = len(ladder.rungs)
    rungs = [replace(r, elo=float(e)) for r, e in
             zip(ladder.rungs, ladder.elos + error[:n], strict=True)]
    model = ladder.draws
    return replace(ladder, rungs=rungs, draws=None if model is None else model.with_coef(
        np.asarray(model.coef) + error[n:]))


def draw_truth(ladder: Ladder, rng: np.random.Generator) -> Ladder:
    """True rung Elos drawn from the ladder's posterior (normal: its Elos and covariance; the
    anchor, with no variance, stays where it is); on a ladder with a draw model, its true
    coefficients with them, from the joint covariance (the truth's `draws`)."""
    return _moved(ladder, _joint_error(ladder, rng))


def remeasure(truth: Ladder, games: Usable, rng: np.random.Generator,
              model: draws.DrawModel | None = None) -> Ladder:
    """The calibration replayed: the same pairs, outcomes drawn from the true Elos (and the
    truth's draw model, where one is given: else its one nu), fitted with one nu."""
    model = model if model is not None else truth.draws
    weak, strong = truth.elos[games.weak], truth.elos[games.strong]
    win, draw, _ = btd.probabilities(weak - strong, truth.nu) if model is None else \
        draws.probabilities(weak, strong, model)
    u = rng.random(len(games.weak))  # one draw a game, as outcome() takes, all at once
    scores = np.where(u < win, btd.WIN, np.where(u < win + draw, btd.DRAW, btd.LOSS))
    return fit(truth.rungs, Usable(games.weak, games.strong, scores, 0, 0), truth.engine)


def rate_player(true_elo: float, truth: Ladder, measured: Ladder, target: float,
                rng: np.random.Generator, seed: int, model: draws.DrawModel | None = None
                ) -> Run:
    """play's schedule against the measured ladder; outcomes from the rungs' true Elos (and
    the truth's draw model, where one is given: else its one nu)."""
    true_of = {r.name: r.elo for r in truth.rungs}
    model = model if model is not None else truth.draws  # the truth's own draw model
    config = for_ladder(SamplerConfig(tuple(measured.elos), measured.nu, PRIOR, target),
                        measured)
    opponents: list[float] = []
    scores: list[float] = []
    while True:
        for rung in schedule(len(scores), opponents, scores, config, 2, seed):
            opponents.append(config.elos[rung])
            rival = true_of[measured.rungs[rung].name]
            scores.append(outcome(true_elo, rival, truth.nu, rng) if model is None else
                          _outcome(true_elo, rival, model, rng))
        post = posterior(opponents, scores, config)
        if finished(post, len(scores), config):
            break
    est = game_elo(opponents, scores, config)
    order = {r.name: i for i, r in enumerate(truth.rungs)}
    weights = np.zeros(len(truth.rungs))
    for name, w in zip((r.name for r in measured.rungs),
                       ladder_weights(opponents, post.mean, config, scores), strict=True):
        weights[order[name]] = w
    one = est.kind in (BELOW, ABOVE)
    return Run(covers(est, true_elo), one, len(scores),
               float("nan") if one else post.half_width,
               limited_by_ladder(post, config), est.mean, weights,
               float(np.sqrt(max(post.sd ** 2 - post.ladder ** 2, 0))))


def _outcome(elo: float, rival: float, model: draws.DrawModel,
             rng: np.random.Generator) -> float:
    """One game's score under a draw model (one uniform draw, as games_coverage.outcome)."""
    win, draw, _ = draws.probabilities(elo, rival, model)
    u = rng.random()
    return btd.WIN if u < win else btd.DRAW if u < win + draw else btd.LOSS


def remeasure_normal(truth: Ladder, ladder: Ladder, rng: np.random.Generator) -> Ladder:
    """A ladder fitted with a prior (another engine's ladder, averaged over its settings) is
    too costly to refit thousands of times: its re-measurement is drawn instead, the truth
    plus an error from the ladder's own covariance, which the measured ladder reports."""
    return by_elo(replace(_moved(truth, _joint_error(ladder, rng)), cov=ladder.cov,
                          joint=ladder.joint))


def _measure(truth: Ladder, ladder: Ladder, games: Usable, rng: np.random.Generator) -> Ladder:
    """One re-measurement of the ladder: refitted from its games, or drawn (remeasure_normal)
    for a ladder fitted with a prior."""
    return remeasure_normal(truth, ladder, rng) if ladder.prior else \
        remeasure(truth, games, rng)


def coverage(ladder: Ladder, games: Usable, true_elo: float, runs: int, target: float,
             seed: int) -> list[Run]:
    """`runs` end-to-end runs at one true Elo, each on its own truth drawn from `ladder`."""
    rng = np.random.default_rng([seed, int(true_elo)])
    out = []
    for i in range(runs):
        truth = draw_truth(ladder, rng)
        out.append(rate_player(true_elo, truth, _measure(truth, ladder, games, rng), target,
                               rng, seed * 1_000_003 + i))
    return out


def rank_calibration(ladder: Ladder, games: Usable, runs: int, target: float,
                     seed: int) -> list[tuple[float, bool]]:
    """(stated P(A above B), whether A was truly above B) for pairs rated on one ladder."""
    rng = np.random.default_rng([seed, 7])
    out = []
    for i in range(runs):
        truth = draw_truth(ladder, rng)
        measured = _measure(truth, ladder, games, rng)
        a = rng.uniform(800, 2400)
        b = a + rng.uniform(-CLOSE, CLOSE)  # close enough that the order is in doubt
        ra = rate_player(a, truth, measured, target, rng, 2 * i)
        rb = rate_player(b, truth, measured, target, rng, 2 * i + 1)
        if ra.one_sided or rb.one_sided:
            continue
        shared = Shared(np.array([ra.weights, rb.weights]), _cov_in(truth, measured))
        stated = ranks(["a", "b"], [ra.mean, rb.mean], [ra.own_sd, rb.own_sd], i, 4000,
                       shared)
        p_a = stated[0].above_next if stated[0].name == "a" else 1 - stated[0].above_next
        out.append((float(p_a), bool(a > b)))
    return out


def _cov_in(truth: Ladder, measured: Ladder) -> np.ndarray:
    """The measured covariance in the truth's rung order."""
    order = [[r.name for r in measured.rungs].index(r.name) for r in truth.rungs]
    return measured.cov[np.ix_(order, order)]


def summary_row(ladder: Path, true_elo: float, result: list[Run], target: float,
                seed: int) -> dict[str, str]:
    """One true Elo's figures as a row of the table, under the ladder's name and version."""
    version = version_of(ladder, sha256_file(ladder))
    widths = [r.half_width for r in result if not r.one_sided]
    return {"ladder": ladder.parent.name, "version": str(version.number) if version else "",
            "ladder_games": str(version.games) if version else "", "true_elo": f"{true_elo:.0f}",
            "runs": str(len(result)), "target": f"{target:g}", "seed": str(seed),
            "coverage": f"{np.mean([r.covered for r in result]):.3f}",
            "one_sided": f"{np.mean([r.one_sided for r in result]):.3f}",
            "median_games": f"{np.median([r.games for r in result]):.0f}",
            "median_half_width": f"{np.median(widths):.1f}" if widths else "",
            "limited": f"{np.mean([r.limited for r in result]):.3f}"}


def read_table(path: Path) -> list[dict[str, str]]:
    """The table's rows ([] when it does not exist yet)."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    """Replace the table's rows of the same ladder, version and true Elo by `rows`."""
    keys = {(r["ladder"], r["version"], r["true_elo"]) for r in rows}
    kept = [r for r in read_table(path) if (r["ladder"], r["version"], r["true_elo"]) not in keys]
    ordered = sorted(kept + rows, key=lambda r: (r["ladder"], int(r["version"] or 0),
                                                 float(r["true_elo"])))
    with atomic_write(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(ordered)


def main() -> None:
    """Print coverage per true Elo, games, how often the ladder limited, rank calibration."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=500, help="runs per true Elo (default 500)")
    p.add_argument("--elos", type=float, nargs="*", default=list(range(0, 2801, 200)))
    p.add_argument("--target", type=float, default=70.0)
    p.add_argument("--ladder", type=ladder_path, default=FIRST_LADDER)
    p.add_argument("--games", type=games_path, default=None,
                   help="the calibration games (default: the ladder's, beside it)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--write", type=Path, nargs="?", const=TABLE, default=None,
                   help="keep each true Elo's row in this table (default when given without "
                   f"a path: {TABLE.relative_to(ROOT)})")
    p.add_argument("--no-ranks", action="store_true", help="leave out the rank calibration")
    args = p.parse_args()
    ladder = load_ladder(args.ladder)
    games_file = args.games or args.ladder.with_name(LADDER_GAMES)
    games = usable(ladder.rungs, read_games(games_file), ladder.engine,
                   rule=ladder.adjudication)
    how = ("its re-measurement drawn from its covariance (it was fitted with a prior)"
           if ladder.prior else f"re-measured from {len(games.weak)} games")
    print(f"ladder {args.ladder.name}: {len(ladder.rungs)} rungs, true Elos drawn from its "
          f"posterior and {how} each run; target +-{args.target:.0f}; {args.runs} runs per "
          "true Elo")
    if args.elos:
        print("| true Elo | coverage | one-sided | median games | median half-width (total) "
              "| stopped by the ladder |\n|---|---|---|---|---|---|")
    rows = []
    for elo in args.elos:
        result = coverage(ladder, games, elo, args.runs, args.target, args.seed)
        row = summary_row(args.ladder, elo, result, args.target, args.seed)
        rows.append(row)
        width = f"{float(row['median_half_width']):.0f}" if row["median_half_width"] else "nan"
        print(f"| {elo:.0f} | {float(row['coverage']):.1%} | {float(row['one_sided']):.1%} | "
              f"{row['median_games']} | {width} | {float(row['limited']):.1%} |", flush=True)
    if args.write and rows:
        write_rows(args.write, rows)
        print(f"wrote {len(rows)} rows to {args.write}")
    if args.no_ranks:
        return
    pairs = rank_calibration(ladder, games, args.runs, args.target, args.seed)
    stated = np.array([p for p, _ in pairs])
    happened = np.array([h for _, h in pairs])
    print("\n| stated P(A above B) | pairs | happened |\n|---|---|---|")
    for lo, hi in ((0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.0001)):
        sel = (stated >= lo) & (stated < hi)
        if sel.any():
            print(f"| {lo:.1f}-{min(hi, 1):.1f} (mean {stated[sel].mean():.2f}) | {sel.sum()} | "
                  f"{happened[sel].mean():.2f} |")


if __name__ == "__main__":
    sys.exit(run_cli(main))
