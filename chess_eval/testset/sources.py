"""Which games of games.pgn came from which source: step 01's byte ranges, read by step 02."""

from __future__ import annotations

import codecs
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import BinaryIO

from chess_eval.errors import DataError
from chess_eval.files import atomic_write

SOURCES_FILE = "games_sources.json"  # beside games.pgn: each source's byte range in it


@dataclass(frozen=True)
class SourceRange:
    """One source's games in games.pgn."""

    name: str  # the source's file name (the last part of its path or URL)
    start: int  # first byte of its games in games.pgn
    end: int  # one past its last byte (the blank lines between sources are outside)


def write_sources(path: Path, ranges: list[SourceRange]) -> None:
    """Write the ranges as JSON (through a temporary name)."""
    with atomic_write(path) as handle:
        json.dump([asdict(r) for r in ranges], handle, indent=2)
        handle.write("\n")


def read_sources(pgn: Path) -> list[SourceRange]:
    """The sources of `pgn` from the sidecar step 01 wrote beside it; without one (a PGN
    not made by step 01), the whole file as one source named after it."""
    size = pgn.stat().st_size
    sidecar = pgn.with_name(SOURCES_FILE)
    if pgn.name != "games.pgn" or not sidecar.is_file():
        return [SourceRange(name=pgn.name, start=0, end=size)]
    try:
        ranges = [SourceRange(**item) for item in json.loads(sidecar.read_text())]
    except (ValueError, TypeError) as exc:
        raise DataError(f"{sidecar} is corrupt ({exc}): run step 01 again "
                        "(python generate.py --only 1 --force)") from exc
    # Step 01 ends every source with two newlines: the last range ends 2 bytes before the end.
    if not ranges or ranges[-1].end + 2 != size:
        raise DataError(f"{sidecar} does not describe {pgn} ({size} bytes): run step 01 again "
                        "(python generate.py --only 1 --force)")
    return ranges


class RangeReader:
    """Text of one byte range of a binary file, read a bounded block at a time; invalid
    UTF-8 is replaced, as step 02 reads a whole file."""

    def __init__(self, handle: BinaryIO, source: SourceRange) -> None:
        self._handle = handle
        self._left = source.end - source.start
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        handle.seek(source.start)

    def read(self, size: int = -1, /) -> str:
        """Up to about `size` characters of the range ('' at its end)."""
        while True:
            want = self._left if size < 0 else min(size, self._left)
            data = self._handle.read(want) if want > 0 else b""
            self._left -= len(data)
            final = not data
            text = self._decoder.decode(data, final=final)
            if text or final:
                return text
