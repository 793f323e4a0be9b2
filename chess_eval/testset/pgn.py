"""Header-first filtering of PGN games: decide from the tags, touch the moves only if kept."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import NamedTuple, Protocol

from chess_eval.testset.tree import elo_bucket

READ_BLOCK = 1 << 22  # characters read from the PGN at a time


class Readable(Protocol):
    """A text stream as iter_games reads it: an open file, or a wrapper that counts."""

    def read(self, size: int = -1, /) -> str:
        """Up to `size` characters ('' at the end)."""
        ...
GAME_SPLIT = "\n[Event "

# Lichess's time-control classes: estimated duration = base + 40 x increment (seconds).
TC_LIMITS = ((29, "ultrabullet"), (179, "bullet"), (479, "blitz"), (1499, "rapid"))
KEPT_CLASSES = ("blitz", "rapid", "classical")
RESULTS = ("1-0", "0-1", "1/2-1/2")

# Drop reasons, in the order they are tested: a game is counted under the first that applies.
DROP_REASONS = (
    "corrupt_headers",  # no tags
    "cut_off",  # the text ends inside the headers (a source cut mid-game): no movetext at all
    "from_position",  # [Variant "From Position"] or a SetUp/FEN tag
    "variant",  # any other non-standard variant
    "casual",  # Event says casual, or says neither rated nor casual and has no RatingDiff
    "bot",  # a player's title is BOT: a bot's move is no human baseline
    "correspondence",  # TimeControl "-": correspondence or unlimited
    "bad_time_control",  # TimeControl not of the form base+increment
    "ultrabullet",
    "bullet",
    "missing_rating",  # WhiteElo or BlackElo absent or not a number
    "unfinished",  # Result "*" or missing
    "abandoned",  # no moves and Termination "Abandoned" (Lichess: left before a move)
    "no_moves",  # the game has no moves
    "truncated",  # movetext does not end with the header's result
    "corrupt_moves",  # movetext has tokens that are not chess moves
)

HEADER_RE = re.compile(r'^\[(\w+)\s+"(.*)"\]\s*$', re.M)
COMMENT_RE = re.compile(r"\{[^}]*\}|;[^\n]*")
VARIATION_RE = re.compile(r"\([^()]*\)")
ANNOTATION_RE = re.compile(r"\$\d+|[?!]+")
MOVE_NUMBER_RE = re.compile(r"\d+\.(?:\.\.)?")
SAN = (
    r"(?:[NBRQK][a-h]?[1-8]?x?[a-h][1-8]|[a-h](?:x[a-h])?[1-8](?:=?[NBRQ])?"
    r"|O-O(?:-O)?|0-0(?:-0)?)[+#]?"
)
SAN_RE = re.compile(SAN)


class GameRecord(NamedTuple):
    """A kept game, as stored in games.db (a tuple, so rows insert without conversion)."""

    id: str
    site: str
    white: str  # player names: the per-player cap counts them
    black: str
    white_elo: int
    black_elo: int
    avg_elo: float
    elo_bucket: str
    time_control: str
    tc_class: str
    eco: str
    opening: str
    result: str
    termination: str
    ply_count: int
    movetext: str  # SAN moves separated by single spaces: no comments, numbers or NAGs


def time_control_class(time_control: str) -> str | None:
    """Lichess speed of a TimeControl tag; 'correspondence' for '-', None when unparseable."""
    if time_control in ("-", ""):
        return "correspondence"
    base, plus, increment = time_control.partition("+")
    if not plus or not base.isdigit() or not increment.isdigit():
        return None
    estimate = int(base) + 40 * int(increment)
    for limit, name in TC_LIMITS:
        if estimate < limit:
            return name
    return "classical"


def iter_games(handle: Readable, block: int = READ_BLOCK) -> Iterator[str]:
    """The text of each game of a PGN stream, in order, reading a bounded block at a time."""
    carry = ""
    while chunk := handle.read(block):
        pieces = (carry + chunk).split(GAME_SPLIT)
        carry = pieces.pop()
        for i, piece in enumerate(pieces):
            if piece.strip():
                yield piece if (i == 0 and piece.startswith("[Event ")) else "[Event " + piece
        if pieces:
            carry = "[Event " + carry if not carry.startswith("[Event ") else carry
    if carry.strip():
        yield carry


def is_rated(tags: dict[str, str]) -> bool:
    """Rated by the Event tag ('Rated Blitz game', 'rated blitz game'); an event that says
    neither (an arena's name, in API exports) is rated when it carries RatingDiff tags."""
    event = tags.get("Event", "").lower()
    if "casual" in event:
        return False
    if "rated" in event:
        return True
    return "WhiteRatingDiff" in tags or "BlackRatingDiff" in tags


def _header_reason(tags: dict[str, str]) -> str | None:
    variant = tags.get("Variant", "Standard").lower()
    if variant == "from position" or tags.get("SetUp") == "1" or "FEN" in tags:
        return "from_position"
    if variant not in ("standard", "normal"):
        return "variant"
    if not is_rated(tags):
        return "casual"
    if "BOT" in (tags.get("WhiteTitle"), tags.get("BlackTitle")):
        return "bot"
    tc_class = time_control_class(tags.get("TimeControl", ""))
    if tc_class is None:
        return "bad_time_control"
    if tc_class not in KEPT_CLASSES:
        return tc_class
    if not (tags.get("WhiteElo", "").isdigit() and tags.get("BlackElo", "").isdigit()):
        return "missing_rating"
    if tags.get("Result") not in RESULTS:
        return "unfinished"
    return None


CONTENT_TAGS = ("White", "Black", "UTCDate", "UTCTime", "WhiteElo", "BlackElo", "Result")


def game_id(tags: dict[str, str]) -> str:
    """The Lichess game id from GameId, the Site URL or LichessId; '' when none names one."""
    if tags.get("GameId"):
        return tags["GameId"]
    site = tags.get("Site", "")
    if "lichess.org/" in site:
        return site.rstrip("/").rsplit("/", 1)[-1]
    return tags.get("LichessId", "")


def content_id(tags: dict[str, str], tokens: list[str]) -> str:
    """An id for a game no tag identifies: 'sha-' + 16 hex of SHA-256 over the players, UTC
    date and time, ratings, result and the moves (so rewrapped copies get the same id)."""
    text = "\n".join(tags.get(t, "") for t in CONTENT_TAGS) + "\n" + " ".join(tokens)
    return "sha-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def site_url(tags: dict[str, str]) -> str:
    """The game's URL: Site when it is one, else built from LichessId, else ''."""
    site = tags.get("Site", "")
    if site.startswith("http"):
        return site
    return f"https://lichess.org/{tags['LichessId']}" if tags.get("LichessId") else ""


def clean_moves(movetext: str) -> list[str]:
    """Tokens of a movetext without comments, variations, move numbers, NAGs and glyphs.

    The result token, if any, stays last. Cheap checks guard each regex pass because most
    Lichess movetext has no variations or annotations and this runs once per kept game.
    """
    text = COMMENT_RE.sub(" ", movetext) if "{" in movetext or ";" in movetext else movetext
    while "(" in text:
        stripped = VARIATION_RE.sub(" ", text)
        if stripped == text:
            break
        text = stripped
    if "$" in text or "?" in text or "!" in text:
        text = ANNOTATION_RE.sub(" ", text)
    tokens = [token for token in text.split() if token[-1] != "."]
    if "." in "".join(tokens):
        # Move numbers glued to moves ("1.e4"): the slower general pass.
        tokens = MOVE_NUMBER_RE.sub(" ", text).split()
    return tokens


def is_san_sequence(tokens: list[str], known: set[str] | None = None) -> bool:
    """Whether every token is written like a SAN move (legality is checked on replay).
    `known`: tokens already seen to be SAN, added to here (the caller's, kept across its
    games: they repeat a few thousand distinct tokens, so the set difference in C and the
    regex only on new tokens is much cheaper than a regex pass)."""
    known = set() if known is None else known
    for token in set(tokens).difference(known):
        if not SAN_RE.fullmatch(token):
            return False
        known.add(token)
    return True


def _has_movetext(game: str) -> bool:
    """Whether anything follows the game's tags: a game cut off in its headers (a source's
    text ending inside or right after the tag section) ends on a tag line."""
    return not game.rstrip().rsplit("\n", 1)[-1].lstrip().startswith("[")


def classify(game: str, known: set[str] | None = None) -> tuple[str | None, GameRecord | None]:
    """(drop reason, None) for a dropped game, (None, record) for a kept one; `known`: as
    is_san_sequence's."""
    head, _, movetext = game.partition("\n\n")
    tags = dict(HEADER_RE.findall(head))
    if not tags:
        return "corrupt_headers", None
    if not _has_movetext(game):
        return "cut_off", None
    reason = _header_reason(tags)
    if reason:
        return reason, None
    tokens = clean_moves(movetext)
    result = tags["Result"]
    if tokens == [result] and tags.get("Termination") == "Abandoned":
        return "abandoned", None
    if not tokens or tokens[-1] != result:
        return ("no_moves" if not tokens else "truncated"), None
    if len(tokens) == 1:
        return "no_moves", None
    del tokens[-1]
    if not is_san_sequence(tokens, known):
        return "corrupt_moves", None
    moves = " ".join(tokens)
    white, black = int(tags["WhiteElo"]), int(tags["BlackElo"])
    avg = (white + black) / 2
    return None, GameRecord(
        id=game_id(tags) or content_id(tags, tokens), site=site_url(tags),
        white=tags.get("White", ""), black=tags.get("Black", ""),
        white_elo=white, black_elo=black, avg_elo=avg,
        elo_bucket=elo_bucket(avg), time_control=tags["TimeControl"],
        tc_class=time_control_class(tags["TimeControl"]) or "", eco=tags.get("ECO", ""),
        opening=tags.get("Opening", ""), result=result, termination=tags.get("Termination", ""),
        ply_count=len(tokens), movetext=moves,
    )
