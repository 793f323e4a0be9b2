"""Maia-1 nets rated on the ladders, through the path a language model takes.

Each of the nine nets (`maia:net=1100` ... `maia:net=1900`) is served by `benchmark.py serve`
as the model 'served/maia:net=N' on 127.0.0.1 and rated by `benchmark.py play` (and, with
--static, run through the static test), exactly as the validation players are. Runs resume
through their caches. `table` gathers the readings into the committed table and `games` the
games they rest on.

    python -m bench.maia_players run                     # the reference ladder
    python -m bench.maia_players run --ladder stockfish-15.1 --stockfish /usr/games/stockfish
    python -m bench.maia_players static                  # the static test (all questions)
    python -m bench.maia_players table                   # data/human/maia_players.csv
    python -m bench.maia_players games                   # data/human/maia_games.csv.gz
    python -m bench.maia_players refit                   # the table's game columns, refitted
                                                         # from those games on the ladder now
    python -m bench.maia_players restatic                # the table's static columns from
                                                         # `static`'s runs (a new test set)

`refit` needs no run: it rates each net's committed games on the committed reference ladder
with play's own estimator, and writes the game columns (with the ladder's part of each
reading's error and the weights of each rung's Elo in it, which the crosswalk uses for the
errors the readings share); the static columns stay. A test holds the table to the refit.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

import benchmark
from bench.served_games import pgn_rows, refit, write_games
from bench.validation_players import (
    Player,
    game_columns,
    latest,
    run_player,
    serving,
    shard,
)
from chess_eval.benchmark.arena.ladder import reference_ladder
from chess_eval.benchmark.core.data import REFERENCE_LADDER, ladder_label, ladder_path
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import slug
from chess_eval.benchmark.core.server import SERVED
from chess_eval.benchmark.human.anchors import HUMAN_DIR, READINGS_FILE
from chess_eval.benchmark.human.crosswalk import SLOPE_PRIOR, Crosswalk, load_crosswalks
from chess_eval.benchmark.human.reading import Reading
from chess_eval.benchmark.players.maia import NETS
from chess_eval.cli import run_cli
from chess_eval.files import atomic_write, sha256_file

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "maia"
LABEL = Path(ladder_label(REFERENCE_LADDER)).stem  # its name in the table and the output folders
DATA = HUMAN_DIR / READINGS_FILE  # the nets' readings: the crosswalk's committed data
GAMES = HUMAN_DIR / "maia_games.csv.gz"  # the games they rest on
# Games per net and ladder. The reference ladder's rungs near the nets' strength (2,100-2,400)
# are known to about 20 Elo (one sd; 32 when these games were played); a reading from n games
# has an sd of about 420/sqrt(n) Elo there, so 200 games give about 30 (36 in all with the
# ladder's part, whose 20 no number of games passes): more games would buy little.
MAX_GAMES = 200
FIELDS = ("player", "net", "ladder", "game_elo", "game_elo_lo", "game_elo_hi", "game_elo_sd",
          "games", "game_elo_ladder_sd", "ladder_weights", "distinct", "accuracy", "human_elo",
          "human_lo", "human_hi", "human_text",
          "predicted_elo", "predicted_lo", "predicted_hi", "predicted_text")


def spec(net: int) -> str:
    """The baseline spec of a net."""
    return f"maia:net={net}"


def run_command(args: argparse.Namespace) -> None:
    """Rate the nets (resumable), a share of them with --shard."""
    ladder = args.ladder or REFERENCE_LADDER
    out = args.out / Path(ladder_label(ladder)).stem
    nets = args.nets[args.shard[0]::args.shard[1]]
    with serving(args.stockfish) as server:
        for n, net in enumerate(nets, start=1):
            print(f"[{n}/{len(nets)}] {spec(net)} on {ladder_label(ladder)}", flush=True)
            run_player(Player(spec(net), "maia"), server.base_url, ladder, args.stockfish,
                       out, static=False, max_games=args.max_games, target=1.0)


def static_command(args: argparse.Namespace) -> None:
    """Run the nets through the static test (every question), served as a model is."""
    out = args.out / LABEL  # the static test does not depend on the ladder
    with serving(None) as server:
        for net in args.nets:
            model = f"{SERVED}/{spec(net)}"
            status = benchmark.main(["--model", model, "--base-url", server.base_url,
                                     "--endpoint-id", SERVED, "--out", str(out),
                                     "--bootstrap", "300"])
            if status != 0:
                raise SystemExit(f"static run of {model} ended with status {status}")


def table_rows(out: Path) -> list[dict[str, Any]]:
    """One row per net and ladder rated in `out`."""
    found = []
    for ladder_dir in sorted(d for d in out.iterdir() if d.is_dir()) if out.exists() else []:
        for net in NETS:
            try:
                play = latest(ladder_dir, Kind.PLAY, f"{SERVED}/{spec(net)}__standard")
            except SystemExit:
                continue
            found.append({"player": spec(net), "net": net, "ladder": f"{ladder_dir.name}.csv",
                          **game_columns(play),
                          "distinct": play["conditions"]["standard"].get("distinct", ""),
                          **static_columns_of(out, net)})
    return found


def static_columns_of(out: Path, net: int) -> dict[str, Any]:
    """A net's static run in `out` (any ladder's folder): its accuracy, its human-move Elo
    (Lichess players' move quality) and the game Elo the static fit predicts; none where it
    has not run."""
    for ladder_dir in sorted(d for d in out.iterdir() if d.is_dir()):
        try:
            static = latest(ladder_dir, Kind.STATIC, f"{SERVED}/{spec(net)}__fen@1__all")
        except SystemExit:
            continue
        row: dict[str, Any] = {"accuracy": round(static["accuracy"], 3)}
        for name, key in (("human", "human"), ("predicted", "predicted_game")):
            elo = static["elo"].get(key) or {}
            row |= {f"{name}_elo": elo.get("mean"), f"{name}_lo": elo.get("lo"),
                    f"{name}_hi": elo.get("hi"), f"{name}_text": elo.get("text", "")}
        return row
    return {}


def table_command(args: argparse.Namespace) -> None:
    """Print the nets' readings; write them as the committed table."""
    found = table_rows(args.out)
    if not found:
        raise SystemExit(f"no Maia play runs in {args.out}: run `run` first")
    for row in found:
        print(f"{row['player']:<14} {row['ladder']:<28} {row['game_elo']:7.1f} "
              f"[{row['game_elo_lo']:.0f}, {row['game_elo_hi']:.0f}] {row['games']} games")
    write_table(args.write, found)
    print(f"wrote {args.write}")


def game_rows(out: Path) -> list[dict[str, str]]:
    """Every game of the nets' play runs in `out`, from each run's PGN."""
    found = []
    for row in table_rows(out):
        ladder_dir = out / row["ladder"].removesuffix(".csv")
        label = slug(file_name(Kind.PLAY, f"{SERVED}/{spec(row['net'])}__standard"))
        pgn = sorted(ladder_dir.glob(f"{label}__*.pgn"), key=lambda p: p.stat().st_mtime)
        if pgn:
            found += pgn_rows(pgn[-1], row["player"], row["ladder"])
    return found


def games_command(args: argparse.Namespace) -> None:
    """Write the games the readings rest on (gzip, fixed mtime: the same games, the same
    bytes)."""
    found = game_rows(args.out)
    if not found:
        raise SystemExit(f"no Maia games in {args.out}: run `run` first")
    write_games(args.write, found)
    print(f"wrote {len(found)} games to {args.write}")


def refitted(games: Path = GAMES, ladder_file: Path = REFERENCE_LADDER,
             table: Path = DATA) -> list[dict[str, Any]]:
    """The committed table with each reference-ladder row's game columns refitted from the
    net's committed games on the ladder as it is now (play's estimator and prior)."""
    columns = refit(games, ladder_file, f"{LABEL}.csv")
    with table.open(encoding="utf-8", newline="") as handle:
        rows: list[dict[str, Any]] = list(csv.DictReader(handle))
    for row in rows:
        if row["ladder"] == f"{LABEL}.csv" and row["player"] in columns:
            row |= columns[row["player"]]
    return rows


def refit_command(args: argparse.Namespace) -> None:
    """Write the table with the game columns refitted on the ladder as it is now."""
    rows = refitted(GAMES, args.ladder, DATA)
    for row in rows:
        print(f"{row['player']:<14} {row['ladder']:<28} {row['game_elo']} "
              f"[{row['game_elo_lo']}, {row['game_elo_hi']}] {row['games']} games")
    write_table(args.write, rows)
    print(f"wrote {args.write}")


def restatic_command(args: argparse.Namespace) -> None:
    """Write the table with every net's static columns from its newest static run on the
    committed questions.csv (after a new test set, `static` then this); the game columns
    stay."""
    digest = sha256_file(ROOT / "questions.csv")
    with DATA.open(encoding="utf-8", newline="") as handle:
        rows: list[dict[str, Any]] = list(csv.DictReader(handle))
    for row in rows:
        static = latest(args.out / LABEL, Kind.STATIC, f"{SERVED}/{row['player']}__fen@1__all")
        if static["questions_sha256"] != digest:
            raise SystemExit(f"the newest static run of {row['player']} answered another "
                             "questions file: run `static` again")
        row |= static_columns_of(args.out, int(row["net"]))
        print(f"{row['player']:<14} accuracy {row['accuracy']}, human-move {row['human_text']}, "
              f"predicted {row['predicted_text']}")
    write_table(args.write, rows)
    print(f"wrote {args.write}")


def write_table(path: Path, rows: list[dict[str, Any]]) -> None:
    """The table, as committed."""
    with atomic_write(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n",
                                extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def read_rows(path: Path = DATA) -> list[dict[str, str]]:
    """The committed table's rows on the reference ladder, by net."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["ladder"] == f"{LABEL}.csv"]
    return sorted(rows, key=lambda r: int(r["net"]))


def leave_one_anchor_out(root: Path = HUMAN_DIR) -> list[dict[str, Any]]:
    """(a) Each anchor's Lichess rating predicted from the other anchors of its time control
    (a line needs two: a time control with two anchors has nothing to leave out), its reading
    with its own errors (the ladder's part shared with the others)."""
    found = []
    for walk in load_crosswalks(root, reference_ladder()):
        if len(walk.anchors) < 3:
            found.append({"time_control": walk.time_control.value, "bot": "-",
                          "note": f"{len(walk.anchors)} anchors: none to leave out"})
            continue
        for i, anchor in enumerate(walk.anchors):
            rest = replace(walk, anchors=walk.anchors[:i] + walk.anchors[i + 1:])
            p = rest.predict(anchor.measured)
            low, high = rest.band
            found.append({"time_control": walk.time_control.value, "bot": anchor.bot,
                          "rating": anchor.rating, "predicted": p.median, "lo": p.lo,
                          "hi": p.hi, "inside": p.lo <= anchor.rating <= p.hi,
                          "note": "between the others' readings" if low <= anchor.reading
                          <= high else "outside the others' readings (extrapolated)"})
    return found


CARRIED = 0.25  # the data carry the slope when they alone know it to this sd (half the
# prior's: four times the prior's precision, 80% of the posterior's)
SPAN_GAMES = 200  # the games per anchor the "what it would take" rows assume (the anchors'


# own)


def _moments(grid: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    mean = float(grid @ weights)
    return mean, float(np.sqrt(((grid - mean) ** 2) @ weights))


def data_sd(walk: Crosswalk) -> float:
    """What the anchors alone say of the slope: its sd (a flat prior on the grid)."""
    return _moments(*walk.slope_likelihood())[1]


def _spread_anchors(walk: Crosswalk, span: float, slope: float) -> Crosswalk:
    """Three anchors over `span` Elo of readings about the middle of walk's, each read from
    SPAN_GAMES games (the own error of the anchors' as one over the games; the ladder's
    part theirs, independent), rated on the line of `slope` through the anchors' middle."""
    x0 = sum(walk.band) / 2
    y0 = float(np.mean([a.rating for a in walk.anchors]))
    model = walk.anchors[0]
    games = model.measured.games or SPAN_GAMES
    own = model.measured.own_sd * np.sqrt(games / SPAN_GAMES)
    anchors = tuple(replace(model, bot=f"a{i}", rating=y0 + slope * (x - x0),
                            measured=Reading(float(x), float(own), model.measured.ladder_sd))
                    for i, x in enumerate(np.linspace(x0 - span / 2, x0 + span / 2, 3)))
    return replace(walk, anchors=anchors, cov=None)


def span_needed(walk: Crosswalk, slope: float) -> float:
    """The readings' span three such anchors need for the data to carry the slope."""
    lo, hi = 10.0, 5000.0
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if data_sd(_spread_anchors(walk, mid, slope)) <= CARRIED else (mid, hi)
    return hi


def slope_rows(root: Path = HUMAN_DIR) -> list[dict[str, Any]]:
    """Each time control's slope (Lichess Elo per Elo here): its prior, what the anchors
    alone say (a flat prior), its posterior (median and 90%, mean and sd), the data's share
    of the posterior's precision, and what it would take for the data to carry it: the sd
    with no game error at all (more games at these readings), the anchors needed at these
    readings' spread, and the span of readings three anchors need."""
    found = []
    mean, sd = SLOPE_PRIOR
    for walk in load_crosswalks(root, reference_ladder()):
        grid, weights = walk.slope_posterior()
        lo, mid, hi = np.interp([0.05, 0.5, 0.95], np.cumsum(weights), grid)
        post_mean, post_sd = _moments(grid, weights)
        alone_mean, alone_sd = _moments(*walk.slope_likelihood())
        exact = replace(walk, anchors=tuple(
            replace(a, measured=replace(a.measured, own_sd=0.0)) for a in walk.anchors))
        floor = data_sd(exact)
        found.append({"time_control": walk.time_control.value, "prior": (mean, sd),
                      "median": mid, "lo": lo, "hi": hi, "mean": post_mean, "sd": post_sd,
                      "alone": (alone_mean, alone_sd),
                      "share": 1 - post_sd ** 2 / sd ** 2, "no_game_error": floor,
                      "anchors_needed": math.ceil(len(walk.anchors) * (alone_sd / CARRIED) ** 2),
                      "span_needed": span_needed(walk, post_mean),
                      "span": walk.band[1] - walk.band[0]})
    return found


def previous_method(walk: Crosswalk, run: Reading, draws: int = 4000,
                    seed: int = 20261127) -> tuple[float, float, float]:
    """The crosswalk as it was computed before (for the docs' before/after): readings moved
    by their whole error again, each drawn apart, the run's too, a least-squares slope drawn
    toward the prior; 5th, 50th and 95th percentile."""
    rng = np.random.default_rng(seed)
    x = np.array([a.reading for a in walk.anchors])
    y = np.array([a.rating for a in walk.anchors])
    xs = x + rng.standard_normal((draws, len(x))) * [a.reading_sd for a in walk.anchors]
    ys = y + rng.standard_normal((draws, len(y))) * [a.human_sd for a in walk.anchors]
    placed_run = run.mean + rng.standard_normal(draws) * run.sd
    xc = xs - xs.mean(axis=1, keepdims=True)
    prior = SLOPE_PRIOR[0] + rng.standard_normal(draws) * SLOPE_PRIOR[1]
    weight = np.mean([a.human_sd for a in walk.anchors]) ** 2 / SLOPE_PRIOR[1] ** 2
    slope = np.maximum(((xc * (ys - ys.mean(axis=1, keepdims=True))).sum(axis=1)
                        + weight * prior) / ((xc ** 2).sum(axis=1) + weight), 0.0)
    placed = ys.mean(axis=1) + slope * (placed_run - xs.mean(axis=1))
    lo, mid, hi = np.percentile(placed, [5, 50, 95])
    return float(lo), float(mid), float(hi)


def width_rows(root: Path = HUMAN_DIR) -> list[dict[str, Any]]:
    """The 90% width of the figure at the middle of each time control's anchors, for a run
    rated like the middle anchor (its games and rungs): the previous method, errors in
    variables with every error drawn apart, and with the ladder's covariance."""
    found = []
    for walk in load_crosswalks(root, reference_ladder()):
        middle = walk.anchors[len(walk.anchors) // 2].measured
        run = Reading(sum(walk.band) / 2, middle.own_sd, middle.ladder_sd, middle.weights)
        before = previous_method(walk, run)
        apart = replace(walk, cov=None).predict(run)
        shared = walk.predict(run)
        found.append({"time_control": walk.time_control.value, "reading": run.mean,
                      "sd": run.sd, "before": before[2] - before[0],
                      "apart": apart.hi - apart.lo, "shared": shared.hi - shared.lo})
    return found


def band_order(rows: list[dict[str, str]]) -> dict[str, Any]:
    """(b) Whether the readings rise with the nets' training bands: Spearman's rho, and each
    step down from one band to the next with its z (a step down beyond 1.645 sd of the two
    readings' errors would contradict the order)."""
    nets = [int(r["net"]) for r in rows]
    elos = [float(r["game_elo"]) for r in rows]
    sds = [float(r["game_elo_sd"]) for r in rows]
    rho = float(stats.spearmanr(nets, elos).statistic) if len(rows) > 2 else float("nan")
    steps = [{"from": nets[i], "to": nets[i + 1], "gap": elos[i + 1] - elos[i],
              "z": (elos[i + 1] - elos[i]) / math.hypot(sds[i], sds[i + 1])}
             for i in range(len(rows) - 1)]
    return {"rho": rho, "steps": steps,
            "contradictions": sum(s["z"] < -1.645 for s in steps)}


def static_against_bots(rows: list[dict[str, str]], root: Path = HUMAN_DIR) -> list[dict[str, Any]]:
    """(c) Each anchor net's human-move Elo (static test) against its bot's rating in
    each time control: inside the static interval or not."""
    by_net = {int(r["net"]): r for r in rows}
    found = []
    for walk in load_crosswalks(root, reference_ladder()):
        for anchor in walk.anchors:
            row = by_net.get(anchor.net, {})
            lo, hi = row.get("human_lo") or "", row.get("human_hi") or ""
            inside = None if "" in (lo, hi) else float(lo) <= anchor.rating <= float(hi)
            found.append({"time_control": walk.time_control.value, "bot": anchor.bot,
                          "net": anchor.net, "rating": anchor.rating,
                          "static": row.get("human_text", ""), "inside": inside})
    return found


def static_fit_on_maia(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """(d) The game Elo the static fit predicts for each net against its reading."""
    found = []
    for row in rows:
        lo, hi = row.get("predicted_lo") or "", row.get("predicted_hi") or ""
        inside = None if "" in (lo, hi) else float(lo) <= float(row["game_elo"]) <= float(hi)
        found.append({"net": int(row["net"]), "game_elo": float(row["game_elo"]),
                      "predicted": row.get("predicted_text", ""), "inside": inside})
    return found


def validate_command(args: argparse.Namespace) -> None:
    """Print the four checks of the crosswalk and the nets."""
    rows = read_rows()
    for name, value in (("(a) leave one anchor out", leave_one_anchor_out()),
                        ("the slope, prior and posterior", slope_rows()),
                        ("90% width at the anchors' middle", width_rows()),
                        ("(b) readings by training band", band_order(rows)),
                        ("(c) static human-move Elo against the bots",
                         static_against_bots(rows)),
                        ("(d) the static fit on Maia", static_fit_on_maia(rows))):
        print(name)
        print(json.dumps(value, indent=1, default=str))


def main() -> None:
    """Parse and dispatch."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="rate the nets (resumable)")
    r.add_argument("--ladder", type=ladder_path, default=None,
                   help="the ladder (default the reference ladder, stockfish-17.1)")
    r.add_argument("--stockfish", default=None, help="the rungs' Stockfish")
    r.add_argument("--nets", type=int, nargs="+", default=list(NETS), choices=NETS)
    r.add_argument("--max-games", type=int, default=MAX_GAMES,
                   help=f"games per net (default {MAX_GAMES}: the ladder's own error there)")
    r.add_argument("--shard", type=shard, default=(0, 1),
                   help="I/N: every Nth net from the Ith (N processes use N cores)")
    r.add_argument("--out", type=Path, default=OUT)
    r.set_defaults(handler=run_command)
    s = sub.add_parser("static", help="the static test of the nets (resumable)")
    s.add_argument("--nets", type=int, nargs="+", default=list(NETS), choices=NETS)
    s.add_argument("--out", type=Path, default=OUT)
    s.set_defaults(handler=static_command)
    t = sub.add_parser("table", help=f"the readings as {DATA.name}")
    t.add_argument("--out", type=Path, default=OUT)
    t.add_argument("--write", type=Path, default=DATA)
    t.set_defaults(handler=table_command)
    v = sub.add_parser("validate", help="the crosswalk's and the nets' checks")
    v.set_defaults(handler=validate_command)
    g = sub.add_parser("games", help=f"the games as {GAMES.name}")
    g.add_argument("--out", type=Path, default=OUT)
    g.add_argument("--write", type=Path, default=GAMES)
    g.set_defaults(handler=games_command)
    f = sub.add_parser("refit", help=f"{DATA.name}'s game columns from {GAMES.name} on the "
                       "ladder as it is now")
    f.add_argument("--ladder", type=ladder_path, default=REFERENCE_LADDER)
    f.add_argument("--write", type=Path, default=DATA)
    f.set_defaults(handler=refit_command)
    rs = sub.add_parser("restatic", help=f"{DATA.name}'s static columns from the nets' newest "
                        "static runs on questions.csv")
    rs.add_argument("--out", type=Path, default=OUT)
    rs.add_argument("--write", type=Path, default=DATA)
    rs.set_defaults(handler=restatic_command)
    args = p.parse_args()
    sys.exit(run_cli(lambda: args.handler(args)))


if __name__ == "__main__":
    main()
