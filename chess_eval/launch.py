"""The `chess-eval` script (pyproject's [project.scripts]): a quiet Ctrl-C while the benchmark's
modules load, then its command line (chess_eval.commands), as `python benchmark.py` does in a
checkout.
"""

from __future__ import annotations

import signal
import sys


def main() -> int:
    """The `chess-eval` command: its exit status."""
    # A Ctrl-C while the modules below load exits quietly (130); run_cli takes over after.
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
    from chess_eval.commands import main as run

    return run(prog="chess-eval")
