"""Head to head against the ladder: served engine players of known game Elo play `match`.

(a) Transitivity through `match`: pairs of the map's players (engines of other families than
the rungs, data/ladders/ladder_map_players.csv, each rated on the reference ladder with 100
games through the served path), 0-460 Elo apart, play PAIR_GAMES games each through
`benchmark.py match` (each served by `benchmark.py serve` on 127.0.0.1, as a model is), every
pair in both orders, the reversed one from the book's next openings. Beside each measured
score, the score the ladder predicts from the two readings (the BTD expected score at their
difference, nu the ladder's draw model's at the two readings' mean; the two readings' errors
taken as independent, which counts the ladder's shared part twice and only widens it) and
z = (measured - predicted) / sqrt(sd_measured^2 + sd_predicted^2); over the rows, the pooled
z (sum / sqrt(k)); over the pairs in both orders (`both_orders`), each turned to its stronger
player by the readings, the pooled z, the chi-square of the z's, the sign test and the z's by
distance, and the order effect (first minus second, which needs no ladder); what they say,
by |pooled z| > Z90 (`findings`, `pairs_markdown`).

(b) What a difference costs: for one pair about 100 Elo apart, `match` to a 90% half-width
of COST_TARGET on the difference, against two `play` runs to COST_TARGET / sqrt(2) each
(whose difference `compare` then reads): games and requests of each route, and the
half-width each reached.

    python -m bench.head_to_head run      # play what is missing (resumable), then write
    python -m bench.head_to_head table    # the committed tables from results/head_to_head

A committed row whose games are not in results/head_to_head (the first seven, played before
the reversed order) is kept by `table`, recomputed on the current readings, and not replayed
by `run` unless --replay.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import time
from pathlib import Path
from typing import Any

from scipy import stats

import benchmark
from bench.validation_players import serving
from chess_eval.benchmark.arena.ladder import Ladder, load_ladder, reference_nu
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
# Different families, 0 to about 450 Elo apart on the reference ladder: (first, second, the
# match's --seed, i.e. where in the book its 20 pairs begin). Every pair is played in both
# orders, the reversed order from the book's next 20 openings (REVERSED_SEED): on the same
# openings a served player's moves (its coin seeded per position, its engine at a fixed
# depth) largely replay the first order's games, which would count the same games twice.
FORWARD = (
    ("gnuchess:depth=1,random=50", "sjeng:depth=3,random=50"),
    ("toga2:depth=1,random=25", "glaurung:depth=1,random=25"),
    ("sjeng:depth=2", "toga2:depth=1,random=25"),
    ("glaurung:depth=1,random=70", "sjeng:depth=2,random=80"),
    ("toga2:depth=1,random=70", "sjeng:depth=2,random=80"),
    ("toga2:depth=1,random=10", "sjeng:depth=2"),
    ("gnuchess:depth=1,random=50", "toga2:depth=1,random=70"),
)
EXTRA = (  # pairs added with the reversed order, each played in both orders
    ("glaurung:depth=1,random=70", "toga2:depth=1,random=70"),
    ("glaurung:depth=1,random=25", "sjeng:depth=2"),
    ("glaurung:depth=1,random=25", "toga2:depth=1,random=10"),
)
REVERSED_SEED = PAIR_GAMES // 2  # the book's openings after the first order's
# The first seven as first played, then their reversed order, then the added pairs' two orders.
PAIRS: tuple[tuple[str, str, int], ...] = (
    *((a, b, 0) for a, b in FORWARD), *((b, a, REVERSED_SEED) for a, b in FORWARD),
    *(p for a, b in EXTRA for p in ((a, b, 0), (b, a, REVERSED_SEED))))
COST_PAIR = ("glaurung:depth=1,random=70", "sjeng:depth=2,random=80")  # about 110 apart
COST_TARGET = 150.0  # the 90% half-width wanted on the difference, Elo (an hour on 2 cores)
TABLE_FIELDS = ["a", "b", "seed", "a_elo", "a_sd", "b_elo", "b_sd", "games", "pentanomial", "score",
                "score_lo", "score_hi", "predicted", "predicted_lo", "predicted_hi", "score_sd",
                "predicted_sd", "z"]
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
    """Play every pair's match not in the committed table, and the cost comparison's runs
    (each resumes), then write. A pair with a committed row whose games are not in
    `--out` is not replayed (its row stands as committed) unless `--replay`."""
    committed = {_row_key(r) for r in read(TABLE)} if TABLE.exists() else set()
    with serving(args.stockfish) as server:
        todo = [p for p in (PAIRS if args.part in ("all", "pairs") else ())
                if args.replay or (p[0], p[1], p[2]) not in committed
                or _found(args.out / "pairs", p)]
        for n, (a, b, seed) in enumerate(todo, start=1):
            print(f"[{n}/{len(todo)}] {a} vs {b} (seed {seed}), from "
                  f"{time.strftime('%H:%M:%S')}", flush=True)
            # A target below any reachable half-width plays exactly --max-games games.
            _main(["match", "--model", f"{SERVED}/{a}", "--opponent", f"{SERVED}/{b}",
                   *_chat(server.base_url, args.out / "pairs", args.stockfish), "--max-games",
                   str(args.games), "--target", "1", "--seed", str(seed)])
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


def _row_key(row: dict[str, str]) -> tuple[str, str, int]:
    """A table row's pair: first, second, book seed (rows written before the seed column
    were all seed 0)."""
    return row["a"], row["b"], int(row.get("seed") or 0)


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


def _pair_result(folder: Path, pair: tuple[str, str, int]) -> dict[str, Any] | None:
    """The newest complete match of the pair at its seed in `folder`, if one was played."""
    a, b, seed = pair
    stem = f"match__{slug(f'{SERVED}/{a}__vs__{SERVED}/{b}')}"
    for path in sorted(folder.glob(f"{stem}__*.json"), key=lambda p: p.stat().st_mtime,
                       reverse=True):
        data: dict[str, Any] = json.loads(path.read_text())
        if data["settings"]["seed"] == seed and data["complete"]:
            return data
    return None


def _found(folder: Path, pair: tuple[str, str, int]) -> bool:
    """Whether any of the pair's games at its seed are in `folder` (a run to finish)."""
    a, b, _ = pair
    return any(folder.glob(f"match__{slug(f'{SERVED}/{a}__vs__{SERVED}/{b}')}__*.json"))


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
            "score_sd": round(measured_sd, 4), "predicted_sd": round(abs(slope) * sd, 4),
            "z": round(z, 2)}


def pair_nu(ladder: Ladder, a: tuple[float, float], b: tuple[float, float]) -> float:
    """The draw parameter where the pair plays: the ladder's draw model at the mean of the two
    readings, as the ladder's prediction of a match between two rated players reads it."""
    return ladder.nu_at((a[0] + b[0]) / 2)


def pair_rows(out: Path, committed: list[dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """Every played pair's row, on the map's current readings: from its match in `out`, else
    from its committed row's games (`committed`: a row whose games are not here, its score
    and interval as the match read them); a pair with neither is not played yet (left out)."""
    rated = readings()
    ladder = load_ladder(REFERENCE_LADDER)
    kept = {_row_key(r): r for r in committed or []}
    rows = []
    for a, b, seed in PAIRS:
        match = _pair_result(out / "pairs", (a, b, seed))
        if match is None and (row := kept.get((a, b, seed))) is not None:
            match = {"games": int(row["games"]),
                     "pentanomial": [int(n) for n in row["pentanomial"].split("/")],
                     "score": {"value": float(row["score"]), "lo": float(row["score_lo"]),
                               "hi": float(row["score_hi"])}}
        if match is None:
            print(f"not played yet: {a} vs {b} (seed {seed})")
            continue
        rows.append({"a": a, "b": b, "seed": seed, "a_elo": rated[a][0], "a_sd": rated[a][1],
                     "b_elo": rated[b][0], "b_sd": rated[b][1],
                     **pair_row(match, rated[a], rated[b],
                                pair_nu(ladder, rated[a], rated[b]))})
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
    if e is None:
        raise SystemExit(f"{match['_stem']}: no complete pair, no difference to read")
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
    """Write both committed tables and print them (the cost table only where its runs are
    in `--out`)."""
    write_csv(TABLE, TABLE_FIELDS, pair_rows(args.out, read(TABLE) if TABLE.exists() else []))
    if any((args.out / "cost").glob("match__*.json")):
        write_csv(COST_TABLE, COST_FIELDS, cost_rows(args.out))
    else:  # its games are not here: the committed table stands
        print(f"no cost runs in {args.out / 'cost'}: {COST_TABLE.name} kept as committed")
    print(pairs_markdown(read(TABLE)))
    print(cost_markdown(read(COST_TABLE)))


def read(path: Path) -> list[dict[str, str]]:
    """A committed table's rows."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


BANDS = ((0.0, 100.0), (100.0, 200.0), (200.0, math.inf))  # the pairs' distances, Elo


def _pooled(zs: list[float]) -> float:
    return sum(zs) / math.sqrt(len(zs)) if zs else math.nan


def _two_sided(z: float) -> float:
    return 2 * float(stats.norm.sf(abs(z)))


def _sign_p(above: int, n: int) -> float:
    return float(stats.binomtest(above, n).pvalue) if n else math.nan


def _spearman(x: list[float], y: list[float]) -> tuple[float, float]:
    """Spearman's rho and its two-sided p; nan where it is not defined."""
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan, math.nan
    found = stats.spearmanr(x, y)
    return float(found.statistic), float(found.pvalue)


def both_orders(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Each pair played in both orders, read on its stronger player by the readings (X):
    the distance X - Y; X's z first and second (each row's z, turned to X); X's score over
    both orders against the ladder's prediction, and its z (the two measurements
    independent, the prediction's error once: both orders share the readings); and the
    order effect, the first player's score minus the second's averaged over the two orders
    (the prediction cancels: s(X first) + s(Y first) - 1), with its sd and z. By distance."""
    found = {(r["a"], r["b"]): r for r in rows}
    out = []
    for (a, b), r1 in found.items():
        r2 = found.get((b, a))
        if r2 is None or float(r1["a_elo"]) < float(r1["b_elo"]) or (
                float(r1["a_elo"]) == float(r1["b_elo"]) and a > b):
            continue  # one row per pair: the one whose first player is X
        m1, m2 = float(r1["score_sd"]), float(r2["score_sd"])
        score = (float(r1["score"]) + 1 - float(r2["score"])) / 2
        predicted = float(r1["predicted"])
        sd = math.sqrt((m1 ** 2 + m2 ** 2) / 4 + float(r1["predicted_sd"]) ** 2)
        order = float(r1["score"]) + float(r2["score"]) - 1
        order_sd = math.hypot(m1, m2)
        out.append({"x": a, "y": b, "distance": float(r1["a_elo"]) - float(r1["b_elo"]),
                    "z_first": float(r1["z"]), "z_second": -float(r2["z"]),
                    "score": score, "score_sd": math.sqrt((m1 ** 2 + m2 ** 2) / 4),
                    "predicted": predicted, "predicted_lo": float(r1["predicted_lo"]),
                    "predicted_hi": float(r1["predicted_hi"]),
                    "z": (score - predicted) / sd, "order": order, "order_sd": order_sd,
                    "order_z": order / order_sd})
    return sorted(out, key=lambda p: p["distance"])


def findings(rows: list[dict[str, str]]) -> dict[str, Any]:
    """The figures the table's text states: over the rows (each turned to its first
    player), over the first-played and the reversed rows apart, and over the pairs in both
    orders (turned to the stronger player; the order effect), by distance band."""
    zs = [float(r["z"]) for r in rows]
    pairs = both_orders(rows)
    pz = [p["z"] for p in pairs]
    oz = [p["order_z"] for p in pairs]

    def order_rows(seed: int) -> list[float]:
        return [float(r["z"]) for r in rows if int(r["seed"]) == seed]

    def seven(reversed_order: bool) -> list[float]:  # the pairs first played, in one order
        wanted = {((b, a, REVERSED_SEED) if reversed_order else (a, b, 0)) for a, b in FORWARD}
        return [float(r["z"]) for r in rows if _row_key(r) in wanted]

    bands = []
    for lo, hi in BANDS:
        inside = [p["z"] for p in pairs if lo <= p["distance"] < hi]
        bands.append({"lo": lo, "hi": hi, "pairs": len(inside), "pooled": _pooled(inside)})
    pooled = _pooled(pz)
    chi2 = sum(z * z for z in pz)
    order = _pooled(oz)
    mean_order = sum(p["order"] for p in pairs) / len(pairs) if pairs else math.nan
    distances = [p["distance"] for p in pairs]
    rho, rho_p = _spearman(distances, pz)
    return {
        "rows": len(zs), "rows_pooled": _pooled(zs), "rows_above": sum(z > 0 for z in zs),
        "rows_sign_p": _sign_p(sum(z > 0 for z in zs), len(zs)),
        "first_order": _pooled(order_rows(0)), "first_order_rows": len(order_rows(0)),
        "reversed_order": _pooled(order_rows(PAIR_GAMES // 2)),
        "reversed_order_rows": len(order_rows(PAIR_GAMES // 2)),
        "seven": _pooled(seven(False)), "seven_rows": len(seven(False)),
        "seven_above": sum(z > 0 for z in seven(False)),
        "seven_reversed": _pooled(seven(True)), "seven_reversed_rows": len(seven(True)),
        "seven_reversed_above": sum(z > 0 for z in seven(True)),
        "order_beyond": sum(abs(z) > Z90 for z in oz),
        "pairs": len(pairs), "pooled": pooled, "pooled_p": _two_sided(pooled),
        "stronger_above": sum(z > 0 for z in pz),
        "stronger_sign_p": _sign_p(sum(z > 0 for z in pz), len(pz)),
        "chi2": chi2, "chi2_p": float(stats.chi2.sf(chi2, len(pz))) if pz else math.nan,
        "beyond": sum(abs(z) > Z90 for z in pz), "bands": bands, "rho": rho, "rho_p": rho_p,
        "mean_order": mean_order, "order_pooled": order, "order_p": _two_sided(order),
        "order_above": sum(p["order"] > 0 for p in pairs),
        "order_sign_p": _sign_p(sum(p["order"] > 0 for p in pairs), len(pairs))}


def _verdicts(f: dict[str, Any]) -> list[str]:
    """What the figures say, each sentence by the criterion it states (|pooled z| > Z90)."""
    pooled, order = f["pooled"], f["order_pooled"]
    out = []
    if abs(pooled) > Z90:
        side = ("the stronger player scores more than the ladder predicts: the ladder "
                "underpredicts decisive results between engines of other families" if pooled > 0
                else "the weaker player scores more than the ladder predicts: the ladder "
                "overpredicts decisive results between engines of other families")
        out.append(f"Both orders pooled, |z| {abs(pooled):.2f} > {Z90:.2f}: by the criterion "
                   f"the ladder does not predict these matches; {side}.")
    else:
        out.append(f"Both orders pooled, |z| {abs(pooled):.2f} <= {Z90:.2f}: by the criterion "
                   "the ladder predicts these matches; \"the ladder underpredicts decisive "
                   "results between engines of other families\" is not told from chance by "
                   f"these {f['pairs']} pairs.")
    if abs(order) > Z90:
        out.append(f"The order effect's |z| {abs(order):.2f} > {Z90:.2f}: the player named "
                   f"first {'gains' if order > 0 else 'loses'} by it, more than chance gives.")
    else:
        out.append(f"The order effect's |z| {abs(order):.2f} <= {Z90:.2f}: no effect of being "
                   "named first is told from chance (a served player's move depends on the "
                   "position alone, so none was expected).")
    if f["seven_rows"] and abs(f["seven"]) > Z90 and abs(pooled) <= Z90 and abs(order) <= Z90:
        out.append(f"The {f['seven_rows']} pairs played before the reversed order had a "
                   f"pooled z of {f['seven']:+.2f} as first played, outside +-{Z90:.2f}; "
                   f"reversed they read {f['seven_reversed']:+.2f}, and neither the pairs in "
                   "both orders nor the order effect is outside: by the criterion, that "
                   "surplus did not hold when the order was reversed.")
    if abs(pooled) > Z90:
        out.append("For a model: between two models unlike the rungs and unlike each other, "
                   "the ladder's difference between their ratings would miss their match by "
                   "more than both errors allow, as it missed these; the match's own games "
                   "measure the pair.")
    elif f["chi2_p"] < 0.1:
        out.append(f"Pair by pair, though, the matches part from the prediction by more than "
                   f"their errors (chi-square p = {f['chi2_p']:.2f}), in no one direction. For "
                   "a model: a match can miss the prediction from the two ladder ratings by "
                   "more than both errors give, either way; the match's own games measure "
                   "the pair.")
    else:
        out.append(f"Nor do the pairs part from the prediction by more than their errors "
                   f"(chi-square p = "
                   f"{f['chi2_p']:.2f}). For a model: where two models are unlike the rungs "
                   "and each other as these engines are, their match is expected to land "
                   f"within +-{Z90:.2f} of the prediction from their two ladder ratings nine "
                   f"times in ten, so a match's z beyond +-{Z90:.2f} is a finding about those "
                   "two (their ratings do not carry over to each other), not the ladder's "
                   "usual error.")
    return out


def _band(lo: float, hi: float) -> str:
    return f"{lo:.0f}+" if math.isinf(hi) else f"{lo:.0f}-{hi:.0f}"


def pairs_markdown(rows: list[dict[str, str]]) -> str:
    """Table (a): each match against the prediction, then each pair in both orders (by
    distance), the pooled z's, the order effect and the sign tests, and what they say."""
    lines = ["| A vs B | openings | A's reading | B's reading | games | pentanomial "
             "| A's score (90%) | ladder's prediction (90%) | z |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        seed = int(r["seed"])
        lines.append(
            f"| {r['a']} vs {r['b']} | {seed + 1}-{seed + int(r['games']) // 2} "
            f"| {float(r['a_elo']):.0f} +- {Z90 * float(r['a_sd']):.0f}"
            f" | {float(r['b_elo']):.0f} +- {Z90 * float(r['b_sd']):.0f} | {r['games']} | "
            f"{r['pentanomial']} | {float(r['score']):.3f} [{float(r['score_lo']):.3f}, "
            f"{float(r['score_hi']):.3f}] | {float(r['predicted']):.3f} "
            f"[{float(r['predicted_lo']):.3f}, {float(r['predicted_hi']):.3f}] | "
            f"{float(r['z']):+.2f} |")
    f = findings(rows)
    orders = [f"the {name} alone ({f[key + '_rows']} rows, openings {where}): pooled z "
              f"{f[key]:+.2f}" for name, key, where in (
                  ("pairs' first order", "first_order", f"1-{PAIR_GAMES // 2}"),
                  ("pairs' reversed order", "reversed_order",
                   f"{PAIR_GAMES // 2 + 1}-{PAIR_GAMES}"))
              if f[key + "_rows"]]
    seven = [f"the {f[key + '_rows']} pairs played before the reversed order, {name}: pooled "
             f"z {f[key]:+.2f}, the first player above the prediction in {f[key + '_above']} of "
             f"{f[key + '_rows']}"
             for name, key in (("as first played", "seven"), ("reversed", "seven_reversed"))
             if f[key + "_rows"]]
    lines += ["", f"{f['rows']} matches, each z turned to its first player: pooled z "
              f"{f['rows_pooled']:+.2f}; the first player beat the prediction in "
              f"{f['rows_above']} of {f['rows']} (sign test p = {f['rows_sign_p']:.3f}); "
              + "; ".join(orders + seven) + "."]
    pairs = both_orders(rows)
    if not pairs:
        return "\n".join(lines)
    lines += ["", "| X (stronger by the readings) vs Y | X - Y | z, X first | z, X second "
              "| X's score, both orders (90%) | ladder's prediction (90%) | z, both orders "
              "| order effect: first - second (90%) |", "|---|---|---|---|---|---|---|---|"]
    for p in pairs:
        lines.append(
            f"| {p['x']} vs {p['y']} | {p['distance']:+.0f} | {p['z_first']:+.2f} | "
            f"{p['z_second']:+.2f} | {p['score']:.3f} [{p['score'] - Z90 * p['score_sd']:.3f}, "
            f"{p['score'] + Z90 * p['score_sd']:.3f}] | {p['predicted']:.3f} "
            f"[{p['predicted_lo']:.3f}, {p['predicted_hi']:.3f}] | {p['z']:+.2f} | "
            f"{p['order']:+.3f} [{p['order'] - Z90 * p['order_sd']:+.3f}, "
            f"{p['order'] + Z90 * p['order_sd']:+.3f}] |")
    bands = "; ".join(
        f"{_band(b['lo'], b['hi'])} apart, {b['pairs']} pair{'s' if b['pairs'] != 1 else ''}"
        + (f": {b['pooled']:+.2f}" if b["pairs"] else "") for b in f["bands"])
    lines += ["", f"{f['pairs']} pairs in both orders, each turned to its stronger player: "
              f"pooled z {f['pooled']:+.2f} (within +-{Z90:.2f} nine times in ten when the "
              f"ladder predicts the matches; p = {f['pooled_p']:.3f}); the stronger player "
              f"beat the prediction in {f['stronger_above']} of {f['pairs']} (sign test p = "
              f"{f['stronger_sign_p']:.3f}); chi-square {f['chi2']:.1f} on {f['pairs']} "
              f"degrees of freedom (p = {f['chi2_p']:.2f}); {f['beyond']} of {f['pairs']} "
              f"|z| above {Z90:.2f} ({0.1 * f['pairs']:.1f} expected by chance). By distance, "
              f"pooled z {bands}" + ("" if math.isnan(f["rho"]) else f" (Spearman's rho of z on "
              f"distance {f['rho']:+.2f}, p = {f['rho_p']:.2f})") + f". The order "
              f"effect: {f['mean_order']:+.3f} in score on average, pooled z "
              f"{f['order_pooled']:+.2f} (p = {f['order_p']:.3f}); the first player scored "
              f"more than the second in {f['order_above']} of {f['pairs']} (sign test p = "
              f"{f['order_sign_p']:.3f}); {f['order_beyond']} of {f['pairs']} outside their "
              f"90% interval ({0.1 * f['pairs']:.1f} expected by chance).", "",
              " ".join(_verdicts(f))]
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
    r.add_argument("--replay", action="store_true",
                   help="also play the pairs whose rows are committed but whose games are "
                   "not in --out (default: those rows stand as committed)")
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
