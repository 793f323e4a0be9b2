"""The test sets committed before the current questions.csv, and the static runs made on them.

A static run answers one questions file; runs on another file are never ranked with it. A
run on a set this repository once committed (data/testset_history.json) is still shown,
in a table of its own, marked with that set's digest and date.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.data import DATA
from chess_eval.benchmark.core.header import Kind, read_result
from chess_eval.benchmark.core.results import result_files
from chess_eval.errors import DataError

# The test sets committed before this one (sha256, commit, date, questions), newest first.
TESTSET_HISTORY = DATA / "testset_history.json"


def previous_sets(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The earlier committed test sets by SHA-256 (from TESTSET_HISTORY unless `path`; {}
    when the history file is absent)."""
    path = path or TESTSET_HISTORY
    if not path.is_file():
        return {}
    return {entry["sha256"]: entry for entry in json.loads(path.read_text(encoding="utf-8"))}


def previous_set_text(entry: dict[str, Any]) -> str:
    """How a result on an earlier test set is marked: the set's digest, size and date."""
    return (f"a previous test set (sha256 {entry['sha256'][:12]}, {entry['questions']} "
            f"questions, committed {entry['date']})")


def previous_results(out: Path, digest: str) -> list[dict[str, Any]]:
    """The complete, scored static runs in `out` on an earlier committed set (not the one
    with `digest`), each marked with that set (`_previous_set`)."""
    known = previous_sets()
    found = []
    for path in result_files(out):
        try:
            result = read_result(path)
        except DataError:
            continue  # load_results has said why
        entry = known.get(result.get("questions_sha256", ""))
        if result["kind"] != Kind.STATIC or entry is None or entry["sha256"] == digest:
            continue
        if result.get("complete", True) and not result.get("infra") and result.get("n"):
            found.append({**result, "_previous_set": previous_set_text(entry)})
    return found
