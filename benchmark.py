"""Score a model (or a baseline player) on chess: `python benchmark.py [run] --model M` scores it
on questions.csv; a bare `benchmark.py` names and lists every other subcommand. The same
command as the installed `chess-eval` (chess_eval/commands.py holds it); this file only starts it.
"""

from __future__ import annotations

import signal
import sys

# A Ctrl-C while the modules below load exits quietly (130); run_cli takes over after.
if __name__ == "__main__":  # not when a test imports this module
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))

from chess_eval.commands import build_parser, main, subcommand

__all__ = ["build_parser", "main", "subcommand"]

if __name__ == "__main__":
    sys.exit(main())
