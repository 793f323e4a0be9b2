"""`benchmark.py puzzles` for real: whole lines over HTTP, the sampler, kill -9 and resume."""

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import chess
import numpy as np
import pytest

import benchmark
from bench import puzzle_adaptive
from chess_eval.benchmark.puzzles.sampler import Pool, draw, pick
from chess_eval.benchmark.stats.elo import PRIOR_SD, puzzle_posterior
from chess_eval.puzzledb import HEADER, read_puzzles
from tests.benchmark.chatserver import ChatServer, Response
from tests.conftest import PUZZLES, PUZZLES_1K, ROOT

PUZZLES_44K = PUZZLES / "lichess_db_puzzle.sample44k.csv.zst"

# Two real puzzles of the 1k sample. 9A6fb is a mate in 2 whose last move has two mates
# (Qa2#, the key, and Qb4#); HZ3rP is a mate in 2 (R1g6+) where R7g6+ also wins.
MATE_IN_2 = ["9A6fb", "8/3q4/Q7/1Pk5/K7/8/8/8 w - - 1 60", "a4a5 d7d2 a5a4 d2a2", "1478", "75",
             "90", "500", "endgame mate mateIn2 queenEndgame short", "", ""]
TWO_WINS = ["HZ3rP", "8/2p3Rk/5p2/2p2P2/1p6/pP1P4/r6r/3K2R1 b - - 1 41",
            "h7h6 g1g6 h6h5 g7h7", "1470", "75", "90", "500",
            "endgame mate mateIn2 rookEndgame short", "", ""]


def _csv(path: Path, *rows: list[str]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def _fens(row: list[str]) -> list[str]:
    """The FEN the solver sees before each of its moves."""
    board, fens = chess.Board(row[1]), []
    for i, uci in enumerate(row[2].split()):
        if i % 2:
            fens.append(board.fen())
        board.push_uci(uci)
    return fens


def _solve(tmp_path: Path, row: list[str], answers: dict[str, str]) -> dict:
    """One puzzle played by a scripted model answering `answers[fen]` in SAN."""
    def script(fen: str, attempt: int) -> Response:
        return Response(f"I see it.\nFinal answer: {answers[fen]}")
    out = tmp_path / row[0] / str(len(list(tmp_path.glob(f"{row[0]}/*"))))
    with ChatServer(script) as server:
        assert benchmark.main(["puzzles", "--model", "local/m", "--base-url", server.base_url,
                               "--puzzles", str(_csv(tmp_path / "p.csv", row)), "--out",
                               str(out), "--max-puzzles", "1", "--retries", "0"]) == 0
    [result] = out.glob("puzzles__*.json")
    return json.loads(result.read_text())


def test_whole_line_mate_in_2_with_two_mating_keys(tmp_path: Path) -> None:
    first, last = _fens(MATE_IN_2)
    key = _solve(tmp_path, MATE_IN_2, {first: "Qd2+", last: "Qa2#"})
    other = _solve(tmp_path, MATE_IN_2, {first: "Qd2+", last: "Qb4#"})
    wrong = _solve(tmp_path, MATE_IN_2, {first: "Qxb5+"})  # trades queens: a bare-king draw
    illegal = _solve(tmp_path, MATE_IN_2, {first: "Nf3"})  # Black has no knight
    lines = [r["lines"][0] for r in (key, other, wrong, illegal)]
    assert [line["outcome"] for line in lines] == ["solved", "solved", "failed", "failed"]
    assert lines[0]["moves"] == ["d7d2", "d2a2"] and lines[0]["mates"] == 0
    assert lines[1]["moves"] == ["d7d2", "d2b4"] and lines[1]["mates"] == 1
    assert other["mates_off_key"] == 1 and other["solved"] == 1
    assert lines[2]["reason"] == "wrong move" and lines[2]["failed_at"] == 0
    assert lines[3]["reason"].startswith("illegal (state") and illegal["illegal"]["state"] == 1
    # One stateless request per move, with the moves so far: the opponent's reply came
    # from the solution, numbered from the puzzle's FEN.
    assert "from the position 8/3q4/Q7/1Pk5/K7/8/8/8 w - - 1 60): 60. Ka5 Qd2+ 61. Ka4\n" \
        in lines[1]["attempts"][1]["prompt"]


def test_an_engine_confirmed_alternative_is_credited_apart(tmp_path: Path) -> None:
    [first, _] = _fens(TWO_WINS)
    alt = _solve(tmp_path, TWO_WINS, {first: "R7g6+"})
    line = alt["lines"][0]
    assert line["outcome"] == "alternative" and alt["alternative"] == 1 and alt["solved"] == 0
    assert line["alternative"]["key"] == "g1g6" and line["alternative"]["wc_key"] == 1.0
    assert 0.5 <= line["alternative"]["wc_move"] < 1.0
    # Counted as solved in the estimate, as failed by Lichess's rule.
    assert alt["elo"]["kind"] == "above" and alt["elo_lichess_rule"]["kind"] == "below"
    retreat = _solve(tmp_path, TWO_WINS, {first: "Rxc7"})  # walks into a mate: failed
    assert retreat["lines"][0]["outcome"] == "failed"


def test_sampler_draws_from_the_posterior_and_picks_near_with_fresh_themes() -> None:
    ratings, solved = [1200.0, 1500, 1800, 2100, 1650], [True, True, False, False, True]
    draws = np.array([draw(ratings, solved, seed) for seed in range(3000)])
    # The posterior's mode and curvature, by a finite difference of the log posterior.
    r = np.array(ratings)
    s = np.array(solved, float)

    def logpost(x: float) -> float:
        z = (x - r) * np.log(10) / 400
        return float(np.sum(-s * np.logaddexp(0, -z) - (1 - s) * np.logaddexp(0, z))
                     - 0.5 * ((x - 1500) / PRIOR_SD) ** 2)
    grid = np.linspace(1000, 2500, 15001)
    mode = grid[np.argmax([logpost(x) for x in grid])]
    h = 1.0
    sd = (-(logpost(mode + h) - 2 * logpost(mode) + logpost(mode - h)) / h ** 2) ** -0.5
    assert puzzle_posterior(r, s)[0] == pytest.approx(mode, abs=0.2)
    assert draws.mean() == pytest.approx(mode, abs=4 * sd / np.sqrt(3000))
    assert draws.std() == pytest.approx(sd, rel=0.05)
    assert draw([], [], 7) == draw([], [], 7) != draw([], [], 8)
    pool = Pool(np.array([1000.0, 1490, 1500, 1505, 1620, 2000]),
                (("fork",), ("pin",), ("fork",), (), ("skewer",), ("pin",)))
    used = np.zeros(6, bool)
    played = Counter({"fork": 2, "pin": 1})
    assert pick(pool, used, played, 1500) == 3  # nearest with no motif played
    used[3] = True
    assert pick(pool, used, played, 1500) == 1  # pin played less than fork
    used[1] = True
    assert pick(pool, used, played, 1500) == 2  # skewer (1620) is beyond the window
    used[:5] = True
    assert pick(pool, used, played, 1500) == 5  # the only one left, however far


def test_lichess_bench_baseline_and_simulation_smoke() -> None:
    assert puzzle_adaptive.margin_lb(3) == pytest.approx(496.9, abs=0.1)  # its README: 497
    assert puzzle_adaptive.margin_lb(10) == pytest.approx(143.1, abs=0.1)  # 143
    assert [puzzle_adaptive.k_factor(n) for n in (0, 29, 30, 99, 100)] == [40, 40, 20, 20, 10]
    puzzles, _, _ = read_puzzles(PUZZLES_1K)
    pool = Pool(np.array([p.rating for p in puzzles], float), tuple(p.motifs for p in puzzles))
    rows = puzzle_adaptive.simulate(pool, np.array([900.0, 1700, 2400]), 0, 100.0, 150)
    # 2.110 x 200 / sqrt(18) = 99.5 <= 100, while 2.120 x 200 / sqrt(17) = 102.8
    assert rows["lichess-bench"]["n"] == [18, 18, 18]
    assert all(10 <= n <= 150 for n in rows["ours"]["n"])
    assert all(rows["ours"]["cover"])
    assert all(np.isnan(e) or e < 100 for e in rows["ours"]["err"])  # nan: a one-sided bound


def _store_lines(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        return conn.execute("SELECT count(*) FROM puzzles").fetchone()[0] \
            if "puzzles" in tables else 0


def test_baseline_run_resumes_after_kill_9_byte_identical(tmp_path: Path) -> None:
    # 16 puzzles: the kill comes after 3 are stored, and the 13 after them leave a loaded
    # machine's poll ample time to see those 3 before the run could finish on its own.
    argv = ["puzzles", "--model", "stockfish:nodes=2000", "--puzzles", str(PUZZLES_1K),
            "--max-puzzles", "16"]
    assert benchmark.main([*argv, "--out", str(tmp_path / "a")]) == 0
    [result] = (tmp_path / "a").glob("puzzles__*.json")
    data = json.loads(result.read_text())
    assert data["n"] == 16 and len({line["puzzle"] for line in data["lines"]}) == 16
    assert data["solved"] + data["alternative"] + data["failed"] == 16
    out = tmp_path / "b"
    cmd = [sys.executable, str(ROOT / "benchmark.py"), *argv, "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and \
            _store_lines(out / "puzzles.db") < 3:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not list(out.glob("puzzles__*.json"))
    assert benchmark.main([*argv, "--out", str(out)]) == 0
    for suffix in (".json", ".md"):
        assert (out / result.name).with_suffix(suffix).read_bytes() == \
            result.with_suffix(suffix).read_bytes(), suffix


def test_a_failing_server_stops_the_run_and_keeps_nothing_half_done(tmp_path: Path,
                                                                   capsys) -> None:
    with ChatServer(lambda fen, attempt: Response(status=500)) as server:
        status = benchmark.main(["puzzles", "--model", "local/m", "--base-url",
                                 server.base_url, "--puzzles", str(PUZZLES_1K), "--out",
                                 str(tmp_path), "--retries", "0", "--max-puzzles", "3"])
    assert status == 2
    assert "the puzzles finished so far are kept" in capsys.readouterr().err
    assert not list(tmp_path.glob("puzzles__*.json"))


@pytest.mark.parametrize("content, message", [
    ("a,b\n1,2\n", "not a Lichess puzzle CSV"), ("", "not a Lichess puzzle CSV (empty)")])
def test_a_bad_puzzle_file_is_one_line(tmp_path: Path, capsys, content: str,
                                       message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert benchmark.main(["puzzles", "--model", "random", "--puzzles", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_big_file_is_sampled_down_the_same_way_every_time() -> None:
    every, rows, bad = read_puzzles(PUZZLES_1K)
    assert rows == 1000 and bad == 0 and len(every) == 1000
    sample, _, _ = read_puzzles(PUZZLES_1K, keep=100)
    assert len(sample) == 100 and sample == read_puzzles(PUZZLES_1K, keep=100)[0]
    assert {p.id for p in sample} <= {p.id for p in every}
    # Uniform: the sample's ratings look like the file's (a loose check of 100 draws).
    ratings = np.array([p.rating for p in every])
    assert abs(np.mean([p.rating for p in sample]) - ratings.mean()) < 3 * ratings.std() / 10


def test_the_expected_puzzles_of_a_run_track_its_interval() -> None:
    """The progress bar's total: the typical run before a finite interval, then
    n x (half-width/target)^2, never below the next puzzle, and the count itself once done."""
    from chess_eval.benchmark.puzzles.sampler import TYPICAL_PUZZLES, puzzles_expected
    from chess_eval.benchmark.stats.elo import Estimate

    assert puzzles_expected(None, 0, 50, 400) == TYPICAL_PUZZLES
    wide = Estimate(1500, 1400, 1600, 40, "laplace")  # +-100 after 40 puzzles
    assert puzzles_expected(wide, 40, 50, 400) == 160  # 40 x (100 / 50)^2
    assert puzzles_expected(wide, 40, 50, 100) == 100  # never past the cap
    narrow = Estimate(1500, 1460, 1540, 150, "laplace")
    assert puzzles_expected(narrow, 150, 50, 400) == 150  # finished


def test_a_player_that_solves_nothing_is_bounded_where_the_scale_has_puzzles(
        tmp_path: Path) -> None:
    """A model whose every answer is no move fails every line, the sampler goes down to the
    easiest puzzles of the shared sample (`puzzles`' default file), and the Elo is bounded at
    their rating, the foot of Lichess's scale (before: "below ~-1", 400 under puzzles rated
    399, a rating nothing has)."""
    with ChatServer(lambda fen, attempt: Response("Final answer: resign")) as server:
        assert benchmark.main(["puzzles", "--model", "local/m", "--base-url", server.base_url,
                               "--puzzles", str(PUZZLES_44K), "--out", str(tmp_path),
                               "--max-puzzles", "60", "--retries", "0"]) == 0
    [path] = tmp_path.glob("puzzles__*.json")
    result = json.loads(path.read_text())
    assert result["solved"] == 0 and result["failed"] == 60
    # The file's easiest puzzles, rated 399, were reached.
    assert min(line["rating"] for line in result["lines"]) == 399
    assert result["elo"]["kind"] == "below" and result["elo"]["text"] == "below ~399"
