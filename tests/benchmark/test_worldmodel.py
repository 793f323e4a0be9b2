"""`benchmark.py worldmodel` against a scripted model on 127.0.0.1, with figures checked by
hand; the mirror of real positions; the statistics of the rubric and its test."""

import json
from dataclasses import replace
from pathlib import Path

import chess
import numpy as np
import pytest
from scipy import stats

import benchmark
from chess_eval.benchmark.question.questions import load_questions, select
from chess_eval.benchmark.stats.mcnemar import mcnemar, mcnemar_p
from chess_eval.benchmark.worldmodel.prompts import mirrored, parse_list
from chess_eval.benchmark.worldmodel.stats import (
    hypothesis,
    mcnemar_power,
    n_for_power,
    rubric,
    trend,
    wilson,
)
from chess_eval.position import mirror_move
from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.conftest import ROOT

QUESTIONS = ROOT / "questions.csv"
LIMIT = 12


def _canonical(board: chess.Board) -> chess.Move:
    """A legal move chosen the same way on a position and on its mirror."""
    def rel(square: int) -> tuple[int, int]:
        rank = chess.square_rank(square)
        return chess.square_file(square), rank if board.turn == chess.WHITE else 7 - rank
    return min(board.legal_moves, key=lambda m: (rel(m.from_square), rel(m.to_square),
                                                   m.promotion or 0))


def _bogus(board: chess.Board) -> str:
    """A well-formed UCI move that is not legal here."""
    legal = {m.uci() for m in board.legal_moves}
    return next(a + b for a in chess.SQUARE_NAMES for b in chess.SQUARE_NAMES
                if a != b and a + b not in legal)


def _model(body: dict) -> Response:
    """Lists every legal move but the first and adds one illegal claim; from its list picks
    that illegal claim when White moves and the dropped legal move when Black does; plays
    a canonical move at T < 1 and an illegal one at T = 1."""
    prompt = body["messages"][-1]["content"]
    board = chess.Board(FEN_RE.search(prompt).group(1))
    legal = sorted(m.uci() for m in board.legal_moves)
    if "List every legal move" in prompt:
        return Response("Legal moves: " + " ".join(legal[1:] + [_bogus(board)]))
    if "You listed these legal moves" in prompt:
        move = _bogus(board) if board.turn == chess.WHITE else legal[0]
        return Response(f"Final answer: {move}")
    if body["temperature"] >= 1:
        return Response(f"Final answer: {_bogus(board)}")
    return Response(f"Final answer: {_canonical(board).uci()}")


def test_worldmodel_flow_against_a_scripted_model(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["worldmodel", "--model", "local/m", "--endpoint-id", "scripted", "--questions",
            str(QUESTIONS), "--limit", str(LIMIT), "--out", str(tmp_path), "--retries", "0"]
    with ChatServer(lambda fen, attempt: Response(), on_body=_model) as server:
        assert benchmark.main([*argv, "--base-url", server.base_url]) == 0
        asked = len(server.bodies)
    [path] = tmp_path.glob("worldmodel__*.json")
    r = json.loads(path.read_text())
    boards = [q.board() for q in select(load_questions(QUESTIONS), "all", [], LIMIT, 0)]
    sizes = [b.legal_moves.count() for b in boards]
    white = sum(b.turn == chess.WHITE for b in boards)
    sc = r["self_consistency"]
    # Each list has n - 1 legal claims of n legal moves, plus one illegal claim.
    assert sc["positions"] == LIMIT and sc["exact_lists"]["k"] == 0
    assert sc["precision"]["value"] == pytest.approx((sum(sizes) - LIMIT) / sum(sizes), abs=1e-4)
    assert sc["recall"]["value"] == pytest.approx((sum(sizes) - LIMIT) / sum(sizes), abs=1e-4)
    assert sc["b_in_a"] == wilson(white, LIMIT)  # the illegal claim is in A's list
    assert sc["b_legal"] == wilson(LIMIT - white, LIMIT)  # the dropped move is legal
    sym = r["symmetry"]
    assert sym["agree"]["value"] == 1.0 and sym["illegal_difference"]["value"] == 0.0
    rates = {x["temperature"]: x["value"] for x in r["temperature"]["levels"]}
    assert rates == {0.0: 0.0, 0.5: 0.0, 1.0: 1.0}
    assert r["temperature"]["level"] == pytest.approx(1 - 0.1 / 3)
    assert r["temperature"]["trend"]["z"] > 0 and r["temperature"]["trend"]["p"] < 0.001
    assert r["t0"] == {"answers": 2 * LIMIT, "illegal": 0, "rate": 0.0,
                       "taxonomy": {"format": 0, "ambiguous": 0, "state": 0, "rule": 0}}
    worst = max(1 - white / LIMIT, LIMIT / sum(sizes))
    assert r["score"]["worst_failure_rate"] == pytest.approx(worst, abs=1e-4)
    assert r["score"]["by_illegal_rate"] == 1.0
    assert r["score"]["score"] == rubric(0.0, worst)["score"] < 1.0
    parts = r["hypothesis"]["parts"]
    # The illegal part counts the 12 positions, not their 24 answers (pairs are not
    # independent trials), and its power is taken for two answers per position.
    assert parts["illegal"]["p_value"] == pytest.approx(0.98 ** LIMIT, abs=1e-4)
    assert parts["illegal"]["n"] == LIMIT
    assert r["symmetry"]["illegal_mcnemar"]["p_value"] == 1.0  # no discordant pair: p = 1
    outside = LIMIT - white  # B's choices outside A's list: the dropped legal moves
    assert parts["b_outside_a"]["k"] == outside and parts["b_outside_a"]["n"] == LIMIT
    assert parts["b_outside_a"]["p_value"] == pytest.approx(
        stats.binom.cdf(outside, LIMIT, 0.05), abs=1e-4)
    assert parts["mirror_unequal"]["k"] == 0 and parts["mirror_unequal"]["n"] == LIMIT
    assert r["hypothesis"]["reject_h0"] is False and r["hypothesis"]["power"]["0.0%"] == 0.0
    # 12 positions x (original, mirror, T = 0.5, T = 1, list A, choice B), and one preflight
    # for each temperature's player.
    assert asked == 6 * LIMIT + 3
    assert (tmp_path / r["figure"]).stat().st_size > 0
    # The summary reads as text: the power line names each rate, not a raw dict.
    printed = capsys.readouterr().out
    power = [line for line in printed.splitlines() if "power at this n" in line]
    assert power and "{" not in power[0] and "0.0%: 0%" in power[0]
    # A rerun asks nothing and writes the same bytes.
    before = path.read_bytes()
    with ChatServer(lambda fen, attempt: Response(status=500)) as server:
        assert benchmark.main([*argv, "--base-url", server.base_url]) == 0
        assert server.bodies == []
    assert path.read_bytes() == before


def test_a_failing_server_gives_an_incomplete_result(tmp_path: Path) -> None:
    with ChatServer(lambda fen, attempt: Response(status=500)) as server:
        status = benchmark.main(["worldmodel", "--model", "local/m", "--questions",
                                 str(QUESTIONS), "--limit", "3", "--out", str(tmp_path),
                                 "--retries", "0", "--breaker", "100", "--base-url",
                                 server.base_url])
    assert status == 3
    [path] = tmp_path.glob("worldmodel__*.json")
    r = json.loads(path.read_text())
    assert not r["complete"] and r["infra"] > 0 and r["t0"]["answers"] == 0
    assert r["score"]["score"] is None


# Real positions where the mirror must carry castling rights and en passant.
CASTLING = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 6 8"
EN_PASSANT = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"


@pytest.mark.parametrize("fen", [CASTLING, EN_PASSANT])
def test_a_mirrored_question_keeps_castling_en_passant_and_evaluations(fen: str) -> None:
    board = chess.Board(fen)
    q = select(load_questions(QUESTIONS), "all", [], 1, 0)[0]
    expected = {m.uci(): i for i, m in enumerate(sorted(board.legal_moves, key=str))}
    m = mirrored(replace(q, fen=fen, expected=expected, solution="e1g1"))
    mb = chess.Board(m.fen)
    assert m.expected == {mirror_move(chess.Move.from_uci(u)).uci(): cp
                          for u, cp in expected.items()}
    assert set(m.expected) == {x.uci() for x in mb.legal_moves}
    assert mb.turn == chess.BLACK and m.color == {"White": "Black", "Black": "White"}[q.color]
    if fen == CASTLING:
        assert mb.has_kingside_castling_rights(chess.BLACK) and m.solution == "e8g8"
        assert "e8c8" in m.expected and "e8g8" in m.expected
    else:
        assert mb.ep_square == chess.F3 and "e4f3" in m.expected


def test_parse_list_reads_claims_after_the_marker() -> None:
    board = chess.Board()
    listed = parse_list("<think>Legal moves: e2e5</think>I think e2e4.\nLegal moves: e2e4, "
                        "Nf3 g1f3 e2e5 Ke2 a2a3", board)
    assert listed.claimed == ("e2e4", "g1f3", "e2e5", "Ke2", "a2a3")
    assert listed.legal == {"e2e4", "g1f3", "a2a3"} and not listed.exact


def test_rubric_trend_and_power_by_hand() -> None:
    assert rubric(0.0, 0.0)["score"] == 1.0
    assert rubric(0.0, 0.04)["score"] == 0.8 and rubric(0.015, 0.0)["score"] == 0.6
    assert rubric(0.0, 0.3)["score"] == 0.0 and rubric(None, 0.0)["score"] is None
    # Cochran-Armitage by hand: rates 0/10, 5/10 at t = 0, 1: z^2 equals the chi-square
    # of the 2x2 table without continuity correction.
    chi2 = stats.chi2_contingency([[0, 10], [5, 5]], correction=False)[0]
    assert trend([0, 1], [0, 5], [10, 10])["z"] == pytest.approx(chi2 ** 0.5, abs=1e-3)
    assert trend([0, 1], [0, 0], [10, 10])["p"] is None
    # The exact test: none illegal of n rejects H0 (p = 0.98^n <= 0.05) from n = 149 on;
    # none outside A's list (H0 rate 5%) from n = 59 (0.95^58 > 0.05 >= 0.95^59).
    assert 0.98 ** 148 > 0.05 >= 0.98 ** 149 and 0.95 ** 58 > 0.05 >= 0.95 ** 59
    assert n_for_power(0.02, 0.0) == 149 and n_for_power(0.05, 0.0) == 59
    assert hypothesis(0, 148, 0, 100, 0, 100)["power"]["0.0%"] == 0.0
    assert not hypothesis(0, 148, 0, 100, 0, 100)["reject_h0"]
    every = hypothesis(0, 149, 0, 59, 0, 59)
    assert every["reject_h0"] and every["power"]["0.0%"] == 1.0 and every["note"] == ""
    # Every part must reject: a player that is never illegal but contradicts itself is not
    # a world model (the random baseline: its mirrored answers rarely agree).
    assert not hypothesis(0, 200, 0, 100, 83, 100)["reject_h0"]
    assert not hypothesis(0, 200, 30, 100, 0, 100)["reject_h0"]
    # Power at a true 0.5% of both: the product of the parts' powers, by hand.
    n, crit = 400, int(stats.binom.ppf(0.05, 400, 0.02))
    while stats.binom.cdf(crit, n, 0.02) > 0.05:
        crit -= 1
    m, crit2 = 100, int(stats.binom.ppf(0.05, 100, 0.05))
    while stats.binom.cdf(crit2, m, 0.05) > 0.05:
        crit2 -= 1
    expected = stats.binom.cdf(crit, n, 0.005) * stats.binom.cdf(crit2, m, 0.005)
    got = hypothesis(0, n, 0, m, 0, m)["power"]["0.5%"]
    assert got == pytest.approx(expected * stats.binom.cdf(crit2, m, 0.005), abs=1e-4)
    assert wilson(0, 10)["lo"] == 0.0 and 0.1 < wilson(0, 10)["hi"] < 0.3


def test_mcnemar_by_hand_and_its_power_by_simulation() -> None:
    """The exact McNemar p-value by hand; its power against a seeded simulation of the
    design (pairs failing only on one side with the given rates)."""
    assert mcnemar_p(5, 0) == pytest.approx(2 * 0.5 ** 5)
    # No discordant pair is no evidence: p = 1, as compare reports it (one test for both).
    assert mcnemar_p(3, 3) == 1.0 and mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(9, 1) == pytest.approx(2 * (1 + 10) / 2 ** 10)
    assert mcnemar(np.array([True, False]), np.array([True, False]))["p"] == 1.0
    rng = np.random.default_rng(3)
    for n, p10, p01 in ((100, 0.02, 0.0), (400, 0.02, 0.0), (300, 0.05, 0.01)):
        sides = rng.choice(3, size=(20_000, n), p=[p10, p01, 1 - p10 - p01])
        b, c = (sides == 0).sum(axis=1), (sides == 1).sum(axis=1)
        p = [mcnemar_p(int(x), int(y)) for x, y in zip(b, c, strict=True)]
        simulated = np.mean([v <= 0.05 for v in p])
        assert mcnemar_power(n, p10, p01) == pytest.approx(simulated, abs=0.01), (n, p10, p01)
    assert mcnemar_power(100, 0.02, 0.0) < 0.05  # the write-up's n = 100 cannot see 2%
