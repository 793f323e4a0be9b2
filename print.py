"""Show what the pipeline achieved against its targets: steps, games, tree, puzzles, evals."""

from __future__ import annotations

import signal
import sys

# A Ctrl-C while the modules below load exits quietly (130); run_cli takes over after.
if __name__ == "__main__":  # not when a test imports this module
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))

import argparse
import contextlib
import csv
import importlib
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from chess_eval.cli import Renamed, positive_float, run_cli
from chess_eval.errors import ChessEvalError, DataError
from chess_eval.figures import save_figure
from chess_eval.files import atomic_write, ensure_writable_file
from chess_eval.grading import MATE_FLOOR
from chess_eval.testset.pipeline import State, fingerprint_parts
from chess_eval.testset.report import achieved_from_questions, leaf_rows, render_tree
from chess_eval.testset.summary import build_summary, load_summary, why_short
from chess_eval.testset.tree import ELO_BUCKETS, GAME_TARGETS, PUZZLE_TARGETS, scale_targets
from generate import STEPS

SUMMARY_FILE = "data/testset_build.json"  # relative to the questions file's folder


def build_parser() -> argparse.ArgumentParser:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Summarise the test set and a build: the achieved tree against its "
        "targets (from the questions file alone), step status, the games database, the "
        "game selection, puzzle ratings and the evaluation.")
    parser.add_argument("--build", type=Path, default=None, metavar="DIR",
                        help="a build's directory (generate.py --out): its steps, games and "
                        "the questions file it wrote (default: output for the steps; the "
                        "committed questions.csv for the tree)")
    parser.add_argument("--out", dest="build", type=Path, action=Renamed, new="--build")
    parser.add_argument("--questions", type=Path, default=None,
                        help="the test set to describe (default: the one --build's build "
                        "wrote, else questions.csv)")
    parser.add_argument("--scale", type=positive_float, default=None,
                        help="the --scale the set was built at, for the targets (default: "
                        "the build's recorded one, else 1)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--plot", type=Path, default=None, metavar="DIR",
                        help="also write PNG charts of the distributions to DIR")
    parser.add_argument("--summary", type=Path, default=None, metavar="FILE",
                        help="also write the build's summary (per source file, the selection, "
                        "why leaves are short) to FILE as JSON; needs --build. The committed "
                        f"one is {SUMMARY_FILE}, beside questions.csv")
    return parser


def step_status(out: Path) -> pd.DataFrame:
    """One row per step output: exists, size, modified, fingerprint current or stale."""
    state = State(out)
    rows = []
    for number, module_name in STEPS.items():
        module = importlib.import_module(module_name)
        record = state.data.get(module.NAME)
        argv = record["argv"] if record else ["--out", str(out)]
        outputs: list[Path] = []
        try:
            # Paths in the recorded command line are relative to where the build ran.
            with _cwd(Path(record.get("cwd", ".")) if record else Path(".")):
                spec = module.spec(module.build_parser().parse_args(argv))
                parts = fingerprint_parts(spec)
                outputs = [path.absolute() for path in spec.outputs]
            current = record is not None and all(record.get(k) == v for k, v in parts.items())
            status = "current" if current else ("stale" if record else "not run")
        except ChessEvalError as exc:
            spec, status = None, f"unknown ({exc})"
        for path in outputs:
            exists = path.exists()
            rows.append({
                "step": number, "output": str(path), "exists": exists,
                "MB": round(path.stat().st_size / 2**20, 2) if exists else None,
                "modified": (pd.Timestamp(path.stat().st_mtime, unit="s").strftime(
                    "%Y-%m-%d %H:%M") if exists else ""),
                "fingerprint": status if exists else "missing",
            })
    return pd.DataFrame(rows)


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path if path.is_dir() else before)
    try:
        yield
    finally:
        os.chdir(before)


def games_summary(out: Path) -> dict[str, pd.DataFrame]:
    """Kept games by Elo bucket and time control; drops by reason, a column per source file
    (in the order read) and one for all."""
    path = out / "games.db"
    if not path.is_file():
        return {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        kept = pd.read_sql("SELECT elo_bucket, tc_class FROM games", conn)
        drops = pd.read_sql("SELECT source, reason, count FROM drops", conn)
        files = pd.read_sql("SELECT source, kept FROM sources ORDER BY position", conn)
    table = pd.crosstab(kept["elo_bucket"], kept["tc_class"], margins=True, margins_name="all")
    table = table.reindex([b for b in ELO_BUCKETS if b in table.index] + ["all"])
    table = table.rename_axis(columns=None).reset_index()
    return {"kept games by Elo bucket and time control": table,
            "dropped games": _drops_by_file(drops, files)}


def _drops_by_file(drops: pd.DataFrame, files: pd.DataFrame) -> pd.DataFrame:
    """A row per source file (in the order read: games kept, then drops by reason, the most
    frequent first) and one for all."""
    table = drops.pivot_table(index="source", columns="reason", values="count",
                              aggfunc="sum", fill_value=0)
    table = table[table.sum().sort_values(ascending=False).index]
    table = files.set_index("source").join(table).fillna(0).astype(int)
    table.loc["all"] = table.sum()
    return table.rename_axis(index="file", columns=None).reset_index()


def _recorded(out: Path, step: str) -> dict[str, Any]:
    """A step's record in a build's .steps.json ({} when it never finished)."""
    return State(out).data.get(step, {})


def _option(record: dict[str, Any], option: str) -> str | None:
    """An option's value in a step record's command line, if given."""
    argv = record.get("argv", [])
    return argv[argv.index(option) + 1] if option in argv[:-1] else None


def questions_path(args: argparse.Namespace) -> Path:
    """--questions, else the file --out's build wrote, else the committed questions.csv."""
    if args.questions is not None:
        return Path(args.questions)
    if args.build is not None:
        record = _recorded(args.build, "06_evaluate")
        recorded = _option(record, "--questions")
        if recorded:
            return Path(record.get("cwd", ".")) / recorded
        return args.build / "questions.csv"
    return Path("questions.csv")


def build_scale(args: argparse.Namespace) -> float:
    """--scale, else the build's recorded step-03 scale, else 1."""
    if args.scale is not None:
        return float(args.scale)
    recorded = _option(_recorded(args.build, "03_select_games"), "--scale") if args.build else None
    return float(recorded) if recorded else 1.0


def trees(questions: Path, scale: float) -> dict[str, Any] | None:
    """The achieved tree from the questions file alone, against the scaled targets."""
    if not questions.is_file():
        return None
    rows = read_questions(questions)
    sources = {
        "Games": (scale_targets(GAME_TARGETS, scale), achieved_from_questions(rows, "game")),
        "Puzzles": (scale_targets(PUZZLE_TARGETS, scale),
                    achieved_from_questions(rows, "puzzle")),
    }
    return {"file": str(questions), "scale": scale, "drawing": render_tree(sources),
            "leaves": {name: leaf_rows(targets, got)
                       for name, (targets, got) in sources.items()}}


def read_questions(path: Path) -> list[dict[str, str]]:
    """The rows of a questions file, checked for the columns print.py reads."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    needed = {"source", "elo_bucket", "phase", "type", "color", "expected_output"}
    missing = needed - set(rows[0] if rows else needed)
    if missing:
        raise DataError(f"{path} is not a questions file: no column {', '.join(sorted(missing))}")
    return rows


def selection(out: Path) -> dict[str, Any]:
    """What step 03 reports beyond the tree: the per-player cap and the largest player."""
    path = out / "positions_report.json"
    if not path.is_file():
        return {}
    report = json.loads(path.read_text())
    capped = {f"{r['elo_bucket']} {r['phase']} {r['type']} {r['side']}":
              r["shortfall_from_player_cap"]
              for r in report["leaves"] if r.get("shortfall_from_player_cap")}
    return {"max_per_player": report.get("max_per_player"),
            "largest_player": report.get("largest_player"),
            "shortfall_from_player_cap": capped, "counts": report.get("counts")}


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
    rows = read_questions(questions)
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
    out = args.build or Path("output")
    questions = questions_path(args)
    return {
        "tree": trees(questions, build_scale(args)),
        "why short": shortfall_reasons(args, questions),
        "steps": step_status(out),
        **games_summary(out),
        "game selection": selection(out),
        "puzzle ratings": puzzle_ratings(out),
        "evaluation": evaluation(questions),
    }


def shortfall_reasons(args: argparse.Namespace, questions: Path) -> list[str]:
    """Why the set's leaves are short: from the build in --build, else from the summary
    committed beside the questions file (when it describes that file)."""
    if args.build is not None and (args.build / "positions_report.json").is_file() \
            and (args.build / "puzzles_report.json").is_file() and questions.is_file():
        return why_short(build_summary(args.build, questions))
    summary = load_summary(questions.parent / SUMMARY_FILE, questions)
    if summary is None:
        return []
    return why_short(summary)


def write_summary(args: argparse.Namespace) -> None:
    """Write --build's summary to --summary."""
    summary = build_summary(args.build, questions_path(args))
    with atomic_write(args.summary) as handle:
        json.dump(summary, handle, indent=2, sort_keys=True)
        handle.write("\n")
    print(f"wrote {args.summary}", file=sys.stderr)


def _jsonable(value: Any) -> Any:
    if isinstance(value, pd.DataFrame):
        return json.loads(value.to_json(orient="records"))
    return value


def plot(data: dict[str, Any], questions: Path, directory: Path) -> list[Path]:
    """Write PNG charts: achieved against target by Elo bucket, legal moves, puzzle ratings."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, leaves in (data["tree"] or {}).get("leaves", {}).items():
        frame = pd.DataFrame(leaves).groupby("elo_bucket", sort=False)[
            ["target", "achieved"]].sum().reindex(ELO_BUCKETS)
        fig, ax = plt.subplots(figsize=(7, 4))
        x = range(len(frame))
        ax.bar([i - 0.2 for i in x], frame["target"], width=0.4, label="target")
        ax.bar([i + 0.2 for i in x], frame["achieved"], width=0.4, label="achieved")
        ax.set_xticks(list(x), frame.index, rotation=20)
        ax.set_title(f"{name}: target and achieved by Elo bucket")
        ax.set_xlabel("Elo bucket (games: average rating; puzzles: puzzle rating)")
        ax.set_ylabel("positions")
        ax.legend()
        written.append(save_figure(fig, directory / f"{name.lower()}_tree.png"))
    if questions.is_file():
        frame = pd.read_csv(questions)
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.hist(frame["legal_moves"], bins=30)
        ax.set_title("Legal moves per position")
        ax.set_xlabel("legal moves")
        ax.set_ylabel("positions")
        written.append(save_figure(fig, directory / "legal_moves.png"))
        ratings = frame["rating"].dropna()
        if not ratings.empty:
            fig, ax = plt.subplots(figsize=(7, 4))
            ax.hist(ratings, bins=20)
            ax.set_title("Puzzle ratings")
            ax.set_xlabel("Lichess puzzle rating")
            ax.set_ylabel("puzzles")
            written.append(save_figure(fig, directory / "puzzle_ratings.png"))
    return written


def show(args: argparse.Namespace) -> None:
    """Print the summary as tables or JSON, and write charts when asked."""
    if args.summary:
        if args.build is None:
            raise DataError("--summary needs --build: the build whose summary to write")
        ensure_writable_file(args.summary, "--summary")
    data = collect(args)
    if args.json:
        print(json.dumps({k: _jsonable(v) for k, v in data.items()}, indent=2, default=str))
    else:
        with pd.option_context("display.max_rows", 500, "display.width", 120):
            for title, value in data.items():
                print(f"\n== {title}")
                if title == "tree" and value:
                    print(f"{value['file']} (targets at scale {value['scale']:g})")
                    print("\n".join(value["drawing"]))
                elif title == "why short":
                    print("\n".join(value) if value else "(nothing short, or no build "
                          f"summary describes this file: {SUMMARY_FILE})")
                elif value is None or (isinstance(value, dict) and not value):
                    print("(not built yet)")
                elif isinstance(value, pd.DataFrame):
                    print(value.to_string(index=False))
                else:
                    print(json.dumps(value, indent=2))
    if args.summary:
        write_summary(args)
    if args.plot:
        for path in plot(data, questions_path(args), args.plot):
            print(f"wrote {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = build_parser().parse_args(argv)
    try:
        return run_cli(lambda: show(args))
    except BrokenPipeError:
        # The reader went away (print.py --json | head): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
