"""The validation set: players unlike the rungs, rated by play and run through the static test.

Each player is an engine of another family than the rungs (Debian's GNU Chess, Toga II,
Glaurung, Sjeng at a fixed depth, some mixed with random moves) or Stockfish choosing among
its best moves with a temperature (plausible, human-like errors). Every one goes through the
path a language model takes: `benchmark.py serve` answers as the model 'served/SPEC' over
HTTP on 127.0.0.1, and `benchmark.py` (static, all questions) and `benchmark.py play` (games
on a ladder) rate it. Both resume through their caches, so an interrupted `run` goes on where
it stopped. `table` gathers the results into the committed data file.

    python -m bench.validation_players run                       # every player, stockfish-15.1
    python -m bench.validation_players run --cross               # the cross-ladder players
        --ladder stockfish-17.1 --stockfish <a Stockfish 17.1 build>
    python -m bench.validation_players run --map --ladder L --stockfish S  # the map's players
    python -m bench.validation_players map-table                # ladder_map_players.csv
    python -m bench.validation_players map-games                # their games, committed
    python -m bench.validation_players map-refit                # the reference ladder's rows
                                                                # refitted from those games
    python -m bench.validation_players table --write bench/data/validation_players.csv
    python -m bench.validation_players table --update --write bench/data/validation_players.csv
    python -m bench.validation_players run --static-only --stockfish /usr/games/stockfish
    python -m bench.static_vs_game --stockfish /usr/games/stockfish
    python -m bench.validation_players table --restatic --write bench/data/validation_players.csv
                          # after a new questions.csv: the static columns of every row
                          # replaced (players' and rungs' runs), with the engine the table's
                          # play runs used (Stockfish 15.1: the rungs and softmax players)
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import benchmark
from chess_eval.benchmark.arena.ladder import ladders_in, load_ladder
from chess_eval.benchmark.core.data import (
    FIRST_LADDER,
    MAP_PLAYERS,
    REFERENCE_LADDER,
    ladder_label,
    ladder_path,
)
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import slug
from chess_eval.benchmark.core.server import SERVED, PlayerServer
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.cli import run_cli
from chess_eval.exits import Exit
from chess_eval.files import atomic_write, sha256_file

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "validation"
DATA = ROOT / "bench" / "data" / "validation_players.csv"
MAP_DATA = MAP_PLAYERS  # the map's players: game Elos on both ladders
MAX_GAMES = 60
MAP_GAMES = 100  # games per player and ladder of the map between the ladders


@dataclass(frozen=True)
class Player:
    """One validation player."""

    spec: str  # the baseline spec the server plays ('served/' + spec is the model name)
    family: str  # its lineage: players of one family are left out together
    cross: bool = False  # also rated on the other engine's ladder (one scale across engines)
    # A player of the map between the ladders: rated on both with at least MAP_GAMES games
    # (six strengths from about 400 to 2,450, two families at each).
    map: bool = False


# Families by lineage: GNU Chess 6 and Toga II both descend from Fruit 2.1, so they are one.
PLAYERS = (
    Player("gnuchess:depth=1", "fruit"),
    Player("gnuchess:depth=1,random=50", "fruit", map=True),
    Player("toga2:depth=1", "fruit", cross=True),
    Player("toga2:depth=3", "fruit", map=True),
    Player("toga2:depth=1,random=25", "fruit", map=True),
    Player("toga2:depth=1,random=85", "fruit", map=True),
    Player("glaurung:depth=1", "glaurung"),
    Player("glaurung:depth=4", "glaurung", map=True),
    Player("glaurung:depth=1,random=25", "glaurung", cross=True, map=True),
    Player("glaurung:depth=1,random=70", "glaurung", map=True),
    Player("sjeng:depth=2", "sjeng", cross=True, map=True),
    Player("sjeng:depth=4", "sjeng"),
    Player("sjeng:depth=3,random=50", "sjeng", map=True),
    Player("sjeng:depth=2,random=80", "sjeng", map=True),
    Player("softmax:temp=30,nodes=2000", "softmax"),
    Player("softmax:temp=100,nodes=2000", "softmax"),
    Player("softmax:temp=300,nodes=2000", "softmax"),
    Player("softmax:temp=1000,nodes=2000", "softmax"),
    # The map's players only (the strengths the validation set lacked a second family at).
    Player("toga2:depth=1,random=70", "fruit", map=True),
    Player("toga2:depth=1,random=10", "fruit", map=True),
)


@contextmanager
def serving(stockfish: str | None) -> Iterator[PlayerServer]:
    """A player server on a free port of 127.0.0.1, in a thread, for the duration."""
    server = PlayerServer("127.0.0.1", 0, stockfish, seed=0, slots=2)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.close()


def latest(out: Path, kind: Kind, label: str) -> dict[str, Any]:
    """The newest result of `kind` whose file name starts with `label`."""
    found = sorted(out.glob(f"{slug(file_name(kind, label))}__*.json"),
                   key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no {kind} result for {label} in {out}")
    result: dict[str, Any] = json.loads(found[-1].read_text())
    return result


def run_player(player: Player, base_url: str, ladder: Path | None, stockfish: str | None,
               out: Path, static: bool, max_games: int, target: float | None = None,
               play: bool = True) -> None:
    """The player's static run (on every question) and its play run; each resumes."""
    model = f"{SERVED}/{player.spec}"
    # The server's port differs from run to run: --endpoint-id keeps the answers' and games'
    # keys the same, so an interrupted run resumes.
    chat = ["--model", model, "--base-url", base_url, "--endpoint-id", SERVED, "--out",
            str(out)]
    engine = ["--stockfish", stockfish] if stockfish else []
    if static:
        status = benchmark.main([*chat, *engine, "--bootstrap", "300"])
        if status != 0:
            raise SystemExit(f"static run of {model} ended with status {status}")
    if not play:
        return
    ladder_args = ["--ladder", str(ladder)] if ladder else []
    # A target below any reachable half-width plays exactly --max-games games.
    until = ["--target", f"{target:g}"] if target else []
    status = benchmark.main(["play", *chat, *engine, *ladder_args, "--max-games",
                             str(max_games), *until])
    if status == Exit.INCOMPLETE and _rated(out, model) >= max_games:
        # Sjeng 11.2 fails in some positions (two games of sjeng:depth=2, at plies 232 and
        # 267; not the game's length: it plays on at 300 plies elsewhere), the same way every
        # time: those games stay aborted and unrated, and the run's replacements make its games.
        print(f"play run of {model}: {max_games} games rated; the games its engine failed "
              "in stay aborted (unrated)")
        return
    if status != 0:
        raise SystemExit(f"play run of {model} ended with status {status}")


def _rated(out: Path, model: str) -> int:
    """The rated standard games of the model's newest play result in `out`."""
    return int(latest(out, Kind.PLAY, f"{model}__standard")["conditions"]["standard"]["games"])


def run_command(args: argparse.Namespace) -> None:
    """Rate every player (or the cross-ladder ones, or a shard) through the served path."""
    if args.map:
        players = [p for p in PLAYERS if p.map]
    elif args.static_only:
        players = [p for p in PLAYERS if p.spec in static_players()]
    else:
        players = [p for p in PLAYERS if p.cross or not args.cross]
    index, count = args.shard
    players = players[index::count]
    out = args.out / (Path(ladder_label(args.ladder)).stem if args.ladder else "ladder")
    if args.map:
        kept = kept_map_players(f"{out.name}.csv")
        for player in (p for p in players if p.spec in kept):
            print(f"{player.spec}: its {MAP_GAMES} games on {out.name} are in "
                  f"{MAP_GAMES_FILE.name} already", flush=True)
        players = [p for p in players if p.spec not in kept]
    with serving(args.stockfish) as server:
        for n, player in enumerate(players, start=1):
            print(f"[{n}/{len(players)}] {player.spec} ({player.family})", flush=True)
            # The static test does not depend on the ladder: run once, in the first ladder's
            # directory.
            run_player(player, server.base_url, args.ladder, args.stockfish, out,
                       static=not (args.cross or args.map),
                       max_games=MAP_GAMES if args.map else args.max_games,
                       target=1.0 if args.map else None, play=not args.static_only)


def static_players() -> set[str]:
    """The players whose rows in the committed table have static columns."""
    return {r["player"] for r in read_table(DATA) if r["family"] != RUNGS and r["accuracy"]}


METRICS = ("accuracy", "acpl", "best_move_rate", "grade_blunder", "grade_mistake")
RUNGS = "rungs"  # the family name of the ladder's own rungs


def static_columns(static: dict[str, Any]) -> dict[str, Any]:
    """A static result's metrics with their 90% intervals, as table columns."""
    iv = static["intervals"]
    row: dict[str, Any] = {}
    for metric in METRICS:
        for suffix, key in (("", "value"), ("_lo", "lo"), ("_hi", "hi")):
            row[f"{metric}{suffix}"] = round(iv[metric][key], 4)
    row["questions"] = static["n"]
    return row


def rung_rows(ladder_path: Path, rungs_out: Path) -> list[dict[str, Any]]:
    """The ladder's rungs as rows of the table (static runs by bench/static_vs_game.py)."""
    ladder = load_ladder(ladder_path)
    found = []
    for rung in ladder.rungs:
        static = latest(rungs_out, Kind.STATIC, f"{rung.spec}__fen@1__all")
        sd = (rung.hi - rung.lo) / (2 * Z90)
        found.append({"player": rung.spec, "family": RUNGS, "ladder": ladder_label(ladder_path),
                      "game_elo": round(rung.elo, 1), "game_elo_lo": round(rung.lo, 1),
                      "game_elo_hi": round(rung.hi, 1), "game_elo_sd": round(sd, 1),
                      "games": rung.games, **static_columns(static)})
    return found


def rows(out: Path) -> list[dict[str, Any]]:
    """One row per player and ladder rated: family, game Elo, games, static profile."""
    found = []
    static_dir = out / "ladder"
    for ladder_dir in sorted(d for d in out.iterdir() if d.is_dir()):
        for player in PLAYERS:
            label = f"{SERVED}/{player.spec}"
            try:
                play = latest(ladder_dir, Kind.PLAY, f"{label}__standard")
                static = latest(static_dir, Kind.STATIC, f"{label}__fen@1__all")
            except SystemExit:
                continue
            found.append({"player": player.spec, "family": player.family,
                          "ladder": f"{ladder_dir.name}.csv", **game_columns(play),
                          **static_columns(static)})
    return found


def game_columns(play: dict[str, Any]) -> dict[str, Any]:
    """A play result's standard game Elo with its 90% interval, and its games."""
    cond = play["conditions"]["standard"]
    elo = cond["elo"]
    return {"game_elo": elo["mean"], "game_elo_lo": elo["lo"], "game_elo_hi": elo["hi"],
            "game_elo_sd": round((elo["hi"] - elo["lo"]) / (2 * Z90), 1),
            "games": cond["games"]}


def updated(table: list[dict[str, str]], out: Path) -> tuple[list[dict[str, Any]], int]:
    """The committed table with the game columns of every row whose play run is in `out`
    (its ladder's directory) replaced by that run's; the static columns, which do not depend
    on the ladder, stay. A player's run on a ladder the table has no row of it for is added,
    with the static columns of its other row. Returns the rows and how many were replaced or
    added."""
    rows_out: list[dict[str, Any]] = []
    replaced = 0
    for row in table:
        ladder_dir = out / row["ladder"].removesuffix(".csv")
        try:
            play = latest(ladder_dir, Kind.PLAY, f"{SERVED}/{row['player']}__standard")
        except SystemExit:
            rows_out.append(row)
            continue
        rows_out.append({**row, **game_columns(play)})
        replaced += 1
    have = {(r["player"], r["ladder"]) for r in rows_out}
    first = {r["player"]: r for r in reversed(rows_out)}
    blank = dict.fromkeys(table[0], "") if table else {}
    ladders = {Path(ladder_label(p)).stem for p in ladders_in()}  # the committed ones
    for ladder_dir in sorted(d for d in out.iterdir() if d.is_dir() and d.name in ladders)\
            if out.exists() else []:
        for player in PLAYERS:
            key = (player.spec, f"{ladder_dir.name}.csv")
            if key in have:
                continue
            try:
                play = latest(ladder_dir, Kind.PLAY, f"{SERVED}/{player.spec}__standard")
            except SystemExit:
                continue
            # A player without a static run (the map's own) has its static columns empty.
            base = first.get(player.spec, {**blank, "player": player.spec,
                                           "family": player.family})
            rows_out.append({**base, "ladder": key[1], **game_columns(play)})
            replaced += 1
    return rows_out, replaced


def restatic(table: list[dict[str, str]], out: Path, rungs: Path) -> list[dict[str, Any]]:
    """The committed table with the static columns of every row that has them replaced by
    the newest static run on the committed questions.csv (a rung's in `rungs`, a player's in
    `out`/ladder); the game columns stay. A row without such a run is an error: a table
    whose rows answered two different test sets would fit nothing."""
    digest = sha256_file(ROOT / "questions.csv")
    rows_out: list[dict[str, Any]] = []
    for row in table:
        if not row["accuracy"]:
            rows_out.append(row)
            continue
        label = row["player"] if row["family"] == RUNGS else f"{SERVED}/{row['player']}"
        static = latest(rungs if row["family"] == RUNGS else out / "ladder", Kind.STATIC,
                        f"{label}__fen@1__all")
        if static["questions_sha256"] != digest:
            raise SystemExit(f"the newest static run of {label} answered another questions "
                             "file: run it again on questions.csv")
        rows_out.append({**row, **static_columns(static)})
    return rows_out


def table_command(args: argparse.Namespace) -> None:
    """Print the players' table; with --write, write it as the committed data file."""
    if args.restatic:
        found = restatic(read_table(DATA), args.out, args.rungs)
        print(f"static columns of {sum(bool(r['accuracy']) for r in found)} rows from the "
              f"static runs in {args.out / 'ladder'} and {args.rungs}")
    elif args.update:
        found, replaced = updated(read_table(DATA), args.out)
        if not replaced:
            raise SystemExit(f"no play runs of the rows of {DATA.name} in {args.out}")
        print(f"{replaced} rows' game columns from the play runs in {args.out}")
    else:
        found = rows(args.out)
        if found:
            found = rung_rows(args.ladder, args.rungs) + found
    if not found:
        raise SystemExit(f"no validation results in {args.out}: run `run` first")
    print("| player | family | ladder | game Elo (90%) | games | accuracy | best move |")
    print("|---|---|---|---|---|---|---|")
    for r in found:
        v = {k: float(r[k]) for k in ("game_elo", "game_elo_lo", "game_elo_hi", "accuracy",
                                      "best_move_rate")}  # numbers, or the file's text
        print(f"| {r['player']} | {r['family']} | {r['ladder']} | {v['game_elo']:.0f} "
              f"[{v['game_elo_lo']:.0f}, {v['game_elo_hi']:.0f}] | {r['games']} | "
              f"{v['accuracy']:.1f} | {v['best_move_rate']:.2f} |")
    if args.write:
        with atomic_write(args.write) as handle:
            writer = csv.DictWriter(handle, fieldnames=list(found[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(found)
        print(f"wrote {args.write}")


MAP_FIELDS = ("player", "family", "ladder", "game_elo", "game_elo_lo", "game_elo_hi",
              "game_elo_sd", "games")


def map_rows(out: Path) -> list[dict[str, Any]]:
    """The map's players' play runs in `out`, a row per player and ladder directory."""
    found = []
    for ladder_dir in sorted(d for d in out.iterdir() if d.is_dir()) if out.exists() else []:
        for player in (p for p in PLAYERS if p.map):
            try:
                play = latest(ladder_dir, Kind.PLAY, f"{SERVED}/{player.spec}__standard")
            except SystemExit:
                continue
            found.append({"player": player.spec, "family": player.family,
                          "ladder": f"{ladder_dir.name}.csv", **game_columns(play)})
    return found


def map_command(args: argparse.Namespace) -> None:
    """Write the map's players' game Elos on both ladders (the committed MAP_DATA)."""
    found = map_rows(args.out)
    if not found:
        raise SystemExit(f"no play runs of the map's players in {args.out}: run `run --map`")
    with atomic_write(args.write) as handle:
        writer = csv.DictWriter(handle, fieldnames=MAP_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(found)
    print(f"wrote {len(found)} rows to {args.write}")


MAP_GAMES_FILE = MAP_DATA.with_name("ladder_map_games.csv.gz")  # the readings' games


def kept_map_players(ladder: str, games: Path | None = None) -> set[str]:
    """The map's players whose MAP_GAMES games on `ladder` (the games file's name of it) are
    in the committed games file: a rerun of `run --map` on a fresh clone skips them."""
    from bench.served_games import read_game_rows

    count: dict[str, int] = {}
    for row in read_game_rows(games or MAP_GAMES_FILE):
        if row["ladder"] == ladder:
            count[row["player"]] = count.get(row["player"], 0) + 1
    return {player for player, n in count.items() if n >= MAP_GAMES}


def map_games_command(args: argparse.Namespace) -> None:
    """Keep the map's players' games (every ladder's run in --out) in the committed games
    file, so a refit of a ladder re-reads them without playing again; a player and ladder
    with no run in --out keeps the games the file has."""
    from bench.served_games import pgn_rows, read_game_rows, write_games

    found = []
    for ladder_dir in sorted(d for d in args.out.iterdir() if d.is_dir()) \
            if args.out.exists() else []:
        for player in (p for p in PLAYERS if p.map):
            label = slug(file_name(Kind.PLAY, f"{SERVED}/{player.spec}__standard"))
            pgn = sorted(ladder_dir.glob(f"{label}__*.pgn"), key=lambda p: p.stat().st_mtime)
            if pgn:
                found += pgn_rows(pgn[-1], player.spec, f"{ladder_dir.name}.csv")
    if not found:
        raise SystemExit(f"no map players' games in {args.out}: run `run --map` first")
    fresh = {(r["player"], r["ladder"]) for r in found}
    kept = [r for r in read_game_rows(args.write) if (r["player"], r["ladder"]) not in fresh]
    write_games(args.write, kept + found)
    print(f"wrote {len(kept) + len(found)} games to {args.write} ({len(kept)} kept from it)")


def map_refitted(games: Path = MAP_GAMES_FILE, ladder: Path = REFERENCE_LADDER,
                 table: Path = MAP_DATA) -> list[dict[str, Any]]:
    """The map's players' table with the rows of `ladder` refitted from their committed
    games on it as it is now (play's estimator and prior)."""
    from bench.served_games import refit

    name = ladder_label(ladder)
    columns = refit(games, ladder, name)
    rows: list[dict[str, Any]] = read_table(table)
    for row in rows:
        if row["ladder"] == name and row["player"] in columns:
            row |= {k: columns[row["player"]][k] for k in MAP_FIELDS[3:]}
    return rows


def map_refit_command(args: argparse.Namespace) -> None:
    """Write the map's players' table with the reference ladder's rows refitted."""
    rows = map_refitted(args.games, args.ladder, args.write)
    with atomic_write(args.write) as handle:
        writer = csv.DictWriter(handle, fieldnames=MAP_FIELDS, lineterminator="\n",
                                extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.write}")


def read_table(path: Path) -> list[dict[str, str]]:
    """The committed table's rows."""
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def shard(text: str) -> tuple[int, int]:
    """'I/N': this process takes every Nth player from the Ith (0-based)."""
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
        raise argparse.ArgumentTypeError(f"expected I/N with I < N, got {text!r}")
    return int(index), int(count)


def main() -> None:
    """Parse and dispatch."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="rate the players (resumable)")
    r.add_argument("--ladder", type=ladder_path, default=None,
                   help="the ladder (default: the one whose engine --stockfish matches)")
    r.add_argument("--stockfish", default=None, help="Stockfish for the rungs and softmax")
    r.add_argument("--cross", action="store_true",
                   help="only the players rated on both ladders, and no static runs")
    r.add_argument("--map", action="store_true",
                   help=f"only the players of the map between the ladders, {MAP_GAMES} games "
                   "each, and no static runs")
    r.add_argument("--shard", type=shard, default=(0, 1), help="I/N: a share of the players "
                   "(run N processes to use N cores)")
    r.add_argument("--max-games", type=int, default=MAX_GAMES,
                   help=f"games per player at most (default {MAX_GAMES}: +-110 or so, well "
                   "inside the spread between families)")
    r.add_argument("--static-only", action="store_true",
                   help="only the static runs of the table's players (after a new "
                   "questions.csv; then `table --restatic`)")
    r.add_argument("--out", type=Path, default=OUT)
    r.set_defaults(handler=run_command)
    t = sub.add_parser("table", help="gather the results into one table")
    t.add_argument("--out", type=Path, default=OUT)
    t.add_argument("--ladder", type=ladder_path, default=FIRST_LADDER,
                   help="the ladder whose rungs join the table (default stockfish-15.1)")
    t.add_argument("--rungs", type=Path, default=ROOT / "results" / "rungs",
                   help="the rungs' static runs (bench/static_vs_game.py --out)")
    t.add_argument("--update", action="store_true",
                   help=f"start from the committed {DATA.name} and replace only the game "
                   "columns of the rows whose play runs are in --out (a ladder remeasured, "
                   "its players re-rated with run --cross)")
    t.add_argument("--restatic", action="store_true",
                   help=f"start from the committed {DATA.name} and replace the static columns "
                   "of every row by its newest static run on questions.csv (--out's players, "
                   "--rungs' rungs); the game columns stay")
    t.add_argument("--write", type=Path, default=None,
                   help=f"write the table as CSV (the committed one is {DATA.name})")
    t.set_defaults(handler=table_command)
    m = sub.add_parser("map-table", help="the map's players' game Elos on both ladders")
    m.add_argument("--out", type=Path, default=OUT)
    m.add_argument("--write", type=Path, default=MAP_DATA,
                   help=f"where (default the committed {MAP_DATA.name})")
    m.set_defaults(handler=map_command)
    g = sub.add_parser("map-games", help=f"the map's players' games as {MAP_GAMES_FILE.name}")
    g.add_argument("--out", type=Path, default=OUT)
    g.add_argument("--write", type=Path, default=MAP_GAMES_FILE)
    g.set_defaults(handler=map_games_command)
    f = sub.add_parser("map-refit", help=f"{MAP_DATA.name}'s reference-ladder rows refitted "
                       f"from {MAP_GAMES_FILE.name} on the ladder as it is now")
    f.add_argument("--games", type=Path, default=MAP_GAMES_FILE)
    f.add_argument("--ladder", type=ladder_path, default=REFERENCE_LADDER)
    f.add_argument("--write", type=Path, default=MAP_DATA)
    f.set_defaults(handler=map_refit_command)
    args = p.parse_args()
    sys.exit(run_cli(lambda: args.handler(args)))


if __name__ == "__main__":
    main()
