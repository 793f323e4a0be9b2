"""From a model's text to a move: find the committed answer, then classify what is wrong.

Categories of a failure (seed 001's taxonomy, refined):
- format: no move found, or text that is not chess notation (also a pawn move to the last
  rank without a promotion piece);
- ambiguous: SAN that fits several legal moves ("Nd2" with two knights able to go there);
- state: the move refers to a board that is not this one: no piece of ours on the from-square
  (or of that type anywhere), or the opponent's piece;
- rule: the piece is there but may not move so: wrong geometry, path blocked, own king left in
  check, a pinned piece, castling without rights or through check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import chess

FORMAT, AMBIGUOUS, STATE, RULE = "format", "ambiguous", "state", "rule"
ILLEGAL_CATEGORIES = (FORMAT, AMBIGUOUS, STATE, RULE)

SQUARE = r"[a-h][1-8]"
UCI_RE = re.compile(rf"({SQUARE})({SQUARE})([qrbnQRBN]?)")
SAN_BODY = (rf"(?:[KQRBN][a-h]?[1-8]?x?{SQUARE}|[a-h](?:x[a-h])?[1-8](?:=?[QRBNqrbn])?"
            r"|[O0o]-[O0o](?:-[O0o])?)")
MOVE_TOKEN = rf"(?:{SQUARE}{SQUARE}[qrbnQRBN]?|{SAN_BODY})[+#]?[!?]*"
MOVE_TOKEN_RE = re.compile(rf"(?<![\w-]){MOVE_TOKEN}(?![\w-])")
MARKER_RE = re.compile(
    rf"(?:final\s+answer|answer|best\s+move|my\s+move|move|i\s+play|play)\s*(?:is)?\s*[:=-]?"
    rf"\s*[*_`\"']*\s*(?:\d+\.+\s*)?({MOVE_TOKEN})", re.IGNORECASE)
CODE_RE = re.compile(r"```(?:\w+)?\s*([^`]+?)\s*```|`([^`\n]+)`")
BOLD_RE = re.compile(r"\*\*([^*\n]+)\*\*|__([^_\n]+)__")
THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
SAN_PARTS = re.compile(
    rf"(?P<piece>[KQRBN])?(?P<file>[a-h])?(?P<rank>[1-8])?x?(?P<to>{SQUARE})"
    r"(?:=?(?P<promo>[QRBNqrbn]))?")


@dataclass(frozen=True)
class Parsed:
    """A model's answer read as a move on a board."""

    text: str | None  # the move text the answer commits to, or None
    move: chess.Move | None  # the legal move, when it is one
    category: str | None  # None when legal, else one of ILLEGAL_CATEGORIES
    detail: str  # why, in a few words


def extract(answer: str) -> str | None:
    """The move text an answer commits to: a final-answer marker, else a code block, else
    bold text, else a reply that is just a move; the last such place wins."""
    text = THINK_RE.sub(" ", answer)
    markers = MARKER_RE.findall(text)
    if markers:
        return _clean(markers[-1])
    for pattern in (CODE_RE, BOLD_RE):
        found = [next(g for g in m if g) for m in pattern.findall(text)]
        tokens = [t for f in found for t in MOVE_TOKEN_RE.findall(f)]
        if tokens:
            return _clean(tokens[-1])
    stripped = text.strip().strip(".*`\"' ")
    if MOVE_TOKEN_RE.fullmatch(stripped):
        return _clean(stripped)
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines:
        tokens = MOVE_TOKEN_RE.findall(lines[-1])
        if len(tokens) == 1:
            return _clean(tokens[0])
    return None


def _clean(token: str) -> str:
    token = token.strip().rstrip("!?.,;:)").strip("*_`\"'")
    if re.fullmatch(r"[O0o]-[O0o](?:-[O0o])?[+#]?", token):
        token = token.upper().replace("0", "O")
    return token


def parse(answer: str, board: chess.Board) -> Parsed:
    """The committed move of an answer, legal or classified by what is wrong with it."""
    text = extract(answer)
    if text is None:
        return Parsed(None, None, FORMAT, "no move found")
    return classify(text, board)


def classify(text: str, board: chess.Board) -> Parsed:
    """A move text (UCI or SAN) on a board: the legal move, or the failure category."""
    match = UCI_RE.fullmatch(text)
    if match:
        return _classify_uci(text, match, board)
    try:
        return Parsed(text, board.parse_san(text), None, "legal")
    except chess.AmbiguousMoveError:
        return Parsed(text, None, AMBIGUOUS, "SAN fits several legal moves")
    except chess.IllegalMoveError:
        return _classify_san(text, board)
    except chess.InvalidMoveError:
        return Parsed(text, None, FORMAT, "not chess notation")


def _classify_uci(text: str, match: re.Match[str], board: chess.Board) -> Parsed:
    move = chess.Move.from_uci(text.lower())
    if move in board.legal_moves:
        return Parsed(text, move, None, "legal")
    piece = board.piece_at(move.from_square)
    if piece is None:
        return Parsed(text, None, STATE, "no piece on the from-square")
    if piece.color != board.turn:
        return Parsed(text, None, STATE, "the opponent's piece")
    if not match.group(3) and piece.piece_type == chess.PAWN:
        promoted = chess.Move(move.from_square, move.to_square, chess.QUEEN)
        if promoted in board.legal_moves:
            return Parsed(text, None, FORMAT, "promotion without a piece")
    if board.is_castling(move) or (piece.piece_type == chess.KING
                                   and abs(move.to_square - move.from_square) == 2):
        return Parsed(text, None, RULE, _castling_problem(board, move))
    return Parsed(text, None, RULE, _rule_problem(board, move))


def _classify_san(text: str, board: chess.Board) -> Parsed:
    if text.startswith("O-O"):
        side = chess.C1 if text.startswith("O-O-O") else chess.G1
        king = board.king(board.turn)
        to = side if board.turn == chess.WHITE else chess.square_mirror(side)
        if king is None:
            return Parsed(text, None, STATE, "no king")
        return Parsed(text, None, RULE, _castling_problem(board, chess.Move(king, to)))
    parts = SAN_PARTS.fullmatch(text.rstrip("+#!?"))
    if parts is None:
        return Parsed(text, None, FORMAT, "not chess notation")
    piece_type = chess.PIECE_SYMBOLS.index(parts["piece"].lower()) if parts["piece"] else 1
    to = chess.parse_square(parts["to"])
    ours = [sq for sq in board.pieces(piece_type, board.turn)
            if (not parts["file"] or chess.square_file(sq) == ord(parts["file"]) - 97)
            and (not parts["rank"] or chess.square_rank(sq) == int(parts["rank"]) - 1)]
    if not ours:
        return Parsed(text, None, STATE, f"no {chess.piece_name(piece_type)} of ours there")
    if piece_type == chess.PAWN and not parts["promo"] and chess.square_rank(to) in (0, 7):
        return Parsed(text, None, FORMAT, "promotion without a piece")
    promo = chess.PIECE_SYMBOLS.index(parts["promo"].lower()) if parts["promo"] else None
    problems = {_rule_problem(board, chess.Move(sq, to, promo)) for sq in ours}
    return Parsed(text, None, RULE, sorted(problems)[0])


def _rule_problem(board: chess.Board, move: chess.Move) -> str:
    """Why a move of our own piece is illegal."""
    target = board.piece_at(move.to_square)
    if target is not None and target.color == board.turn:
        return "destination holds our own piece"
    if board.is_pseudo_legal(move):
        if board.is_pinned(board.turn, move.from_square):
            return "pinned piece"
        return "own king left in check"
    piece = board.piece_at(move.from_square)
    assert piece is not None
    empty = chess.Board(None)
    empty.set_piece_at(move.from_square, piece)
    if piece.piece_type == chess.PAWN:
        return "the pawn cannot move so"
    if move.to_square in empty.attacks(move.from_square):
        return "path blocked"
    return f"the {chess.piece_name(piece.piece_type)} cannot move so"


def _castling_problem(board: chess.Board, move: chess.Move) -> str:
    """Why a castling move is illegal."""
    kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
    rights = (board.has_kingside_castling_rights(board.turn) if kingside
              else board.has_queenside_castling_rights(board.turn))
    if not rights:
        return "castling without rights"
    if board.is_check():
        return "castling out of check"
    rank = chess.square_rank(move.from_square)
    files = range(5, 7) if kingside else range(1, 4)
    if any(board.piece_at(chess.square(f, rank)) for f in files):
        return "castling path blocked"
    return "castling through check"
