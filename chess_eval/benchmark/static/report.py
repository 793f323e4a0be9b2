"""The static run's reports: the terminal summary and the markdown report."""

from __future__ import annotations

import json
from typing import Any

from chess_eval.benchmark.core.results import elo_text
from chess_eval.benchmark.core.scoring import (
    MIN_INTERVAL_N,
    SUMMARY_METRICS,
    illegal_text,
    truncation_hint,
)
from chess_eval.benchmark.model import cost


def status_line(result: dict[str, Any]) -> str:
    """What the scores cover: scored, truncated (with the limit), infra; incomplete or not."""
    parts = [f"n={result['n']} scored of {result['asked']} asked"]
    if result.get("truncated"):
        parts.append(f"{result['truncated']} truncated at max_tokens={result.get('max_tokens')}"
                     " (each counted as a failed answer)")
    if result.get("empty"):
        parts.append(f"{result['empty']} empty or filtered replies (each a failed answer)")
    if result["infra"]:
        parts.append(f"INCOMPLETE: {result['infra']} infrastructure failures not scored "
                     "(rerun the same command to complete)")
    if not result["n"]:
        parts.append("no scored answer: no score")
    line = "; ".join(parts)
    hint = truncation_hint(result.get("truncated", 0), result["n"], result.get("max_tokens"))
    return line + ("\n" + hint if hint else "")


def summary_table(result: dict[str, Any]) -> str:
    """The terminal summary: metrics with intervals beside the random floor, Elo estimates."""
    floor = result.get("floor") or {}
    lines = [f"model {result['model']}  protocol {result.get('protocol', 'fen')}  prompt "
             f"{result['prompt']}  {status_line(result)}"]
    for name in SUMMARY_METRICS:
        m = result["intervals"].get(name)
        if m:
            base = floor.get(name)
            shown = "" if base is None else f"   random mover {base:.3f}"
            lines.append(f"  {name:<18} {m['value']:>9.3f}   90% [{m['lo']:.3f}, "
                         f"{m['hi']:.3f}]{shown}")
    lines.append("  illegal by category: " + ", ".join(
        f"{k} {v}" for k, v in result["illegal"].items()))
    for kind, label in (("puzzle", "first-move puzzle Elo (Lichess puzzle rating scale)"),
                        ("human", "human-move Elo (Lichess players' move quality, not a "
                                  "Lichess rating)"),
                        ("predicted_game", "predicted game Elo (the reference ladder's scale)")):
        e = result["elo"].get(kind)
        if e:
            note = f"  [{e['note']}]" if e.get("note") else ""
            base = (floor.get("elo") or {}).get(kind)
            shown = f"; random mover {elo_text(base)}" if base else ""
            lines.append(f"  {label}: {elo_text(e)}{note}{shown}")
    wm = result["world_model"]
    lines.append(f"  illegal rate: {_illegal_line(wm)}")
    if cost.shown(result.get("usage")):
        lines.append(f"  cost: {cost.text(result['usage'])}")
    if result.get("stopped"):
        lines.append(f"  {result['stopped']}")
    return "\n".join(lines)


def markdown_report(result: dict[str, Any]) -> str:
    """A markdown report of one run."""
    floor = result.get("floor") or {}
    out = [f"# {result['model']} ({result['prompt']})", "",
           f"Questions `{result['questions']}` (sha256 {result['questions_sha256'][:12]}), "
           f"split {result['split']}, protocol {result.get('protocol', 'fen')}: "
           f"{status_line(result)}.", "",
           *([f"**{result['stopped']}.**", ""] if result.get("stopped") else []),
           *([f"Cost: {cost.text(result['usage'])}.", ""]
             if cost.shown(result.get("usage")) else []),
           f"Settings: `{json.dumps(result.get('settings', {}), sort_keys=True)}`", "",
           "| metric | value | 90% interval | random mover |", "|---|---|---|---|"]
    for name, m in result["intervals"].items():
        if m:
            base = floor.get(name)
            out.append(f"| {name} | {m['value']:.3f} | {m['lo']:.3f} - {m['hi']:.3f} | "
                       f"{'' if base is None else f'{base:.3f}'} |")
    out += ["", "## Outcomes", "", "| outcome | count |", "|---|---|"]
    out += [f"| {k} (illegal) | {v} |" for k, v in result["illegal"].items()]
    out += [f"| truncated at max_tokens={result.get('max_tokens')} | "
            f"{result.get('truncated', 0)} |", f"| empty or filtered | {result.get('empty', 0)} |",
            f"| infra | {result['infra']} |"]
    out += ["", "## Elo", ""]
    for kind, e in result["elo"].items():
        if e:
            base = (floor.get("elo") or {}).get(kind)
            shown = f"; random mover: {elo_text(base)}" if base else ""
            name = "first-move puzzle" if kind == "puzzle" else kind
            out.append(f"- {name}: {elo_text(e)} ({e['method']}, n={e['n']}) {e['note']}"
                       f"{shown}")
    out.append("- First-move puzzle Elo is on the Lichess puzzle-rating scale, not game Elo. "
               "Only each puzzle's first move is asked, while a Lichess rating is for the "
               "whole line, so it runs above a whole-line puzzle Elo (benchmark.py puzzles).")
    wm = result["world_model"]
    out += ["", "## Illegal rate", "",
            f"{_illegal_line(wm)}."]
    out += ["", "## By stratum", "", f"90% intervals by the bootstrap; a group of fewer "
            f"than {MIN_INTERVAL_N} answers shows its value alone (too few to bound).", ""]
    for key, groups in result["by"].items():
        out += [f"### {key}", "", "| value | n | legal | ACPL | accuracy | best |",
                "|---|---|---|---|---|---|"]
        for value, agg in groups.items():
            if agg.get("n"):
                few = agg["n"] < MIN_INTERVAL_N  # a bootstrap of a handful bounds nothing
                cells = [_cell(agg.get(m), few) for m in ("legal_rate", "acpl", "accuracy",
                                                          "best_move_rate")]
                out.append(f"| {value} | {agg['n']} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def _cell(m: dict[str, float] | None, few: bool = False) -> str:
    if not m:
        return ""
    return f"{m['value']:.3f}" + ("" if few else f" [{m['lo']:.3f}, {m['hi']:.3f}]")


def _illegal_line(wm: dict[str, Any]) -> str:
    """The illegal rate with its interval and what it rests on, and why there is no score."""
    text = illegal_text(wm)
    if text == "n/a":
        return f"n/a ({wm['note']})"
    return (f"{text} (90% exact interval) of {wm.get('rests_on', 'the answers')}; "
            f"{wm['note']}")
