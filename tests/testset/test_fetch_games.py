"""Step 01 over real HTTP on 127.0.0.1, serving a real Lichess zstd file."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import MONTHLY, ROOT, unzstd
from tests.testset.steps import step

fetch = step("01_fetch_games")
ZST = MONTHLY.read_bytes()
PGN = unzstd(MONTHLY)


def _run(url: str, out: Path, *extra: str) -> int:
    return fetch.main(["--source", url, "--out", str(out), "--retry-wait", "0.01", *extra])


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir()) if out.exists() else []


def test_full_fetch_is_the_whole_dump(file_server, tmp_path: Path) -> None:
    url = file_server.add("/dump.pgn.zst", ZST)
    assert _run(url, tmp_path) == 0
    data = (tmp_path / "games.pgn").read_bytes()
    assert data.rstrip() == PGN.rstrip()
    assert data.count(b"\n[Event ") + 1 == 999


def test_offset_and_chunk_cut_at_game_boundaries(file_server, tmp_path: Path) -> None:
    url = file_server.add("/dump.pgn.zst", ZST)
    assert _run(url, tmp_path, "--offset-mb", "0.5", "--chunk-mb", "0.25") == 0
    data = (tmp_path / "games.pgn").read_bytes().rstrip(b"\n") + b"\n"
    start = PGN.find(data)
    assert start > 0.5 * 2**20 and PGN[start - 1:start] == b"\n"
    assert data.startswith(b"[Event ")
    end = start + len(data)
    # The slice stops right before the next game and holds at least the chunk.
    assert PGN[end:].lstrip(b"\n").startswith(b"[Event ")
    assert len(data) >= 0.25 * 2**20
    # No game starts before the offset inside the slice's first game.
    assert PGN.rfind(b"\n[Event ", 0, start - 1) < 0.5 * 2**20


def test_dropped_connection_resumes_with_range(file_server, tmp_path: Path) -> None:
    url = file_server.add("/dump.pgn.zst", ZST, drop_after=100_000, drops_left=2)
    assert _run(url, tmp_path) == 0
    assert (tmp_path / "games.pgn").read_bytes().rstrip() == PGN.rstrip()
    requests = file_server.routes["/dump.pgn.zst"].requests
    assert len(requests) == 3
    resumed_at = int(requests[1]["Range"].removeprefix("bytes=").rstrip("-"))
    assert 0 < resumed_at <= 100_000


def test_too_many_drops_fail_clearly_without_output(file_server, tmp_path: Path, capsys) -> None:
    url = file_server.add("/dump.pgn.zst", ZST, drop_after=50_000, drops_left=99)
    (tmp_path / "games.pgn").write_bytes(b"an earlier complete file\n")
    assert _run(url, tmp_path, "--retries", "2") == 2
    assert "giving up after 2 retries" in capsys.readouterr().err
    # The earlier file is untouched and no partial file is left beside it.
    assert (tmp_path / "games.pgn").read_bytes() == b"an earlier complete file\n"
    assert _leftovers(tmp_path) == ["games.pgn"]


def test_truncated_zstd_is_an_error(file_server, tmp_path: Path, capsys) -> None:
    url = file_server.add("/cut.pgn.zst", ZST[: len(ZST) // 2])
    assert _run(url, tmp_path) == 2
    assert "truncated zstd" in capsys.readouterr().err
    assert _leftovers(tmp_path) == []


def test_404_is_a_clear_error(file_server, tmp_path: Path, capsys) -> None:
    assert _run(file_server.url("/missing.pgn.zst"), tmp_path) == 2
    assert "404" in capsys.readouterr().err
    assert _leftovers(tmp_path) == []


def test_local_sources_concatenate(tmp_path: Path) -> None:
    plain = tmp_path / "plain.pgn"
    plain.write_bytes(PGN[:PGN.index(b"\n[Event ", 10_000) + 1])
    out = tmp_path / "out"
    argv = ["--source", str(plain), "--source", str(MONTHLY), "--out", str(out)]
    assert fetch.main(argv) == 0
    data = (out / "games.pgn").read_bytes()
    assert data.count(b"[Event ") == plain.read_bytes().count(b"[Event ") + 999


def test_default_source_is_last_complete_month() -> None:
    import datetime as dt

    assert fetch.last_complete_month(dt.date(2026, 1, 5)) == "2025-12"
    args = fetch.build_parser().parse_args([])
    args.month = "2025-03"
    assert fetch.sources(args) == [
        "https://database.lichess.org/standard/lichess_db_standard_rated_2025-03.pgn.zst"]
    args.month = "March"
    with pytest.raises(Exception, match="--month"):
        fetch.sources(args)


def test_sigterm_mid_download_leaves_no_temporary_file(file_server, tmp_path: Path) -> None:
    url = file_server.add("/slow.pgn.zst", ZST, hang_after=len(ZST) // 2)
    argv = [sys.executable, str(ROOT / "steps" / "01_fetch_games.py"), "--source", url,
            "--out", str(tmp_path)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not list(tmp_path.glob(".games.pgn.tmp-*")) and time.time() < deadline:
        time.sleep(0.1)
    assert list(tmp_path.glob(".games.pgn.tmp-*"))
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130 and "Traceback" not in err
    assert _leftovers(tmp_path) == []


def test_a_temporary_file_left_by_kill_9_is_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".games.pgn.tmp-{dead.pid}"
    stale.write_bytes(PGN[:5000])
    assert fetch.main(["--source", str(MONTHLY), "--out", str(tmp_path)]) == 0
    assert _leftovers(tmp_path) == ["games.pgn", "games_sources.json"]
