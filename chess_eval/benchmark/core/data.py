"""Where the product's committed data lives, and the names it had before.

Everything the benchmark reads from the repository sits under `data/` (and questions.csv at
its root); both ship inside the package as chess_eval/_data/, so an installed wheel finds them
as a clone does: the ladders, one folder
per engine build that measured it (`data/ladders/stockfish-17.1/`: its rungs `ladder.csv`,
their covariance `ladder_cov.csv`, the engine's fingerprint, its calibration games and its
held-out games), the measured map between two ladders beside them, the opening book, the
static-to-game fit, the paired baselines, the Lichess crosswalk (`data/human/`) and the puzzle
pool (`data/puzzles/`).

Until these folders existed the files sat at the repository's root (`ladder.csv`,
`ladder@stockfish-17.1.csv`, `openings.csv`, ...). A path option given one of those old
names, where no such file exists any more, reads the file at its new place and says the new
name once (`data_path`, `ladder_path`). The old shared games file held every engine's
games; its name now means the games file of the ladder in use.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from chess_eval.shipped import CHECKOUT, DATA, QUESTIONS, ROOT

__all__ = ["CHECKOUT", "DATA", "QUESTIONS", "ROOT"]  # re-exported: the benchmark's names for them

log = logging.getLogger(__name__)

# DATA, QUESTIONS, ROOT and CHECKOUT: what the package ships, found through it (shipped.py).
LADDERS = DATA / "ladders"  # one folder per engine build, the maps between them beside
LADDER_FILE = "ladder.csv"  # a ladder's rungs, in its folder
LADDER_GAMES = "ladder_games.csv.gz"  # the calibration games, beside the ladder (gzip CSV)
HELD_OUT_GAMES = "ladder_held_out_games.csv.gz"  # games between rung pairs no fit sees
FIRST_LADDER = LADDERS / "stockfish-15.1" / LADDER_FILE  # Debian 12's engine's: the default
# rungs, and the prior of a new engine's ladder
REFERENCE_LADDER = LADDERS / "stockfish-17.1" / LADDER_FILE  # the one reference scale
LADDER_MAP = LADDERS / "ladder_map.json"  # the measured map from the first to the reference
MAP_PLAYERS = LADDERS / "ladder_map_players.csv"  # the players it was measured on
BOOK = DATA / "openings.csv"  # the opening book games start from
GAME_FIT = DATA / "game_elo_fit.json"  # static scores -> game Elo
PAIRED_BASELINES = DATA / "paired_baselines.json"  # baselines' static answers, for compare
PUZZLE_POOL = DATA / "puzzles" / "lichess_puzzles.pool.csv.zst"  # `puzzles`' default pool

# The root's old names and where each file went. None: the games file of the ladder in use
# (one file held every engine's games; each ladder's folder now holds its own).
MOVED: dict[str, Path | None] = {
    "ladder.csv": FIRST_LADDER,
    "ladder@stockfish-17.1.csv": REFERENCE_LADDER,
    "ladder_map.json": LADDER_MAP,
    "ladder_map_players.csv": MAP_PLAYERS,
    "openings.csv": BOOK,
    "game_elo_fit.json": GAME_FIT,
    "paired_baselines.json": PAIRED_BASELINES,
    LADDER_GAMES: None,
    HELD_OUT_GAMES: None,
}
_said: set[str] = set()  # the old names already explained in this process


def moved(path: Path) -> Path | None:
    """`path` itself, unless it is a root file that has moved under data/ (and no file by
    that name exists): then its new place, said once (None: the ladder's own games file)."""
    if path.exists() or path.resolve().parent != ROOT or path.name not in MOVED:
        return path
    new = MOVED[path.name]
    if path.name not in _said:
        _said.add(path.name)
        where = new.relative_to(ROOT) if new else "the games file in the ladder's folder"
        log.warning("%s has moved to %s; reading it there (give the new name: the old one "
                    "may go)", path.name, where)
    return new


def data_path(text: str) -> Path:
    """argparse type of a path to committed data: an old root name reads the moved file."""
    new = moved(Path(text))
    if new is None:
        raise argparse.ArgumentTypeError(f"{text} has moved into each ladder's folder: leave "
                                         "the option out to use the ladder's own")
    return new


def questions_path(text: str) -> Path:
    """argparse type of --questions: the file named, or, where no such file is here, the
    repository's committed file of that name (so the default works from any directory)."""
    path = Path(text)
    if not path.exists() and not path.is_absolute() and (ROOT / path).is_file():
        return ROOT / path
    return path


def ladder_path(text: str) -> Path:
    """argparse type of --ladder: a ladder file, a ladder's folder, the name of a committed
    ladder (stockfish-17.1), or a ladder's old name at the root."""
    path = Path(text)
    if path.is_dir():
        return path / LADDER_FILE
    if not path.exists() and (LADDERS / text / LADDER_FILE).exists():
        return LADDERS / text / LADDER_FILE
    if not path.exists() and not path.suffix:  # (every old root name has a suffix)
        if len(path.parts) == 1 and not text.endswith("/"):  # a committed ladder's name, mistyped
            names = sorted(p.parent.name for p in LADDERS.glob(f"*/{LADDER_FILE}"))
            raise argparse.ArgumentTypeError(
                f"{text}: no such ladder (committed: {', '.join(names)}; a new ladder is a "
                "folder path, such as ./NAME/, or a .csv file)")
        return path / LADDER_FILE  # a folder not made yet: the ladder file in it
    return data_path(text)


def games_path(text: str) -> Path | None:
    """argparse type of a games file: the old shared one's name means the ladder's own."""
    return moved(Path(text))


def ladder_name(path: Path) -> str:
    """How a ladder is named in messages: its folder under data/ladders, else its path."""
    try:
        return str(path.relative_to(LADDERS).parent) if path.name == LADDER_FILE else str(path)
    except ValueError:
        return str(path)


def ladder_label(path: Path) -> str:
    """The name bench/'s tables and output folders know a ladder by: the file name it had
    at the root before ladders became folders (ladder.csv for the first, ladder@ENGINE.csv
    for every other committed one), so that tables and runs written before still match."""
    resolved = path.resolve()
    if resolved == FIRST_LADDER.resolve():
        return FIRST_LADDER.name
    if resolved.name == LADDER_FILE and resolved.parent.parent == LADDERS.resolve():
        return f"ladder@{resolved.parent.name}.csv"
    return path.name
