"""Quality and cost of step 06's evaluation setting against the anchor's, on real positions.

Reference: every legal move searched on its own to depth 20. Anchor (the seed's public
pipeline): MultiPV = number of legal moves, depth 25 capped at 4 s, one thread. For each
setting it prints the mean absolute cp difference from the reference (scores clipped to
+-1000), the best-move agreement (the setting's best move is a reference-best move) and the
engine CPU seconds per position. The reference is cached in output/bench/ because it takes
about a minute of CPU per position.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import chess
import chess.engine
import chess.pgn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.process_throughput import sample  # noqa: E402
from lib.engine import Engine, EngineSettings, find_stockfish, score_to_cp  # noqa: E402
from lib.evaluation import DEFAULT_SETTING, EvalSetting, evaluate_moves  # noqa: E402

CLIP = 1000
CACHE = ROOT / "output" / "bench" / "eval_reference.json"
Evaluator = Callable[[Engine, chess.Board], dict[str, int]]


def positions(count: int) -> list[str]:
    """Real positions: one mid-game ply from evenly spaced real games."""
    handle = io.StringIO(sample().decode())
    games = []
    while (game := chess.pgn.read_game(handle)) is not None:
        moves = list(game.mainline_moves())
        if game.headers.get("Variant", "Standard") == "Standard" and len(moves) > 30:
            games.append(moves)
    step = len(games) // count
    fens = []
    for i in range(count):
        moves = games[i * step]
        board = chess.Board()
        for move in moves[: 8 + (i * 7) % (len(moves) - 10)]:
            board.push(move)
        fens.append(board.fen())
    return fens


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reference(engine: Engine, board: chess.Board) -> dict[str, int]:
    """Each legal move searched alone to depth 20."""
    out = {}
    for move in board.legal_moves:
        info = engine.analyse(board, chess.engine.Limit(depth=20), 1, root_moves=[move])
        out[move.uci()] = score_to_cp(info[0]["score"].relative)
    return out


def anchor(engine: Engine, board: chess.Board) -> dict[str, int]:
    """MultiPV over all legal moves, depth 25 capped at 4 s."""
    n = board.legal_moves.count()
    infos = engine.analyse(board, chess.engine.Limit(depth=25, time=4.0), n)
    return {i["pv"][0].uci(): score_to_cp(i["score"].relative) for i in infos if i.get("pv")}


def ours(setting: EvalSetting) -> Evaluator:
    """Step 06's evaluation with a given setting."""
    def run(engine: Engine, board: chess.Board) -> dict[str, int]:
        return {m.uci(): cp for m, cp in evaluate_moves(engine, board, setting)}
    return run


def _measure(job: tuple[str, str, str]) -> tuple[dict[str, int], float]:
    path, name, fen = job
    evaluator = EVALUATORS[name]
    with Engine(EngineSettings(path=path)) as engine:
        engine.analyse(chess.Board(), chess.engine.Limit(depth=1), 1)  # start-up off the clock
        before = cpu_seconds(engine.pid)
        result = evaluator(engine, chess.Board(fen))
        return result, cpu_seconds(engine.pid) - before


EVALUATORS: dict[str, Evaluator] = {"reference": reference, "anchor": anchor,
                                    "default": ours(DEFAULT_SETTING)}


def run_all(path: str, name: str, fens: list[str], workers: int) -> list[tuple[dict, float]]:
    """Evaluate every position with one evaluator, in parallel processes."""
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_measure, [(path, name, fen) for fen in fens]))


def compare(result: dict[str, int], ref: dict[str, int]) -> tuple[float, bool]:
    """Mean absolute clipped cp difference, and whether the best move is reference-best."""
    clip = lambda cp: max(-CLIP, min(CLIP, cp))  # noqa: E731
    diffs = [abs(clip(result[m]) - clip(ref[m])) for m in ref if m in result]
    best = max(result, key=lambda m: result[m])
    return sum(diffs) / len(diffs), ref[best] == max(ref.values())


def main() -> None:
    """Print the three figures for the anchor and our setting."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, default=30)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--stockfish", default=None)
    parser.add_argument("--setting", action="append", default=[], metavar="BEST,SCAN",
                        help="extra settings to compare, e.g. 0,300000 (nodes of the "
                        "best-move search and of the all-moves scan)")
    args = parser.parse_args()
    path = find_stockfish(args.stockfish)
    fens = positions(args.positions)
    cache = json.loads(CACHE.read_text()) if CACHE.is_file() else {}
    todo = [f for f in fens if f not in cache]
    if todo:
        print(f"computing the depth-20 reference for {len(todo)} positions ...", flush=True)
        for fen, (ref, _) in zip(todo, run_all(path, "reference", todo, args.workers),
                                 strict=True):
            cache[fen] = ref
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_text(json.dumps(cache))
    for text in args.setting:
        best, scan = (int(x) for x in text.split(","))
        EVALUATORS[text] = ours(EvalSetting(best, scan))
    print(f"{len(fens)} real positions; reference: each move alone to depth 20")
    print(f"{'setting':<34} {'MAE cp':>7} {'best agree':>10} {'CPU s/pos':>9}")
    for name in ["anchor", "default", *args.setting]:
        results = run_all(path, name, fens, args.workers)
        scores = [compare(r, cache[f]) for (r, _), f in zip(results, fens, strict=True)]
        mae = sum(s[0] for s in scores) / len(scores)
        agree = sum(s[1] for s in scores) / len(scores)
        cpu = sum(c for _, c in results) / len(results)
        label = {"anchor": "anchor (MultiPV all, d25/4s)",
                 "default": f"default ({DEFAULT_SETTING.label})"}.get(name, name)
        print(f"{label:<34} {mae:7.1f} {agree:10.0%} {cpu:9.2f}")


if __name__ == "__main__":
    main()
