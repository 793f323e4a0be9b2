"""The crosswalk to Lichess ratings: placed only inside the anchors' band, everywhere it shows."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

import benchmark
from lib.benchmark.core.human import (
    ANCHORS_FILE,
    HUMAN_DIR,
    READINGS_FILE,
    Crosswalk,
    Placement,
    TimeControl,
    committed_block,
    load_crosswalks,
)
from lib.benchmark.stats.elo import ABOVE, BELOW, INTERVAL, UNIDENTIFIED
from lib.benchmark.stats.ladder_map import REFERENCE_ENGINE
from lib.errors import DataError


@pytest.fixture(scope="module")
def walks() -> dict[TimeControl, Crosswalk]:
    found = {w.time_control: w for w in load_crosswalks()}
    assert set(found) == set(TimeControl), "the committed anchors cover every time control"
    return found


def interval(mean: float, half: float = 60.0) -> dict[str, object]:
    return {"mean": mean, "lo": mean - half, "hi": mean + half, "kind": INTERVAL}


def test_a_reading_between_anchors_reads_between_their_ratings(
        walks: dict[TimeControl, Crosswalk]) -> None:
    for walk in walks.values():
        weak, strong = walk.anchors[0], walk.anchors[-1]
        middle = (weak.reading + strong.reading) / 2
        placed = walk.place(interval(middle))
        assert placed["placement"] == Placement.INSIDE
        assert placed["lo"] < placed["value"] < placed["hi"]
        low, high = sorted((weak.rating, strong.rating))
        assert low - 60 <= placed["value"] <= high + 60
        assert placed["text"].startswith(f"Lichess {walk.time_control} ~")


def test_stronger_is_never_placed_lower_and_more_error_is_wider(
        walks: dict[TimeControl, Crosswalk]) -> None:
    walk = walks[TimeControl.BLITZ]
    low, high = walk.band
    values = [walk.predict(x, 40.0)[0] for x in (low, (low + high) / 2, high)]
    assert values == sorted(values)
    narrow, wide = walk.predict(low + 50, 20.0), walk.predict(low + 50, 80.0)
    assert wide[2] - wide[1] > narrow[2] - narrow[1]


def test_outside_the_band_is_a_bound_never_a_figure(walks: dict[TimeControl, Crosswalk]) -> None:
    walk = walks[TimeControl.BLITZ]
    low, high = walk.band
    below = walk.place(interval(low - 500))
    assert below["placement"] == Placement.BELOW and below["value"] is None
    weak = walk.anchors[0]
    assert below["text"] == (f"below maia-{weak.net}'s level (Lichess blitz "
                             f"~{round(weak.rating):,})")
    above = walk.place({"mean": None, "lo": high + 10, "hi": None, "kind": ABOVE})
    assert above["placement"] == Placement.ABOVE and above["lo"] == round(
        walk.anchors[-1].rating)
    assert above["text"].startswith(f"above maia-{walk.anchors[-1].net}'s level")
    # A bound the band straddles, or nothing known: no place at all.
    for elo in ({"mean": None, "lo": None, "hi": (low + high) / 2, "kind": BELOW},
                {"mean": None, "lo": None, "hi": None, "kind": UNIDENTIFIED}):
        placed = walk.place(elo)
        assert placed["placement"] == Placement.UNPLACED
        assert placed["value"] is None and "not placed" in placed["text"]


def test_only_the_reference_scale_or_a_mapped_one_is_placed() -> None:
    elo = interval(2000.0)
    assert committed_block(elo, REFERENCE_ENGINE)["scale"] == "reference"
    converted = committed_block(elo, "Stockfish 15.1")
    assert converted is not None and converted["scale"] == "converted from Stockfish 15.1"
    assert committed_block(elo, "Stockfish 16") is None


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
    assert moved.predict(x, 40)[0] == pytest.approx(walks[TimeControl.BLITZ].predict(x, 40)[0]
                                                    + 100, abs=1)
    rows[0]["rating"] = "about 1400"
    with (tmp_path / ANCHORS_FILE).open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(DataError, match=rf"{ANCHORS_FILE}, line 2"):
        load_crosswalks(tmp_path)


PLAYERS = {"random": Placement.BELOW, "maia:net=1500": Placement.INSIDE,
           "stockfish:nodes=5000": Placement.ABOVE}
# A few games each, the schedule started near each player's strength (--prior): enough for
# the net's interval, and for Stockfish's to lose a game (a bound alone could straddle the band).
GAMES = {"random": ["--max-games", "6"],
         "stockfish:nodes=5000": ["--max-games", "20", "--prior", "2700", "200"],
         "maia:net=1500": ["--max-games", "10", "--prior", "2000", "200"]}


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
        assert blitz["placement"] == where, (player, result["conditions"]["standard"]["elo"])
        assert blitz["snapshot"] and blitz["anchors"]
        report = next(played.glob(f"play__{player.replace(':', '_').replace('=', '_')}__*.md"))
        assert blitz["text"] in report.read_text(encoding="utf-8")
    # The terminal summary (a rerun answers from the games store).
    capsys.readouterr()
    assert benchmark.main(["play", "--model", "random", *GAMES["random"], "--ladder",
                           "stockfish-15.1", "--stockfish", stockfish, "--out", str(played)]) == 0
    assert "human scale: below maia-1100's level (Lichess blitz ~" in capsys.readouterr().out
    assert benchmark.main(["leaderboard", "--results", str(played)]) == 0
    board = (played / "leaderboard.md").read_text(encoding="utf-8")
    assert "Lichess blitz" in board
    rows = json.loads((played / "leaderboard.json").read_text())["rows"]
    games = {r["model"]: r["human"] for r in rows if r["scale"].startswith("game Elo")}
    assert "below maia-1100's level" in games["random"]
    assert "above maia-1900's level" in games["stockfish:nodes=5000"]
    assert "Lichess blitz ~" in games["maia:net=1500"]
    with (played / "leaderboard.csv").open(encoding="utf-8", newline="") as handle:
        assert {r["model"]: r["human"] for r in csv.DictReader(handle)
                if r["scale"].startswith("game Elo")} == games
    site = played / "site"
    assert benchmark.main(["report", "--results", str(played), "--out", str(site)]) == 0
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="human"' in index and "maia5" in index
    for text in games.values():
        assert text.split("; ")[0].replace("'", "&#39;") in index
