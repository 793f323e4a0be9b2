"""The benchmark's outputs: questions in, the public results JSON, reports and leaderboard."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lib.errors import DataError

SCHEMA_VERSION = 1
SUMMARY_METRICS = ("legal_rate", "acpl", "accuracy", "best_move_rate", "puzzle_solve_rate")


def slug(text: str) -> str:
    """A file-name-safe version of a model name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def summary_table(result: dict[str, Any]) -> str:
    """The terminal summary: metrics with intervals, illegal moves, Elo estimates."""
    lines = [f"model {result['model']}  prompt {result['prompt']}  n={result['n']} "
             f"(infrastructure failures not scored: {result['infra']})"]
    for name in SUMMARY_METRICS:
        m = result["intervals"].get(name)
        if m:
            lines.append(f"  {name:<18} {m['value']:>9.3f}   90% [{m['lo']:.3f}, {m['hi']:.3f}]")
    lines.append("  illegal by category: " + ", ".join(
        f"{k} {v}" for k, v in result["illegal"].items()))
    for kind, label in (("puzzle", "puzzle Elo (Lichess puzzle rating scale)"),
                        ("human", "human-calibrated Elo (Lichess game rating scale)")):
        e = result["elo"].get(kind)
        if e:
            note = f"  [{e['note']}]" if e.get("note") else ""
            lines.append(f"  {label}: {elo_text(e)}{note}")
    wm = result["world_model"]
    lines.append(f"  world-model score {wm['score']} (illegal rate {wm['illegal_rate']:.2%})")
    return "\n".join(lines)


def markdown_report(result: dict[str, Any]) -> str:
    """A markdown report of one run."""
    out = [f"# {result['model']} ({result['prompt']})", "",
           f"{result['n']} questions scored from `{result['questions']}` (split "
           f"{result['split']}); {result['infra']} infrastructure failures left out.", "",
           "| metric | value | 90% interval |", "|---|---|---|"]
    for name, m in result["intervals"].items():
        if m:
            out.append(f"| {name} | {m['value']:.3f} | {m['lo']:.3f} - {m['hi']:.3f} |")
    out += ["", "## Illegal moves", "", "| category | count |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in result["illegal"].items()]
    out += ["", "## Elo", ""]
    for kind, e in result["elo"].items():
        if e:
            out.append(f"- {kind}: {elo_text(e)} ({e['method']}, n={e['n']}) {e['note']}")
    out.append("- Puzzle Elo is on the Lichess puzzle-rating scale, not game Elo.")
    out += ["", "## By stratum", ""]
    for key, groups in result["by"].items():
        out += [f"### {key}", "", "| value | n | legal | ACPL | accuracy | best |",
                "|---|---|---|---|---|---|"]
        for value, agg in groups.items():
            if agg.get("n"):
                cells = [_cell(agg.get(m)) for m in ("legal_rate", "acpl", "accuracy",
                                                     "best_move_rate")]
                out.append(f"| {value} | {agg['n']} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def _cell(m: dict[str, float] | None) -> str:
    return "" if not m else f"{m['value']:.3f} [{m['lo']:.3f}, {m['hi']:.3f}]"


def load_results(out: Path) -> list[dict[str, Any]]:
    """Every results JSON file under a results directory."""
    results = []
    for path in sorted(out.glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("schema_version") == SCHEMA_VERSION:
            results.append(data)
    return results


def leaderboard(out: Path) -> tuple[Path, Path]:
    """Write leaderboard.md and leaderboard.svg (Elo with 90% intervals) for all runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = load_results(out)
    if not results:
        raise DataError(f"no results in {out}: run python benchmark.py --model ... first")

    def key(r: dict[str, Any]) -> float:
        for kind in ("human", "puzzle"):
            mean = (r["elo"].get(kind) or {}).get("mean")
            if mean is not None:
                return float(mean)
        return float("-inf")

    results.sort(key=key, reverse=True)
    lines = ["| # | model | prompt | n | legal | ACPL | accuracy | puzzles solved | "
             "human Elo (90%) | puzzle Elo (90%) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for rank, r in enumerate(results, 1):
        iv = r["intervals"]
        cells = [_short(iv.get(m)) for m in SUMMARY_METRICS[:3] + ("puzzle_solve_rate",)]
        elos = [_elo(r["elo"].get(k)) for k in ("human", "puzzle")]
        lines.append(f"| {rank} | {r['model']} | {r['prompt']} | {r['n']} | "
                     + " | ".join(cells + elos) + " |")
    md = out / "leaderboard.md"
    md.write_text("# Leaderboard\n\nPuzzle Elo is on the Lichess puzzle-rating scale.\n\n"
                  + "\n".join(lines) + "\n")
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(results) + 2))
    names = [f"{r['model']} ({r['prompt']})" for r in results]
    for offset, kind, color in ((-0.15, "human", "C0"), (0.15, "puzzle", "C1")):
        ys, xs, err = [], [], [[], []]
        for i, r in enumerate(results):
            e = r["elo"].get(kind)
            if e and e["mean"] is not None:
                ys.append(i + offset)
                xs.append(e["mean"])
                # An open bound is drawn 1000 Elo long: the chart cannot show infinity.
                err[0].append(e["mean"] - e["lo"] if e["lo"] is not None else 1000)
                err[1].append(e["hi"] - e["mean"] if e["hi"] is not None else 1000)
        ax.errorbar(xs, ys, xerr=err, fmt="o", color=color, capsize=3,
                    label=f"{kind} Elo, 90% interval")
    ax.set_yticks(range(len(results)), names)
    ax.invert_yaxis()
    ax.set_xlabel("Elo")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    fig.tight_layout()
    svg = out / "leaderboard.svg"
    fig.savefig(svg)
    plt.close(fig)
    return md, svg


def _short(m: dict[str, float] | None) -> str:
    return "" if not m else f"{m['value']:.3f}"


def _elo(e: dict[str, Any] | None) -> str:
    return "" if not e else elo_text(e)


def elo_text(e: dict[str, Any]) -> str:
    """'1712  90% [1590, 1840]', with open bounds written as -inf/+inf."""
    mean = "undefined" if e["mean"] is None else str(e["mean"])
    lo = "-inf" if e["lo"] is None else str(e["lo"])
    hi = "+inf" if e["hi"] is None else str(e["hi"])
    return f"{mean}  90% [{lo}, {hi}]"
