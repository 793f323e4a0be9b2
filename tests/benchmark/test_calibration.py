"""Calibration: games added to a results file on a real Dask cluster, resumable, refitted."""

import dataclasses
import gzip
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

import benchmark
from chess_eval.benchmark.arena.game import RULE
from chess_eval.benchmark.arena.ladder import (
    Ladder,
    Rung,
    anchor_of,
    load_ladder,
    load_rungs,
    pairs,
    rate,
)
from chess_eval.benchmark.arena.versions import read_versions, version_of
from chess_eval.benchmark.core.data import FIRST_LADDER, LADDER_GAMES, REFERENCE_LADDER
from chess_eval.benchmark.ladders import design
from chess_eval.benchmark.ladders.calibration import (
    CalibrationGame,
    GameLog,
    Usable,
    fit_by_span,
    game_key,
    inflation,
    plan,
    read_games,
    usable,
    write_games,
)
from chess_eval.benchmark.ladders.ladder_prior import prior_from
from chess_eval.benchmark.stats import btd
from chess_eval.engine import engine_identity
from chess_eval.errors import DataError
from chess_eval.files import sha256_file
from tests.conftest import ROOT, fault_engine

RUNGS = ("rung,spec,anchor\nmix50@1,\"mix:random=50,nodes=500\",\n"
         "sf500@1,stockfish:nodes=500,1000\nsf1000@1,stockfish:nodes=1000,\n")
OUTPUTS = ("games.csv.gz", "ladder.csv", "ladder_cov.csv", "ladder_versions.csv")


def _argv(tmp: Path, workers: int, add: int = 10) -> list[str]:
    (tmp / "rungs.csv").write_text(RUNGS)
    return ["calibrate", "--rungs", str(tmp / "rungs.csv"), "--add-games", str(add),
            "--workers", str(workers), "--games-file", str(tmp / "games.csv.gz"),
            "--ladder", str(tmp / "ladder.csv"), "--store", str(tmp / "cal.db"),
            "--ply-cap", "40"]


def _logged(store: Path) -> int:
    """Finished games of the run's plan in its store's log (0 before the table exists, or
    while the client holds the lock)."""
    try:
        with sqlite3.connect(store, timeout=0.1) as db:
            return db.execute("SELECT count(*) FROM finished").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_kill_9_mid_run_resumes_byte_identical_to_another_cluster_size(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """2 workers undisturbed; 1 worker killed (-9, the whole process group) after a few
    games and rerun: the same games file, ladder and covariance, byte for byte. The killed
    run's engine stalls at one search (the run waits out its stall bound there), so it is
    killed mid-plan whatever the machine's speed."""
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    whole.mkdir()
    cut.mkdir()
    assert benchmark.main(_argv(whole, 2)) == 0
    games = read_games(whole / "games.csv.gz")
    assert len(games) == 10 and {g.engine for g in games} == {games[0].engine}
    assert any(g.result == "1/2-1/2" for g in games)  # the ply cap draws some
    stalls = fault_engine(tmp_path, stockfish, monkeypatch, "stall", "400")
    cmd = [sys.executable, "benchmark.py", *_argv(cut, 1)]
    proc = subprocess.Popen([*cmd, "--stockfish", stalls], cwd=ROOT, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while _logged(cut / "cal.db") < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    tree = psutil.Process(proc.pid).children(recursive=True)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    psutil.wait_procs(tree, timeout=10)
    assert 3 <= _logged(cut / "cal.db") < 10 and not (cut / "ladder.csv").exists()
    # Killed before the games file was written: the log in the store has the games.
    assert not (cut / "games.csv.gz").exists()
    assert subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=300).returncode == 0
    for name in OUTPUTS:
        assert (cut / name).read_bytes() == (whole / name).read_bytes(), name
    assert _logged(cut / "cal.db") == 0  # the plan is done and its log cleared
    # Nothing more to finish: a refit alone rewrites the same ladder.
    assert benchmark.main([*_argv(cut, 1, add=0)]) == 0
    assert (cut / "ladder.csv").read_bytes() == (whole / "ladder.csv").read_bytes()
    # Games in Chess960 re-measure the ladder there, beside the standard one.
    assert benchmark.main([*_argv(cut, 2, add=4), "--condition", "chess960"]) == 0
    added = [g for g in read_games(cut / "games.csv.gz") if g.condition == "chess960"]
    assert len(added) == 4 and all(g.opening.startswith("960#") for g in added)
    assert (cut / "ladder_chess960.csv").exists() and (cut / "ladder_chess960_cov.csv").exists()
    assert (cut / "ladder.csv").read_bytes() == (whole / "ladder.csv").read_bytes()
    # Each fit of a ladder is a version: a refit on the same games is not a new one, two
    # more standard games are.
    first = read_versions(cut / "ladder.csv")
    assert [(v.number, v.sha256, v.games) for v in first] == [
        (1, sha256_file(cut / "ladder.csv"), 10)]
    assert benchmark.main(_argv(cut, 2, add=2)) == 0
    second = read_versions(cut / "ladder.csv")
    assert [(v.number, v.games) for v in second] == [(1, 10), (2, 12)]
    assert second[1].sha256 == sha256_file(cut / "ladder.csv") != first[0].sha256
    assert version_of(cut / "ladder.csv", first[0].sha256).text() == \
        "version 1 (10 games; refitted since as version 2)"


def _pair(game: CalibrationGame) -> tuple[str, str, int]:
    """A game's pair and number (a planned game has no opening yet, so no key)."""
    return game.weak, game.strong, game.number


def test_a_rung_dropped_from_an_interrupted_plan_keeps_its_games_and_plays_no_more(
        tmp_path: Path, stockfish: str, caplog: pytest.LogCaptureFixture) -> None:
    """A run interrupted mid-plan, rerun with --rungs that no longer have one of its rungs
    (replaced by another): the rerun plays the plan's other games, keeps the dropped rung's
    finished game in the file (unused, as a dropped rung's are) and plays none more of it.
    (It ended in a KeyError traceback.)"""
    wide = tmp_path / "wide.csv"
    first, rest = RUNGS.split("sf500@1", 1)
    wide.write_text(first + 'mix25@1,"mix:random=25,nodes=500",\nsf500@1' + rest)
    engine = engine_identity(stockfish)
    todo = plan(load_rungs(wide), [], engine, 8, 0)
    dropped = [g for g in todo if "mix25@1" in (g.weak, g.strong)]
    kept = [g for g in todo if g not in dropped]
    assert dropped and kept  # the plan has games of both kinds
    done = dataclasses.replace(dropped[0], result="1-0", termination="checkmate", plies=31,
                               opening="book#92c40fbdf6")
    log = GameLog(tmp_path / "cal.db")  # the store as the interrupted run left it
    log.start(todo)
    log.add(done)
    log.close()
    # The rule the plan was made under (that of every committed ladder).
    assert benchmark.main([*_argv(tmp_path, 1, add=8), "--adjudication", str(RULE.version)]) == 0
    games = read_games(tmp_path / "games.csv.gz")
    assert [g for g in games if "mix25@1" in (g.weak, g.strong)] == [done]
    assert sorted(_pair(g) for g in games if g != done) == sorted(map(_pair, kept))
    assert _logged(tmp_path / "cal.db") == 0  # the plan is done
    # The warning counts the games it will not play (the finished one is kept).
    assert f"{len(dropped) - 1} games of the interrupted run's plan are with mix25@1" \
        in caplog.text


def test_a_refit_of_the_reference_ladder_takes_its_engine_and_reproduces_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`calibrate --ladder` on a copy of the committed 17.1 ladder refits it with a build
    that ladder serves, whichever Stockfish comes first on PATH (Debian 12's is 15.1), and
    writes the committed ladder and covariance again, byte for byte."""
    monkeypatch.delenv("STOCKFISH_PATH", raising=False)  # as on a user's machine
    copy = tmp_path / "stockfish-17.1"
    shutil.copytree(REFERENCE_LADDER.parent, copy)
    assert benchmark.main(["calibrate", "--ladder", str(copy)]) == 0
    for name in ("ladder.csv", "ladder_cov.csv"):
        assert (copy / name).read_bytes() == (REFERENCE_LADDER.parent / name).read_bytes()


def test_a_bad_rung_spec_is_one_line_naming_it_and_nothing_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A rungs file with a misspelt spec: one line naming the file and the rung, exit 2,
    and no folder, games file or plan left behind (a rerun would 'finish' that plan)."""
    bad = tmp_path / "bad.csv"
    bad.write_text(RUNGS.replace("stockfish:nodes=1000", "stockfsh:nodes=1000"))
    assert benchmark.main([
        "calibrate", "--rungs", str(bad), "--add-games", "4", "--workers", "1",
        "--ladder", str(tmp_path / "new" / "ladder.csv"), "--store", str(tmp_path / "cal.db")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "bad.csv: rung sf1000@1: 'stockfsh:nodes=1000' is not an engine player" in err
    assert [p.name for p in tmp_path.iterdir()] == ["bad.csv"]


def test_a_mistyped_ladder_name_is_refused_before_any_game(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`--ladder stockfish-99` (no such ladder): one line listing the committed ones, exit 2,
    and no games file written into the working directory (it played games and wrote one)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:  # argparse's refusal of the option
        benchmark.main(["calibrate", "--ladder", "stockfish-99", "--add-games", "2"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "stockfish-99: no such ladder (committed: stockfish-15.1, stockfish-17.1" in err
    assert list(tmp_path.iterdir()) == []


def test_games_file_round_trips_sorted(tmp_path: Path) -> None:
    a = CalibrationGame("standard", "x", "y", 0, 2, "book#1", "1-0", "checkmate", 40, "SF")
    b = CalibrationGame("standard", "x", "y", 0, 1, "book#1", "1/2-1/2", "ply cap", 300, "SF")
    write_games(tmp_path / "g.csv", [a, b])
    assert read_games(tmp_path / "g.csv") == [b, a]
    assert b.weak_score == 0.5 and a.weak_score == 0.0  # number 2: the stronger had White
    # Compressed under a .gz name: the same rows, and the same bytes however written.
    write_games(tmp_path / "g.csv.gz", [a, b])
    first = (tmp_path / "g.csv.gz").read_bytes()
    assert gzip.decompress(first) == (tmp_path / "g.csv").read_bytes()
    time.sleep(1.1)  # gzip's header would otherwise carry the time
    write_games(tmp_path / "g.csv.gz", [b, a])
    assert (tmp_path / "g.csv.gz").read_bytes() == first
    assert read_games(tmp_path / "g.csv.gz") == [b, a]


def test_the_adjudication_column_appears_with_a_game_of_another_rule(tmp_path: Path) -> None:
    """A file of version-1 games has no adjudication column (the committed file reads as it
    always did); a game of rule 2 brings the column, its own key, and round-trips."""
    a = CalibrationGame("standard", "x", "y", 0, 1, "book#1", "1-0", "checkmate", 40, "SF")
    b = dataclasses.replace(a, adjudication=2)
    write_games(tmp_path / "one.csv", [a])
    assert "adjudication" not in (tmp_path / "one.csv").read_text().splitlines()[0]
    write_games(tmp_path / "both.csv", [a, b])
    assert (tmp_path / "both.csv").read_text().splitlines()[0].endswith(",adjudication")
    assert read_games(tmp_path / "both.csv") == [a, b]
    assert game_key(a) != game_key(b) and game_key(b).endswith(":adj2")
    assert len(usable([Rung("x", "random", 0), Rung("y", "random", None)], [a, b], "SF",
                      rule=2).weak) == 1


def test_the_committed_games_stay_small_and_readable() -> None:
    for ladder in (FIRST_LADDER, REFERENCE_LADDER):
        path = ladder.with_name(LADDER_GAMES)
        assert path.stat().st_size < 5 * 2 ** 20
        games = read_games(path)
        assert len(games) > 2_000 and games == sorted(games)
        assert {g.engine for g in games} == {load_ladder(ladder).engine}  # its folder's own


@pytest.mark.parametrize(("text", "message"), [
    ("a,b\n1,2\n", "not a calibration games file"),
    ("condition,weak,strong,seed,number,opening,result,termination,plies,engine\n"
     "standard,x,y,0,1,book#1,1-0,checkmate,forty,SF\n", "line 2"),
    ("condition,weak,strong,seed,number,opening,result,termination,plies,engine\n"
     "standard,x,y,0,1,book#1,2-0,checkmate,40,SF\n", "line 2: result"),
    ("condition,weak,strong,seed,number,opening,result,termination,plies,engine,adjudication\n"
     "standard,x,y,0,1,book#1,1-0,checkmate,40,SF,9\n", "line 2: result"),
])
def test_a_bad_games_file_is_one_line(tmp_path: Path, text: str, message: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "games.csv.gz").write_bytes(gzip.compress(text.encode()))
    with pytest.raises(DataError, match=message):
        read_games(tmp_path / "games.csv.gz")
    assert benchmark.main(_argv(tmp_path, 1, add=0)) == 2
    assert message.split(":")[0] in capsys.readouterr().err


@pytest.mark.parametrize("data", [b"plain text, not gzip",
                                  gzip.compress(b"a,b\n1,2\n", mtime=0)[:-9]],
                         ids=["not gzip", "cut short"])
def test_a_broken_compressed_games_file_is_one_line(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "games.csv.gz").write_bytes(data)
    with pytest.raises(DataError, match="cannot read the calibration games"):
        read_games(tmp_path / "games.csv.gz")


def test_a_refit_without_games_says_what_to_run(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert benchmark.main(_argv(tmp_path, 1, add=0)) == 2
    err = capsys.readouterr().err
    assert "--add-games" in err
    assert str(tmp_path / "games.csv.gz") in err  # the file it looked for, named


def _span_games(true: np.ndarray, per_pair: int, squeeze_far: float) -> Usable:
    """Games between rungs 1-4 apart drawn from the BTD model at the true gaps, except that
    games 3 or more apart are played as if the gap were `squeeze_far` times as large."""
    rng = np.random.default_rng(11)
    weak, strong, scores = [], [], []
    for i, j in pairs(len(true)):
        gap = (true[j] - true[i]) * (squeeze_far if j - i >= 3 else 1.0)
        p = btd.probabilities(-gap, 0.3)
        weak += [i] * per_pair
        strong += [j] * per_pair
        scores += list(rng.choice([1.0, 0.5, 0.0], size=per_pair, p=np.array(p) / sum(p)))
    return Usable(np.array(weak), np.array(strong), np.array(scores), 0, 0)


def test_fit_by_span_passes_the_model_and_flags_a_scale_that_bends() -> None:
    rungs = [Rung("random", "random", anchor=0)] + [
        Rung(f"r{i}", f"mix:random={90 - 10 * i},nodes=1000") for i in range(1, 8)]
    true = 110.0 * np.arange(8)
    for squeeze, bent in ((1.0, False), (0.6, True)):
        games = _span_games(true, 300, squeeze)
        ladder = rate(rungs, games.weak, games.strong, games.weak_score)
        by_span = {f.span: f for f in fit_by_span(ladder, games)}
        assert sorted(by_span) == [1, 2, 3, 4]
        assert by_span[4].games == 4 * 300
        assert by_span[4].expected < by_span[1].expected < 0.5
        # The fit spreads a bent scale over every span; some span then misses by far more
        # than chance (over 40 seeds without the bend, the largest |z| was 2.4).
        worst = max(abs(f.z) for f in by_span.values())
        assert worst > 4 if bent else worst < 3


@pytest.fixture
def goals_then(monkeypatch: pytest.MonkeyPatch) -> None:
    """The goals these ladders were planned to (+-35 up to 2,000, +-80 above): the tests below
    check the planner's mechanics on a ladder that met them, not the goals raised since."""
    monkeypatch.setattr(design, "GOAL_SPLIT", 2000.0)
    monkeypatch.setattr(design, "GOAL_HIGH", 80.0)


def _goal_between(ladder: Ladder, info: np.ndarray) -> float:
    """A goal for the rungs up to GOAL_SPLIT that the planner's variances (from `info`) meet
    and the fit's reported ones miss: midway between the two largest half-widths."""
    low = ladder.elos <= design.GOAL_SPLIT
    k = anchor_of(ladder.rungs)
    planned = btd.Z90 * np.sqrt(np.diag(design.covariance(info, k)))[low].max()
    reported = btd.Z90 * np.sqrt(np.diag(ladder.cov))[low].max()
    assert reported > planned
    return float(planned + reported) / 2


@pytest.mark.usefixtures("goals_then")
def test_the_planner_stops_only_where_the_reported_half_widths_meet_their_goals() -> None:
    ladder = load_ladder(FIRST_LADDER)
    use = usable(ladder.rungs, read_games(FIRST_LADDER.with_name(LADDER_GAMES)), ladder.engine)
    k, candidates = anchor_of(ladder.rungs), pairs(len(ladder.rungs))
    info = design.information(ladder.elos, ladder.nu, use.weak, use.strong)
    inflate = inflation(ladder, use)
    # nu's uncertainty and the observed information widen what the fit reports
    goal = _goal_between(ladder, info)
    assert inflate[k] == 1
    assert design.games_to_goal(ladder.elos, ladder.nu, info, k, candidates, low=goal)[0] == 0
    total, added = design.games_to_goal(ladder.elos, ladder.nu, info, k, candidates, step=100,
                                        low=goal, inflate=inflate)
    assert total > 0
    for (i, j), n in added.items():
        info = info + n * design.information(ladder.elos, ladder.nu, np.array([i]),
                                             np.array([j]))
    assert design.worst_ratio(design.covariance(info, k), ladder.elos, goal, inflate) <= 1


@pytest.mark.usefixtures("goals_then")
def test_a_ladder_with_a_prior_is_planned_to_its_reported_half_widths() -> None:
    """The 17.1 ladder is fitted with a prior whose settings are averaged by the games, so it
    reports wider intervals than the planner's one setting expects; the planner inflates to
    them (before, it stopped while five rungs reported 1-2 Elo over their goals)."""
    ladder = load_ladder(REFERENCE_LADDER)
    prior = prior_from(load_ladder(FIRST_LADDER), ladder.rungs)
    use = usable(ladder.rungs, read_games(REFERENCE_LADDER.with_name(LADDER_GAMES)), ladder.engine,
                 rule=ladder.adjudication)
    k, candidates = anchor_of(ladder.rungs), pairs(len(ladder.rungs))
    info = design.information(ladder.elos, ladder.nu, use.weak, use.strong) \
        + prior.information()
    inflate = inflation(ladder, use, prior)
    goal = _goal_between(ladder, info)
    assert inflate[k] == 1
    assert design.games_to_goal(ladder.elos, ladder.nu, info, k, candidates, low=goal)[0] == 0
    assert design.games_to_goal(ladder.elos, ladder.nu, info, k, candidates, step=100,
                                low=goal, inflate=inflate)[0] > 0


def test_a_tighter_goal_sends_the_planned_games_to_the_rungs_that_miss_it() -> None:
    """The planned games go where the goals are missed, or failing that where a game shrinks
    a rung's variance most: on the reference ladder with one goal of 60 for every rung, a
    good share of them above 2,600 (the widest rungs); with 28 up to 2,600, every one has a
    rung below 2,600 (the links there, whose errors add up in every rung above them), and
    those that reach above it reach only the first rung there (version 11's mix3, 2,623)."""
    ladder = load_ladder(REFERENCE_LADDER)
    prior = prior_from(load_ladder(FIRST_LADDER), ladder.rungs)
    games = read_games(REFERENCE_LADDER.with_name(LADDER_GAMES))
    elo = {r.name: r.elo for r in ladder.rungs}
    first_above = min(e for e in elo.values() if e > design.GOAL_SPLIT)

    def chosen(low: float) -> list[tuple[float, float]]:
        """The weaker and stronger rung's Elo of each of 200 planned games."""
        found = plan(ladder.rungs, games, ladder.engine, 200, 0, prior=prior,
                     rule=ladder.adjudication, low=low)
        assert len(found) == 200
        return [(elo[g.weak], elo[g.strong]) for g in found]
    assert np.mean([s > design.GOAL_SPLIT for _, s in chosen(design.GOAL_HIGH)]) > 0.25
    tight = chosen(28)
    assert all(w < design.GOAL_SPLIT for w, _ in tight)
    assert all(s <= first_above for _, s in tight)
