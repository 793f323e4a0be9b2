"""From a model's text to a move: find the committed answer, then classify what is wrong.

Where the answer is, strongest kind first; the first match of the strongest kind present wins:
1. `final`: a `Final answer:` marker followed by a move;
2. `json`: structured output, `{"move": "..."}` (also `best_move`, `answer`);
3. `marker`: a weaker marker (`Answer:`, `Best move:`, `Move:`, `My move is`, `I play`);
4. `code` / `bold`: a code span or bold text holding exactly one move;
5. `bare`: the whole reply, or its first or last line, is exactly one move.
Before any search, text inside `<think>` is dropped, and so is every echo of the prompt: its
lines, fragments of them (an echo cut short) and examples (`e.g. e2e4`), which are never the
answer. Natural-language moves (`Knight to f3`, `N f3`, `pawn to e4`, `castles kingside`) and
long algebraic with a hyphen (`e2-e4`, `Ng1-f3`) are read as the moves they name. An answer
cut by the token limit counts only through kinds 1-2; otherwise it is `truncated`.

Categories of a failure (the illegal-move taxonomy of the promptfoo gpt5-chess write-up, refined):
- format: no move found, or text that is not chess notation (also a pawn move to the last
  rank without a promotion piece);
- ambiguous: SAN that fits several legal moves ("Nd2" with two knights able to go there);
- state: the move refers to a board that is not this one: no piece of ours on the from-square
  (or of that type anywhere, or no pawn on the file a pawn move starts from), or the
  opponent's piece;
- rule: the piece is there but may not move so: wrong geometry, path blocked, own king left in
  check, a pinned piece, castling without rights or through check.
`truncated` (the reply was cut before it committed to a move) and `empty` (no text, or a reply
a content filter withheld) are not notation errors and are counted apart; both are failures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

import chess


class Category(StrEnum):
    """What became of one answer: legal, one of the taxonomy's failures, cut off, or none."""

    LEGAL = "legal"
    FORMAT = "format"
    AMBIGUOUS = "ambiguous"
    STATE = "state"
    RULE = "rule"
    TRUNCATED = "truncated"  # cut by the token limit before it committed to a move
    EMPTY = "empty"  # no answer text: an empty reply, or one a content filter withheld
    INFRA = "infra"  # no answer: the request failed for infrastructure reasons
    NO_MOVE = "no move"  # the tools protocol: a turn that never called make_move in time


ILLEGAL_CATEGORIES = (Category.FORMAT, Category.AMBIGUOUS, Category.STATE, Category.RULE)
# Every way an answer can hold no legal move: the taxonomy's categories, then those that are
# not notation errors (no move at all under the tools protocol last).
FAILED_ANSWERS = (*ILLEGAL_CATEGORIES, Category.TRUNCATED, Category.EMPTY, Category.NO_MOVE)

SQUARE = r"[a-h][1-8]"
UCI_RE = re.compile(rf"({SQUARE})({SQUARE})([qrbnQRBN]?)")
LAN_RE = re.compile(rf"(?P<piece>[KQRBN])?(?P<frm>{SQUARE})[-x](?P<to>{SQUARE})"
                    r"(?:=?(?P<promo>[QRBNqrbn]))?[+#]?")
SAN_BODY = (rf"(?:[KQRBN][a-h]?[1-8]?x?{SQUARE}|[a-h](?:x[a-h])?[1-8](?:=?[QRBNqrbn])?"
            r"|[O0o]-[O0o](?:-[O0o])?)")
LAN_BODY = rf"[KQRBN]?{SQUARE}[-x]{SQUARE}(?:=?[QRBNqrbn])?"
MOVE_TOKEN = rf"(?:{LAN_BODY}|{SQUARE}{SQUARE}[qrbnQRBN]?|{SAN_BODY})[+#]?[!?]*"
# A move stands alone: not part of a word, an HTML tag, a path or a longer token.
BEFORE, AFTER = r"(?<![\w/<>&-])", r"(?![\w/<>-])"
MOVE_RE = re.compile(rf"{BEFORE}({MOVE_TOKEN}){AFTER}")
LEAD = r"[\s*_`\"'(\[:=-]*(?:\d+\s*\.+\s*)?"  # decoration and a move number before the move
FINAL_RE = re.compile(rf"(?i:\bfinal\s+answer\b)(?:\s*(?i:is)\b)?{LEAD}({MOVE_TOKEN}){AFTER}")
JSON_RE = re.compile(r"\{[^{}]*?\"(?:move|best_move|bestmove|answer|final_answer)\"\s*:\s*"
                     r"\"([^\"\n]{1,24})\"")
MARKER_RE = re.compile(
    r"(?:(?i:\b(?:answer|best\s+move|my\s+move|move)\b)(?:\s*(?i:is)\b|\s*[:=]|\s*-+>?)"
    r"|(?i:\bplay(?:s|ing)?\b)\s*:?)"
    rf"{LEAD}({MOVE_TOKEN}){AFTER}")
CODE_RE = re.compile(r"```(?:\w+)?\s*([^`]+?)\s*```|`([^`\n]+)`")
BOLD_RE = re.compile(r"\*\*([^*\n]+)\*\*|__([^_\n]+)__")
THINK_RE = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
EXAMPLE_RE = re.compile(r"(?i:\b(?:e\.g\.|for example|for instance))[,:]?\s*\S+")
PLACEHOLDER_RE = re.compile(r"<move>", re.IGNORECASE)
HTML_TAG_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9]{0,9}(?:\s[^<>]{0,80})?/?>")
SAN_PARTS = re.compile(
    rf"(?P<piece>[KQRBN])?(?P<file>[a-h])?(?P<rank>[1-8])?(?P<x>x)?(?P<to>{SQUARE})"
    r"(?:=?(?P<promo>[QRBNqrbn]))?")
PIECE_WORD = r"(?i:(king|queen|rook|bishop|knight))"
NATURAL = (  # natural-language moves -> notation, applied in this order
    (re.compile(rf"\b{PIECE_WORD}\s+(?i:on\s+|from\s+)?({SQUARE})\s*(?i:to|-+>?)\s*({SQUARE})\b"),
     lambda m: f"{_letter(m[1])}{m[2]}-{m[3]}"),
    (re.compile(rf"\b{PIECE_WORD}\s+(?i:takes|captures)\s+(?i:on\s+)?({SQUARE})\b"),
     lambda m: f"{_letter(m[1])}x{m[2]}"),
    (re.compile(rf"\b{PIECE_WORD}\s+(?i:to\s+)?({SQUARE})\b"),
     lambda m: f"{_letter(m[1])}{m[2]}"),
    (re.compile(rf"\b([KQRBN])\s+({SQUARE})\b"), lambda m: f"{m[1]}{m[2]}"),
    (re.compile(rf"(?i:\bpawn\s+to)\s+({SQUARE})\b"), lambda m: m[1]),
    (re.compile(r"(?i:\bcastl\w*\s+(?:on\s+the\s+)?(?:queen\s*-?side|long))"), lambda m: "O-O-O"),
    (re.compile(r"(?i:\bcastl\w*\s+(?:on\s+the\s+)?(?:king\s*-?side|short))"), lambda m: "O-O"),
)
UNICODE = str.maketrans({"♔": "K", "♕": "Q", "♖": "R", "♗": "B", "♘": "N", "♚": "K",
                         "♛": "Q", "♜": "R", "♝": "B", "♞": "N", "×": "x", "–": "-",
                         "—": "-", "‑": "-", "…": "..."})


def _letter(word: str) -> str:
    return "N" if word.lower() == "knight" else word[0].upper()


@dataclass(frozen=True)
class Parsed:
    """A model's answer read as a move on a board."""

    text: str | None  # the move text the answer commits to, or None
    move: chess.Move | None  # the legal move, when it is one
    category: Category | None  # None when legal, else an illegal category or TRUNCATED
    detail: str  # why, in a few words
    found_by: str | None = None  # which kind of place held the move (final, json, ...)


def without_echo(answer: str, prompt: str | None) -> str:
    """The answer without reasoning blocks, echoes of the prompt and examples."""
    text = THINK_RE.sub("\n", answer.translate(UNICODE))
    if prompt:
        for line in filter(None, (line.strip() for line in prompt.splitlines())):
            if len(line) >= 12:
                text = text.replace(line, "\n")
        # A line that is a fragment of the prompt is an echo cut short.
        text = "\n".join(line for line in text.splitlines()
                         if len(line.strip()) < 8 or line.strip() not in prompt)
    text = EXAMPLE_RE.sub(" ", PLACEHOLDER_RE.sub(" ", text))
    return HTML_TAG_RE.sub(" ", text)


def _natural(text: str) -> str:
    for pattern, repl in NATURAL:
        text = pattern.sub(repl, text)
    return text


def _only_move(text: str) -> str | None:
    """The move when `text` is exactly one move (with decoration), else None."""
    stripped = re.sub(r"^\s*\d+\s*\.+\s*", "", text.strip().strip("*_`\"'.,;: "))
    found = MOVE_RE.fullmatch(stripped.strip().rstrip(".,;:)"))
    return _clean(found[1]) if found else None


def extract(answer: str, prompt: str | None = None,
            truncated: bool = False) -> tuple[str | None, str | None]:
    """The move text an answer commits to and the kind of place it was found (see the module
    docstring for the precedence); (None, None) when there is none."""
    text = _natural(without_echo(answer, prompt))
    if found := FINAL_RE.search(text):
        return _clean(found[1]), "final"
    for found in JSON_RE.finditer(text):
        if move := _only_move(_natural(found[1])):
            return move, "json"
    if truncated:
        return None, None  # unfinished reasoning is not a commitment
    if found := MARKER_RE.search(text):
        return _clean(found[1]), "marker"
    for kind, pattern in (("code", CODE_RE), ("bold", BOLD_RE)):
        for found in pattern.finditer(text):
            if move := _only_move(next(g for g in found.groups() if g)):
                return move, kind
    lines = [line for line in text.splitlines() if line.strip()]
    for candidate in (text, *lines[:1], *lines[-1:]):
        if move := _only_move(candidate):
            return move, "bare"
    return None, None


def _clean(token: str) -> str:
    token = token.strip().rstrip("!?.,;:)").strip("*_`\"'")
    if re.fullmatch(r"[O0o]-[O0o](?:-[O0o])?[+#]?", token):
        token = token.upper().replace("0", "O")
    return token


def parse(answer: str, board: chess.Board, prompt: str | None = None,
          truncated: bool = False, filtered: bool = False) -> Parsed:
    """The committed move of an answer, legal or classified by what is wrong with it.

    `prompt` is the text the model was asked (its echoes are never the answer); `truncated`
    says the reply was cut by the token limit, `filtered` that the provider's content filter
    stopped it (finish_reason "content_filter"). Neither an empty nor a filtered reply is a
    notation error: both are EMPTY.
    """
    if filtered:
        return Parsed(None, None, Category.EMPTY, "withheld by the provider's content filter")
    if not answer.strip():
        return Parsed(None, None, Category.EMPTY, "empty reply")
    text, found_by = extract(answer, prompt, truncated)
    if text is None:
        if truncated:
            return Parsed(None, None, Category.TRUNCATED, "cut by the token limit before an answer")
        return Parsed(None, None, Category.FORMAT, "no move found")
    parsed = classify(text, board)
    return Parsed(parsed.text, parsed.move, parsed.category, parsed.detail, found_by)


def classify(text: str, board: chess.Board) -> Parsed:
    """A move text (UCI, long algebraic or SAN) on a board: the legal move, or the failure
    category."""
    lan = LAN_RE.fullmatch(text)
    if lan:
        return _classify_lan(text, lan, board)
    match = UCI_RE.fullmatch(text)
    if match:
        return _classify_uci(text, match, board)
    try:
        return Parsed(text, board.parse_san(text), None, "legal")
    except chess.AmbiguousMoveError:
        return Parsed(text, None, Category.AMBIGUOUS, "SAN fits several legal moves")
    except chess.IllegalMoveError:
        return _classify_san(text, board)
    except chess.InvalidMoveError:
        return Parsed(text, None, Category.FORMAT, "not chess notation")


def _classify_lan(text: str, lan: re.Match[str], board: chess.Board) -> Parsed:
    """Long algebraic (e2-e4, Ng1-f3, e4xd5): the named piece must stand on the from-square."""
    uci = lan["frm"] + lan["to"] + (lan["promo"] or "").lower()
    piece = board.piece_at(chess.parse_square(lan["frm"]))
    named = chess.PIECE_SYMBOLS.index(lan["piece"].lower()) if lan["piece"] else chess.PAWN
    if lan["piece"] and piece is not None and piece.color == board.turn \
            and piece.piece_type != named:
        return Parsed(text, None, Category.STATE,
                      f"no {chess.piece_name(named)} of ours on {lan['frm']}")
    match = UCI_RE.fullmatch(uci)
    if match is None:  # the long algebraic pattern's squares always make UCI; kept for safety
        return Parsed(text, None, Category.FORMAT, f"{uci!r} is not a move")
    parsed = _classify_uci(uci, match, board)
    return Parsed(text, parsed.move, parsed.category, parsed.detail)


def _classify_uci(text: str, match: re.Match[str], board: chess.Board) -> Parsed:
    move = chess.Move.from_uci(text.lower())
    if move in board.legal_moves:
        return Parsed(text, move, None, "legal")
    piece = board.piece_at(move.from_square)
    if piece is None:
        return Parsed(text, None, Category.STATE, "no piece on the from-square")
    if piece.color != board.turn:
        return Parsed(text, None, Category.STATE, "the opponent's piece")
    if not match.group(3) and piece.piece_type == chess.PAWN:
        promoted = chess.Move(move.from_square, move.to_square, chess.QUEEN)
        if promoted in board.legal_moves:
            return Parsed(text, None, Category.FORMAT, "promotion without a piece")
    if board.is_castling(move) or (piece.piece_type == chess.KING
                                   and abs(move.to_square - move.from_square) == 2):
        return Parsed(text, None, Category.RULE, _castling_problem(board, move))
    return Parsed(text, None, Category.RULE, _rule_problem(board, move))


def _classify_san(text: str, board: chess.Board) -> Parsed:
    if text.startswith("O-O"):
        side = chess.C1 if text.startswith("O-O-O") else chess.G1
        king = board.king(board.turn)
        to = side if board.turn == chess.WHITE else chess.square_mirror(side)
        if king is None:
            return Parsed(text, None, Category.STATE, "no king")
        return Parsed(text, None, Category.RULE, _castling_problem(board, chess.Move(king, to)))
    parts = SAN_PARTS.fullmatch(text.rstrip("+#!?"))
    if parts is None:
        return Parsed(text, None, Category.FORMAT, "not chess notation")
    piece_type = chess.PIECE_SYMBOLS.index(parts["piece"].lower()) if parts["piece"] else 1
    to = chess.parse_square(parts["to"])
    if piece_type == chess.PAWN and not parts["x"]:
        # A pawn push starts on its destination's file: with no pawn of ours there, the
        # answer sees another board.
        file = parts["to"][0]
        if not any(chess.square_file(sq) == ord(file) - 97
                   for sq in board.pieces(chess.PAWN, board.turn)):
            return Parsed(text, None, Category.STATE, f"no pawn of ours on the {file}-file")
    ours = [sq for sq in board.pieces(piece_type, board.turn)
            if (not parts["file"] or chess.square_file(sq) == ord(parts["file"]) - 97)
            and (not parts["rank"] or chess.square_rank(sq) == int(parts["rank"]) - 1)]
    if not ours:
        return Parsed(text, None, Category.STATE,
                      f"no {chess.piece_name(piece_type)} of ours there")
    if piece_type == chess.PAWN and not parts["promo"] and chess.square_rank(to) in (0, 7):
        return Parsed(text, None, Category.FORMAT, "promotion without a piece")
    promo = chess.PIECE_SYMBOLS.index(parts["promo"].lower()) if parts["promo"] else None
    problems = {_rule_problem(board, chess.Move(sq, to, promo)) for sq in ours}
    return Parsed(text, None, Category.RULE, sorted(problems)[0])


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
