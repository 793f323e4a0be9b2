"""The engine wrapper: discovery order, clear errors, the mate rule, restart after a crash."""

import json
import os
import shutil
import signal
import time
from pathlib import Path

import chess
import chess.engine
import pytest

from chess_eval import engine as engine_mod
from chess_eval.engine import (
    MATE_CP,
    Engine,
    EngineSettings,
    cp_to_score,
    find_stockfish,
    score_to_cp,
    stall_bound,
)
from chess_eval.errors import EngineError, EngineNotFoundError
from tests.conftest import ROOT, fault_engine


def test_explicit_path_wins(stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STOCKFISH_PATH", "/nonexistent/env-stockfish")
    assert find_stockfish(stockfish) == stockfish


def test_env_var_comes_before_path(stockfish: str, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = tmp_path / "stockfish"
    on_path.symlink_to(stockfish)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("STOCKFISH_PATH", stockfish)
    assert find_stockfish(None) == stockfish
    monkeypatch.delenv("STOCKFISH_PATH")
    assert find_stockfish(None) == str(on_path)


def test_bad_explicit_path_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EngineNotFoundError, match="--stockfish: /nope/stockfish"):
        find_stockfish("/nope/stockfish")


def test_nothing_found_names_every_place_and_make_engine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STOCKFISH_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(engine_mod, "DEBIAN_STOCKFISH", str(tmp_path / "games" / "stockfish"))
    with pytest.raises(EngineNotFoundError) as info:
        find_stockfish(None, root=tmp_path)  # a project where `make engine` never ran
    message = str(info.value)
    for place in ("--stockfish", "STOCKFISH_PATH", "PATH", "games/stockfish",
                  "make engine: not run", "'make engine' in a clone",
                  "npm install --prefix ~/.cache/chess_eval stockfish@17.1.0"):
        assert place in message


def test_the_pip_users_engine_command_installs_package_json_s_pin() -> None:
    """The one line a pip user is told names the version package.json pins for make engine."""
    pin = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["dependencies"]
    assert f"stockfish@{pin['stockfish']}" == engine_mod.NPM_STOCKFISH


def _machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_path: str | None,
             debian: str | None) -> None:
    """A machine as the lookup sees it: maybe a `stockfish` on PATH (node's directory is
    always on it), maybe Debian's /usr/games/stockfish, no STOCKFISH_PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    node = shutil.which("node")
    assert node, "node is needed for npm's engine (make engine installs it)"
    (bin_dir / "node").symlink_to(node)
    if on_path:
        (bin_dir / "stockfish").symlink_to(on_path)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("STOCKFISH_PATH", raising=False)
    monkeypatch.setattr(engine_mod, "DEBIAN_STOCKFISH", debian or str(tmp_path / "none"))


def test_a_machine_with_only_npms_engine_finds_it_and_runs_it_under_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wasm_stockfish: str) -> None:
    _machine(tmp_path, monkeypatch, None, None)
    found = find_stockfish(None)
    assert found == wasm_stockfish and "-lite-" not in found
    with Engine(EngineSettings(found)) as engine:
        assert engine.name == "Stockfish 17.1 WASM"
        move = engine.play(chess.Board(), chess.engine.Limit(nodes=1000))
        assert move in chess.Board().legal_moves


def test_an_engine_on_path_comes_before_debians_and_npms(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stockfish: str,
        wasm_stockfish: str) -> None:
    wrapper = tmp_path / "stockfish-17.1"  # as Debian 13's package on PATH: another build
    wrapper.write_text(f"#!/bin/sh\nexec node {wasm_stockfish}\n")
    wrapper.chmod(0o755)
    _machine(tmp_path, monkeypatch, str(wrapper), stockfish)
    assert find_stockfish(None) == str(tmp_path / "bin" / "stockfish")
    monkeypatch.setenv("PATH", str(tmp_path))  # no stockfish on PATH: Debian's next
    assert find_stockfish(None) == stockfish


def test_a_machine_without_the_reference_build_is_told_how_to_get_it_in_one_sentence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stockfish: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """Only another build found (Debian 12's 15.1): it is taken, and the one warning line
    says which, then how to get 17.1, by the clone's command or a pip user's."""
    _machine(tmp_path, monkeypatch, None, stockfish)
    with caplog.at_level("WARNING", logger=engine_mod.log.name):
        assert find_stockfish(None, root=tmp_path, prefer="Stockfish 17.1") == stockfish
    assert caplog.messages == [
        f"Stockfish: {stockfish}; no build of Stockfish 17.1 (the reference ladder's engine) "
        "found: to get one, run 'make engine' in a clone, or, after a pip install, "
        "'npm install --prefix ~/.cache/chess_eval stockfish@17.1.0' (needs node)"]


def test_a_webassembly_build_without_node_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wasm_stockfish: str) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EngineNotFoundError, match="node is not on PATH"), \
            Engine(EngineSettings(wasm_stockfish)):
        pass


def test_mate_rule() -> None:
    assert score_to_cp(chess.engine.Cp(37)) == 37
    assert score_to_cp(chess.engine.Mate(1)) == MATE_CP - 100
    assert score_to_cp(chess.engine.Mate(3)) == MATE_CP - 300
    assert score_to_cp(chess.engine.Mate(-2)) == -(MATE_CP - 200)
    # Faster mates rank higher; any mate outranks the largest real evaluation.
    assert score_to_cp(chess.engine.Mate(1)) > score_to_cp(chess.engine.Mate(2)) > 20000
    # The anchor's (peval's) encoding: +-(30000 - 100 n).
    mates = (score_to_cp(chess.engine.Mate(3)), score_to_cp(chess.engine.Mate(-2)))
    assert mates == (29700, -29800)


def test_mate_rule_on_a_mate_already_given() -> None:
    """mate() is 0 for both: MateGiven (the side that gave mate) wins, Mate(-0) (the side
    that was mated) loses, from either point of view."""
    assert score_to_cp(chess.engine.MateGiven) == MATE_CP
    assert score_to_cp(chess.engine.Mate(0)) == score_to_cp(chess.engine.Mate(-0)) == -MATE_CP
    # A real position: White has mated. Black, to move, is mated; White's view is MateGiven.
    board = chess.Board("rnbqkbnr/ppppp2p/5p2/6pQ/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 3")
    assert board.is_checkmate() and board.turn == chess.BLACK
    pov = chess.engine.PovScore(chess.engine.Mate(-0), chess.BLACK)
    assert pov.white() == chess.engine.MateGiven
    assert score_to_cp(pov.white()) == MATE_CP and score_to_cp(pov.black()) == -MATE_CP
    assert score_to_cp(pov.relative) == -MATE_CP  # the side to move was mated


def test_engine_restarts_after_being_killed(stockfish: str) -> None:
    board = chess.Board()
    with Engine(EngineSettings(path=stockfish)) as eng:
        assert eng.name.startswith("Stockfish")
        first = eng.ranked_moves(board, chess.engine.Limit(depth=8), 3)
        os.kill(eng.pid, signal.SIGKILL)
        again = eng.ranked_moves(board, chess.engine.Limit(depth=8), 3)
    assert [m.move for m in first] == [m.move for m in again]


def test_depth_limited_search_is_repeatable(stockfish: str) -> None:
    board = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")
    with Engine(EngineSettings(path=stockfish)) as eng:
        a = eng.ranked_moves(board, chess.engine.Limit(depth=12), 4)
        eng.ranked_moves(chess.Board(), chess.engine.Limit(depth=12), 4)
        b = eng.ranked_moves(board, chess.engine.Limit(depth=12), 4)
    assert a == b


KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def test_a_stalled_search_is_killed_and_redone(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    board = chess.Board(KIWIPETE)
    limit = chess.engine.Limit(nodes=50_000)
    with Engine(EngineSettings(path=stockfish)) as eng:
        expected = eng.ranked_moves(board, limit, 3)
    # A bound of 2 s: the wrapped engine answers nothing from its second `go` on.
    monkeypatch.setattr(engine_mod, "STALL_SLACK_S", 2.0)
    path = fault_engine(tmp_path, stockfish, monkeypatch, "stall", "2")
    started = time.monotonic()
    with Engine(EngineSettings(path=path)) as eng:
        first = eng.ranked_moves(board, limit, 3)
        second = eng.ranked_moves(board, limit, 3)  # stalls, is killed, then redone
    assert first == second == expected
    assert time.monotonic() - started < 30
    assert (tmp_path / "go-count").read_text() == "3"


def test_stall_bound_grows_with_the_limit() -> None:
    small = stall_bound(chess.engine.Limit(nodes=100_000))
    assert small < stall_bound(chess.engine.Limit(nodes=10_000_000))
    assert stall_bound(chess.engine.Limit(depth=12)) < stall_bound(chess.engine.Limit(depth=22))
    # Generous: 50x slower than Stockfish's usual speed still finishes within the bound.
    assert small >= 100_000 / 1_000_000 * 50


def test_an_engine_that_keeps_dying_is_an_error_naming_the_position(
        tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = fault_engine(tmp_path, stockfish, monkeypatch, "die", "1,2,3")
    with Engine(EngineSettings(path=path)) as eng, pytest.raises(EngineError) as info:
        eng.ranked_moves(chess.Board(KIWIPETE), chess.engine.Limit(nodes=10_000), 2)
    assert KIWIPETE in str(info.value) and "3 times" in str(info.value)


def test_ctrl_c_while_an_engine_starts_exits_at_once_with_130(
        stockfish: str, tmp_path: Path) -> None:
    """SIGINT while the first engine is still starting (a wrapper that takes a few seconds
    before it execs the real Stockfish, as npm's WebAssembly build takes one or two): the
    command exits 130 instead of waiting forever on the half-started engine's thread."""
    import subprocess
    import sys

    import psutil

    from chess_eval.exits import Exit
    from tests.conftest import ROOT
    slow = tmp_path / "slow-engine"
    slow.write_text(f"#!/bin/sh\nsleep 3\nexec {stockfish}\n")
    slow.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "benchmark.py", "play", "--model", "random",
                             "--stockfish", str(slow), "--out", str(tmp_path / "out")],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline and not any(
            "sleep" in p.name() for p in me.children(recursive=True)):
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()[1]
    os.kill(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        for child in me.children(recursive=True) if proc.poll() is None else []:
            child.kill()
        proc.kill()
    assert proc.returncode == Exit.INTERRUPTED, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("cp", "pgn"), [(0, "0.00"), (35, "0.35"), (-9000, "-90.00"),
                                         (MATE_CP - 300, "#3"), (-(MATE_CP - 500), "#-5")])
def test_centipawns_read_back_as_the_score_the_pgn_writes(cp: int, pgn: str) -> None:
    """A judge's eval, as play stores it, becomes the score a PGN's [%eval] carries and
    reads back to the same centipawns (a mate in n is +-(MATE_CP - 100 n))."""
    import io

    import chess.pgn

    game = chess.pgn.Game()
    game.set_eval(chess.engine.PovScore(cp_to_score(cp), chess.WHITE))
    assert f"[%eval {pgn}]" in str(game)
    back = chess.pgn.read_game(io.StringIO(str(game)))
    assert back is not None and score_to_cp(back.eval().white()) == cp
