"""One Lichess puzzle played as a whole line, one stateless request per solver move.

The opponent's replies come from the solution. Like Lichess, any checkmating move is right.
A move off the key is also credited, as an `alternative`, when the engine confirms that it
still wins: its winning chances (+-1 scale) are at least WIN_FLOOR (a decisive advantage,
about +300 cp) and within the puzzle generator's uniqueness margin of the key's
(lichess-puzzler keeps a move as the key only when it beats every other move by more than
0.7), so the key was not the only solution there. Both conditions are needed: on deep
puzzles a short search undervalues the key, and the margin alone would then credit moves
that do not win. The line cannot go on from a move the solution does not know, so an
alternative ends the puzzle (credited, counted apart). An illegal answer fails the puzzle;
it is not retried.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import chess
import chess.engine

from chess_eval.benchmark.core.turns import Condition, Side, Start, take_turn
from chess_eval.engine import Engine
from chess_eval.errors import DataError, EngineError
from chess_eval.grading import WIN_K
from chess_eval.kvstore import JsonStore
from chess_eval.puzzledb import LinePuzzle

TEMPLATE = "puzzle@1"  # the game prompt, moves counted from the puzzle's FEN
RULES = "line@1"  # version of the rules above: part of the stored lines' key
ALT_LIMIT = chess.engine.Limit(nodes=200_000)  # the search comparing a move with the key
ALT_MARGIN = 0.7  # lichess-puzzler's margin of the key over the second-best move
WIN_FLOOR = 0.5  # winning chances of a decisive advantage (about +300 cp)


class LineOutcome(StrEnum):
    """How a puzzle line ended."""

    SOLVED = "solved"  # the solution's line, or any mate
    ALTERNATIVE = "alternative"  # a move off the key the engine finds winning and near it
    FAILED = "failed"


SOLVED, ALTERNATIVE, FAILED = LineOutcome.SOLVED, LineOutcome.ALTERNATIVE, LineOutcome.FAILED


class BadPuzzle(DataError):
    """The puzzle's own moves are not legal: it cannot be played."""


@dataclass
class LineResult:
    """How one puzzle went."""

    puzzle: str
    rating: int
    themes: list[str]
    outcome: str  # solved, alternative or failed
    moves: list[str] = field(default_factory=list)  # the solver's moves, UCI
    mates: int = 0  # solver moves that mated off the key
    failed_at: int | None = None  # index of the solver move that failed
    reason: str = ""  # why it failed: wrong move, or the illegal answer's category
    alternative: dict[str, Any] | None = None  # the credited move, the key, their chances
    attempts: list[dict[str, Any]] = field(default_factory=list)
    fen: str = ""  # the puzzle's position, before the opponent's first move (for replay)
    solution: list[str] = field(default_factory=list)  # the puzzle's moves, UCI

    @property
    def solved(self) -> bool:
        """Solved, by the key or a credited alternative."""
        return self.outcome != FAILED

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


def win_chances(score: chess.engine.Score) -> float:
    """lichess-puzzler's winning chances (+-1 scale, unclipped; a mate is +-1)."""
    cp = score.score(mate_score=100_000)
    assert cp is not None
    return 2 / (1 + math.exp(-WIN_K * max(-10_000, min(10_000, cp)))) - 1


def compare(engine: Engine, board: chess.Board, key: chess.Move,
            move: chess.Move) -> tuple[float, float]:
    """Winning chances of the key and of the move, from one search over just those two."""
    infos = engine.analyse(board, ALT_LIMIT, multipv=2, root_moves=[key, move])
    chances = {info["pv"][0]: win_chances(info["score"].relative)
               for info in infos if info.get("pv") and "score" in info}
    if key not in chances or move not in chances:
        raise EngineError(f"the engine did not score both {key} and {move} in {board.fen()}")
    return chances[key], chances[move]


def _legal(board: chess.Board, uci: str, puzzle: LinePuzzle) -> chess.Move:
    move = chess.Move.from_uci(uci)
    if move not in board.legal_moves:
        raise BadPuzzle(f"puzzle {puzzle.id}: its move {uci} is illegal in {board.fen()}")
    return move


def play_line(puzzle: LinePuzzle, side: Side, engine: Engine, cache: JsonStore) -> LineResult:
    """Play the puzzle's whole line (raises GameAborted on an infrastructure failure)."""
    try:
        board = chess.Board(puzzle.fen)
    except ValueError as exc:
        raise BadPuzzle(f"puzzle {puzzle.id}: bad FEN {puzzle.fen!r}") from exc
    first = _legal(board, puzzle.moves[0], puzzle)
    sans = [board.san(first)]
    board.push(first)
    start = Start(Condition.PUZZLE, puzzle.id, puzzle.fen)
    result = LineResult(puzzle.id, puzzle.rating, list(puzzle.themes), SOLVED,
                        fen=puzzle.fen, solution=list(puzzle.moves))
    for step, index in enumerate(range(1, len(puzzle.moves), 2)):
        key = _legal(board, puzzle.moves[index], puzzle)
        move, attempts = take_turn(side, board, sans, start, f"puzzle:{puzzle.id}", cache)
        # Whether an answer came from the cache says how a run went, not how the line did:
        # left out, so a resumed run stores the same line as an undisturbed one.
        result.attempts += [{k: v for k, v in asdict(a).items() if k != "cached"}
                            for a in attempts]
        if move is None:
            last = attempts[-1]
            return _failed(result, step, f"illegal ({last.category}: {last.detail})")
        result.moves.append(move.uci())
        if move != key:
            after = board.copy(stack=False)
            after.push(move)
            if after.is_checkmate():
                result.mates += 1
                return result
            wc_key, wc_move = compare(engine, board, key, move)
            if wc_move < WIN_FLOOR or wc_key - wc_move > ALT_MARGIN:
                return _failed(result, step, "wrong move")
            result.outcome = ALTERNATIVE
            result.alternative = {"move": move.uci(), "key": key.uci(),
                                  "wc_move": round(wc_move, 3), "wc_key": round(wc_key, 3)}
            return result
        sans.append(board.san(key))
        board.push(key)
        if index + 1 < len(puzzle.moves):
            reply = _legal(board, puzzle.moves[index + 1], puzzle)
            sans.append(board.san(reply))
            board.push(reply)
    return result


def _failed(result: LineResult, step: int, reason: str) -> LineResult:
    result.outcome, result.failed_at, result.reason = FAILED, step, reason
    return result
