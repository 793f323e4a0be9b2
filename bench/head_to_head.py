"""Head to head against the ladder: served engine players of known game Elo play `match`.

(a) Transitivity through `match`: pairs of the map's players (engines of other families than
the rungs, data/ladders/ladder_map_players.csv, each rated on the reference ladder with 100
games through the served path), 0-400 Elo apart, play PAIR_GAMES games each through
`benchmark.py match` (each served by `benchmark.py serve` on 127.0.0.1, as a model is). Beside
each measured score, the score the ladder predicts from the two readings (the BTD expected
score at their difference, with the ladder's draw parameter; the two readings' errors taken
as independent, which counts the ladder's shared part twice and only widens it) and
z = (measured - predicted) / sqrt(sd_measured^2 + sd_predicted^2); over the pairs, the
pooled z (sum / sqrt(k)) and the chi-square of the z's.

(b) What a difference costs: for one pair about 100 Elo apart, `match` to a 90% half-width
of COST_TARGET on the difference, against two `play` runs to COST_TARGET / sqrt(2) each
(whose difference `compare` then reads): games and requests of each route, and the
half-width each reached.

    python -m bench.head_to_head run      # play what is missing (resumable), then write
    python -m bench.head_to_head table    # the committed tables from results/head_to_head
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
from pathlib import Path
from typing import Any

from scipy import stats

import benchmark
from bench.validation_players import serving
from chess_eval.benchmark.arena.ladder import load_ladder, reference_nu
from chess_eval.benchmark.arena.ladder_check import match_elo
from chess_eval.benchmark.core.data import MAP_PLAYERS, REFERENCE_LADDER
from chess_eval.benchmark.core.results import slug
from chess_eval.benchmark.stats.btd import Z90, expected_score
from chess_eval.files import atomic_write
from chess_eval.kvstore import JsonStore

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "head_to_head"
TABLE = ROOT / "bench" / "data" / "head_to_head.csv"
COST_TABLE = ROOT / "bench" / "data" / "head_to_head_cost.csv"
SERVED = "served"
PAIR_GAMES = 40  # games a pair: 20 colour-reversed pairs
REFERENCE_FILE = "ladder@stockfish-17.1.csv"  # the readings' ladder in the players' table
# Different families, 0 to about 330 Elo apart on the reference ladder.
PAIRS = (
    ("gnuchess:depth=1,random=50", "sjeng:depth=3,random=50"),
    ("toga2:depth=1,random=25", "glaurung:depth=1,random=25"),
    ("sjeng:depth=2", "toga2:depth=1,random=25"),
    ("glaurung:depth=1,random=70", "sjeng:depth=2,random=80"),
    ("toga2:depth=1,random=70", "sjeng:depth=2,random=80"),
    ("toga2:depth=1,random=10", "sjeng:depth=2"),
    ("gnuchess:depth=1,random=50", "toga2:depth=1,random=70"),
)
COST_PAIR = ("glaurung:depth=1,random=70", "sjeng:depth=2,random=80")  # about 110 apart
COST_TARGET = 150.0  # the 90% half-width wanted on the difference, Elo (an hour on 2 cores)
TABLE_FIELDS = ["a", "b", "a_elo", "a_sd", "b_elo", "b_sd", "games", "pentanomial", "score",
                "score_lo", "score_hi", "predicted", "predicted_lo", "predicted_hi", "z"]
COST_FIELDS = ["route", "games", "requests", "half_width"]


def readings(path: Path = MAP_PLAYERS) -> dict[str, tuple[float, float]]:
    """Each map player's game Elo on the reference ladder and its sd."""
    with path.open(encoding="utf-8", newline="") as handle:
        return {r["player"]: (float(r["game_elo"]), float(r["game_elo_sd"]))
                for r in csv.DictReader(handle) if r["ladder"] == REFERENCE_FILE}


def _chat(base_url: str, out: Path, stockfish: str | None) -> list[str]:
    """The served player's options, and the judge's (and ladder's) engine."""
    return ["--base-url", base_url, "--endpoint-id", SERVED, "--out", str(out),
            *(["--stockfish", stockfish] if stockfish else [])]


def run_command(args: argparse.Namespace) -> None:
    """Play every pair's match and the cost comparison's runs (each resumes), then write."""
    with serving(args.stockfish) as server:
        for n, (a, b) in enumerate(PAIRS if args.part in ("all", "pairs") else (), start=1):
            print(f"[{n}/{len(PAIRS)}] {a} vs {b}", flush=True)
            # A target below any reachable half-width plays exactly --max-games games.
            _main(["match", "--model", f"{SERVED}/{a}", "--opponent", f"{SERVED}/{b}",
                   *_chat(server.base_url, args.out / "pairs", args.stockfish), "--max-games",
                   str(args.games), "--target", "1"])
        if args.part == "pairs":
            return
        a, b = COST_PAIR
        cost = args.out / "cost"
        _main(["match", "--model", f"{SERVED}/{a}", "--opponent", f"{SERVED}/{b}",
               *_chat(server.base_url, cost, args.stockfish), "--target", f"{COST_TARGET:g}"])
        for player in COST_PAIR:
            _main(["play", "--model", f"{SERVED}/{player}",
                   *_chat(server.base_url, cost, args.stockfish),
                   "--target", f"{COST_TARGET / math.sqrt(2):.1f}"])
    if args.part == "all":
        table_command(args)


def _main(argv: list[str]) -> None:
    status = benchmark.main(argv)
    if status != 0:
        raise SystemExit(f"benchmark.py {' '.join(argv[:5])} ... ended with status {status}")


def _latest(folder: Path, stem: str) -> dict[str, Any]:
    found = sorted(folder.glob(f"{stem}__*.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no result {stem}__* in {folder}: run `run` first")
    data: dict[str, Any] = json.loads(found[-1].read_text())
    return data | {"_stem": found[-1].stem}


def pair_row(match: dict[str, Any], a: tuple[float, float], b: tuple[float, float],
             nu: float) -> dict[str, Any]:
    """One pair's measured score beside the ladder's prediction, and their z."""
    diff, sd = a[0] - b[0], math.hypot(a[1], b[1])
    predicted = float(expected_score(diff, nu))
    slope = float(expected_score(diff + 0.5, nu) - expected_score(diff - 0.5, nu))
    s = match["score"]
    measured_sd = (s["hi"] - s["lo"]) / (2 * Z90)
    z = (s["value"] - predicted) / math.hypot(measured_sd, abs(slope) * sd)
    return {"games": match["games"], "pentanomial": "/".join(map(str, match["pentanomial"])),
            "score": s["value"], "score_lo": s["lo"], "score_hi": s["hi"],
            "predicted": round(predicted, 4),
            "predicted_lo": round(float(expected_score(diff - Z90 * sd, nu)), 4),
            "predicted_hi": round(float(expected_score(diff + Z90 * sd, nu)), 4),
            "z": round(z, 2)}


def pair_rows(out: Path) -> list[dict[str, Any]]:
    """Every pair's row from its match in `out`."""
    rated = readings()
    nu = load_ladder(REFERENCE_LADDER).nu
    rows = []
    for a, b in PAIRS:
        match = _latest(out / "pairs", f"match__{slug(f'{SERVED}/{a}__vs__{SERVED}/{b}')}")
        rows.append({"a": a, "b": b, "a_elo": rated[a][0], "a_sd": rated[a][1],
                     "b_elo": rated[b][0], "b_sd": rated[b][1],
                     **pair_row(match, rated[a], rated[b], nu)})
    return rows


def _match_requests(folder: Path, stem: str) -> int:
    """The requests a match's games needed, both players': every reply its games hold (the
    games of its PGN, read from the match's store), whichever invocation bought them."""
    pgn = (folder / f"{stem}.pgn").read_text()
    keys = set(re.findall(r'\[GameId "([^"]+)"\]', pgn))
    store = JsonStore(folder / "match.db", "games")
    try:
        return sum(len((store.get(k) or {}).get("attempts", [])) for k in keys)
    finally:
        store.close()


def cost_rows(out: Path) -> list[dict[str, Any]]:
    """The two routes to the cost pair's difference: games, requests, half-width reached."""
    folder = out / "cost"
    a, b = COST_PAIR
    match = _latest(folder, f"match__{slug(f'{SERVED}/{a}__vs__{SERVED}/{b}')}")
    e = match_elo(match, reference_nu())
    plays = [_latest(folder, f"play__{slug(f'{SERVED}/{p}')}__standard") for p in COST_PAIR]
    elos = [p["conditions"]["standard"]["elo"] for p in plays]
    # Two independent readings on one ladder: the difference's half-width, the ladder's
    # shared part counted in both (compare cancels some of it: an upper bound).
    play_half = math.hypot(*((x["hi"] - x["lo"]) / 2 for x in elos))
    return [{"route": "match", "games": match["games"],
             "requests": _match_requests(folder, match["_stem"]),
             "half_width": round((e["hi"] - e["lo"]) / 2, 1)},
            {"route": "two play runs", "games": sum(p["conditions"]["standard"]["games"]
                                                    for p in plays),
             "requests": sum(p["usage"]["requests"] for p in plays),
             "half_width": round(play_half, 1)}]


def write_csv(path: Path, fields: list[str], rows: list[dict[str, Any]]) -> None:
    """A committed table, atomically."""
    with atomic_write(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def table_command(args: argparse.Namespace) -> None:
    """Write both committed tables and print them."""
    write_csv(TABLE, TABLE_FIELDS, pair_rows(args.out))
    write_csv(COST_TABLE, COST_FIELDS, cost_rows(args.out))
    print(pairs_markdown(read(TABLE)))
    print(cost_markdown(read(COST_TABLE)))


def read(path: Path) -> list[dict[str, str]]:
    """A committed table's rows."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def pairs_markdown(rows: list[dict[str, str]]) -> str:
    """Table (a), with the pooled z and the chi-square."""
    lines = ["| A vs B | A's reading | B's reading | games | pentanomial | A's score (90%) "
             "| ladder's prediction (90%) | z |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['a']} vs {r['b']} | {float(r['a_elo']):.0f} +- {Z90 * float(r['a_sd']):.0f}"
            f" | {float(r['b_elo']):.0f} +- {Z90 * float(r['b_sd']):.0f} | {r['games']} | "
            f"{r['pentanomial']} | {float(r['score']):.3f} [{float(r['score_lo']):.3f}, "
            f"{float(r['score_hi']):.3f}] | {float(r['predicted']):.3f} "
            f"[{float(r['predicted_lo']):.3f}, {float(r['predicted_hi']):.3f}] | "
            f"{float(r['z']):+.2f} |")
    zs = [float(r["z"]) for r in rows]
    chi2 = sum(z * z for z in zs)
    pooled = sum(zs) / math.sqrt(len(zs))
    above = sum(z > 0 for z in zs)
    sign_p = float(stats.binomtest(above, len(zs)).pvalue)
    verdict = (f"outside +-{Z90:.2f}: by that criterion the ladder does not predict these "
               "matches" if abs(pooled) > Z90 else
               f"within +-{Z90:.2f}: by that criterion the ladder predicts these matches")
    lines += ["", f"{len(zs)} pairs: pooled z {pooled:+.2f} (within "
              f"+-{Z90:.2f} nine times in ten when the ladder predicts the matches; "
              f"p = {2 * float(stats.norm.sf(abs(pooled))):.3f}), {verdict}. The first player "
              f"beat the prediction in {above} of {len(zs)} (sign test p = {sign_p:.3f}); "
              f"chi-square {chi2:.1f} on {len(zs)} degrees of freedom (p = "
              f"{float(stats.chi2.sf(chi2, len(zs))):.2f}); {sum(abs(z) > Z90 for z in zs)} "
              f"of {len(zs)} |z| above {Z90:.2f} ({0.1 * len(zs):.1f} expected by chance)."]
    return "\n".join(lines)


def cost_markdown(rows: list[dict[str, str]]) -> str:
    """Table (b): games and requests of each route, and the requests a game cost (the
    half-widths it reached are not shown: the match's was read on the logistic scale then,
    the play runs' on BTD's, and two figures side by side must share one scale)."""
    a, b = COST_PAIR
    lines = [f"| route ({a} vs {b}) | games | requests | requests a game |",
             "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['route']} | {r['games']} | {r['requests']} | "
                     f"{int(r['requests']) / int(r['games']):.0f} |")
    return "\n".join(lines)


def main() -> None:
    """Run or tabulate."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="play what is missing (resumable), then write the tables")
    r.add_argument("--games", type=int, default=PAIR_GAMES, help="games a pair")
    r.add_argument("--part", choices=("all", "pairs", "cost"), default="all",
                   help="only the pairs' matches, or only the cost comparison (two processes "
                   "on two cores); `table` then writes the tables (default all, then table)")
    r.add_argument("--stockfish", default=None,
                   help="the judge's and the ladder's engine: a Stockfish 17.1 build, so play "
                   "rates on the reference ladder (default: the one found)")
    t = sub.add_parser("table", help="the committed tables from the results")
    for q in (r, t):
        q.add_argument("--out", type=Path, default=OUT, help="where the runs are kept")
    args = p.parse_args()
    run_command(args) if args.command == "run" else table_command(args)


if __name__ == "__main__":
    main()
