"""Real baselines on a sample of the committed questions.csv, with the real engine."""

import json
import math
from pathlib import Path

import pytest

import benchmark
from tests.conftest import ROOT

PLAYERS = ("random", "stockfish:elo=1350", "stockfish:elo=2000", "stockfish")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory, stockfish: str) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("baselines")
    found = {}
    for player in PLAYERS:
        argv = ["--model", player, "--questions", str(ROOT / "questions.csv"), "--out",
                str(out / player.replace(":", "_")), "--limit", "100", "--stockfish", stockfish,
                "--bootstrap", "300", "--workers", "2"]
        assert benchmark.main(argv) == 0
        found[player] = json.loads(next((out / player.replace(":", "_")).glob("*.json"))
                                   .read_text())
    return found


def test_full_strength_stockfish_is_near_perfect(results: dict[str, dict]) -> None:
    best = results["stockfish"]
    assert best["legal_rate"] == 1.0
    assert best["acpl"] < 15
    assert best["best_move_rate"] == max(r["best_move_rate"] for r in results.values())


def test_random_is_legal_and_bad(results: dict[str, dict]) -> None:
    rnd = results["random"]
    assert rnd["legal_rate"] == 1.0 and rnd["illegal"] == dict.fromkeys(
        ("format", "ambiguous", "state", "rule"), 0)
    assert rnd["acpl"] > 200
    # Legal by construction: its illegal rate says nothing of a world model.
    assert "score" not in rnd["world_model"]  # a static run never has a rubric score
    assert rnd["world_model"]["illegal_rate"]["value"] == 0
    assert rnd["world_model"]["note"].startswith("not applicable: a baseline player")


def _place(e: dict) -> float:
    """An estimate's position: its mean, else its one-sided bound."""
    return e["mean"] if e["mean"] is not None else e["hi"] if e["kind"] == "below" else e["lo"]


def _interval(e: dict) -> tuple[float, float]:
    """An estimate's 90% interval, a one-sided bound open on its other side."""
    return (e["lo"] if e["lo"] is not None else -math.inf,
            e["hi"] if e["hi"] is not None else math.inf)


@pytest.mark.parametrize("kind", ["puzzle", "human"])
def test_elo_estimates_order_the_players(results: dict[str, dict], kind: str) -> None:
    """Each player is placed below the next stronger one, or the two estimates' intervals
    overlap: Stockfish at a UCI_Elo picks its moves with a time-seeded randomness, so on 100
    questions 1350 and 2000 can trade places within their error, never beyond it. On 100
    positions the humans' line may be too flat to place a player near the humans' own loss:
    such a player reads "not identifiable" (its interval, everything, overlaps any other);
    the random mover and full Stockfish, far off either side, are always placed."""
    estimates = [results[p]["elo"][kind] for p in PLAYERS]
    shown = {p: results[p]["elo"][kind]["text"] for p in PLAYERS}
    placed = [e for e in estimates if e["kind"] != "not identifiable"]
    assert estimates[0] in placed and estimates[-1] in placed, shown
    if kind == "puzzle":
        assert placed == estimates, shown
    places = [_place(e) for e in placed]
    assert None not in places
    for weaker, stronger in zip(placed, placed[1:], strict=False):
        assert _place(weaker) <= _place(stronger) or \
            _interval(weaker)[1] >= _interval(stronger)[0], shown
    # The weakest and the strongest reach the ends: a one-sided bound's place is its bound,
    # not a reading, so full Stockfish's "above X" may sit under a weaker player's mean
    # while its interval reaches past it.
    assert _interval(placed[0])[0] <= min(places), shown
    assert _interval(placed[-1])[1] >= max(places), shown
    # No estimate is a number beyond what the data can speak for.
    assert all(abs(x) < 5000 for x in places)


def test_leaderboard_ranks_complete_runs_on_the_same_questions(
        results: dict[str, dict], tmp_path: Path, caplog) -> None:
    for player, result in results.items():
        (tmp_path / f"{player.replace(':', '_')}.json").write_text(json.dumps(result))
    incomplete = dict(results["stockfish"], model="half-done", complete=False, infra=3)
    (tmp_path / "incomplete.json").write_text(json.dumps(incomplete))
    other = dict(results["stockfish"], model="other-set", questions_sha256="0" * 64)
    (tmp_path / "other.json").write_text(json.dumps(other))
    (tmp_path / "corrupt.json").write_text('{"schema_version": 1, "elo": ')
    (tmp_path / "foreign.json").write_text('{"hello": "world"}')
    assert benchmark.main(["leaderboard", "--results", str(tmp_path), "--questions",
                           str(ROOT / "questions.csv")]) == 0
    table = (tmp_path / "leaderboard.md").read_text()
    assert table.index("| stockfish |") < table.index("| random |")
    # The floor row sits in the last table of its section: ranked, or the one-sided list.
    assert "| floor | random mover |" in table or "| random mover (floor) |" in table
    assert "half-done" not in table and "other-set" not in table
    assert "skipping" in caplog.text and "corrupt.json" in caplog.text
    assert "foreign.json" in caplog.text
    assert (tmp_path / "leaderboard.svg").read_text().startswith("<?xml")
