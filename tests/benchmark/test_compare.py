"""`compare A B`: paired differences of real static runs, McNemar by hand, refusals, the shared
ladder cancelled between play runs, and the power plan."""

import csv
import html
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import benchmark
from chess_eval.benchmark.compare import paired, plan
from chess_eval.benchmark.compare.compare import compare, compare_games, find_run, load_run
from chess_eval.benchmark.stats.elo import Z
from chess_eval.errors import DataError
from tests.conftest import PUZZLES_1K, ROOT

QUESTIONS = ROOT / "questions.csv"
with open(QUESTIONS, newline="", encoding="utf-8") as _handle:
    PRIVATE = sum(row["private"] == "true" for row in csv.DictReader(_handle))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real static runs on the same questions (the private split, whatever the seed):
    random, Stockfish at 1,000 nodes, and the random mover again under another seed."""
    out = tmp_path_factory.mktemp("results")
    for argv in (["--model", "random"], ["--model", "stockfish:nodes=1000"],
                 ["--model", "random", "--seed", "1"]):
        assert benchmark.main([*argv, "--split", "private", "--out", str(out),
                               "--workers", "1"]) == 0
    return out


def _random(runs: Path, seed: int) -> Path:
    return next(p for p in runs.glob("static__random__*.json")
                if json.loads(p.read_text())["seed"] == seed)


def test_compare_pairs_two_real_runs_question_by_question(runs: Path, capsys) -> None:
    assert benchmark.main(["compare", "random__", "stockfish_nodes_1000", "--results",
                           str(runs)]) == 2  # two random runs: "random__" is ambiguous
    assert "names 2 runs" in capsys.readouterr().err
    a, b = load_run(_random(runs, 0)), load_run(find_run("stockfish_nodes_1000", runs))
    result = compare(a, b)
    diffs = {d.metric: d for d in result.differences}
    assert set(diffs) == {"legal_rate", "accuracy", "acpl", "best_move_rate",
                          "puzzle_solve_rate"}
    acc = diffs["accuracy"]
    assert acc.a == pytest.approx(a["accuracy"]) and acc.b == pytest.approx(b["accuracy"])
    assert acc.lo < acc.diff < acc.hi and acc.lo > 20 and acc.p < 0.001
    assert result.verdict.startswith("B better than A in accuracy: +")
    assert f"(paired, {PRIVATE} questions)" in result.verdict
    # McNemar by hand from the two files' items: discordant best moves, exact binomial.
    best_a = {i["id"]: bool(i["best"]) for i in a["items"]}
    best_b = {i["id"]: bool(i["best"]) for i in b["items"]}
    only_a = sum(best_a[q] and not best_b[q] for q in best_a)
    only_b = sum(best_b[q] and not best_a[q] for q in best_a)
    m = diffs["best_move_rate"].mcnemar
    assert m == {"only_a": only_a, "only_b": only_b,
                 "p": round(stats.binomtest(only_b, only_a + only_b).pvalue, 6)}
    assert set(result.by) == {"source", "elo_bucket", "phase", "type", "color"}
    puzzles = {d.metric: d for d in result.by["source"]["puzzle"]}
    assert {"accuracy", "best_move_rate", "puzzle_solve_rate"} <= set(puzzles)
    # Both always legal: no discordant question, and an interval that does not collapse.
    legal = diffs["legal_rate"]
    assert legal.diff == 0 and legal.mcnemar == {"only_a": 0, "only_b": 0, "p": 1.0}
    assert legal.hi == pytest.approx(1 - 0.05 ** (1 / PRIVATE)) and legal.lo == -legal.hi
    # The command prints the table and the verdict and writes the JSON beside the runs.
    assert benchmark.main(["compare", _random(runs, 0).stem, "stockfish_nodes", "--results",
                           str(runs)]) == 0
    out = capsys.readouterr().out
    assert result.verdict in out and "McNemar: A only" in out
    [written] = runs.glob("compare__*.json")
    assert json.loads(written.read_text())["verdict"] == result.verdict
    # The report site lists it, and the leaderboard reads past it without a warning.
    site = runs.parent / "site"
    assert benchmark.main(["report", "--results", str(runs), "--out", str(site)]) == 0
    index = (site / "index.html").read_text()
    assert "<h2>Comparisons</h2>" in index and result.verdict in html.unescape(index)
    capsys.readouterr()
    assert benchmark.main(["leaderboard", "--results", str(runs)]) == 0
    assert "compare__" not in capsys.readouterr().err


def test_a_run_is_found_by_its_model_s_name_and_a_name_of_several_says_which(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--model's own spelling, which no file name keeps (':' and '=' are left out of it),
    finds the run; a model with two runs is one line naming both, exit 2."""
    [stockfish] = runs.glob("static__stockfish_nodes_1000__*.json")
    assert find_run("stockfish:nodes=1000", runs) == stockfish
    assert benchmark.main(["compare", "random", "stockfish:nodes=1000", "--results",
                           str(runs)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "'random' names 2 runs" in line
    assert all(p.stem in line for p in runs.glob("static__random__*.json"))


def test_pairing_narrows_the_interval_of_a_real_difference(runs: Path) -> None:
    """Two runs of the random mover under two seeds: the same player, so no difference is
    found, and the paired interval is narrower than two independent intervals would be."""
    a, b = load_run(_random(runs, 0)), load_run(_random(runs, 1))
    acc = next(d for d in compare(a, b).differences if d.metric == "accuracy")
    assert acc.lo < 0 < acc.hi and acc.p > 0.05
    unpaired = np.hypot(*[(r["intervals"]["accuracy"]["hi"] - r["intervals"]["accuracy"]["lo"])
                          / 2 for r in (a, b)])
    assert (acc.hi - acc.lo) / 2 < unpaired


def test_runs_that_share_nothing_are_refused_with_one_line(runs: Path, tmp_path: Path,
                                                           capsys) -> None:
    other = json.loads(next(runs.glob("static__random__*.json")).read_text())
    other["questions_sha256"] = "0" * 64
    (tmp_path / "other.json").write_text(json.dumps(other))
    status = benchmark.main(["compare", str(next(runs.glob("static__random__*.json"))),
                             str(tmp_path / "other.json")])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "different questions files" in err[0]
    # A file of another version (a field gone, one too many): one line, no traceback.
    old = json.loads(next(runs.glob("static__random__*.json")).read_text())
    old["items"][0]["extra"] = 1
    (tmp_path / "old.json").write_text(json.dumps(old))
    status = benchmark.main(["compare", str(next(runs.glob("static__random__*.json"))),
                             str(tmp_path / "old.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and "not a static result of this version" in err[0]
    assert benchmark.main(["puzzles", "--model", "random", "--puzzles", str(PUZZLES_1K),
                           "--max-puzzles", "3", "--out", str(tmp_path)]) == 0
    status = benchmark.main(["compare", str(next(runs.glob("static__random__*.json"))),
                             str(next(tmp_path.glob("puzzles__*.json")))])
    assert status == 2 and "a static run with a puzzles run" in capsys.readouterr().err


def _play(elo: float, lo: float, hi: float, weights: list[float], sd: float) -> dict:
    ladder = {"names": ["random@1", "mix50@1", "nodes1k@1"], "elos": [0, 1200, 2400],
              "engine": "Stockfish 15.1", "cov": [[0, 0, 0], [0, 900, 600], [0, 600, 1600]]}
    return {"_kind": "games", "_name": f"play{elo}", "model": "m", "ladder": ladder,
            "conditions": {"standard": {
                "elo": {"mean": elo, "lo": lo, "hi": hi, "kind": "interval"}, "games": 100,
                "ladder": {"weights": weights, "sd": sd}}}}


def test_two_play_runs_on_one_ladder_cancel_its_shared_error() -> None:
    """Two players rated against the same rungs with the same weights: the ladder's common
    part cancels, and the difference's sd is the two players' own parts alone; brute force
    over drawn ladders agrees for weights that differ."""
    cov = np.array([[0, 0, 0], [0, 900, 600], [0, 600, 1600]], float)
    w = [0.0, 0.5, 0.5]
    ladder_sd = float(np.sqrt(np.array(w) @ cov @ np.array(w)))
    own = 40.0
    total = np.hypot(own, ladder_sd)
    a = _play(1500, 1500 - Z * total, 1500 + Z * total, w, ladder_sd)
    b = _play(1600, 1600 - Z * total, 1600 + Z * total, w, ladder_sd)
    d = compare_games(a, b).differences[0]
    assert (d.hi - d.lo) / (2 * Z) == pytest.approx(np.hypot(own, own), rel=1e-6)
    # Different weights: simulate the two ratings' ladder parts from drawn ladders.
    wb = [0.0, 0.1, 0.9]
    b = _play(1600, 1600 - Z * total, 1600 + Z * total, wb, ladder_sd)
    d = compare_games(a, b).differences[0]
    rng = np.random.default_rng(0)
    shifts = rng.multivariate_normal(np.zeros(3), cov, 200_000)
    diff = shifts @ np.array(wb) - shifts @ np.array(w) + rng.normal(0, own, 200_000) \
        - rng.normal(0, own, 200_000)
    assert (d.hi - d.lo) / (2 * Z) == pytest.approx(diff.std(), rel=0.02)
    other = _play(1600, 1500, 1700, wb, ladder_sd)
    other["ladder"] = {**other["ladder"], "elos": [0, 1250, 2400]}
    with pytest.raises(DataError, match="different ladders"):
        compare_games(a, other)


def test_the_plan_matches_the_formula_and_says_what_it_rests_on(tmp_path: Path) -> None:
    # n = ((1.96 + 0.8416) sd_d / delta)^2 with sd_d^2 = 2 sd^2 (1 - rho)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert paired.questions_needed(2.0, 30, 30, 0.5) == int(np.ceil((z * 30 / 2) ** 2)) == 1766
    assert paired.effective_ratio(30, 30, 0.5) == pytest.approx(2.0)
    made = plan.plan("accuracy", 2.0, path=tmp_path / "none.json")
    assert "stated defaults" in made.rests_on and made.n == 1766
    measured = tmp_path / "measured.json"
    measured.write_text(json.dumps({"measured_on": "stockfish 1k vs 2k, 758 questions",
                                    "metrics": {"accuracy": {"sd_a": 10, "sd_b": 10,
                                                             "rho": 0.8}}}))
    made = plan.plan("accuracy", 2.0, path=measured)
    assert made.n == paired.questions_needed(2.0, 10, 10, 0.8) and "stockfish 1k" in made.rests_on
    with pytest.raises(DataError, match="--difference"):
        plan.plan("accuracy", 0.0)


def test_the_paired_test_keeps_its_level_on_real_answers(runs: Path) -> None:
    """A fast bench/paired_compare.py: the two real runs' answers given to A and B by a coin
    flip per question (no true difference): the paired tests reject about 5% of 400 runs."""
    from bench.paired_compare import per_question, simulate

    a, b = (load_run(p) for p in (_random(runs, 0), find_run("stockfish_nodes_1000", runs)))
    ids = sorted(i["id"] for i in a["items"])
    values = [per_question({i["id"]: i for i in r["items"]}, ids) for r in (a, b)]
    strata = np.array([f"{i['source']}|{i['elo_bucket']}" for i in
                       sorted(a["items"], key=lambda i: i["id"])])
    for metric in ("accuracy", "best_move_rate"):
        fpr, _ = simulate(values[0][metric], values[1][metric], strata, metric, 400,
                          len(ids), True, seed=3, boot=300)
        assert 0.02 <= fpr <= 0.09, (metric, fpr)
        power, unpaired = simulate(values[0][metric], values[1][metric], strata, metric, 100,
                                   40, False, seed=4, boot=300)
        assert power > 0.9 and power >= unpaired  # random against Stockfish: found at n = 40


def test_one_model_under_two_protocols_is_compared_with_a_note_saying_so() -> None:
    from chess_eval.benchmark.compare.compare import compare

    w = [0.0, 0.5, 0.5]
    a, b = _play(1500, 1400, 1600, w, 20.0), _play(1450, 1350, 1550, w, 20.0)
    a["_kind"] = b["_kind"] = "play"  # as load_run names a play result
    b["protocol"] = "chat"  # a is a file of before protocols: fen
    c = compare(a, b)
    assert c.differences[0].diff == -50
    assert c.notes == ["protocols: A fen, B chat (the difference includes how the model was "
                       "asked; docs/protocols.md)"]
    assert compare(a, a).notes == []
