"""The crosswalk to Lichess ratings: placed only inside the anchors' band, everywhere it shows."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import benchmark
from chess_eval.benchmark.arena.ladder import reference_ladder
from chess_eval.benchmark.core.human import (
    ANCHORS_FILE,
    HUMAN_DIR,
    READINGS_FILE,
    Anchor,
    Crosswalk,
    Placement,
    Reading,
    TimeControl,
    committed_block,
    load_crosswalks,
    run_reading,
)
from chess_eval.benchmark.stats.elo import BELOW, INTERVAL
from chess_eval.engine import REFERENCE_ENGINE
from chess_eval.errors import DataError


@pytest.fixture(scope="module")
def walks() -> dict[TimeControl, Crosswalk]:
    found = {w.time_control: w for w in load_crosswalks(HUMAN_DIR, reference_ladder())}
    assert set(found) == set(TimeControl), "the committed anchors cover every time control"
    return found


def interval(mean: float, half: float = 20.0) -> dict[str, object]:
    return {"mean": mean, "lo": mean - half, "hi": mean + half, "kind": INTERVAL}


def test_time_controls_fastest_first_each_with_its_basis() -> None:
    found = load_crosswalks(HUMAN_DIR, reference_ladder())
    assert [w.time_control for w in found] == [TimeControl.BLITZ, TimeControl.RAPID,
                                               TimeControl.CLASSICAL]
    basis = {w.time_control: w.basis for w in found}
    assert basis[TimeControl.BLITZ].startswith("3 anchors, profiles with RD")
    assert basis[TimeControl.RAPID].startswith("3 anchors, quoted, no RD")
    assert basis[TimeControl.CLASSICAL].startswith("2 anchors, quoted, no RD")
    place = found[0].place(interval(2000.0))
    assert place["basis"] == basis[TimeControl.BLITZ]


def test_a_reading_between_anchors_reads_between_their_ratings(
        walks: dict[TimeControl, Crosswalk]) -> None:
    for walk in walks.values():
        weak, strong = walk.anchors[0], walk.anchors[-1]
        middle = (weak.reading + strong.reading) / 2
        placed = walk.place(interval(middle, 15.0))
        assert placed["placement"] == Placement.INSIDE
        assert placed["lo"] <= placed["value"] <= placed["hi"]
        low, high = walk.ratings
        assert low <= placed["lo"] and placed["hi"] <= high
        assert placed["text"].startswith(f"Lichess {walk.time_control} ~")
        assert placed["bound"] is None and placed["expected_score"] is None


def test_a_figure_rounds_to_its_interval(walks: dict[TimeControl, Crosswalk]) -> None:
    """Within +-100 to one Elo; wider, to 10 (the rapid and classical anchors, quoted with no
    RD, give a wider fit than blitz's profiles)."""
    for walk in walks.values():
        placed = walk.place(interval(sum(walk.band) / 2, 10.0))
        p = walk.predict(run_reading(interval(sum(walk.band) / 2, 10.0), None))
        wide = (p.hi - p.lo) / 2 > 100
        assert all(v % 10 == 0 for v in (placed["value"], placed["lo"], placed["hi"])) or \
            not wide


def test_stronger_is_never_placed_lower_and_more_error_is_wider(
        walks: dict[TimeControl, Crosswalk]) -> None:
    walk = walks[TimeControl.BLITZ]
    low, high = walk.band
    values = [walk.predict(x, 40.0).median for x in (low, (low + high) / 2, high)]
    assert values == sorted(values)
    narrow, wide = walk.predict(low + 50, 20.0), walk.predict(low + 50, 80.0)
    assert wide.hi - wide.lo > narrow.hi - narrow.lo


RANK = [Placement.BELOW, Placement.AT_MOST, Placement.INSIDE, Placement.AT_LEAST,
        Placement.ABOVE]


def implied(place: dict[str, Any], walk: Crosswalk) -> tuple[float, float]:
    """What a statement says of the Lichess rating, as an interval (inf: open)."""
    kind = Placement(place["placement"])
    low, high = walk.ratings
    if kind == Placement.BELOW:
        return -math.inf, walk.anchors[0].rating
    if kind == Placement.ABOVE:
        return walk.anchors[-1].rating, math.inf
    if kind == Placement.AT_MOST:
        return -math.inf, place["bound"]["value"]
    if kind == Placement.AT_LEAST:
        return place["bound"]["value"], math.inf
    if kind == Placement.INSIDE:
        return place["lo"], place["hi"]
    return -math.inf, math.inf


@pytest.mark.parametrize("half", [20.0, 60.0, 110.0, 200.0])
def test_a_grid_of_readings_reads_monotone_and_never_past_the_anchors(
        walks: dict[TimeControl, Crosswalk], half: float) -> None:
    """Readings 0 to 3,000: each statement's implied interval moves up with the reading, no
    figure lies outside the anchors' ratings, and a score against an anchor rises too."""
    for walk in walks.values():
        low, high = walk.ratings
        last = (-math.inf, -math.inf)
        last_score: dict[str, float] = {}
        for mean in np.arange(0.0, 3001.0, 25.0):
            place = walk.place(interval(float(mean), half), {"sd": 25.0})
            ends = implied(place, walk)
            # Up to the rounding (a bound outward to 10, a figure to the nearest 10).
            assert ends[0] >= last[0] - 10 and ends[1] >= last[1] - 10, (mean, place)
            last = (max(last[0], ends[0]), max(last[1], ends[1]))
            for key in ("value", "lo", "hi"):
                assert place[key] is None or low <= place[key] <= high, (mean, place)
            if place["bound"] is not None:
                assert low - 10 <= place["bound"]["value"] <= high + 10, (mean, place)
            if place["expected_score"] is not None:
                score = place["expected_score"]["value"]
                assert score >= last_score.get(place["anchor"], 0.0) - 1e-9, (mean, place)
                last_score[place["anchor"]] = score
                assert place["anchor_rating"] == round(
                    next(a.rating for a in walk.anchors if a.bot == place["anchor"]))
            assert "hi" not in place or place["placement"] == Placement.INSIDE or \
                place["hi"] is None


def test_the_random_mover_scores_under_one_percent_against_the_weakest_anchor(
        walks: dict[TimeControl, Crosswalk]) -> None:
    for elo, said in ((interval(0.0, 30.0), "scores <0.1% [<0.1%, <0.1%] against maia1 "),
                      ({"mean": None, "lo": None, "hi": 60.0, "kind": BELOW},
                       "scores at most <0.1% against maia1 ")):
        place = walks[TimeControl.BLITZ].place(elo)
        assert place["placement"] == Placement.BELOW
        assert place["anchor"] == "maia1" and place["anchor_rating"] == 1417
        assert place["expected_score"]["hi"] < 0.01
        assert place["value"] is None and place["hi"] is None
        assert place["text"].startswith(said)
    # Every game lost: the score is a bound too, never a value with an interval.
    bound = walks[TimeControl.BLITZ].place({"mean": None, "lo": None, "hi": 1800.0,
                                            "kind": BELOW})
    assert bound["expected_score"]["value"] is None and bound["expected_score"]["lo"] is None
    assert bound["text"].startswith("scores at most ")


def test_below_the_anchors_players_of_different_strength_read_differently(
        walks: dict[TimeControl, Crosswalk]) -> None:
    """The random mover and a 1,268 player no longer read the same words."""
    walk = walks[TimeControl.BLITZ]
    weak, middling = walk.place(interval(54.0, 40.0)), walk.place(interval(1268.0, 60.0))
    assert weak["placement"] == middling["placement"] == Placement.BELOW
    assert weak["text"] != middling["text"]
    assert weak["expected_score"]["value"] < middling["expected_score"]["value"]


def test_a_wide_reading_below_the_weakest_anchor_is_never_a_figure_below_its_rating(
        walks: dict[TimeControl, Crosswalk]) -> None:
    """The issue's own cases: 2230 [2030, 2430] read ~1,397, below maia1's 1,417; at 2221 a
    player read higher than a stronger one."""
    walk = walks[TimeControl.BLITZ]
    for elo in ({"mean": 2230.0, "lo": 2030.0, "hi": 2430.0, "kind": INTERVAL},
                {"mean": 2233.0, "lo": 2132.0, "hi": 2334.0, "kind": INTERVAL},
                interval(2221.0, 100.0)):
        place = walk.place(elo)
        assert place["value"] is None, place
        if place["bound"] is not None:
            assert place["bound"]["value"] >= walk.anchors[0].rating


def test_errors_in_variables_recover_a_line_that_noisy_readings_would_flatten() -> None:
    """Anchors exactly on a line of slope 1 with readings known only to +-100: the fit
    returns the line (adding noise to the noisy readings flattened it toward 0)."""
    def anchor(bot: str, reading: float, rating: float) -> Anchor:
        return Anchor(bot, 1100, rating, 1.0, "2026-01-01", Reading(reading, 100.0, 0.0))
    walk = Crosswalk(TimeControl.BLITZ, (anchor("a", 2000, 1400), anchor("b", 2200, 1600),
                                         anchor("c", 2400, 1800)))
    for reading, rating in ((2000, 1400), (2400, 1800)):
        assert walk.predict(reading, 0.0).median == pytest.approx(rating, abs=15)


def test_the_ladders_shared_error_cancels_near_the_anchors(
        walks: dict[TimeControl, Crosswalk]) -> None:
    """A run rated on the rungs the anchors were rated on shares their ladder error: its
    figure is narrower than with the errors drawn apart, and so is its score against one."""
    shared = walks[TimeControl.BLITZ]
    apart = Crosswalk(shared.time_control, shared.anchors)  # no covariance: independent
    mid = shared.anchors[1].measured
    run = Reading(sum(shared.band) / 2, 20.0, mid.ladder_sd, mid.weights)
    one, other = shared.predict(run), apart.predict(run)
    assert one.hi - one.lo < other.hi - other.lo
    near = shared.expected_score(run, shared.anchors[0])
    far = apart.expected_score(run, shared.anchors[0])
    assert near[2] - near[1] < far[2] - far[1]


def test_the_readings_are_the_refit_of_the_committed_games() -> None:
    """data/human/maia_players.csv's game columns are what the committed games give on the
    committed reference ladder (python -m bench.maia_players refit)."""
    from bench.maia_players import refitted

    with (HUMAN_DIR / READINGS_FILE).open(encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle))
    fresh = refitted()
    assert [r["player"] for r in table] == [r["player"] for r in fresh]
    for old, new in zip(table, fresh, strict=True):
        for key in ("game_elo", "game_elo_lo", "game_elo_hi", "game_elo_sd", "games",
                    "game_elo_ladder_sd", "ladder_weights"):
            assert str(old[key]) == str(new[key]), (old["player"], key)


def test_only_the_reference_scale_or_a_mapped_one_is_placed() -> None:
    elo, reference = interval(2000.0), reference_ladder()
    assert committed_block(elo, REFERENCE_ENGINE, reference)["scale"] == "reference"
    converted = committed_block(elo, "Stockfish 15.1", reference)
    assert converted is not None and converted["scale"] == "converted from Stockfish 15.1"
    assert committed_block(elo, "Stockfish 16", reference) is None


def test_a_new_snapshot_is_a_data_change(tmp_path: Path,
                                         walks: dict[TimeControl, Crosswalk]) -> None:
    shutil.copy(HUMAN_DIR / READINGS_FILE, tmp_path)
    with (HUMAN_DIR / ANCHORS_FILE).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        if row["time_control"] == "blitz":
            row["rating"] = str(int(row["rating"]) + 100)
    with (tmp_path / ANCHORS_FILE).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    moved = {w.time_control: w for w in load_crosswalks(tmp_path)}[TimeControl.BLITZ]
    x = sum(moved.band) / 2
    unmoved = {w.time_control: w for w in load_crosswalks()}[TimeControl.BLITZ]
    assert moved.predict(x, 40).median == pytest.approx(unmoved.predict(x, 40).median + 100,
                                                        abs=1)
    rows[0]["rating"] = "about 1400"
    with (tmp_path / ANCHORS_FILE).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(DataError, match=rf"{ANCHORS_FILE}, line 2"):
        load_crosswalks(tmp_path)


# Where each reads: the net's few games leave an interval wider than the anchors' readings
# (a figure needs one narrower), so it may read one-sided or not at all, never past them.
PLAYERS = {"random": {Placement.BELOW},
           "maia:net=1500": {Placement.AT_MOST, Placement.UNPLACED, Placement.AT_LEAST,
                             Placement.INSIDE},
           "stockfish:nodes=5000": {Placement.ABOVE}}
# A few games each, the schedule started near each player's strength (--prior), and enough
# for Stockfish's to lose a game (a bound alone could straddle the anchors): its 14th is its
# one loss (the games are seeded).
GAMES = {"random": ["--max-games", "6"],
         "stockfish:nodes=5000": ["--max-games", "14", "--prior", "2700", "200"],
         "maia:net=1500": ["--max-games", "6", "--prior", "2000", "200"]}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory, stockfish: str) -> Path:
    """Real play runs on Stockfish 15.1's ladder (converted to the reference scale): one
    below the band, one inside, one above."""
    out = tmp_path_factory.mktemp("human")
    for player in PLAYERS:
        assert benchmark.main(["play", "--model", player, *GAMES[player], "--ladder",
                               "stockfish-15.1", "--stockfish", stockfish, "--out",
                               str(out)]) == 0
    return out


def _result(out: Path, player: str) -> dict[str, object]:
    stem = player.replace(":", "_").replace("=", "_")
    [path] = out.glob(f"play__{stem}__*.json")
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_place_shows_the_placement(played: Path, stockfish: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    for player, where in PLAYERS.items():
        result = _result(played, player)
        human = result["human"]
        assert human["scale"] == "converted from Stockfish 15.1"
        blitz = next(tc for tc in human["time_controls"] if tc["time_control"] == "blitz")
        assert blitz["placement"] in where, (player, result["conditions"]["standard"]["elo"])
        if blitz["placement"] in (Placement.BELOW, Placement.ABOVE):
            assert blitz["value"] is blitz["hi"] is blitz["lo"] is None
            score = [blitz["expected_score"][k] for k in ("lo", "value", "hi")
                     if blitz["expected_score"][k] is not None]
            assert score and score == sorted(score)
        assert blitz["snapshot"] and blitz["anchors"]
        report = next(played.glob(f"play__{player.replace(':', '_').replace('=', '_')}__*.md"))
        assert blitz["text"] in report.read_text(encoding="utf-8")
    # The terminal summary (a rerun answers from the games store).
    capsys.readouterr()
    assert benchmark.main(["play", "--model", "random", *GAMES["random"], "--ladder",
                           "stockfish-15.1", "--stockfish", stockfish, "--out", str(played)]) == 0
    # Six games lost bound the game Elo (below ~870), so the score is a bound too, well under
    # 1% against the weakest anchor: one score, said once, with that anchor's rating on each
    # time control.
    assert re.search(r"human scale: scores at most 0\.\d% against maia1 \(maia-1100, Lichess "
                     r"blitz 1,417, rapid 1,565, classical 1,635\)\n", capsys.readouterr().out)
    assert benchmark.main(["leaderboard", "--results", str(played)]) == 0
    board = (played / "leaderboard.md").read_text(encoding="utf-8")
    assert "Lichess blitz" in board
    rows = json.loads((played / "leaderboard.json").read_text())["rows"]
    games = {r["model"]: r["human"] for r in rows if r["scale"].startswith("game Elo")}
    assert re.match(r"scores at most 0\.\d% against maia1", games["random"])
    assert "against maia9 (maia-1900, Lichess blitz 1,621" in games["stockfish:nodes=5000"]
    assert games["maia:net=1500"].startswith("Lichess")
    with (played / "leaderboard.csv").open(encoding="utf-8", newline="") as handle:
        assert {r["model"]: r["human"] for r in csv.DictReader(handle)
                if r["scale"].startswith("game Elo")} == games
    site = played / "site"
    assert benchmark.main(["report", "--results", str(played), "--out", str(site)]) == 0
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="human"' in index and "maia5" in index
    for text in games.values():
        # The site shows each time control's statement (the one-line text merges three
        # "not placed" into one).
        first = text.split("; ")[0].split(", rapid ")[0]  # a score said once: blitz's
        if first.startswith("Lichess: not placed"):
            first = "Lichess blitz: not placed"
        assert first.replace("'", "&#39;") in index
    # leaderboard.json and .csv carry the place's fields by name: no `hi` that is a rating.
    fields = {r["model"]: r for r in rows if r["scale"].startswith("game Elo")}
    assert fields["random"]["lichess_blitz_anchor_rating"] == 1417
    assert fields["random"]["lichess_blitz_expected_score_hi"] < 0.01
    assert fields["random"]["lichess_blitz_expected_score"] is None  # a bound, no value
    assert fields["random"]["lichess_blitz_hi"] is None
    assert fields["random"]["lichess_blitz"] is None
