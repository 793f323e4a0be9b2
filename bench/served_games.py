"""The games a served player's readings rest on, kept so the readings can be refitted.

A reading (a served player's game Elo on a ladder) moves when the ladder is refitted; its
games do not. `pgn_rows` gathers a play run's games from its PGN, `write_games` keeps them in
a committed gzip CSV (fixed mtime: the same games, the same bytes), and `refit` rates each
player's games on the ladder as it is now with play's own estimator and prior, so a refit of
the ladder needs no new game (bench/maia_players.py's nets, bench/validation_players.py's
map players).
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from chess_eval.benchmark.arena.game import WHITE_SCORE
from chess_eval.benchmark.arena.ladder import Ladder, load_ladder
from chess_eval.benchmark.core.server import SERVED
from chess_eval.benchmark.games.sampler import (
    SamplerConfig,
    for_ladder,
    game_elo,
    ladder_weights,
    posterior,
)
from chess_eval.benchmark.stats.btd import Z90
from chess_eval.files import atomic_write

GAME_FIELDS = ("player", "ladder", "round", "white", "black", "result", "start", "moves")


def pgn_rows(pgn: Path, player: str, ladder: str) -> list[dict[str, str]]:
    """Every game of a play run's PGN as a row of the games file."""
    found = []
    text = io.StringIO(pgn.read_text())
    while (game := chess.pgn.read_game(text)) is not None:
        found.append({"player": player, "ladder": ladder,
                      "round": game.headers.get("Round", ""),
                      "white": game.headers.get("White", ""),
                      "black": game.headers.get("Black", ""),
                      "result": game.headers.get("Result", ""),
                      "start": game.headers.get("FEN", chess.STARTING_FEN),
                      "moves": " ".join(m.uci() for m in game.mainline_moves())})
    return found


def read_game_rows(path: Path) -> list[dict[str, str]]:
    """The games file's rows ([] when it does not exist yet)."""
    if not path.exists():
        return []
    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def write_games(path: Path, rows: list[dict[str, str]]) -> None:
    """The games file, gzip with a fixed mtime."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=GAME_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    with atomic_write(path, "wb") as handle, \
            gzip.GzipFile(fileobj=handle, mode="wb", mtime=0) as zipped:
        zipped.write(text.getvalue().encode())


def player_games(games: Path, fitted: Ladder, ladder_file: Path, ladder: str
                 ) -> dict[str, tuple[list[int], list[float]]]:
    """Each player's games on `ladder` (the games file's name of it): the rung of `fitted`
    each was played against (an index) and the player's score."""
    index = {r.spec: i for i, r in enumerate(fitted.rungs)}
    by_player: dict[str, tuple[list[int], list[float]]] = {}
    for row in read_game_rows(games):
        if row["ladder"] != ladder:
            continue
        white = row["white"].startswith(f"{SERVED}/")
        rival = (row["black"] if white else row["white"]).split("@")[0]
        rival = rival.removesuffix(":seed=0")
        if rival not in index:
            raise SystemExit(f"{games}: {row['player']} played {rival}, no rung of "
                             f"{ladder_file}")
        rungs, scores = by_player.setdefault(row["player"], ([], []))
        rungs.append(index[rival])
        score = WHITE_SCORE[row["result"]]
        scores.append(score if white else 1 - score)
    return by_player


def refit(games: Path, ladder_file: Path, ladder: str) -> dict[str, dict[str, Any]]:
    """Each player's game columns from its games on `ladder` (the games file's name of it),
    rated on `ladder_file` as it is now: the reading with its 90% interval and sd, games, the
    ladder's part of its sd and the weights of the rungs' Elos in it."""
    fitted = load_ladder(ladder_file)
    config = for_ladder(SamplerConfig(tuple(fitted.elos), fitted.nu), fitted)
    columns = {}
    for player, (rungs, scores) in player_games(games, fitted, ladder_file, ladder).items():
        opp = [float(fitted.elos[i]) for i in rungs]
        est = game_elo(opp, scores, config)
        post = posterior(opp, scores, config)
        columns[player] = {
            "game_elo": round(est.mean), "game_elo_lo": round(est.lo),
            "game_elo_hi": round(est.hi), "game_elo_sd": round((est.hi - est.lo) / (2 * Z90), 1),
            "games": len(scores), "game_elo_ladder_sd": round(post.ladder, 1),
            "ladder_weights": " ".join(f"{w:.5f}" for w in
                                       ladder_weights(opp, post.mean, config, scores))}
    return columns
