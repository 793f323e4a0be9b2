"""An engine's fingerprint: how it searches, not what it calls itself.

A ladder's rungs are engines at fixed node counts, so a ladder holds only for a build that
searches exactly as the one that measured it. The fingerprint is that search, made cheap:
the move, the score and the nodes searched on a few fixed positions at fixed node limits,
one thread, the project's hash size, a cleared hash. Two builds with the same fingerprint
play the same rungs (npm's "Stockfish 17.1 WASM" and a native 17.1, say); a build with the
name of another but other searches (a custom or mis-compiled one) does not. It is taken
once per engine binary and process (a changed file is taken again).
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import chess
import chess.engine

from chess_eval.engine import Engine, EngineSettings, binary_key, score_to_cp
from chess_eval.errors import DataError, EngineError
from chess_eval.files import atomic_write

VERSION = 1  # of the positions and limits below: a change makes every fingerprint another
# (FEN, node limit): an opening, a middlegame, a tactic with a mate, an endgame.
POSITIONS = (
    (chess.STARTING_FEN, 1_000),
    ("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5", 4_000),
    ("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", 2_000),
    ("8/5pk1/6p1/8/3R4/6P1/5PK1/2r5 w - - 0 40", 4_000),
)


@dataclass(frozen=True)
class Search:
    """One fixed search and what the engine made of it."""

    fen: str
    nodes: int  # the node limit
    move: str  # the best move, UCI
    score: int  # centipawns for the side to move, by the project's mate rule
    searched: int  # nodes the engine reports having searched


@dataclass(frozen=True)
class Fingerprint:
    """The searches of one engine build, and the name it gave."""

    engine: str  # the name the engine reports (information only: the searches decide)
    searches: tuple[Search, ...]
    version: int = VERSION

    def difference(self, other: Fingerprint) -> str | None:
        """The first search on which `other` differs from this one, in words; None when
        every search agrees."""
        if other.version != self.version:
            return f"fingerprints of versions {self.version} and {other.version}"
        for i, (mine, theirs) in enumerate(zip(self.searches, other.searches, strict=True),
                                           start=1):
            if mine != theirs:
                return (f"position {i} ({mine.fen}, {mine.nodes:,} nodes): {self.engine} "
                        f"plays {mine.move} at {mine.score} cp after {mine.searched:,} "
                        f"nodes, {other.engine} plays {theirs.move} at {theirs.score} cp "
                        f"after {theirs.searched:,}")
        return None

    def write(self, path: Path) -> Path:
        """The fingerprint as JSON (a temporary name, renamed)."""
        with atomic_write(path) as handle:
            json.dump({"version": self.version, "engine": self.engine,
                       "searches": [asdict(s) for s in self.searches]}, handle, indent=1)
            handle.write("\n")
        return path


def take(engine: Engine) -> Fingerprint:
    """The fingerprint of a running engine (its hash is cleared before each search)."""
    searches = []
    for fen, nodes in POSITIONS:
        board = chess.Board(fen)
        [info] = engine.analyse(board, chess.engine.Limit(nodes=nodes), 1,
                                info=chess.engine.INFO_ALL)
        if not info.get("pv") or "score" not in info or "nodes" not in info:
            raise EngineError(f"{engine.name} gave no move, score or node count on {fen}")
        searches.append(Search(fen, nodes, info["pv"][0].uci(),
                               score_to_cp(info["score"].relative), int(info["nodes"])))
    return Fingerprint(engine.name, tuple(searches))


def by_depth(engine: Engine, depth: int) -> Fingerprint:
    """The fingerprint of an engine of another family, which may ignore node limits: its
    move at a fixed depth on the same positions (score and nodes are not compared)."""
    searches = []
    for fen, _ in POSITIONS:
        move = engine.play(chess.Board(fen), chess.engine.Limit(depth=depth))
        searches.append(Search(fen, 0, move.uci(), 0, 0))
    return Fingerprint(engine.name, tuple(searches))


def of_settings(settings: EngineSettings) -> Fingerprint:
    """The fingerprint of the engine `settings` start: by nodes for Stockfish, by depth for
    an engine of another family; taken once per process for each binary."""
    if not settings.fingerprint_depth:
        return of_binary(settings.path)
    return _of_settings(settings, *binary_key(settings.path)[1:])


@functools.lru_cache(maxsize=16)
def _of_settings(settings: EngineSettings, mtime_ns: int, size: int) -> Fingerprint:
    with Engine(settings) as engine:
        return by_depth(engine, settings.fingerprint_depth)


def of_binary(path: str) -> Fingerprint:
    """The fingerprint of the engine at `path`, taken once per process for each binary."""
    return _of_binary(*binary_key(path))


@functools.lru_cache(maxsize=16)
def _of_binary(path: str, mtime_ns: int, size: int) -> Fingerprint:
    with Engine(EngineSettings(path)) as engine:
        return take(engine)


def read(path: Path) -> Fingerprint | None:
    """The fingerprint recorded at `path` (None: none was); DataError in one line when the
    file is not one."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Fingerprint(str(data["engine"]),
                           tuple(Search(**s) for s in data["searches"]), int(data["version"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: not an engine fingerprint ({exc})") from exc
