"""chess-eval inside Inspect, offline: the registered tasks run by name from a folder
outside the clone against `benchmark.py serve` (and Inspect's mockllm), their numbers held
against the CLI's on the same served player, and their logs read back onto the leaderboard."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest
from inspect_ai.log import EvalLog, read_eval_log

import benchmark
from chess_eval.benchmark.core.server import PlayerServer
from tests.benchmark.inspect_helpers import (
    ENDPOINT,
    GAMES,
    INSPECT,
    LIMIT,
    MODEL,
    PLAYER,
    inspect_eval,
    metrics,
    service,
)
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def logs(served: PlayerServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    """The four tasks run by name from a folder outside the clone, into one log folder."""
    outside = tmp_path_factory.mktemp("elsewhere")
    folder = tmp_path_factory.mktemp("logs")
    env = service(served.base_url)
    runs = {"static": [f"limit={LIMIT}"],
            "games": [f"max_games={GAMES}", f"endpoint_id={ENDPOINT}"],
            "puzzles": ["max_puzzles=8"], "worldmodel": ["limit=6"]}
    return {task: inspect_eval(task, MODEL, args, folder, env, outside)
            for task, args in runs.items()}



def test_the_four_tasks_run_by_name_from_outside_the_clone(logs: dict[str, EvalLog]) -> None:
    for log in logs.values():
        assert log.status == "success"
    static, games = metrics(logs["static"]), metrics(logs["games"])
    for name in ("accuracy", "legal_rate", "acpl", "best_move_rate"):
        assert static[f"{name}_lo"] <= static[name] <= static[f"{name}_hi"]
    assert games["elo_lo"] < games["elo"] < games["elo_hi"]
    assert games["games"] == GAMES
    assert metrics(logs["puzzles"])["puzzles"] == 8
    assert 0 <= metrics(logs["worldmodel"])["world_model_score"] <= 1
    # Each played game is a sample whose transcript holds its requests and its moves.
    played = [s for s in logs["games"].samples or []
              if (s.scores["game_scorer"].metadata["game"] or {}).get("record")]
    assert len(played) == GAMES
    for sample in played:
        requests = [e for e in sample.events if e.event == "model"]
        assert requests and sample.scores["game_scorer"].answer.startswith("[")
    # Each puzzle line is a sample too, with its requests.
    lines = [s for s in logs["puzzles"].samples or []
             if s.scores["line_scorer"].metadata["line"]]
    assert len(lines) == 8 and all(any(e.event == "model" for e in s.events) for s in lines)
    # Each position is a sample with its prompts: the move, its mirror, two temperatures,
    # prompt A's list (and B's choice when A listed a move).
    positions = logs["worldmodel"].samples or []
    assert len(positions) == 6
    assert all(sum(e.event == "model" for e in s.events) >= 5 for s in positions)
    # Each task but static keeps books in its run's folder: a line per eval, whatever it
    # bought (static's are Inspect's log: each sample's model usage).
    cache = Path(os.environ["CHESS_EVAL_CACHE"])
    for task, ledger in (("games", "play__*"), ("puzzles", "puzzles"),
                         ("worldmodel", "worldmodel")):
        lines = [json.loads(line) for path in cache.glob(f"{task}-*/books/{ledger}.jsonl")
                 for line in path.read_text().splitlines()]
        assert any(b["requests_sent"] > 0 for b in lines), task
        assert all(b["replies_completed"] <= b["requests_sent"] for b in lines), task
    assert sum(s.model_usage != {} for s in logs["static"].samples or []) == LIMIT



def test_the_static_task_gives_the_cli_s_accuracy_and_legal_rate(
        logs: dict[str, EvalLog], served: PlayerServer, tmp_path: Path) -> None:
    assert benchmark.main(["--model", PLAYER, "--base-url", served.base_url, "--limit",
                           str(LIMIT), "--out", str(tmp_path)]) == 0
    cli = json.loads(next(tmp_path.glob("static__*.json")).read_text())
    figures = metrics(logs["static"])
    assert figures["n"] == cli["n"] == LIMIT
    for name in ("accuracy", "legal_rate", "acpl", "best_move_rate"):
        interval = cli["intervals"][name]
        assert (figures[name], figures[f"{name}_lo"], figures[f"{name}_hi"]) == \
            (interval["value"], interval["lo"], interval["hi"])



def test_the_games_task_and_play_rate_the_player_within_their_intervals(
        logs: dict[str, EvalLog], served: PlayerServer, tmp_path: Path) -> None:
    assert benchmark.main(["play", "--model", PLAYER, "--base-url", served.base_url,
                           "--endpoint-id", ENDPOINT, "--max-games", str(GAMES), "--out",
                           str(tmp_path)]) == 0
    play = json.loads(next(tmp_path.glob("play__*.json")).read_text())
    cli = play["conditions"]["standard"]
    elo = cli["elo"]
    assert cli["games"] == GAMES and elo["kind"] == "interval"
    inspect = metrics(logs["games"])
    # The difference of two independent estimates, against both half-widths combined.
    half = math.hypot((elo["hi"] - elo["lo"]) / 2, (inspect["elo_hi"] - inspect["elo_lo"]) / 2)
    assert abs(inspect["elo"] - elo["mean"]) <= half
    # Its place on Lichess's scale per time control, as play's result gives it (far below the
    # anchors: no figure, its expected score against the weakest anchor and that anchor's
    # rating, each named for what it is; Inspect drops a None).
    for tc in play["human"]["time_controls"]:
        assert tc["kind"] == "score"
        shown = {k.removeprefix(f"lichess_{tc['time_control']}"): v for k, v in inspect.items()
                 if k.startswith(f"lichess_{tc['time_control']}")}
        assert set(shown) == {"_expected_score", "_expected_score_lo", "_expected_score_hi",
                              "_anchor_rating"}, shown
        assert shown["_anchor_rating"] == tc["anchor_rating"]
        assert 0 <= shown["_expected_score_lo"] <= shown["_expected_score_hi"] < 0.5



def test_the_bench_rates_a_served_spec_with_a_comma_as_one_model(served: PlayerServer,
                                                                 tmp_path: Path) -> None:
    """bench/inspect_games.py asks through Inspect's Python API: a player whose spec has a
    comma (which `inspect eval --model` splits into two models) is one model, rated."""
    from bench.inspect_games import inspect_rating

    spec = "toga2:depth=1,random=25"
    got = inspect_rating(spec, served.base_url, 0, 2, tmp_path)
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path), header_only=True)
    assert log.status == "success" and log.eval.model == f"openai-api/local/served/{spec}"
    assert got["games"] == 2 and got["lo"] is not None



def test_the_tasks_logs_are_ranked_with_the_cli_s_results(
        logs: dict[str, EvalLog], tmp_path: Path) -> None:
    for log in logs.values():
        shutil.copy(log.location, tmp_path)
    assert benchmark.main(["leaderboard", "--results", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "leaderboard.json").read_text())["rows"]
    scales = {r["scale"].split(",")[0] for r in rows if r["model"] == f"inspect:{MODEL}"}
    # The games (on the reference scale, or converted to it), the puzzle lines, the static
    # run's scales.
    assert {"game Elo", "puzzle Elo", "human-move Elo"} <= scales, rows
    static = json.loads(next(tmp_path.glob("static__inspect_*.json")).read_text())
    assert static["accuracy"] == metrics(logs["static"])["accuracy"]
    play = json.loads(next(tmp_path.glob("play__inspect_*.json")).read_text())
    assert play["conditions"]["standard"]["elo"]["mean"] == metrics(logs["games"])["elo"]
    puzzles = json.loads(next(tmp_path.glob("puzzles__inspect_*.json")).read_text())
    assert puzzles["elo"]["mean"] == metrics(logs["puzzles"])["puzzle_elo"]
    assert puzzles["n"] == 8
    worldmodel = json.loads(next(tmp_path.glob("worldmodel__inspect_*.json")).read_text())
    assert worldmodel["score"]["score"] == metrics(logs["worldmodel"])["world_model_score"]
    assert worldmodel["positions"] == 6
    # Each log is read back once: a second leaderboard reads nothing again.
    written = {p: p.stat().st_mtime_ns for p in tmp_path.glob("static__*.json")}
    assert benchmark.main(["leaderboard", "--results", str(tmp_path)]) == 0
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("static__*.json")} == written



def test_the_worldmodel_task_gives_the_cli_s_figures(
        logs: dict[str, EvalLog], served: PlayerServer, tmp_path: Path) -> None:
    assert benchmark.main(["worldmodel", "--model", PLAYER, "--base-url", served.base_url,
                           "--limit", "6", "--out", str(tmp_path / "cli")]) == 0
    cli = json.loads(next((tmp_path / "cli").glob("worldmodel__*.json")).read_text())
    shutil.copy(logs["worldmodel"].location, tmp_path)
    assert benchmark.main(["leaderboard", "--results", str(tmp_path)]) == 0
    inspect = json.loads(next(tmp_path.glob("worldmodel__inspect_*.json")).read_text())
    for part in ("self_consistency", "symmetry", "temperature", "t0", "score", "hypothesis"):
        assert inspect[part] == cli[part], part



def test_json_logs_and_logs_without_samples_read_back_from_any_directory(
        served: PlayerServer, tmp_path: Path) -> None:
    """A `--log-format json` log reads back as an .eval one does; a `--no-log-samples` log
    says so; `leaderboard` and `report` work from outside the clone (the committed
    questions file is the repository's)."""
    results, outside = tmp_path / "results", tmp_path / "elsewhere"
    outside.mkdir()
    env = service(served.base_url)
    for extra in (["--log-format", "json"], ["--no-log-samples"]):
        done = subprocess.run([INSPECT, "eval", "chess_eval/static", "--model", MODEL, "-T",
                               "limit=6", "--log-dir", str(results), "--display", "none",
                               *extra], cwd=outside, env=env, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    cli = [sys.executable, str(ROOT / "benchmark.py")]
    board = subprocess.run([*cli, "leaderboard", "--results", str(results)], cwd=outside,
                           capture_output=True, text=True, timeout=900)
    said = " ".join((board.stdout + board.stderr).split())
    assert board.returncode == 0, said
    assert "not a result file" not in said and "did not finish (success)" not in said
    assert "kept no samples (--no-log-samples)" in said, said
    [static] = results.glob("static__inspect_*.json")
    assert json.loads(static.read_text())["n"] == 6
    site = subprocess.run([*cli, "report", "--results", str(results), "--out",
                           str(tmp_path / "site")], cwd=outside, capture_output=True, text=True,
                          timeout=900)
    assert site.returncode == 0, site.stderr[-3000:]



def test_every_answer_changing_setting_is_in_the_identity(served: PlayerServer,
                                                          tmp_path: Path) -> None:
    """Two evals that differ only in --reasoning-effort are two runs: two result files when
    read back, neither replacing the other."""
    logs = tmp_path / "logs"
    for effort in ("low", "high"):
        done = subprocess.run([INSPECT, "eval", "chess_eval/static", "--model", MODEL,
                               "--log-dir", str(logs), "--display", "none", "-T", "limit=4",
                               "--reasoning-effort", effort], cwd=tmp_path,
                              env=service(served.base_url), capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    assert benchmark.main(["leaderboard", "--results", str(logs)]) == 0
    results = [json.loads(p.read_text()) for p in logs.glob("static__inspect_*.json")]
    assert sorted(r["model"] for r in results) == [f"inspect:{MODEL} [effort=high]",
                                                  f"inspect:{MODEL} [effort=low]"]



MOCK = """
import sys, chess, re
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

def first_legal(input, tools, tool_choice, config):
    fen = re.search(r"FEN\\): (\\S+ [wb] \\S+ \\S+ \\d+ \\d+)", input[-1].text).group(1)
    output = ModelOutput.from_content("mockllm/model",
                                      min(m.uci() for m in chess.Board(fen).legal_moves))
    # With its usage given, mockllm counts no tokens (its tokenizer would be downloaded).
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output

model = get_model("mockllm/model", custom_outputs=first_legal)
[log] = eval("chess_eval/static", model=model, task_args={"limit": 12},
             log_dir=sys.argv[1], display="none")
print(log.location)
"""



def test_the_static_task_scores_mockllm_s_answers_as_the_cli_grades_them(
        tmp_path: Path) -> None:
    script = tmp_path / "mock.py"
    script.write_text(MOCK)
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    log = read_eval_log(done.stdout.strip().splitlines()[-1])
    assert log.status == "success", log.error
    figures = metrics(log)
    # Every answer is legal (the first legal move in UCI order), few are the best.
    assert figures["legal_rate"] == 1 and figures["n"] == 12
    assert figures["best_move_rate"] < 1 and figures["accuracy"] < 100



OPPONENT = "served/gnuchess:depth=1"  # a second deterministic player, of another family



def test_the_match_task_plays_the_cli_s_match_between_the_eval_s_two_models(
        served: PlayerServer, tmp_path: Path) -> None:
    """`inspect eval chess_eval/match --model A --model-role opponent=B`: each game a sample,
    and, both players deterministic, the same games and statistics as `benchmark.py match`
    between them; a rerun buys nothing; without the role, one line saying what to add."""
    env = {**service(served.base_url), "CHESS_EVAL_CACHE": str(tmp_path / "cache")}
    logs = tmp_path / "logs"
    args = ["max_games=4", f"endpoint_id={ENDPOINT}"]
    roles = ["--model-role", f"opponent=openai-api/local/{OPPONENT}"]
    argv = [INSPECT, "eval", "chess_eval/match", "--model", MODEL, *roles, "--log-dir",
            str(logs), "--display", "none", *(x for a in args for x in ("-T", a))]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    [path] = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success"
    got = metrics(log)
    played = [s for s in log.samples or [] if s.scores["match_scorer"].metadata["game"]]
    assert len(played) == got["games"] == 4 and got["pairs"] == 2
    assert benchmark.main(["match", "--model", PLAYER, "--opponent", OPPONENT, "--base-url",
                           served.base_url, "--endpoint-id", ENDPOINT, "--max-games", "4",
                           "--out", str(tmp_path / "cli")]) == 0
    cli = json.loads(next((tmp_path / "cli").glob("match__*.json")).read_text())
    assert got["score"] == pytest.approx(cli["score"]["value"], abs=1e-4)
    assert (got["score_lo"], got["score_hi"]) == pytest.approx(
        (cli["score"]["lo"], cli["score"]["hi"]), abs=1e-4)
    # The same games: each sample's PGN moves are the CLI's game of that pair and colour.
    with (tmp_path / "cli").glob("match__*.pgn").__next__().open() as handle:
        cli_games = list(iter(lambda: chess.pgn.read_game(handle), None))
    for sample in sorted(played, key=lambda s: int(s.id)):
        record = sample.scores["match_scorer"].metadata["game"]["record"]
        game = cli_games[int(sample.id) - 1]
        assert record["moves"] == [m.uci() for m in game.mainline_moves()]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    [again] = set(logs.glob("*.eval")) - {path}
    rerun = read_eval_log(str(again))
    assert metrics(rerun) == got  # every game found stored: no request in any sample
    assert not any(e.event == "model" for s in rerun.samples or [] for e in s.events)
    # Its log is not read back into a result file, and says so (not misread as another task's).
    from chess_eval.benchmark.inspect_eval.logs import read_log
    from chess_eval.errors import DataError
    with pytest.raises(DataError, match="chess_eval/match log is not read back"):
        read_log(path, tmp_path / "readback")
    # Each model's books in the run's folder: a line per eval, the rerun's buying nothing.
    books = sorted((tmp_path / "cache").glob("match-*/books/match__*.jsonl"))
    assert [p.name for p in books] == ["match__first.jsonl", "match__second.jsonl"]
    for book in books:
        sent = [json.loads(line)["requests_sent"] for line in book.read_text().splitlines()]
        assert len(sent) == 2 and sent[0] > 0 and sent[1] == 0
    lone = subprocess.run([INSPECT, "eval", "chess_eval/match", "--model", MODEL, "--log-dir",
                           str(tmp_path / "lone"), "--display", "none", "-T", "max_games=2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert "Traceback" not in lone.stderr
    [lone_log] = (tmp_path / "lone").glob("*.eval")
    failed = read_eval_log(str(lone_log))
    assert failed.status == "error" and "--model-role opponent=" in str(failed.error)

