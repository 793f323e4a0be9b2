"""benchmark.py's command line: one vocabulary, help that reads as printed, old spellings kept."""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import benchmark
from chess_eval.benchmark.players.player import LIMITED_NODES, STOCKFISH_NODES

ROOT = Path(__file__).resolve().parents[2]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser, _ = benchmark.build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_a_bare_command_lists_the_subcommands() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py")], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    for name in ("run", "play", "puzzles", "worldmodel", "calibrate", "leaderboard", "report"):
        assert f"    {name}" in done.stdout
    assert "--model MODEL" not in done.stdout  # not run's usage
    assert "Traceback" not in done.stderr



def test_the_bare_command_s_summary_names_every_mode() -> None:
    """The paragraph above the list names every subcommand (before, it left out book, match
    and serve)."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py")], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    summary = " ".join(done.stdout.split("positional arguments:")[0].split()[3:])
    for name in ("run", "play", "puzzles", "worldmodel", "calibrate", "book", "leaderboard",
                 "report", "compare", "match", "serve"):
        assert re.search(rf"\b{name}\b", summary), (name, summary)


def test_no_help_text_prints_a_doubled_percent_sign() -> None:
    parser, _ = benchmark.build_parser()
    texts = [parser.format_help()] + [p.format_help() for p in _subparsers().values()]
    for text in texts:
        assert "%%" not in text
    assert any("90% interval" in text for text in texts)


def test_every_subcommand_with_a_player_names_every_baseline_spec() -> None:
    for name, sub in _subparsers().items():
        text = " ".join(sub.format_help().split())
        if "--model MODEL" not in text:
            continue
        for spec in ("'random'", "'stockfish:nodes=N'", "'mix:random=P,nodes=N'",
                     f"{STOCKFISH_NODES:,} nodes", f"{LIMITED_NODES:,} nodes"):
            assert spec in text, (name, spec)


def test_stockfish_is_one_option_with_one_text_everywhere() -> None:
    helps = {a.help for sub in _subparsers().values() for a in sub._actions
             if "--stockfish" in a.option_strings}
    assert len(helps) == 1


def test_the_leaderboard_reads_results_and_keeps_out_as_an_old_name(tmp_path: Path) -> None:
    results = tmp_path / "results"
    run = [sys.executable, str(ROOT / "benchmark.py"), "--model", "random", "--limit", "20",
           "--out", str(results)]
    assert subprocess.run(run, capture_output=True, cwd=ROOT, timeout=300).returncode == 0
    for option in ("--results", "--out"):
        done = subprocess.run([sys.executable, str(ROOT / "benchmark.py"), "leaderboard",
                               option, str(results)], capture_output=True, text=True,
                              cwd=ROOT, timeout=300)
        assert done.returncode == 0, done.stderr
        assert f"wrote {results / 'leaderboard.md'}" in done.stdout
        deprecated = "--out is deprecated here: use --results" in done.stderr
        assert deprecated == (option == "--out")


@pytest.mark.parametrize("argv", [["leaderboard"], ["report"], ["compare", "a", "b"]],
                         ids=lambda argv: argv[0])
def test_a_results_folder_that_is_not_there_is_named_so(
        argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before, leaderboard said it found no complete results, and compare no run 'a'."""
    missing = tmp_path / "no-such-folder"
    assert benchmark.main([*argv, "--results", str(missing)]) == 2
    named = "no run 'a': " if argv[0] == "compare" else ""
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {named}{missing}: no such results directory"]
    assert not missing.exists()


def test_resume_is_accepted_and_says_it_is_not_needed(tmp_path: Path) -> None:
    argv = [sys.executable, str(ROOT / "benchmark.py"), "--model", "random", "--limit", "5",
            "--out", str(tmp_path), "--resume"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "--resume is no longer needed" in done.stderr
    assert "--resume" not in subprocess.run(argv[:2] + ["run", "--help"], capture_output=True,
                                            text=True, cwd=ROOT, timeout=120).stdout
    written = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert [r["n"] for r in written] == [5]


@pytest.mark.parametrize("argv", [["leaderboard", "--results"], ["report", "--results"]])
def test_an_option_without_its_value_is_one_line(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py"), *argv],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert "expected one argument" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(("argv", "said"), [
    (["play", "--model", "random", "--workers", "2"], "unrecognized arguments: --workers 2"),
    (["match", "--model", "random"], "required: --opponent"),
    (["match", "--model", "random", "--opponent", "x", "--max-games", "0"],
     "--max-games: must be >= 1, got 0"),
    (["match", "--model", "random", "--opponent", "x", "--max-games", "ten"],
     "--max-games: must be a whole number, got 'ten'"),
    (["play", "--model", "random", "--max-cost", "lots"],
     "--max-cost: must be a number, got 'lots'")])
def test_an_option_error_is_one_line_naming_the_subcommand(argv: list[str], said: str) -> None:
    """argparse's errors in one line: the subcommand, what is wrong, where the options are
    listed (not the usage block first); exit 2."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py"), *argv],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and said in done.stderr
    assert done.stderr.startswith(f"error: benchmark.py {argv[0]}: ")
    assert f"benchmark.py {argv[0]} --help" in done.stderr


def test_serve_refuses_a_port_out_of_range_in_one_line() -> None:
    """`serve --port 99999` (a port past 65535) is refused by the parser, in one line, before
    any socket is opened (it used to reach bind() and print its traceback)."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmark.py"), "serve", "--port",
                           "99999"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert "a port is 0 to 65535, got 99999" in done.stderr
    assert "Traceback" not in done.stderr
