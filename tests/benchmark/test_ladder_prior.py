"""A new engine's ladder: the committed ladder as its prior, settings chosen by the games,
and held-out games between rung pairs the fit never sees."""

import dataclasses
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import benchmark
from bench.ladder_prior import SCENARIOS, replay, true_new
from chess_eval.benchmark.arena.game import NEW_LADDER_RULE
from chess_eval.benchmark.arena.ladder import Rung, load_ladder, pairs
from chess_eval.benchmark.core.data import FIRST_LADDER
from chess_eval.benchmark.ladders import held_out
from chess_eval.benchmark.ladders.calibration import Usable, fit, read_games, usable
from chess_eval.benchmark.ladders.ladder_prior import (
    NEW_RUNG_SD,
    RUNG_GRID,
    RUNG_SD,
    SHIFT_GRID,
    averaged,
    prior_from,
)
from chess_eval.benchmark.stats import btd
from chess_eval.errors import DataError
from chess_eval.exits import Exit
from tests.conftest import fault_engine

COMMITTED = load_ladder(FIRST_LADDER)


def _games(truth: np.ndarray, n: int, seed: int) -> Usable:
    """n games between random calibration pairs, outcomes drawn from `truth`."""
    rng = np.random.default_rng(seed)
    chosen = np.array(pairs(len(truth)))[rng.integers(0, len(pairs(len(truth))), n)]
    win, draw, _ = btd.probabilities(truth[chosen[:, 0]] - truth[chosen[:, 1]], COMMITTED.nu)
    u = rng.random(n)
    scores = np.where(u < win, btd.WIN, np.where(u < win + draw, btd.DRAW, btd.LOSS))
    return Usable(chosen[:, 0], chosen[:, 1], scores, 0, 0)


def test_the_prior_is_the_committed_ladder_widened_and_the_anchor_stays_exact() -> None:
    prior = prior_from(COMMITTED, COMMITTED.rungs)
    assert prior.mean[0] == 0 and np.array_equal(prior.mean, COMMITTED.elos)
    cov = prior.cov
    assert np.all(cov[0] == 0) and np.all(cov[:, 0] == 0)
    assert np.all(np.linalg.eigvalsh(cov[1:, 1:]) > 0)
    sd = np.sqrt(np.diag(cov))
    assert np.all(sd[1:] ** 2 > np.diag(COMMITTED.cov)[1:])  # wider than the source
    assert sd[-1] > 3 * sd[1]  # the shift grows with strength; the random mover's is zero


def test_a_rung_the_source_lacks_is_placed_loosely_between_its_neighbours() -> None:
    """Rungs added for a new engine (none on the committed ladder): two between one pair of
    measured neighbours share their gap evenly, each wide enough to span it; one above the
    strongest sits at its Elo with NEW_RUNG_SD; a rung of another spec counts as new."""
    c = COMMITTED.rungs
    new = [Rung("mix96@x", "mix:random=96,nodes=1000"), Rung("mix94@x", "mix:random=94,nodes=1000")]
    changed = dataclasses.replace(c[3], spec="mix:random=1,nodes=1000")
    top = Rung("nodes9k@x", "stockfish:nodes=9000")
    rungs = [c[0], c[1], *new, c[2], changed, *c[4:], top]
    prior = prior_from(COMMITTED, rungs)
    lo, hi = COMMITTED.elos[1], COMMITTED.elos[2]
    assert prior.mean[2:4] == pytest.approx([lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3])
    assert np.sqrt(prior.source_cov[2, 2]) == pytest.approx(max((hi - lo) / 2, RUNG_SD))
    assert prior.source_cov[2, 1] == 0 and prior.source_cov[2, 3] == 0
    assert prior.mean[5] == pytest.approx((COMMITTED.elos[2] + COMMITTED.elos[4]) / 2)
    assert prior.mean[-1] == COMMITTED.elos[-1]
    assert np.sqrt(prior.source_cov[-1, -1]) == NEW_RUNG_SD
    kept = [0, 1, 4, *range(6, len(rungs) - 1)]
    source = [0, 1, 2, *range(4, len(c))]
    assert np.array_equal(prior.mean[kept], COMMITTED.elos[source])
    assert np.array_equal(prior.source_cov[np.ix_(kept, kept)],
                          COMMITTED.cov[np.ix_(source, source)])
    assert np.all(np.linalg.eigvalsh(prior.cov[1:, 1:]) > 0)
    with pytest.raises(DataError, match="lacks the anchor rung"):
        prior_from(COMMITTED, [Rung("random@x", "random", 0), *c[1:]])


def test_the_games_weigh_the_priors_settings() -> None:
    """A new engine whose rungs moved far puts the weight on wide settings, one whose rungs
    stayed put on narrow ones: the settings follow the games, not a guess."""
    prior = prior_from(COMMITTED, COMMITTED.rungs)
    still = _games(COMMITTED.elos, 4000, 1)
    moved_truth = COMMITTED.elos * (1 + 0.15 * COMMITTED.elos / 2600)  # +15% at 2,600
    moved = _games(moved_truth, 4000, 2)

    def shift(games: Usable) -> float:
        weights = averaged(prior, games.weak, games.strong, games.weak_score).weights
        assert set(weights) == {(s, r) for s in SHIFT_GRID for r in RUNG_GRID}
        assert abs(sum(weights.values()) - 1) < 1e-9
        return sum(w * s for (s, _), w in weights.items())

    narrow, wide = shift(still), shift(moved)
    assert narrow < 1.3 * SHIFT_GRID[0] and wide > narrow + 30, (narrow, wide)


def test_a_fit_with_the_prior_keeps_rungs_without_games_at_the_priors_width() -> None:
    games = _games(COMMITTED.elos, 3000, 3)
    few = Usable(games.weak[games.strong < 10], games.strong[games.strong < 10],
                 games.weak_score[games.strong < 10], 0, 0)  # no games above rung 9
    ladder = fit(COMMITTED.rungs, few, "sim", prior_from(COMMITTED, COMMITTED.rungs))
    by_name = {r.name: r for r in ladder.rungs}
    top, measured = by_name[COMMITTED.rungs[-1].name], by_name[COMMITTED.rungs[5].name]
    assert ladder.prior.startswith("v2: Stockfish 15.1") and ladder.rungs[0].elo == 0
    assert top.games == 0 and measured.games > 100
    # No games up there: the prior's width (its shift grows with strength), not the games'.
    assert top.hi - top.lo > max(3 * (measured.hi - measured.lo), 2 * 80)


def test_the_bench_replays_a_calibration_and_its_intervals_cover() -> None:
    """Smoke test of bench/ladder_prior.py: one replay of 2,000 games of a build whose rungs
    moved as between Stockfish 15.1 and 19, rungs' 90% intervals checked against the truth."""
    rng = np.random.default_rng(4)
    outcome = replay(COMMITTED, true_new(COMMITTED, SCENARIOS[1], rng), 2000, 1000, rng)
    assert len(outcome.covered) == len(COMMITTED.rungs) - 1 and outcome.covered.mean() >= 0.75
    assert not outcome.met[~outcome.low].all()  # 2,000 games: far from every goal


def test_held_out_pairs_are_never_planned_and_go_round_in_turn() -> None:
    rungs = COMMITTED.rungs[:8]
    first = held_out.plan(rungs, [], "e", 7, 0)
    steps = {(r.name, abs(rungs.index(next(x for x in rungs if x.name == g.strong))
                          - rungs.index(r))) for g in first
             for r in rungs if r.name == g.weak}
    assert {d for _, d in steps} <= set(held_out.SPANS) and len(first) == 7
    played = [dataclasses.replace(g, result="1-0") for g in first]
    second = held_out.plan(rungs, played, "e", 2, 0)
    assert (second[0].weak, second[0].strong) != (first[0].weak, first[0].strong) or \
        second[0].number == 2  # the round goes on where it stopped


def test_a_held_out_pair_the_fit_has_games_of_is_no_longer_held_out() -> None:
    """A ladder whose rungs changed can bring an old held-out pair within the planner's
    reach; once a fitted game pairs those rungs (in either order, same engine and rule),
    that pair's held-out games leave the check, and only those."""
    held = held_out.plan(COMMITTED.rungs, [], "e", 4, 0)
    first, second = held[0], held[1]
    fitted = [dataclasses.replace(first, weak=first.strong, strong=first.weak, number=9,
                                  result="1-0"),
              dataclasses.replace(second, engine="other", result="1-0"),
              dataclasses.replace(second, adjudication=2, result="1-0")]
    kept = held_out.unseen(held, fitted)
    assert first not in kept and kept == [g for g in held if g.weak != first.weak
                                          or g.strong != first.strong]
    assert second in kept


def test_the_held_out_check_accepts_the_truth_and_rejects_a_wrong_ladder() -> None:
    truth = COMMITTED.elos
    span = [(i, i + d) for d in held_out.SPANS for i in range(len(truth) - d)]
    rng = np.random.default_rng(5)
    chosen = np.array(span * 40)
    win, draw, _ = btd.probabilities(truth[chosen[:, 0]] - truth[chosen[:, 1]], COMMITTED.nu)
    u = rng.random(len(chosen))
    scores = np.where(u < win, btd.WIN, np.where(u < win + draw, btd.DRAW, btd.LOSS))
    games = Usable(chosen[:, 0], chosen[:, 1], scores, 0, 0)
    checks, pooled = held_out.check(COMMITTED, games)
    assert len(checks) == len(span) and abs(pooled) < 3
    assert sum(c.inside for c in checks) >= 0.75 * len(checks)
    # A ladder whose gaps are a fifth too small predicts the weaker rungs too well.
    wrong = [dataclasses.replace(r, elo=r.elo * 0.8) for r in COMMITTED.rungs]
    off, pooled_off = held_out.check(dataclasses.replace(COMMITTED, rungs=wrong), games)
    assert pooled_off < -3 and sum(c.inside for c in off) <= sum(c.inside for c in checks)


def test_a_new_engine_calibrates_with_the_prior_and_held_out_games_are_checked(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Another build (one more node at every limit, another name) gets a ladder of its own,
    fitted with the committed one as its prior; held-out games of the committed engine are
    played into their own file and checked against the committed ladder."""
    rungs, own = tmp_path / "rungs.csv", tmp_path / "own.csv"
    chosen = COMMITTED.rungs[:7]
    rungs.write_text("rung,spec,anchor\n" + "".join(
        f"{r.name},\"{r.spec}\",{'' if r.anchor is None else r.anchor}\n" for r in chosen))
    # The new build's own rungs: one the committed ladder lacks, one of its rungs dropped.
    added = Rung("mix99@1", "mix:random=99,nodes=1000")
    own_rungs = [chosen[0], added, *chosen[1:5], chosen[6]]
    own.write_text("rung,spec,anchor\n" + "".join(
        f"{r.name},\"{r.spec}\",{'' if r.anchor is None else r.anchor}\n" for r in own_rungs))
    other = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    monkeypatch.setenv("FAULT_NODES", "1")
    monkeypatch.setenv("FAULT_NAME", "Stockfish 99")
    new = tmp_path / "ladder@stockfish-99.csv"
    argv = ["calibrate", "--rungs", str(rungs), "--games-file", str(tmp_path / "g.csv.gz"),
            "--store", str(tmp_path / "cal.db"), "--ply-cap", "60", "--workers", "1"]
    own_argv = ["calibrate", "--games-file", str(tmp_path / "g.csv.gz"), "--store",
                str(tmp_path / "cal.db"), "--ply-cap", "60", "--workers", "1", "--stockfish",
                other, "--ladder", str(new)]
    assert benchmark.main([*own_argv, "--rungs", str(own), "--add-games", "12"]) == 0
    ladder = load_ladder(new)
    assert ladder.engine == "Stockfish 99" and ladder.prior.startswith("v2: Stockfish 15.1")
    assert {r.name for r in ladder.rungs} == {r.name for r in own_rungs}
    assert ladder.rungs[0].elo == 0
    # Without --rungs the ladder keeps its own (the default 32 would drop mix99@1).
    assert benchmark.main(own_argv) == 0
    assert [r.name for r in load_ladder(new).rungs] == [r.name for r in ladder.rungs]
    # A new ladder is judged by the cheaper rule, recorded in its file and in every game.
    assert ladder.adjudication == NEW_LADDER_RULE.version == 2
    assert {g.adjudication for g in read_games(tmp_path / "g.csv.gz")} == {2}
    # One rule a ladder: asking for another on it is refused in one line.
    assert benchmark.main([*argv, "--stockfish", other, "--ladder", str(new),
                           "--adjudication", "1"]) == Exit.ERROR
    assert "measured under adjudication rule 2, not 1" in capsys.readouterr().err
    # play on it judges every position by that rule (the engine is asked for 5,000 nodes,
    # never version 1's 20,000) and records it.
    log = tmp_path / "go.log"
    monkeypatch.setenv("FAULT_LOG", str(log))
    out = tmp_path / "runs"
    assert benchmark.main(["play", "--model", "random", "--stockfish", other, "--ladder",
                           str(new), "--max-games", "2", "--ply-cap", "12", "--out",
                           str(out)]) == 0
    [run] = out.glob("play__*.json")
    result = json.loads(run.read_text())
    assert result["ladder"]["adjudication"] == "adjudication@2"
    assert result["judge"] == "5000 nodes per position"
    asked = log.read_text().splitlines()
    assert "go nodes 5000" in asked and "go nodes 20000" not in asked
    # The same player on the committed ladder, into the same --out: the rungs share names,
    # yet its games are its own (keyed by the ladder's engine and rule), not the first's.
    monkeypatch.delenv("FAULT_LOG")
    assert benchmark.main(["play", "--model", "random", "--stockfish", stockfish,
                           "--max-games", "2", "--ply-cap", "12", "--out", str(out)]) == 0
    with sqlite3.connect(out / "games.db") as db:
        stored = [k for (k,) in db.execute("SELECT key FROM games")]
    assert len(stored) == 4 and len({k.split(":")[0] for k in stored}) == 2
    assert benchmark.main([*argv, "--held-out-games", "6", "--held-out-file",
                           str(tmp_path / "h.csv.gz"), "--stockfish", stockfish]) == 0
    out = capsys.readouterr().out
    assert "pairs inside their 90% intervals" in out and "6 held-out games" in out
    kept = read_games(tmp_path / "h.csv.gz")
    assert len(kept) == 6 and len(usable(COMMITTED.rungs, kept, "Stockfish 15.1").weak) == 6
    assert len(read_games(tmp_path / "g.csv.gz")) == 12  # the fit's file is untouched
