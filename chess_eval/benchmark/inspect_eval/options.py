"""The eval options a chess_eval task refuses, read as the eval starts (by the task's early
stopping, `sample.Checks` or `units.Units`): every sample of an eval that set one fails at
once, in one line, before any request.

Every figure of the five tasks is the CLI's, from one answer a prompt: the adaptive tasks
(games, match, puzzles) and worldmodel take their units from one run, so a second epoch would
replay it (or buy every prompt again for the same figures), and static's metrics read one
answer a question (Inspect's reducer would keep one epoch's and drop the rest it paid for).
So `--epochs` above 1 is refused. The requests of games, match, puzzles and worldmodel are
not messages of the sample's conversation (each game or position keeps its own), so
`--message-limit` could never trip there, and is refused rather than silently ignored. The
adaptive tasks decide unit k from the units before it: `--sample-shuffle` would schedule
later samples first, each waiting for earlier ones, so it is refused there too.
"""

from __future__ import annotations

TASKS = ("static", "games", "match", "puzzles", "worldmodel")
# The tasks whose requests are not the sample's messages (each unit keeps its own).
OWN_MESSAGES = ("games", "match", "puzzles", "worldmodel")
ADAPTIVE = ("games", "match", "puzzles")  # the tasks whose samples play their units in order


def refusal(task: str, epochs: int | None, message_limit: int | None,
            shuffle: object = None) -> str | None:
    """Why an eval of chess_eval/TASK with these options may not run (None: it may)."""
    if task not in TASKS:
        return None
    if shuffle not in (None, False) and task in ADAPTIVE:
        return (f"chess_eval/{task} refuses --sample-shuffle: sample k plays the run's k-th "
                "unit, decided from the ones before it, so samples must start in order")
    if epochs is not None and epochs > 1:
        return (f"chess_eval/{task} runs one epoch (--epochs {epochs} refused): its figures "
                "come from one answer a prompt; raise limit, max_games, max_puzzles or target "
                "for more")
    if message_limit is not None and task in OWN_MESSAGES:
        return (f"chess_eval/{task} refuses --message-limit: its requests are not messages "
                "of the sample's conversation, so the limit could never stop one; use "
                "--token-limit, --time-limit or --cost-limit")
    return None
