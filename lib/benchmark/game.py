"""One game between two players: starts, moves with retries, termination, adjudication.

Every move goes through the same door as a static answer: the player's reply is parsed by
`answers.parse` and a reply that is not a legal move is retried with a note saying what was
wrong, up to `retries` times, then the game is forfeited. Replies are cached per (player,
prompt version, game, position, moves so far, attempt), so an interrupted game resumes
without asking twice, and a resumed game replays exactly what was played.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import chess
import chess.engine
import chess.pgn

from lib.benchmark import answers
from lib.benchmark.llm import InfraError, Reply
from lib.benchmark.players import Player
from lib.benchmark.prompts import Question
from lib.engine import MATE_CP, Engine, score_to_cp
from lib.grading import CP_LOSS_CAP
from lib.kvstore import JsonStore

STANDARD_960 = 518  # Chess960 position number of the standard start, never drawn
ADJUDICATE = chess.engine.Limit(nodes=20_000)  # the judge's search after every ply
DECISIVE_CP = 1000  # an eval this far from zero for DECISIVE_PLIES plies in a row wins
DECISIVE_PLIES = 8
DEAD_DRAW_CP = 5  # an eval this close to zero for DEAD_DRAW_PLIES plies in a row draws
DEAD_DRAW_PLIES = 20
DEAD_DRAW_FROM = 120  # ... but only from this ply on
PLY_CAP = 300
WHITE_SCORE = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}  # a result as White's score
RETRIES = 2
GAME_TEMPLATE = "game@1"
GAME_INSTRUCTION = ("Reply with your move in SAN (e.g. Nf3) or UCI (e.g. g1f3), on the last "
                    "line as: Final answer: <move>")  # the last line of every game prompt
ENGINE_TEMPLATE = "engine"  # the cache's prompt version of engine rungs: they read no prompt


class GameAborted(Exception):
    """A move could not be had for infrastructure reasons: the game is not rated."""


@dataclass(frozen=True)
class Start:
    """Where a game begins."""

    condition: str  # standard, chess960 or midgame
    label: str  # the opening's name: standard, 960#N or the question id
    fen: str
    history: tuple[str, ...] = ()  # SAN from the initial position (mid-game starts)
    chess960: bool = False

    def board(self) -> chess.Board:
        """The start position, with the moves that led to it when they are known."""
        if self.history:
            board = chess.Board()
            for san in self.history:
                board.push_san(san)
            if board.fen() == self.fen:
                return board
        return chess.Board(self.fen, chess960=self.chess960)


def standard_start() -> Start:
    """The initial position."""
    return Start("standard", "standard", chess.STARTING_FEN)


def chess960_start(seed: int, index: int) -> Start:
    """A seeded Chess960 start, never the standard one (position 518)."""
    number = random.Random(f"960:{seed}:{index}").randrange(959)
    number += number >= STANDARD_960
    board = chess.Board.from_chess960_pos(number)
    return Start("chess960", f"960#{number}", board.fen(), chess960=True)


def midgame_starts(questions: list[Question], seed: int) -> list[Start]:
    """Mid-game starts from the questions' game positions, in a seeded order."""
    starts = [Start("midgame", q.id, q.fen, tuple(q.history.split()))
              for q in questions if q.source == "game"]
    random.Random(f"mid:{seed}").shuffle(starts)
    return starts


@dataclass
class Attempt:
    """One reply to one move request."""

    ply: int
    attempt: int
    prompt: str
    answer: str
    text: str | None  # the move text the answer committed to
    move: str | None  # UCI, when legal
    category: str | None  # None when legal, else the taxonomy's category
    detail: str
    cached: bool
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cost: float | None = None


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


def game_prompt(board: chess.Board, sans: list[str], start: Start, legal: bool,
                feedback: str | None) -> str:
    """Template game@1: moves so far (SAN), FEN, side to move; optionally the legal moves."""
    side = "White" if board.turn == chess.WHITE else "Black"
    lines = []
    origin = "the initial position"
    if start.chess960:
        lines.append("Chess960 (Fischer random) game; castling is written O-O / O-O-O.")
        origin = f"the start position {start.fen}"
    elif not start.history and start.fen != chess.STARTING_FEN:
        origin = f"the position {start.fen}"  # a puzzle: its line starts from its FEN
    played = list(start.history) + sans
    if played:
        first = chess.Board(chess.STARTING_FEN if start.history else start.fen)
        numbered = _numbered(played, first.fullmove_number, first.turn == chess.BLACK)
        lines.append(f"Moves so far (SAN, from {origin}): {numbered}")
    else:
        lines.append(f"No moves have been played yet from {origin}.")
    lines.append(f"Current position (FEN): {board.fen()}")
    if legal:
        lines.append("Legal moves: " + " ".join(sorted(board.san(m) for m in board.legal_moves)))
    lines.append(f"You play {side}; {side} to move.")
    if feedback:
        lines.append(feedback)
    lines.append(GAME_INSTRUCTION)
    return "\n".join(lines)


def _numbered(sans: list[str], number: int = 1, black_first: bool = False) -> str:
    """SAN with move numbers: '1. e4 e5', or '34... Qg2 35. Rh6+' when Black moves first."""
    out = []
    for i, san in enumerate(sans):
        ply = i + black_first
        if ply % 2 == 0:
            out.append(f"{number + ply // 2}. {san}")
        else:
            out.append(f"{number}... {san}" if i == 0 else san)
    return " ".join(out)


def feedback_line(text: str | None, answer: str, category: str, detail: str) -> str:
    """What the retry prompt says about the last illegal answer."""
    said = text if text is not None else answer.strip()[:60]
    return (f"Your previous answer {said!r} was not accepted ({category}: {detail}). "
            "Give a legal move.")


@dataclass(frozen=True)
class Side:
    """A player in a game, with how it is asked."""

    player: Player
    template: str  # GAME_TEMPLATE (+legal) for models, ENGINE_TEMPLATE for engine rungs
    legal: bool = False  # the prompt lists the legal moves
    retries: int = RETRIES


def move_key(side: Side, game_key: str, board: chess.Board, sans: list[str],
             attempt: int) -> str:
    """The answer-cache key: player, prompt version, game, position, moves so far, attempt.

    The game is part of it: two games reaching the same position must not share an answer,
    or every game of a seeded or random player with the same colour against the same rung
    would replay the first one (and a model sampled at a temperature would too).
    """
    history = hashlib.sha256(" ".join(sans).encode()).hexdigest()[:16]
    return f"{side.player.id}|{side.template}|{game_key}|{board.fen()}|{history}|{attempt}"


def _ask(side: Side, board: chess.Board, prompt: str, key: str, qid: str,
         cache: JsonStore) -> tuple[Reply, bool]:
    hit = cache.get(key)
    if hit is not None:
        return Reply(**hit), True
    question = Question(id=qid, fen=board.fen(), expected={}, source="game", elo_bucket="",
                        phase="", type="", color="", history="", played_move="",
                        played_elo=None, rating=None, solution="", themes="", private=False,
                        chess960=board.chess960)
    try:
        reply = side.player.answer(question, prompt)
    except InfraError as exc:
        raise GameAborted(str(exc)) from exc
    cache.put(key, asdict(reply))
    cache.commit()
    return reply, False


def take_turn(side: Side, board: chess.Board, sans: list[str], start: Start, game_key: str,
              cache: JsonStore) -> tuple[chess.Move | None, list[Attempt]]:
    """The side's legal move (or None: forfeit) and every reply it took."""
    attempts: list[Attempt] = []
    feedback = None
    ply = len(sans)
    for attempt in range(side.retries + 1):
        prompt = "" if side.template == ENGINE_TEMPLATE else game_prompt(
            board, sans, start, side.legal, feedback)
        key = move_key(side, game_key, board, sans, attempt)
        reply, cached = _ask(side, board, prompt, key, f"{game_key}:{ply}:{attempt}", cache)
        parsed = answers.parse(reply.text, board, prompt or None,
                               reply.finish_reason == "length")
        attempts.append(Attempt(ply, attempt, prompt, reply.text, parsed.text,
                                parsed.move.uci() if parsed.move else None, parsed.category,
                                parsed.detail, cached, reply.prompt_tokens,
                                reply.completion_tokens, reply.latency_s, reply.cost))
        if parsed.move is not None:
            return parsed.move, attempts
        feedback = feedback_line(parsed.text, reply.text, parsed.category or "format",
                                 parsed.detail)
    return None, attempts


def rule_end(board: chess.Board) -> tuple[str, str] | None:
    """(result, termination) when the rules end the game; threefold is claimed at once."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return outcome.result(), outcome.termination.name.lower().replace("_", " ")
    if board.is_repetition(3):
        return "1/2-1/2", "threefold repetition"
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
            return "1-0", "adjudication: decisive"
        if all(e <= -DECISIVE_CP for e in recent):
            return "0-1", "adjudication: decisive"
    recent = evals[-DEAD_DRAW_PLIES:]
    if ply >= DEAD_DRAW_FROM and len(recent) == DEAD_DRAW_PLIES and all(
            abs(e) <= DEAD_DRAW_CP for e in recent):
        return "1/2-1/2", "adjudication: dead draw"
    return None


def play_game(key: str, white: Side, black: Side, start: Start, judge_engine: Engine,
              cache: JsonStore, ply_cap: int = PLY_CAP,
              on_ply: Callable[[], None] | None = None) -> GameRecord:
    """Play one game to its end (raises GameAborted on an infrastructure failure)."""
    board = start.board()
    board.chess960 = start.chess960
    record = GameRecord(key, white.player.id, black.player.id, asdict(start))
    record.evals.append(judge(judge_engine, board))
    while True:
        end = rule_end(board) or adjudicate(record.evals, len(record.moves))
        if end is None and len(record.moves) >= ply_cap:
            end = ("1/2-1/2", "ply cap")
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
            record.termination = "forfeit: illegal moves"
            record.forfeit = (f"{len(attempts)} illegal answers in a row; last "
                              f"{last.category}: {last.detail}")
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
    if start.condition != "standard":
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
            illegal.setdefault(a["ply"], []).append(
                f"before this move, illegal try {a['text'] or a['answer'][:40]!r}: "
                f"{a['category']}")
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
