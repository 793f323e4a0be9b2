"""Real baselines on a sample of the committed questions.csv, with the real engine."""

import json
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
                str(out / player.replace(":", "_")), "--limit", "260", "--stockfish", stockfish,
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
    assert rnd["world_model"]["score"] == 1.0


@pytest.mark.parametrize("kind", ["puzzle", "human"])
def test_elo_estimates_order_the_players(results: dict[str, dict], kind: str) -> None:
    means = [results[p]["elo"][kind]["mean"] for p in PLAYERS]
    assert None not in means
    assert means == sorted(means), dict(zip(PLAYERS, means, strict=True))


def test_leaderboard_ranks_every_run(results: dict[str, dict], tmp_path: Path) -> None:
    for player, result in results.items():
        (tmp_path / f"{player.replace(':', '_')}.json").write_text(json.dumps(result))
    assert benchmark.main(["leaderboard", "--out", str(tmp_path)]) == 0
    table = (tmp_path / "leaderboard.md").read_text()
    assert table.index("| stockfish |") < table.index("| random |")
    assert (tmp_path / "leaderboard.svg").read_text().startswith("<?xml")
