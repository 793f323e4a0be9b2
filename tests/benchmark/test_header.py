"""One header for every result file: written by one function, read by one loader that checks
kind and version; files of schema version 1 (committed examples, made by the code before the
header) stay readable by every reader."""

import json
import shutil
from pathlib import Path

import pytest

import benchmark
from chess_eval.benchmark.core import header
from chess_eval.benchmark.core.header import Kind, read_result, write_result
from chess_eval.errors import DataError
from tests.conftest import PUZZLES_44K, ROOT

V1 = ROOT / "tests" / "data" / "results-v1"  # made by `benchmark.py` at 12af30e
V1_KINDS = {"random__fen_1__all__0dbde11960.json": Kind.STATIC,
            "stockfish_nodes_200__fen_1__all__4606bc600f.json": Kind.STATIC,
            "play__stockfish_nodes_200__standard__6d0961a64b.json": Kind.PLAY,
            "puzzles__random__5d4a45dc90.json": Kind.PUZZLES,
            "worldmodel__random__8670bf307a.json": Kind.WORLDMODEL,
            "compare__random__fen_1__all__0dbde11960__stockfish_nodes_200__fen_1__all__"
            "4606bc600f.json": Kind.COMPARE}


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_round_trips_through_the_one_loader(kind: Kind, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "86400")
    path = tmp_path / f"{kind}__x.json"
    write_result(path, kind, {"model": "m", "complete": False, "n": 3}, "2 requests failed")
    raw = json.loads(path.read_text())
    assert list(raw)[:6] == list(header.HEADER_FIELDS)  # the header comes first
    assert raw["created_at"] == "1970-01-02T00:00:00Z" and raw["revision"]
    data = read_result(path)
    assert (data["kind"], data["schema_version"], data["complete"]) == (kind, 2, False)
    assert data["incomplete_reason"] == "2 requests failed" and data["n"] == 3
    assert data["_file"] == path.name


def test_a_complete_result_has_no_reason_and_the_revision_names_the_code() -> None:
    with pytest.raises(ValueError):
        header.header(Kind.STATIC, True, "why")
    assert header.header(Kind.PLAY, True)["incomplete_reason"] is None
    # A checkout: git describe's answer (a short hash at least), not "unknown".
    assert header.revision() != "unknown"


@pytest.mark.parametrize("name", sorted(V1_KINDS))
def test_files_of_version_1_are_read_with_their_kind(name: str) -> None:
    data = read_result(V1 / name)
    assert data["kind"] == V1_KINDS[name] and data["schema_version"] == 1
    assert data["complete"] is True  # a version-1 puzzle file had no `complete`


def test_an_unknown_version_or_kind_is_refused_in_one_line(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    v1 = json.loads((V1 / "random__fen_1__all__0dbde11960.json").read_text())
    future = tmp_path / "future.json"
    future.write_text(json.dumps({**v1, "kind": "static", "schema_version": 99}))
    with pytest.raises(DataError, match=r"future.json: a static result of schema version 99; "
                                        r"this benchmark reads version 1, 2$"):
        read_result(future)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"kind": "chessboard", "schema_version": 2}))
    with pytest.raises(DataError, match="not a result file of this benchmark"):
        read_result(other)
    with pytest.raises(DataError, match="a play result, not static"):
        read_result(V1 / "play__stockfish_nodes_200__standard__6d0961a64b.json",
                    (Kind.STATIC,))
    status = benchmark.main(["compare", str(future), str(V1 / "random__fen_1__all__"
                                                             "0dbde11960.json")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1 and "schema version 99" in err


def test_the_leaderboard_site_and_compare_read_version_1_files(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(V1, results)
    assert benchmark.main(["leaderboard", "--results", str(results), "--puzzles",
                           str(PUZZLES_44K)]) == 0
    board = (results / "leaderboard.md").read_text()
    assert "stockfish:nodes=200" in board.split("## Game Elo")[1]  # the version-1 play run
    assert "| random | seed=0 | 3 |" in board  # the version-1 puzzle run
    assert "worldmodel run, 2 positions" in board
    assert "illegal only" not in board  # an old static file's score is never shown
    assert benchmark.main(["report", "--results", str(results), "--out",
                           str(tmp_path / "site"), "--puzzles", str(PUZZLES_44K)]) == 0
    assert len(list((tmp_path / "site" / "runs").glob("*.html"))) == 5
    assert benchmark.main(["compare", "random__fen_1", "stockfish_nodes_200__fen_1",
                           "--results", str(results)]) == 0
    written = read_result(next(results.glob("compare__random*__stockfish*.json")))
    assert written["kind"] == Kind.COMPARE and written["schema_version"] == 2
