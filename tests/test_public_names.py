"""What a user reads names every method by what it is, never by an internal design note's
number: the README, the docs and every --help. (The pages, reports and leaderboard the
product writes are checked where they are made: tests/benchmark/test_site.py.)"""

import re

import pytest

import benchmark
import generate
import print as print_py
from tests.conftest import ROOT

# The internal design notes are numbered 000, 001, ...; a user has never seen them.
INTERNAL = re.compile(r"seed[ _-]?0", re.IGNORECASE)


def internal_names(text: str) -> list[str]:
    """Each line of `text` that names an internal design note."""
    return [line.strip() for line in text.splitlines() if INTERNAL.search(line)]


def test_the_pattern_finds_what_it_must_and_nothing_else() -> None:
    assert internal_names("as seed 001 asks\nSeed 003's rule\nseed_004\nok") == [
        "as seed 001 asks", "Seed 003's rule", "seed_004"]
    assert internal_names("--seed=0, lichess-bench's rule, seed=1") == []


@pytest.mark.parametrize("page", ["README.md", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))])
def test_the_readme_and_docs_use_public_names(page: str) -> None:
    assert internal_names((ROOT / page).read_text(encoding="utf-8")) == []


def _helps() -> dict[str, str]:
    """The text of every --help the product prints."""
    parser, names = benchmark.build_parser()
    out = {"benchmark.py": parser.format_help()}
    out |= {f"benchmark.py {n}": benchmark.subcommand(parser, n).format_help() for n in names}
    out["generate.py"] = generate.build_parser().format_help()
    out["print.py"] = print_py.build_parser().format_help()
    return out


def test_every_help_text_uses_public_names() -> None:
    helps = _helps()
    assert len(helps) >= 12  # every subcommand, not an empty list
    assert "self-consistency, mirror symmetry, temperature" in helps["benchmark.py worldmodel"]
    assert "lichess-bench" in helps["benchmark.py leaderboard"]
    assert {cmd: internal_names(text) for cmd, text in helps.items()
            if internal_names(text)} == {}
