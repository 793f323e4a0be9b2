"""The tree of targets, checked against the seed's own drawing, and its scaling."""

import re

import pytest

from chess_eval.testset.tree import GAME_TARGETS, PUZZLE_TARGETS, elo_bucket, scale_targets, totals
from tests.conftest import DESIGN_NOTE

SEED = DESIGN_NOTE
LINE = re.compile(r"^(?P<indent>[|` ]*)[|`]-- (?P<name>.+) \((?P<n>\d+)\)$")


def _seed_tree() -> dict[tuple[str, ...], int]:
    """Every node of the seed's drawing, keyed by its path below 'All'."""
    nodes: dict[tuple[str, ...], int] = {}
    path: list[str] = []
    for line in SEED.read_text().splitlines():
        match = LINE.match(line)
        if not match:
            continue
        depth = len(match["indent"]) // 4
        name = match["name"].replace(" ELO", "").replace("∞", "inf")
        path[depth:] = [name]
        nodes[tuple(path)] = int(match["n"])
    return nodes


@pytest.mark.parametrize(("source", "targets"), [("Games", GAME_TARGETS),
                                                ("Puzzles", PUZZLE_TARGETS)])
def test_targets_match_every_node_of_the_seed(source: str, targets: dict) -> None:
    seed = {k[1:]: v for k, v in _seed_tree().items() if k[0] == source}
    for depth in range(1, 5):
        mine = totals(targets, depth)
        theirs = {k: v for k, v in seed.items() if len(k) == depth}
        assert mine == theirs, f"level {depth}"


def test_totals() -> None:
    assert sum(GAME_TARGETS.values()) == 800
    assert sum(PUZZLE_TARGETS.values()) == 200
    assert GAME_TARGETS[("[1800, 2200)", "Middlegame", "Quiet", "White")] == 60


@pytest.mark.parametrize("scale", [0.05, 0.1, 0.25, 0.5, 0.77])
def test_scaling_keeps_every_level_proportional(scale: float) -> None:
    scaled = scale_targets(GAME_TARGETS, scale)
    assert sum(scaled.values()) == round(800 * scale)
    for depth in range(1, 5):
        for key, n in totals(scaled, depth).items():
            exact = totals(GAME_TARGETS, depth)[key] * scale
            # Rounding level by level never moves a node by a whole unit or more from its
            # exact share of the parent it was rounded within; against the global share
            # the drift is bounded by the depth.
            assert abs(n - exact) < depth + 1


def test_scale_one_is_identity() -> None:
    assert scale_targets(GAME_TARGETS, 1.0) == GAME_TARGETS


def test_elo_bucket_edges() -> None:
    assert elo_bucket(1399.5) == "(0, 1400)"
    assert elo_bucket(1400) == "[1400, 1800)"
    assert elo_bucket(2599) == "[2200, 2600)"
    assert elo_bucket(2600) == "[2600, inf)"
