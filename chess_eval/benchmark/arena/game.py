"""One game between two players: starts, turns (core.turns), termination, adjudication.

The adjudication rule is one (`adjudicate`), on the judge's eval of every position: a search of
the rule's nodes on a cleared hash. The rule has versions (`Adjudication`, `RULES`) that differ
only in those nodes: version 1 (20,000, every committed ladder) and version 2 (5,000, the
default of a new ladder: a quarter of the confirmations' cost). Every ladder, games-file row
and play run records its version, and a ladder's games are played and judged by its own.
Two judges apply a rule. `FullJudge` searches every position so
(play keeps every eval: the model's cp losses are graded by it). `ScreenedJudge`, for engine-only
games (calibration), first looks at each position with a cheap search and runs the full search
only on the positions of a window in which the rule could fire; `bench/judge_replay.py` replays
committed games under both and counts the results that differ.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from functools import partial
from typing import Any, Protocol

import chess
import chess.engine
import chess.pgn

from chess_eval.benchmark.core.turns import Condition, Side, Start, take_turn
from chess_eval.benchmark.model import cost
from chess_eval.benchmark.model.cost import Price
from chess_eval.benchmark.question.answers import ILLEGAL_CATEGORIES, Category
from chess_eval.benchmark.question.questions import Question
from chess_eval.engine import MATE_CP, Engine, cp_to_score, score_to_cp
from chess_eval.errors import DataError
from chess_eval.grading import CP_LOSS_CAP
from chess_eval.kvstore import Store

STANDARD_960 = 518  # Chess960 position number of the standard start, never drawn


@dataclass(frozen=True)
class Adjudication:
    """One version of the adjudication rule: the judge's full search, everything else equal."""

    version: int  # recorded by every ladder, calibration game and play run
    nodes: int  # the judge's search of a position, on a cleared hash

    @property
    def limit(self) -> chess.engine.Limit:
        """The judge's search."""
        return chess.engine.Limit(nodes=self.nodes)

    @property
    def name(self) -> str:
        """The version as results record it: 'adjudication@2'."""
        return f"adjudication@{self.version}"


# Version 2 searches a quarter of version 1's nodes: on replayed committed games it changed
# few results (bench/judge_replay.py --adjudication 2; docs/games-and-ladder.md).
RULES = {1: Adjudication(1, 20_000), 2: Adjudication(2, 5_000)}
RULE = RULES[1]  # the rule of every committed ladder and of a file without the column
NEW_LADDER_RULE = RULES[2]  # the rule a new ladder is calibrated under unless told
DECISIVE_CP = 1000  # an eval this far from zero for DECISIVE_PLIES plies in a row wins
DECISIVE_PLIES = 8
DEAD_DRAW_CP = 5  # an eval this close to zero for DEAD_DRAW_PLIES plies in a row draws
DEAD_DRAW_PLIES = 20
DEAD_DRAW_FROM = 120  # ... but only from this ply on
PLY_CAP = 300
# The screened judge's cheap look: a search of SCREEN nodes that keeps the judge's hash within
# a game. A look more than SCREEN_MARGIN_CP short of the decisive threshold (or more than
# SCREEN_DRAW_CP from zero) fails the rule without a full search; every position that may
# pass is searched in full. The margins come from the looks' misses against the full search
# in replayed committed games (bench/judge_replay.py).
SCREEN = chess.engine.Limit(nodes=1_000)
SCREEN_MARGIN_CP = 700
SCREEN_DRAW_CP = 100


class Ending(StrEnum):
    """How a game ended when the rules (python-chess's Termination) did not end it."""

    DECISIVE = "adjudication: decisive"  # the judge's eval far from zero for several plies
    DEAD_DRAW = "adjudication: dead draw"  # the judge's eval near zero for many plies
    PLY_CAP = "ply cap"  # the game reached the ply cap: drawn
    # A side gave no legal move after its retries, named by what its answers were.
    FORFEIT_ILLEGAL = "forfeit: illegal answers"  # every answer an illegal move
    FORFEIT_TRUNCATED = "forfeit: truncated answers"  # every reply cut by the token limit
    FORFEIT_EMPTY = "forfeit: empty answers"  # every reply empty or withheld by a filter
    FORFEIT_MIXED = "forfeit: no legal move"  # failed answers of more than one kind
    FORFEIT_NO_MOVE = "forfeit: no move"  # tools: a turn that never called make_move in time


def forfeit_ending(categories: Sequence[str | None]) -> Ending:
    """How a forfeit is named: by what every failed answer was (illegal, truncated or empty),
    or "no legal move" when they differ."""
    if categories and categories[-1] == Category.NO_MOVE:
        return Ending.FORFEIT_NO_MOVE
    if all(c in ILLEGAL_CATEGORIES for c in categories):
        return Ending.FORFEIT_ILLEGAL
    kinds = set(categories)
    if kinds == {Category.TRUNCATED}:
        return Ending.FORFEIT_TRUNCATED
    if kinds == {Category.EMPTY}:
        return Ending.FORFEIT_EMPTY
    return Ending.FORFEIT_MIXED


WHITE_SCORE = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}  # a result as White's score


def side_score(record: GameRecord, white: bool) -> float:
    """The score of the side that played White (`white`) or Black in a finished game."""
    score = WHITE_SCORE[record.result]
    return score if white else 1 - score


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
    best: list[str] = field(default_factory=list)  # the judge's best move (UCI) there
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


def terminal_eval(board: chess.Board) -> int | None:
    """The eval of a position the rules have ended (mate, or 0 for a drawn end), else None."""
    if board.is_checkmate():  # the side to move is mated
        return -MATE_CP if board.turn == chess.WHITE else MATE_CP
    if board.is_game_over(claim_draw=False):
        return 0
    return None


def rule_of(version: int) -> Adjudication:
    """The rule of a recorded version; one line naming the versions there are."""
    if version not in RULES:
        raise DataError(f"unknown adjudication rule version {version} (known: "
                        f"{', '.join(map(str, RULES))})")
    return RULES[version]


def judge(engine: Engine, board: chess.Board, rule: Adjudication = RULE) -> int:
    """The judge's eval for White, in cp by the project's mate rule: the rule's nodes on a
    cleared hash."""
    return judge_line(engine, board, rule)[0]


def judge_line(engine: Engine, board: chess.Board,
               rule: Adjudication = RULE) -> tuple[int, str]:
    """The judge's eval for White (as `judge`) and its best move (UCI; "" where the rules
    have ended the game), from the one search."""
    exact = terminal_eval(board)
    if exact is not None:
        return exact, ""
    info = engine.analyse(board, rule.limit, multipv=1,
                          info=chess.engine.INFO_SCORE | chess.engine.INFO_PV)[0]
    pv = info.get("pv") or []
    return score_to_cp(info["score"].white()), pv[0].uci() if pv else ""


def winning(cp: int, sign: int) -> bool:
    """The rule's test of one eval for a decisive win: White's (sign 1) or Black's (-1)."""
    return sign * cp >= DECISIVE_CP


def level(cp: int) -> bool:
    """The rule's test of one eval for a dead draw."""
    return abs(cp) <= DEAD_DRAW_CP


SIDES = ((1, "1-0"), (-1, "0-1"))  # a decisive adjudication's sign and result


def adjudicate(evals: list[int], ply: int) -> tuple[str, str] | None:
    """(result, termination) when the judge's evals settle the game."""
    recent = evals[-DECISIVE_PLIES:]
    if len(recent) == DECISIVE_PLIES:
        for sign, result in SIDES:
            if all(winning(e, sign) for e in recent):
                return result, Ending.DECISIVE
    recent = evals[-DEAD_DRAW_PLIES:]
    if ply >= DEAD_DRAW_FROM and len(recent) == DEAD_DRAW_PLIES and all(
            level(e) for e in recent):
        return "1/2-1/2", Ending.DEAD_DRAW
    return None


class Judge(Protocol):
    """Looks at every position of a game and says when the adjudication rule ends it."""

    evals: list[int]  # the eval of every position, where the judge keeps them
    best: list[str]  # the best move of every position, where the judge keeps them
    searches: int  # full searches run

    def look(self, board: chess.Board) -> None:
        """Take the position after the start or after a ply."""
        ...

    def verdict(self, ply: int) -> tuple[str, str] | None:
        """(result, termination) when the rule ends the game after `ply` plies."""
        ...


class FullJudge:
    """The rule's own judge: the rule's nodes on a cleared hash after every ply, every eval
    kept (play grades the model's moves by them)."""

    def __init__(self, engine: Engine, rule: Adjudication = RULE) -> None:
        self.engine, self.rule = engine, rule
        self.evals: list[int] = []
        self.best: list[str] = []  # the search's best move ("" for an ended game's)
        self.searches = 0  # full searches run

    def look(self, board: chess.Board) -> None:
        """The position's eval and best move."""
        cp, best = judge_line(self.engine, board, self.rule)
        self.evals.append(cp)
        self.best.append(best)
        self.searches += 1

    def verdict(self, ply: int) -> tuple[str, str] | None:
        """The rule on every eval so far."""
        return adjudicate(self.evals, ply)


class ScreenedJudge:
    """The same rule with the full search only where it can matter.

    Every position gets a cheap look (SCREEN nodes; the hash is cleared before the game's
    first search and kept after, so a look depends on the game alone). The rule needs a window
    of DECISIVE_PLIES evals beyond +-DECISIVE_CP (or DEAD_DRAW_PLIES near zero): only when
    every look of the window is within the margin of that are the window's positions
    searched as FullJudge searches them, each at most once, stopping at the first that
    fails. Every adjudication is so confirmed by the full search, as the rule says; a look
    short by more than the margin can only delay one. It must run inside `Engine.run` on
    its engine, so that an engine that dies has the whole game redone and the looks stay
    reproducible.
    """

    def __init__(self, engine: Engine, rule: Adjudication = RULE) -> None:
        self.engine, self.rule = engine, rule
        self.evals: list[int] = []  # not kept: only the rule's outcome is
        self.best: list[str] = []  # not kept either
        self.screen: list[int] = []  # the cheap look at every position, cp for White
        self._boards: dict[int, chess.Board] = {}  # positions a full search may need
        self._full: dict[int, int] = {}  # full searches run, by position
        self.searches = 0  # full searches run
        self._looked = False  # a cheap look has searched: the hash is the game's own

    def look(self, board: chess.Board) -> None:
        """The cheap look; the position is kept when it is near a threshold."""
        index = len(self.screen)
        exact = terminal_eval(board)
        if exact is not None:
            self.screen.append(exact)
            self._full[index] = exact
            return
        info = self.engine.analyse(board, SCREEN, multipv=1, new_game=not self._looked,
                                   info=chess.engine.INFO_SCORE)[0]
        self._looked = True
        cp = score_to_cp(info["score"].white())
        self.screen.append(cp)
        if abs(cp) >= DECISIVE_CP - SCREEN_MARGIN_CP or abs(cp) <= DEAD_DRAW_CP + SCREEN_DRAW_CP:
            self._boards[index] = board.copy()

    def _eval(self, index: int) -> int:
        if index not in self._full:
            self._full[index] = judge(self.engine, self._boards.pop(index), self.rule)
            self.searches += 1
        return self._full[index]

    def _holds(self, window: range, test: Callable[[int], bool], near: Callable[[int], bool],
               weakness: Callable[[int], int]) -> bool:
        """Whether every position of the window passes the rule's `test` on its full eval.
        A look that is not `near` settles it (no). Else every position is searched in full
        (the rule's own eval decides, never a look): the evals already known first (a known
        failure settles it for as long as it stays in the window), then the unknown ones,
        the look least likely to pass first, stopping at the first failure."""
        if not all(near(self.screen[i]) for i in window):
            return False
        if not all(test(self._full[i]) for i in window if i in self._full):
            return False
        unknown = sorted((i for i in window if i not in self._full),
                         key=lambda i: (weakness(self.screen[i]), -i))
        return all(test(self._eval(i)) for i in unknown)

    def verdict(self, ply: int) -> tuple[str, str] | None:
        """The rule, with the full search on the window's positions when the looks allow it."""
        n = len(self.screen)
        if n >= DECISIVE_PLIES:
            for sign, result in SIDES:
                if self._holds(range(n - DECISIVE_PLIES, n), partial(winning, sign=sign),
                               partial(_winning_within, side=sign, margin=SCREEN_MARGIN_CP),
                               partial(_for_side, side=sign)):
                    return result, Ending.DECISIVE
        if ply >= DEAD_DRAW_FROM and n >= DEAD_DRAW_PLIES and self._holds(
                range(n - DEAD_DRAW_PLIES, n), level,
                lambda cp: abs(cp) <= DEAD_DRAW_CP + SCREEN_DRAW_CP, lambda cp: -abs(cp)):
            return "1/2-1/2", Ending.DEAD_DRAW
        return None


def _winning_within(cp: int, side: int, margin: int) -> bool:
    """A look that may still be winning for `side` once the full search refines it."""
    return winning(cp + side * margin, side)


def _for_side(cp: int, side: int) -> int:
    """An eval from `side`'s point of view (the screen searches the likeliest failure first)."""
    return side * cp


def play_game(key: str, white: Side, black: Side, start: Start, judge: Judge,
              cache: Store, ply_cap: int = PLY_CAP,
              on_ply: Callable[[], None] | None = None) -> GameRecord:
    """Play one game to its end (raises GameAborted on an infrastructure failure)."""
    board = start.board()
    board.chess960 = start.chess960
    record = GameRecord(key, white.player.id, black.player.id, asdict(start))
    record.evals, record.best = judge.evals, judge.best
    judge.look(board)
    while True:
        end = rule_end(board) or judge.verdict(len(record.moves))
        if end is None and len(record.moves) >= ply_cap:
            end = ("1/2-1/2", Ending.PLY_CAP)
        if end is not None:
            record.result, record.termination = end
            return record
        side = white if board.turn == chess.WHITE else black
        colour = "white" if board.turn else "black"
        earlier = [a for a in record.attempts if a["side"] == colour]
        move, attempts = take_turn(side, board, record.sans, start, key, cache, earlier)
        record.attempts.extend(asdict(a) | {"side": colour} for a in attempts)
        if move is None:
            last = attempts[-1]
            record.result = "0-1" if board.turn == chess.WHITE else "1-0"
            record.termination = forfeit_ending([a.category for a in attempts])
            what = record.termination.removeprefix("forfeit: ")
            record.forfeit = (f"{len(attempts)} {what} in a row; last {last.category}: "
                              f"{last.detail}")
            return record
        record.sans.append(board.san(move))
        record.moves.append(move.uci())
        board.push(move)
        judge.look(board)
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
    s = record.start
    start = Start(Condition(s["condition"]), s["label"], s["fen"], tuple(s.get("history", ())),
                  bool(s.get("chess960", False)))
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
    nodes = [node]
    for ply, uci in enumerate(record.moves):
        node = node.add_variation(chess.Move.from_uci(uci))
        nodes.append(node)
        if ply in illegal:
            node.comment = "; ".join(illegal[ply])
    if record.forfeit:
        tries = "; ".join(illegal.get(len(record.moves), []))
        node.comment = (node.comment + " " if node.comment else "") + \
            f"forfeit: {record.forfeit}" + (f" ({tries})" if tries else "")
    # The judge's eval of every position, as Lichess writes them ([%eval 0.35], [%eval #-3]):
    # the start's on the game, each move's on the position it left. Games whose judge kept
    # no evals (calibration's screened judge) have none.
    if len(record.evals) == len(nodes):
        for at, cp in zip(nodes, record.evals, strict=True):
            at.set_eval(chess.engine.PovScore(cp_to_score(cp), chess.WHITE))
    # The judge's best move in each position before a move, as a variation beside the
    # move played (none where that was the best); the JudgeBest tag says they are there.
    if len(record.best) == len(nodes):
        game.headers["JudgeBest"] = "variations"
        for at, uci in zip(nodes, record.best, strict=False):
            if uci and at.variations and at.variations[0].move.uci() != uci:
                at.add_variation(chess.Move.from_uci(uci))
    return str(game)


def side_usage(games: Iterable[tuple[GameRecord, bool]], price: Price | None) -> dict[str, Any]:
    """Tokens, requests, tool calls and cost of one side's answers over finished games (each
    with whether that side had White; cached answers included), in all, per move and per
    game."""
    played = list(games)
    attempts = [a for record, white in played for a in record.attempts
                if a["side"] == ("white" if white else "black")]
    moves = sum(a["move"] is not None for a in attempts)
    return cost.summary(attempts, price, moves, len(played))
