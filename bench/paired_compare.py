"""compare's paired tests, checked by simulation on real baselines' answers.

Three real static runs on every question of questions.csv (Stockfish at 1,000 and at 2,000
nodes, and the random mover; cached in output/bench/paired/) give the per-question spread
and the paired correlation of each metric. Then:

- **False positives at no true difference.** Each run draws the 758 questions with
  replacement and gives each question's two real Stockfish answers to A and B by a coin flip:
  the two "runs" are then the same player, with the correlation real answers have. The
  paired test of `compare` (bootstrap for accuracy and ACPL, McNemar for the best move) should
  reject at alpha 0.05 in 5% +- 1.5% of runs.
- **Power, paired against unpaired, at equal n.** The same draws without the coin flip (a
  real difference: 2,000 nodes against 1,000), n questions a run: how often each test finds
  it, and the effective sample-size ratio (unpaired variance over paired variance).

- **The leaderboard's stated P(A above B) against what happened.** Players that answer each
  question with the 2,000-node answer with probability t and the 1,000-node one otherwise
  (t drawn per player) have a true first-move puzzle Elo, fitted on their expected answers.
  For pairs of them, the leaderboard's paired P(A above B) is binned against how often A's
  true Elo was the higher; the unpaired normal draws are shown beside it.

`--write` records the measured spread and correlation in paired_baselines.json, which
`compare --plan` reads.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

import benchmark
from chess_eval.benchmark.compare.paired import ALPHA, bootstrap_p, effective_ratio
from chess_eval.benchmark.core.data import PAIRED_BASELINES
from chess_eval.benchmark.leaderboard.paired import PairedPart, Point, joint_draws
from chess_eval.benchmark.question.questions import load_questions
from chess_eval.benchmark.stats.elo import Z, puzzle_elo_laplace
from chess_eval.benchmark.stats.mcnemar import mcnemar
from chess_eval.cli import run_cli
from chess_eval.files import sha256_file, write_json

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "output" / "bench" / "paired"
PLAYERS = {"sf1k": "stockfish:nodes=1000", "sf2k": "stockfish:nodes=2000", "random": "random"}
CAP = 1000  # the cp-loss cap of scoring


def baseline_answers(questions: Path, workers: int) -> dict[str, dict[str, dict[str, Any]]]:
    """Each baseline's scored items by question id (run once, then read from the cache)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    digest = sha256_file(questions)
    for key, model in PLAYERS.items():
        found = [p for p in OUT.glob("*.json") if _is_run(p, model, digest)]
        if not found:
            status = benchmark.main(["--model", model, "--questions", str(questions), "--out",
                                     str(OUT), "--workers", str(workers)])
            if status != 0:
                raise SystemExit(f"the {model} run failed (exit {status})")
            found = [p for p in OUT.glob("*.json") if _is_run(p, model, digest)]
        data = json.loads(found[0].read_text())
        out[key] = {i["id"]: i for i in data["items"]}
    return out


def _is_run(path: Path, model: str, digest: str) -> bool:
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return False
    return data.get("model") == model and data.get("questions_sha256") == digest \
        and data.get("limit") is None


def per_question(items: dict[str, dict[str, Any]], ids: list[str]) -> dict[str, np.ndarray]:
    """Each metric's per-question value (ACPL: the capped cp loss of a legal answer)."""
    rows = [items[i] for i in ids]
    return {"accuracy": np.array([r["accuracy"] or 0.0 for r in rows], float),
            "best_move_rate": np.array([bool(r["best"]) for r in rows], float),
            "acpl": np.array([min(r["cp_loss"], CAP) if r["cp_loss"] is not None else CAP
                              for r in rows], float)}


def spread(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Per-question sd of each run and their correlation."""
    return {"sd_a": round(float(a.std(ddof=1)), 4), "sd_b": round(float(b.std(ddof=1)), 4),
            "rho": round(float(np.corrcoef(a, b)[0, 1]), 4)}


def paired_test(a: np.ndarray, b: np.ndarray, metric: str, groups: list[np.ndarray],
                rng: np.random.Generator, boot: int) -> float:
    """compare's p-value for one drawn pair of runs: McNemar for the best move, else the
    paired bootstrap within the strata."""
    if metric == "best_move_rate":
        return float(mcnemar(a == 1, b == 1)["p"])
    d = b - a
    idx = np.concatenate([g[rng.integers(0, len(g), (boot, len(g)))] for g in groups], axis=1)
    return bootstrap_p(d[idx].mean(axis=1))


def unpaired_test(a: np.ndarray, b: np.ndarray) -> float:
    """The comparison as if the runs were independent: Welch's z on the two means."""
    se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return 1.0 if se == 0 else float(2 * stats.norm.sf(abs(b.mean() - a.mean()) / se))


def simulate(x1: np.ndarray, x2: np.ndarray, strata: np.ndarray, metric: str, runs: int,
             n: int, swap: bool, seed: int, boot: int = 400) -> tuple[float, float]:
    """Share of runs each test rejects at ALPHA: (paired, unpaired). A run draws n questions
    within the strata; `swap`: each question's two answers go to A and B by a coin flip."""
    rng = np.random.default_rng(seed)
    names = np.unique(strata)
    share = np.array([np.mean(strata == s) for s in names])
    sizes = np.maximum(1, np.round(share * n)).astype(int)
    members = [np.flatnonzero(strata == s) for s in names]
    paired = unpaired = 0
    for _ in range(runs):
        pick = np.concatenate([rng.choice(m, k) for m, k in zip(members, sizes, strict=True)])
        a, b = x1[pick], x2[pick]
        if swap:
            flip = rng.random(len(pick)) < 0.5
            a, b = np.where(flip, b, a), np.where(flip, a, b)
        starts = np.cumsum(np.r_[0, sizes[:-1]])
        groups = [np.arange(s, s + k) for s, k in zip(starts, sizes, strict=True)]
        paired += paired_test(a, b, metric, groups, rng, boot) < ALPHA
        unpaired += unpaired_test(a, b) < ALPHA
    return paired / runs, unpaired / runs


def stated_vs_happened(answers: dict[str, dict[str, dict[str, Any]]], pairs: int,
                       boot: int, seed: int = 5) -> list[tuple[str, int, float, float, float]]:
    """Rows (bin, pairs, mean stated paired, happened, mean stated unpaired) of the
    leaderboard's P(A above B) for simulated pairs of mixed players on the puzzles."""
    ids = sorted(i for i, r in answers["sf1k"].items() if r["source"] == "puzzle")
    by_id = {q.id: q for q in load_questions(ROOT / "questions.csv")}
    ratings = np.array([float(by_id[i].rating or 0) for i in ids])
    s1 = np.array([bool(answers["sf1k"][i]["solved"]) for i in ids], float)
    s2 = np.array([bool(answers["sf2k"][i]["solved"]) for i in ids], float)
    buckets = [answers["sf1k"][i]["elo_bucket"] for i in ids]
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(pairs):
        t = rng.random(2)
        truth = [puzzle_elo_laplace(ratings, x * s2 + (1 - x) * s1).mean for x in t]
        runs = [np.where(rng.random(len(ids)) < x, s2, s1) for x in t]
        parts = [PairedPart("puzzle", tuple(
            (i, Point(b, float(v), float(r))) for i, b, v, r in zip(ids, buckets, run, ratings,
                                                                     strict=True)))
            for run in runs]
        draws = joint_draws(parts, seed + k, boot)
        assert draws is not None
        fits = [puzzle_elo_laplace(ratings, run) for run in runs]
        sd = np.hypot(*[(f.hi - f.lo) / (2 * Z) for f in fits])
        unpaired = float(stats.norm.cdf((fits[0].mean - fits[1].mean) / sd))
        ahead, tied = np.mean(draws[:, 0] > draws[:, 1]), np.mean(draws[:, 0] == draws[:, 1])
        stated = float(ahead + tied / 2)  # as the leaderboard states it
        rows.append((stated, truth[0] > truth[1], unpaired))
    table = []
    for lo, hi in ((0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)):
        sel = [r for r in rows if lo <= r[0] < hi]
        if sel:
            table.append((f"{lo:.1f}-{min(hi, 1.0):.1f}", len(sel),
                          float(np.mean([r[0] for r in sel])), float(np.mean([r[1] for r in sel])),
                          float(np.mean([r[2] for r in sel]))))
    return table


def main() -> None:
    """Measure the baselines, simulate, print the table; --write the measured spread."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=Path, default=ROOT / "questions.csv")
    p.add_argument("--runs", type=int, default=2000, help="simulated runs per row")
    p.add_argument("--n", type=int, default=200, help="questions a run in the power rows")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--pairs", type=int, default=300,
                   help="simulated pairs for the leaderboard's stated-vs-happened table")
    p.add_argument("--write", action="store_true",
                   help=f"record the measured spread in {PAIRED_BASELINES.name}")
    args = p.parse_args()
    start = time.monotonic()
    answers = baseline_answers(args.questions, args.workers)
    ids = sorted(answers["sf1k"])
    strata = np.array([f"{answers['sf1k'][i]['source']}|{answers['sf1k'][i]['elo_bucket']}"
                       for i in ids])
    values = {k: per_question(v, ids) for k, v in answers.items()}
    measured = {m: spread(values["sf1k"][m], values["sf2k"][m]) for m in values["sf1k"]}
    print(f"{len(ids)} questions; Stockfish 1k against 2k (random's correlation with 1k: "
          + ", ".join(f"{m} {np.corrcoef(values['random'][m], values['sf1k'][m])[0, 1]:.2f}"
                      for m in measured) + ")\n")
    print("| metric | sd 1k | sd 2k | paired correlation | test | false positives at no "
          f"difference ({args.runs} runs, all questions) | power at n = {args.n}: paired | "
          "unpaired | effective sample-size ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m, s in measured.items():
        x1, x2 = values["sf1k"][m], values["sf2k"][m]
        fpr, _ = simulate(x1, x2, strata, m, args.runs, len(ids), True, 1)
        power, power_u = simulate(x1, x2, strata, m, max(args.runs // 4, 200), args.n, False, 2)
        test = "McNemar exact" if m == "best_move_rate" else "paired bootstrap"
        print(f"| {m} | {s['sd_a']:.3g} | {s['sd_b']:.3g} | {s['rho']:.2f} | {test} | "
              f"{fpr:.1%} | {power:.1%} | {power_u:.1%} | "
              f"{effective_ratio(s['sd_a'], s['sd_b'], s['rho']):.2f} |")
    print("\nThe leaderboard's P(A above B), first-move puzzle Elo, paired draws ("
          f"{args.pairs} pairs of mixed players):\n")
    print("| stated P(A above B) | pairs | mean stated (paired) | happened | mean stated "
          "(unpaired draws) |")
    print("|---|---|---|---|---|")
    for name, n, stated, happened, unpaired in stated_vs_happened(answers, args.pairs, 300):
        print(f"| {name} | {n} | {stated:.2f} | {happened:.2f} | {unpaired:.2f} |")
    print(f"\n({time.monotonic() - start:.0f} s)")
    if args.write:
        write_json(PAIRED_BASELINES, {
            "measured_on": f"stockfish:nodes=1000 and stockfish:nodes=2000 on all {len(ids)} "
                           f"questions of questions.csv (sha256 "
                           f"{sha256_file(args.questions)[:12]}); python -m "
                           "bench.paired_compare --write",
            "metrics": measured})
        print(f"wrote {PAIRED_BASELINES}")


if __name__ == "__main__":
    sys.exit(run_cli(main))
