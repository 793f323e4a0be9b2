"""File helpers: atomic writes, content hashes, reading with a progress bar."""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from tqdm import tqdm

from chess_eval.errors import ConfigError, DataError

log = logging.getLogger(__name__)


def temp_name(path: Path) -> Path:
    """The temporary name `path` is written under before it is renamed into place."""
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def ensure_writable_dir(path: Path, option: str) -> None:
    """Create a directory if needed; ConfigError naming the option when it cannot be written."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot create the directory ({exc.strerror})") from exc
    if not path.is_dir() or not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path}: not a writable directory")


def results_dir(path: Path) -> Path:
    """A results directory a command reads (--results); DataError in one line when there is
    none at `path`."""
    if not path.is_dir():
        raise DataError(f"{path}: no such results directory" if not path.exists()
                        else f"{path} is a file, not a results directory")
    return path


def ensure_writable_file(path: Path, option: str) -> None:
    """ConfigError naming the option when `path` could not be written (checked up front)."""
    if path.is_dir():
        raise ConfigError(f"{option} {path}: is a directory, expected a file name")
    ensure_writable_dir(path.parent if str(path.parent) else Path("."), option)
    if path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(f"{option} {path}: the file is not writable")


def remove_stale_temps(path: Path) -> None:
    """Delete temporary files of `path` left by runs that were killed (kill -9)."""
    for tmp in path.parent.glob(f".{path.name}.tmp-*"):
        pid = tmp.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            log.info("removing %s, left by an interrupted run", tmp)
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def atomic_write(path: Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file that replaces `path` only if the block finishes without error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    tmp = temp_name(path)
    try:
        with open(tmp, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_csv(path: Path, fieldnames: list[str], rows: Iterable[dict[str, Any]]) -> None:
    """Write rows as CSV with '\\n' line ends, atomically."""
    with atomic_write(path, newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fieldnames, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def open_text(path: Path) -> IO[str]:
    """A CSV or text file opened for reading, gzip-compressed when its name ends in .gz."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", newline="", encoding="utf-8")
    return path.open(newline="", encoding="utf-8")


def write_json(path: Path, data: Any) -> None:
    """Write `data` as indented JSON (one space, as every result file), atomically."""
    with atomic_write(path) as handle:
        json.dump(data, handle, indent=1)


def sha256_file(path: Path, block: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's content."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(block):
            digest.update(chunk)
    return digest.hexdigest()


class ProgressReader:
    """A text stream wrapper that advances a tqdm bar (in MB) by the characters read."""

    def __init__(self, handle: IO[str], bar: tqdm) -> None:
        self._handle = handle
        self._bar = bar

    def read(self, size: int = -1) -> str:
        """Read like the wrapped stream, advancing the bar."""
        text = self._handle.read(size)
        self._bar.update(len(text) / (1 << 20))
        return text

    def __iter__(self) -> Iterator[str]:
        for line in self._handle:
            self._bar.update(len(line) / (1 << 20))
            yield line


def mb_bar(path: Path, desc: str) -> tqdm:
    """A progress bar over a file's size in MB, with ETA."""
    return tqdm(total=path.stat().st_size / (1 << 20), unit="MB", desc=desc, disable=None,
                bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} MB [{elapsed}<{remaining}]")
