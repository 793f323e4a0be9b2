"""A player's move in a game position: the protocol's request, retries with feedback, cached
replies.

Shared by games and puzzle lines. Every move goes through the same door as a static answer:
the player's reply is parsed by `answers.parse`, and a reply that is not a legal move is retried
with a note saying what was wrong, up to `retries` times; then the side forfeits. How the model
is asked is its protocol (core.protocols): a stateless prompt (fen, blind), one conversation per
game (chat), tool calls (tools) or a PGN to complete (pgn). Replies are cached per (player,
protocol version, game, position, moves so far, attempt, digest of the request), so an
interrupted game resumes without asking twice and replays exactly what was played.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from functools import partial
from typing import Any

import chess
import chess.engine
import chess.pgn

from lib.benchmark.core import answers
from lib.benchmark.core import protocols as proto
from lib.benchmark.core.answers import Category
from lib.benchmark.core.chat import FatalInfraError, InfraError, Reply
from lib.benchmark.core.players import Player
from lib.benchmark.core.prompts import Question
from lib.benchmark.core.protocols import GameProtocol
from lib.errors import ConfigError
from lib.kvstore import Store

RETRIES = 2  # illegal answers retried, each told what was wrong, before a forfeit
GAME_TEMPLATE = "game@1"
GAME_INSTRUCTION = proto.MOVE_INSTRUCTION  # the last line of every game prompt
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
    """One answer to one move request (under tools: one make_move, or a turn that made none),
    with the tokens and cost of the requests it took."""

    ply: int
    attempt: int
    prompt: str  # the request's new text: prompt, user message, or the tools turn's messages
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
    reasoning_tokens: int | None = None
    requests: int = 1  # requests it took (tools: every round since the last answer)
    tool_calls: int = 0  # tool calls among them (tools)


def game_prompt(board: chess.Board, sans: list[str], start: Start, legal: bool,
                feedback: str | None) -> str:
    """Template game@1: moves so far (SAN), FEN, side to move; optionally the legal moves."""
    side = proto.side_name(board)
    lines = []
    if start.chess960:
        lines.append("Chess960 (Fischer random) game; castling is written O-O / O-O-O.")
    lines.append(moves_so_far(sans, start))
    lines.append(f"Current position (FEN): {board.fen()}")
    if legal:
        lines.append(proto.legal_line(board))
    lines.append(f"You play {side}; {side} to move.")
    if feedback:
        lines.append(feedback)
    lines.append(GAME_INSTRUCTION)
    return "\n".join(lines)


def moves_so_far(sans: list[str], start: Start) -> str:
    """The game's moves so far as every protocol states them (from the initial position for
    a mid-game start, whose moves are known)."""
    origin = proto.origin_of(start.fen, start.chess960, bool(start.history))
    first = chess.STARTING_FEN if start.history else start.fen
    return proto.moves_line(list(start.history) + sans, first, origin)


def feedback_line(text: str | None, answer: str, category: str, detail: str) -> str:
    """What the retry prompt says about the last illegal answer."""
    said = text if text is not None else answer.strip()[:60]
    return (f"Your previous answer {said!r} was not accepted ({category}: {detail}). "
            "Give a legal move.")


@dataclass(frozen=True)
class Side:
    """A player in a game, with how it is asked."""

    player: Player
    template: str  # the protocol's version (+legal), or ENGINE_TEMPLATE for engine rungs
    legal: bool = False  # the prompt lists the legal moves
    retries: int = RETRIES
    protocol: GameProtocol = GameProtocol.FEN  # how a model is asked
    chat_history: int = 0  # chat: exchanges kept (0: the whole game)


def move_key(side: Side, game_key: str, board: chess.Board, sans: list[str], attempt: int,
             prompt: str) -> str:
    """The answer-cache key: player, prompt version, game, position, moves so far, attempt,
    and a digest of the request's text.

    The game is part of it: two games reaching the same position must not share an answer,
    or every game of a seeded or random player with the same colour against the same rung
    would replay the first one (and a model sampled at a temperature would too). The
    request's digest is part of it so that editing a template without bumping its version
    never reuses an answer to the old text.
    """
    history = hashlib.sha256(" ".join(sans).encode()).hexdigest()[:16]
    text = hashlib.sha256(prompt.encode()).hexdigest()[:16]
    return (f"{side.player.id}|{side.template}|{game_key}|{board.fen()}|{history}|{attempt}"
            f"|{text}")


def _question(board: chess.Board, qid: str) -> Question:
    return Question(id=qid, fen=board.fen(), expected={}, source="game", elo_bucket="",
                    phase="", type="", color="", history="", played_move="",
                    played_elo=None, rating=None, solution="", themes="", private=False,
                    chess960=board.chess960, root=board.root().fen(),
                    moves=tuple(m.uci() for m in board.move_stack), position=board)


def _cached(key: str, cache: Store, request: Callable[[], Reply]) -> tuple[Reply, bool]:
    """The cached reply under `key`, or the request's (stored at once)."""
    hit = cache.get(key)
    if hit is not None:
        return Reply(**hit), True
    try:
        reply = request()
    except FatalInfraError:
        raise  # every further request would fail the same way (400, 401, 404): stop the run
    except InfraError as exc:
        raise GameAborted(str(exc)) from exc
    cache.put(key, asdict(reply))
    cache.commit()
    return reply, False


def _request(side: Side, board: chess.Board, sans: list[str], start: Start,
             feedback: str | None, exchanges: list[tuple[str, str]],
             label: str) -> tuple[str, str, Callable[[], Reply]]:
    """One attempt's request under the side's protocol: the text its trace shows, the text
    its cache key digests, and the call that sends it."""
    player = side.player
    if side.template == ENGINE_TEMPLATE:
        return "", "", lambda: player.answer(_question(board, label), "")
    if side.protocol == GameProtocol.FEN:
        prompt = game_prompt(board, sans, start, side.legal, feedback)
        return prompt, prompt, lambda: player.answer(_question(board, label), prompt)
    if side.protocol == GameProtocol.BLIND:
        prompt = proto.blind_prompt(board, moves_so_far(sans, start), start.chess960, side.legal,
                                    feedback)
        return prompt, prompt, lambda: player.answer(_question(board, label), prompt)
    model = _model(player, side.protocol)
    if side.protocol == GameProtocol.PGN:
        first = chess.STARTING_FEN if start.history else start.fen
        prompt = proto.pgn_prompt(board, list(start.history) + sans, first, start.chess960)
        return prompt, prompt, lambda: model.complete(prompt, proto.PGN_MAX_TOKENS, label)
    # chat: the side's earlier exchanges of this game, then the new user message
    last = proto.numbered(sans[-1:], board.fullmove_number - (board.turn == chess.WHITE),
                          board.turn == chess.WHITE) if sans else None
    message = proto.chat_message(board, moves_so_far(sans, start), last, not exchanges,
                                 start.chess960, side.legal, feedback)
    messages = proto.chat_messages(exchanges, message, side.chat_history)
    return message, json.dumps(messages), lambda: model.converse(messages, None, label)


def _model(player: Player, protocol: GameProtocol) -> Any:
    """The player as a model that converses and completes; ConfigError for a baseline."""
    if not hasattr(player, "converse"):
        raise ConfigError(f"the {protocol} protocol asks a model at an endpoint; a baseline "
                          "reads the board itself (serve it with 'benchmark.py serve' to play "
                          "it through a protocol)")
    return player


def _parse(side: Side, reply: Reply, board: chess.Board, prompt: str) -> answers.Parsed:
    if side.protocol == GameProtocol.PGN and side.template != ENGINE_TEMPLATE:
        # A completion runs on past the move: a cut continuation is the normal case.
        return proto.parse_continuation(reply.text, board)
    return answers.parse(reply.text, board, prompt or None, reply.finish_reason == "length",
                         reply.finish_reason == "content_filter")


def take_turn(side: Side, board: chess.Board, sans: list[str], start: Start, game_key: str,
              cache: Store, earlier: Sequence[dict[str, Any]] = ()
              ) -> tuple[chess.Move | None, list[Attempt]]:
    """The side's legal move (or None: forfeit) and every reply it took. `earlier`: the
    side's attempts so far in this game (the chat protocol's conversation)."""
    if side.protocol == GameProtocol.TOOLS and side.template != ENGINE_TEMPLATE:
        return _tools_turn(side, board, sans, start, game_key, cache)
    attempts: list[Attempt] = []
    feedback = None
    ply = len(sans)
    exchanges = [(a["prompt"], a["answer"]) for a in earlier]
    for attempt in range(side.retries + 1):
        label = f"{game_key}:{ply}:{attempt}"
        prompt, digested, request = _request(side, board, sans, start, feedback, exchanges,
                                             label)
        key = move_key(side, game_key, board, sans, attempt, digested)
        reply, cached = _cached(key, cache, request)
        parsed = _parse(side, reply, board, prompt)
        attempts.append(Attempt(ply, attempt, prompt, reply.text, parsed.text,
                                parsed.move.uci() if parsed.move else None, parsed.category,
                                parsed.detail, cached, reply.prompt_tokens,
                                reply.completion_tokens, reply.latency_s, reply.cost,
                                reply.reasoning_tokens))
        exchanges.append((prompt, reply.text))
        if parsed.move is not None:
            return parsed.move, attempts
        feedback = feedback_line(parsed.text, reply.text, parsed.category or Category.FORMAT,
                                 parsed.detail)
    return None, attempts


@dataclass
class _Spent:
    """Tokens, cost and calls of a tools turn's requests since its last answer."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    latency_s: float = 0.0
    requests: int = 0
    tool_calls: int = 0
    cached: bool = True

    def add(self, reply: Reply, cached: bool) -> None:
        self.prompt_tokens = _plus(self.prompt_tokens, reply.prompt_tokens)
        self.completion_tokens = _plus(self.completion_tokens, reply.completion_tokens)
        self.reasoning_tokens = _plus(self.reasoning_tokens, reply.reasoning_tokens)
        self.cost = _plus(self.cost, reply.cost)
        self.latency_s = round(self.latency_s + reply.latency_s, 3)
        self.requests += 1
        self.cached = self.cached and cached


def _plus(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


def _tools_turn(side: Side, board: chess.Board, sans: list[str], start: Start, game_key: str,
                cache: Store) -> tuple[chess.Move | None, list[Attempt]]:
    """A tools turn: requests until make_move is given a legal move, `retries` + 1 failed
    answers (illegal or malformed calls) forfeit, and TOOL_ROUNDS requests without one forfeit
    as "no move"."""
    model = _model(side.player, side.protocol)
    ply = len(sans)
    moves = moves_so_far(sans, start)
    messages: list[dict[str, Any]] = [{"role": "user", "content": proto.tools_prompt(board)}]
    attempts: list[Attempt] = []
    spent = _Spent()

    def answer(text: str | None, move: str | None, category: Category | None, detail: str,
               said: str) -> Attempt:
        nonlocal spent
        made = Attempt(ply, len(attempts), json.dumps(messages), said, text, move, category,
                       detail, spent.cached, spent.prompt_tokens, spent.completion_tokens,
                       spent.latency_s, spent.cost, spent.reasoning_tokens, spent.requests,
                       spent.tool_calls)
        attempts.append(made)
        spent = _Spent()
        return made

    for round_ in range(proto.TOOL_ROUNDS):
        label = f"{game_key}:{ply}:{round_}"
        sent = list(messages)
        # The tools are part of the request: a schema edited without a new version is asked.
        key = move_key(side, game_key, board, sans, round_, json.dumps([sent, proto.TOOLS]))
        reply, cached = _cached(key, cache, partial(model.converse, sent, proto.TOOLS, label))
        spent.add(reply, cached)
        messages.append(_assistant(reply))
        if not reply.tool_calls:
            messages.append({"role": "user", "content": "Call make_move to play your move."})
            continue
        for raw in reply.tool_calls:
            spent.tool_calls += 1
            call = proto.ToolCall(raw["name"], raw["arguments"])
            if call.name != "make_move" or call.problem:
                result = proto.tool_result(call, board, moves)
                if call.problem:
                    answer(None, None, Category.FORMAT, f"malformed tool call: {call.problem}",
                           f"{raw['name']}({raw['arguments']})")
            else:
                parsed = answers.parse(call.move or "", board)  # as leniently as any answer
                done = answer(parsed.text, parsed.move.uci() if parsed.move else None,
                              parsed.category, parsed.detail, call.move or "")
                if parsed.move is not None:
                    return parsed.move, attempts
                result = (f"not accepted: {done.category}: {done.detail}. Make a legal move.")
            messages.append({"role": "tool", "tool_call_id": raw["id"], "content": result})
            if sum(a.category is not None for a in attempts) > side.retries:
                return None, attempts
    answer(None, None, Category.NO_MOVE, f"no legal make_move in {proto.TOOL_ROUNDS} requests",
           "")
    return None, attempts


def _assistant(reply: Reply) -> dict[str, Any]:
    """The model's reply as the conversation's assistant message."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in reply.tool_calls]
    return message
