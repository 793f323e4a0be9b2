"""A player's move in a game position: the game prompt, retries with feedback, cached replies.

Shared by games and puzzle lines. Every move goes through the same door as a static answer:
the player's reply is parsed by `answers.parse`, and a reply that is not a legal move is retried
with a note saying what was wrong, up to `retries` times; then the side forfeits. Replies are
cached per (player, prompt version, game, position, moves so far, attempt), so an interrupted
game resumes without asking twice and replays exactly what was played.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from enum import StrEnum

import chess
import chess.engine
import chess.pgn

from lib.benchmark.core import answers
from lib.benchmark.core.answers import Category
from lib.benchmark.core.chat import FatalInfraError, InfraError, Reply
from lib.benchmark.core.players import Player
from lib.benchmark.core.prompts import Question
from lib.kvstore import Store

RETRIES = 2  # illegal answers retried, each told what was wrong, before a forfeit
GAME_TEMPLATE = "game@1"
GAME_INSTRUCTION = ("Reply with your move in SAN (e.g. Nf3) or UCI (e.g. g1f3), on the last "
                    "line as: Final answer: <move>")  # the last line of every game prompt
# The cache's prompt version of engine rungs: they read no prompt. @2: they are given the
# game's moves (and so see repetitions), not a bare position; older cached moves are not used.
ENGINE_TEMPLATE = "engine@2"


class Condition(StrEnum):
    """How a game (or a puzzle line) starts."""

    STANDARD = "standard"  # the initial position
    CHESS960 = "chess960"  # a seeded Chess960 start, never the standard one
    MIDGAME = "midgame"  # a game position of questions.csv, with the moves that led to it
    PUZZLE = "puzzle"  # a puzzle's FEN (puzzle lines)


class GameAborted(Exception):
    """A move could not be had for infrastructure reasons: the game is not rated."""


@dataclass(frozen=True)
class Start:
    """Where a game begins."""

    condition: Condition  # how the game starts
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


@dataclass(frozen=True)
class Attempt:
    """One reply to one move request."""

    ply: int
    attempt: int
    prompt: str
    answer: str
    text: str | None  # the move text the answer committed to
    move: str | None  # UCI, when legal
    category: Category | None  # None when legal, else the taxonomy's category
    detail: str
    cached: bool
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    cost: float | None = None


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


def move_key(side: Side, game_key: str, board: chess.Board, sans: list[str], attempt: int,
             prompt: str) -> str:
    """The answer-cache key: player, prompt version, game, position, moves so far, attempt,
    and a digest of the prompt's text.

    The game is part of it: two games reaching the same position must not share an answer,
    or every game of a seeded or random player with the same colour against the same rung
    would replay the first one (and a model sampled at a temperature would too). The prompt's
    digest is part of it so that editing a template without bumping its version never reuses
    an answer to the old text.
    """
    history = hashlib.sha256(" ".join(sans).encode()).hexdigest()[:16]
    text = hashlib.sha256(prompt.encode()).hexdigest()[:16]
    return (f"{side.player.id}|{side.template}|{game_key}|{board.fen()}|{history}|{attempt}"
            f"|{text}")


def _ask(side: Side, board: chess.Board, prompt: str, key: str, qid: str,
         cache: Store) -> tuple[Reply, bool]:
    hit = cache.get(key)
    if hit is not None:
        return Reply(**hit), True
    question = Question(id=qid, fen=board.fen(), expected={}, source="game", elo_bucket="",
                        phase="", type="", color="", history="", played_move="",
                        played_elo=None, rating=None, solution="", themes="", private=False,
                        chess960=board.chess960, root=board.root().fen(),
                        moves=tuple(m.uci() for m in board.move_stack), position=board)
    try:
        reply = side.player.answer(question, prompt)
    except FatalInfraError:
        raise  # every further request would fail the same way (400, 401, 404): stop the run
    except InfraError as exc:
        raise GameAborted(str(exc)) from exc
    cache.put(key, asdict(reply))
    cache.commit()
    return reply, False


def take_turn(side: Side, board: chess.Board, sans: list[str], start: Start, game_key: str,
              cache: Store) -> tuple[chess.Move | None, list[Attempt]]:
    """The side's legal move (or None: forfeit) and every reply it took."""
    attempts: list[Attempt] = []
    feedback = None
    ply = len(sans)
    for attempt in range(side.retries + 1):
        prompt = "" if side.template == ENGINE_TEMPLATE else game_prompt(
            board, sans, start, side.legal, feedback)
        key = move_key(side, game_key, board, sans, attempt, prompt)
        reply, cached = _ask(side, board, prompt, key, f"{game_key}:{ply}:{attempt}", cache)
        parsed = answers.parse(reply.text, board, prompt or None,
                               reply.finish_reason == "length",
                               reply.finish_reason == "content_filter")
        attempts.append(Attempt(ply, attempt, prompt, reply.text, parsed.text,
                                parsed.move.uci() if parsed.move else None, parsed.category,
                                parsed.detail, cached, reply.prompt_tokens,
                                reply.completion_tokens, reply.latency_s, reply.cost))
        if parsed.move is not None:
            return parsed.move, attempts
        feedback = feedback_line(parsed.text, reply.text, parsed.category or Category.FORMAT,
                                 parsed.detail)
    return None, attempts
