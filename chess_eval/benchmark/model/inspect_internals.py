"""Every private name of Inspect this project uses, in one place, each with why no public one
serves. They are imported when used, never when a module loads, so an Inspect release that
moves one cannot stop a chess_eval task from importing; `tests/benchmark/test_inspect_internals.py`
imports each name in `PRIVATE`, so such a release fails CI first, and pyproject.toml allows
only the inspect-ai release CI tests (requirements.txt's pin)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# (module, name, why): what a test imports and what this module reaches for.
PRIVATE = (
    ("inspect_ai._util.error", "PrerequisiteError",
     "the one error Inspect prints as one line, with no traceback, before any sample runs"),
    ("inspect_ai.model._generate_config", "active_generate_config",
     "the eval's own generation settings (temperature, timeout...) inside a sample"),
    ("inspect_ai.log._samples", "sample_active",
     "the running sample's eval id, to refuse the eval options a task cannot honour"),
    ("inspect_ai.model._model", "use_model_event_sink",
     "a reply a limit stops after it arrived: its output, to charge and keep it"),
    ("inspect_ai.log._transcript", "Transcript._event",
     "the events of that request, into the sample's transcript as Inspect would put them"),
    ("inspect_ai.log._transcript", "Transcript._event_updated",
     "(the same, when the request completes)"),
)


def _get(module: str, name: str) -> Any:
    """A private name, looked up when used."""
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def prerequisite_error(message: str) -> Exception:
    """Inspect's PrerequisiteError: printed as its message alone, the eval failed."""
    error: Exception = _get("inspect_ai._util.error", "PrerequisiteError")(message)
    return error


def active_generate_config() -> Any:
    """The eval's generation settings, as the running sample sees them."""
    return _get("inspect_ai.model._generate_config", "active_generate_config")()


def active_sample() -> Any:
    """The running sample (None outside one)."""
    return _get("inspect_ai.log._samples", "sample_active")()


@contextmanager
def model_event_sink(sink: Any) -> Iterator[None]:
    """Inspect's model events of the requests made inside, sent to `sink`."""
    with _get("inspect_ai.model._model", "use_model_event_sink")(sink):
        yield


def record_event(event: Any, updated: bool = False) -> None:
    """A model event into the running sample's transcript (new, or updated)."""
    from inspect_ai.log import transcript

    method = "_event_updated" if updated else "_event"
    getattr(transcript(), method)(event)
