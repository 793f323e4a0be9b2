"""How a model is asked for its move: five protocols, each named and versioned.

- `fen` (game@1): one stateless prompt per move: the moves so far in SAN, the FEN, the side
  to move (the default; `game_prompt`).
- `blind` (blind@1; its games blind@2): the moves so far in SAN only, no FEN and no board:
  the model keeps track of the position itself. A failed answer is told one fixed line
  whatever was wrong (only the quoted answer differs): naming the fault ("pinned piece")
  would show the board the protocol hides.
- `chat` (chat@1): one conversation per game. The model sees its own earlier replies; each of
  the opponent's moves arrives as a user turn with the position's FEN. The last N exchanges
  are kept (recorded in the version: chat@1+last2, the default); when the server says the
  conversation does not fit its context, older exchanges are left out (every user turn keeps
  its FEN) and the game goes on, the trim recorded on the move.
- `tools` (tools@1): OpenAI-style tool calling, a fresh conversation per move: get_board,
  get_legal_moves and make_move. A make_move with an illegal move is an illegal answer; a
  turn that never calls make_move within TOOL_ROUNDS requests forfeits as "no move".
- `pgn` (pgn@1; its games pgn@2): text completion (/completions) of a PGN with rating headers
  and the movetext so far; the continuation's first move is the answer, so base models can
  play. A failed answer is never re-asked with the identical prompt at temperature 0 (the
  same reply, billed again): the side forfeits at once.

Each protocol is one `MoveProtocol` object: the request for a move, the feedback after a
failed answer, how a reply is read, and what the cache key names (the prompt version; the
request's digest joins it in turns.move_key, so identical requests share one answer). The
version is part of the run's name, so results never mix protocols; a change to a template or a
schema bumps its version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from typing import Any

import chess
import chess.pgn

from chess_eval.benchmark.model.interface import ContextTooLong, Reply, Request
from chess_eval.benchmark.question.answers import Category, Parsed, parse
from chess_eval.benchmark.question.questions import Question
from chess_eval.benchmark.question.start import Start
from chess_eval.errors import ConfigError


class GameProtocol(StrEnum):
    """The way a model is asked for a move."""

    FEN = "fen"
    BLIND = "blind"
    CHAT = "chat"
    TOOLS = "tools"
    PGN = "pgn"


# The prompt versions: a single question's (the static test) and every cached answer's key.
VERSIONS = {GameProtocol.FEN: "game@1", GameProtocol.BLIND: "blind@1",
            GameProtocol.CHAT: "chat@1", GameProtocol.TOOLS: "tools@1",
            GameProtocol.PGN: "pgn@1"}
# The versions of games and puzzle lines, where a failed answer is followed up: blind@2 tells
# one fixed line whatever was wrong, pgn@2 never re-asks the identical prompt at temperature 0.
GAME_VERSIONS = {**VERSIONS, GameProtocol.BLIND: "blind@2", GameProtocol.PGN: "pgn@2"}
CHAT_WINDOW = 2  # chat: exchanges kept by default (an 80-move game: 7.2x fen's prompt text)
# The protocols of one position asked alone (the static test): a conversation or tools add
# nothing to a single question.
STATIC_PROTOCOLS = (GameProtocol.FEN, GameProtocol.BLIND, GameProtocol.PGN)
TOOL_ROUNDS = 8  # requests of one tools turn before it forfeits as "no move"
PGN_MAX_TOKENS = 12  # a completion needs only the next move (and a little more)
PGN_ELO = 2500  # the rating headers of the pgn prompt: a completion model plays to its headers
MOVE_INSTRUCTION = ("Reply with your move in SAN (e.g. Nf3) or UCI (e.g. g1f3), on the last "
                    "line as: Final answer: <move>")


def template(protocol: GameProtocol, legal: bool = False,
             chat_history: int = CHAT_WINDOW) -> str:
    """The versioned name a run of games carries (chat_history 0: the whole game)."""
    name = GAME_VERSIONS[protocol]
    if legal:
        name += "+legal"
    if protocol == GameProtocol.CHAT and chat_history:
        name += f"+last{chat_history}"
    return name


def side_name(board: chess.Board) -> str:
    """'White' or 'Black': the side to move."""
    return "White" if board.turn == chess.WHITE else "Black"


def movetext(first: chess.Board, sans: list[str], headers: dict[str, str] | None = None
             ) -> str:
    """The moves played from `first` as python-chess's PGN exporter writes them ('1. e4 e5',
    '34... Qg2 35. Rh6+'), on one line, without the result; with `headers`, the PGN's tag
    pairs in their order before it."""
    game = chess.pgn.Game()
    game.headers.clear()
    game.headers.update(headers or {})
    if first.fen() != chess.STARTING_FEN:  # SetUp, then FEN, after the given tags
        game.headers.update({"SetUp": "1", "FEN": first.fen()})
        game.setup(first)
    node: chess.pgn.GameNode = game
    board = game.board()  # pushed along: a node's board() replays from the root each time
    for san in sans:
        move = board.parse_san(san)
        node = node.add_variation(move)
        board.push(move)
    text = game.accept(chess.pgn.StringExporter(columns=None, headers=bool(headers),
                                                 variations=False, comments=False))
    return text.removesuffix("*").rstrip()


def last_move(board: chess.Board) -> str:
    """The move that led to this board, numbered ('12. Nf3', '12... Nc6')."""
    before = board.copy()
    move = before.pop()
    return movetext(before, [before.san(move)])


def origin_of(start_fen: str, chess960: bool, from_initial: bool) -> str:
    """Where the move list starts, as the prompts say it."""
    if chess960:
        return f"the start position {start_fen}"
    if not from_initial and start_fen != chess.STARTING_FEN:
        return f"the position {start_fen}"  # a puzzle: its line starts from its FEN
    return "the initial position"


def moves_line(played: list[str], first_fen: str, origin: str, chess960: bool = False) -> str:
    """'Moves so far (SAN, from ORIGIN): 1. e4 e5', or that none have been played."""
    if not played:
        return f"No moves have been played yet from {origin}."
    first = chess.Board(first_fen, chess960=chess960)
    return f"Moves so far (SAN, from {origin}): {movetext(first, played)}"


def legal_line(board: chess.Board) -> str:
    """The legal moves in SAN, sorted."""
    return "Legal moves: " + " ".join(sorted(board.san(m) for m in board.legal_moves))


def blind_prompt(board: chess.Board, moves: str, chess960: bool, legal: bool,
                 feedback: str | None) -> str:
    """Template blind@1: the moves so far (SAN) and the side to move; no FEN, no board."""
    side = side_name(board)
    lines = []
    if chess960:
        lines.append("Chess960 (Fischer random) game; castling is written O-O / O-O-O.")
    lines += [moves, f"You play {side}; {side} to move. No board is shown: keep track of the "
              "position from the moves."]
    if legal:
        lines.append(legal_line(board))
    if feedback:
        lines.append(feedback)
    lines.append(MOVE_INSTRUCTION)
    return "\n".join(lines)


def chat_message(board: chess.Board, moves: str, last: str | None, first: bool,
                 chess960: bool, legal: bool, feedback: str | None) -> str:
    """Template chat@1: the user's turn of the conversation. The first states the game and
    the moves so far; each later one the opponent's move (`last`, numbered SAN); a retry
    says what was wrong. Every turn gives the position's FEN."""
    side = side_name(board)
    lines = []
    if feedback:
        lines.append(feedback)
    elif first:
        kind = "a Chess960 (Fischer random) game; castling is written O-O / O-O-O" \
            if chess960 else "a game of chess"
        lines += [f"Let's play {kind}. You play {side}. I will send you my moves; you "
                  "reply with yours.", moves]
    else:
        lines.append(f"I played {last}.")
    lines.append(f"Current position (FEN): {board.fen()}")
    if legal:
        lines.append(legal_line(board))
    lines.append(f"Your move ({side}). {MOVE_INSTRUCTION}")
    return "\n".join(lines)


def chat_messages(exchanges: list[tuple[str, str]], message: str) -> list[dict[str, Any]]:
    """The conversation sent for one turn: the earlier (user, assistant) exchanges it keeps
    (Chat.ask chooses them), then the new user message."""
    messages: list[dict[str, Any]] = []
    for user, assistant in exchanges:
        messages += [{"role": "user", "content": user},
                     {"role": "assistant", "content": assistant}]
    messages.append({"role": "user", "content": message})
    return messages


def _function(name: str, description: str,
              properties: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties or {},
                       "required": sorted(properties or {}), "additionalProperties": False}}}


TOOLS = [
    _function("get_board", "The current position: the moves so far, its FEN and a diagram."),
    _function("get_legal_moves", "Every legal move of the side to move, in SAN."),
    _function("make_move", "Play your move (SAN or UCI). Your turn ends when it is accepted.",
              {"move": {"type": "string", "description": "the move, e.g. Nf3 or g1f3"}}),
]


def tools_prompt(board: chess.Board) -> str:
    """Template tools@1: the turn's opening message."""
    side = side_name(board)
    return (f"We are playing chess. You play {side}, and it is your move. Use the tools: "
            "get_board shows the position, get_legal_moves lists the legal moves, make_move "
            "plays your move. Your turn ends when make_move accepts a move.")


def board_text(board: chess.Board, moves: str) -> str:
    """get_board's result: the moves so far, the FEN and a diagram (White at the bottom)."""
    return (f"{moves}\nCurrent position (FEN): {board.fen()}\nBoard (uppercase White, "
            f"lowercase Black, rank 8 at the top):\n{board}\n{side_name(board)} to move.")


class ToolCall:
    """What one tool call asked, and its result: a move to judge, or text to send back."""

    def __init__(self, name: str, arguments: str) -> None:
        self.name = name
        self.move: str | None = None  # make_move's argument, when well formed
        self.problem: str | None = None  # why the call is malformed
        if name not in ("get_board", "get_legal_moves", "make_move"):
            self.problem = f"unknown tool {name!r}"
            return
        if name != "make_move":
            return
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            self.problem = f"make_move's arguments are not JSON: {arguments[:60]!r}"
            return
        move = args.get("move") if isinstance(args, dict) else None
        if not isinstance(move, str) or not move.strip():
            self.problem = "make_move needs a 'move' argument (a string)"
            return
        self.move = move.strip()


def tool_result(call: ToolCall, board: chess.Board, moves: str) -> str:
    """The text a call of get_board or get_legal_moves returns (or a malformed call's error)."""
    if call.problem:
        return f"error: {call.problem}. The tools are get_board, get_legal_moves, make_move."
    if call.name == "get_board":
        return board_text(board, moves)
    return legal_line(board)


# The pgn prompt's tag pairs: a rated game between two players of PGN_ELO.
PGN_HEADERS = {"Event": "Rated classical game", "Site": "?", "Date": "????.??.??",
               "Round": "?", "White": "?", "Black": "?", "Result": "*",
               "WhiteElo": str(PGN_ELO), "BlackElo": str(PGN_ELO)}


def pgn_prompt(board: chess.Board, played: list[str], first_fen: str,
               chess960: bool) -> str:
    """Template pgn@1: PGN headers (with ratings) and the movetext so far, ending where the
    next move goes ('2.' before White's move; after White's move for Black's)."""
    headers = dict(PGN_HEADERS)
    if chess960:
        headers["Variant"] = "Chess960"
    text = movetext(chess.Board(first_fen, chess960=chess960), played, headers)
    tags, _, moves = text.partition("\n\n")
    if board.turn == chess.WHITE:
        moves = f"{moves} {board.fullmove_number}.".strip()
    elif not played:
        moves = f"{board.fullmove_number}..."
    return f"{tags}\n\n{moves}"


MOVE_NUMBER_RE = re.compile(r"^\d+\.+")
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


def continuation_move(text: str) -> str | None:
    """The first move of a PGN continuation (move numbers skipped), or None when it holds none
    (a result, a comment, nothing)."""
    for token in text.split():
        token = MOVE_NUMBER_RE.sub("", token)
        if not token:
            continue
        if token in RESULTS or token[0] in "{([;%":
            return None
        return token
    return None


def parse_continuation(text: str, board: chess.Board) -> Parsed:
    """A pgn reply judged as an answer: its first move, classified by the taxonomy."""
    token = continuation_move(text)
    if token is None:
        return Parsed(None, None, Category.EMPTY if not text.strip() else Category.FORMAT,
                      "the continuation holds no move")
    return parse(token, board)


GAME_INSTRUCTION = MOVE_INSTRUCTION  # the last line of every game prompt
BLIND_FEEDBACK = "Your previous answer {said!r} was not a legal move. Give a legal move."


def game_prompt(board: chess.Board, sans: list[str], start: Start, legal: bool,
                feedback: str | None) -> str:
    """Template game@1: moves so far (SAN), FEN, side to move; optionally the legal moves."""
    side = side_name(board)
    lines = []
    if start.chess960:
        lines.append("Chess960 (Fischer random) game; castling is written O-O / O-O-O.")
    lines.append(moves_so_far(sans, start))
    lines.append(f"Current position (FEN): {board.fen()}")
    if legal:
        lines.append(legal_line(board))
    lines.append(f"You play {side}; {side} to move.")
    if feedback:
        lines.append(feedback)
    lines.append(GAME_INSTRUCTION)
    return "\n".join(lines)


def moves_so_far(sans: list[str], start: Start) -> str:
    """The game's moves so far as every protocol states them (from the initial position for
    a mid-game start, whose moves are known)."""
    origin = origin_of(start.fen, start.chess960, bool(start.history))
    first = chess.STARTING_FEN if start.history else start.fen
    return moves_line(list(start.history) + sans, first, origin, start.chess960)


def said_of(text: str | None, answer: str) -> str:
    """The answer as a retry quotes it: the move text it committed to, else its start."""
    return text if text is not None else answer.strip()[:60]


def feedback_line(text: str | None, answer: str, category: str, detail: str) -> str:
    """What the retry prompt says about the last illegal answer (fen, chat)."""
    return (f"Your previous answer {said_of(text, answer)!r} was not accepted ({category}: "
            f"{detail}). Give a legal move.")


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
    trimmed: int = 0  # chat: earlier exchanges left out of the request (window or context)
    aborted_attempts: int = 0  # attempts given up on (timeouts): possibly billed


@dataclass(frozen=True)
class TurnState:
    """A side's move to find: the position, the game so far, and how the side is asked."""

    player: Any  # a players.Player (a model asks through `generate`, a baseline `answer`)
    board: chess.Board
    sans: list[str]  # the game's moves so far (SAN, from the start)
    start: Start
    legal: bool  # the prompt lists the legal moves
    retries: int  # failed answers followed up before a forfeit
    window: int  # chat: the exchanges kept (0: every one)
    label: str  # GAME:PLY, the requests' label in logs
    # chat: this side's earlier attempts in this game ({"prompt", "answer", "trimmed"})
    earlier: tuple[dict[str, Any], ...] = ()
    temperature: float = 0.0  # the model's sampling temperature

    @property
    def ply(self) -> int:
        """The move's ply in the game."""
        return len(self.sans)


@dataclass(frozen=True)
class Asked:
    """One request of a turn: the text its trace shows, the text its cache key digests, and
    the call that sends it."""

    shown: str
    digested: str
    send: Callable[[], Reply]
    trimmed: int = 0  # chat: earlier exchanges left out


# The door every request goes through: (attempt, digested text, send) -> (reply, cached).
# turns supplies it: the answer cache, its key and the infrastructure rules.
Door = Callable[[int, str, Callable[[], Reply]], tuple[Reply, bool]]


def question_of(board: chess.Board, qid: str) -> Question:
    """A game position as a question, for a player that reads the board (a baseline)."""
    return Question(id=qid, fen=board.fen(), expected={}, source="game", elo_bucket="",
                    phase="", type="", color="", history="", played_move="",
                    played_elo=None, rating=None, solution="", themes="", private=False,
                    chess960=board.chess960, root=board.root().fen(),
                    moves=tuple(m.uci() for m in board.move_stack), position=board)


def model_of(player: Any, protocol: GameProtocol) -> Any:
    """The player as a model asked through `generate`; ConfigError for a baseline."""
    if not hasattr(player, "generate"):
        raise ConfigError(f"the {protocol} protocol asks a model at an endpoint; a baseline "
                          "reads the board itself (serve it with 'benchmark.py serve' to play "
                          "it through a protocol)")
    return player


class MoveProtocol:
    """How a side is asked for a move: a request per attempt, feedback after a failed answer,
    and how a reply is read. Subclasses change those; `turn` is the loop they share."""

    name: GameProtocol = GameProtocol.FEN

    def key_version(self, legal: bool) -> str:
        """The prompt version in every cached answer's key (the request's digest joins it)."""
        return VERSIONS[self.name] + ("+legal" if legal else "")

    def ask(self, state: TurnState, feedback: str | None, exchanges: list[tuple[str, str]],
            attempt: int) -> Asked:
        """The request of one attempt."""
        prompt = game_prompt(state.board, state.sans, state.start, state.legal, feedback)
        return self._user(state, prompt, attempt)

    def _user(self, state: TurnState, prompt: str, attempt: int) -> Asked:
        """A single prompt: a model gets it as a user message; a baseline reads the board."""
        player = state.player
        question = question_of(state.board, f"{state.label}:{attempt}")
        return Asked(prompt, prompt, lambda: player.answer(question, prompt))

    def read(self, reply: Reply, board: chess.Board, shown: str) -> Parsed:
        """The reply judged as an answer on the board."""
        return parse(reply.text, board, shown or None, reply.finish_reason == "length",
                     reply.finish_reason == "content_filter")

    def feedback(self, parsed: Parsed, reply: Reply) -> str | None:
        """What the next attempt is told about a failed answer (None: no re-ask)."""
        return feedback_line(parsed.text, reply.text, parsed.category or Category.FORMAT,
                             parsed.detail)

    def retries(self, state: TurnState) -> int:
        """Failed answers followed up before the side forfeits."""
        return state.retries

    def turn(self, state: TurnState, door: Door) -> tuple[chess.Move | None, list[Attempt]]:
        """The side's legal move (or None: forfeit) and every answer it took."""
        attempts: list[Attempt] = []
        exchanges = [(a["prompt"], a["answer"]) for a in state.earlier]
        feedback = None
        for attempt in range(self.retries(state) + 1):
            asked = self.ask(state, feedback, exchanges, attempt)
            reply, cached, asked = self.send(door, attempt, asked, state, feedback, exchanges)
            parsed = self.read(reply, state.board, asked.shown)
            attempts.append(Attempt(
                state.ply, attempt, asked.shown, reply.text, parsed.text,
                parsed.move.uci() if parsed.move else None, parsed.category, parsed.detail,
                cached, reply.prompt_tokens, reply.completion_tokens, reply.latency_s,
                reply.cost, reply.reasoning_tokens, requests=1 if reply.attempts else 0,
                trimmed=asked.trimmed, aborted_attempts=reply.aborted_attempts))
            exchanges.append((asked.shown, reply.text))
            if parsed.move is not None:
                return parsed.move, attempts
            feedback = self.feedback(parsed, reply)
            if feedback is None:
                break
        return None, attempts

    def send(self, door: Door, attempt: int, asked: Asked, state: TurnState,
             feedback: str | None, exchanges: list[tuple[str, str]]
             ) -> tuple[Reply, bool, Asked]:
        """The reply to one request through the door, whether it was cached, and the request
        that got it."""
        return (*door(attempt, asked.digested, asked.send), asked)


class Fen(MoveProtocol):
    """fen: one stateless prompt per move with the FEN (game_prompt)."""

    name = GameProtocol.FEN


class Blind(MoveProtocol):
    """blind: the moves only; a failed answer is told one fixed line."""

    name = GameProtocol.BLIND

    def ask(self, state: TurnState, feedback: str | None, exchanges: list[tuple[str, str]],
            attempt: int) -> Asked:
        prompt = blind_prompt(state.board, moves_so_far(state.sans, state.start),
                              state.start.chess960, state.legal, feedback)
        return self._user(state, prompt, attempt)

    def feedback(self, parsed: Parsed, reply: Reply) -> str | None:
        """One line whatever was wrong: only the quoted answer differs."""
        return BLIND_FEEDBACK.format(said=said_of(parsed.text, reply.text))


class Pgn(MoveProtocol):
    """pgn: a PGN to complete; no identical re-ask at temperature 0."""

    name = GameProtocol.PGN

    def ask(self, state: TurnState, feedback: str | None, exchanges: list[tuple[str, str]],
            attempt: int) -> Asked:
        model = model_of(state.player, self.name)
        start = state.start
        first = chess.STARTING_FEN if start.history else start.fen
        prompt = pgn_prompt(state.board, list(start.history) + state.sans, first,
                            start.chess960)
        request = Request(prompt=prompt, max_tokens=PGN_MAX_TOKENS)
        return Asked(prompt, prompt, lambda: model.generate(request,
                                                            f"{state.label}:{attempt}"))

    def read(self, reply: Reply, board: chess.Board, shown: str) -> Parsed:
        """A completion runs on past the move: a cut continuation is the normal case."""
        return parse_continuation(reply.text, board)

    def retries(self, state: TurnState) -> int:
        """At temperature 0 a re-ask would buy the same reply again: none."""
        return state.retries if state.temperature > 0 else 0

    def feedback(self, parsed: Parsed, reply: Reply) -> str | None:
        """The same prompt again (a new sample at a temperature above 0)."""
        return ""


class Chat(MoveProtocol):
    """chat: one conversation per game, the last `window` exchanges kept, trimmed further
    when the server says it does not fit."""

    name = GameProtocol.CHAT

    def __init__(self) -> None:
        self.cap: int | None = None  # exchanges kept since the server said more do not fit

    def ask(self, state: TurnState, feedback: str | None, exchanges: list[tuple[str, str]],
            attempt: int, keep: int | None = None) -> Asked:
        board = state.board
        model = model_of(state.player, self.name)
        sans = state.sans
        last = last_move(board) if sans else None
        message = chat_message(board, moves_so_far(sans, state.start), last, not exchanges,
                               state.start.chess960, state.legal, feedback)
        if keep is None:
            keep = _kept(state, len(exchanges), self.cap)
        kept = exchanges[len(exchanges) - keep:] if keep else []
        messages = chat_messages(kept, message)
        request = Request(messages=tuple(messages))
        return Asked(message, json.dumps(messages),
                     lambda: model.generate(request, f"{state.label}:{attempt}"),
                     trimmed=len(exchanges) - len(kept))

    def send(self, door: Door, attempt: int, asked: Asked, state: TurnState,
             feedback: str | None, exchanges: list[tuple[str, str]]
             ) -> tuple[Reply, bool, Asked]:
        """Through the door; when the conversation does not fit, half as many exchanges (the
        oldest left out; every user turn states its FEN), and no more for the rest of the
        game."""
        keep = len(exchanges) - asked.trimmed
        while True:
            try:
                return (*door(attempt, asked.digested, asked.send), asked)
            except ContextTooLong:
                if keep == 0:
                    raise  # the new message alone does not fit: the game cannot go on
                keep //= 2
                self.cap = keep
                asked = self.ask(state, feedback, exchanges, attempt, keep)


def _kept(state: TurnState, exchanges: int, cap: int | None) -> int:
    """Exchanges a chat request keeps: the window's, no more than an earlier request of this
    game kept after the server said more do not fit (its trim is on its attempt)."""
    keep = min(state.window, exchanges) if state.window else exchanges
    for i, earlier in enumerate(state.earlier):  # the i-th had i exchanges before it
        kept = i - int(earlier.get("trimmed") or 0)
        if kept < (min(state.window, i) if state.window else i):
            keep = min(keep, kept)  # a trim beyond the window's: the context's
    return keep if cap is None else min(keep, cap)


class Tools(MoveProtocol):
    """tools: tool calls in a fresh conversation per move, until make_move is legal."""

    name = GameProtocol.TOOLS

    def turn(self, state: TurnState, door: Door) -> tuple[chess.Move | None, list[Attempt]]:
        """Requests until make_move is given a legal move; `retries` + 1 failed answers
        (illegal or malformed calls) forfeit, and TOOL_ROUNDS requests without one forfeit as
        "no move"."""
        return _ToolsTurn(state, model_of(state.player, self.name)).run(door)


@dataclass
class _TurnUsage:
    """Tokens, cost and calls of a tools turn's requests since its last answer."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    latency_s: float = 0.0
    requests: int = 0
    tool_calls: int = 0
    cached: bool = True
    aborted: int = 0

    def add(self, reply: Reply, cached: bool) -> None:
        """Count one request's reply."""
        self.prompt_tokens = _plus(self.prompt_tokens, reply.prompt_tokens)
        self.completion_tokens = _plus(self.completion_tokens, reply.completion_tokens)
        self.reasoning_tokens = _plus(self.reasoning_tokens, reply.reasoning_tokens)
        self.cost = _plus(self.cost, reply.cost)
        self.latency_s = round(self.latency_s + reply.latency_s, 3)
        self.requests += 1
        self.cached = self.cached and cached
        self.aborted += reply.aborted_attempts


def _plus(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else a + b


@dataclass
class _ToolsTurn:
    """One tools turn's conversation and the answers it gave."""

    state: TurnState
    model: Any
    messages: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    spent: _TurnUsage = field(default_factory=_TurnUsage)

    def answer(self, text: str | None, move: str | None, category: Category | None,
               detail: str, said: str) -> Attempt:
        """Record an answer with the requests since the last one (a later answer of the same
        reply took no request of its own: 0 requests, no cost)."""
        s = self.spent
        made = Attempt(self.state.ply, len(self.attempts), json.dumps(self.messages), said,
                       text, move, category, detail, s.cached, s.prompt_tokens,
                       s.completion_tokens, s.latency_s, s.cost, s.reasoning_tokens,
                       s.requests, s.tool_calls, aborted_attempts=s.aborted)
        self.attempts.append(made)
        self.spent = _TurnUsage()
        return made

    def run(self, door: Door) -> tuple[chess.Move | None, list[Attempt]]:
        """The turn's requests until a legal make_move, a forfeit or TOOL_ROUNDS."""
        board = self.state.board
        moves = moves_so_far(self.state.sans, self.state.start)
        self.messages = [{"role": "user", "content": tools_prompt(board)}]
        for round_ in range(TOOL_ROUNDS):
            sent = tuple(self.messages)
            request = Request(messages=sent, tools=tuple(TOOLS))
            label = f"{self.state.label}:{round_}"
            # The tools are part of the request: a schema edited without a new version is
            # asked again.
            reply, cached = door(round_, json.dumps([list(sent), TOOLS]),
                                 partial(self.model.generate, request, label))
            self.spent.add(reply, cached)
            self.messages.append(assistant_message(reply))
            if not reply.tool_calls:
                self.messages.append({"role": "user",
                                      "content": "Call make_move to play your move."})
                continue
            for raw in reply.tool_calls:
                move = self._call(raw, board, moves)
                if move is not None:
                    return move, self.attempts
                if sum(a.category is not None for a in self.attempts) > self.state.retries:
                    return None, self.attempts
        self.answer(None, None, Category.NO_MOVE, f"no legal make_move in {TOOL_ROUNDS} "
                    "requests", "")
        return None, self.attempts

    def _call(self, raw: dict[str, str], board: chess.Board, moves: str) -> chess.Move | None:
        """One tool call: its result joins the conversation; a legal make_move ends it."""
        self.spent.tool_calls += 1
        call = ToolCall(raw["name"], raw["arguments"])
        if call.name != "make_move" or call.problem:
            result = tool_result(call, board, moves)
            if call.problem:
                self.answer(None, None, Category.FORMAT, f"malformed tool call: {call.problem}",
                            f"{raw['name']}({raw['arguments']})")
        else:
            parsed = parse(call.move or "", board)  # as leniently as any answer
            done = self.answer(parsed.text, parsed.move.uci() if parsed.move else None,
                               parsed.category, parsed.detail, call.move or "")
            if parsed.move is not None:
                return parsed.move
            result = f"not accepted: {done.category}: {done.detail}. Make a legal move."
        self.messages.append({"role": "tool", "tool_call_id": raw["id"], "content": result})
        return None


def assistant_message(reply: Reply) -> dict[str, Any]:
    """The model's reply as the conversation's assistant message."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in reply.tool_calls]
    return message


class Board(MoveProtocol):
    """An engine rung or a baseline: it reads the board itself (no prompt, no retries
    beyond the side's)."""

    def key_version(self, legal: bool) -> str:
        return ENGINE_TEMPLATE

    def ask(self, state: TurnState, feedback: str | None, exchanges: list[tuple[str, str]],
            attempt: int) -> Asked:
        player = state.player
        question = question_of(state.board, f"{state.label}:{attempt}")
        return Asked("", "", lambda: player.answer(question, ""))

    def read(self, reply: Reply, board: chess.Board, shown: str) -> Parsed:
        return parse(reply.text, board)


# The cache's prompt version of engine rungs: they read no prompt. @2: they are given the
# game's moves (and so see repetitions), not a bare position; older cached moves are not used.
ENGINE_TEMPLATE = "engine@2"
PROTOCOLS: dict[GameProtocol, type[MoveProtocol]] = {
    GameProtocol.FEN: Fen, GameProtocol.BLIND: Blind, GameProtocol.CHAT: Chat,
    GameProtocol.TOOLS: Tools, GameProtocol.PGN: Pgn}


def protocol_for(template: str, protocol: GameProtocol) -> MoveProtocol:
    """The protocol object a side is asked by (an engine rung's reads the board)."""
    return Board() if template == ENGINE_TEMPLATE else PROTOCOLS[protocol]()
