"""How a model is asked for its move: five protocols, each named and versioned.

- `fen` (game@1): one stateless prompt per move: the moves so far in SAN, the FEN, the side
  to move (the default; turns.game_prompt).
- `blind` (blind@1): the moves so far in SAN only, no FEN and no board: the model keeps track
  of the position itself.
- `chat` (chat@1): one conversation per game. The model sees its own earlier replies; each of
  the opponent's moves arrives as a user turn with the position's FEN. A cap may keep only the
  last N exchanges (recorded in the version: chat@1+last40).
- `tools` (tools@1): OpenAI-style tool calling, a fresh conversation per move: get_board,
  get_legal_moves and make_move. A make_move with an illegal move is an illegal answer; a
  turn that never calls make_move within TOOL_ROUNDS requests forfeits as "no move".
- `pgn` (pgn@1): text completion (/completions) of a PGN with rating headers and the movetext
  so far; the continuation's first move is the answer, so base models can play.

The version is part of every cached answer's key and of the run's name, so caches never mix
protocols; a change to a template or a schema bumps its version.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any

import chess

from lib.benchmark.core.answers import Category, Parsed, parse


class GameProtocol(StrEnum):
    """The way a model is asked for a move."""

    FEN = "fen"
    BLIND = "blind"
    CHAT = "chat"
    TOOLS = "tools"
    PGN = "pgn"


VERSIONS = {GameProtocol.FEN: "game@1", GameProtocol.BLIND: "blind@1",
            GameProtocol.CHAT: "chat@1", GameProtocol.TOOLS: "tools@1",
            GameProtocol.PGN: "pgn@1"}
# The protocols of one position asked alone (the static test): a conversation or tools add
# nothing to a single question.
STATIC_PROTOCOLS = (GameProtocol.FEN, GameProtocol.BLIND, GameProtocol.PGN)
TOOL_ROUNDS = 8  # requests of one tools turn before it forfeits as "no move"
PGN_MAX_TOKENS = 12  # a completion needs only the next move (and a little more)
PGN_ELO = 2500  # the rating headers of the pgn prompt: a completion model plays to its headers
MOVE_INSTRUCTION = ("Reply with your move in SAN (e.g. Nf3) or UCI (e.g. g1f3), on the last "
                    "line as: Final answer: <move>")


def template(protocol: GameProtocol, legal: bool = False, chat_history: int = 0) -> str:
    """The versioned name a run and its cached answers carry."""
    name = VERSIONS[protocol]
    if legal:
        name += "+legal"
    if protocol == GameProtocol.CHAT and chat_history:
        name += f"+last{chat_history}"
    return name


def side_name(board: chess.Board) -> str:
    """'White' or 'Black': the side to move."""
    return "White" if board.turn == chess.WHITE else "Black"


def numbered(sans: list[str], number: int = 1, black_first: bool = False) -> str:
    """SAN with move numbers: '1. e4 e5', or '34... Qg2 35. Rh6+' when Black moves first."""
    out = []
    for i, san in enumerate(sans):
        ply = i + black_first
        if ply % 2 == 0:
            out.append(f"{number + ply // 2}. {san}")
        else:
            out.append(f"{number}... {san}" if i == 0 else san)
    return " ".join(out)


def origin_of(start_fen: str, chess960: bool, from_initial: bool) -> str:
    """Where the move list starts, as the prompts say it."""
    if chess960:
        return f"the start position {start_fen}"
    if not from_initial and start_fen != chess.STARTING_FEN:
        return f"the position {start_fen}"  # a puzzle: its line starts from its FEN
    return "the initial position"


def moves_line(played: list[str], first_fen: str, origin: str) -> str:
    """'Moves so far (SAN, from ORIGIN): 1. e4 e5', or that none have been played."""
    if not played:
        return f"No moves have been played yet from {origin}."
    first = chess.Board(first_fen)
    return (f"Moves so far (SAN, from {origin}): "
            f"{numbered(played, first.fullmove_number, first.turn == chess.BLACK)}")


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


def chat_messages(exchanges: list[tuple[str, str]], message: str,
                  history: int = 0) -> list[dict[str, Any]]:
    """The conversation sent for one turn: the earlier (user, assistant) exchanges, the last
    `history` of them when capped (0: all), then the new user message."""
    kept = exchanges[-history:] if history else exchanges
    messages: list[dict[str, Any]] = []
    for user, assistant in kept:
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


PGN_HEADERS = ('[Event "Rated classical game"]\n[Site "?"]\n[Date "????.??.??"]\n'
               '[Round "?"]\n[White "?"]\n[Black "?"]\n[Result "*"]\n'
               f'[WhiteElo "{PGN_ELO}"]\n[BlackElo "{PGN_ELO}"]\n')


def pgn_prompt(board: chess.Board, played: list[str], first_fen: str,
               chess960: bool) -> str:
    """Template pgn@1: PGN headers (with ratings) and the movetext so far, ending where the
    next move goes ('2.' before White's move; after White's move for Black's)."""
    headers = PGN_HEADERS
    if chess960:
        headers += '[Variant "Chess960"]\n'
    if first_fen != chess.STARTING_FEN:
        headers += f'[SetUp "1"]\n[FEN "{first_fen}"]\n'
    first = chess.Board(first_fen, chess960=chess960)
    text = numbered(played, first.fullmove_number, first.turn == chess.BLACK)
    if board.turn == chess.WHITE:
        text = f"{text} {board.fullmove_number}.".strip()
    elif not played:
        text = f"{board.fullmove_number}..."
    return f"{headers}\n{text}"


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
