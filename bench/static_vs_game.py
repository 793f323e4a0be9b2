"""Static scores against game Elo: every ladder rung answers questions.csv; fit and check.

Runs the static benchmark for each rung of the ladder (Stockfish 15.1's unless --ladder;
results in --out, resumable through its cache), prints each rung's ACPL and accuracy with 90%
intervals beside its measured game Elo, fits game Elo on accuracy by the rungs alone and checks
that line by leaving each rung out. The rungs' static runs join the validation set
(bench/validation_players.py table), whose fit across player families (bench/family_fit.py) is
the committed one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import benchmark
from chess_eval.benchmark.arena.ladder import load_ladder
from chess_eval.benchmark.core.data import FIRST_LADDER, ladder_path
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import slug
from chess_eval.benchmark.static.prediction import (
    METRIC,
    TRANSFORMS,
    fit_line,
    leave_one_out,
)
from chess_eval.cli import run_cli
from chess_eval.files import sha256_file

ROOT = Path(__file__).resolve().parents[1]


def rung_result(spec: str, questions: Path, out: Path, workers: int,
                stockfish: str | None = None) -> dict:
    """The rung's static result (run now, or read back from a finished run)."""
    engine = ["--stockfish", stockfish] if stockfish else []
    status = benchmark.main(["--model", spec, "--questions", str(questions), "--out",
                             str(out), "--workers", str(workers), "--bootstrap", "300",
                             *engine])
    if status != 0:
        raise SystemExit(f"static run of {spec} failed with status {status}")
    prefix = slug(file_name(Kind.STATIC, f"{spec}__fen@1__all"))
    [path] = sorted(out.glob(f"{prefix}__*.json"), key=lambda p: p.stat().st_mtime)[-1:]
    return json.loads(path.read_text())


def main() -> None:
    """Score the rungs, fit, check, draw, and optionally write the fit."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ladder", type=ladder_path, default=FIRST_LADDER)
    p.add_argument("--questions", type=Path, default=ROOT / "questions.csv")
    p.add_argument("--out", type=Path, default=ROOT / "results" / "rungs")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--stockfish", default=None,
                   help="the rungs' engine: the ladder's own build (Stockfish 15.1 for the "
                   "default ladder, e.g. Debian 12's /usr/games/stockfish); without it a "
                   "baseline takes the reference build where one is found")
    args = p.parse_args()
    ladder = load_ladder(args.ladder)
    rows = []
    for rung in ladder.rungs:
        result = rung_result(rung.spec, args.questions, args.out, args.workers, args.stockfish)
        iv = result["intervals"]
        rows.append({"rung": rung.name, "elo": rung.elo, "elo_lo": rung.lo, "elo_hi": rung.hi,
                     **{f"{m}{s}": iv[m][k] for m in ("acpl", "accuracy")
                        for s, k in (("", "value"), ("_lo", "lo"), ("_hi", "hi"))}})
    print("| rung | game Elo (90%) | ACPL (90%) | accuracy (90%) |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['rung']} | {r['elo']:.0f} [{r['elo_lo']:.0f}, {r['elo_hi']:.0f}] | "
              f"{r['acpl']:.0f} [{r['acpl_lo']:.0f}, {r['acpl_hi']:.0f}] | "
              f"{r['accuracy']:.1f} [{r['accuracy_lo']:.1f}, {r['accuracy_hi']:.1f}] |")
    acc = [r[METRIC] for r in rows]
    monotone = all(b >= a for a, b in zip(acc, acc[1:], strict=False))
    print(f"\naccuracy rises with every rung: {monotone}")
    values = [(r[METRIC], r[f"{METRIC}_lo"], r[f"{METRIC}_hi"]) for r in rows]
    elos = [r["elo"] for r in rows]
    digest = sha256_file(args.questions)
    best = None
    for kind in TRANSFORMS:
        fit = fit_line(acc, elos, METRIC, kind, digest, rows)
        loo = leave_one_out(values, elos, METRIC, kind)
        errors = np.array([abs(x["predicted"] - x["elo"]) for x in loo])
        covered = np.mean([x["lo"] <= x["elo"] <= x["hi"] for x in loo])
        print(f"{kind}: game Elo = {fit.intercept:.0f} + {fit.slope:.1f} x, residual sd "
              f"{fit.residual_sd:.0f}; leave-one-out: MAE {errors.mean():.0f} Elo, median "
              f"{np.median(errors):.0f}, 90% intervals cover {covered:.0%} of {len(loo)} rungs")
        if best is None or errors.mean() < best[2]:
            best = (fit, loo, errors.mean())
    assert best is not None
    fit, loo, _ = best
    print(f"chosen: {fit.transform} (the smaller leave-one-out error)")


if __name__ == "__main__":
    sys.exit(run_cli(main))
