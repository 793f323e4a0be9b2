"""The questions.csv format: one row per position, built from positions, puzzles and evals."""

from __future__ import annotations

from collections.abc import Callable

from chess_eval.position import is_private

# The first three columns keep the format of the public competition file the seed comes from.
# played_elo (games: the rating of the human who played played_move) and lichess_phase
# (puzzles: Lichess's phase theme; `phase` is the board rule's) are added at the end.
COLUMNS = [
    "prompt", "expected_output", "private", "id", "source", "elo_bucket", "phase", "type",
    "color", "pos_id", "legal_moves", "game_url", "ply", "history", "played_move",
    "puzzle_id", "rating", "themes", "solution", "engine", "nodes", "played_elo",
    "lichess_phase",
]


def game_question(row: dict[str, str], evaluation: dict[str, object],
                  engine: str) -> dict[str, str]:
    """A questions.csv row for a selected game position (a positions.csv row)."""
    return {
        "prompt": row["fen"], "expected_output": str(evaluation["expected"]),
        "private": _flag(int(row["hash_bucket"])), "id": "g-" + row["pos_id"][:16],
        "source": "game", "elo_bucket": row["elo_bucket"], "phase": row["phase"],
        "type": row["type"], "color": row["side"], "pos_id": row["pos_id"],
        "legal_moves": row["legal_moves"], "game_url": row["game_url"], "ply": row["ply"],
        "history": row["history"], "played_move": row["played_move"], "puzzle_id": "",
        "rating": "", "themes": "", "solution": "", "engine": engine,
        "nodes": str(evaluation["nodes"]),
        "played_elo": row["white_elo"] if row["side"] == "White" else row["black_elo"],
        "lichess_phase": "",
    }


def puzzle_question(row: dict[str, str], evaluation: dict[str, object],
                    engine: str) -> dict[str, str]:
    """A questions.csv row for a selected puzzle (a puzzles.csv row)."""
    return {
        "prompt": row["fen"], "expected_output": str(evaluation["expected"]),
        "private": _flag(int(row["hash_bucket"])), "id": "p-" + row["puzzle_id"],
        "source": "puzzle", "elo_bucket": row["elo_bucket"], "phase": row["phase"],
        "type": row["type"], "color": row["side"], "pos_id": row["pos_id"],
        "legal_moves": row["legal_moves"], "game_url": row["game_url"], "ply": "",
        "history": "", "played_move": "", "puzzle_id": row["puzzle_id"],
        "rating": row["rating"], "themes": row["themes"], "solution": row["solution"],
        "engine": engine, "nodes": str(evaluation["nodes"]), "played_elo": "",
        "lichess_phase": row["lichess_phase"],
    }


def _flag(bucket: int) -> str:
    return "true" if is_private(bucket) else "false"


def cap_mates(rows: list[dict[str, str]], share: float,
              is_mate: Callable[[dict[str, str]], bool]) -> tuple[list[dict[str, str]], int]:
    """The rows with mate rows dropped until mates are at most `share` of the rows that stay
    (the seed's cap is on the file, not on the targets it may fall short of), and how many
    were dropped: puzzles before game positions, the last rows of each first."""
    mates = [i for i, row in enumerate(rows) if is_mate(row)]
    drop = 0
    while len(mates) - drop > int(share * (len(rows) - drop)):
        drop += 1
    order = sorted(mates, key=lambda i: (rows[i]["source"] != "puzzle", -i))
    gone = set(order[:drop])
    return [row for i, row in enumerate(rows) if i not in gone], drop
