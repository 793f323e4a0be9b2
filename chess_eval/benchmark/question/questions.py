"""questions.csv in: every row checked before the first request, then filtered and sampled;
a bad row is one line naming the file, the row, its line and the column (so no question is
asked of a set that cannot be scored to the end)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess

from chess_eval.errors import DataError


@dataclass(frozen=True)
class Question:
    """One row of questions.csv, as the benchmark needs it."""

    id: str
    fen: str
    expected: dict[str, int]  # uci -> cp, side to move
    source: str
    elo_bucket: str
    phase: str
    type: str
    color: str
    history: str  # games: SAN moves from the start
    played_move: str  # games: the human's move
    played_elo: float | None  # games: the Elo of the human who moved
    rating: int | None  # puzzles: Lichess puzzle rating
    solution: str
    themes: str
    private: bool
    chess960: bool = False  # a Chess960 position (castling as king takes rook in UCI)
    root: str = ""  # games: the FEN the game started from, when `moves` lead here
    moves: tuple[str, ...] = ()  # games: UCI moves from `root`, so an engine sees repetitions
    # A game's board as it stands, when the question comes from a game in play: board() copies
    # it instead of replaying `moves` (a replay per ply costs a game quadratic time).
    position: chess.Board | None = field(default=None, compare=False, repr=False)

    def board(self) -> chess.Board:
        """The position, with the game's moves that led to it when they are known."""
        if self.position is not None:
            return self.position.copy()
        if not self.moves:
            return chess.Board(self.fen, chess960=self.chess960)
        board = chess.Board(self.root, chess960=self.chess960)
        for uci in self.moves:
            board.push_uci(uci)
        return board

REQUIRED = ("prompt", "expected_output", "private", "id", "source")
SOURCES = ("game", "puzzle")


class _Bad(ValueError):
    """A cell that cannot be read: the column and the problem."""

    def __init__(self, column: str, problem: str) -> None:
        super().__init__(f"column {column}: {problem}")


def _cell(row: dict[str, str], column: str, convert: Callable[[str], Any]) -> Any:
    text = row.get(column) or ""
    try:
        return convert(text)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise _Bad(column, f"{text[:40]!r}: {exc}") from exc


def _board(fen: str) -> chess.Board:
    board = chess.Board(fen)
    if not board.is_valid():
        raise ValueError("not a legal position")
    if not any(board.legal_moves):
        raise ValueError("no legal move")
    return board


def _expected(text: str, board: chess.Board) -> dict[str, int]:
    value = json.loads(text)
    if not isinstance(value, list) or not value:
        raise ValueError("not a non-empty JSON list of [move, cp]")
    out: dict[str, int] = {}
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
                and isinstance(pair[1], int) and not isinstance(pair[1], bool)):
            raise ValueError(f"{pair!r} is not [move, integer cp]")
        out[pair[0]] = pair[1]
    legal = {m.uci() for m in board.legal_moves}
    if set(out) != legal:
        wrong = sorted(set(out) ^ legal)[:3]
        raise ValueError(f"moves differ from the position's legal moves: {wrong}")
    return out


def _one_of(text: str, options: dict[str, Any]) -> Any:
    if text not in options:
        raise ValueError(f"expected one of {sorted(options)}")
    return options[text]


def _optional_number(text: str, kind: type) -> Any:
    if not text:
        return None
    value = kind(text)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value or None


def _legal_uci(text: str, board: chess.Board) -> str:
    if text and chess.Move.from_uci(text.split()[0]) not in board.legal_moves:
        raise ValueError("not a legal move here")
    return text


def question_of(row: dict[str, str]) -> Question:
    """One checked row of questions.csv; raises ValueError naming the column."""
    board = _cell(row, "prompt", _board)
    source = _cell(row, "source", lambda s: _one_of(s, {k: k for k in SOURCES}))
    private = _cell(row, "private", lambda s: _one_of(s, {"true": True, "false": False}))
    qid = _cell(row, "id", lambda s: s if s.strip() else _one_of(s, {"an id": 0}))
    return Question(
        id=qid, fen=row["prompt"], source=source, private=private,
        expected=_cell(row, "expected_output", lambda s: _expected(s, board)),
        elo_bucket=row.get("elo_bucket") or "", phase=row.get("phase") or "",
        type=row.get("type") or "", color=row.get("color") or "",
        history=row.get("history") or "",
        played_move=_cell(row, "played_move", lambda s: _legal_uci(s, board)),
        played_elo=_cell(row, "played_elo", lambda s: _optional_number(s, float)),
        rating=_cell(row, "rating", lambda s: _optional_number(s, int)),
        solution=_cell(row, "solution", lambda s: _legal_uci(s, board)),
        themes=row.get("themes") or "")


def _text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}: line {line}: not UTF-8 (byte {exc.start}: "
                        f"{data[exc.start:exc.start + 1]!r})") from exc


def load_questions(path: Path) -> list[Question]:
    """Every question of questions.csv, checked; one clear error for the first bad row."""
    if not path.is_file():
        raise DataError(f"{path} does not exist (build it with python generate.py)")
    reader = csv.DictReader(io.StringIO(_text(path), newline=""))
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(f"{path} lacks column(s) {missing}: is it a questions.csv?")
    out: list[Question] = []
    seen: set[str] = set()
    try:
        for number, row in enumerate(reader, 1):
            where = f"{path}: row {number} (line {reader.line_num})"
            if None in row or None in row.values():
                raise DataError(f"{where}: {len(reader.fieldnames or [])} columns expected")
            try:
                question = question_of(row)
            except ValueError as exc:
                raise DataError(f"{where}, {exc}") from exc
            if question.id in seen:
                raise DataError(f"{where}, column id: {question.id} appears twice")
            seen.add(question.id)
            out.append(question)
    except csv.Error as exc:
        raise DataError(f"{path}: line {reader.line_num}: {exc}") from exc
    if not out:
        raise DataError(f"{path} holds no question")
    return out


def select(questions: list[Question], split: str, filters: list[str], limit: int | None,
           seed: int) -> list[Question]:
    """Questions of a split matching every key=value filter; with `limit`, a seeded random
    sample of that many (by a salted hash of the id, so it is the same on every run)."""
    chosen = [q for q in questions
              if split == "all" or (split == "private") == q.private]
    for text in filters:
        key, eq, value = text.partition("=")
        if not eq or key not in Question.__dataclass_fields__:
            raise DataError(f"bad --filter {text!r}: use key=value with a questions.csv column")
        chosen = [q for q in chosen if str(getattr(q, key)) == value]
    if limit is not None and limit < len(chosen):
        rank = sorted(chosen, key=lambda q: hashlib.sha256(f"{seed}:{q.id}".encode()).digest())
        chosen = rank[:limit]
    return chosen
