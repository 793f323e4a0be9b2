"""The validation set's table: a remeasured ladder's players re-rated, their rows updated."""

import json
from pathlib import Path

from bench.validation_players import DATA, read_table, updated
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import slug
from chess_eval.benchmark.core.server import SERVED
from tests.conftest import ROOT

PLAY = ROOT / "tests" / "data" / "results-v1" / \
    "play__stockfish_nodes_200__standard__6d0961a64b.json"


def test_update_replaces_the_game_columns_of_the_rows_whose_play_runs_are_found(
        tmp_path: Path) -> None:
    """One cross-ladder row's player has a play run in its ladder's directory: that row's
    game Elo, interval and games come from the run; its static columns and every other row
    stay as committed."""
    table = read_table(DATA)
    row = next(r for r in table if r["ladder"] != "ladder.csv")
    play = json.loads(PLAY.read_text())
    folder = tmp_path / row["ladder"].removesuffix(".csv")
    folder.mkdir()
    label = f"{SERVED}/{row['player']}__standard"
    (folder / f"{slug(file_name(Kind.PLAY, label))}__0123456789.json").write_text(
        json.dumps(play))
    # The same player's run in another ladder's directory does not touch this row.
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / f"{slug(file_name(Kind.PLAY, label))}__0123456789.json"
     ).write_text(json.dumps(play))
    rows, replaced = updated(table, tmp_path)
    assert replaced == 1 and len(rows) == len(table)
    [changed] = [i for i, (a, b) in enumerate(zip(table, rows, strict=True)) if a != b]
    assert table[changed] is row
    new, elo = rows[changed], play["conditions"]["standard"]["elo"]
    assert (new["game_elo"], new["game_elo_lo"], new["game_elo_hi"], new["games"]) == (
        elo["mean"], elo["lo"], elo["hi"], play["conditions"]["standard"]["games"])
    assert float(new["game_elo_sd"]) > 0 and new["game_elo"] != float(row["game_elo"])
    assert {k: v for k, v in new.items() if not k.startswith("game")} == \
        {k: v for k, v in row.items() if not k.startswith("game")}


def test_update_adds_a_row_for_a_ladder_the_player_had_none_on(tmp_path: Path) -> None:
    """A map player's run on the 17.1 ladder joins the table with its ladder.csv row's static
    columns; a player the table has no row of gets its static columns empty."""
    table = [r for r in read_table(DATA) if r["ladder"] == "ladder.csv"]
    row = next(r for r in table if r["player"] == "toga2:depth=1,random=85")
    play = json.loads(PLAY.read_text())
    folder = tmp_path / "ladder@stockfish-17.1"
    folder.mkdir()
    for spec in (row["player"], "toga2:depth=1,random=70"):
        label = f"{SERVED}/{spec}__standard"
        (folder / f"{slug(file_name(Kind.PLAY, label))}__0123456789.json").write_text(
            json.dumps(play))
    rows, added = updated(table, tmp_path)
    assert added == 2 and len(rows) == len(table) + 2
    known, new = rows[-2:]
    assert known["ladder"] == new["ladder"] == "ladder@stockfish-17.1.csv"
    assert known["accuracy"] == row["accuracy"] and known["family"] == "fruit"
    assert new["player"] == "toga2:depth=1,random=70" and new["accuracy"] == ""
    assert new["games"] == known["games"] == play["conditions"]["standard"]["games"]


def test_map_games_keep_the_committed_games_of_players_with_no_run_here(tmp_path: Path) -> None:
    """`map-games` on an --out with one player's run (a real play PGN): that player's games
    are the run's, another player's committed games stay, and `run --map` would skip only
    the players with all their games in the file."""
    import argparse

    from bench.served_games import pgn_rows, read_game_rows, write_games
    from bench.validation_players import MAP_GAMES, PLAYERS, kept_map_players, map_games_command

    pgn = ROOT / "tests" / "data" / "replay" / "play__stockfish_nodes_1__standard__33ed37243a.pgn"
    fresh, other = [p.spec for p in PLAYERS if p.map][:2]
    folder = tmp_path / "out" / "ladder@stockfish-17.1"
    folder.mkdir(parents=True)
    label = slug(file_name(Kind.PLAY, f"{SERVED}/{fresh}__standard"))
    (folder / f"{label}__0123456789.pgn").write_text(pgn.read_text())
    games = tmp_path / "games.csv.gz"
    committed = pgn_rows(pgn, other, "ladder@stockfish-17.1.csv")
    stale = pgn_rows(pgn, fresh, "ladder@stockfish-17.1.csv")[:1]
    write_games(games, committed * MAP_GAMES + stale)
    map_games_command(argparse.Namespace(out=tmp_path / "out", write=games))
    rows = read_game_rows(games)
    mine = [r for r in rows if r["player"] == fresh]
    assert mine == pgn_rows(pgn, fresh, "ladder@stockfish-17.1.csv") and len(mine) > 1
    assert len([r for r in rows if r["player"] == other]) == len(committed) * MAP_GAMES
    assert kept_map_players("ladder@stockfish-17.1.csv", games) == {other}
    assert kept_map_players("ladder.csv", games) == set()
