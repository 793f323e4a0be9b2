"""Step 02 throughput against parsing every game's moves with python-chess, same input.

Builds a large input by repeating the real samples in ../shared/data/lichess/games/, runs
the header-first processor (into SQLite, as step 02 does) on it, and python-chess's
read_game on one copy (the same mix of games, so MB/s compare directly). Also runs the
processor in subprocesses on 1 and on N copies to show its peak memory does not grow with
the input. Prints the ratio; the target is >= 20x.
"""

from __future__ import annotations

import argparse
import io
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chess.pgn
import zstandard

from chess_eval.cli import run_cli
from chess_eval.testset import gamesdb
from chess_eval.testset.process import process_pgn

ROOT = Path(__file__).resolve().parents[1]

GAMES = ROOT.parent / "shared" / "data" / "lichess" / "games"


def sample() -> bytes:
    """All real game files, decompressed and concatenated."""
    parts = []
    for path in sorted(GAMES.glob("*.pgn.zst")):
        with open(path, "rb") as handle:
            reader = zstandard.ZstdDecompressor().stream_reader(handle, read_across_frames=True)
            parts.append(reader.read())
    return b"\n\n".join(parts) + b"\n\n"


def ours(path: Path) -> float:
    """Seconds for step 02's processing of `path` into a fresh database."""
    db = path.with_suffix(".db")
    db.unlink(missing_ok=True)
    start = time.perf_counter()
    conn = gamesdb.create(db)
    with conn:
        process_pgn(path, conn)
    conn.close()
    return time.perf_counter() - start


def baseline(text: str) -> float:
    """Seconds for python-chess to read (and so parse every move of) every game."""
    start = time.perf_counter()
    handle = io.StringIO(text)
    while chess.pgn.read_game(handle) is not None:
        pass
    return time.perf_counter() - start


def peak_rss_mb(path: Path) -> float:
    """Peak resident memory of a fresh process running step 02 on `path`."""
    code = ("import resource; from pathlib import Path; import bench.process_throughput as b;"
            f"b.ours(Path({str(path)!r}));"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"TQDM_DISABLE": "1"}, cwd=ROOT)
    return int(out.stdout.split()[-1]) / 1024


def main() -> None:
    """Run the comparison and print figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=8, help="repetitions of the sample")
    args = parser.parse_args()
    data = sample()
    with tempfile.TemporaryDirectory() as tmp:
        one, many = Path(tmp) / "one.pgn", Path(tmp) / "many.pgn"
        one.write_bytes(data)
        many.write_bytes(data * args.copies)
        mb_many = many.stat().st_size / 2**20
        t_ours = ours(many)
        t_base = baseline(data.decode())
        rss_one, rss_many = peak_rss_mb(one), peak_rss_mb(many)
        with sqlite3.connect(many.with_suffix(".db")) as conn:
            kept = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    ours_rate = mb_many / t_ours
    base_rate = len(data) / 2**20 / t_base
    print(f"input: {mb_many:.1f} MB ({args.copies} x {len(data) / 2**20:.1f} MB sample), "
          f"{kept} distinct games kept")
    print(f"python-chess read_game, every move: {base_rate:6.2f} MB/s")
    print(f"step 02 header-first into SQLite:   {ours_rate:6.2f} MB/s")
    print(f"speed-up: {ours_rate / base_rate:.1f}x (target >= 20x)")
    print(f"peak RSS: {rss_one:.0f} MB on 1 copy, {rss_many:.0f} MB on {args.copies} copies")


if __name__ == "__main__":
    sys.exit(run_cli(main))
