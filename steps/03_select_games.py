"""Step 03: select the game positions of the tree from games.db (positions.csv)."""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chess_eval.cli import (
    add_engine_args,
    add_out_arg,
    cluster_of,
    non_negative_int,
    positive_float,
    step_main,
)
from chess_eval.cluster import EngineCluster
from chess_eval.engine import EngineSettings, find_stockfish
from chess_eval.files import atomic_write, sha256_file, write_csv
from chess_eval.testset import gamesdb
from chess_eval.testset.pipeline import StepSpec
from chess_eval.testset.probecache import ProbeCache
from chess_eval.testset.report import leaf_rows, shortfall_lines
from chess_eval.testset.selection import Draw, Game, SelectConfig, Selector, rand_key
from chess_eval.testset.tree import ELO_BUCKETS, GAME_TARGETS, leaf_order, scale_targets

log = logging.getLogger(__name__)

VERSION = "3"  # 3: the scarcity draw of a game's ply
NAME = "03_select_games"
PLAYER_SHARE = 0.01  # default per-player cap: this share of the game positions
COLUMNS = [
    "fen", "fen4", "pos_id", "hash_bucket", "game_id", "game_url", "ply", "elo_bucket",
    "avg_elo", "white_elo", "black_elo", "tc_class", "phase", "type", "side", "legal_moves",
    "castling", "played_move", "history", "probe_best", "probe_gap", "good_moves", "mate",
    "engine",
]


def build_parser() -> argparse.ArgumentParser:
    """Command-line options of step 03."""
    parser = argparse.ArgumentParser(
        prog="03_select_games.py",
        description="Fill the game leaves of the seed's tree (Elo bucket x phase x "
        "tactical/quiet x side) from OUT/games.db: at most one position per game, drawn by "
        "seeded reservoir sampling, labeled by a depth-12 MultiPV-4 Stockfish probe. Writes "
        "OUT/positions.csv and OUT/positions_report.json (targets, achieved, shortfalls).",
    )
    parser.add_argument("--seed", type=int, default=0,
                        help="selection seed: same data and seed give the same file (default 0)")
    parser.add_argument("--scale", type=positive_float, default=1.0,
                        help="multiply every leaf target by this, rounding level by level "
                        "(default 1: 800 positions)")
    add_engine_args(parser, "worker processes of the embedded Dask cluster, one engine each")
    parser.add_argument("--mate-share", type=float, default=0.04,
                        help="at most this share of the game positions may have a forced "
                        "mate (default 0.04); step 05 gives puzzles what is left of 4%% of "
                        "all cases")
    parser.add_argument("--max-per-player", type=non_negative_int, default=None,
                        help="at most this many positions from games of any one player, "
                        "counting both players of a game (default: 1%% of the game "
                        "positions, at least 1; 0: no cap)")
    parser.add_argument("--ply-draw", type=draw_kind, default=Draw.SCARCITY,
                        metavar="{" + ",".join(Draw) + "}",
                        help="how a game's position is drawn among its plies whose leaf has "
                        "room: 'scarcity' (default) weighs each by its leaf's free room over "
                        "the plies seen so far that could fill it, so scarce leaves (endgames, "
                        "say) fill first; 'uniform' draws every such ply alike")
    add_out_arg(parser)
    return parser


def draw_kind(text: str) -> Draw:
    """--ply-draw's value, or one line naming the choices."""
    try:
        return Draw(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a ply draw: choose {' or '.join(Draw)}") from None


def spec(args: argparse.Namespace) -> StepSpec:
    """Inputs, outputs and parameters of this run (the engine binary counts as an input)."""
    return StepSpec(
        name=NAME, version=VERSION,
        inputs=(str(args.out / "games.db"), find_stockfish(args.stockfish)),
        outputs=(args.out / "positions.csv", args.out / "positions_report.json"),
        params={"seed": args.seed, "scale": args.scale, "mate_share": args.mate_share,
                "max_per_player": _player_cap(args), "ply_draw": str(args.ply_draw)},
    )


def _player_cap(args: argparse.Namespace) -> int:
    """--max-per-player, or its default: 1% of the game positions, at least 1."""
    if args.max_per_player is not None:
        return int(args.max_per_player)
    total = sum(scale_targets(GAME_TARGETS, args.scale).values())
    return max(1, int(PLAYER_SHARE * total))


def _games(conn: sqlite3.Connection, bucket: str, seed: int) -> Iterator[Game]:
    """Games of a bucket in rand_key order, read lazily so memory stays bounded."""
    query = (
        "SELECT id, site, white, black, elo_bucket, avg_elo, white_elo, black_elo, tc_class, "
        "movetext "
        "FROM games WHERE elo_bucket = ? ORDER BY rand_key(?, id)"
    )
    for row in conn.execute(query, (bucket, seed)):
        yield Game(*row)


def run(args: argparse.Namespace) -> None:
    """Select positions and write positions.csv and its report."""
    targets = scale_targets(GAME_TARGETS, args.scale)
    path = find_stockfish(args.stockfish)
    conn = gamesdb.open_existing(args.out / "games.db")
    conn.create_function("rand_key", 2, rand_key, deterministic=True)
    settings = EngineSettings(path=path)
    cache = ProbeCache(args.out / "probes.db", engine_key=f"{sha256_file(Path(path))}|d12|m4")
    config = SelectConfig(seed=args.seed, targets=targets, mate_share=args.mate_share,
                          max_per_player=_player_cap(args), draw=args.ply_draw)
    try:
        with EngineCluster(settings, cluster_of(args)) as pool:
            engine_name = pool.name
            games = {bucket: _games(conn, bucket, args.seed) for bucket in ELO_BUCKETS}
            result = Selector(config, pool, cache).run(games)
    finally:
        cache.close()
        conn.close()
    rows = sorted(result.rows, key=lambda row: leaf_order(row, "pos_id"))
    for row in rows:
        row["engine"] = engine_name
    write_csv(args.out / "positions.csv", COLUMNS, rows)
    leaves = leaf_rows(targets, result.filled, result.player_capped)
    counts = dict(sorted(result.counts.counts.items()))
    top = max(result.players.items(), key=lambda kv: (kv[1], kv[0]), default=("", 0))
    report = {
        "engine": engine_name, "seed": args.seed, "scale": args.scale,
        "ply_draw": str(args.ply_draw),
        "target": sum(targets.values()), "selected": len(rows),
        "probes_per_selected": round(counts.get("probes", 0) / max(len(rows), 1), 3),
        "max_per_player": config.max_per_player,
        "largest_player": {"name": top[0], "positions": top[1],
                           "share": round(top[1] / max(len(rows), 1), 4)},
        "counts": counts, "leaves": leaves,
    }
    with atomic_write(args.out / "positions_report.json") as handle:
        json.dump(report, handle, indent=2)
    log.info("selected %d of %d positions; %d probes (%.2f per position); %s",
             len(rows), report["target"], counts.get("probes", 0),
             report["probes_per_selected"], counts)
    short = shortfall_lines(leaves)
    if short:
        log.warning("%d leaves short of their target (the data ran out, or the per-player "
                    "cap turned games away):\n%s",
                    len(short), "\n".join(short))


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    return step_main(build_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
