"""The crosswalk to Lichess ratings: every statement from the fit's predictive, a figure only
between the anchors' ratings, a statement for every reading, everywhere it shows."""

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
from chess_eval.benchmark.human.anchors import (
    ANCHORS_FILE,
    HUMAN_DIR,
    READINGS_FILE,
    Anchor,
    TimeControl,
)
from chess_eval.benchmark.human.block import committed_block, human_metrics
from chess_eval.benchmark.human.crosswalk import Crosswalk, load_crosswalks
from chess_eval.benchmark.human.reading import Reading, run_reading
from chess_eval.benchmark.human.statement import (
    RATING_KINDS,
    Kind,
    figure_needs,
    narrowest,
    state,
)
from chess_eval.benchmark.stats.btd import expected_score
from chess_eval.benchmark.stats.elo import BELOW, INTERVAL
from chess_eval.engine import REFERENCE_ENGINE
from chess_eval.errors import DataError


@pytest.fixture(scope="module")
def walks() -> dict[TimeControl, Crosswalk]:
    found = {w.time_control: w for w in load_crosswalks(HUMAN_DIR, reference_ladder())}
    assert set(found) == set(TimeControl), "the committed anchors cover every time control"
    return found


def interval(mean: float, half: float = 20.0, games: int | None = None) -> dict[str, object]:
    return {"mean": mean, "lo": mean - half, "hi": mean + half, "kind": INTERVAL, "n": games}


def said(walk: Crosswalk, elo: dict[str, object],
         ladder: dict[str, Any] | None = None) -> dict[str, Any]:
    place = state(walk, elo, ladder)
    assert place is not None
    return place


def shared_with(walk: Crosswalk, i: int = 1) -> dict[str, Any]:
    """The ladder part of a run rated on the rungs an anchor was rated on."""
    m = walk.anchors[i].measured
    return {"sd": m.ladder_sd, "weights": list(m.weights)}


def test_time_controls_fastest_first_each_with_its_basis() -> None:
    found = load_crosswalks(HUMAN_DIR, reference_ladder())
    assert [w.time_control for w in found] == [TimeControl.BLITZ, TimeControl.RAPID,
                                               TimeControl.CLASSICAL]
    basis = {w.time_control: w.basis for w in found}
    assert basis[TimeControl.BLITZ].startswith("3 anchors, profiles with RD")
    assert basis[TimeControl.RAPID].startswith("3 anchors, quoted, no RD")
    assert basis[TimeControl.CLASSICAL].startswith("2 anchors, quoted, no RD")
    assert said(found[0], interval(2000.0))["basis"] == basis[TimeControl.BLITZ]


def test_a_figure_only_where_the_whole_predictive_lies_between_the_ratings(
        walks: dict[TimeControl, Crosswalk]) -> None:
    """Blitz and rapid give a precise reading between the anchors a figure, its interval the
    predictive's own (not clipped), inside the ratings; classical's anchors are rated closer
    than its narrowest predictive is wide, so it never gives one."""
    for walk in walks.values():
        middle = sum(walk.band) / 2
        low, high = walk.ratings
        placed = said(walk, interval(middle, 15.0))
        p = walk.predict(run_reading(interval(middle, 15.0), None))
        if walk.time_control == TimeControl.CLASSICAL:
            assert narrowest(walk) > high - low
            assert placed["kind"] != Kind.FIGURE and placed["value"] is None
            continue
        assert placed["kind"] == Kind.FIGURE
        assert low <= placed["lo"] <= placed["value"] <= placed["hi"] <= high
        step = 10 if (p.hi - p.lo) / 2 > 100 else 1
        assert abs(placed["lo"] - p.lo) <= step / 2 and abs(placed["hi"] - p.hi) <= step / 2
        assert placed["text"].startswith(f"Lichess {walk.time_control} ~")
        assert placed["bound"] is None and placed["expected_score"] is None


def test_stronger_is_never_placed_lower_and_more_error_is_wider(
        walks: dict[TimeControl, Crosswalk]) -> None:
    walk = walks[TimeControl.BLITZ]
    low, high = walk.band
    values = [walk.predict(x, 40.0).median for x in (low, (low + high) / 2, high)]
    assert values == sorted(values)
    narrow, wide = walk.predict(low + 50, 20.0), walk.predict(low + 50, 80.0)
    assert wide.hi - wide.lo > narrow.hi - narrow.lo


def implied(place: dict[str, Any]) -> tuple[float, float] | None:
    """What a statement says of the Lichess rating, as an interval (inf: open; None: it says
    a score, not a rating)."""
    kind = Kind(place["kind"])
    if kind == Kind.AT_MOST:
        return -math.inf, place["bound"]["value"]
    if kind == Kind.AT_LEAST:
        return place["bound"]["value"], math.inf
    if kind == Kind.FIGURE:
        return place["lo"], place["hi"]
    return None


@pytest.mark.parametrize("half", [30.0, 70.0, 110.0, 150.0])
def test_a_grid_of_readings_is_monotone_never_past_an_anchor_and_always_said(
        walks: dict[TimeControl, Crosswalk], half: float) -> None:
    """Readings 0 to 3,000: every reading gets a statement; what each says of the rating
    moves up with the reading (and its kind: at most, figure, at least), no figure or bound
    lies outside the anchors' ratings, and a score against an anchor rises too."""
    for walk in walks.values():
        low, high = walk.ratings
        last, rank = (-math.inf, -math.inf), 0
        last_score: dict[str, float] = {}
        for mean in np.arange(0.0, 3001.0, 25.0):
            place = said(walk, interval(float(mean), half, 100), shared_with(walk))
            assert place["text"] and "not placed" not in place["text"]
            ends = implied(place)
            if ends is not None:
                # Up to the rounding (a figure to the nearest 10, a bound to the nearest 10).
                assert ends[0] >= last[0] - 10 and ends[1] >= last[1] - 10, (mean, place)
                last = (max(last[0], ends[0]), max(last[1], ends[1]))
                assert RATING_KINDS.index(Kind(place["kind"])) >= rank, (mean, place)
                rank = RATING_KINDS.index(Kind(place["kind"]))
            for key in ("value", "lo", "hi"):
                assert place[key] is None or low <= place[key] <= high, (mean, place)
            if place["bound"] is not None:
                assert low <= place["bound"]["value"] <= high, (mean, place)
            if place["kind"] != Kind.FIGURE:
                score = place["expected_score"]["value"]
                assert score >= last_score.get(place["anchor"], 0.0) - 1e-9, (mean, place)
                last_score[place["anchor"]] = score
                assert place["anchor"] == walk.nearest(float(mean)).bot
                assert place["anchor_rating"] == round(
                    next(a.rating for a in walk.anchors if a.bot == place["anchor"]))


def _committed_reading(net: int) -> dict[str, object]:
    """A net's committed game Elo (data/human/maia_players.csv: played served, for real)."""
    with (HUMAN_DIR / READINGS_FILE).open(encoding="utf-8", newline="") as handle:
        [row] = [r for r in csv.DictReader(handle) if r["net"] == str(net)]
    return {"mean": float(row["game_elo"]), "lo": float(row["game_elo_lo"]),
            "hi": float(row["game_elo_hi"]), "kind": INTERVAL, "n": int(row["games"])}


def test_the_maia_1700_net_played_for_real_gets_a_statement_everywhere(
        walks: dict[TimeControl, Crosswalk]) -> None:
    """The net the crosswalk never saw, served through the API (its committed reading, on
    the rungs the anchors were rated on): on version 11 it reads just below the weakest
    anchor's reading while its interval reaches past it, so every time control gives a bound
    at most, within the anchors' ratings, with its score against maia1, and no figure."""
    elo = _committed_reading(1700)
    assert walks[TimeControl.BLITZ].anchors[0].reading > float(str(elo["mean"]))
    for tc, walk in walks.items():
        place = said(walk, elo, shared_with(walk, 0))
        low, high = walk.ratings
        assert place["kind"] == Kind.AT_MOST, (tc, place["text"])
        assert low <= place["bound"]["value"] <= high
        assert place["anchor"] == "maia1" and place["expected_score"]["lo"] < 0.5
        assert place["text"].startswith(f"Lichess {tc.value} at most ~")
        assert place["figure_needs"]["reason"] == "outside"


def test_the_half_width_a_figure_needs_gives_one(walks: dict[TimeControl, Crosswalk]) -> None:
    """Play's default +-70 at the blitz anchors' middle gives blitz no figure; the
    half-width it is told it needs does, a little more does not, and the games it is told
    are the games' error at that half-width (its own error as one over the games)."""
    walk, ladder = walks[TimeControl.BLITZ], shared_with(walks[TimeControl.BLITZ])
    mid = sum(walk.band) / 2
    place = said(walk, interval(mid, 70.0, 100), ladder)
    needs = place["figure_needs"]
    assert needs["reason"] == "half_width" and 30 < needs["half_width"] < 70
    assert said(walk, interval(mid, needs["half_width"] - 0.5), ladder)["kind"] == \
        Kind.FIGURE
    assert said(walk, interval(mid, needs["half_width"] + 3.0), ladder)["kind"] != \
        Kind.FIGURE
    run = run_reading(interval(mid, 70.0, 100), ladder)
    assert run is not None
    own_needed = math.sqrt((needs["half_width"] / 1.6448536) ** 2 - run.ladder_sd ** 2)
    assert needs["games"] == pytest.approx(100 * (run.own_sd / own_needed) ** 2, rel=0.1)
    metrics = human_metrics(place)
    assert metrics["lichess_blitz_figure_half_width"] == needs["half_width"]
    assert metrics["lichess_blitz_figure_games"] == needs["games"]
    # Far from the anchors no number of games helps, and nothing is said of it.
    far = figure_needs(walk, Reading(1200.0, 40.0, 0.0, games=100))
    assert far.reason == "outside" and far.half_width is None
    assert "figure" not in said(walk, interval(1200.0, 70.0, 100))["text"]


def test_the_random_mover_scores_under_one_percent_against_the_weakest_anchor(
        walks: dict[TimeControl, Crosswalk]) -> None:
    for elo, text in ((interval(0.0, 30.0), "scores <0.1% [<0.1%, <0.1%] against maia1 "),
                      ({"mean": None, "lo": None, "hi": 60.0, "kind": BELOW},
                       "scores at most <0.1% against maia1 ")):
        place = said(walks[TimeControl.BLITZ], elo)
        assert place["kind"] == Kind.SCORE
        assert place["anchor"] == "maia1" and place["anchor_rating"] == 1417
        assert place["expected_score"]["hi"] < 0.01
        assert place["value"] is None and place["hi"] is None
        assert place["text"].startswith(text)
    # Every game lost: the score is a bound too, never a value with an interval.
    bound = said(walks[TimeControl.BLITZ], {"mean": None, "lo": None, "hi": 1800.0,
                                            "kind": BELOW})
    assert bound["expected_score"]["value"] is None and bound["expected_score"]["lo"] is None
    assert bound["text"].startswith("scores at most ")


def test_below_the_anchors_players_of_different_strength_read_differently(
        walks: dict[TimeControl, Crosswalk]) -> None:
    """The random mover and a 1,268 player read different words; the 1,268 player scores
    0.9% against maia1 (read 2,304 on version 11): the BTD expected score at -1,036 with nu
    at the pair's mean, as the ladder gives it (the docs' figure is generated from this
    function)."""
    walk = walks[TimeControl.BLITZ]
    weak, middling = said(walk, interval(54.0, 40.0)), said(walk, interval(1268.0, 60.0))
    assert weak["kind"] == middling["kind"] == Kind.SCORE
    assert weak["text"] != middling["text"]
    assert weak["expected_score"]["value"] < middling["expected_score"]["value"]
    maia1 = walk.anchors[0].reading
    ladder = reference_ladder()
    assert ladder is not None
    assert middling["expected_score"]["value"] == pytest.approx(float(expected_score(
        1268.0 - maia1, ladder.nu_at((1268.0 + maia1) / 2))), abs=5e-5)  # rounded to 4
    assert middling["text"].startswith("scores 0.9% ")


def test_a_wide_reading_near_the_weakest_anchor_is_never_a_figure_below_its_rating(
        walks: dict[TimeControl, Crosswalk]) -> None:
    """The issue's own cases: 2230 [2030, 2430] read ~1,397, below maia1's 1,417; at 2221 a
    player read higher than a stronger one."""
    walk = walks[TimeControl.BLITZ]
    for elo in ({"mean": 2230.0, "lo": 2030.0, "hi": 2430.0, "kind": INTERVAL},
                {"mean": 2233.0, "lo": 2132.0, "hi": 2334.0, "kind": INTERVAL},
                interval(2221.0, 100.0)):
        place = said(walk, elo)
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


# Where each reads: the net's few games leave an interval wide, so it may read one-sided or
# as a score, never past the anchors; the others far from the anchors, a score.
PLAYERS = {"random": {Kind.SCORE}, "maia:net=1500": set(Kind),
           "stockfish:nodes=5000": {Kind.SCORE}}
# A few games each, the schedule started near each player's strength (--prior), and enough
# for Stockfish's to lose a game (a bound alone could straddle the anchors): its 14th is its
# one loss (the games are seeded); and for the Maia net's reading to come inside the band
# (after 6 games its interval, converted, still reached below maia1's reading).
GAMES = {"random": ["--max-games", "6"],
         "stockfish:nodes=5000": ["--max-games", "14", "--prior", "2700", "200"],
         "maia:net=1500": ["--max-games", "12", "--prior", "2000", "200"]}


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


def test_every_place_shows_the_statement(played: Path, stockfish: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    for player, where in PLAYERS.items():
        result = _result(played, player)
        human = result["human"]
        assert human["scale"] == "converted from Stockfish 15.1"
        blitz = next(tc for tc in human["time_controls"] if tc["time_control"] == "blitz")
        assert blitz["kind"] in where, (player, result["conditions"]["standard"]["elo"])
        if player != "maia:net=1500":
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
    # Inside the band: its statement is against the middle anchor (its 12 games leave its
    # interval too wide for a bound).
    assert "against maia5 (maia-1500, Lichess blitz 1,489" in games["maia:net=1500"]
    with (played / "leaderboard.csv").open(encoding="utf-8", newline="") as handle:
        assert {r["model"]: r["human"] for r in csv.DictReader(handle)
                if r["scale"].startswith("game Elo")} == games
    site = played / "site"
    assert benchmark.main(["report", "--results", str(played), "--out", str(site)]) == 0
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="human"' in index and "maia5" in index
    for text in games.values():
        # The site shows each time control's statement.
        first = text.split("; ")[0].split(", rapid ")[0]  # a score said once: blitz's
        assert first.replace("'", "&#39;") in index
    # leaderboard.json and .csv carry the place's fields by name: no `hi` that is a rating.
    fields = {r["model"]: r for r in rows if r["scale"].startswith("game Elo")}
    assert fields["random"]["lichess_blitz_anchor_rating"] == 1417
    assert fields["random"]["lichess_blitz_expected_score_hi"] < 0.01
    assert fields["random"]["lichess_blitz_expected_score"] is None  # a bound, no value
    assert fields["random"]["lichess_blitz_hi"] is None
    assert fields["random"]["lichess_blitz"] is None
