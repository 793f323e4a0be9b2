"""The static run's outputs: the public results JSON, its reports, and reading them back."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from lib.benchmark.scoring import SUMMARY_METRICS

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1


def slug(text: str) -> str:
    """A file-name-safe version of a model name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def status_line(result: dict[str, Any]) -> str:
    """What the scores cover: scored, truncated (with the limit), infra; incomplete or not."""
    parts = [f"n={result['n']} scored of {result['asked']} asked"]
    if result.get("truncated"):
        parts.append(f"{result['truncated']} truncated at max_tokens={result.get('max_tokens')}"
                     " (not scored: raise --max-tokens)")
    if result["infra"]:
        parts.append(f"INCOMPLETE: {result['infra']} infrastructure failures not scored "
                     "(rerun the same command to complete)")
    if not result["n"]:
        parts.append("no scored answer: no score")
    return "; ".join(parts)


def summary_table(result: dict[str, Any]) -> str:
    """The terminal summary: metrics with intervals beside the random floor, Elo estimates."""
    floor = result.get("floor") or {}
    lines = [f"model {result['model']}  prompt {result['prompt']}  {status_line(result)}"]
    for name in SUMMARY_METRICS:
        m = result["intervals"].get(name)
        if m:
            base = floor.get(name)
            shown = "" if base is None else f"   random mover {base:.3f}"
            lines.append(f"  {name:<18} {m['value']:>9.3f}   90% [{m['lo']:.3f}, "
                         f"{m['hi']:.3f}]{shown}")
    lines.append("  illegal by category: " + ", ".join(
        f"{k} {v}" for k, v in result["illegal"].items()))
    for kind, label in (("puzzle", "puzzle Elo (Lichess puzzle rating scale)"),
                        ("human", "human-calibrated Elo (Lichess game rating scale)"),
                        ("predicted_game", "predicted game Elo (the ladder's scale)")):
        e = result["elo"].get(kind)
        if e:
            note = f"  [{e['note']}]" if e.get("note") else ""
            base = (floor.get("elo") or {}).get(kind)
            shown = f"; random mover {elo_text(base)}" if base else ""
            lines.append(f"  {label}: {elo_text(e)}{note}{shown}")
    wm = result["world_model"]
    if wm["score"] is None:
        lines.append(f"  world-model score: none ({wm['note']})")
    else:
        lines.append(f"  world-model score {wm['score']} (illegal rate "
                     f"{wm['illegal_rate']:.2%}); rests on "
                     f"{wm.get('rests_on', 'the illegal rate only')}")
    return "\n".join(lines)


def markdown_report(result: dict[str, Any]) -> str:
    """A markdown report of one run."""
    floor = result.get("floor") or {}
    out = [f"# {result['model']} ({result['prompt']})", "",
           f"Questions `{result['questions']}` (sha256 {result['questions_sha256'][:12]}), "
           f"split {result['split']}: {status_line(result)}.", "",
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
            f"{result.get('truncated', 0)} |", f"| infra | {result['infra']} |"]
    out += ["", "## Elo", ""]
    for kind, e in result["elo"].items():
        if e:
            base = (floor.get("elo") or {}).get(kind)
            shown = f"; random mover: {elo_text(base)}" if base else ""
            out.append(f"- {kind}: {elo_text(e)} ({e['method']}, n={e['n']}) {e['note']}"
                       f"{shown}")
    out.append("- Puzzle Elo is on the Lichess puzzle-rating scale, not game Elo.")
    wm = result["world_model"]
    out += ["", "## World model", "",
            f"Seed 001's rubric: {wm['score']}. It rests on "
            f"{wm.get('rests_on', 'the illegal rate only')}."]
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


def load_results(out: Path, digest: str) -> list[dict[str, Any]]:
    """The complete, scored runs on the questions file with this digest; every other JSON
    file is skipped with a warning saying why."""
    results = []
    skipped: dict[str, int] = {}
    for path in sorted(out.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("kind") in ("games", "puzzles",
                                                               "worldmodel"):
                continue  # another subcommand's result (the leaderboard reads them apart)
            if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION \
                    or not isinstance(data.get("elo"), dict):
                raise ValueError("not a results file of this benchmark")
        except (ValueError, OSError) as exc:
            log.warning("skipping %s: %s", path, exc)
            continue
        why = ("another questions file" if data.get("questions_sha256") != digest
               else "incomplete (infrastructure failures)" if not data.get("complete", True)
               or data.get("infra") else "nothing scored (n = 0)" if not data.get("n")
               else None)
        if why:
            skipped[why] = skipped.get(why, 0) + 1
            log.info("leaving out %s: %s", path.name, why)
        else:
            results.append(data)
    for why, count in skipped.items():
        log.warning("left out %d run(s): %s", count, why)
    return results


def elo_text(e: dict[str, Any]) -> str:
    """The estimate as text: an interval, 'below ~N', 'above ~N' or 'not identifiable'."""
    if e.get("text"):
        return str(e["text"])
    mean = "undefined" if e["mean"] is None else str(e["mean"])
    lo = "-inf" if e["lo"] is None else str(e["lo"])
    hi = "+inf" if e["hi"] is None else str(e["hi"])
    return f"{mean}  90% [{lo}, {hi}]"
