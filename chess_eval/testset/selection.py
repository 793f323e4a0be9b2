"""Step 03's work: fill the game leaves of the tree, one position per game, probing sparingly.

Games of each Elo bucket are visited in the order of a salted hash of their id (the seed's
`rand_key`). For each game the moves are replayed and one ply is drawn among the eligible
plies whose (phase, side) leaf can still take a position of the type a cheap static test
predicts (`tactics.is_calm`). By default the draw favours the scarce leaves: a ply's weight
is its leaf's free room over the plies seen so far that could serve that leaf, so a game
that reaches a rare leaf (an endgame, say) gives its position there rather than to the
middlegame that every game offers (`Draw.UNIFORM`: each open ply alike, the earlier rule).
Only the drawn ply is probed. Candidates are made
in rounds that never reserve more than a leaf's free room; the probes of a round run on all
engines at once and are committed in candidate order, so the result does not depend on the
number of workers.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

import chess
import chess.engine
from tqdm import tqdm

from chess_eval import tactics
from chess_eval.cluster import EngineCluster
from chess_eval.engine import Engine
from chess_eval.phase import phase
from chess_eval.position import (
    MAX_HALFMOVE_CLOCK,
    castling_rights,
    fen4,
    hash_bucket,
    is_eligible,
    pos_id,
    side_name,
)
from chess_eval.records import Counter, Probe
from chess_eval.testset.probecache import ProbeCache
from chess_eval.testset.tree import ELO_BUCKETS, Leaf

log = logging.getLogger(__name__)


class Draw(StrEnum):
    """How a game's ply is drawn among its open plies."""

    SCARCITY = "scarcity"  # weight: the leaf's free room over its supply of plies so far
    UNIFORM = "uniform"  # every open ply alike (reservoir sampling)


@dataclass(frozen=True)
class SelectConfig:
    """Parameters of a selection run."""

    seed: int  # drives the game order and the ply draws
    targets: dict[Leaf, int]  # positions wanted per leaf
    mate_share: float = 0.04  # at most this share of all targeted positions may be mates
    max_per_player: int = 0  # positions from games of any one player at most; 0: no cap
    draw: Draw = Draw.SCARCITY  # how a game's ply is drawn among its open plies


@dataclass(frozen=True)
class Game:
    """The columns of a stored game that selection needs."""

    id: str
    site: str
    white: str
    black: str
    elo_bucket: str
    avg_elo: float
    white_elo: int
    black_elo: int
    tc_class: str
    movetext: str


@dataclass(frozen=True)
class Candidate:
    """A drawn ply of a game, waiting for its probe."""

    game: Game
    ply: int  # half-moves played before the position
    fen: str  # full FEN, en passant only when legal
    fen4: str
    pos_id: str
    phase: str
    side: str
    predicted: str  # type guessed by is_calm; the probe decides the real one
    played: chess.Move  # the move the human played next
    history: tuple[str, ...]  # SAN moves from the start to the position

    def leaf(self, type_name: str) -> Leaf:
        """The leaf this position belongs to with the given type."""
        return (self.game.elo_bucket, self.phase, type_name, self.side)


@dataclass
class Selection:
    """Selected positions and what it took to get them."""

    rows: list[dict[str, object]] = field(default_factory=list)
    filled: dict[Leaf, int] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)  # probes, rejections, skipped games
    # Candidates turned away by the per-player cap, by the leaf their type was predicted for.
    player_capped: dict[Leaf, int] = field(default_factory=dict)
    players: dict[str, int] = field(default_factory=dict)  # selected positions per player


# The light probe of the tactical/quiet labeling: depth 12, MultiPV 4.
PROBE_LIMIT = chess.engine.Limit(depth=12)
PROBE_MULTIPV = 4


def light_probe(engine: Engine, fens: tuple[str, str]) -> Probe:
    """The task a worker runs: the light probe of one position (full FEN, FEN4)."""
    lines = engine.ranked_moves(chess.Board(fens[0]), PROBE_LIMIT, PROBE_MULTIPV)
    return Probe(fen4=fens[1], lines=lines)


def rand_key(seed: int, game_id: str) -> str:
    """The deterministic shuffle key of a game."""
    return hashlib.sha256(f"{seed}:{game_id}".encode()).hexdigest()


def _rng(seed: int, game_id: str) -> random.Random:
    return random.Random(int(rand_key(seed, "ply:" + game_id)[:16], 16))


def reservoir_pick(items: Iterator[int], rng: random.Random) -> int | None:
    """One item drawn uniformly from a stream (reservoir sampling with k = 1)."""
    chosen = None
    for seen, item in enumerate(items, start=1):
        if rng.randrange(seen) == 0:
            chosen = item
    return chosen


def weighted_pick(weights: list[float], rng: random.Random) -> int:
    """An index drawn with probability proportional to its weight (uniform when all are
    zero): one draw of the seeded generator, so the same weights give the same index."""
    total = sum(weights)
    if total <= 0:
        return rng.randrange(len(weights))
    point = rng.random() * total
    for index, weight in enumerate(weights):
        point -= weight
        if point < 0:
            return index
    return max(i for i, w in enumerate(weights) if w > 0)


def _side_at(ply: int) -> str:
    """The side to move after `ply` half-moves of a game from the initial position."""
    return side_name(ply % 2 == 0)


class Selector:
    """Runs the rounds of candidate drawing, probing and committing."""

    def __init__(self, config: SelectConfig, pool: EngineCluster, cache: ProbeCache) -> None:
        self.config = config
        self.pool = pool
        self.cache = cache
        self.result = Selection(filled=dict.fromkeys(config.targets, 0))
        self.used: set[str] = set()
        self.mates = 0
        self.mate_cap = int(config.mate_share * sum(config.targets.values()))
        self.load: dict[str, int] = {}  # per player: selected plus candidates in flight
        # Per leaf: the open plies predicted for it in the games replayed so far, the
        # leaf's supply in the scarcity draw (a running count: the same games in the same
        # order give the same weights, whatever the number of workers).
        self.supply: dict[Leaf, int] = {}

    def room(self, leaf: Leaf, pending: dict[Leaf, int]) -> int:
        """Free places of a leaf after the pending candidates."""
        return self.config.targets.get(leaf, 0) - self.result.filled[leaf] - pending.get(leaf, 0)

    def run(self, games: dict[str, Iterable[Game]]) -> Selection:
        """Fill the leaves from the games of each bucket (each in rand_key order)."""
        queues = {bucket: iter(games.get(bucket, [])) for bucket in ELO_BUCKETS}
        total = sum(self.config.targets.values())
        with tqdm(total=total, unit="pos", desc="select games", disable=None) as bar:
            while True:
                candidates = [c for b in ELO_BUCKETS for c in self._draw(b, queues[b])]
                if not candidates:
                    break
                probes = self._probes(candidates, bar)
                for candidate in candidates:
                    before = len(self.result.rows)
                    self._commit(candidate, probes[candidate.fen])
                    bar.update(len(self.result.rows) - before)
        return self.result

    def _probes(self, candidates: list[Candidate], bar: tqdm) -> dict[str, Probe]:
        """Probes of the candidates by FEN: from the cache, else from the engines in
        parallel, each committed to the cache as it finishes (Ctrl-C keeps them)."""
        probes = {c.fen: p for c in candidates if (p := self.cache.get(c.fen)) is not None}
        missing = [c for c in candidates if c.fen not in probes]
        self.result.counts.add("engine_probes", len(missing))
        by_fen = {c.fen: c for c in missing}
        # Tasks carry the two FENs only, not the candidate's game and history.
        work = self.pool.as_completed(light_probe, [(c.fen, c.fen4) for c in missing])
        for done, ((fen, _), probe) in enumerate(work, start=1):
            candidate = by_fen[fen]
            self.cache.put(candidate.fen, probe)
            self.cache.commit()
            probes[candidate.fen] = probe
            bar.set_postfix_str(f"probing {done}/{len(missing)} of this round", refresh=False)
        return probes

    def _draw(self, bucket: str, games: Iterator[Game]) -> list[Candidate]:
        """Candidates of one round for a bucket: at most the free room of each leaf."""
        pending: dict[Leaf, int] = {}
        drawn: list[Candidate] = []
        leaves = [leaf for leaf in self.config.targets if leaf[0] == bucket]
        while any(self.room(leaf, pending) > 0 for leaf in leaves):
            game = next(games, None)
            if game is None:
                break
            candidate = self._candidate(game, pending)
            if candidate is None:
                continue
            if self._player_full(game):
                leaf = candidate.leaf(candidate.predicted)
                capped = self.result.player_capped
                capped[leaf] = capped.get(leaf, 0) + 1
                self.result.counts.add("player_cap")
                continue
            self._hold(game, 1)
            pending[candidate.leaf(candidate.predicted)] = (
                pending.get(candidate.leaf(candidate.predicted), 0) + 1)
            self.used.add(candidate.pos_id)
            drawn.append(candidate)
        return drawn

    def _player_full(self, game: Game) -> bool:
        cap = self.config.max_per_player
        return cap > 0 and any(self.load.get(p, 0) >= cap for p in _players(game))

    def _hold(self, game: Game, n: int) -> None:
        for player in _players(game):
            self.load[player] = self.load.get(player, 0) + n

    def _candidate(self, game: Game, pending: dict[Leaf, int]) -> Candidate | None:
        """Replay a game and draw one ply whose predicted leaf has room, or None."""
        board = chess.Board()
        moves: list[chess.Move] = []
        open_plies: list[tuple[int, str, str]] = []
        sans = game.movetext.split()
        try:
            for ply, san in enumerate(sans):
                move = board.parse_san(san)
                entry = self._open_ply(game, board, ply, pending)
                if entry is not None:
                    open_plies.append(entry)
                moves.append(move)
                board.push(move)
        except ValueError:
            self.result.counts.add("game_illegal_move")
            return None
        rng = _rng(self.config.seed, game.id)
        for ply_entry in open_plies:
            leaf = (game.elo_bucket, ply_entry[1], ply_entry[2], _side_at(ply_entry[0]))
            self.supply[leaf] = self.supply.get(leaf, 0) + 1
        while open_plies:
            index = self._pick(game, open_plies, pending, rng)
            ply, phase_name, predicted = open_plies.pop(index)
            candidate = self._make(game, moves, sans, ply, phase_name, predicted)
            if candidate is not None:
                return candidate
        self.result.counts.add("game_without_open_ply")
        return None

    def _pick(self, game: Game, open_plies: list[tuple[int, str, str]],
              pending: dict[Leaf, int], rng: random.Random) -> int:
        """Index of the open ply to try: uniform, or weighted by its leaf's scarcity."""
        if self.config.draw == Draw.UNIFORM:
            index = reservoir_pick(iter(range(len(open_plies))), rng)
            assert index is not None
            return index
        leaves = [(game.elo_bucket, phase_name, predicted, _side_at(ply))
                  for ply, phase_name, predicted in open_plies]
        weights = [max(self.room(leaf, pending), 0) / self.supply[leaf] for leaf in leaves]
        return weighted_pick(weights, rng)

    def _open_ply(self, game: Game, board: chess.Board, ply: int,
                  pending: dict[Leaf, int]) -> tuple[int, str, str] | None:
        if board.halfmove_clock >= MAX_HALFMOVE_CLOCK:
            return None
        phase_name = phase(board, ply)
        side = side_name(board.turn)
        rooms = {t: self.room((game.elo_bucket, phase_name, t, side), pending)
                 for t in tactics.TYPES}
        if not any(r > 0 for r in rooms.values()):
            return None
        predicted = tactics.QUIET if tactics.is_calm(board) else tactics.TACTICAL
        return (ply, phase_name, predicted) if rooms[predicted] > 0 else None

    def _make(self, game: Game, moves: list[chess.Move], sans: list[str], ply: int,
              phase_name: str, predicted: str) -> Candidate | None:
        board = chess.Board()
        for move in moves[:ply]:
            board.push(move)
        if not is_eligible(board):
            return None
        key = fen4(board)
        pid = pos_id(key)
        if pid in self.used:
            self.result.counts.add("duplicate_position")
            return None
        return Candidate(
            game=game, ply=ply, fen=board.fen(en_passant="legal"), fen4=key, pos_id=pid,
            phase=phase_name, side=side_name(board.turn), predicted=predicted,
            played=moves[ply], history=tuple(sans[:ply]),
        )

    def _commit(self, candidate: Candidate, probe: Probe) -> None:
        self.result.counts.add("probes")
        if self._accept(candidate, probe):
            for player in _players(candidate.game):
                self.result.players[player] = self.result.players.get(player, 0) + 1
        else:
            self._hold(candidate.game, -1)

    def _accept(self, candidate: Candidate, probe: Probe) -> bool:
        board = chess.Board(candidate.fen)
        type_name = tactics.label(board, probe, candidate.phase)
        if type_name is None:
            self.result.counts.add("rejected_ambiguous")
            return False
        leaf = candidate.leaf(type_name)
        if self.room(leaf, {}) <= 0:
            self.result.counts.add("rejected_leaf_full")
            return False
        mate = tactics.is_mate_line(probe)
        if mate and self.mates >= self.mate_cap:
            self.result.counts.add("rejected_mate_cap")
            return False
        self.mates += mate
        self.result.filled[leaf] += 1
        self.result.rows.append(_row(candidate, board, probe, type_name, mate))
        return True


def _players(game: Game) -> tuple[str, ...]:
    """The game's players by lower-cased name; unknown names ('', '?') are not counted."""
    return tuple(name.lower() for name in (game.white, game.black) if name not in ("", "?"))


def _row(candidate: Candidate, board: chess.Board, probe: Probe, type_name: str,
         mate: bool) -> dict[str, object]:
    game = candidate.game
    gap = tactics.gap(probe)
    return {
        "fen": candidate.fen, "fen4": candidate.fen4, "pos_id": candidate.pos_id,
        "hash_bucket": hash_bucket(candidate.fen4), "game_id": game.id, "game_url": game.site,
        "ply": candidate.ply, "elo_bucket": game.elo_bucket, "avg_elo": game.avg_elo,
        "white_elo": game.white_elo, "black_elo": game.black_elo, "tc_class": game.tc_class,
        "phase": candidate.phase, "type": type_name, "side": candidate.side,
        "legal_moves": board.legal_moves.count(), "castling": castling_rights(board),
        "played_move": candidate.played.uci(), "history": " ".join(candidate.history),
        "probe_best": probe.lines[0].move.uci(), "probe_gap": "" if gap is None else gap,
        "good_moves": tactics.good_move_count(probe), "mate": int(mate),
    }
