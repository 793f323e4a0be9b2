"""Does `inspect eval chess_eval/games` rate a player as `benchmark.py play` does?

Serves baseline players at an OpenAI-compatible endpoint on 127.0.0.1 (`benchmark.py
serve`), rates each with `play` and with the Inspect task under the same options and seed,
and prints both estimates, their difference and the two 90% half-widths combined
(sqrt(h1^2 + h2^2)): two independent readings of one player agree when the difference is
within it, nine times in ten. The games differ between the two (a rated player's identity,
which the Inspect model's name is part of, seeds the mix rungs' random moves), so agreement
is the claim, not equality.

Over several pairs it gives the mean difference (Inspect minus play) with its 90% interval
(Student's t on the pairs' differences): an interval that holds 0 says the two read the same
on average, not only pair by pair. Each finished pair is appended to the table (--table), and a
rerun skips the pairs already there.

    python -m bench.inspect_games                 # 4 players x 2 seeds, 100 games each
    python -m bench.inspect_games --players sjeng:depth=1 --seeds 0 --max-games 10
    python -m bench.inspect_games --max-games 30 --redo-inspect   # the table's Inspect side
                                                                 # again, play's kept
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from inspect_ai.log import read_eval_log
from scipy import stats

from chess_eval.benchmark.core.server import PlayerServer
from chess_eval.cli import run_cli
from chess_eval.engine import find_stockfish

ROOT = Path(__file__).resolve().parents[1]
# Four engine families, two of them with a share of random moves.
PLAYERS = ("sjeng:depth=1", "stockfish:nodes=1", "toga2:depth=1,random=25",
           "glaurung:depth=1,random=70")
TABLE = ROOT / "bench" / "inspect_games.csv"
# The eval asked as `play` asks: six retries, 120 s an attempt, and a game whose requests
# fail is left unrated rather than ending the eval (play's own rule), so a served engine
# that fails on a position costs one game on both sides, not Inspect's 30-minute back-off.
TRANSPORT = {"max_retries": 6, "timeout": 840, "attempt_timeout": 120, "fail_on_error": 0.1}
FIELDS = ("player", "seed", "games", "play", "play_lo", "play_hi", "play_games", "inspect",
          "inspect_lo", "inspect_hi", "inspect_games")


def play_rating(spec: str, base_url: str, seed: int, games: int, out: Path) -> dict:
    """`benchmark.py play`'s estimate of the served player."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py"), "play", "--model",
                           f"served/{spec}", "--base-url", base_url, "--endpoint-id", "served",
                           "--max-games", str(games), "--seed", str(seed), "--out", str(out)],
                          capture_output=True, timeout=3600)
    # 3: written, with a game the served engine failed in left unrated (as the eval does).
    if done.returncode not in (0, 3):
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout,
                                            done.stderr)
    [path] = out.glob("play__*.json")
    condition = json.loads(path.read_text())["conditions"]["standard"]
    return {**condition["elo"], "games": condition["games"]}


# The eval through Inspect's Python API in a child process: its `model` given as a list keeps
# a served spec with a comma (toga2:depth=1,random=25) one model, where `inspect eval --model`
# splits it in two.
EVAL = """
import json, sys
from inspect_ai import eval as inspect_eval
from chess_eval.tasks import games
a = json.loads(sys.argv[1])
[log] = inspect_eval(games(**a["task_args"]), model=[a["model"]], log_dir=a["log_dir"],
                     display="none", **a["transport"])
if log.status != "success":
    sys.exit(f"the eval ended {log.status}: {log.error.message if log.error else ''}")
"""


def inspect_rating(spec: str, base_url: str, seed: int, games: int, logs: Path) -> dict:
    """Inspect's `chess_eval/games` estimate of the served player."""
    env = {**os.environ, "LOCAL_BASE_URL": base_url, "LOCAL_API_KEY": "unused"}
    settings = {"model": f"openai-api/local/served/{spec}", "log_dir": str(logs),
                "task_args": {"max_games": games, "seed": seed, "endpoint_id": "served"},
                "transport": TRANSPORT}
    subprocess.run([sys.executable, "-c", EVAL, json.dumps(settings)], check=True,
                   capture_output=True, env=env, timeout=3600)
    [path] = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.results is not None, log.error
    m = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
    return {"mean": m.get("elo"), "lo": m.get("elo_lo"), "hi": m.get("elo_hi"),
            "games": m.get("games")}


def read_table(path: Path) -> list[dict[str, str]]:
    """The pairs finished so far (none when the table does not exist yet)."""
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def write_table(path: Path, rows: list[dict[str, str]]) -> None:
    """Write the table to a temporary name and rename it, so a kill leaves the old one."""
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    tmp.replace(path)


def pair_row(spec: str, seed: int, games: int, a: dict, b: dict) -> dict[str, str]:
    """One finished pair as a table row (empty cells where a reading is a bound)."""
    def cell(v: object) -> str:
        return "" if v is None else f"{float(v):.1f}"  # type: ignore[arg-type]
    return {"player": spec, "seed": str(seed), "games": str(games),
            "play": cell(a["mean"]), "play_lo": cell(a["lo"]), "play_hi": cell(a["hi"]),
            "play_games": str(a["games"]), "inspect": cell(b["mean"]),
            "inspect_lo": cell(b["lo"]), "inspect_hi": cell(b["hi"]),
            "inspect_games": str(int(b["games"] or 0))}


def summary(rows: list[dict[str, str]]) -> str:
    """Pairs agreeing within their combined half-width, and the mean difference's interval."""
    diffs, agree = [], 0
    for r in rows:
        if "" in (r["play"], r["inspect"], r["play_lo"], r["play_hi"], r["inspect_lo"],
                  r["inspect_hi"]):
            continue
        half = math.hypot((float(r["play_hi"]) - float(r["play_lo"])) / 2,
                          (float(r["inspect_hi"]) - float(r["inspect_lo"])) / 2)
        d = float(r["inspect"]) - float(r["play"])
        diffs.append(d)
        agree += abs(d) <= half
    lines = [f"agree within the combined 90% half-widths: {agree} of {len(diffs)}"]
    if len(diffs) >= 2:
        n = len(diffs)
        mean = sum(diffs) / n
        sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
        half = float(stats.t.ppf(0.95, n - 1)) * sd / math.sqrt(n)
        lines.append(f"mean difference (Inspect - play) over {n} pairs: {mean:+.0f} "
                     f"[{mean - half:+.0f}, {mean + half:+.0f}] (90%, Student's t); "
                     f"{'holds' if mean - half <= 0 <= mean + half else 'excludes'} 0")
    return "\n".join(lines)


def main() -> None:
    """Rate each player both ways, append each pair to the table and print the agreement."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", nargs="+", default=list(PLAYERS),
                   help="baseline specs to serve")
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    p.add_argument("--max-games", type=int, default=100)
    p.add_argument("--table", type=Path, default=TABLE,
                   help="CSV of finished pairs (resumed; default bench/inspect_games.csv)")
    p.add_argument("--redo-inspect", action="store_true",
                   help="rerun the Inspect side of the table's pairs of --max-games games, "
                        "keeping play's (resumed where a killed one stopped)")
    args = p.parse_args()
    rows = read_table(args.table)
    if args.redo_inspect:
        redo(args.table, rows, args.max_games)
    else:
        extend(args, rows)
    print(summary([r for r in rows if r["games"] == str(args.max_games)]))


def served() -> PlayerServer:
    """The baseline players served on 127.0.0.1 (shut down by the caller)."""
    server = PlayerServer("127.0.0.1", 0, find_stockfish(None), seed=0, slots=2)
    threading.Thread(target=server.serve, daemon=True).start()
    return server


def extend(args: argparse.Namespace, rows: list[dict[str, str]]) -> None:
    """The pairs not in the table yet, each rated both ways and appended."""
    done = {(r["player"], r["seed"], r["games"]) for r in rows}
    todo = [(spec, seed) for spec in args.players for seed in args.seeds
            if (spec, str(seed), str(args.max_games)) not in done]
    if not todo:
        return
    server = served()
    try:
        for spec, seed in todo:
            with tempfile.TemporaryDirectory() as tmp:
                a = play_rating(spec, server.base_url, seed, args.max_games,
                                Path(tmp) / "play")
                b = inspect_rating(spec, server.base_url, seed, args.max_games,
                                   Path(tmp) / "logs")
            rows.append(pair_row(spec, seed, args.max_games, a, b))
            write_table(args.table, rows)
            print(f"{spec:20} {seed:4}  play {a['mean']} [{a['lo']}, {a['hi']}]  "
                  f"inspect {b['mean']} [{b['lo']}, {b['hi']}]", flush=True)
    finally:
        server.shutdown()
        server.close()


def redo(table: Path, rows: list[dict[str, str]], games: int) -> None:
    """The Inspect side of each pair of `games` games rated again (play's side kept), each
    written as it finishes; the pairs redone so far are listed beside the table."""
    marker = table.with_suffix(".redo")
    done = set(marker.read_text().splitlines()) if marker.exists() else set()
    todo = [r for r in rows if r["games"] == str(games)
            and f"{r['player']}|{r['seed']}" not in done]
    server = served()
    try:
        for row in todo:
            with tempfile.TemporaryDirectory() as tmp:
                b = inspect_rating(row["player"], server.base_url, int(row["seed"]), games,
                                   Path(tmp) / "logs")
            a = {"mean": row["play"] or None, "lo": row["play_lo"] or None,
                 "hi": row["play_hi"] or None, "games": row["play_games"]}
            row.update(pair_row(row["player"], int(row["seed"]), games, a, b))
            write_table(table, rows)
            done.add(f"{row['player']}|{row['seed']}")
            marker.write_text("".join(f"{k}\n" for k in sorted(done)))
            print(f"{row['player']:26} {row['seed']:>4}  play {row['play']}  inspect "
                  f"{b['mean']} [{b['lo']}, {b['hi']}]", flush=True)
    finally:
        server.shutdown()
        server.close()
    marker.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(run_cli(main))
