"""Baseline players behind an OpenAI-compatible endpoint that speaks every protocol.

`benchmark.py serve` answers for a model named 'served/SPEC', where SPEC is any baseline spec
('served/toga2:depth=1', 'served/softmax:temp=100,nodes=2000'), with the player's move in the
position the request describes, whichever protocol asks (model.protocols):
- POST /v1/chat/completions: the FEN in the last user message (fen, chat), else the move list
  (blind); with tools, it calls get_board, then make_move with its move;
- POST /v1/completions: the PGN to complete (pgn): the move, as a continuation.
The prefix keeps the name from being a baseline on the client's side, which would play it
in-process, not over HTTP. A player rated this way goes through exactly the path a language
model takes (HTTP, parsing, retries): that is how the validation set's players unlike the rungs
are rated, and how the protocols are shown neutral (the same player, the same Elo). A model
named 'served/blindspot/SPEC' loses track of the position where no FEN is shown in a chat
request (blind): it forgets the last move of the list. Each model name gets its own small pool
of engines; a request waits for a free one.
"""

from __future__ import annotations

import io
import json
import logging
import queue
import re
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import chess
import chess.pgn

from chess_eval.benchmark.players.player import EnginePlayer, Player, is_baseline, make_player
from chess_eval.benchmark.question.questions import Question
from chess_eval.engine import Engine
from chess_eval.errors import ChessEvalError

log = logging.getLogger(__name__)

# Every prompt template names the position as "... (FEN): <fen>".
FEN_RE = re.compile(r"\(FEN\): (\S+ [wb] \S+ \S+ \d+ \d+)")
SERVED = "served"  # the model names' prefix ('served/SPEC'), and a served question's source
BLINDSPOT = "blindspot/"  # 'served/blindspot/SPEC': forgets the last move of a bare move list
# The move list of a prompt with no FEN (blind), and where it starts.
MOVES_RE = re.compile(r"Moves so far \(SAN, from (?:the initial position|the (?:start )?position "
                      r"(\S+ [wb] \S+ \S+ \d+ \d+))\): (.*)")
PGN_RE = re.compile(r'^\[\w+ "', re.MULTILINE)  # a PGN header line
MOVE_NUMBER_END_RE = re.compile(r"\s*\d+\.+\s*$")  # a PGN prompt ends with the next move's number
NO_MOVES_RE = re.compile(r"No moves have been played yet from (?:the initial position|the "
                         r"(?:start )?position (\S+ [wb] \S+ \S+ \d+ \d+))\.")


def question_from(board: chess.Board) -> Question:
    """The position the request describes, with the moves that led to it where the request
    lists them (its id is the FEN, so a mixed player's coin is seeded per position)."""
    fen = board.fen()
    return Question(id=fen, fen=fen, expected={}, source=SERVED, elo_bucket="", phase="",
                    type="", color="", history="", played_move="", played_elo=None,
                    rating=None, solution="", themes="", private=False,
                    chess960=board.chess960, position=board)


@dataclass
class Served:
    """One model name's player and its engines (a pool: a request takes one, gives it back)."""

    player: Player
    blindspot: bool = False  # forgets the last move of a move list shown without a FEN
    engines: queue.Queue[Engine | None] = field(default_factory=queue.Queue)
    started: list[Engine] = field(default_factory=list)

    def san(self, board: chess.Board) -> str:
        """The player's move in SAN (a completion's continuation)."""
        return board.san(chess.Move.from_uci(self.move(board)))

    def move(self, board: chess.Board) -> str:
        """The player's reply text (UCI) to the position."""
        question = question_from(board)
        if not isinstance(self.player, EnginePlayer):
            return self.player.answer(question, "").text
        engine = self.engines.get()
        try:
            if engine is None:  # a free slot with no engine yet
                engine = Engine(self.player.engine_settings).__enter__()
                self.started.append(engine)
            return self.player.answer_with(engine, question, "").text
        finally:
            self.engines.put(engine)


class QuietServer(ThreadingHTTPServer):
    """An HTTP server quiet about a client that hangs up (an eval stopped by Ctrl-C, a
    client's timeout): socketserver printed a traceback for each."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A reset or broken connection in a line at debug level; anything else as before."""
        error = sys.exc_info()[1]
        if isinstance(error, (BrokenPipeError, ConnectionResetError)):
            log.debug("client %s hung up: %s", client_address, error)
        else:
            super().handle_error(request, client_address)


class PlayerServer:
    """The server: model name -> player, made on first use; `slots` engines per model."""

    def __init__(self, host: str, port: int, stockfish: str | None, seed: int,
                 slots: int) -> None:
        self.stockfish = stockfish
        self.seed = seed
        self.slots = slots
        self.models: dict[str, Served] = {}
        self._lock = threading.Lock()
        self.httpd = QuietServer((host, port), self._handler())
        self.httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        """The /v1 base URL to give as --base-url."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def served(self, model: str) -> Served:
        """The model's player, made on its first request; ChessEvalError for a bad name."""
        with self._lock:
            if model not in self.models:
                prefix, _, spec = model.partition("/")
                blindspot = spec.startswith(BLINDSPOT)
                spec = spec.removeprefix(BLINDSPOT)
                if prefix != SERVED or not is_baseline(spec):
                    raise ChessEvalError(f"unknown model {model!r}: this server plays "
                                         f"'{SERVED}/SPEC' for a baseline SPEC (e.g. "
                                         f"{SERVED}/toga2:depth=1)")
                player = make_player(spec, None, self.stockfish, self.seed, workers=1)
                served = Served(player, blindspot)
                for _ in range(self.slots):
                    served.engines.put(None)
                self.models[model] = served
                log.info("serving %s (%s)", model, player.answered_by)
            return self.models[model]

    def reply(self, body: dict[str, Any], completion: bool = False) -> tuple[
            int, dict[str, Any]]:
        """The HTTP status and JSON body answering one request: a chat completion, or a text
        completion of a PGN (`completion`)."""
        try:
            model = str(body["model"])
            prompt = str(body["prompt"]) if completion else _last_user(body["messages"])
            tools = bool(body.get("tools")) and not completion
        except (KeyError, IndexError, TypeError):
            shape = "'prompt'" if completion else "'messages': [...]"
            return 400, {"error": {"message": f"expected {{'model', {shape}}}"}}
        try:
            served = self.served(model)
            if completion:  # a PGN to continue, or a prompt with none (a preflight)
                text = " " + served.san(_pgn_board(prompt)) if PGN_RE.search(prompt) else "OK"
                return 200, _completion(model, prompt, text)
            if tools:
                return 200, _chat(model, prompt, *_tool_turn(served, body["messages"]))
            chess960 = any("Chess960" in str(m.get("content")) for m in body["messages"])
            board = _board(prompt, served.blindspot, chess960)
            # A prompt with no position (a client's preflight) gets a short reply.
            return 200, _chat(model, prompt, served.move(board) if board else "OK")
        except ChessEvalError as exc:
            return (404 if "unknown model" in str(exc) else 500), {"error": {"message": str(exc)}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass  # one line per request would drown the log

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": name, "object": "model"} for name in sorted(server.models)]})
                else:
                    self._send(404, {"error": {"message": f"no {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                path = self.path.rstrip("/")
                if not path.endswith("/completions"):
                    self._send(404, {"error": {"message": f"no {self.path}"}})
                    return
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length",
                                                                           0))))
                except ValueError:
                    self._send(400, {"error": {"message": "the body is not JSON"}})
                    return
                try:
                    answer = server.reply(body, not path.endswith("/chat/completions"))
                except Exception as exc:  # noqa: BLE001 (a server answers every request)
                    log.error("a request failed: %r", exc)
                    answer = 500, {"error": {"message": f"the player failed: {exc!r}"}}
                self._send(*answer)

        return Handler

    def serve(self) -> None:
        """Answer requests until shut down (Ctrl-C, or `shutdown` from another thread)."""
        self.httpd.serve_forever()

    def shutdown(self) -> None:
        """Stop answering (from another thread than `serve`'s)."""
        self.httpd.shutdown()

    def close(self) -> None:
        """Close the socket and every engine started."""
        self.httpd.server_close()
        for served in self.models.values():
            for engine in served.started:
                engine.close()
            served.player.close()


def _last_user(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message (a tools turn's opening one)."""
    return str(next(m["content"] for m in reversed(messages) if m["role"] == "user"))


def _usage(prompt: str) -> dict[str, int]:
    # Rough counts (4 characters a token): the server runs no tokenizer.
    return {"prompt_tokens": len(prompt) // 4, "completion_tokens": 2,
            "total_tokens": len(prompt) // 4 + 2}


def _chat(model: str, prompt: str, text: str,
          calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return {"id": "served", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                         "message": message}], "usage": _usage(prompt)}


def _completion(model: str, prompt: str, text: str) -> dict[str, Any]:
    return {"id": "served", "object": "text_completion", "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "text": text}],
            "usage": _usage(prompt)}


def _board(prompt: str, blindspot: bool, chess960: bool = False) -> chess.Board | None:
    """The position a chat prompt describes: its FEN, else its move list; None for neither."""
    found = FEN_RE.search(prompt)
    moves = MOVES_RE.search(prompt) or NO_MOVES_RE.search(prompt)
    if found:
        board = chess.Board(found.group(1), chess960=chess960)
        # The moves that led to it, where the prompt lists them: a player that reads the
        # game's history (Maia, an engine's repetitions) sees what it would see in-process.
        try:
            played = _moves_board(moves, False, chess960) if moves else None
        except ChessEvalError:
            played = None
        return played if played is not None and played.fen() == board.fen() else board
    if moves is None:
        return None
    return _moves_board(moves, blindspot, chess960)


def _moves_board(moves: re.Match[str], blindspot: bool, chess960: bool) -> chess.Board:
    """The position at the end of a prompt's move list; ChessEvalError where it does not
    parse."""
    fen = moves.group(1)
    movetext = moves.group(2) if moves.re is MOVES_RE else ""
    if blindspot:  # loses track: the last move of the list never reached its board
        movetext = " ".join(movetext.split()[:-1])
    headers = f'[SetUp "1"]\n[FEN "{fen}"]\n' if fen else ""
    if chess960:
        headers += '[Variant "Chess960"]\n'
    return _pgn_board(f"{headers}\n{movetext}")


def _pgn_board(pgn: str) -> chess.Board:
    """The position at the end of a PGN's movetext (its headers' FEN and variant honoured);
    ChessEvalError when a move does not parse."""
    game = chess.pgn.read_game(io.StringIO(MOVE_NUMBER_END_RE.sub("\n", pgn) + " *"))
    if game is None or game.errors:
        raise ChessEvalError(f"cannot read the PGN: {game.errors if game else 'empty'}")
    return game.end().board()


def _tool_turn(served: Served, messages: list[dict[str, Any]]) -> tuple[
        str, list[dict[str, Any]]]:
    """A tools turn as an engine plays it: get_board first, then make_move with its move in
    the position get_board returned."""
    results = [m for m in messages if m.get("role") == "tool"]
    board = _board(str(results[-1]["content"]), False) if results else None
    n = len(results)
    if board is None:
        return "", [{"id": f"call_{n}", "type": "function",
                     "function": {"name": "get_board", "arguments": "{}"}}]
    move = json.dumps({"move": served.san(board)})
    return "", [{"id": f"call_{n}", "type": "function",
                 "function": {"name": "make_move", "arguments": move}}]
