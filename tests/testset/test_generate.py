"""The driver: skipping current steps, saying why a step runs, rerunning what changed."""

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import generate
from tests.conftest import MONTHLY, PUZZLES_1K, ROOT
from tests.testset.steps import step


def test_every_step_and_entry_point_has_help() -> None:
    scripts = sorted((ROOT / "steps").glob("0*.py")) + [ROOT / "generate.py",
                                                         ROOT / "print.py"]
    for script in scripts:
        result = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                                text=True, cwd="/")
        assert result.returncode == 0, script
        assert "--out" in result.stdout or "--help" in result.stdout


def test_second_run_skips_and_a_changed_parameter_reruns(small_build: Path, caplog,
                                                         stockfish: str) -> None:
    argv = ["--out", str(small_build), "--questions", str(small_build / "questions.csv"),
            "--scale", "0.05", "--games-source", str(MONTHLY),
            "--puzzles-source", str(PUZZLES_1K),
            "--workers", "2", "--stockfish", stockfish]
    caplog.set_level(logging.INFO)
    before = (small_build / "questions.csv").read_bytes()
    assert generate.main(argv) == 0
    assert caplog.text.count("up to date, skipped") == 6
    caplog.clear()
    assert generate.main(argv + ["--only", "3", "--seed", "1"]) == 0
    assert "step 3 (03_select_games): running, because changed since last run: params" \
        in caplog.text
    caplog.clear()
    # Back to seed 0: step 3 reruns (params changed again) and reproduces the same file,
    # so step 6 finds its inputs unchanged and is skipped.
    assert generate.main(argv) == 0
    assert "step 3 (03_select_games): running" in caplog.text
    assert "step 6 (06_evaluate): up to date" in caplog.text
    assert (small_build / "questions.csv").read_bytes() == before


def test_selected_steps() -> None:
    parse = generate.build_parser().parse_args
    assert generate.selected_steps(parse([])) == [1, 2, 3, 4, 5, 6]
    assert generate.selected_steps(parse(["--skip-eval"])) == [1, 2, 3, 4, 5]
    assert generate.selected_steps(parse(["--from", "4"])) == [4, 5, 6]
    assert generate.selected_steps(parse(["--only", "2"])) == [2]


def test_missing_games_source_fails_clearly(tmp_path: Path, capsys) -> None:
    argv = ["--out", str(tmp_path), "--games-source", str(tmp_path / "none.pgn.zst"),
            "--only", "1"]
    assert generate.main(argv) == 2
    assert "source not found" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--scale", "--workers"])
def test_bad_numbers_are_rejected_by_argparse(flag: str) -> None:
    with pytest.raises(SystemExit):
        generate.build_parser().parse_args([flag, "0"])


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1"])
def test_non_finite_scales_are_one_line_errors(value: str) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "generate.py"), "--scale", value],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "--scale" in result.stderr


def test_a_quick_run_never_targets_the_committed_file() -> None:
    parse = generate.build_parser().parse_args
    assert generate.questions_target(parse([])) == Path("questions.csv")
    assert generate.questions_target(parse(["--scale", "0.1"])) == Path("output/questions.csv")
    assert generate.questions_target(parse(["--scale", "0.1", "--out", "b"])) == Path(
        "b/questions.csv")
    named = ["--scale", "0.1", "--questions", "questions.csv"]
    assert generate.questions_target(parse(named)) == Path("questions.csv")


def test_step_06_alone_follows_the_build_scale(small_build: Path) -> None:
    evaluate = step("06_evaluate")
    args = evaluate.build_parser().parse_args(["--out", str(small_build)])
    assert evaluate.questions_target(args) == small_build / "questions.csv"


def test_unwritable_outputs_fail_before_any_step_and_keep_records(
        small_build: Path, tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert generate.main(["--out", str(blocker / "sub"), "--only", "1"]) == 2
    assert "--out" in capsys.readouterr().err
    state = (small_build / ".steps.json").read_bytes()
    argv = ["--out", str(small_build), "--questions", str(tmp_path), "--from", "6"]
    assert generate.main(argv) == 2
    assert "--questions" in capsys.readouterr().err
    assert (small_build / ".steps.json").read_bytes() == state


def test_a_step_alone_in_a_new_directory_is_one_line(tmp_path: Path, stockfish: str) -> None:
    for name in ("02_process_games", "03_select_games", "05_select_puzzles", "06_evaluate"):
        engine = [] if name == "02_process_games" else ["--stockfish", stockfish]
        result = subprocess.run(
            [sys.executable, str(ROOT / "steps" / f"{name}.py"), "--out",
             str(tmp_path / name), *engine], capture_output=True, text=True)
        assert result.returncode == 2, name
        assert "Traceback" not in result.stderr and "run step" in result.stderr, name


@pytest.mark.parametrize("name", ["games.db", "probes.db", "evals.db"])
def test_a_corrupt_database_names_itself(name: str, small_build: Path, tmp_path: Path,
                                         stockfish: str) -> None:
    out = tmp_path / "out"
    shutil.copytree(small_build, out)
    (out / name).write_bytes(b"this is not a database" * 100)
    number = {"games.db": "3", "probes.db": "3", "evals.db": "6"}[name]
    result = subprocess.run(
        [sys.executable, str(ROOT / "generate.py"), "--out", str(out), "--only", number,
         "--force", "--questions", str(out / "q.csv"), "--scale", "0.05",
         "--stockfish", stockfish], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"{name} is corrupt" in result.stderr and "delete it" in result.stderr
