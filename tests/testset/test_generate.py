"""The driver: skipping current steps, saying why a step runs, rerunning what changed."""

import logging
import subprocess
import sys
from pathlib import Path

import pytest

import generate
from tests.conftest import MONTHLY, ROOT


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
            "--puzzles-source", str(ROOT.parent / "shared/data/lichess/puzzles/"
                                    "lichess_db_puzzle.random1k.csv.zst"),
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
