"""Lichess puzzles: the CSV format, the leaf of a puzzle, and the per-leaf lowest-k sample."""

from __future__ import annotations

import csv
import hashlib
import heapq
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import chess

from chess_eval.phase import (
    ENDGAME_MAX_MATERIAL,
    OPENING_MAX_PLY,
    OPENING_MIN_MATERIAL,
    phase,
)
from chess_eval.position import side_name
from chess_eval.puzzledb import HEADER, MOVES_RE, is_mate, motifs
from chess_eval.records import Counter
from chess_eval.testset.tree import Leaf, elo_bucket

PHASE_THEMES = {"opening": "Opening", "middlegame": "Middlegame", "endgame": "Endgame"}
QUIET_THEME = "quietMove"
UCI_RE = re.compile(r"[a-h][1-8][a-h][1-8][qrbn]?")
PLACEMENT_RE = re.compile(r"(?:[pnbrqkPNBRQK1-8]{1,8}/){7}[pnbrqkPNBRQK1-8]{1,8}")


@dataclass(frozen=True)
class Puzzle:
    """A puzzle reduced to what selection needs; `fen` is the position the solver sees."""

    id: str
    fen: str  # after the opponent's first move in `Moves`
    solution: tuple[str, ...]  # the solver's moves and the replies, UCI, from `fen`
    rating: int
    themes: tuple[str, ...]
    game_url: str
    phase: str  # by the board rule (chess_eval/phase.py), like game positions
    type: str
    side: str
    lichess_phase: str  # Lichess's phase theme (opening/middlegame/endgame), '' when none

    @property
    def leaf(self) -> Leaf:
        """(rating bucket, phase, type, side)."""
        return (elo_bucket(self.rating), self.phase, self.type, self.side)

    @property
    def is_mate(self) -> bool:
        """Tagged as a forced mate (mate or mateInN)."""
        return is_mate(self.themes)

    @property
    def motifs(self) -> tuple[str, ...]:
        """Themes that name a tactical motif."""
        return motifs(self.themes)


_VALUE = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9}


def _rank_squares(placement: str, square: str) -> str:
    """The piece letter on a square of a FEN placement, '.' when empty."""
    rank = placement.split("/")[8 - int(square[1])]
    expanded = "".join("." * int(c) if c.isdigit() else c for c in rank)
    return expanded[ord(square[0]) - ord("a")]


def phase_after_first_move(placement: str, turn: str, fullmove: int, first: str) -> str:
    """The board rule's phase of the puzzle position, from the FEN text and the first move.

    The same result as `phase(board, board.ply())` on the board after `first`, without
    building a board: this runs on every row of the database.
    """
    lower = placement.lower()
    material = sum(_VALUE.get(c, 0) for c in lower)
    queens = {"w": placement.count("Q"), "b": placement.count("q")}
    mover, target = _rank_squares(placement, first[:2]), _rank_squares(placement, first[2:4])
    if target != ".":
        material -= _VALUE.get(target.lower(), 0)
        if target.lower() == "q":
            queens["b" if target == "q" else "w"] -= 1
    elif mover.lower() == "p" and first[0] != first[2]:
        material -= 1  # en passant
    if len(first) == 5:
        material += _VALUE[first[4]] - 1
        queens[turn] += first[4] == "q"
    ply = 2 * (fullmove - 1) + (turn == "b") + 1
    if material <= ENDGAME_MAX_MATERIAL:
        return "Endgame"
    if ply <= OPENING_MAX_PLY and all(queens.values()) and material >= OPENING_MIN_MATERIAL:
        return "Opening"
    return "Middlegame"


def quick_leaf(row: list[str]) -> Leaf | None:
    """The leaf of a raw CSV row from its text alone (no board), or None if malformed.

    Side to move is the opposite of the FEN's, since the first move is the opponent's. The
    checks are textual (regular expressions) because this runs on every row of the database;
    rows that fail them go through `parse`, which names the problem.
    """
    if len(row) < len(HEADER) or not row[3].isdigit() or not MOVES_RE.fullmatch(row[2]):
        return None
    fen_fields = row[1].split()
    if (len(fen_fields) != 6 or fen_fields[1] not in ("w", "b") or not fen_fields[5].isdigit()
            or not PLACEMENT_RE.fullmatch(fen_fields[0])):
        return None
    themes = row[7].split()
    side = "Black" if fen_fields[1] == "w" else "White"
    type_name = "Quiet" if QUIET_THEME in themes else "Tactical"
    phase_name = phase_after_first_move(fen_fields[0], fen_fields[1], int(fen_fields[5]),
                                        row[2][:5].strip())
    return (elo_bucket(int(row[3])), phase_name, type_name, side)


def parse(row: list[str]) -> tuple[Puzzle | None, str | None]:
    """(puzzle, None), or (None, drop reason) for a malformed or non-standard row."""
    if len(row) < len(HEADER) or not row[3].isdigit():
        return None, "malformed_row"
    moves = row[2].split()
    if len(moves) < 2 or not all(UCI_RE.fullmatch(m) for m in moves):
        return None, "malformed_moves"
    try:
        board = chess.Board(row[1])
    except ValueError:
        return None, "malformed_fen"
    if board.chess960 or not board.is_valid():
        return None, "non_standard"
    line = board.copy(stack=False)
    for uci in moves:
        try:
            move = chess.Move.from_uci(uci)
        except ValueError:
            return None, "malformed_moves"
        if move not in line.legal_moves:
            return None, "illegal_move"
        line.push(move)
    board.push(chess.Move.from_uci(moves[0]))
    themes = tuple(row[7].split())
    phases = [t for t in themes if t in PHASE_THEMES]
    return Puzzle(
        id=row[0], fen=board.fen(en_passant="legal"), solution=tuple(moves[1:]),
        rating=int(row[3]), themes=themes, game_url=row[8], phase=phase(board, board.ply()),
        type="Quiet" if QUIET_THEME in themes else "Tactical", side=side_name(board.turn),
        lichess_phase=phases[0] if phases else "",
    ), None


def rank_key(seed: int, puzzle_id: str) -> str:
    """The salted hash that orders puzzles within a leaf."""
    return hashlib.sha256(f"puzzle:{seed}:{puzzle_id}".encode()).hexdigest()


def lowest_k(rows: Iterable[list[str]], seed: int, keep: dict[Leaf, int],
             counts: Counter) -> dict[Leaf, list[list[str]]]:
    """Stream rows; keep per leaf the `keep[leaf]` rows of lowest rank_key, in key order.

    Memory is bounded by sum(keep): the whole database never sits in memory.
    """
    heaps: dict[Leaf, list[tuple[str, list[str]]]] = {leaf: [] for leaf in keep}
    for row in rows:
        leaf = quick_leaf(row)
        if leaf is None:
            puzzle, reason = parse(row)
            if puzzle is None:
                counts.add(reason or "malformed_row")
                continue
            leaf = puzzle.leaf
        if keep.get(leaf, 0) <= 0:
            continue
        # Max-heap by key through negated ordering: store the inverted hex string.
        key = rank_key(seed, row[0])
        heap = heaps[leaf]
        item = (_invert(key), row)
        if len(heap) < keep[leaf]:
            heapq.heappush(heap, item)
        elif item[0] > heap[0][0]:
            heapq.heapreplace(heap, item)
    return {leaf: [row for _, row in sorted(heap, reverse=True)] for leaf, heap in heaps.items()}


_INVERT = str.maketrans("0123456789abcdef", "fedcba9876543210")


def _invert(key: str) -> str:
    """A string whose order is the reverse of the hex key's."""
    return key.translate(_INVERT)


def read_rows(handle: Iterable[str]) -> Iterator[list[str]]:
    """Rows of a puzzle CSV after its header."""
    reader = csv.reader(handle)
    next(reader, None)
    yield from reader
