"""The leaderboard over every kind of result: ranks, probabilities, daggers, what is left
out, and figures that do not stretch for an outlier."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import benchmark
from chess_eval.benchmark.arena.versions import ladder_version_text, read_versions
from chess_eval.benchmark.core.data import FIRST_LADDER, LADDER_MAP
from chess_eval.benchmark.leaderboard import board, testsets
from chess_eval.benchmark.leaderboard.board import (
    Entry,
    LadderPart,
    _limits,
    dagger,
    longest_runs,
    ranked,
)
from chess_eval.benchmark.stats.elo import Z
from chess_eval.benchmark.stats.ladder_map import LadderMap, Reading, fit_map, map_json
from chess_eval.files import sha256_file
from tests.conftest import PUZZLES_1K, ROOT

QUESTIONS = ROOT / "questions.csv"


def _elo(mean: float | None, lo: float | None, hi: float | None, kind: str = "interval") -> dict:
    text = (f"below ~{hi}" if kind == "below" else
            f"{mean}  90% [{lo if lo is not None else '<0'}, {hi}]")
    return {"mean": mean, "lo": lo, "hi": hi, "kind": kind, "text": text}


# The standard ladder as a play result keeps it: the random mover fixed at 0 (no variance).
CURRENT = {"names": ["random@1", "mix50@1"], "elos": [0, 1200], "cov": [[0, 0], [0, 900]],
           "engine": "Stockfish 17.1"}
# Ladder 1's zero: Stockfish at 1,000 nodes fixed at 2600, the random mover measured.
LADDER_1 = {"names": ["random@1", "nodes1k@1"], "elos": [-1, 2600],
            "cov": [[12700.5, 0], [0, 0]]}


def _games(path: Path, model: str, elo: dict, games: int, condition: str = "standard",
           digest: str | None = None, complete: bool = True, ladder: dict = CURRENT) -> None:
    path.write_text(json.dumps({
        "kind": "games", "schema_version": 1, "model": model, "complete": complete,
        "questions_sha256": digest, "ladder": ladder, "conditions": {condition: {
            "elo": elo, "games": games, "aborted": 0 if complete else 1, "w": games // 2,
            "d": 0, "l": games - games // 2}}}))


def test_leaderboard_ranks_every_kind_with_probabilities_and_daggers(tmp_path: Path,
                                                                   caplog) -> None:
    digest = sha256_file(QUESTIONS)
    _games(tmp_path / "a.json", "model-a", _elo(1500, 1450, 1550), 100)
    _games(tmp_path / "b.json", "model-b", _elo(1450, 1400, 1500), 100)
    _games(tmp_path / "c.json", "model-c", _elo(1000, 900, 1100), 20)  # few games: dagger
    _games(tmp_path / "d.json", "model-d", _elo(None, None, 300, "below"), 40)
    _games(tmp_path / "e.json", "model-e", _elo(2000, 1900, 2100), 100, "midgame", "0" * 64)
    _games(tmp_path / "f.json", "model-f", _elo(2000, 1900, 2100), 100, complete=False)
    # Real puzzle and world-model runs of the random player.
    assert benchmark.main(["puzzles", "--model", "random", "--puzzles", str(PUZZLES_1K),
                           "--max-puzzles", "3", "--out", str(tmp_path)]) == 0
    assert benchmark.main(["worldmodel", "--model", "random", "--questions", str(QUESTIONS),
                           "--limit", "4", "--out", str(tmp_path)]) == 0
    [puzzles] = tmp_path.glob("puzzles__*.json")
    other = json.loads(puzzles.read_text())
    other["settings"]["puzzles_sha256"] = "1" * 64
    other["model"] = "other-puzzle-file"
    (tmp_path / "other.json").write_text(json.dumps(other))
    (tmp_path / "old.json").write_text(json.dumps({"kind": "worldmodel", "model": "old"}))
    assert benchmark.main(["leaderboard", "--results", str(tmp_path), "--questions",
                           str(QUESTIONS), "--puzzles", str(PUZZLES_1K)]) == 0
    md = (tmp_path / "leaderboard.md").read_text()
    games = md.split("## Game Elo")[1].split("##")[0]
    numbered, apart = games.split("Not ranked: bounded on one side only")
    rows = [line for line in numbered.splitlines() if line.startswith("| ") and "model-" in line]
    assert [r.split(" | ")[1] for r in rows] == ["model-a", "model-b", "model-c"]
    cells = [r.split(" | ") for r in rows]
    # P(a > b) from two normal posteriors whose 90% intervals are +-50: by hand.
    sd = 50 / Z
    assert float(cells[0][-2]) == pytest.approx(stats.norm.cdf(50 / (sd * 2 ** 0.5)), abs=0.02)
    assert float(cells[1][-2]) == pytest.approx(1.0, abs=0.01)  # 1450 against 1000
    assert cells[0][-1].rstrip(" |") == "1-2" and cells[2][-1].rstrip(" |") == "3"
    assert "†" not in cells[0][-3] and "†" in cells[2][-3]  # 20 games: lichess-bench's dagger
    # One-sided: apart, unnumbered, with neither P(> next) nor a rank.
    [bounded] = [line.split(" | ") for line in apart.splitlines() if "model-" in line]
    assert bounded[0] == "| model-d" and bounded[-1] == "below ~300 † |"
    assert "model-e" not in md and "model-f" not in md  # other questions file; incomplete
    assert "other-puzzle-file" not in md and "| old |" not in md
    assert "skipping" in caplog.text and "old.json" in caplog.text
    assert "## Puzzle Elo, adaptive" in md and "| random | seed=0 | 3 |" in md
    assert "| random | " in md.split("## World model")[1]
    # The random mover cannot answer illegally: its world-model score does not apply.
    assert "| random | n/a | worldmodel run, 4 positions" in md
    [wm] = [json.loads(p.read_text()) for p in tmp_path.glob("worldmodel__*.json")]
    assert wm["score"]["score"] is None and "not applicable" in wm["score"]["note"]
    assert (tmp_path / "leaderboard.svg").read_text().startswith("<?xml")
    for name in ("leaderboard.png", "leaderboard-worldmodel.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
    assert digest[:12] in md
    # Figures carry no creation date and no random element ids: a rerun writes the same bytes.
    drawn = {n: (tmp_path / n).read_bytes() for n in ("leaderboard.svg", "leaderboard.png")}
    assert benchmark.main(["leaderboard", "--results", str(tmp_path), "--questions",
                           str(QUESTIONS), "--puzzles", str(PUZZLES_1K)]) == 0
    assert {n: (tmp_path / n).read_bytes() for n in drawn} == drawn


def test_runs_on_a_ladder_with_another_zero_are_listed_apart_unranked(tmp_path: Path) -> None:
    _games(tmp_path / "a.json", "model-a", _elo(1500, 1450, 1550), 100)
    _games(tmp_path / "b.json", "model-b", _elo(1400, 1350, 1450), 100)
    _games(tmp_path / "old.json", "model-old", _elo(1450, 1400, 1500), 100, ladder=LADDER_1)
    _games(tmp_path / "older.json", "model-older", _elo(900, 850, 950), 100, ladder=LADDER_1)
    assert benchmark.main(["leaderboard", "--results", str(tmp_path), "--questions",
                           str(QUESTIONS), "--puzzles", str(PUZZLES_1K)]) == 0
    md = (tmp_path / "leaderboard.md").read_text()
    current = md.split("## Game Elo against")[1].split("##")[0]
    earlier = md.split("## Game Elo on an earlier ladder")[1].split("##")[0]
    assert "model-a" in current and "model-b" in current and "model-old" not in current
    rows = [line.split(" | ") for line in earlier.splitlines() if "model-" in line]
    assert [r[0] for r in rows] == ["| model-old", "| model-older"]
    # Each marked with its ladder's zero; no number, probability or rank.
    assert all(r[1] == "standard; earlier ladder, zero nodes1k@1 = 2600" for r in rows)
    # Columns: model, condition (protocol); the ladder, games, W/D/L, cost per game (unknown), Elo.
    assert all(len(r) == 6 and r[4] == "-" and r[-1].endswith("] |") for r in rows)
    # model-a's P(> next) is against model-b (1400), not the earlier ladder's 1450.
    first = next(line.split(" | ") for line in current.splitlines() if "model-a" in line)
    assert float(first[-2]) == pytest.approx(stats.norm.cdf(100 / (50 / Z * 2 ** 0.5)),
                                             abs=0.02)


def _map(path: Path) -> LadderMap:
    """A map fitted by the real code on four players read 10% higher on the reference."""
    readings = [Reading(f"p{i}", "f", x, 40.0, 1.1 * x + d, 40.0)
                for i, (x, d) in enumerate([(400, 20), (900, -30), (1500, 25), (2200, -15)])]
    fit = fit_map(readings, "Stockfish 15.1", "Stockfish 17.1")
    path.write_text(json.dumps(map_json(fit, [])))
    return fit


def test_the_map_carries_tau_s_upper_bound_not_an_estimate_of_zero() -> None:
    """Players exactly on the line: tau's estimate falls to 0, yet a conversion carries its
    one-sided 90% upper bound (at which twice the profile log-likelihood has dropped by
    chi-square(1)'s 80% quantile); players scattered about it: the bound lies above the
    estimate, and both grow with the scatter."""
    from scipy import optimize, stats

    from chess_eval.benchmark.stats.ladder_map import _nll

    def fitted(scatter: float) -> LadderMap:
        return fit_map([Reading(f"p{i}", "f", x, 40.0, 1.1 * x + scatter * d, 40.0)
                        for i, (x, d) in enumerate([(400, 1), (900, -1), (1500, 1),
                                                    (2200, -1), (2600, 1), (3000, -1)])],
                       "Stockfish 15.1", "Stockfish 17.1")
    flat, loose, wide = fitted(0.0), fitted(80.0), fitted(160.0)
    assert flat.tau_estimate is not None and flat.tau_estimate < 1 and flat.tau > 20
    assert flat.convert(0.0, 0.0) == (0.0, pytest.approx(flat.tau))
    assert loose.tau_estimate is not None and wide.tau_estimate is not None
    assert 0 < loose.tau_estimate < loose.tau < wide.tau and loose.tau_estimate < wide.tau_estimate
    # The bound is where the profile likelihood says, recomputed here with its own optimiser.
    data = [Reading(r["player"], r["family"], r["x"], r["x_sd"], r["y"], r["y_sd"])
            for r in loose.readings]
    best = optimize.minimize(_nll, [1.1, 3.0], args=(data,), method="Nelder-Mead").fun

    def profile(tau: float) -> float:
        return float(optimize.minimize(lambda s: _nll([s[0], np.log(tau)], data), [1.1],
                                       method="Nelder-Mead").fun)
    assert 2 * (profile(loose.tau) - best) == pytest.approx(stats.chi2.ppf(0.8, 1), abs=0.01)


def test_a_run_on_the_old_ladder_is_converted_and_another_engines_stays_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Game Elos are ranked on the reference ladder (Stockfish 17.1): a run on 15.1's ladder
    joins them through the map, flagged converted and widened; a run on any other engine's
    ladder is listed apart; without a map, 15.1's runs are apart too."""
    on = {e: CURRENT | {"engine": f"Stockfish {e}"} for e in ("15.1", "17.1", "16")}
    _games(tmp_path / "a.json", "model-a", _elo(1500, 1450, 1550), 100, ladder=on["15.1"])
    _games(tmp_path / "c.json", "model-c", _elo(1450, 1400, 1500), 100, ladder=on["17.1"])
    _games(tmp_path / "d.json", "model-d", _elo(1400, 1350, 1450), 100, ladder=on["16"])
    fit = _map(tmp_path / "map.json")
    monkeypatch.setattr(board, "MAP_PATH", tmp_path / "map.json")
    argv = ["leaderboard", "--results", str(tmp_path), "--questions", str(QUESTIONS),
            "--puzzles", str(PUZZLES_1K)]
    assert benchmark.main(argv) == 0
    md = (tmp_path / "leaderboard.md").read_text()
    current = md.split("## Game Elo against")[1].split("##")[0]
    other = md.split("## Game Elo on an earlier ladder")[1].split("##")[0]
    [a] = [line.split(" | ") for line in current.splitlines() if "model-a" in line]
    assert a[2] == "standard; converted from Stockfish 15.1" and a[0] == "| 1"
    assert "model-c" in current and "model-d" not in current
    [d] = [line.split(" | ") for line in other.splitlines() if "model-d" in line]
    assert d[1] == "standard; the Stockfish 16 ladder"
    rows = json.loads((tmp_path / "leaderboard.json").read_text())["rows"]
    [row] = [r for r in rows if r["model"] == "model-a"]
    assert row["converted"] and row["elo"] == round(fit.slope * 1500)
    assert row["hi"] - row["lo"] > 100  # widened by the map's error
    assert row["lo"] <= fit.slope * 1500 <= row["hi"]
    with (tmp_path / "leaderboard.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == len(rows) == 3
    monkeypatch.setattr(board, "MAP_PATH", tmp_path / "none.json")
    assert benchmark.main(argv) == 0
    other = (tmp_path / "leaderboard.md").read_text().split("## Game Elo on an earlier")[1]
    assert "standard; the Stockfish 15.1 ladder" in other


def test_the_dagger_follows_lichess_bench_rule() -> None:
    # A 90% half-width of 84 is a 95% half-width of 100.1: just over lichess-bench's +-100.
    assert not dagger(Entry("m", "x", _elo(1500, 1417, 1583), 30))
    assert dagger(Entry("m", "x", _elo(1500, 1416, 1584), 30))
    assert dagger(Entry("m", "x", _elo(1500, 1450, 1550), 29))
    assert dagger(Entry("m", "x", _elo(None, 1400, None, "above"), 500))


def test_an_outlier_does_not_stretch_the_axis() -> None:
    elos = [_elo(3000, 2900, 3100), _elo(2800, 2700, 2900), _elo(-1194, -1762, -625)]
    lo, hi = _limits(elos)
    assert 1000 < lo < 2700 and 3100 < hi < 3500  # the outlier is an arrow at the left edge


def test_no_result_at_all_is_one_clear_error(tmp_path: Path, capsys) -> None:
    assert benchmark.main(["leaderboard", "--results", str(tmp_path), "--questions",
                           str(QUESTIONS)]) == 2
    assert "no complete results" in capsys.readouterr().err


def test_game_elos_on_one_ladder_share_its_error_in_the_ranking() -> None:
    """Two models 40 apart, each +-16 on its own, rated against one rung whose Elo is
    uncertain by sd 100 (total +-165): shared, the order is near certain; from results of
    another ladder (or none), the draws are independent and it is not."""
    def entry(name: str, mean: float, key: str) -> Entry:
        sd = (10.0 ** 2 + 100.0 ** 2) ** 0.5
        elo = {"kind": "interval", "mean": mean, "lo": mean - 1.645 * sd,
               "hi": mean + 1.645 * sd}
        return Entry(name, "standard", elo, 100, (), LadderPart(key, (1.0,), 100.0,
                                                                ((100.0 ** 2,),)))
    shared = ranked([entry("a", 1540.0, "L"), entry("b", 1500.0, "L")])
    apart = ranked([entry("a", 1540.0, "L"), entry("b", 1500.0, "M")])
    assert float(shared[0][1]) > 0.99 and 0.55 < float(apart[0][1]) < 0.70


def test_static_runs_on_the_same_questions_are_ranked_on_paired_draws(tmp_path: Path) -> None:
    """A run and its copy with one more puzzle solved: resampled together, the copy is never
    below and above whenever that puzzle is drawn, so P(> next) is far above the 0.5 that two
    unrelated runs of nearly the same Elo would get; a tie counts half."""
    assert benchmark.main(["--model", "stockfish:nodes=1000", "--split", "private", "--out",
                           str(tmp_path), "--workers", "1"]) == 0
    first = json.loads(next(tmp_path.glob("static__stockfish_nodes_1000__*.json")).read_text())
    items = [dict(i) for i in first["items"]]
    failed = next(i for i in items if i["source"] == "puzzle" and not i["solved"])
    failed["solved"] = True
    (tmp_path / "better.json").write_text(json.dumps({**first, "model": "better",
                                                      "items": items}))
    assert benchmark.main(["leaderboard", "--results", str(tmp_path)]) == 0
    md = (tmp_path / "leaderboard.md").read_text()
    table = md.split("## First-move puzzle Elo")[1].split("##")[0]
    rows = [r.split(" | ") for r in table.splitlines() if r.startswith("| 1 ")]
    # Drawn in a resample with probability 1 - (1 - 1/n)^n, about 0.63: P about 0.82.
    assert rows[0][1] == "better" and 0.75 <= float(rows[0][-2]) <= 0.9


def test_a_models_protocols_are_listed_side_by_side_with_their_cost(tmp_path: Path) -> None:
    for protocol, elo, cost in (("fen", 1500, 0.0123), ("chat", 1300, None)):
        path = tmp_path / f"{protocol}.json"
        _games(path, "model-a", _elo(elo, elo - 50, elo + 50), 100)
        data = json.loads(path.read_text())
        data.update(protocol=protocol, usage={"per_game": {"cost": cost}})
        path.write_text(json.dumps(data))
    assert benchmark.main(["leaderboard", "--results", str(tmp_path), "--questions",
                           str(QUESTIONS), "--puzzles", str(PUZZLES_1K)]) == 0
    md = (tmp_path / "leaderboard.md").read_text()
    current = md.split("## Game Elo against")[1].split("##")[0]
    rows = [line.split(" | ") for line in current.splitlines() if "model-a" in line]
    # Ranked: the fen run first; its condition column names a protocol other than fen.
    assert [r[2] for r in rows] == ["standard", "standard (chat)"]
    assert [r[5] for r in rows] == ["0.0123", "-"]  # cost per game; unknown shown as -
    by_model = md.split("## By model")[1].split("##")[0]
    assert "| model-a |" in by_model and "| model-a (chat) |" in by_model


def test_the_players_rated_on_both_ladders_are_held_by_their_converted_intervals() -> None:
    """The committed map (ladder_map.json) against the committed readings: fitted on 6
    strengths x 2 families at 100 games or more each; the 90% interval a player's Stockfish
    15.1 reading converts to holds its 17.1 reading for at least 85% of the players (a 90%
    interval misses about one in ten: one of the 12 here), and left out one at a time, as
    many are held as a 90% interval holds (a binomial test at 5%: 9 to 12 of 12; 85-95% would
    ask for exactly 11)."""
    from scipy.stats import binomtest

    from bench.ladder_map import readings
    from bench.validation_players import MAP_DATA
    from chess_eval.benchmark.stats.btd import Z90
    from chess_eval.benchmark.stats.ladder_map import load_map

    conv = load_map(LADDER_MAP)
    assert conv is not None
    found = readings(MAP_DATA)
    assert len(found) >= 12 and len({r.family for r in found}) >= 2
    assert all(r.x_sd > 0 and r.y_sd > 0 for r in found)
    held = []
    for r in found:
        elo = conv.convert_elo({"mean": r.x, "lo": r.x - Z90 * r.x_sd,
                                "hi": r.x + Z90 * r.x_sd, "kind": "interval"})
        held.append(elo["lo"] <= r.y <= elo["hi"])
    assert sum(held) / len(held) >= 0.85
    inside = [x["inside"] for x in conv.loo]
    assert binomtest(sum(inside), len(inside), 0.9).pvalue >= 0.05, inside


def test_a_real_run_on_the_old_ladder_is_listed_converted(tmp_path: Path,
                                                          stockfish: str) -> None:
    """A play run on ladder.csv (Stockfish 15.1) joins the reference scale's table through
    the committed map: leaderboard.json lists it converted."""
    from chess_eval.engine import engine_identity

    if engine_identity(stockfish) != "Stockfish 15.1":
        pytest.skip("ladder.csv's games need Stockfish 15.1 (Debian 12's)")
    assert benchmark.main(["play", "--model", "random", "--ladder", str(FIRST_LADDER),
                           "--max-games", "2", "--ply-cap", "12", "--out", str(tmp_path),
                           "--stockfish", stockfish]) == 0
    assert benchmark.main(["leaderboard", "--results", str(tmp_path), "--questions",
                           str(QUESTIONS), "--puzzles", str(PUZZLES_1K)]) == 0
    rows = json.loads((tmp_path / "leaderboard.json").read_text())["rows"]
    [row] = [r for r in rows if r["model"] == "random"]
    assert row["converted"] and row["scale"].startswith("game Elo, reference ladder")
    # Its games were drawn at ply 12 (for speed here): its row says so, in the By model
    # table too.
    assert row["label"].startswith("standard; games drawn at ply 12")
    by_model = (tmp_path / "leaderboard.md").read_text().split("## By model")[1]
    [line] = [x for x in by_model.splitlines() if x.startswith("| random |")]
    assert "(games drawn at ply 12)" in line
    # The run says which fit of its ladder it was rated on; once that fit is an earlier
    # version (here: the run's digest set to the registry's next-to-last), the leaderboard
    # marks it and its report says the ladder was refitted since.
    versions = read_versions(FIRST_LADDER)
    [result] = tmp_path.glob("play__*.json")
    data = json.loads(result.read_text())
    assert data["ladder"]["version"] == versions[-1].number == len(versions) > 1
    assert f"version {versions[-1].number} (" in (tmp_path / f"{result.stem}.md").read_text()
    data["settings"]["ladder_sha256"] = versions[-2].sha256
    result.write_text(json.dumps(data))
    assert benchmark.main(["leaderboard", "--results", str(tmp_path), "--questions",
                           str(QUESTIONS), "--puzzles", str(PUZZLES_1K)]) == 0
    md = (tmp_path / "leaderboard.md").read_text()
    assert f"standard; games drawn at ply 12; ladder version {versions[-2].number} of " \
        f"{versions[-1].number}; converted from Stockfish 15.1" in md
    assert ladder_version_text(data).endswith(
        f"; refitted since as version {versions[-1].number})")


def test_static_runs_on_a_previous_test_set_are_listed_apart_and_marked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    """A real static run on an earlier set (here a 40-row file the history names) still
    reads: its own table, marked with the set's digest and date, not ranked beside the run
    on the current file; a run on a file the history does not know stays left out."""
    rows = QUESTIONS.read_text(encoding="utf-8").splitlines(keepends=True)
    old, unknown = tmp_path / "old.csv", tmp_path / "unknown.csv"
    old.write_text("".join(rows[:41]), encoding="utf-8")
    unknown.write_text("".join(rows[:1] + rows[41:81]), encoding="utf-8")
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"sha256": sha256_file(old), "commit": "abc1234",
                                    "date": "2026-01-02", "questions": 40}]))
    monkeypatch.setattr(testsets, "TESTSET_HISTORY", history)
    results = tmp_path / "results"
    for questions, model in ((old, "random"), (unknown, "random"), (QUESTIONS, "random")):
        assert benchmark.main(["--model", model, "--questions", str(questions), "--limit",
                               "40", "--out", str(results)]) == 0
    assert benchmark.main(["leaderboard", "--results", str(results), "--questions",
                           str(QUESTIONS), "--puzzles", str(PUZZLES_1K)]) == 0
    md = (results / "leaderboard.md").read_text()
    previous = md.split("## Human-move Elo of static runs on a previous test set")[1]
    [row] = [line for line in previous.split("##")[0].splitlines() if line.startswith("| random")]
    assert f"on a previous test set (sha256 {sha256_file(old)[:12]}, 40 questions, " \
           "committed 2026-01-02)" in row
    assert "P(>" not in previous.split("##")[0]  # listed, never ranked
    assert sha256_file(unknown)[:12] not in md
    assert "another questions file" in caplog.text  # the unknown file's run, and the old
    current = md.split("## Human-move Elo of the static run")[1].split("##")[0]
    assert "previous test set" not in current and "| random |" in current


def test_a_shorter_run_of_the_same_player_is_not_ranked_beside_the_longer() -> None:
    """play to 12 games, then the same command to 30: the second run's first 12 games are
    the first run's, so only the longer stands; a run with another setting (its protocol)
    is another player and stays."""
    def run(file: str, games: int, protocol: str = "fen") -> dict:
        return {"model": "m", "_file": file, "conditions": {"standard": {"games": games}},
                "settings": {"max_games": games, "protocol": protocol, "seed": 0}}
    short, long, chat = run("a.json", 12), run("b.json", 30), run("c.json", 8, "chat")
    assert longest_runs([short, long, chat]) == [long, chat]
    assert longest_runs([long, short]) == [long]
