"""The map from Stockfish 15.1's ladder to the reference ladder, fitted and checked.

Reads the map's players (data/ladders/ladder_map_players.csv: engines of other families,
whose moves do not depend on the ladder's engine), takes those rated on both ladders with at
least MAP_GAMES games on each, fits the map of
chess_eval/benchmark/games/ladder_map.py, and checks it leaving one player out at a time: 85-95% of
the held-out players' reference readings should fall inside their mapped 90% intervals.
With --write it writes the committed map (data/ladders/ladder_map.json) the leaderboard
converts by.

    python -m bench.validation_players run --map --ladder stockfish-15.1 --stockfish <15.1>
    python -m bench.validation_players run --map --ladder stockfish-17.1 \\
        --stockfish <a 17.1 build>
    python -m bench.validation_players map-table
    python -m bench.ladder_map --write data/ladders/ladder_map.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scipy.stats import binomtest

from bench.validation_players import MAP_DATA, MAP_GAMES, read_table
from chess_eval.benchmark.core.data import (
    FIRST_LADDER,
    LADDER_MAP,
    REFERENCE_LADDER,
    ROOT,
    ladder_label,
)
from chess_eval.benchmark.stats.ladder_map import (
    Reading,
    fit_map,
    leave_one_out,
    map_json,
)
from chess_eval.files import atomic_write

# The two ladders, as the tables name them.
SOURCE, TARGET = ladder_label(FIRST_LADDER), ladder_label(REFERENCE_LADDER)
LADDER_DEPENDENT = ("rungs", "softmax")  # families whose moves come from Stockfish itself


def readings(path: Path, min_games: int = MAP_GAMES) -> list[Reading]:
    """The players rated on both ladders with at least `min_games` games on each."""
    rows = read_table(path)
    by = {(r["player"], r["ladder"]): r for r in rows}
    out = []
    for (player, ladder), a in sorted(by.items()):
        b = by.get((player, TARGET))
        if ladder != SOURCE or b is None or a["family"] in LADDER_DEPENDENT:
            continue
        if min(int(a["games"]), int(b["games"])) < min_games:
            continue
        out.append(Reading(player, a["family"], float(a["game_elo"]), float(a["game_elo_sd"]),
                           float(b["game_elo"]), float(b["game_elo_sd"])))
    return sorted(out, key=lambda r: r.x)


def main() -> None:
    """Fit, check, print; optionally write the map."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=MAP_DATA)
    p.add_argument("--min-games", type=int, default=MAP_GAMES)
    p.add_argument("--write", type=Path, default=None,
                   help=f"write the map here (the committed one is {LADDER_MAP.relative_to(ROOT)})")
    args = p.parse_args()
    found = readings(args.data, args.min_games)
    fit = fit_map(found, "Stockfish 15.1", "Stockfish 17.1")
    loo = leave_one_out(found, fit.source, fit.target)
    print("| player | family | 15.1 | 17.1 | mapped, held out (90%) | inside |")
    print("|---|---|---|---|---|---|")
    for x in loo:
        print(f"| {x['player']} | {x['family']} | {x['x']:.0f} | {x['y']:.0f} | "
              f"{x['predicted']:.0f} [{x['lo']:.0f}, {x['hi']:.0f}] | "
              f"{'yes' if x['inside'] else 'no'} |")
    inside = sum(x["inside"] for x in loo)
    print(f"\nslope {fit.slope:.4f} +- {fit.slope_sd:.4f}, tau {fit.tau:.0f} Elo (the "
          f"one-sided 90% upper bound; estimate {fit.tau_estimate:.0f}), {len(found)} players; "
          f"leave-one-out: {inside} of {len(loo)} inside the 90% interval "
          f"({inside / len(loo):.0%}; binomial test against 90%: p = "
          f"{binomtest(inside, len(loo), 0.9).pvalue:.2f})")
    if args.write:
        with atomic_write(args.write) as handle:
            json.dump(map_json(fit, loo), handle, indent=1)
            handle.write("\n")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
