"""Step 04 over real HTTP on 127.0.0.1, serving the real puzzle sample."""

from pathlib import Path

from tests.conftest import PUZZLES_1K, unzstd
from tests.testset.steps import step

fetch = step("04_fetch_puzzles")
ZST = PUZZLES_1K.read_bytes()
CSV = unzstd(PUZZLES_1K)


def _run(source: str, out: Path, *extra: str) -> int:
    return fetch.main(["--source", source, "--out", str(out), "--retry-wait", "0.01", *extra])


def test_fetch_over_http_with_a_dropped_connection(file_server, tmp_path: Path) -> None:
    url = file_server.add("/lichess_db_puzzle.csv.zst", ZST, drop_after=67_000, drops_left=1)
    assert _run(url, tmp_path) == 0
    assert (tmp_path / "lichess_puzzles.csv").read_bytes() == CSV
    assert "Range" in file_server.routes["/lichess_db_puzzle.csv.zst"].requests[1]


def test_not_a_puzzle_csv_is_rejected_without_output(file_server, tmp_path: Path,
                                                     capsys) -> None:
    url = file_server.add("/other.csv", b"a,b,c\n1,2,3\n")
    assert _run(url, tmp_path) == 2
    assert "not a Lichess puzzle CSV" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_404_and_truncated(file_server, tmp_path: Path, capsys) -> None:
    assert _run(file_server.url("/nothing.csv.zst"), tmp_path) == 2
    assert "404" in capsys.readouterr().err
    url = file_server.add("/cut.csv.zst", ZST[:20_000])
    assert _run(url, tmp_path) == 2
    assert "truncated" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_local_plain_csv(tmp_path: Path) -> None:
    plain = tmp_path / "p.csv"
    plain.write_bytes(CSV)
    out = tmp_path / "out"
    assert _run(str(plain), out) == 0
    assert (out / "lichess_puzzles.csv").read_bytes() == CSV
