"""Step 06's evaluation on Dask against a plain thread pool, and how it scales, in one run.

A fixed slice of questions.csv (the rows with the lowest SHA256(id)) is evaluated with a
node-limited setting by: a thread pool of engines in this process (the way engine work ran
before Dask), the embedded Dask cluster with 1 worker, and with each count of --workers.
Printed: wall time, positions/s, speed-up over 1 worker, Dask's 1 worker against the thread
pool, engine nodes/s per worker against Stockfish's own single-thread `bench` on this
machine, and a projection for 100k positions. Targets (issue 20, on a 2-core machine): 2
workers >= 1.8x one worker; Dask's 1 worker within 5% of the thread pool. Every run's results
are checked equal to the thread pool's.

    python -m bench.scaling [--positions 200] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import chess

from lib.cluster import ClusterSettings, EngineCluster
from lib.engine import Engine, EngineSettings, find_stockfish
from lib.evaluation import EvalSetting, evaluate_position

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
    """Stockfish's own single-thread `bench` nodes/s on this machine."""
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
    parser.add_argument("--stockfish", default=None)
    args = parser.parse_args()
    counts = sorted({int(n) for n in args.workers.split(",")} | {1})
    settings = EngineSettings(path=find_stockfish(args.stockfish))
    fens = slice_of(args.questions, args.positions)
    nps = bench_nps(settings.path)
    print(f"{len(fens)} positions of {args.questions.name}, setting {SETTING.label}; "
          f"Stockfish bench (1 thread): {nps:,} nodes/s")
    reference, base = timed(lambda: thread_pool(settings, fens, 1))
    nodes = sum(n for _, n in reference)
    print(f"{'run':<22}{'wall s':>8}{'pos/s':>8}{'speed-up':>10}{'knodes/s/worker':>17}"
          f"{'of bench':>10}")
    _row("thread pool, 1 engine", base, len(fens), None, nodes, 1, nps)
    one = None
    for n in counts:
        results, wall = timed(lambda n=n: on_dask(settings, fens, n))
        assert results == reference, f"Dask with {n} workers gave other results"
        one = wall if n == 1 else one
        _row(f"Dask, {n} worker(s)", wall, len(fens), one / wall if one else None, nodes, n,
             nps)
    assert one is not None
    print(f"\nDask with 1 worker against the thread pool: {100 * (one / base - 1):+.1f}% "
          "(target within 5%)")
    per_position = one / len(fens)
    for n in (1, 16, 64, 256):
        hours = PROJECTED * per_position / n / 3600
        print(f"projection: {PROJECTED:,} positions on {n:>3} worker(s) at this setting: "
              f"{hours:7.1f} h (per-position cost {per_position:.2f} s, perfect scaling)")


def _row(name: str, wall: float, n: int, speedup: float | None, nodes: int, workers: int,
         nps: int) -> None:
    rate = nodes / wall / workers
    shown = f"{speedup:.2f}x" if speedup else "-"
    print(f"{name:<22}{wall:>8.1f}{n / wall:>8.2f}{shown:>10}{rate / 1000:>17,.0f}"
          f"{100 * rate / nps:>9.0f}%")


if __name__ == "__main__":
    main()
