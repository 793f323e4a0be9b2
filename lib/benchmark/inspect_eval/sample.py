"""What every chess_eval task shares: its options parsed by the CLI's own parser, and the
eval's model made the one `--model inspect:...` means inside a sample."""

from __future__ import annotations

import argparse
import asyncio
import contextvars
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from inspect_ai.model import get_model

from lib.benchmark.core.inspect_model import ACTIVE, PREFIX, Active
from lib.errors import ConfigError

T = TypeVar("T")


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are ConfigError (one line), not an exit."""

    def error(self, message: str) -> Any:
        raise ConfigError(f"{self.prog}: {message}")


def mode_args(add_parser: Callable[[Any], None], command: str,
              argv: list[str]) -> argparse.Namespace:
    """`benchmark.py COMMAND ARGV`'s options, parsed by that command's own parser (the same
    defaults and checks as the CLI)."""
    parser = _Parser(prog="chess_eval")
    add_parser(parser.add_subparsers(dest="command", parser_class=_Parser))
    return parser.parse_args([command, *argv])


def activate() -> str:
    """Make the eval's model the one `--model inspect:<it>` means in this sample (and in the
    threads it starts); its --model spec."""
    model = get_model()
    ACTIVE.set(Active(model, asyncio.get_running_loop(), contextvars.copy_context()))
    return PREFIX + str(model)


async def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a worker thread, in this sample's context (blocking engine and model
    calls stay off the eval's loop)."""
    return await anyio.to_thread.run_sync(fn, *args)
