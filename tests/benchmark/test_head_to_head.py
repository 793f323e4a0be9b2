"""bench/head_to_head.py: the pairs in both orders, the committed table on the map's current
readings, and the both-orders figures (pooled z, order effect, sign tests) by hand."""

import csv
from typing import Any

import pytest

from bench import head_to_head as h2h
from chess_eval.benchmark.arena.ladder import load_ladder
from chess_eval.benchmark.core.data import MAP_PLAYERS, REFERENCE_LADDER
from chess_eval.benchmark.stats.btd import Z90


def test_every_pair_is_played_in_both_orders_on_other_openings() -> None:
    """Each pair's reversed order starts where the first order's 20 pairs of openings end:
    on the same openings a served player's moves largely replay the first order's games."""
    pairs = set(h2h.PAIRS)
    assert len(pairs) == len(h2h.PAIRS) == 2 * (len(h2h.FORWARD) + len(h2h.EXTRA))
    for a, b, seed in h2h.PAIRS:
        [(other, _, back)] = [p for p in pairs if p[:2] == (b, a)]
        first, second = (set(range(s, s + h2h.PAIR_GAMES // 2)) for s in (seed, back))
        assert other == b and first.isdisjoint(second)
    assert list(h2h.PAIRS[:len(h2h.FORWARD)]) == [(a, b, 0) for a, b in h2h.FORWARD]


def test_the_committed_rows_are_their_matches_on_the_current_readings() -> None:
    """Every committed row is a pair of PAIRS, in PAIRS' order, its readings the map's and
    its prediction and z recomputed from its own score (nu the draw model's at the two
    readings' mean); the first seven pairs are there in both orders."""
    rows = h2h.read(h2h.TABLE)
    keys = [(r["a"], r["b"], int(r["seed"])) for r in rows]
    assert keys == [p for p in h2h.PAIRS if p in keys]
    assert {(a, b, 0) for a, b in h2h.FORWARD} | {(b, a, h2h.REVERSED_SEED)
                                                  for a, b in h2h.FORWARD} <= set(keys)
    rated, ladder = h2h.readings(), load_ladder(REFERENCE_LADDER)
    for r in rows:
        a, b = rated[r["a"]], rated[r["b"]]
        assert (float(r["a_elo"]), float(r["a_sd"]), float(r["b_elo"]), float(r["b_sd"])) \
            == (*a, *b)
        pentanomial = [int(n) for n in r["pentanomial"].split("/")]
        match = {"games": int(r["games"]), "pentanomial": pentanomial,
                 "score": {"value": float(r["score"]), "lo": float(r["score_lo"]),
                           "hi": float(r["score_hi"])}}
        assert sum(pentanomial) * 2 == match["games"] == h2h.PAIR_GAMES
        # nu where the pair plays: the draw model's at the two readings' mean.
        again = h2h.pair_row(match, a, b, ladder.nu_at((a[0] + b[0]) / 2))
        assert {k: str(v) for k, v in again.items()} == {k: r[k] for k in again}


def _row(a: str, b: str, seed: int, a_elo: float, b_elo: float, score: float, score_sd: float,
         predicted: float, predicted_sd: float) -> dict[str, str]:
    z = (score - predicted) / (score_sd ** 2 + predicted_sd ** 2) ** 0.5
    return {k: str(v) for k, v in {
        "a": a, "b": b, "seed": seed, "a_elo": a_elo, "b_elo": b_elo, "a_sd": 40, "b_sd": 40,
        "games": 40, "pentanomial": "0/0/20/0/0", "score": score,
        "score_lo": score - Z90 * score_sd, "score_hi": score + Z90 * score_sd,
        "predicted": predicted, "predicted_lo": predicted - 0.1,
        "predicted_hi": predicted + 0.1, "score_sd": score_sd,
        "predicted_sd": predicted_sd, "z": round(z, 2)}.items()}


def test_both_orders_by_hand() -> None:
    """X (1100) first scores 0.7 +- 0.1 against a prediction of 0.6 +- 0.05; Y first scores
    0.4 +- 0.1 (X's 0.6, predicted 0.6 too). Over both orders X scores 0.65, sd
    sqrt((0.1^2 + 0.1^2) / 4 + 0.05^2) = 0.0866: z 0.577 (the prediction's error once). The
    order effect: 0.7 + 0.4 - 1 = +0.1, sd 0.1414, z 0.707. The row with the weaker player
    first is read as the pair's second order, whichever comes first in the table."""
    rows = [_row("y", "x", 20, 1000, 1100, 0.4, 0.1, 0.4, 0.05),
            _row("x", "y", 0, 1100, 1000, 0.7, 0.1, 0.6, 0.05)]
    [pair] = h2h.both_orders(rows)
    assert (pair["x"], pair["y"], pair["distance"]) == ("x", "y", 100)
    assert pair["z_first"] == 0.89 and pair["z_second"] == 0
    assert pair["score"] == pytest.approx(0.65)
    assert pair["z"] == pytest.approx(0.05 / 0.0075 ** 0.5)
    assert pair["order"] == pytest.approx(0.1)
    assert pair["order_z"] == pytest.approx(0.1 / 0.02 ** 0.5)
    f = h2h.findings(rows)
    assert (f["pairs"], f["stronger_above"], f["order_above"]) == (1, 1, 1)
    assert f["rows_pooled"] == pytest.approx(0.89 / 2 ** 0.5)
    assert f["first_order"] == 0.89 and f["reversed_order"] == 0
    assert [b["pairs"] for b in f["bands"]] == [0, 1, 0]


def _pairs(n: int, score: float, order: float = 0.0) -> list[dict[str, str]]:
    """n pairs 50 Elo apart, each predicted 0.57 +- 0.03 for X; X scores `score` on average
    over both orders, `order` more when first."""
    rows = []
    for i in range(n):
        x, y = f"x{i}", f"y{i}"
        rows += [_row(x, y, 0, 1050, 1000, score + order / 2, 0.08, 0.57, 0.03),
                 _row(y, x, 20, 1000, 1050, 1 - score + order / 2, 0.08, 0.43, 0.03)]
    return rows


@pytest.mark.parametrize(("score", "order", "said"), [
    (0.57, 0.0, ["the ladder predicts these matches", "no effect of being named first",
                 "a finding about those two"]),
    (0.67, 0.0, ["the ladder does not predict", "underpredicts decisive results",
                 "no effect of being named first", "would miss their match"]),
    (0.47, 0.0, ["overpredicts decisive results"]),
    (0.57, 0.15, ["the ladder predicts these matches", "named first gains by it"]),
])
def test_the_verdicts_follow_the_criterion(score: float, order: float,
                                           said: list[str]) -> None:
    """Each sentence is the one its figure's side of +-1.64 gives."""
    rows = _pairs(8, score, order)
    f: dict[str, Any] = h2h.findings(rows)
    text = h2h.pairs_markdown(rows)
    assert (abs(f["pooled"]) > Z90) == (score != 0.57)
    assert (abs(f["order_pooled"]) > Z90) == (order != 0)
    for phrase in said:
        assert phrase in text


def test_rows_written_before_the_seed_column_are_the_first_order() -> None:
    assert h2h._row_key({"a": "p", "b": "q"}) == ("p", "q", 0)
    assert h2h._row_key({"a": "p", "b": "q", "seed": "20"}) == ("p", "q", 20)


def test_one_pair_is_of_one_family_by_the_map_s_labels() -> None:
    """What the docs say under the table: GNU Chess and Toga II are both Fruit's in the map,
    every other pair two families."""
    with MAP_PLAYERS.open(encoding="utf-8", newline="") as handle:
        family = {r["player"]: r["family"] for r in csv.DictReader(handle)}
    same = {frozenset((a, b)) for a, b, _ in h2h.PAIRS if family[a] == family[b]}
    assert same == {frozenset(("gnuchess:depth=1,random=50", "toga2:depth=1,random=70"))}
    assert family["gnuchess:depth=1,random=50"] == "fruit"


def test_the_committed_table_s_figures_are_the_ones_the_docs_give() -> None:
    """The seven pairs first played and their reversed order, all ten pairs in both orders."""
    f = h2h.findings(h2h.read(h2h.TABLE))
    assert (f["seven_rows"], f["seven_reversed_rows"]) == (7, 7)
    assert f["pairs"] == len(h2h.FORWARD) + len(h2h.EXTRA)
    assert f["rows"] == 2 * f["pairs"] == f["first_order_rows"] + f["reversed_order_rows"]
    assert sum(b["pairs"] for b in f["bands"]) == f["pairs"]


def test_pairs_off_both_ways_are_said_to_part_from_the_prediction() -> None:
    """Pooled z near 0 but every pair far off, half each way: the chi-square's sentence."""
    rows = [r | {"a": r["a"] + s, "b": r["b"] + s}
            for s, score in (("+", 0.77), ("-", 0.37)) for r in _pairs(4, score)]
    f = h2h.findings(rows)
    assert abs(f["pooled"]) < 0.01 and f["chi2_p"] < 0.1
    assert "in no one direction" in h2h.pairs_markdown(rows)
