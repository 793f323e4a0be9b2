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
from inspect_ai.model._generate_config import active_generate_config

from lib.benchmark.core import progress
from lib.benchmark.core.chat import ChatConfig
from lib.benchmark.core.inspect_model import ACTIVE, PREFIX, Active, InspectModel
from lib.errors import ChessEvalError, ConfigError

T = TypeVar("T")

progress.BARS = False  # Inspect's display owns the terminal: progress goes to its log


class RunFailed(ChessEvalError):
    """The mode's run ended before its end or incomplete (infrastructure failures): the
    sample fails, and so the eval, as the CLI's run exits non-zero."""


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


def activate() -> list[str]:
    """Make the eval's model the one `--model inspect:<it>` means in this sample (and in the
    threads it starts); the CLI options that ask it as the eval does."""
    model = get_model()
    ACTIVE.set(Active(model, asyncio.get_running_loop(), contextvars.copy_context()))
    return ["--model", PREFIX + str(model), *request_argv()]


def request_argv() -> list[str]:
    """The eval's temperature and max_tokens (the task's, unless the eval set others) as the
    CLI's options, so the player's identity and requests are the eval's."""
    config = active_generate_config()
    argv = [] if config.temperature is None else ["--temperature", repr(config.temperature)]
    return argv + ([] if config.max_tokens is None else ["--max-tokens",
                                                          str(config.max_tokens)])


def endpoint() -> str:
    """The eval's model as the model layer names its endpoint (provider and address)."""
    return InspectModel(get_model(), ChatConfig(base_url="", model="")).endpoint


async def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` on a worker thread, in this sample's context (blocking engine and model
    calls stay off the eval's loop)."""
    return await anyio.to_thread.run_sync(fn, *args)
