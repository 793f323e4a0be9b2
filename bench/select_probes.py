"""Engine probes per selected game position in step 03 (target <= 1.5).

Runs steps 02 and 03 on every real games file in ../shared/data/lichess/games/ in a
temporary directory, without a probe cache, and prints the probe count, the selected count,
their ratio and where the other probes went.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.process_throughput import sample
from chess_eval.cli import run_cli

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Run the selection and print its probe figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="tree scale (default 1)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    process = importlib.import_module("steps.02_process_games")
    select = importlib.import_module("steps.03_select_games")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        (out / "games.pgn").write_bytes(sample())
        process.main(["--out", tmp])
        start = time.perf_counter()
        select.main(["--out", tmp, "--scale", str(args.scale), "--seed", str(args.seed)])
        seconds = time.perf_counter() - start
        report = json.loads((out / "positions_report.json").read_text())
    counts = report["counts"]
    print(f"selected {report['selected']} of {report['target']} targeted positions "
          f"in {seconds:.0f} s")
    print(f"engine probes: {counts.get('engine_probes', 0)}; "
          f"probes per selected position: {report['probes_per_selected']:.2f} (target <= 1.5)")
    wasted = {k: v for k, v in counts.items() if k.startswith("rejected_")}
    print(f"probes not used: {wasted}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
