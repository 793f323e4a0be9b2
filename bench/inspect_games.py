"""Does `inspect eval chess_eval/games` rate a player as `benchmark.py play` does?

Serves baseline players at an OpenAI-compatible endpoint on 127.0.0.1 (`benchmark.py
serve`), rates each with `play` and with the Inspect task under the same options and seed,
and prints both estimates, their difference and the two 90% half-widths combined
(sqrt(h1^2 + h2^2)): two independent readings of one player agree when the difference is
within it, nine times in ten. The games differ between the two (a rated player's identity,
which the Inspect model's name is part of, seeds the mix rungs' random moves), so agreement
is the claim, not equality.

    python -m bench.inspect_games                       # 3 players x 2 seeds, 30 games each
    python -m bench.inspect_games --players sjeng:depth=1 --seeds 0 --max-games 10
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from inspect_ai.log import read_eval_log

from lib.benchmark.core.server import PlayerServer
from lib.cli import run_cli
from lib.engine import find_stockfish

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ("sjeng:depth=1", "glaurung:depth=1", "stockfish:nodes=1")


def play_rating(spec: str, base_url: str, seed: int, games: int, out: Path) -> dict:
    """`benchmark.py play`'s estimate of the served player."""
    subprocess.run([sys.executable, str(ROOT / "benchmark.py"), "play", "--model",
                    f"served/{spec}", "--base-url", base_url, "--endpoint-id", "served",
                    "--max-games", str(games), "--seed", str(seed), "--out", str(out)],
                   check=True, capture_output=True, timeout=3600)
    [path] = out.glob("play__*.json")
    condition = json.loads(path.read_text())["conditions"]["standard"]
    return {**condition["elo"], "games": condition["games"]}


def inspect_rating(spec: str, base_url: str, seed: int, games: int, logs: Path) -> dict:
    """`inspect eval chess_eval/games`'s estimate of the served player."""
    env = {**os.environ, "LOCAL_BASE_URL": base_url, "LOCAL_API_KEY": "unused"}
    subprocess.run([str(Path(sys.executable).parent / "inspect"), "eval", "chess_eval/games",
                    "--model", f"openai-api/local/served/{spec}", "-T", f"max_games={games}",
                    "-T", f"seed={seed}", "-T", "endpoint_id=served", "--log-dir", str(logs),
                    "--display", "none"], check=True, capture_output=True, env=env,
                   timeout=3600)
    [path] = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.results is not None, log.error
    m = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    return {"mean": m.get("elo"), "lo": m.get("elo_lo"), "hi": m.get("elo_hi"),
            "games": m.get("games")}


def main() -> None:
    """Rate each player both ways and print the agreement."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", nargs="+", default=list(PLAYERS),
                   help="baseline specs without commas (Inspect splits --model on them)")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--max-games", type=int, default=30)
    args = p.parse_args()
    server = PlayerServer("127.0.0.1", 0, find_stockfish(None), seed=0, slots=2)
    threading.Thread(target=server.serve, daemon=True).start()
    agree = total = 0
    print("player               seed  play                    inspect                 "
          "difference  combined")
    try:
        for spec in args.players:
            for seed in args.seeds:
                with tempfile.TemporaryDirectory() as tmp:
                    a = play_rating(spec, server.base_url, seed, args.max_games,
                                    Path(tmp) / "play")
                    b = inspect_rating(spec, server.base_url, seed, args.max_games,
                                       Path(tmp) / "logs")
                if None in (a["mean"], a["lo"], a["hi"], b["mean"], b["lo"], b["hi"]):
                    print(f"{spec:20} {seed:4}  {a} {b}  (a bound: not compared)")
                    continue
                half = math.hypot((a["hi"] - a["lo"]) / 2, (b["hi"] - b["lo"]) / 2)
                diff = b["mean"] - a["mean"]
                total += 1
                agree += abs(diff) <= half
                print(f"{spec:20} {seed:4}  {a['mean']:5.0f} [{a['lo']:5.0f}, {a['hi']:5.0f}]"
                      f"   {b['mean']:5.0f} [{b['lo']:5.0f}, {b['hi']:5.0f}]   {diff:+6.0f}"
                      f"     {half:5.0f}", flush=True)
    finally:
        server.shutdown()
        server.close()
    print(f"agree within the combined 90% half-widths: {agree} of {total}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
