"""A backend is one file: tests/benchmark/urllib_backend.py (under 80 lines, only asking
once) registered for `--model urllib:NAME`, and the provider bench's money tests pass
through it unchanged: the wrapper, not the backend, keeps the money rules."""

import ast
from pathlib import Path

import pytest

from chess_eval.benchmark.model import backends
from tests.benchmark import test_provider
from tests.benchmark.urllib_backend import PREFIX, UrllibBackend
from tests.conftest import ROOT

MONEY_TESTS = (
    test_provider.test_an_unreadable_reply_is_charged_and_asked_again_once,
    test_provider.test_max_cost_reserves_before_sending_and_keeps_what_it_bought,
    test_provider.test_usage_that_stops_under_max_cost_keeps_every_reply_it_bought,
    test_provider.test_max_cost_with_a_price_reserves_max_tokens,
    test_provider.test_a_timed_out_attempt_counts_as_possibly_billed,
)


def test_the_backend_is_one_short_file() -> None:
    """The whole backend, docstrings included, in at most 80 lines."""
    lines = Path(__file__).with_name("urllib_backend.py").read_text().splitlines()
    assert len(lines) <= 80


@pytest.mark.parametrize("money_test", MONEY_TESTS, ids=lambda t: t.__name__[5:])
def test_the_money_tests_pass_through_a_backend_of_one_file(
        money_test, questions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(backends.FACTORIES, PREFIX, UrllibBackend)
    argv = test_provider._argv

    def through_it(*args: str) -> list[str]:
        out = argv(*args)
        out[out.index("--model") + 1] = PREFIX + "m"
        return out
    monkeypatch.setattr(test_provider, "_argv", through_it)
    money_test(questions, tmp_path)
    # The run was asked through the new backend: its results name the model so.
    [result] = tmp_path.glob("static__*.json")
    assert "urllib_m" in result.name or "urllib:m" in result.read_text()


questions = test_provider.questions


MONEY_FILES = ("chess_eval/benchmark/model/metered.py", "chess_eval/benchmark/model/cost.py")


def money_calls(root: Path) -> list[str]:
    """Every place outside the wrapper and the budget that reserves, settles or releases
    money, or stores a reply (a store's put of a reply made into a dict): how the closing
    note's "no module outside the wrapper" was checked."""
    found = []
    for path in sorted(root.glob("chess_eval/**/*.py")):
        rel = str(path.relative_to(root))
        if rel in MONEY_FILES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            name = node.func.attr
            reply = name == "put" and any(
                isinstance(a, ast.Call) and getattr(a.func, "id", "") == "asdict"
                and "reply" in ast.unparse(a.args[0]) for a in node.args)
            if name in ("reserve", "settle", "release") or reply:
                found.append(f"{rel}:{node.lineno} {name}")
    return found


def test_no_module_outside_the_wrapper_touches_the_money(tmp_path: Path) -> None:
    """Reserve, settle, release and storing a reply happen in the wrapper (and the budget it
    keeps) only; the checker itself finds a backend that would do it."""
    assert money_calls(ROOT) == []
    (tmp_path / "chess_eval").mkdir()
    (tmp_path / "chess_eval" / "backend.py").write_text(
        "def send(self, r):\n    self.budget.reserve(1.0)\n"
        "    self.cache.put('k', asdict(reply))\n")
    assert money_calls(tmp_path) == [
        "chess_eval/backend.py:2 reserve", "chess_eval/backend.py:3 put"]
