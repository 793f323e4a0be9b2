"""The committed puzzle pool: rebuilt byte for byte by its documented command, stratified as
its docs say, `puzzles`' default when step 04 wrote nothing, and deep enough that a run on it
reaches its stop rule for a strong player and for one that solves nothing."""

import csv
import io
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import benchmark
from bench import puzzle_adaptive
from chess_eval.benchmark.core.data import PUZZLE_POOL
from chess_eval.benchmark.puzzles.pool import shares
from chess_eval.benchmark.puzzles.sampler import MAX_PUZZLES, TARGET, Pool
from chess_eval.puzzledb import HEADER, read_puzzles
from tests.benchmark.chatserver import ChatServer, Response
from tests.conftest import PUZZLES_1K, PUZZLES_44K, ROOT, unzstd

# The documented command (docs/puzzles.md).
BUILD = ["puzzle-pool", "--source", str(PUZZLES_44K)]


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode())))


def test_the_committed_pool_is_what_its_command_builds(tmp_path: Path, capsys) -> None:
    out = tmp_path / "pool.csv.zst"
    assert benchmark.main([*BUILD, "--out", str(out)]) == 0
    assert out.read_bytes() == PUZZLE_POOL.read_bytes()
    said = capsys.readouterr().out
    assert "4050 puzzles" in said and "from 44454 well-formed rows (0 malformed)" in said
    # The source's order does not matter: its rows shuffled, as a plain CSV, give the same.
    rows = _rows(unzstd(PUZZLES_44K))
    body = rows[1:]
    random.Random(1).shuffle(body)
    shuffled = tmp_path / "shuffled.csv"
    with open(shuffled, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows([rows[0], *body])
    again = tmp_path / "again.csv.zst"
    assert benchmark.main(["puzzle-pool", "--source", str(shuffled), "--out", str(again)]) == 0
    assert again.read_bytes() == PUZZLE_POOL.read_bytes()


def test_the_pool_is_stratified_by_band_and_phase_from_verbatim_rows() -> None:
    assert PUZZLE_POOL.stat().st_size < 300_000  # small enough to commit
    pool = _rows(unzstd(PUZZLE_POOL))
    source = _rows(unzstd(PUZZLES_44K))
    assert pool[0] == source[0] == list(HEADER)  # Lichess's header
    assert len(pool) - 1 == 4050 and len({r[0] for r in pool[1:]}) == 4050
    assert {tuple(r) for r in pool[1:]} <= {tuple(r) for r in source[1:]}  # verbatim
    assert [r[0] for r in pool[1:]] == sorted(r[0] for r in pool[1:])
    ratings = np.array([int(r[3]) for r in pool[1:]])
    # 150 puzzles below 500, in every 100 from 500 to 3000, and from 3000 up.
    edges = [0, *range(500, 3001, 100), 10_000]
    assert np.histogram(ratings, edges)[0].tolist() == [150] * 27
    assert ratings.min() == 399 and ratings.max() > 3100  # the source's foot, near its top
    # Every band holds every phase, in about the source's share of that band.
    for lo, hi in zip(edges, edges[1:], strict=False):
        phases = [next(t for t in r[7].split() if t in ("opening", "middlegame", "endgame"))
                  for r in pool[1:] if lo <= int(r[3]) < hi]
        whole = [next(t for t in r[7].split() if t in ("opening", "middlegame", "endgame"))
                 for r in source[1:] if lo <= int(r[3]) < hi]
        for phase, n in Counter(whole).items():
            assert abs(Counter(phases)[phase] - 150 * n / len(whole)) < 1, (lo, phase)


def test_shares_split_by_largest_remainder_within_what_each_group_has() -> None:
    # 5 of 5:3:2 is 2.5, 1.5, 1: the tie of remainders goes by name.
    assert shares({"a": 5, "b": 3, "c": 2}, 5) == {"a": 3, "b": 1, "c": 1}
    assert shares({"a": 1, "b": 10}, 8) == {"a": 1, "b": 7}  # 0.73 rounds up, 7.27 down
    assert shares({"a": 2, "b": 3}, 10) == {"a": 2, "b": 3}  # never more than a group has
    assert shares({"a": 2, "b": 3}, 0) == {"a": 0, "b": 0}


@pytest.mark.parametrize("argv, message", [
    (["--source", "/nonexistent/p.csv"], "--source: /nonexistent/p.csv does not exist"),
    (["--source", str(ROOT / "questions.csv")], "not a Lichess puzzle CSV"),
    (["--source", str(PUZZLES_1K), "--out", str(ROOT / "README.md" / "pool.csv.zst")],
     "--out: cannot write"),
])
def test_a_bad_build_is_one_line(capsys, argv: list[str], message: str) -> None:
    assert benchmark.main(["puzzle-pool", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def _puzzles_in(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "benchmark.py"), "puzzles", *argv],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_default_is_step_04_s_file_else_the_pool_and_a_missing_file_says_where(
        tmp_path: Path) -> None:
    argv = ["--model", "random", "--max-puzzles", "2", "--out", "results"]
    assert _puzzles_in(tmp_path, *argv).returncode == 0
    [result] = (tmp_path / "results").glob("puzzles__*.json")
    assert json.loads(result.read_text())["settings"]["puzzles"] == str(PUZZLE_POOL)
    # Once step 04 has written its file there, it is the default.
    step04 = tmp_path / "output" / "lichess_puzzles.csv"
    step04.parent.mkdir()
    step04.write_bytes(unzstd(PUZZLES_1K))
    assert _puzzles_in(tmp_path, *argv, "--out", "results2").returncode == 0
    [result] = (tmp_path / "results2").glob("puzzles__*.json")
    assert json.loads(result.read_text())["settings"]["puzzles"] == "output/lichess_puzzles.csv"
    done = _puzzles_in(tmp_path, *argv, "--puzzles", "gone.csv.zst")
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("error: --puzzles: gone.csv.zst is no file; ")
    for how in ("data/puzzles/lichess_puzzles.pool.csv.zst", "python generate.py --only 4",
                "https://database.lichess.org/#puzzles"):
        assert how in line


def test_the_sampler_runs_on_the_pool_as_on_the_sample_it_was_drawn_from() -> None:
    """Simulated players of known strength, 400 to 3000: on the pool, the sampler stops after
    as many puzzles, as close to the truth, as on the whole 44k sample it was drawn from."""
    truths = np.linspace(400, 3000, 14)
    rows = {}
    for path in (PUZZLE_POOL, PUZZLES_44K):
        puzzles, _, _ = read_puzzles(path)
        pool = Pool(np.array([p.rating for p in puzzles], float),
                    tuple(p.motifs for p in puzzles))
        rows[path] = puzzle_adaptive.simulate(pool, truths, 0, TARGET, MAX_PUZZLES)["ours"]
    on_pool, on_sample = rows[PUZZLE_POOL], rows[PUZZLES_44K]
    # Every run above the scale's foot reaches its interval before the cap; at the foot
    # (a player of 400, puzzles from 399) a run may play to the cap, on the sample as well.
    capped = [n >= MAX_PUZZLES for n in on_pool["n"]]
    assert capped == [n >= MAX_PUZZLES for n in on_sample["n"]]
    assert not any(c for c, truth in zip(capped, truths, strict=True) if truth > 500)
    assert abs(np.median(on_pool["n"]) - np.median(on_sample["n"])) <= 5
    assert np.nanmedian(on_pool["err"]) < 1.5 * np.nanmedian(on_sample["err"]) + 5


def test_a_strong_player_s_run_on_the_pool_reaches_its_interval(tmp_path: Path) -> None:
    assert benchmark.main(["puzzles", "--model", "stockfish:nodes=2000", "--puzzles",
                           str(PUZZLE_POOL), "--out", str(tmp_path)]) == 0
    [path] = tmp_path.glob("puzzles__*.json")
    result = json.loads(path.read_text())
    elo = result["elo"]
    assert elo["kind"] == "interval" and (elo["hi"] - elo["lo"]) / 2 <= TARGET
    assert result["n"] < MAX_PUZZLES and result["complete"]
    assert elo["mean"] > 2000  # far from the prior's 1500: the pool had puzzles up there


def test_a_player_that_solves_nothing_plays_to_the_cap_on_the_pool(tmp_path: Path) -> None:
    """Every line failed: the sampler goes down to the pool's easiest puzzles and plays the
    cap of distinct ones, bounded at the foot of the scale."""
    with ChatServer(lambda fen, attempt: Response("Final answer: resign")) as server:
        assert benchmark.main(["puzzles", "--model", "local/m", "--base-url", server.base_url,
                               "--puzzles", str(PUZZLE_POOL), "--out", str(tmp_path),
                               "--retries", "0"]) == 0
    [path] = tmp_path.glob("puzzles__*.json")
    result = json.loads(path.read_text())
    assert result["n"] == MAX_PUZZLES == len({line["puzzle"] for line in result["lines"]})
    assert result["failed"] == MAX_PUZZLES and result["complete"]
    assert result["elo"]["text"] == "below ~399"
