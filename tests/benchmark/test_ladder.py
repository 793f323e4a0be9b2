"""The ladder: default rungs from the engine's range, the gauntlet, anchoring, ladder.csv."""

from pathlib import Path

import numpy as np
import pytest

from lib.benchmark.core import btd
from lib.benchmark.games.ladder import default_rungs, gauntlet, load_ladder, rate
from lib.errors import DataError
from tests.conftest import ROOT


def test_default_rungs_span_random_to_full_strength_over_the_engine_range() -> None:
    rungs = default_rungs(1350, 2850)
    assert rungs[0].spec == "random" and rungs[-1].spec.startswith("stockfish:nodes=")
    anchors = [r.anchor for r in rungs if r.anchor is not None]
    assert anchors[0] == 1350 and anchors[-1] == 2850 and anchors == sorted(anchors)
    assert len({r.name for r in rungs}) == len(rungs)
    assert default_rungs(1320, 3190)[-2].anchor == 3190  # Stockfish 16's range


def test_gauntlet_pairs_neighbours_and_next_neighbours() -> None:
    pairs = gauntlet(4, 4)
    assert pairs.count((0, 1)) == 4 and pairs.count((0, 2)) == 2 and (0, 3) not in pairs
    assert len(pairs) == 3 * 4 + 2 * 2


def test_rate_anchors_the_scale_to_the_uci_elo_rungs() -> None:
    rungs = default_rungs(1350, 1550)[10:]  # mix10, sf1350, sf1450, sf1550, sf-full
    # True ratings; the anchored three (1300, 1500, 1550) average their nominal mean, 1450.
    true = np.array([1000.0, 1300.0, 1500.0, 1550.0, 1900.0])
    rng = np.random.default_rng(3)
    white, black, scores = [], [], []
    for i, j in gauntlet(len(rungs), 150):
        for w, b in ((i, j), (j, i)):
            white.append(w)
            black.append(b)
            scores.append(rng.choice([1, 0.5, 0],
                                     p=btd.probabilities(true[w] - true[b], 0.6)))
    rated, nu = rate(rungs, np.array(white), np.array(black), np.array(scores))
    elos = np.array([r.elo for r in rated])
    anchored = [i for i, r in enumerate(rungs) if r.anchor is not None]
    # The anchors' mean is their nominal mean exactly; every rung sits where it should.
    assert elos[anchored].mean() == pytest.approx(np.mean([1350, 1450, 1550]))
    half = elos - np.array([r.lo for r in rated])  # 1.645 sd
    assert np.all(np.abs(elos - true) < 2 * half)
    assert nu == pytest.approx(0.6, rel=0.25)


def test_the_committed_ladder_loads_and_spans_random_to_2800() -> None:
    ladder = load_ladder(ROOT / "ladder.csv")
    assert ladder.rungs[0].spec == "random" and ladder.elos.max() >= 2800
    assert ladder.nu > 0 and "Stockfish" in ladder.engine


@pytest.mark.parametrize(("text", "message"), [
    ("rung,elo\nx,1\n", "not a ladder file"),
    ("rung,spec,anchor,elo,lo,hi,games,score,nu,engine\nr,random,,abc,0,0,1,0.5,0.5,SF\n",
     "line 2"),
    ("rung,spec,anchor,elo,lo,hi,games,score,nu,engine\nr,random,,100,0,0,1,0.5,0.5,SF\n"
     "s,random,,50,0,0,1,0.5,0.5,SF\n", "rising Elo"),
])
def test_a_bad_ladder_is_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "ladder.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        load_ladder(path)
    with pytest.raises(DataError, match="calibrate"):
        load_ladder(tmp_path / "missing.csv")
