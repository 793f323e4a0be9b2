"""Step 05's work: fill the puzzle leaves from the lowest-k candidates, verified by engine."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import chess
from tqdm import tqdm

from chess_eval.cluster import EngineCluster
from chess_eval.engine import Engine
from chess_eval.evaluation import DEFAULT_SETTING, EvalSetting, evaluate_moves
from chess_eval.grading import MATE_FLOOR
from chess_eval.position import castling_rights, fen4, hash_bucket, pos_id
from chess_eval.records import Counter
from chess_eval.testset.puzzles import Puzzle, lowest_k, parse
from chess_eval.testset.tree import Leaf

log = logging.getLogger(__name__)

VERIFY_MARGIN = 100  # the solution must beat the second-best move by this many cp
OVERSAMPLE = 4  # candidates kept per leaf place in the first pass; later passes widen it


@dataclass(frozen=True)
class PuzzleConfig:
    """Parameters of puzzle selection."""

    seed: int  # orders the candidates of each leaf
    targets: dict[Leaf, int]  # puzzles wanted per leaf
    mate_cap: int  # at most this many mate puzzles: the joint cap less the game mates
    motif_cap: int  # at most this many puzzles carrying any one motif theme
    setting: EvalSetting = DEFAULT_SETTING  # the grading setting used to verify


@dataclass
class PuzzleSelection:
    """Accepted puzzles with their verification figures, and counts of everything dropped."""

    rows: list[dict[str, object]] = field(default_factory=list)
    filled: dict[Leaf, int] = field(default_factory=dict)
    counts: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class Verdict:
    """What the engine said of a puzzle's first solution move."""

    best: str  # the engine's best move
    gap: int | None  # best minus second-best, cp; None with one legal move
    legal_moves: int
    mate: bool  # the best move forces mate


def verify(engine: Engine, puzzle: Puzzle, setting: EvalSetting) -> Verdict:
    """Evaluate every legal move of the puzzle position at the grading setting."""
    moves = evaluate_moves(engine, chess.Board(puzzle.fen), setting)
    gap = moves[0][1] - moves[1][1] if len(moves) > 1 else None
    return Verdict(best=moves[0][0].uci(), gap=gap, legal_moves=len(moves),
                   mate=moves[0][1] >= MATE_FLOOR)


def passes(puzzle: Puzzle, verdict: Verdict) -> str | None:
    """None when verified, else the drop reason."""
    if verdict.best != puzzle.solution[0]:
        return "verify_not_best"
    if verdict.gap is not None and verdict.gap < VERIFY_MARGIN:
        return "verify_near_tie"
    return None


class PuzzleSelector:
    """Streams candidates, then verifies them in rounds until each leaf is full."""

    def __init__(self, config: PuzzleConfig, pool: EngineCluster) -> None:
        self.config = config
        self.pool = pool
        self.result = PuzzleSelection(filled=dict.fromkeys(config.targets, 0))
        self.mates = 0
        self.motifs: dict[str, int] = {}

    def room(self, leaf: Leaf) -> int:
        """Free places of a leaf."""
        return self.config.targets[leaf] - self.result.filled[leaf]

    def run(self, read_rows: Callable[[], Iterable[list[str]]]) -> PuzzleSelection:
        """Select from the rows `read_rows()` streams (it may be called again for more)."""
        tried: set[str] = set()
        factor = OVERSAMPLE
        total = sum(self.config.targets.values())
        self._bar = tqdm(total=total, unit="puzzle", desc="verify puzzles", disable=None)
        with self._bar:
            return self._rounds(read_rows, tried, factor)

    def _rounds(self, read_rows: Callable[[], Iterable[list[str]]], tried: set[str],
                factor: int) -> PuzzleSelection:
        while True:
            keep = {leaf: (n * factor + 2 if self.room(leaf) > 0 else 0)
                    for leaf, n in self.config.targets.items()}
            counts = Counter()
            pools = lowest_k(read_rows(), self.config.seed, keep, counts)
            if factor == OVERSAMPLE:
                for reason, n in counts.counts.items():
                    self.result.counts.add(reason, n)
            exhausted = True
            for leaf, rows in pools.items():
                fresh = [r for r in rows if r[0] not in tried]
                tried.update(r[0] for r in fresh)
                self._fill(leaf, fresh)
                # A full candidate list means the leaf has more rows in the source.
                exhausted &= not (self.room(leaf) > 0 and len(rows) == keep[leaf])
            if exhausted:
                return self.result
            factor *= 4
            log.info("some leaves are short; widening the candidate pool %dx", factor)

    def _fill(self, leaf: Leaf, rows: list[list[str]]) -> None:
        queue = []
        for row in rows:
            puzzle, reason = parse(row)
            if puzzle is None:
                self.result.counts.add(reason or "malformed_row")
            elif puzzle.leaf != leaf:
                self.result.counts.add("phase_from_board_mismatch")
            else:
                queue.append(puzzle)
        while queue and self.room(leaf) > 0:
            batch = self._admissible(queue, self.room(leaf))
            if not batch:
                break
            task = functools.partial(verify, setting=self.config.setting)
            verdicts = self.pool.map(task, batch)
            for puzzle, verdict in zip(batch, verdicts, strict=True):
                self._commit(leaf, puzzle, verdict)

    def _admissible(self, queue: list[Puzzle], room: int) -> list[Puzzle]:
        """Pop up to `room` puzzles from the queue that the caps still allow."""
        batch: list[Puzzle] = []
        mates = self.mates
        motifs = dict(self.motifs)
        while queue and len(batch) < room:
            puzzle = queue.pop(0)
            if puzzle.is_mate and mates >= self.config.mate_cap:
                self.result.counts.add("mate_cap")
                continue
            if any(motifs.get(m, 0) >= self.config.motif_cap for m in puzzle.motifs):
                self.result.counts.add("motif_cap")
                continue
            mates += puzzle.is_mate
            for motif in puzzle.motifs:
                motifs[motif] = motifs.get(motif, 0) + 1
            batch.append(puzzle)
        return batch

    def _commit(self, leaf: Leaf, puzzle: Puzzle, verdict: Verdict) -> None:
        self.result.counts.add("verified")
        reason = passes(puzzle, verdict)
        if reason:
            self.result.counts.add(reason)
            return
        mate = puzzle.is_mate or verdict.mate
        if mate and self.mates >= self.config.mate_cap:
            self.result.counts.add("mate_cap")  # a forced mate the themes do not tag
            return
        self.mates += mate
        for motif in puzzle.motifs:
            self.motifs[motif] = self.motifs.get(motif, 0) + 1
        self.result.filled[leaf] += 1
        self.result.rows.append(_row(puzzle, verdict, mate))
        self._bar.update()


def _row(puzzle: Puzzle, verdict: Verdict, mate: bool) -> dict[str, object]:
    board = chess.Board(puzzle.fen)
    key = fen4(board)
    bucket, phase_name, type_name, side = puzzle.leaf
    return {
        "puzzle_id": puzzle.id, "fen": puzzle.fen, "fen4": key, "pos_id": pos_id(key),
        "hash_bucket": hash_bucket(key), "rating": puzzle.rating, "elo_bucket": bucket,
        "phase": phase_name, "type": type_name, "side": side, "themes": " ".join(puzzle.themes),
        "solution": " ".join(puzzle.solution), "game_url": puzzle.game_url,
        "legal_moves": verdict.legal_moves, "castling": castling_rights(board),
        "lichess_phase": puzzle.lichess_phase, "mate": int(mate),
        "verify_gap": "" if verdict.gap is None else verdict.gap,
    }
