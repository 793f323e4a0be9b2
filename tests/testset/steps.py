"""Load a numbered step module (their file names start with digits)."""

import importlib
from types import ModuleType


def step(name: str) -> ModuleType:
    """The module steps/<name>.py."""
    return importlib.import_module(f"steps.{name}")
