"""One game between two players: starts, turns (core.turns), termination, adjudication."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import chess
import chess.engine
import chess.pgn

from lib.benchmark.core.answers import ILLEGAL_CATEGORIES, Category
from lib.benchmark.core.prompts import Question
from lib.benchmark.core.turns import Condition, Side, Start, take_turn
from lib.engine import MATE_CP, Engine, score_to_cp
from lib.grading import CP_LOSS_CAP
from lib.kvstore import Store

STANDARD_960 = 518  # Chess960 position number of the standard start, never drawn
ADJUDICATE = chess.engine.Limit(nodes=20_000)  # the judge's search after every ply
DECISIVE_CP = 1000  # an eval this far from zero for DECISIVE_PLIES plies in a row wins
DECISIVE_PLIES = 8
DEAD_DRAW_CP = 5  # an eval this close to zero for DEAD_DRAW_PLIES plies in a row draws
DEAD_DRAW_PLIES = 20
DEAD_DRAW_FROM = 120  # ... but only from this ply on
PLY_CAP = 300


class Ending(StrEnum):
    """How a game ended when the rules (python-chess's Termination) did not end it."""

    DECISIVE = "adjudication: decisive"  # the judge's eval far from zero for several plies
    DEAD_DRAW = "adjudication: dead draw"  # the judge's eval near zero for many plies
    PLY_CAP = "ply cap"  # the game reached the ply cap: drawn
    FORFEIT = "forfeit: illegal moves"  # a side gave no legal move after its retries


WHITE_SCORE = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}  # a result as White's score


def standard_start() -> Start:
    """The initial position."""
    return Start(Condition.STANDARD, "standard", chess.STARTING_FEN)


def chess960_start(seed: int, index: int) -> Start:
    """A seeded Chess960 start, never the standard one (position 518)."""
    number = random.Random(f"960:{seed}:{index}").randrange(959)
    number += number >= STANDARD_960
    board = chess.Board.from_chess960_pos(number)
    return Start(Condition.CHESS960, f"960#{number}", board.fen(), chess960=True)


def midgame_starts(questions: list[Question], seed: int) -> list[Start]:
    """Mid-game starts from the questions' game positions, in a seeded order."""
    starts = [Start(Condition.MIDGAME, q.id, q.fen, tuple(q.history.split()))
              for q in questions if q.source == "game"]
    random.Random(f"mid:{seed}").shuffle(starts)
    return starts


@dataclass
class GameRecord:
    """A finished game, as stored and reported."""

    key: str
    white: str
    black: str
    start: dict[str, Any]
    moves: list[str] = field(default_factory=list)  # UCI
    sans: list[str] = field(default_factory=list)
    evals: list[int] = field(default_factory=list)  # judge's cp for White, before each ply+1
    result: str = "*"
    termination: str = ""
    forfeit: str | None = None  # why a player forfeited
    attempts: list[dict[str, Any]] = field(default_factory=list)  # every reply

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return asdict(self)


def termination_text(termination: chess.Termination) -> str:
    """python-chess's termination as games store it: 'checkmate', 'threefold repetition'."""
    return termination.name.lower().replace("_", " ")


def rule_end(board: chess.Board) -> tuple[str, str] | None:
    """(result, termination) when the rules end the game; threefold is claimed at once."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return outcome.result(), termination_text(outcome.termination)
    if board.is_repetition(3):
        return "1/2-1/2", termination_text(chess.Termination.THREEFOLD_REPETITION)
    return None


def judge(engine: Engine, board: chess.Board) -> int:
    """The judge's eval for White, in cp by the project's mate rule."""
    if board.is_checkmate():  # the side to move is mated
        return -MATE_CP if board.turn == chess.WHITE else MATE_CP
    if board.is_game_over(claim_draw=False):
        return 0
    info = engine.analyse(board, ADJUDICATE, multipv=1)[0]
    return score_to_cp(info["score"].white())


def adjudicate(evals: list[int], ply: int) -> tuple[str, str] | None:
    """(result, termination) when the judge's evals settle the game."""
    recent = evals[-DECISIVE_PLIES:]
    if len(recent) == DECISIVE_PLIES:
        if all(e >= DECISIVE_CP for e in recent):
            return "1-0", Ending.DECISIVE
        if all(e <= -DECISIVE_CP for e in recent):
            return "0-1", Ending.DECISIVE
    recent = evals[-DEAD_DRAW_PLIES:]
    if ply >= DEAD_DRAW_FROM and len(recent) == DEAD_DRAW_PLIES and all(
            abs(e) <= DEAD_DRAW_CP for e in recent):
        return "1/2-1/2", Ending.DEAD_DRAW
    return None


def play_game(key: str, white: Side, black: Side, start: Start, judge_engine: Engine,
              cache: Store, ply_cap: int = PLY_CAP,
              on_ply: Callable[[], None] | None = None) -> GameRecord:
    """Play one game to its end (raises GameAborted on an infrastructure failure)."""
    board = start.board()
    board.chess960 = start.chess960
    record = GameRecord(key, white.player.id, black.player.id, asdict(start))
    record.evals.append(judge(judge_engine, board))
    while True:
        end = rule_end(board) or adjudicate(record.evals, len(record.moves))
        if end is None and len(record.moves) >= ply_cap:
            end = ("1/2-1/2", Ending.PLY_CAP)
        if end is not None:
            record.result, record.termination = end
            return record
        side = white if board.turn == chess.WHITE else black
        move, attempts = take_turn(side, board, record.sans, start, key, cache)
        record.attempts.extend(asdict(a) | {"side": "white" if board.turn else "black"}
                               for a in attempts)
        if move is None:
            last = attempts[-1]
            record.result = "0-1" if board.turn == chess.WHITE else "1-0"
            record.termination = Ending.FORFEIT
            what = ("illegal answers" if all(a.category in ILLEGAL_CATEGORIES for a in attempts)
                    else "answers without a legal move")  # truncated or empty among them
            record.forfeit = (f"{len(attempts)} {what} in a row; last {last.category}: "
                              f"{last.detail}")
            return record
        record.sans.append(board.san(move))
        record.moves.append(move.uci())
        board.push(move)
        record.evals.append(judge(judge_engine, board))
        if on_ply is not None:
            on_ply()


def cp_losses(record: GameRecord, white: bool) -> list[int]:
    """The judge's cp loss of every move one side made (capped as in static grading)."""
    losses = []
    first_white = chess.Board(record.start["fen"]).turn == chess.WHITE
    for i in range(len(record.moves)):
        mover_white = (i % 2 == 0) == first_white
        if mover_white != white:
            continue
        sign = 1 if white else -1
        loss = sign * (record.evals[i] - record.evals[i + 1])
        losses.append(min(max(loss, 0), CP_LOSS_CAP))
    return losses


def pgn(record: GameRecord, headers: dict[str, str]) -> str:
    """The game as PGN: players, rung Elo, result, termination; illegal tries as comments."""
    start = Start(**{k: (tuple(v) if k == "history" else v) for k, v in record.start.items()})
    game = chess.pgn.Game()
    board = chess.Board(start.fen, chess960=start.chess960)
    if start.fen != chess.STARTING_FEN:  # a book opening, a Chess960 or mid-game start
        game.setup(board)
    if start.chess960:
        game.headers["Variant"] = "Chess960"
    game.headers.update({"Event": "chess-eval play", "Site": "local", "White": record.white,
                         "Black": record.black, "Result": record.result,
                         "Termination": record.termination, **headers})
    if start.history:
        game.comment = "starts after " + " ".join(start.history)
    illegal: dict[int, list[str]] = {}
    for a in record.attempts:
        if a["category"] is not None:
            kind = "illegal" if a["category"] in ILLEGAL_CATEGORIES else "failed"
            hint = "; raise --max-tokens" if a["category"] == Category.TRUNCATED else ""
            illegal.setdefault(a["ply"], []).append(
                f"before this move, {kind} try {a['text'] or a['answer'][:40]!r}: "
                f"{a['category']}{hint}")
    node: chess.pgn.GameNode = game
    for ply, uci in enumerate(record.moves):
        node = node.add_variation(chess.Move.from_uci(uci))
        if ply in illegal:
            node.comment = "; ".join(illegal[ply])
    if record.forfeit:
        tries = "; ".join(illegal.get(len(record.moves), []))
        node.comment = (node.comment + " " if node.comment else "") + \
            f"forfeit: {record.forfeit}" + (f" ({tries})" if tries else "")
    return str(game)
