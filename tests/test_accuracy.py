"""Lichess's game accuracy (chess_eval/accuracy.py) against values worked out by hand from lila's
AccuracyPercent, and on the committed replay games against the formula written out here apart
from the product's code."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import chess
import chess.pgn
import pytest

from chess_eval.accuracy import game_accuracy, move_accuracy, window_size, windows

REPLAY = Path(__file__).resolve().parent / "data" / "replay"


def lila_game_accuracy(cps: list[int], white_first: bool) -> tuple[float | None, float | None]:
    """lila's gameAccuracy written out again for the test: win% of every eval (cp capped to
    +-1000), windows of clamp(moves // 10, 2, 8) win% (the first repeated size - 2 times, then
    sliding), weights the windows' population sd within 0.5..12, per side the mean of the
    weighted mean and the harmonic mean (1 / max(1, a)) of its move accuracies."""
    wins = [50 + 50 * (2 / (1 + math.exp(-0.00368208 * max(-1000, min(1000, c)))) - 1)
            for c in cps]
    size = max(2, min(8, (len(cps) - 1) // 10))
    spans = [wins[:size]] * (size - 2) + [wins[k:k + size] for k in range(len(wins) - size + 1)]
    weights = [min(12.0, max(0.5, statistics.pstdev(s))) for s in spans]
    per_side: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for k in range(len(wins) - 1):
        white = (k % 2 == 0) == white_first
        before, after = (wins[k], wins[k + 1]) if white else (100 - wins[k], 100 - wins[k + 1])
        drop = before - after
        acc = 100.0 if drop <= 0 else min(100.0, max(0.0, 103.1668100711649 * math.exp(
            -0.04354415386753951 * drop) - 3.166924740191411 + 1))
        per_side[white].append((acc, weights[k]))

    def mean(pairs: list[tuple[float, float]]) -> float | None:
        if not pairs:
            return None
        weighted = sum(a * w for a, w in pairs) / sum(w for _, w in pairs)
        harmonic = len(pairs) / sum(1 / max(1.0, a) for a, _ in pairs)
        return (weighted + harmonic) / 2

    return mean(per_side[True]), mean(per_side[False])


def test_a_short_game_worked_by_hand() -> None:
    """Evals 0, +100, +100, -300 (cp for White), White first: three moves, windows of 2.
    Win%: 50, 59.1026 (50 + 50 (2 / (1 + e^-0.368208) - 1)), 59.1026, 24.8874. Weights: the
    sd of each pair of neighbours, half their difference: 4.5513, 0.5 (the floor; 0), 12 (the
    cap; 17.1076). White's 1. gains (100), Black's 1... holds (no drop: 100), White's 2.
    drops 34.2151 points: 103.16681 e^(-0.0435442 x 34.2151) - 3.16692 + 1 = 21.0871.
    White: weighted (100 x 4.5513 + 21.0871 x 12) / 16.5513 = 42.7867, harmonic
    2 / (1/100 + 1/21.0871) = 34.8296, accuracy 38.8081. Black: 100."""
    evals = [0, 100, 100, -300]
    assert window_size(3) == 2 and len(windows([50.0, 59.1, 59.1, 24.7])) == 3
    result = game_accuracy(evals, white_first=True)
    assert result.weights == pytest.approx((4.5513, 0.5, 12.0), abs=1e-4)
    assert result.moves == pytest.approx((100.0, 100.0, 21.0871), abs=1e-4)
    assert result.white == pytest.approx(38.8081, abs=1e-3)
    assert result.black == pytest.approx(100.0)


def test_move_accuracy_is_lilas() -> None:
    """No drop: 100; a drop of 10 points: 103.16681 e^-0.435442 - 3.16692 + 1 = 64.5798; the
    uncertainty bonus lifts a perfect move's 100.0 no higher; a total drop floors at 0."""
    assert move_accuracy(40.0, 45.0) == 100.0
    assert move_accuracy(60.0, 50.0) == pytest.approx(64.5798, abs=1e-4)
    assert move_accuracy(50.0, 49.9999) == 100.0
    assert move_accuracy(100.0, 0.0) == 0.0


def test_windows_repeat_the_first_then_slide() -> None:
    """25 moves: windows of 2 (25 // 10); 95 moves: of 8, the first repeated 6 times, one
    window per move."""
    wins = [float(k) for k in range(96)]
    assert window_size(25) == 2 and window_size(95) == 8
    spans = windows(wins)
    assert len(spans) == 95 and spans[:7] == [wins[:8]] * 7 and spans[7] == wins[1:9]


def _games() -> list[chess.pgn.Game]:
    [pgn] = REPLAY.glob("*.pgn")
    with pgn.open(encoding="utf-8") as handle:
        return list(iter(lambda: chess.pgn.read_game(handle), None))


def _cps(game: chess.pgn.Game) -> list[int]:
    """Every position's eval (cp for White) from the PGN; a mated position's from the rules
    (python-chess writes no [%eval #0]), as +-1000 once capped."""
    cps = []
    for node in [game, *game.mainline()]:
        score = node.eval()
        if score is None:
            assert node.board().is_checkmate()
            cps.append(-1000 if node.board().turn == chess.WHITE else 1000)
        else:
            cps.append(score.white().score(mate_score=100_000))
    return cps


def test_the_committed_games_accuracy_is_lilas_formula() -> None:
    """Each committed game (a rung that plays 72% random moves against Stockfish at one node)
    as the formula written out above gives it; the random side far below the other, and far
    below the plain mean of its move accuracies that the site showed before."""
    games = _games()
    assert len(games) == 2
    for game in games:
        cps = _cps(game)
        white_first = game.board().turn == chess.WHITE
        expected = lila_game_accuracy(cps, white_first)
        result = game_accuracy(cps, white_first)
        assert (result.white, result.black) == pytest.approx(expected, abs=1e-9)
        rung_white = "WhiteElo" in game.headers
        rung, engine = (result.white, result.black) if rung_white else \
            (result.black, result.white)
        assert rung is not None and engine is not None and rung < engine - 25
        own = [a for k, a in enumerate(result.moves) if (k % 2 == 0) == (white_first ==
                                                                          rung_white)]
        plain = sum(a for a in own) / len(own)
        assert rung < plain - 5
