"""Maia-1 nets played at one node: the policy's most likely legal move, as the nets' authors
play them to imitate humans.

A Maia-1 net is a Leela Chess Zero (lc0) weight file: a gzipped protobuf holding a residual
tower of 3x3 convolutions with squeeze-excitation, a convolutional policy head and a value head.
This module reads the file, encodes a position as lc0's classical 112 input planes (eight
positions of history, castling rights, side to move, the fifty-move counter) and evaluates the
policy head with numpy in float64. No search: one node is the policy alone, so the move is
a pure function of the game so far, and a game replays from its key.

The weights are GPL-3 (the Maia authors'); they are downloaded, never shipped: see `net_path`.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import chess
import numpy as np
import numpy.typing as npt
import requests

from chess_eval.errors import PlayerError
from chess_eval.shipped import CHECKOUT, DATA

log = logging.getLogger(__name__)

Array = npt.NDArray[np.float64]

NETS = (1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900)  # the Maia-1 training bands
# The Maia authors' public repository, at a pinned commit: the files are fetched from there.
COMMIT = "e464f161c295f4246c2082f7b36d646d9bd14e7c"
SOURCE = f"https://raw.githubusercontent.com/CSSLab/maia-chess/{COMMIT}/maia_weights"
MIRROR = "MAIA_MIRROR"  # a URL to fetch the files from instead (the same names under it)
SHA256 = {  # each file as published at COMMIT
    1100: "e1cf1cd0c96b8a4fa6a275f4b9fd54ed1ffebf9fe44641b9fceded310e9619c4",
    1200: "ead4ba953f233ae732999ebc1e2b675378148527ebcfad2f0acbc5e4c224d98e",
    1300: "36195f87bf4761834baa0bf87472b18509a7261a9d7d6f1a8443261369a733f2",
    1400: "d5353ea6766356dad2d28920c6692f37a5f30963767f1a3105d33b4d0af011e8",
    1500: "35ab6f20421d59e1df3b17c5a5016947af4c6761368ef84044a9a9c7619a9a00",
    1600: "d2c9e5948581acf4b9fc0b1e720c5dc0fe64ce80cfc4a239d3f8a42e1176c876",
    1700: "d277eacd792d340a30abb464dc65127254e65cac57abca17facc469889b96478",
    1800: "0031ad7c4256b1fd09fbebd28418d644d68b26cd2a45df4967ccf5c7ec9c4965",
    1900: "e2f565f42d7cd9f122557e6dc4eb84e5bbaedceda1d404dc485d3611c7c97a12",
}
ENV = "MAIA_NETS"  # a folder holding the nets, looked in before the product's own
# `make maia` fills data/maia/ in a clone; an installed wheel downloads into the user's cache
# (never into site-packages, and never into the wheel: the nets are GPL-3).
DATA_DIR = DATA / "maia" if CHECKOUT else Path(
    os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chess_eval" / "maia"
TIMEOUT_S = 60.0  # connect and read timeout of a download
HISTORY = 8  # positions of history the classical input holds
EPSILON = 1e-5  # lc0's batch-norm epsilon (the file stores variances)
# A logit is rounded to this many decimals before the argmax, ties going to the first move in
# UCI order: floating-point sums that differ in their last bits between machines then
# still pick the same move.
DECIMALS = 9


def nets_dir() -> Path:
    """Where the nets are looked for: $MAIA_NETS where set, else the product's data folder."""
    return Path(os.environ[ENV]) if os.environ.get(ENV) else DATA_DIR


def net_path(net: int) -> Path:
    """The checked file of net `net` (1100 ... 1900), downloaded on first use when it is not
    there; PlayerError in one line for an unknown net, a failed download or an altered file."""
    if net not in SHA256:
        raise PlayerError(f"no Maia-1 net {net}: choose one of {', '.join(map(str, NETS))}")
    path = nets_dir() / f"maia-{net}.pb.gz"
    if not path.exists():
        if os.environ.get(ENV):
            raise PlayerError(f"{path} is missing: {ENV} names a folder without Maia net {net} "
                              f"(unset {ENV} to use, and fill, {DATA_DIR})")
        fetch(net, path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256[net]:
        raise PlayerError(f"{path} is altered: sha256 {digest[:12]}... is not the published "
                          f"{SHA256[net][:12]}... (delete it and run 'make maia')")
    return path


def fetch(net: int, path: Path) -> None:
    """Download one net from the Maia authors' repository at COMMIT to `path` (through a
    temporary name, checked before it is renamed)."""
    url = f"{os.environ.get(MIRROR) or SOURCE}/maia-{net}.pb.gz"
    log.info("downloading %s", url)
    try:
        response = requests.get(url, timeout=TIMEOUT_S)
        response.raise_for_status()
    except requests.RequestException as exc:
        raise PlayerError(f"cannot download Maia net {net} from {url}: {exc}") from exc
    if hashlib.sha256(response.content).hexdigest() != SHA256[net]:
        raise PlayerError(f"the download of {url} does not match its published sha256")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(response.content)
    partial.replace(path)


def fetch_all() -> list[Path]:
    """Every net present and checked (`make maia`)."""
    return [net_path(net) for net in NETS]


# --- the weight file: lc0's protobuf, read field by field -------------------------------------

def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(data: bytes) -> Iterator[tuple[int, bytes | int]]:
    """(field number, value) of a protobuf message: bytes for length-delimited, else int."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: bytes | int
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i:i + size], i + size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, i = int.from_bytes(data[i:i + width], "little"), i + width
        else:
            raise PlayerError(f"not an lc0 weight file (wire type {wire})")
        yield number, value


def _message(data: bytes) -> dict[int, list[bytes]]:
    found: dict[int, list[bytes]] = {}
    for number, value in _fields(data):
        if isinstance(value, bytes):
            found.setdefault(number, []).append(value)
    return found


def _layer(data: bytes | None) -> Array:
    """A Layer: 16-bit values linear between its min and max (lc0's LINEAR16 encoding)."""
    if not data:
        return np.zeros(0)
    low = high = 0.0
    params = b""
    for number, value in _fields(data):
        if number == 1 and isinstance(value, int):
            low = struct.unpack("<f", value.to_bytes(4, "little"))[0]
        elif number == 2 and isinstance(value, int):
            high = struct.unpack("<f", value.to_bytes(4, "little"))[0]
        elif number == 3 and isinstance(value, bytes):
            params = value
    raw = np.frombuffer(params, dtype="<u2").astype(np.float64)
    return np.asarray(low + (high - low) * raw / 65535.0)


@dataclass(frozen=True)
class Conv:
    """A 3x3 convolution with its batch norm folded in: y = W * x + b."""

    weight: Array  # (out, in * 9), columns in (in, ky, kx) order as im2col lays them out
    bias: Array  # (out,)

    @staticmethod
    def read(data: bytes) -> Conv:
        """A ConvBlock message, batch norm folded as lc0 folds it."""
        fields = {n: v[0] for n, v in _message(data).items()}
        weight = _layer(fields.get(1))
        bias, means, variances, gammas, betas = (_layer(fields.get(n)) for n in range(2, 7))
        outputs = max(len(bias), len(means))
        bias = bias if len(bias) else np.zeros(outputs)
        weight = weight.reshape(outputs, -1)
        if len(means):
            scale = (gammas if len(gammas) else np.ones(outputs)) / np.sqrt(variances + EPSILON)
            shift = betas if len(betas) else np.zeros(outputs)
            weight = weight * scale[:, None]
            bias = (bias - means) * scale + shift
        return Conv(weight, bias)

    def __call__(self, x: Array) -> Array:
        """(in, 8, 8) -> (out, 8, 8)."""
        return (self.weight @ _im2col(x) + self.bias[:, None]).reshape(-1, 8, 8)


# For each of the 3x3 offsets and each square, its index in a board padded to 10x10.
_PATCH = np.array([[(rank + dy) * 10 + file + dx for rank in range(8) for file in range(8)]
                   for dy in range(3) for dx in range(3)])


def _im2col(x: Array) -> Array:
    """(in, 8, 8) -> (in * 9, 64): each square's 3x3 neighbourhood, zero-padded."""
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1))).reshape(x.shape[0], 100)
    return padded[:, _PATCH].reshape(x.shape[0] * 9, 64)


@dataclass(frozen=True)
class Residual:
    """Two convolutions and a squeeze-excitation unit around a skip connection."""

    conv1: Conv
    conv2: Conv
    se: tuple[Array, Array, Array, Array]  # w1 (se, c), b1, w2 (2c, se), b2

    def __call__(self, x: Array) -> Array:
        y = self.conv2(np.maximum(self.conv1(x), 0.0))
        w1, b1, w2, b2 = self.se
        squeezed = np.maximum(w1 @ y.mean(axis=(1, 2)) + b1, 0.0)
        gamma, beta = np.split(w2 @ squeezed + b2, 2)
        excited = y / (1.0 + np.exp(-gamma))[:, None, None] + beta[:, None, None]
        out: Array = np.maximum(excited + x, 0.0)
        return out


@dataclass(frozen=True)
class Net:
    """The input convolution, the residual tower and the convolutional policy head."""

    name: str  # maia-N
    input: Conv
    tower: tuple[Residual, ...]
    policy1: Conv
    policy: Conv  # to 80 planes: 56 queen-like, 8 knight, 9 under-promotion, 7 unused

    @staticmethod
    def load(path: Path) -> Net:
        """Read an lc0 weight file of the Maia-1 kind (classical input, convolutional policy);
        PlayerError in one line for anything else."""
        try:
            top = _message(gzip.decompress(path.read_bytes()))
            weights = _message(top[10][0])
            tower = tuple(_residual(block) for block in weights[2])
            return Net(path.name.removesuffix(".pb.gz"), Conv.read(weights[1][0]), tower,
                       Conv.read(weights[11][0]), Conv.read(weights[3][0]))
        except (OSError, KeyError, IndexError, ValueError, struct.error) as exc:
            raise PlayerError(f"{path} is not a Maia-1 (lc0) weight file: {exc}") from exc

    def logits(self, planes: Array) -> Array:
        """The policy head's (80, 8, 8) output for (112, 8, 8) input planes."""
        x = np.maximum(self.input(planes), 0.0)
        for block in self.tower:
            x = block(x)
        return self.policy(np.maximum(self.policy1(x), 0.0))


def _residual(data: bytes) -> Residual:
    fields = _message(data)
    se = {n: _layer(v[0]) for n, v in _message(fields[3][0]).items()}
    channels = len(se[4]) // 2
    return Residual(Conv.read(fields[1][0]), Conv.read(fields[2][0]),
                    (se[1].reshape(-1, channels), se[2], se[3].reshape(2 * channels, -1),
                     se[4]))


@cache
def load_net(net: int) -> Net:
    """Net `net`, read once per process."""
    return Net.load(net_path(net))


# --- positions in, moves out ------------------------------------------------------------------

PIECES = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
QUEEN_DIRECTIONS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
KNIGHT_DIRECTIONS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
UNDER_PROMOTIONS = (chess.ROOK, chess.BISHOP, chess.QUEEN)  # a knight's is the plain move


def _history(board: chess.Board) -> list[tuple[chess.Board, bool]]:
    """The current position and up to seven before it, newest first, each with whether it
    occurred earlier in the game; positions before a game that started from a set-up
    position are that position repeated (lc0's default), before the initial position none."""
    replay = board.copy()
    found: list[tuple[chess.Board, bool]] = []
    while True:
        found.append((replay.copy(stack=False), replay.is_repetition(2)))
        if len(found) == HISTORY or not replay.move_stack:
            break
        replay.pop()
    if len(found) < HISTORY and replay.board_fen() != chess.STARTING_BOARD_FEN:
        first = _before_double_push(replay)
        found += [(first, False)] * (HISTORY - len(found))
    return found


def _before_double_push(board: chess.Board) -> chess.Board:
    """A set-up position whose en-passant square says a pawn just moved two squares, with
    that pawn put back (what lc0 shows in the history it fills in)."""
    square = board.ep_square
    if square is None:
        return board
    board = board.copy(stack=False)
    step = 8 if board.turn == chess.WHITE else -8  # the pawn that moved is the other side's
    landed, origin = square - step, square + step
    pawn = board.remove_piece_at(landed)
    board.set_piece_at(origin, pawn)
    return board


def planes(board: chess.Board) -> Array:
    """lc0's classical 112 input planes for the side to move (the board mirrored top to
    bottom when Black moves, so the mover always plays up the board)."""
    us = board.turn
    x = np.zeros((112, 8, 8))
    for step, (past, repeated) in enumerate(_history(board)):
        base = 13 * step
        for side, offset in ((us, 0), (not us, 6)):
            for index, piece in enumerate(PIECES):
                for square in past.pieces(piece, side):
                    rank = chess.square_rank(square)
                    x[base + offset + index, rank if us else 7 - rank,
                      chess.square_file(square)] = 1.0
        if repeated:
            x[base + 12] = 1.0
    rights = (board.has_queenside_castling_rights(us), board.has_kingside_castling_rights(us),
              board.has_queenside_castling_rights(not us),
              board.has_kingside_castling_rights(not us))
    for i, right in enumerate(rights):
        x[104 + i] = float(right)
    x[108] = float(us == chess.BLACK)
    x[109] = float(board.halfmove_clock)
    x[111] = 1.0
    return x


def policy_index(move: chess.Move, board: chess.Board) -> tuple[int, int, int]:
    """(plane, rank, file) of the policy output that scores `move`, in the mover's frame.
    Castling is the king moving onto its rook, as lc0 encodes it."""
    flip = board.turn == chess.BLACK
    start, end = move.from_square, move.to_square
    if board.is_castling(move) and not board.chess960:
        rook_file = 7 if chess.square_file(end) > chess.square_file(start) else 0
        end = chess.square(rook_file, chess.square_rank(start))
    x0, y0 = chess.square_file(start), chess.square_rank(start)
    x1, y1 = chess.square_file(end), chess.square_rank(end)
    if flip:
        y0, y1 = 7 - y0, 7 - y1
    dx, dy = x1 - x0, y1 - y0
    if move.promotion is not None and move.promotion != chess.KNIGHT:
        plane = 64 + 3 * (dx + 1) + UNDER_PROMOTIONS.index(move.promotion)
    elif (dx, dy) in KNIGHT_DIRECTIONS:
        plane = 56 + KNIGHT_DIRECTIONS.index((dx, dy))
    else:
        steps = max(abs(dx), abs(dy))
        plane = 7 * QUEEN_DIRECTIONS.index((int(np.sign(dx)), int(np.sign(dy)))) + steps - 1
    return plane, y0, x0


def move_scores(net: Net, board: chess.Board) -> dict[chess.Move, float]:
    """Each legal move's policy logit."""
    out = net.logits(planes(board))
    return {move: float(out[policy_index(move, board)]) for move in board.legal_moves}


def best_move(net: Net, board: chess.Board) -> chess.Move:
    """The policy's most likely legal move (one node): ties, after rounding, to UCI order."""
    scores = move_scores(net, board)
    return max(sorted(scores, key=chess.Move.uci),
               key=lambda move: round(scores[move], DECIMALS))
