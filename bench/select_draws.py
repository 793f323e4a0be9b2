"""Which leaves each change to step 03 filled: the sources, then the draw of a game's ply.

Runs steps 01-03 at full scale on four configurations, each in a folder of its own:

- `before`: the sources the previous set was built from (`games/`, `games-strong/`), drawing
  each game's ply uniformly (the earlier rule);
- `before_scarcity`: the same sources, the scarcity draw (where games are scarce, what the
  draw alone fills);
- `sources`: every games folder, the uniform draw;
- `scarcity`: every games folder, the scarcity draw (the default, the committed build).

and writes each leaf's achieved count, the probes each used and where the selection's
candidates went, to bench/data/select_draws.json (`--write`), which the docs' table is
generated from. A probe cache (`--probes`, e.g. a build's output/probes.db) is copied into
each folder first: probes are keyed by position and engine, so it only saves engine time.

    python -m bench.select_draws --probes output/probes.db --write
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from chess_eval.cli import run_cli
from chess_eval.files import atomic_write

ROOT = Path(__file__).resolve().parents[1]
LICHESS = ROOT.parent / "shared" / "data" / "lichess"
OUT = ROOT / "bench" / "data" / "select_draws.json"
BEFORE = ("games", "games-strong")
EVERY = ("games", "games-more", "games-strong", "games-strong-more")
CONFIGS = {"before": (BEFORE, "uniform"), "before_scarcity": (BEFORE, "scarcity"),
           "sources": (EVERY, "uniform"), "scarcity": (EVERY, "scarcity")}


def files(folders: tuple[str, ...]) -> list[str]:
    """The games files of the folders, in the documented command's order."""
    return [str(p) for folder in folders for p in sorted((LICHESS / folder).glob("*.pgn.zst"))]


def select(out: Path, folders: tuple[str, ...], draw: str, probes: Path | None,
           workers: int) -> dict[str, Any]:
    """Steps 01-03 into `out`; step 03's report."""
    steps = {n: importlib.import_module(f"steps.{name}") for n, name in (
        (1, "01_fetch_games"), (2, "02_process_games"), (3, "03_select_games"))}
    sources = [a for f in files(folders) for a in ("--source", f)]
    out.mkdir(parents=True, exist_ok=True)
    if probes is not None and probes.is_file():
        shutil.copy(probes, out / "probes.db")
    for argv in ([*sources, "--out", str(out)], ["--out", str(out)]):
        if steps[1 if argv[0] == "--source" else 2].main(argv) != 0:
            raise SystemExit(f"steps 01-02 failed in {out}")
    if steps[3].main(["--out", str(out), "--ply-draw", draw, "--workers", str(workers)]) != 0:
        raise SystemExit(f"step 03 failed in {out}")
    report: dict[str, Any] = json.loads((out / "positions_report.json").read_text())
    return report


def main() -> None:
    """Run the four configurations; print, and with --write record, what each filled."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--probes", type=Path, default=None, help="a probes.db to start from")
    p.add_argument("--keep", type=Path, default=None,
                   help="build in this folder (kept: its probes.db holds every probe made)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    args = p.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        probes = args.probes
        for name, (folders, draw) in CONFIGS.items():
            report = select(where / name, folders, draw, probes, args.workers)
            probes = where / name / "probes.db"  # every probe so far, for the next
            results[name] = {
                "folders": list(folders), "ply_draw": draw, "selected": report["selected"],
                "probes": report["counts"].get("probes", 0),
                "player_cap": report["counts"].get("player_cap", 0),
                "largest_player_share": report["largest_player"]["share"],
                "achieved": {" | ".join((r["elo_bucket"], r["phase"], r["type"], r["side"])):
                             r["achieved"] for r in report["leaves"]},
            }
            print(f"{name}: {report['selected']} of {report['target']} selected, "
                  f"{results[name]['probes']} probes")
    if args.write:
        with atomic_write(OUT) as handle:
            json.dump(results, handle, indent=1, sort_keys=True)
            handle.write("\n")
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
