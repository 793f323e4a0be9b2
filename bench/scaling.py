"""Step 06's evaluation on Dask against a plain thread pool, and how it scales, in one run.

A fixed slice of questions.csv (the rows with the lowest SHA256(id)) is evaluated with a
node-limited setting, for each count of --workers, by a thread pool of that many engines in
this process (the way engine work ran before Dask) and by the embedded Dask cluster with that
many worker processes (its start-up timed too).
Printed: wall time, positions/s, speed-up over 1 worker (over 1 engine for the thread pool),
Dask's 1 worker against the thread pool, engine nodes/s per worker (node budgets spent over
wall time) against Stockfish's own single-thread `bench` on this machine, and a projection
for 100k positions. Targets (issue 20, on a 2-core machine): 2
workers >= 1.8x one worker; Dask's 1 worker within 5% of the thread pool. Every run's results
are checked equal to the thread pool's.

    python -m bench.scaling [--positions 200] [--workers 1,2] [--repeat 2]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import chess

from chess_eval.cli import run_cli
from chess_eval.cluster import ClusterSettings, EngineCluster
from chess_eval.engine import Engine, EngineSettings, find_stockfish
from chess_eval.evaluation import EvalSetting, evaluate_position

ROOT = Path(__file__).resolve().parents[1]
SETTING = EvalSetting(scan_nodes=40_000, move_nodes=40_000, margin=20, max_candidates=2,
                      near_nodes=120_000, near_margin=300)
PROJECTED = 100_000
Result = tuple[tuple[tuple[str, int], ...], int]


def evaluate(engine: Engine, fen: str) -> Result:
    """The task: every legal move's score (UCI, cp) and the node budget spent."""
    result = evaluate_position(engine, chess.Board(fen), SETTING)
    return tuple((m.uci(), cp) for m, cp in result.moves), result.nodes


def slice_of(questions: Path, n: int) -> list[str]:
    """FENs of the n rows with the lowest SHA256(id)."""
    with open(questions, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rows.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
    return [r["prompt"] for r in rows[:n]]


def thread_pool(settings: EngineSettings, fens: list[str], size: int) -> list[Result]:
    """The baseline: `size` engines behind a thread pool in this process."""
    local = threading.local()
    engines: list[Engine] = []

    def work(fen: str) -> Result:
        if not hasattr(local, "engine"):
            local.engine = Engine(settings).__enter__()
            engines.append(local.engine)
        return evaluate(local.engine, fen)
    try:
        with ThreadPoolExecutor(size) as pool:
            return list(pool.map(work, fens))
    finally:
        for engine in engines:
            engine.close()


def on_dask(settings: EngineSettings, fens: list[str], workers: int) -> list[Result]:
    """The same work through the embedded Dask cluster (its start-up is timed too)."""
    with EngineCluster(settings, ClusterSettings(workers=workers)) as cluster:
        return list(cluster.map(evaluate, fens))


def timed(run: Callable[[], list[Result]]) -> tuple[list[Result], float]:
    """The run's results and wall seconds."""
    start = time.perf_counter()
    results = run()
    return results, time.perf_counter() - start


def bench_nps(path: str) -> int:
    """Stockfish's own single-thread `bench` nodes/s on this machine (a native build: npm's
    WebAssembly build runs no `bench`, and says so in one line)."""
    if path.endswith(".js"):
        raise SystemExit(f"{path}: npm's WebAssembly build runs no `bench`; give a native "
                         "build (--stockfish or STOCKFISH_PATH) for the CPU-hours figure")
    out = subprocess.run([path, "bench", "16", "1", "13"], capture_output=True, text=True,
                         timeout=300)
    match = re.search(r"Nodes/second\s*:\s*(\d+)", out.stderr + out.stdout)
    if match is None:
        raise RuntimeError(f"no Nodes/second in the output of {path} bench")
    return int(match.group(1))


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=ROOT / "questions.csv")
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, the fastest kept")
    parser.add_argument("--stockfish", default=None)
    args = parser.parse_args()
    counts = sorted({int(n) for n in args.workers.split(",")} | {1})
    settings = EngineSettings(path=find_stockfish(args.stockfish))
    fens = slice_of(args.questions, args.positions)
    nps = bench_nps(settings.path)
    print(f"{len(fens)} positions of {args.questions.name}, setting {SETTING.label}; "
          f"Stockfish bench (1 thread): {nps:,} nodes/s")
    print(f"{'run':<24}{'wall s':>8}{'pos/s':>8}{'speed-up':>10}{'knodes/s/worker':>17}"
          f"{'of bench':>10}")
    reference: list[Result] | None = None
    walls: dict[tuple[str, int], float] = {}
    for n in counts:
        for kind, run in (("thread pool", thread_pool), ("Dask", on_dask)):
            # The fastest of --repeat runs: a shared machine only ever adds time.
            for _ in range(args.repeat):
                results, wall = timed(lambda n=n, run=run: run(settings, fens, n))
                reference = reference or results
                assert results == reference, f"{kind} with {n} gave other results"
                walls[(kind, n)] = min(wall, walls.get((kind, n), wall))
            wall = walls[(kind, n)]
            nodes = sum(nodes for _, nodes in results)
            _row(f"{kind}, {n} {'engines' if kind == 'thread pool' else 'workers'}", wall,
                 len(fens), walls[(kind, 1)] / wall, nodes, n, nps)
    base, one = walls[("thread pool", 1)], walls[("Dask", 1)]
    print(f"\nDask with 1 worker against the thread pool: {100 * (one / base - 1):+.1f}% "
          "(target within 5%)")
    if ("Dask", 2) in walls:
        print(f"2 workers against 1: {one / walls[('Dask', 2)]:.2f}x (target >= 1.8x); the "
              f"thread pool's 2 engines against 1: {base / walls[('thread pool', 2)]:.2f}x")
    per_position = one / len(fens)
    for n in (1, 16, 64, 256):
        hours = PROJECTED * per_position / n / 3600
        print(f"projection: {PROJECTED:,} positions on {n:>3} worker(s) at this setting: "
              f"{hours:7.1f} h (per-position cost {per_position:.2f} s, perfect scaling)")


def _row(name: str, wall: float, n: int, speedup: float, nodes: int, workers: int,
         nps: int) -> None:
    rate = nodes / wall / workers
    print(f"{name:<24}{wall:>8.1f}{n / wall:>8.2f}{speedup:>9.2f}x{rate / 1000:>17,.0f}"
          f"{100 * rate / nps:>9.0f}%")


if __name__ == "__main__":
    sys.exit(run_cli(main))
