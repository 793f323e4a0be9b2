"""Smoke version of bench/ladder_coverage.py: re-measured ladders, play's intervals cover."""

from pathlib import Path

import numpy as np

from bench.ladder_coverage import coverage, draw_truth, remeasure, remeasure_normal
from chess_eval.benchmark.arena.ladder import Ladder, Rung, pairs
from chess_eval.benchmark.ladders.calibration import Usable

NAMES = ["r0", "r1", "r2", "r3", "r4", "r5"]
TRUE = [0.0, 350.0, 700.0, 1000.0, 1350.0, 1700.0]  # r0 (the random mover) is the zero


def _truth() -> tuple[Ladder, Usable]:
    rungs = [Rung(n, "random", 0 if n == "r0" else None, e)
             for n, e in zip(NAMES, TRUE, strict=True)]
    chain = [p for p in pairs(6) for _ in range(12)]  # a thinly measured ladder
    weak, strong = (np.array(x) for x in zip(*chain, strict=True))
    truth = Ladder(rungs, 0.4, "sim", np.zeros((6, 6)))
    return truth, Usable(weak, strong, np.zeros(len(chain)), 0, 0)


def test_a_remeasured_ladder_is_anchored_and_near_the_truth() -> None:
    truth, games = _truth()
    measured = remeasure(truth, games, np.random.default_rng(1))
    by_name = {r.name: r for r in measured.rungs}
    assert by_name["r0"].elo == 0 and measured.cov.shape == (6, 6)
    assert all(abs(by_name[n].elo - e) < 3 * (by_name[n].hi - by_name[n].elo) + 1
               for n, e in zip(NAMES, TRUE, strict=True) if n != "r0")


def test_true_elos_are_drawn_from_the_ladders_posterior() -> None:
    """The truth of a run is one draw of the ladder's own posterior: over many draws, its
    mean and covariance are the ladder's, and the zero stays exact."""
    truth, games = _truth()
    measured = remeasure(truth, games, np.random.default_rng(2))
    rng = np.random.default_rng(5)
    draws = np.array([draw_truth(measured, rng).elos for _ in range(4000)])
    assert np.all(draws[:, 0] == 0)
    sd = np.sqrt(np.diag(measured.cov))
    assert np.allclose(draws.mean(axis=0), measured.elos, atol=4 * sd.max() / np.sqrt(4000))
    assert np.allclose(np.cov(draws.T), measured.cov, rtol=0.1, atol=0.1 * sd.max() ** 2)


def test_intervals_with_the_ladders_error_cover_on_a_thin_ladder() -> None:
    """12 games per pair leave the rungs +-100-200 uncertain: treated as exact, a +-70
    interval would often miss; with the ladder's error inside it covers about 90%."""
    truth, games = _truth()
    runs = coverage(remeasure(truth, games, np.random.default_rng(1)), games, 1100.0, 60, 70.0,
                    seed=3)
    rate = np.mean([r.covered for r in runs])
    assert 0.75 <= rate <= 1.0
    assert np.mean([r.limited for r in runs]) > 0.5  # the ladder, not the games, is the limit


def test_a_ladder_fitted_with_a_prior_is_remeasured_by_its_covariance() -> None:
    """bench/ladder_coverage draws a prior ladder's re-measurement: the truth plus an error of
    the ladder's own covariance, the zero exact, rungs ordered by their measured Elos."""
    truth, games = _truth()
    measured = remeasure(truth, games, np.random.default_rng(2))
    prior = Ladder(measured.rungs, measured.nu, "sim", measured.cov, "a prior")
    rng = np.random.default_rng(6)
    draws = []
    for _ in range(3000):
        again = remeasure_normal(truth, prior, rng)
        assert [r.elo for r in again.rungs] == sorted(r.elo for r in again.rungs)
        draws.append([{r.name: r.elo for r in again.rungs}[n] for n in NAMES])
    errors = np.array(draws) - np.array(TRUE)
    assert np.all(errors[:, 0] == 0)
    order = [[r.name for r in prior.rungs].index(n) for n in NAMES]
    expected = np.sqrt(np.diag(prior.cov)[order])
    assert np.allclose(errors.std(axis=0), expected, rtol=0.1, atol=1)


def test_the_written_table_keeps_each_version_s_rows_once(tmp_path: Path) -> None:
    """--write keys a row by ladder, version and true Elo: a rerun replaces its own rows,
    another version's rows stay, and the version is the committed registry's."""
    import csv
    import subprocess
    import sys

    from bench.ladder_coverage import ROOT, write_rows
    from chess_eval.benchmark.arena.versions import version_of
    from chess_eval.benchmark.core.data import REFERENCE_LADDER
    from chess_eval.files import sha256_file

    table = tmp_path / "coverage.csv"
    other = {"ladder": "stockfish-17.1", "version": "1", "ladder_games": "800",
             "true_elo": "800", "runs": "9", "target": "70", "seed": "0", "coverage": "0.9",
             "one_sided": "0", "median_games": "99", "median_half_width": "70", "limited": "0"}
    write_rows(table, [other])
    command = [sys.executable, "-m", "bench.ladder_coverage", "--ladder",
               str(REFERENCE_LADDER), "--runs", "2", "--elos", "800", "--no-ranks",
               "--write", str(table)]
    for _ in range(2):
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=600)
    rows = list(csv.DictReader(table.open()))
    version = version_of(REFERENCE_LADDER, sha256_file(REFERENCE_LADDER))
    assert version is not None and len(rows) == 2 and rows[0] == other
    assert (rows[1]["version"], rows[1]["ladder_games"], rows[1]["runs"]) == \
        (str(version.number), str(version.games), "2")
    assert int(rows[1]["median_games"]) >= 5
