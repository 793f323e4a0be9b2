"""What a run costs, and a budget that stops it: real HTTP on 127.0.0.1 against a scripted
server that reports usage (tokens, and OpenRouter's usage.cost where asked), and structured
answers by response_format with a fallback where a server refuses it."""

import json
from pathlib import Path

import chess
import pytest

import benchmark
from chess_eval.benchmark.model import cost
from tests.benchmark.chatserver import ChatServer, Response
from tests.conftest import ROOT

QUESTIONS = ROOT / "questions.csv"
PRICED = {"prompt_tokens": 1000, "completion_tokens": 100, "cost": 0.01}


def _first_legal(body: dict) -> Response:
    """A legal move for the FEN of the request, with a cost of 0.01."""
    fen = body["messages"][-1]["content"].split("(FEN): ")[1].split("\n")[0]
    move = sorted(m.uci() for m in chess.Board(fen).legal_moves)[0]
    return Response(f"Final answer: {move}", usage=PRICED)


def _result(out: Path, kind: str) -> dict:
    [path] = out.glob(f"{kind}__*.json")
    return json.loads(path.read_text())


def test_max_cost_stops_play_on_budget_and_the_same_command_resumes(
        tmp_path: Path, stockfish: str, caplog: pytest.LogCaptureFixture) -> None:
    preflight = Response("OK", usage=PRICED)
    with ChatServer(lambda fen, attempt: Response(), preflight=preflight,
                    on_body=_first_legal) as server:
        # Games of at most 10 of the model's moves, two at a time: the budget pays for the
        # preflight and the first two games, and runs out in the next two.
        argv = ["play", "--model", "m", "--base-url", server.base_url, "--max-games", "4",
                "--ply-cap", "20", "--out", str(tmp_path), "--stockfish", stockfish,
                "--max-cost", "0.25"]
        assert benchmark.main(argv) == 3
        first = _result(tmp_path, "play")
        assert first["stopped"].startswith("stopped on budget: --max-cost 0.25 spent")
        assert not first["complete"] and "stopped on budget" in caplog.text
        assert first["conditions"]["standard"]["games"] == 2
        assert first["conditions"]["standard"]["aborted"] == 2
        assert benchmark.main(argv) == 0  # the same command: the rest, what was bought cached
        done = _result(tmp_path, "play")
        prompts = [b["messages"][-1]["content"] for b in server.bodies if "FEN" in
                   b["messages"][-1]["content"]]
    assert done["complete"] and done["stopped"] is None
    assert done["conditions"]["standard"]["games"] == 4
    assert len(prompts) == len(set(prompts))  # no answer was bought twice
    usage = done["usage"]
    assert usage["cost_source"] == "provider" and usage["answers"] == len(prompts)
    # Every answer of the run (cached ones included) at 0.01.
    assert usage["cost"] == pytest.approx(0.01 * usage["answers"])
    assert usage["per_game"]["cost"] == pytest.approx(usage["cost"] / 4)
    report = next(tmp_path.glob("play__*.md")).read_text()
    assert f"{usage['cost']:.4f} (provider)" in report and "per game" in report


def test_max_cost_stops_a_static_run_and_a_rerun_completes_it(tmp_path: Path) -> None:
    preflight = Response("OK", usage=PRICED)
    with ChatServer(lambda fen, attempt: Response(), preflight=preflight,
                    on_body=_first_legal) as server:
        argv = ["--model", "m", "--base-url", server.base_url, "--questions", str(QUESTIONS),
                "--limit", "30", "--concurrency", "1", "--bootstrap", "50", "--out",
                str(tmp_path)]
        assert benchmark.main([*argv, "--max-cost", "0.1"]) == 3
        first = _result(tmp_path, "static")
        assert first["stopped"] and not first["complete"] and first["asked"] < 30
        assert benchmark.main(argv) == 0
        done = _result(tmp_path, "static")
        asked = sum(1 for b in server.bodies if "FEN" in b["messages"][-1]["content"])
    assert done["asked"] == 30 and done["stopped"] is None and asked == 30
    assert done["usage"]["cost"] == pytest.approx(0.3)


def test_a_provider_billing_above_price_raises_the_reservation_to_its_dearest_reply(
        tmp_path: Path) -> None:
    """--price far below what the provider bills (0.01 a reply): after the first reply a
    request reserves the dearest reply, so one request at a time never passes --max-cost
    (at the price alone each reservation is a millionth and a fourth reply would go out)."""
    preflight = Response("OK", usage=PRICED)
    with ChatServer(lambda fen, attempt: Response(), preflight=preflight,
                    on_body=_first_legal, price=0.01) as server:
        argv = ["--model", "m", "--base-url", server.base_url, "--questions", str(QUESTIONS),
                "--limit", "10", "--concurrency", "1", "--bootstrap", "50", "--price", "1,1",
                "--max-tokens", "1", "--out", str(tmp_path), "--max-cost", "0.035"]
        assert benchmark.main(argv) == 3
        assert server.billed == 3
    assert _result(tmp_path, "static")["usage"]["cost"] <= 0.035


def test_price_gives_the_cost_where_the_server_reports_only_tokens(tmp_path: Path) -> None:
    tokens = {"prompt_tokens": 2000, "completion_tokens": 300,
              "completion_tokens_details": {"reasoning_tokens": 200}}

    def reply(body: dict) -> Response:
        return Response(_first_legal(body).text, usage=tokens)
    with ChatServer(lambda fen, attempt: Response(), on_body=reply) as server:
        assert benchmark.main(["--model", "m", "--base-url", server.base_url, "--questions",
                               str(QUESTIONS), "--limit", "10", "--bootstrap", "50",
                               "--price", "3,15", "--out", str(tmp_path)]) == 0
    usage = _result(tmp_path, "static")["usage"]
    # 2,000 prompt tokens at 3 and 300 completion tokens at 15 per million, ten times.
    assert usage["cost"] == pytest.approx(10 * (2000 * 3 + 300 * 15) / 1e6)
    assert usage["cost_source"] == "price" and usage["reasoning_tokens"] == 2000
    assert usage["per_answer"]["tokens"] == 2300


def test_max_cost_without_a_known_cost_stops_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = Response("OK", usage={})
    with ChatServer(lambda fen, attempt: bare, preflight=bare) as server:
        status = benchmark.main(["--model", "m", "--base-url", server.base_url, "--questions",
                                 str(QUESTIONS), "--limit", "5", "--max-cost", "1", "--out",
                                 str(tmp_path)])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-cost needs each answer's cost" in err[0]


def test_price_and_cost_options_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        benchmark.main(["--model", "m", "--price", "3"])
    assert "expected IN,OUT" in capsys.readouterr().err
    assert cost.price_arg("0.15,0.6") == cost.Price(0.15, 0.6)


@pytest.mark.parametrize("supported", [True, False])
def test_json_answers_by_response_format_and_the_fallback_to_text(
        supported: bool, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def reply(body: dict) -> Response:
        if "response_format" in body and not supported:
            return Response(status=400, text="response_format is not supported")
        move = _first_legal(body).text.split()[-1]
        shaped = "response_format" in body
        return Response(json.dumps({"move": move}) if shaped else f"Final answer: {move}")
    with ChatServer(lambda fen, attempt: Response(), on_body=reply) as server:
        assert benchmark.main(["--model", "m", "--base-url", server.base_url, "--questions",
                               str(QUESTIONS), "--limit", "6", "--concurrency", "1",
                               "--bootstrap", "50", "--response-format", "json", "--out",
                               str(tmp_path)]) == 0
        formats = [b.get("response_format") for b in server.bodies
                   if "FEN" in b["messages"][-1]["content"]]
    result = _result(tmp_path, "static")
    assert result["settings"]["response_format"] == "json"
    assert result["legal_rate"] == 1.0
    found = {i["found_by"] for i in result["items"]}
    if supported:
        assert all(f and f["json_schema"]["name"] == "move" for f in formats)
        assert found == {"json"}
    else:  # refused once, then asked as text from there on, with a logged note
        assert formats[0] is not None and formats[1:] == [None] * 6
        assert "refused response_format" in caplog.text and found == {"final"}


@pytest.mark.parametrize(("usage", "said"), [
    ({"tokens": 0, "requests": 3, "cost": None}, "the server reported neither a cost nor any"),
    ({"tokens": 120, "requests": 3, "cost": None}, "give --price IN,OUT"),
    ({"tokens": 120, "requests": 3, "cost": 0.5, "cost_source": "reported"}, "0.5000 (reported)")])
def test_the_cost_line_asks_for_a_price_only_when_there_are_tokens_to_price(
        usage: dict[str, object], said: str) -> None:
    line = cost.text(usage)
    assert said in line
    assert ("--price" in line) == (usage["tokens"] != 0 and usage["cost"] is None)


@pytest.mark.parametrize("baseline", ["random", "stockfish:nodes=1"])
def test_a_baselines_answers_cost_exactly_nothing(baseline: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A baseline (random, an engine) buys no request: its result's cost is 0, not unknown,
    and its summary says so, on the first run and on a rerun from the cache alike."""
    argv = ["--model", baseline, "--questions", str(ROOT / "questions.csv"), "--limit", "4",
            "--out", str(tmp_path)]
    for _ in range(2):
        assert benchmark.main(argv) == 0
        out = capsys.readouterr().out
        assert "cost $0 (no requests bought)" in out and "cost unknown" not in out, out
        [result] = tmp_path.glob("static__*.json")
        usage = json.loads(result.read_text())["usage"]
        assert (usage["requests"], usage["cost"], usage["cost_source"]) == (
            0, 0.0, "none bought")
