"""What a refit of the reference ladder changed in everything that stands on it.

A new version of the reference ladder (more calibration games, refitted) moves its rungs and
shrinks their errors, and with them the map from Stockfish 15.1's ladder, the Maia nets'
readings, the crosswalk to Lichess ratings and the static-to-game fit, each regenerated from
its committed games on the new fit. This script reads those committed files and keeps their
headline figures in `bench/data/ladder_refit.csv`, one set of rows per ladder version, so the
docs can show each version's figures side by side (the before/after table):

    python -m bench.ladder_refit            # print the current version's figures
    python -m bench.ladder_refit --write    # and keep them under its version number

A test holds the current version's rows to the committed files, so the table cannot drift
from them; an older version's rows stay as they were written when it was current.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench import ladder_coverage
from chess_eval.benchmark.arena.ladder import load_ladder
from chess_eval.benchmark.arena.versions import version_of
from chess_eval.benchmark.core.data import REFERENCE_LADDER
from chess_eval.benchmark.human.anchors import HUMAN_DIR, READINGS_FILE
from chess_eval.benchmark.ladders import design
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.cli import run_cli
from chess_eval.errors import DataError
from chess_eval.files import sha256_file, write_csv

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "bench" / "data" / "ladder_refit.csv"  # --write's table
FIELDS = ("version", "games", "quantity", "item", "value", "lo", "hi")
MAP = "data/ladders/ladder_map.json"  # the map from 15.1's ladder (bench.ladder_map)
FIT = "data/game_elo_fit.json"  # the static-to-game fit (bench.family_fit)


def _row(quantity: str, item: str, value: float, lo: float | None = None,
         hi: float | None = None, digits: int = 0) -> dict[str, str]:
    """One figure, rounded as the docs print it (so a rerun writes the same text)."""
    def fmt(x: float | None) -> str:
        return "" if x is None else f"{x:.{digits}f}"
    return {"quantity": quantity, "item": item, "value": fmt(value), "lo": fmt(lo),
            "hi": fmt(hi)}


def rung_rows(root: Path) -> list[dict[str, str]]:
    """Each rung's Elo and 90% interval, and the widest half-width up to 2,600 and above."""
    ladder = load_ladder(root / REFERENCE_LADDER.relative_to(ROOT))
    rows = [_row("rung", r.name, r.elo, r.lo, r.hi) for r in ladder.rungs]
    low = [(r.hi - r.lo) / 2 for r in ladder.rungs if r.elo <= design.GOAL_SPLIT and r.hi > r.lo]
    high = [(r.hi - r.lo) / 2 for r in ladder.rungs if r.elo > design.GOAL_SPLIT]
    rows.append(_row("rungs", "widest half-width up to 2,600", max(low)))
    rows.append(_row("rungs", "widest half-width above 2,600", max(high)))
    return rows


def map_rows(root: Path) -> list[dict[str, str]]:
    """The map's slope and spread, its held-out check, and each player's reference reading."""
    data = json.loads((root / MAP).read_text(encoding="utf-8"))
    half = Z90 * data["slope_sd"]
    inside = sum(x["inside"] for x in data["loo"])
    rows = [_row("map", "slope", data["slope"], data["slope"] - half, data["slope"] + half,
                 digits=3),
            _row("map", "players' spread beyond their errors (tau) carried by conversions",
                 data["tau"]),
            _row("map", "tau's maximum-likelihood estimate",
                 data.get("tau_estimate", data["tau"])),
            _row("map", f"players held out inside their 90% interval (of {len(data['loo'])})",
                 inside, digits=0)]
    for r in data["readings"]:
        rows.append(_row("map player (reference reading)", r["player"], r["y"],
                         r["y"] - Z90 * r["y_sd"], r["y"] + Z90 * r["y_sd"]))
    return rows


def maia_rows(root: Path) -> list[dict[str, str]]:
    """Each Maia net's game Elo on the reference ladder with its 90% interval."""
    from bench.maia_players import read_rows

    return [_row("Maia net", f"maia-{r['net']}", float(r["game_elo"]),
                 float(r["game_elo_lo"]), float(r["game_elo_hi"]))
            for r in read_rows(root / HUMAN_DIR.relative_to(ROOT) / READINGS_FILE)]


def crosswalk_rows(root: Path) -> list[dict[str, str]]:
    """Each time control's slope posterior and the 90% width of a figure mid-anchors."""
    from bench.maia_players import slope_rows, width_rows

    human = root / HUMAN_DIR.relative_to(ROOT)
    rows = [_row("crosswalk slope", x["time_control"], x["median"], x["lo"], x["hi"],
                 digits=2) for x in slope_rows(human)]
    rows += [_row("crosswalk 90% width mid-anchors", x["time_control"], x["shared"])
             for x in width_rows(human)]
    return rows


def fit_rows(root: Path) -> list[dict[str, str]]:
    """The static-to-game fit: its coefficients, residual and between-family spreads."""
    data = json.loads((root / FIT).read_text(encoding="utf-8"))
    names = ["intercept", *data["features"]]
    rows = [_row("static fit", f"coefficient: {n}", c, digits=1)
            for n, c in zip(names, data["coef"], strict=False)]
    rows.append(_row("static fit", "residual sd", data["residual_sd"]))
    rows.append(_row("static fit", "between-family sd", data["family_sd"]))
    return rows


def current_rows(root: Path = ROOT) -> list[dict[str, str]]:
    """The current reference ladder's figures, each row with its version and games."""
    path = root / REFERENCE_LADDER.relative_to(ROOT)
    version = version_of(path, sha256_file(path))
    if version is None:
        raise DataError(f"{path}: its digest is not in its versions file: a refit records "
                        "its version first (benchmark.py calibrate)")
    found = [*rung_rows(root), *map_rows(root), *maia_rows(root), *crosswalk_rows(root),
             *fit_rows(root)]
    return [{"version": str(version.number), "games": str(version.games), **r} for r in found]


def read_table(path: Path = TABLE) -> list[dict[str, str]]:
    """The kept rows ([] when the table does not exist yet)."""
    return ladder_coverage.read_table(path)


def write(rows: list[dict[str, str]], path: Path = TABLE) -> None:
    """Replace the table's rows of these rows' version by them."""
    versions = {r["version"] for r in rows}
    kept = [r for r in read_table(path) if r["version"] not in versions]
    write_csv(path, list(FIELDS), sorted(kept, key=lambda r: int(r["version"])) + rows)


def markdown(rows: list[dict[str, str]], versions: int = 2) -> str:
    """The last `versions` versions side by side, a line a figure (a rung or player missing
    from a version reads '-')."""
    numbers = sorted({int(r["version"]) for r in rows})[-versions:]
    games = {int(r["version"]): int(r["games"]) for r in rows}
    cell = {(int(r["version"]), r["quantity"], r["item"]): r for r in rows}
    # The newest version's order (a rung added sits in its place), then what only older
    # versions have.
    order: list[tuple[str, str]] = []
    for version in reversed(numbers):
        for r in rows:
            if int(r["version"]) == version and (r["quantity"], r["item"]) not in order:
                order.append((r["quantity"], r["item"]))
    head = " | ".join(f"version {v} ({games[v]:,} games)" for v in numbers)
    lines = [f"| figure | item | {head} |", "|---|---|" + "---|" * len(numbers)]
    for quantity, item in order:
        got = [cell.get((v, quantity, item)) for v in numbers]
        texts = ["-" if r is None else r["value"] + (f" [{r['lo']}, {r['hi']}]" if r["lo"]
                                                      else "") for r in got]
        lines.append(f"| {quantity} | {item} | {' | '.join(texts)} |")
    return "\n".join(lines)


def main() -> None:
    """Print the current version's figures; with --write keep them in the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", type=Path, nargs="?", const=TABLE, default=None,
                   help=f"keep them (default path: {TABLE.relative_to(ROOT)})")
    args = p.parse_args()
    rows = current_rows()
    print(markdown(rows))
    if args.write:
        write(rows, args.write)
        print(f"wrote {len(rows)} rows of version {rows[0]['version']} to {args.write}")


if __name__ == "__main__":
    run_cli(main)
