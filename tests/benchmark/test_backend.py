"""A backend is one file: tests/benchmark/urllib_backend.py (under 80 lines, only asking
once) registered for `--model urllib:NAME`, and the provider bench's money tests pass
through it unchanged: the wrapper, not the backend, keeps the money rules."""

from pathlib import Path

import pytest

from lib.benchmark.model import backends
from tests.benchmark import test_provider
from tests.benchmark.urllib_backend import PREFIX, UrllibBackend

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
