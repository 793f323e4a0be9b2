"""The header every result file begins with, written by one function and read by one loader.

A header says what the file is (`kind`), which version of the schema it follows, which code
wrote it (`revision`), when (`created_at`), and whether it is complete, and if not, why. The
loader checks the kind and the version and refuses anything else in one line, so no reader
guesses a file's kind or reads a KeyError as "another version". Files of schema version 1
(before the header) stay readable: a static run had no kind, a play run's kind was "games",
and a comparison had no version.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import time
from enum import StrEnum
from pathlib import Path
from typing import Any

from chess_eval.benchmark.core.data import CHECKOUT, ROOT
from chess_eval.errors import DataError
from chess_eval.files import write_json

SCHEMA_VERSION = 2  # written; the loader reads READABLE
READABLE = (1, 2)


class Kind(StrEnum):
    """What a result file holds; its file name begins with the kind."""

    STATIC = "static"  # `benchmark.py run`
    PLAY = "play"  # `benchmark.py play`
    PUZZLES = "puzzles"  # `benchmark.py puzzles`
    WORLDMODEL = "worldmodel"  # `benchmark.py worldmodel`
    COMPARE = "compare"  # `benchmark.py compare`
    MATCH = "match"  # `benchmark.py match`


LEGACY_KINDS = {"games": Kind.PLAY}  # version-1 names of a kind
HEADER_FIELDS = ("kind", "schema_version", "revision", "created_at", "complete",
                 "incomplete_reason")


@functools.lru_cache(maxsize=1)
def revision() -> str:
    """The code's revision: `git describe --always --dirty` of the repository when it is a
    git checkout, else the installed package's version."""
    # An installed wheel may sit inside another project's checkout: that one is not ours.
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, text=True,
                             capture_output=True, timeout=30, check=True).stdout.strip() \
            if CHECKOUT else ""
        if out:
            return out
    except (OSError, subprocess.SubprocessError):
        pass
    from importlib import metadata

    try:
        return f"chess-eval {metadata.version('chess-eval')}"
    except metadata.PackageNotFoundError:
        return "unknown"


def created_at() -> str:
    """Now in UTC to the second, or SOURCE_DATE_EPOCH when it is set (reproducible files)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    seconds = int(epoch) if epoch and epoch.isdigit() else int(time.time())
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def header(kind: Kind, complete: bool, incomplete_reason: str | None = None) -> dict[str, Any]:
    """The header of a result of `kind`."""
    if complete and incomplete_reason:
        raise ValueError("a complete result has no reason to be incomplete")
    return {"kind": str(kind), "schema_version": SCHEMA_VERSION, "revision": revision(),
            "created_at": created_at(), "complete": complete,
            "incomplete_reason": None if complete else incomplete_reason or "incomplete"}


def write_result(path: Path, kind: Kind, body: dict[str, Any],
                 incomplete_reason: str | None = None) -> None:
    """A result file, atomically: the header, then `body` (whose `complete` it takes)."""
    complete = bool(body.get("complete", True))
    rest = {k: v for k, v in body.items() if k not in HEADER_FIELDS}
    write_json(path, {**header(kind, complete, incomplete_reason), **rest})


def file_name(kind: Kind, label: str) -> str:
    """A result's file-name label: `<kind>__<label>`."""
    return f"{kind}__{label}"


def read_result(path: Path, kinds: tuple[Kind, ...] = tuple(Kind)) -> dict[str, Any]:
    """A result file with its header checked (kind normalised, `complete` present, `_file`
    its name); DataError in one line for anything else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a readable result file ({exc})") from exc
    if not isinstance(data, dict):
        raise DataError(f"{path}: not a result file of this benchmark")
    version = data.get("schema_version")
    raw = data.get("kind")
    if raw is None and version == 1 and "items" in data and "elo" in data:
        raw = Kind.STATIC  # version 1 wrote static runs without a kind
    kind = LEGACY_KINDS.get(raw, raw) if isinstance(raw, str) else raw
    if kind == Kind.COMPARE and version is None:
        version = 1  # version 1 wrote comparisons without a version
    if kind not in tuple(Kind):
        raise DataError(f"{path}: not a result file of this benchmark (kind {raw!r})")
    if version not in READABLE:
        raise DataError(f"{path}: a {kind} result of schema version {version!r}; this "
                        f"benchmark reads version {', '.join(map(str, READABLE))}")
    if kind not in kinds:
        raise DataError(f"{path}: a {kind} result, not {' or '.join(kinds)}")
    return {**data, "kind": Kind(kind), "schema_version": version,
            "complete": bool(data.get("complete", True)), "_file": path.name}


def is_inspect_log(path: Path) -> bool:
    """Whether a file is an Inspect log: an .eval archive, or a JSON log (`--log-format
    json`), told by its opening keys (Inspect writes "version" then "status" first)."""
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json":
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(256).decode("utf-8", errors="replace")
    except OSError:
        return False
    return re.match(r'\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:', head) is not None


def inspect_logs(results: Path) -> list[Path]:
    """The Inspect logs under `results`, .eval and JSON alike, by name."""
    return sorted(p for pattern in ("*.eval", "*.json") for p in results.rglob(pattern)
                  if is_inspect_log(p))
