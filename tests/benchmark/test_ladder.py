"""The ladder: reproducible default rungs, the pairs, anchoring, ladder.csv and its covariance."""

from pathlib import Path

import numpy as np
import pytest

from chess_eval.benchmark.arena.ladder import (
    CONDITION_TAU,
    MAX_SPAN,
    Ladder,
    Rung,
    anchor_of,
    cov_path,
    default_rungs,
    load_ladder,
    load_rungs,
    pairs,
    rate,
    rate_in_condition,
    write_ladder,
)
from chess_eval.benchmark.arena.versions import read_versions, version_of
from chess_eval.benchmark.core.data import FIRST_LADDER, LADDERS
from chess_eval.benchmark.stats import btd
from chess_eval.errors import DataError
from chess_eval.files import sha256_file

HEADER = "rung,spec,anchor,elo,lo,hi,games,score,nu,engine\n"


def test_default_rungs_are_reproducible_from_random_to_full_strength() -> None:
    rungs = default_rungs()
    assert rungs[0].spec == "random" and rungs[-1].spec.startswith("stockfish:nodes=")
    # No UCI_Elo or Skill Level rung: their moves are seeded from the clock.
    assert not any("elo=" in r.spec or "skill=" in r.spec for r in rungs)
    assert len({r.name for r in rungs}) == len(rungs)
    # The random mover is the zero, exactly.
    assert anchor_of(rungs) == 0 and rungs[0].anchor == 0


def test_pairs_reach_up_to_the_span() -> None:
    assert pairs(4, span=2) == [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
    assert pairs(6)[:4] == [(0, 1), (0, 2), (0, 3), (0, 4)]  # MAX_SPAN 4: never (0, 5)
    assert max(j - i for i, j in pairs(30)) == MAX_SPAN


def _games(true: np.ndarray, per_pair: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    weak, strong, scores = [], [], []
    for i, j in pairs(len(true), span=2):
        for _ in range(per_pair):
            weak.append(i)
            strong.append(j)
            scores.append(rng.choice([1, 0.5, 0], p=btd.probabilities(true[i] - true[j], 0.6)))
    return np.array(weak), np.array(strong), np.array(scores)


def test_rate_fixes_the_anchor_and_measures_the_rest_relative_to_it() -> None:
    rungs = [Rung("a", "random"), Rung("b", "random"), Rung("c", "random", anchor=1000),
             Rung("d", "random"), Rung("e", "random")]
    true = np.array([600.0, 800.0, 1000.0, 1150.0, 1300.0])
    ladder = rate(rungs, *_games(true, 300, 3))
    assert ladder.elos[2] == pytest.approx(1000) and ladder.cov[2].max() == 0
    half = ladder.elos - np.array([r.lo for r in ladder.rungs])
    assert np.all(np.abs(ladder.elos - true) < 2 * half + 1e-9)
    # Errors grow with the distance from the anchor, and the matrix is a covariance.
    sd = np.sqrt(np.diag(ladder.cov))
    assert sd[0] > sd[1] > 0 and sd[4] > sd[3] > 0
    assert np.all(np.linalg.eigvalsh(ladder.cov) > -1e-6)
    assert ladder.nu == pytest.approx(0.6, rel=0.25)


def test_ladder_and_covariance_round_trip(tmp_path: Path) -> None:
    rungs = [Rung("a", "random"), Rung("b", "random", anchor=500), Rung("c", "random")]
    ladder = rate(rungs, *_games(np.array([300.0, 500.0, 700.0]), 60, 1))
    ladder = type(ladder)(ladder.rungs, ladder.nu, "Stockfish 15.1", ladder.cov)
    path = tmp_path / "ladder.csv"
    assert write_ladder(path, ladder) == [path, tmp_path / "ladder_cov.csv"]
    back = load_ladder(path)
    assert [r.name for r in back.rungs] == ["a", "b", "c"] and back.engine == "Stockfish 15.1"
    assert np.allclose(back.cov, ladder.cov, atol=0.05)
    assert back.elos == pytest.approx(np.round(ladder.elos, 1))
    assert [r.name for r in load_rungs(path)] == ["a", "b", "c"]


def test_rungs_whose_elos_round_alike_stay_ordered(tmp_path: Path) -> None:
    """Two rungs fitted 0.3 Elo apart (a rung with few games beside its neighbour) would
    both be written as 2546 and the ladder could not be read back."""
    rungs = [Rung("z", "random", 0, 0.0, 0, 0, 1, 0.5),
             Rung("a", "random", None, 2546.2, 2497, 2596, 9, 0.5),
             Rung("b", "random", None, 2546.5, 2497, 2596, 9, 0.5)]
    ladder = Ladder(rungs, 0.2, "SF", np.diag([0.0, 900.0, 900.0]))
    write_ladder(tmp_path / "ladder.csv", ladder)
    assert [r.elo for r in load_ladder(tmp_path / "ladder.csv").rungs] == [0, 2546.2, 2546.5]


def test_the_committed_ladder_loads_and_spans_random_to_2800() -> None:
    ladder = load_ladder(FIRST_LADDER)
    assert ladder.rungs[0].spec == "random" and ladder.elos.max() >= 2800
    assert ladder.nu > 0 and "Stockfish" in ladder.engine
    assert ladder.cov.shape == (len(ladder.rungs), len(ladder.rungs))


@pytest.mark.parametrize(("text", "cov", "message"), [
    ("rung,elo\nx,1\n", None, "not a ladder file"),
    (HEADER + "r,random,,abc,0,0,1,0.5,0.5,SF\n", None, "line 2"),
    (HEADER + "r,random,,100,0,0,1,0.5,0.5,SF\ns,random,,50,0,0,1,0.5,0.5,SF\n", None,
     "rising Elo"),
    (HEADER + "r,random,1,100,0,0,1,0.5,0.5,SF\n", None, "ladder covariance"),
    (HEADER + "r,random,1,100,0,0,1,0.5,0.5,SF\n", "rung,x\nx,0\n", "not the covariance"),
    (HEADER + "r,random,1,100,0,0,1,0.5,0.5,SF\n", "rung,r\nr,-4\n", "not a covariance"),
])
def test_a_bad_ladder_is_one_line(tmp_path: Path, text: str, cov: str | None,
                                  message: str) -> None:
    path = tmp_path / "ladder.csv"
    path.write_text(text)
    if cov is not None:
        cov_path(path).write_text(cov)
    with pytest.raises(DataError, match=message):
        load_ladder(path)
    with pytest.raises(DataError, match="calibrate"):
        load_ladder(tmp_path / "missing.csv")


@pytest.mark.parametrize(("text", "message"), [
    ("rung,spec\nx,random\n", "not a rungs file"),
    ("rung,spec,anchor\nx,random,\ny,random,\n", "exactly one anchored"),
    ("rung,spec,anchor\nx,random,1\nx,random,\n", "unique"),
    ("rung,spec,anchor\nx,random,one\n", "whole number"),
])
def test_bad_rungs_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rungs.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        load_rungs(path)


def test_a_condition_moves_the_rungs_it_measured_and_keeps_the_prior_elsewhere() -> None:
    rungs = [Rung(n, "random", 1000 if n == "c" else None) for n in "abcde"]
    true = np.array([600.0, 800.0, 1000.0, 1150.0, 1300.0])
    standard = rate(rungs, *_games(true, 200, 4))
    # No games in the condition: the standard Elos, each interval widened by the prior's tau.
    alone = rate_in_condition(standard, np.array([], int), np.array([], int), np.array([]))
    assert np.allclose(alone.elos, standard.elos)
    widened = np.sqrt(np.diag(standard.cov) + CONDITION_TAU ** 2)
    assert np.allclose(np.sqrt(np.diag(alone.cov))[[0, 1, 3, 4]], widened[[0, 1, 3, 4]])
    # Games in the condition where the bottom rung is 200 weaker: it moves most of the way.
    shifted = true - np.array([200.0, 0, 0, 0, 0])
    weak, strong, scores = _games(shifted, 150, 5)
    moved = rate_in_condition(standard, weak, strong, scores)
    by_name = {r.name: r for r in moved.rungs}
    assert by_name["a"].elo < standard.elos[0] - 100 and by_name["c"].elo == 1000
    assert abs(by_name["d"].elo - standard.elos[3]) < 60


@pytest.mark.parametrize("folder", sorted(p.name for p in LADDERS.iterdir() if p.is_dir()))
def test_every_committed_ladder_is_the_newest_version_of_its_registry(folder: str) -> None:
    """A refit committed without its version row (or a registry edited by hand) fails here:
    the committed ladder is the newest version, fitted on the games its rows count."""
    path = LADDERS / folder / "ladder.csv"
    versions = read_versions(path)
    newest = version_of(path, sha256_file(path))
    assert newest is not None and newest.current and newest == versions[-1]
    assert newest.games == sum(r.games for r in load_ladder(path).rungs) // 2
    assert len({v.sha256 for v in versions}) == len(versions)
    assert all(v.games > 0 for v in versions)
