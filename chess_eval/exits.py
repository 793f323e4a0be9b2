"""The exit-code contract of every command, in one place (the README states it once).

0: complete. 2: an error, told in one line on stderr, and nothing written (a command line
that asks for nothing to run counts as one). 3: results written but incomplete: a rerun of
the same command completes them. 130: interrupted (Ctrl-C or SIGTERM): a rerun resumes.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """Why a command ended."""

    OK = 0  # complete
    ERROR = 2  # an error: one line on stderr, nothing written
    INCOMPLETE = 3  # written, but some work failed or stopped early: a rerun completes it
    INTERRUPTED = 130  # Ctrl-C or SIGTERM: a rerun resumes
