"""The Lichess puzzle database's CSV format, and reading it whole (.csv or .csv.zst)."""

from __future__ import annotations

import csv
import io
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import zstandard

from chess_eval.errors import DataError

# The official header of lichess_db_puzzle.csv; releases may append columns (e.g. SortKey).
HEADER = ("PuzzleId", "FEN", "Moves", "Rating", "RatingDeviation", "Popularity", "NbPlays",
          "Themes", "GameUrl", "OpeningTags")
MOVES_RE = re.compile(r"(?:[a-h][1-8][a-h][1-8][qrbn]? )+[a-h][1-8][a-h][1-8][qrbn]?")
# Themes that describe length, phase, evaluation or origin rather than a tactical motif;
# the motif cap ignores them.
NON_MOTIF_THEMES = frozenset({
    "opening", "middlegame", "endgame", "short", "long", "veryLong", "oneMove", "mate",
    "mateIn1", "mateIn2", "mateIn3", "mateIn4", "mateIn5", "advantage", "crushing",
    "equality", "master", "masterVsMaster", "superGM", "quietMove", "defensiveMove",
    "kingsideAttack", "queensideAttack", "pawnEndgame", "rookEndgame", "bishopEndgame",
    "knightEndgame", "queenEndgame", "queenRookEndgame",
})


def header_problem(header: list[str]) -> str | None:
    """Why a CSV header is not the puzzle database's, or None when it is."""
    if tuple(header[: len(HEADER)]) != HEADER:
        return f"expected columns {','.join(HEADER)}, got {','.join(header[:12])}"
    return None


def is_mate(themes: Iterable[str]) -> bool:
    """The themes tag a forced mate (mate or mateInN)."""
    return any(t == "mate" or t.startswith("mateIn") for t in themes)


def motifs(themes: Iterable[str]) -> tuple[str, ...]:
    """The themes that name a tactical motif."""
    return tuple(t for t in themes if t not in NON_MOTIF_THEMES)


@dataclass(frozen=True)
class LinePuzzle:
    """A puzzle as the database gives it: `fen` is before the opponent's first move."""

    id: str
    fen: str
    moves: tuple[str, ...]  # UCI: the opponent's move, then solver and opponent in turn
    rating: int
    themes: tuple[str, ...]

    @property
    def motifs(self) -> tuple[str, ...]:
        """Themes that name a tactical motif."""
        return motifs(self.themes)


def _lines(path: Path) -> Iterator[str]:
    with open(path, "rb") as raw:
        if path.name.endswith(".zst"):
            stream = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            yield from io.TextIOWrapper(stream, encoding="utf-8", newline="")
        else:
            yield from io.TextIOWrapper(raw, encoding="utf-8", newline="")


def well_formed(row: list[str]) -> bool:
    """The row has the database's columns, a numeric rating, UCI moves and a whole FEN."""
    return (len(row) >= len(HEADER) and row[3].isdigit() and bool(MOVES_RE.fullmatch(row[2]))
            and len(row[1].split()) == 6)


def _reader(path: Path) -> tuple[list[str], Iterator[list[str]]]:
    """The header of a puzzle CSV, checked, and a reader of its rows."""
    rows = csv.reader(_lines(path))
    header = next(rows, None)
    if header is None or (problem := header_problem(header)):
        raise DataError(f"{path}: not a Lichess puzzle CSV "
                        f"({problem if header else 'empty'})")
    return header, rows


def read_rows(path: Path) -> tuple[list[str], list[list[str]], int]:
    """A puzzle CSV's header and its well-formed rows verbatim, and how many were malformed."""
    try:
        header, rows = _reader(path)
        good, bad = [], 0
        for row in rows:
            if well_formed(row):
                good.append(row)
            else:
                bad += 1
    except (OSError, UnicodeDecodeError, zstandard.ZstdError, csv.Error) as exc:
        raise DataError(f"{path}: cannot read the puzzle file ({exc})") from exc
    return header, good, bad


def read_puzzles(path: Path, keep: int | None = None,
                 seed: int = 0) -> tuple[list[LinePuzzle], int, int]:
    """The well-formed rows of a puzzle CSV (with `keep`, a seeded uniform sample of at most
    that many, so the whole database fits in memory), the rows read and the malformed ones."""
    rng = random.Random(seed)
    try:
        _, rows = _reader(path)
        puzzles: list[LinePuzzle] = []
        good = bad = 0
        for row in rows:
            if not well_formed(row):
                bad += 1
                continue
            good += 1
            # Reservoir sampling: every row has the same chance to be kept.
            slot = len(puzzles) if keep is None or good <= keep else rng.randrange(good)
            if keep is None or slot < keep:
                puzzle = LinePuzzle(row[0], row[1], tuple(row[2].split()), int(row[3]),
                                    tuple(row[7].split()))
                if slot == len(puzzles):
                    puzzles.append(puzzle)
                else:
                    puzzles[slot] = puzzle
    except (OSError, UnicodeDecodeError, zstandard.ZstdError, csv.Error) as exc:
        raise DataError(f"{path}: cannot read the puzzle file ({exc})") from exc
    return puzzles, good + bad, bad
