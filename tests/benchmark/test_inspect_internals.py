"""Inspect's private names: all in one module, each importable on the pinned release, none
anywhere else, and inspect-ai bounded below its next minor release."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from chess_eval.benchmark.model import inspect_internals
from chess_eval.benchmark.model.inspect_internals import PRIVATE, _get

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("module", "name", "why"), PRIVATE, ids=[f"{m}.{n}" for m, n, _ in
                                                                 PRIVATE])
def test_every_private_name_used_is_there(module: str, name: str, why: str) -> None:
    assert why
    assert callable(_get(module, name)), f"{module}.{name} moved: see {inspect_internals.__file__}"


def test_the_helpers_work_outside_a_sample() -> None:
    from inspect_ai.model import GenerateConfig

    error = inspect_internals.prerequisite_error("chess_eval/games: no")
    assert type(error).__name__ == "PrerequisiteError" and str(error) == "chess_eval/games: no"
    assert inspect_internals.active_sample() is None
    assert isinstance(inspect_internals.active_generate_config(), GenerateConfig)


def test_no_module_but_one_reaches_into_inspect_s_private_names() -> None:
    private = re.compile(r"inspect_ai(\.\w+)*\._\w+|\._event(_updated)?\(")
    found = [f"{path.relative_to(ROOT)}:{n}" for folder in ("chess_eval",)
             for path in sorted((ROOT / folder).rglob("*.py"))
             if path.name != "inspect_internals.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if private.search(line)]
    assert not found, found


def test_the_inspect_ai_a_pip_install_allows_is_the_one_ci_tests() -> None:
    """pyproject's range for inspect-ai is requirements.txt's pin, which CI installs: no
    release the private names were never checked on can be installed beside the package."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [spec] = [d for d in meta["project"]["dependencies"] if d.startswith("inspect-ai")]
    pins = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    [pin] = [line.split("#")[0].strip() for line in pins if line.startswith("inspect-ai")]
    assert re.fullmatch(r"inspect-ai==\d+\.\d+\.\d+", pin), pin
    assert spec.split(";")[0].strip() == pin
