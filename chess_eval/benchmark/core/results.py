"""Result files: their names, the static runs read back for the leaderboard, Elo as text."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.header import Kind, is_inspect_log, read_result
from chess_eval.errors import DataError

log = logging.getLogger(__name__)


def slug(text: str) -> str:
    """A file-name-safe version of a model name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")


def run_name(label: str, key: list[Any]) -> str:
    """A result file's stem: the label made file-safe, then a hash of everything that changes
    the answers, so no run replaces another."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
    return slug(label) + "__" + digest


# What the leaderboard writes beside the results: read by people and programs, never a run.
LEADERBOARD_FILES = ("leaderboard.json",)


def result_files(out: Path) -> list[Path]:
    """The JSON files of a results directory that may be runs (not the leaderboard's rows,
    nor Inspect's JSON logs, which are read back apart)."""
    return sorted(p for p in out.glob("*.json")
                  if p.name not in LEADERBOARD_FILES and not is_inspect_log(p))


def load_results(out: Path, digest: str) -> list[dict[str, Any]]:
    """The complete, scored runs on the questions file with this digest; every other JSON
    file is skipped with a warning saying why."""
    results = []
    skipped: dict[str, int] = {}
    for path in result_files(out):
        try:
            data = read_result(path)
        except DataError as exc:
            log.warning("skipping %s", exc)
            continue
        if data["kind"] != Kind.STATIC:
            continue  # another subcommand's result (the leaderboard reads them apart)
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
