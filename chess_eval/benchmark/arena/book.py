"""The opening book: balanced positions after 6-12 plies of real games, where games start.

A deterministic engine rung against a temperature-0 model from the same start would replay
the same game and count it as new evidence; starting from many real openings, each played
with both colours, makes every game a new one. The book is built from Lichess games (CC0):
one position per game at a ply chosen by a hash of the game's id, positions deduplicated,
kept when the engine's eval at a fixed node count is within MAX_CP of equality. The
evaluations run on the Dask cluster; the client writes `data/openings.csv`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import zstandard
from tqdm import tqdm

from chess_eval.benchmark.question.start import Condition, Start
from chess_eval.cluster import ClusterSettings, EngineCluster
from chess_eval.engine import Engine, EngineSettings, score_to_cp
from chess_eval.errors import DataError

log = logging.getLogger(__name__)

FIRST_PLY, LAST_PLY = 6, 12  # the book's positions come after this many plies
MAX_CP = 60  # |eval| at most this, in cp from White's side, to count as balanced
NODES = 200_000  # the fixed node count of the balance check
FIELDS = ["id", "fen", "moves", "ply", "eval_cp", "nodes", "engine", "source", "game"]


@dataclass(frozen=True)
class Opening:
    """One book position and where it came from."""

    id: str  # "book#" and a digest of the position
    fen: str
    moves: tuple[str, ...]  # SAN from the initial position
    source: str  # the PGN file's name
    game: str  # the game's Site URL or id in that file

    def start(self) -> Start:
        """The game start it gives (the standard condition)."""
        return Start(Condition.STANDARD, self.id, self.fen, self.moves)


def _game_id(game: chess.pgn.Game) -> str:
    headers = game.headers
    for tag in ("Site", "GameId", "LichessId"):
        value = headers.get(tag, "")
        if value and value != "?":
            return value
    return hashlib.sha256(str(game.mainline_moves()).encode()).hexdigest()[:16]


def _games(path: Path) -> Iterator[chess.pgn.Game]:
    """Games of a .pgn.zst file; a file that is not one is a DataError naming it."""
    try:
        with open(path, "rb") as raw:
            reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            text = io.TextIOWrapper(reader, encoding="utf-8", errors="replace")
            while (game := chess.pgn.read_game(text)) is not None:
                yield game
    except (OSError, zstandard.ZstdError) as exc:
        raise DataError(f"cannot read games from {path} (a zstd-compressed PGN, .pgn.zst, "
                        f"is expected): {exc}") from exc


def candidates(paths: list[Path], seed: int) -> list[Opening]:
    """One position per standard game from the initial position, at a ply from 6 to 12
    chosen by a hash of the seed and the game's id; the first game of each position kept."""
    found: dict[str, Opening] = {}
    for path in paths:
        for game in _games(path):
            headers = game.headers
            if headers.get("Variant", "Standard") not in ("Standard", "") or "FEN" in headers:
                continue
            ident = _game_id(game)
            digest = hashlib.sha256(f"{seed}:{ident}".encode()).digest()
            ply = FIRST_PLY + digest[0] % (LAST_PLY - FIRST_PLY + 1)
            board, sans = game.board(), list[str]()
            for move in game.mainline_moves():
                if len(sans) == ply:
                    break
                sans.append(board.san(move))
                board.push(move)
            if len(sans) < ply or board.is_game_over():
                continue
            key = board.fen().rsplit(" ", 2)[0]  # the position, not the move counters
            opening_id = "book#" + hashlib.sha256(key.encode()).hexdigest()[:10]
            found.setdefault(key, Opening(opening_id, board.fen(), tuple(sans), path.name,
                                          ident))
    return sorted(found.values(), key=lambda o: hashlib.sha256(
        f"{seed}:{o.game}".encode()).hexdigest())


def white_eval(engine: Engine, fen: str) -> int:
    """The task a worker runs: the position's eval in cp from White's side at NODES."""
    board = chess.Board(fen)
    info = engine.analyse(board, chess.engine.Limit(nodes=NODES), 1)[0]
    return score_to_cp(info["score"].white())


def build(paths: list[Path], size: int, seed: int, settings: EngineSettings,
          cluster: ClusterSettings) -> tuple[list[dict[str, object]], dict[str, int]]:
    """The book's rows (the first `size` balanced candidates) and counts of what was seen."""
    pool = candidates(paths, seed)
    rows: list[dict[str, object]] = []
    counts = {"candidates": len(pool), "evaluated": 0, "unbalanced": 0}
    with EngineCluster(settings, cluster) as engines, \
            tqdm(total=size, unit="opening", desc="book", disable=None) as bar:
        for first in range(0, len(pool), size):
            batch = pool[first:first + size]
            for opening, cp in zip(batch, engines.map(white_eval, [o.fen for o in batch]),
                                   strict=True):
                counts["evaluated"] += 1
                bar.set_postfix_str(f"{counts['evaluated']} evaluated", refresh=False)
                if abs(cp) > MAX_CP:
                    counts["unbalanced"] += 1
                    continue
                rows.append({"id": opening.id, "fen": opening.fen,
                             "moves": " ".join(opening.moves), "ply": len(opening.moves),
                             "eval_cp": cp, "nodes": NODES, "engine": engines.name,
                             "source": opening.source, "game": opening.game})
                bar.update()
                if len(rows) == size:
                    return rows, counts
    return rows, counts


def load_book(path: Path) -> list[Opening]:
    """The committed book's openings, in file order."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise DataError(f"cannot read the opening book {path}: {exc}") from exc
    if not rows or set(FIELDS) - set(rows[0]):
        raise DataError(f"{path} is not an opening book (columns {', '.join(FIELDS)}); "
                        "rebuild it with benchmark.py book")
    return [Opening(r["id"], r["fen"], tuple(r["moves"].split()), r["source"], r["game"])
            for r in rows]
