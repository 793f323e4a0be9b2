"""benchmark.py against a scripted OpenAI-compatible server on 127.0.0.1."""

import csv
import json
from pathlib import Path

import chess
import pytest

import benchmark
from chess_eval.exits import Exit
from tests.benchmark.chatserver import PREFLIGHT, ChatServer, Response

SECRET = "sk-test-SECRET-4242"
KINDS = ("uci", "prose", "san", "format", "ambiguous", "state", "rule", "429", "500",
         "timeout", "malformed")
INFRA_KINDS = {"500", "timeout", "malformed"}


def _ambiguous(board: chess.Board) -> str | None:
    seen: dict[tuple[int, int], list[chess.Move]] = {}
    for move in board.legal_moves:
        piece = board.piece_type_at(move.from_square)
        if piece != chess.PAWN:
            seen.setdefault((piece, move.to_square), []).append(move)
    for (piece, to), moves in sorted(seen.items()):
        if len(moves) > 1:
            return chess.piece_symbol(piece).upper() + chess.square_name(to)
    return None


def _illegal_from_empty(board: chess.Board) -> str:
    empty = next(sq for sq in chess.SQUARES if board.piece_at(sq) is None)
    return chess.square_name(empty) + chess.square_name((empty + 8) % 64)


def _king_leap(board: chess.Board) -> str:
    king = board.king(board.turn)
    far = next(sq for sq in chess.SQUARES if chess.square_distance(king, sq) == 3
               and board.color_at(sq) != board.turn)
    return chess.square_name(king) + chess.square_name(far)


def plan(fen: str, kind: str) -> tuple[str, str]:
    """The scripted kind actually used for a position, and the expected category."""
    board = chess.Board(fen)
    if kind == "ambiguous" and _ambiguous(board) is None:
        kind = "uci"
    expected = {"format": "format", "ambiguous": "ambiguous", "state": "state",
                "rule": "rule"}.get(kind, "infra" if kind in INFRA_KINDS else "legal")
    return kind, expected


def script_for(kinds: dict[str, str]):
    def script(fen: str, attempt: int) -> Response:
        board = chess.Board(fen)
        first = sorted(board.legal_moves, key=lambda m: m.uci())[0]
        kind = kinds[fen]
        if kind == "uci":
            return Response(first.uci())
        if kind == "prose":
            return Response(f"Candidate moves: {board.san(first)} and others. The last one "
                            f"I looked at was Qxh7 but no.\nFinal answer: {board.san(first)}")
        if kind == "san":
            return Response(f"**{board.san(first)}**")
        if kind == "format":
            return Response("I would rather not say.")
        if kind == "ambiguous":
            return Response(f"Final answer: {_ambiguous(board)}")
        if kind == "state":
            return Response(_illegal_from_empty(board))
        if kind == "rule":
            return Response(_king_leap(board))
        if kind == "429":
            if attempt == 0:
                return Response(status=429, headers={"Retry-After": "0"})
            return Response(first.uci())
        if kind == "500":
            return Response(status=500)
        if kind == "timeout":
            return Response(hang=True)
        return Response(raw=b'{"choices": [ this is not json')
    return script


def _questions(build: Path) -> list[dict[str, str]]:
    with open(build / "questions.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def _argv(server: ChatServer, build: Path, out: Path, *extra: str) -> list[str]:
    return ["--model", "test/scripted", "--base-url", server.base_url, "--questions",
            str(build / "questions.csv"), "--out", str(out), "--retries", "1",
            "--retry-wait", "0.01", "--timeout", "0.5", "--concurrency", "4",
            "--bootstrap", "200", "--breaker", "1000", *extra]


@pytest.fixture()
def scripted(small_build: Path) -> tuple[dict[str, str], dict[str, str]]:
    kinds, expected = {}, {}
    for i, row in enumerate(_questions(small_build)):
        kind, category = plan(row["prompt"], KINDS[i % len(KINDS)])
        kinds[row["prompt"]] = kind
        expected[row["id"]] = category
    return kinds, expected


def test_parsing_taxonomy_retries_and_infra(small_build: Path, tmp_path: Path, scripted,
                                            monkeypatch: pytest.MonkeyPatch, capsys,
                                            caplog) -> None:
    kinds, expected = scripted
    monkeypatch.setenv("MY_KEY", SECRET)
    with ChatServer(script_for(kinds)) as server:
        # Some questions end as infra: the result is written, marked incomplete, exit 3.
        argv = _argv(server, small_build, tmp_path, "--api-key-env", "MY_KEY")
        assert benchmark.main(argv) == Exit.INCOMPLETE
        assert set(server.auth) == {f"Bearer {SECRET}"}
        assert all(b["temperature"] == 0 and b["model"] == "test/scripted"
                   for b in server.bodies)
    result = json.loads(next(tmp_path.glob("*.json")).read_text())
    got = {item["id"]: item["category"] for item in result["items"]}
    assert got == expected
    n_infra = sum(c == "infra" for c in expected.values())
    assert result["infra"] == n_infra > 0 and result["complete"] is False
    assert result["n"] == len(expected) - n_infra
    for category in ("format", "ambiguous", "state", "rule"):
        assert result["illegal"][category] == sum(c == category for c in expected.values())
    # Infrastructure failures are not scored: the legal rate counts answered questions only.
    legal = sum(c == "legal" for c in expected.values())
    assert result["legal_rate"] == pytest.approx(legal / result["n"], abs=1e-4)
    # The API key appears nowhere: results, report, traces, terminal, logs.
    printed = capsys.readouterr()
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".md", ".jsonl"):
            assert SECRET not in path.read_text()
    assert SECRET not in printed.out + printed.err + caplog.text
    traces = [json.loads(line) for line in
              next((tmp_path / "traces").glob("*.jsonl")).read_text().splitlines()]
    assert len(traces) == len(expected)
    legal_trace = next(t for t in traces if t["category"] == "legal")
    assert legal_trace["reasoning_tokens"] == 3 and legal_trace["latency_s"] > 0
    assert legal_trace["prompt"].startswith("Chess position (FEN)")


def test_resume_asks_only_what_failed_and_a_cached_rerun_asks_nothing(
        small_build: Path, tmp_path: Path, scripted) -> None:
    kinds, expected = scripted
    failed = {row["prompt"] for row in _questions(small_build)
              if expected[row["id"]] == "infra"}
    healthy = dict.fromkeys(kinds, "uci")
    # One endpoint throughout (answers are keyed by the endpoint that gave them): it fails
    # some questions, then recovers.
    with ChatServer(script_for(kinds)) as server:
        assert benchmark.main(_argv(server, small_build, tmp_path)) == Exit.INCOMPLETE
        server.script, server.calls = script_for(healthy), {}
        assert benchmark.main(_argv(server, small_build, tmp_path, "--resume")) == 0
        assert set(server.calls) == failed | {PREFLIGHT}
        result = json.loads(next(tmp_path.glob("*.json")).read_text())
        assert result["infra"] == 0 and result["complete"] is True
        server.calls = {}
        assert benchmark.main(_argv(server, small_build, tmp_path)) == 0
        assert server.calls == {}


def test_bad_key_is_one_clear_error(small_build: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("MY_KEY", SECRET)
    with ChatServer(lambda fen, attempt: Response(status=401, raw=b'{"error": "bad key"}'),
                    preflight=None) as server:
        code = benchmark.main(_argv(server, small_build, tmp_path, "--api-key-env", "MY_KEY"))
        assert code == 2
        assert server.calls == {PREFLIGHT: 1}
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "the key from MY_KEY was refused" in err and SECRET not in err
    assert not list(tmp_path.glob("*.json"))


def test_filters_limit_and_split(small_build: Path, tmp_path: Path) -> None:
    argv = ["--model", "random", "--questions", str(small_build / "questions.csv"),
            "--out", str(tmp_path), "--filter", "source=puzzle", "--bootstrap", "100"]
    assert benchmark.main(argv) == 0
    result = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert {i["source"] for i in result["items"]} == {"puzzle"}
    assert benchmark.main(["--model", "random", "--questions",
                           str(small_build / "questions.csv"), "--out", str(tmp_path / "l"),
                           "--limit", "5", "--split", "public"]) == 0
    limited = json.loads(next((tmp_path / "l").glob("*.json")).read_text())
    assert limited["n"] == 5
    private = {r["id"] for r in _questions(small_build) if r["private"] == "true"}
    assert not {i["id"] for i in limited["items"]} & private


def test_a_bare_name_not_a_baseline_is_refused_before_any_request(
        small_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A baseline misspelled without options (`randm`) is refused in one line, exit 2, with
    the baselines and the nearest one, before a key is looked for or a request sent; a bare
    name at an endpoint --base-url names (a local server's) is still a model."""
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    base = ["--questions", str(small_build / "questions.csv"), "--out", str(tmp_path),
            "--limit", "5"]
    for command in ([*base], ["run", *base], ["play", "--out", str(tmp_path)]):
        assert benchmark.main([*command, "--model", "randm"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert "'randm' is not a known baseline (did you mean 'random'?)" in err, err
        assert "random, stockfish, mix" in err and "API key" not in err, err
    assert not list(tmp_path.glob("*.json"))
    with ChatServer(script_for({r["prompt"]: "uci" for r in _questions(small_build)})) as server:
        assert benchmark.main(["--model", "scripted", "--base-url", server.base_url,
                               *base]) == 0
        assert sum(server.calls.values()) > 1  # the preflight and the questions were asked


def test_bad_options_are_clear_errors(small_build: Path, tmp_path: Path, capsys) -> None:
    base = ["--questions", str(small_build / "questions.csv"), "--out", str(tmp_path)]
    assert benchmark.main(["--model", "stockfish:elo=abc", *base]) == 2
    assert "bad option" in capsys.readouterr().err
    # A baseline misspelled is never sent to a provider as a model's name (no key asked for).
    for command in ([*base], ["play", "--out", str(tmp_path)],
                    ["puzzles", "--out", str(tmp_path)]):
        assert benchmark.main([*command, "--model", "stockfsh:nodes=1000"]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "did you mean 'stockfish'" in err, err
        assert "API key" not in err
    assert benchmark.main(["--model", "random", "--filter", "nope", *base]) == 2
    assert "bad --filter" in capsys.readouterr().err
    assert benchmark.main(["--model", "random", "--questions", str(tmp_path / "none.csv"),
                           "--out", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err
