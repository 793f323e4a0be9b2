"""The protocols are neutral: the same scripted player gets the same game Elo under each.

The player is an engine behind `benchmark.py serve` (Stockfish at 1,000 nodes with half of
its moves random, by a coin seeded per position): it answers the same move in a position
whatever protocol asks (fen, blind, chat, tools, pgn), so its game Elo may differ between
protocols only by chance. Each protocol plays on one ladder with one stop rule; each
protocol's Elo is compared with fen's as `benchmark.py compare` compares two play runs (the
ladder's shared error cancelled). A second scripted player, the same engine with a blind spot
(it forgets the last move of a move list shown without a FEN), must lose track under blind
only: its illegal answers there, none under fen.

    python -m bench.protocols run                           # every protocol (resumes)
    python -m bench.protocols table --write bench/data/protocol_neutrality.csv

The committed table (bench/data/protocol_neutrality.csv) is generated into docs/protocols.md by
`python -m bench.doc_figures`.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

import benchmark
from bench.validation_players import serving
from chess_eval.benchmark.compare.compare import compare_games
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import slug
from chess_eval.benchmark.core.server import BLINDSPOT, SERVED
from chess_eval.benchmark.players.protocols import GameProtocol
from chess_eval.cli import run_cli
from chess_eval.errors import DataError
from chess_eval.files import atomic_write

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "protocols"
DATA = ROOT / "bench" / "data" / "protocol_neutrality.csv"
PLAYER = "mix:random=50,nodes=1000"  # about 1,250 on Stockfish 15.1's ladder: long games, a
# mid rung
MAX_GAMES = 60


def runs(player: str = PLAYER) -> tuple[tuple[str, tuple[GameProtocol, ...]], ...]:
    """(model, protocols): the neutral player under all five, the blind-spot one under two."""
    return ((f"{SERVED}/{player}", tuple(GameProtocol)),
            (f"{SERVED}/{BLINDSPOT}{player}", (GameProtocol.FEN, GameProtocol.BLIND)))

FIELDS = ("model", "protocol", "games", "elo", "vs_fen", "vs_fen_lo", "vs_fen_hi", "answers",
          "failed", "requests_per_move", "tool_calls_per_move")


def run_command(args: argparse.Namespace) -> None:
    """Play every run through the served path; each resumes from its store."""
    with serving(args.stockfish) as server:
        for model, protocols in runs(args.player):
            for protocol in protocols:
                argv = ["play", "--model", model, "--base-url", server.base_url,
                        "--endpoint-id", SERVED, "--protocol", protocol, "--max-games",
                        str(args.max_games), "--out", str(args.out)]
                if args.stockfish:
                    argv += ["--stockfish", args.stockfish]
                status = benchmark.main(argv)
                if status != 0:
                    raise SystemExit(f"play {model} --protocol {protocol}: status {status}")


def path_of(out: Path, model: str, protocol: str) -> Path:
    """The newest play run of the model under the protocol (its name exactly: a fen run's
    name is the start of the others')."""
    label = f"{model}__standard" + ("" if protocol == GameProtocol.FEN else f"__{protocol}")
    stem = re.compile(re.escape(slug(file_name(Kind.PLAY, label))) + r"__[0-9a-f]{10}")
    found = sorted((p for p in out.glob("*.json") if stem.fullmatch(p.stem)),
                   key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no play run of {model} under {protocol} in {out}: run first")
    return found[-1]


def run_of(out: Path, model: str, protocol: str) -> dict[str, Any]:
    """That run's result, named by its protocol."""
    result: dict[str, Any] = json.loads(path_of(out, model, protocol).read_text())
    result["_name"] = str(protocol)
    return result


def rows(out: Path, player: str = PLAYER) -> list[dict[str, Any]]:
    """One row per run: its game Elo, and its difference from the same model's fen run."""
    found = []
    for model, protocols in runs(player):
        fen = run_of(out, model, GameProtocol.FEN)
        for protocol in protocols:
            r = run_of(out, model, protocol)
            c = r["conditions"]["standard"]
            try:
                d = compare_games(fen, r).differences[0]
                diff = {"vs_fen": round(d.diff), "vs_fen_lo": round(d.lo),
                        "vs_fen_hi": round(d.hi)}
            except DataError:  # a bound ("below ~N") has no difference to give
                diff = {"vs_fen": "", "vs_fen_lo": "", "vs_fen_hi": ""}
            per = r["usage"].get("per_move") or {}
            tax = r["taxonomy"]
            found.append({
                "model": model.removeprefix(f"{SERVED}/"), "protocol": protocol,
                "games": c["games"], "elo": c["elo"]["text"], **diff,
                "answers": tax["attempts"], "failed": tax["attempts"] - tax["legal"],
                "requests_per_move": per.get("requests"),
                "tool_calls_per_move": per.get("tool_calls")})
    return found


def table_command(args: argparse.Namespace) -> None:
    """Print the rows; with --write, write them to the committed data file."""
    found = rows(args.out, args.player)
    writer = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(found)
    if args.write:
        with atomic_write(args.write) as handle:
            out = csv.DictWriter(handle, FIELDS, lineterminator="\n")
            out.writeheader()
            out.writerows(found)


def read_table(path: Path = DATA) -> list[dict[str, str]]:
    """The committed rows."""
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def markdown(path: Path = DATA) -> str:
    """The docs' table of the committed rows."""
    lines = ["| player | protocol | games | game Elo (90%) | minus fen (90%) | answers | "
             "failed | requests per move | tool calls per move |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in read_table(path):
        diff = "-" if r["protocol"] == "fen" or not r["vs_fen"] else \
            f"{int(r['vs_fen']):+d} [{int(r['vs_fen_lo']):+d}, {int(r['vs_fen_hi']):+d}]"
        lines.append(f"| {r['model']} | {r['protocol']} | {r['games']} | {r['elo']} "
                     f"| {diff} | {r['answers']} | {r['failed']} | "
                     f"{r['requests_per_move']} | {r['tool_calls_per_move']} |")
    return "\n".join(lines)


def main() -> None:
    """Parse and dispatch."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="play the runs (resumable)")
    run.add_argument("--max-games", type=int, default=MAX_GAMES,
                     help=f"games per run at most (default {MAX_GAMES})")
    run.add_argument("--out", type=Path, default=OUT)
    run.add_argument("--stockfish", default=None, help="Stockfish for the rungs and player")
    run.add_argument("--player", default=PLAYER, help=f"the baseline served (default {PLAYER})")
    run.set_defaults(handler=run_command)
    table = commands.add_parser("table", help="gather the runs into the data file")
    table.add_argument("--out", type=Path, default=OUT)
    table.add_argument("--player", default=PLAYER, help=f"the baseline served (default {PLAYER})")
    table.add_argument("--write", type=Path, default=None,
                       help=f"write the rows as CSV (the committed one is {DATA.name})")
    table.set_defaults(handler=table_command)
    args = parser.parse_args()
    sys.exit(run_cli(lambda: args.handler(args)))


if __name__ == "__main__":
    main()
