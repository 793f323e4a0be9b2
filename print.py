"""Show what the pipeline achieved against its targets: steps, games, tree, puzzles, evals."""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from generate import STEPS
from lib.cli import run_cli
from lib.errors import ChessEvalError
from lib.grading import MATE_FLOOR
from lib.testset.pipeline import State, fingerprint_parts
from lib.testset.tree import ELO_BUCKETS, PHASES, SIDES, TYPES

LEVELS = ["elo_bucket", "phase", "type", "side"]
ORDER = {"elo_bucket": ELO_BUCKETS, "phase": PHASES, "type": TYPES, "side": SIDES}


def build_parser() -> argparse.ArgumentParser:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Summarise the generated files: step status, the games database, the "
        "achieved tree against its targets (games and puzzles), puzzle ratings and the "
        "evaluation.")
    parser.add_argument("--out", type=Path, default=Path("output"),
                        help="directory of generated files (default: output)")
    parser.add_argument("--questions", type=Path, default=Path("questions.csv"),
                        help="the test set (default: questions.csv)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--plot", type=Path, default=None, metavar="DIR",
                        help="also write PNG charts of the distributions to DIR")
    return parser


def step_status(out: Path) -> pd.DataFrame:
    """One row per step output: exists, size, modified, fingerprint current or stale."""
    state = State(out)
    rows = []
    for number, module_name in STEPS.items():
        module = importlib.import_module(module_name)
        record = state.data.get(module.NAME)
        argv = record["argv"] if record else ["--out", str(out)]
        try:
            spec = module.spec(module.build_parser().parse_args(argv))
            current = record is not None and all(
                record.get(k) == v for k, v in fingerprint_parts(spec).items())
            status = "current" if current else ("stale" if record else "not run")
        except ChessEvalError as exc:
            spec, status = None, f"unknown ({exc})"
        for path in spec.outputs if spec else []:
            exists = path.exists()
            rows.append({
                "step": number, "output": str(path), "exists": exists,
                "MB": round(path.stat().st_size / 2**20, 2) if exists else None,
                "modified": (pd.Timestamp(path.stat().st_mtime, unit="s").strftime(
                    "%Y-%m-%d %H:%M") if exists else ""),
                "fingerprint": status if exists else "missing",
            })
    return pd.DataFrame(rows)


def games_summary(out: Path) -> dict[str, pd.DataFrame]:
    """Kept games by Elo bucket and time control; drops by reason."""
    path = out / "games.db"
    if not path.is_file():
        return {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        kept = pd.read_sql("SELECT elo_bucket, tc_class FROM games", conn)
        drops = pd.read_sql("SELECT reason, count FROM drops ORDER BY count DESC", conn)
    table = pd.crosstab(kept["elo_bucket"], kept["tc_class"], margins=True, margins_name="all")
    table = table.reindex([b for b in ELO_BUCKETS if b in table.index] + ["all"])
    table = table.rename_axis(columns=None).reset_index()
    return {"kept games by Elo bucket and time control": table, "dropped games": drops}


def tree(report_path: Path) -> pd.DataFrame | None:
    """Every level of the tree with target, achieved and a shortfall mark."""
    if not report_path.is_file():
        return None
    leaves = pd.DataFrame(json.loads(report_path.read_text())["leaves"])
    frames = []
    for depth in range(1, 5):
        keys = LEVELS[:depth]
        level = leaves.groupby(keys, sort=False)[["target", "achieved"]].sum().reset_index()
        level["level"] = depth
        frames.append(level)
    table = pd.concat(frames, ignore_index=True)
    for key in LEVELS:
        table[key] = pd.Categorical(table[key], categories=ORDER[key])
    table = table.sort_values(LEVELS, na_position="first").reset_index(drop=True)
    table["short"] = (table["target"] - table["achieved"]).clip(lower=0)
    table["node"] = table.apply(_node_label, axis=1)
    table["mark"] = table["short"].map(lambda s: f"SHORT {s}" if s else "")
    return table[["node", "target", "achieved", "mark"]]


def _node_label(row: pd.Series) -> str:
    names = [str(row[k]) for k in LEVELS[: row["level"]]]
    return "    " * (row["level"] - 1) + names[-1]


def puzzle_ratings(out: Path) -> dict[str, Any]:
    """Range and mean of the selected puzzles' ratings."""
    path = out / "puzzles.csv"
    if not path.is_file():
        return {}
    ratings = pd.read_csv(path)["rating"]
    if ratings.empty:
        return {"count": 0}
    return {"count": int(ratings.size), "min": int(ratings.min()), "max": int(ratings.max()),
            "mean": round(float(ratings.mean()), 1)}


def evaluation(questions: Path) -> dict[str, Any]:
    """Moves per position, share of mate scores, engine and nodes of the test set."""
    if not questions.is_file():
        return {}
    with open(questions, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        return {"questions": 0}
    moves = [json.loads(r["expected_output"]) for r in rows]
    scores = [cp for ms in moves for _, cp in ms]
    counts = pd.Series([len(ms) for ms in moves])
    return {
        "questions": len(rows),
        "by_source": pd.Series([r["source"] for r in rows]).value_counts().to_dict(),
        "private": sum(r["private"] == "true" for r in rows),
        "moves_per_position": {"mean": round(float(counts.mean()), 2),
                               "min": int(counts.min()), "max": int(counts.max())},
        "mate_score_share": round(sum(abs(s) >= MATE_FLOOR for s in scores) / len(scores), 4),
        "positions_with_a_mate": sum(abs(ms[0][1]) >= MATE_FLOOR for ms in moves),
        "engine": sorted({r["engine"] for r in rows}),
        "nodes": sorted({int(r["nodes"]) for r in rows}),
    }


def collect(args: argparse.Namespace) -> dict[str, Any]:
    """Everything print.py shows, as data."""
    return {
        "steps": step_status(args.out),
        **games_summary(args.out),
        "games tree": tree(args.out / "positions_report.json"),
        "puzzles tree": tree(args.out / "puzzles_report.json"),
        "puzzle ratings": puzzle_ratings(args.out),
        "evaluation": evaluation(args.questions),
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, pd.DataFrame):
        return json.loads(value.to_json(orient="records"))
    return value


def plot(data: dict[str, Any], args: argparse.Namespace) -> list[Path]:
    """Write PNG charts: trees by Elo bucket and phase, puzzle ratings, moves per position."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    args.plot.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("games tree", "puzzles tree"):
        table = data[name]
        if table is None:
            continue
        top = table[~table["node"].str.startswith(" ")]
        fig, ax = plt.subplots(figsize=(7, 4))
        x = range(len(top))
        ax.bar([i - 0.2 for i in x], top["target"], width=0.4, label="target")
        ax.bar([i + 0.2 for i in x], top["achieved"], width=0.4, label="achieved")
        ax.set_xticks(list(x), top["node"], rotation=20)
        ax.set_title(f"{name}: positions by Elo bucket")
        ax.legend()
        written.append(_save(fig, args.plot / f"{name.replace(' ', '_')}.png"))
    if args.questions.is_file():
        questions = pd.read_csv(args.questions)
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.hist(questions["legal_moves"], bins=30)
        ax.set_title("legal moves per position")
        written.append(_save(fig, args.plot / "legal_moves.png"))
        ratings = questions["rating"].dropna()
        if not ratings.empty:
            fig, ax = plt.subplots(figsize=(7, 4))
            ax.hist(ratings, bins=20)
            ax.set_title("puzzle ratings (Lichess puzzle rating)")
            written.append(_save(fig, args.plot / "puzzle_ratings.png"))
    return written


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def show(args: argparse.Namespace) -> None:
    """Print the summary as tables or JSON, and write charts when asked."""
    data = collect(args)
    if args.json:
        print(json.dumps({k: _jsonable(v) for k, v in data.items()}, indent=2, default=str))
    else:
        with pd.option_context("display.max_rows", 500, "display.width", 120):
            for title, value in data.items():
                print(f"\n== {title}")
                if value is None or (isinstance(value, dict) and not value):
                    print("(not built yet)")
                elif isinstance(value, pd.DataFrame):
                    print(value.to_string(index=False))
                else:
                    print(json.dumps(value, indent=2))
    if args.plot:
        for path in plot(data, args):
            print(f"wrote {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    return run_cli(lambda: show(args))


if __name__ == "__main__":
    sys.exit(main())
