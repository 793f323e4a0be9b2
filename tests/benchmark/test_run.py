"""A run owns its claims, stores, requests in flight and books: real HTTP on 127.0.0.1 (a
provider that bills each reply it completes), real SQLite, real file locks."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import chess
import pytest

from chess_eval.benchmark.core.run import Breaker, CircuitOpen, Run, finish
from chess_eval.benchmark.match.result import MatchResult
from chess_eval.benchmark.model.cost import Budget
from chess_eval.benchmark.model.inflight import Stopping
from chess_eval.benchmark.model.interface import ModelConfig
from chess_eval.benchmark.model.metered import bought
from chess_eval.benchmark.players.player import budget_of, make_player
from chess_eval.benchmark.question.questions import load_questions
from chess_eval.claim import ClaimHeld
from chess_eval.exits import Exit
from chess_eval.kvstore import JsonStore
from tests.benchmark.chatserver import FEN_RE, ChatServer, Response
from tests.conftest import ROOT

PRICED = {"prompt_tokens": 100, "completion_tokens": 10, "cost": 0.01}


def _legal(body: dict) -> Response:
    fen = FEN_RE.search(json.dumps(body)).group(1)
    return Response(f"Final answer: {min(m.uci() for m in chess.Board(fen).legal_moves)}",
                    usage=PRICED)


def _until(condition: threading.Event | None, check: object = None) -> None:
    """Wait for a condition (never a sleep of fixed length), failing after a generous bound."""
    deadline = time.monotonic() + 120
    while not (condition.is_set() if condition is not None else check()):  # type: ignore
        assert time.monotonic() < deadline, "the condition never came"
        time.sleep(0.01)


def _model(server: ChatServer):  # noqa: ANN202 - a model player with a budget
    chat = ModelConfig(server.base_url, "m", max_cost=10.0)
    return make_player("m", chat, None, 0, 1, Budget(10.0, None))


def test_a_stopped_run_lets_the_reply_in_flight_land_then_closes_releases_and_books(
        tmp_path: Path) -> None:
    """Ctrl-C while a request is out: its reply is stored before the store closes, no request
    goes out after it, the claim is released, and the books say what was bought, once."""
    question = load_questions(ROOT / "questions.csv")[0]
    asked, store = threading.Event(), tmp_path / "cache.db"
    holder: list[Run] = []

    def answer(body: dict) -> Response:
        asked.set()
        _until(None, lambda: holder[0].gate.closed)  # answered only once the run stopped
        return _legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=answer, price=0.01) as server:
        player = _model(server)
        landed: list[object] = []
        with pytest.raises(KeyboardInterrupt), \
                Run(tmp_path, [("run", "", budget_of(player))], grace=120) as run:
            holder.append(run)
            run.claim(store, "the identity", "the test's run")
            cache = run.store(store, "answers")

            def ask() -> None:
                with run.gate.request():
                    landed.append(bought(cache, "k", lambda: player.answer(
                        question, f"Position (FEN): {question.fen}\n")))
            worker = threading.Thread(target=ask)
            worker.start()
            _until(asked)
            raise KeyboardInterrupt
        worker.join(timeout=120)
        assert landed and server.billed == 1
        with pytest.raises(Stopping), run.gate.request():  # the door stays closed
            pass
    kept = JsonStore(store, "answers")
    assert kept.get("k") is not None  # stored before the store closed
    kept.close()
    [line] = (tmp_path / "books" / "run.jsonl").read_text().splitlines()
    books = json.loads(line)
    assert books["requests_sent"] == 1 and books["replies_completed"] == 1
    assert books["cost"] == pytest.approx(0.01)
    with Run() as again:  # the claim ended with the run
        again.claim(store, "the identity", "the test's run")


def test_a_run_claims_its_store_alone_and_runs_of_a_process_keep_their_own_gates(
        tmp_path: Path) -> None:
    """A second run on the same store and identity is refused in one line; another run in the
    same process asks on after the first one stopped (no gate is shared)."""
    question = load_questions(ROOT / "questions.csv")[0]
    store = tmp_path / "cache.db"
    with ChatServer(lambda fen, n: Response(), on_body=_legal, price=0.01) as server:
        player = _model(server)
        with Run() as first, Run() as second:
            first.claim(store, "one", "the first run")
            with pytest.raises(ClaimHeld, match="the first run is already running on"):
                second.claim(store, "one", "the first run")
            second.claim(store, "two", "another run")  # another identity: side by side
            first.gate.close()  # the first run stops (its user's Ctrl-C)
            with pytest.raises(Stopping), first.gate.request():
                pass
            with second.gate.request():
                reply = player.answer(question, f"Position (FEN): {question.fen}\n")
        assert reply.text.startswith("Final answer")
        assert server.billed == 1
    assert not (tmp_path / "books").exists()  # runs with no folder keep no books


def test_a_run_stopped_while_its_questions_are_asked_ends_them_without_asking_the_rest(
        tmp_path: Path) -> None:
    """The run stops while its first requests are out (an Inspect limit, Ctrl-C elsewhere):
    those replies land and are kept, the questions not yet asked come back unasked, and the
    asking ends (before, a worker that found the door closed left its question unanswered
    and the run waited for it for ever)."""
    from chess_eval.benchmark.core.prompts import TEMPLATES
    from chess_eval.benchmark.core.runner import ask_all

    questions = load_questions(ROOT / "questions.csv")[:8]
    holder: list[Run] = []

    def answer(body: dict) -> Response:
        holder[0].gate.close()  # the run stops while its first requests are out
        return _legal(body)
    with ChatServer(lambda fen, n: Response(), on_body=answer, price=0.01) as server:
        player = _model(server)
        outcomes: list[object] = []
        with Run() as run:
            holder.append(run)
            run.claim(tmp_path / "cache.db", "questions", "the test's run")
            cache = run.store(tmp_path / "cache.db", "answers")
            asking = threading.Thread(target=lambda: outcomes.extend(ask_all(
                player, "fen@1", TEMPLATES["fen@1"], questions, cache, 2,
                gate=run.gate)), daemon=True)
            asking.start()
            asking.join(timeout=300)
            assert not asking.is_alive(), "the asking never ended"
        asked = [o for o in outcomes if o.reply is not None]  # type: ignore[attr-defined]
        bought = sum(n for prompt, n in server.bought.items() if "FEN" in prompt)
        assert len(outcomes) == 8 and 1 <= len(asked) <= 2 and bought == len(asked)
        assert all(o.unasked for o in outcomes if o.reply is None)  # type: ignore[attr-defined]
    kept = JsonStore(tmp_path / "cache.db", "answers")
    assert len(kept.values()) == len(asked)  # each reply bought is kept
    kept.close()


def _ask_once(run: Run, player: object, store: Path) -> None:
    """One question asked and bought through the run (its claim, its store, its gate)."""
    question = load_questions(ROOT / "questions.csv")[0]
    run.claim(store, "the identity", "the test's run")
    cache = run.store(store, "answers")
    with run.gate.request():
        bought(cache, "k", lambda: player.answer(  # type: ignore[attr-defined]
            question, f"Position (FEN): {question.fen}\n"))


@pytest.mark.parametrize("way_out", ["clean", "error", "sigint"])
def test_a_run_writes_its_books_itself_on_every_way_out(way_out: str, tmp_path: Path) -> None:
    """However the `with` block is left once a reply was bought (a result, a failure, a
    real SIGINT delivered to this process), the books are written, once, with no call to
    remember; the claim is released and what the run owns is closed."""
    with ChatServer(lambda fen, n: Response(), on_body=_legal, price=0.01) as server:
        player = _model(server)
        closed: list[bool] = []

        class Held:
            def close(self) -> None:
                closed.append(True)
        expected = {"clean": None, "error": RuntimeError, "sigint": KeyboardInterrupt}[way_out]
        run = Run(tmp_path, [("run", "", budget_of(player))])
        try:
            with run:
                run.owns(Held())
                _ask_once(run, player, tmp_path / "cache.db")
                if way_out == "error":
                    raise RuntimeError("a failure after a reply was bought")
                if way_out == "sigint":
                    signal.raise_signal(signal.SIGINT)  # Python's own handler: Ctrl-C
        except BaseException as exc:  # noqa: BLE001 - checked against the way out
            assert expected is not None and isinstance(exc, expected)
        else:
            assert expected is None
        assert server.billed == 1
    assert closed == [True]
    [ledger] = run.books
    assert ledger.path == tmp_path / "books" / "run.jsonl"
    [line] = ledger.path.read_text().splitlines()
    assert json.loads(line)["replies_completed"] == 1
    assert "1 replies completed" in ledger.line
    with Run() as again:  # the claim ended with the run
        again.claim(tmp_path / "cache.db", "the identity", "the test's run")


def test_a_run_that_failed_before_it_asked_leaves_no_books(tmp_path: Path) -> None:
    """A run refused before its first request (its claim held by another run) writes no
    books: nothing was bought; a clean run that bought nothing still says so, once."""
    with ChatServer(lambda fen, n: Response(), on_body=_legal, price=0.01) as server:
        player = _model(server)
        with Run() as holder:
            holder.claim(tmp_path / "cache.db", "the identity", "the first run")
            with pytest.raises(ClaimHeld), Run(tmp_path, [("run", "", budget_of(player))]) as run:
                run.claim(tmp_path / "cache.db", "the identity", "the first run")
        assert run.books == [] and not (tmp_path / "books").exists()
        with Run(tmp_path, [("run", "", budget_of(player))]) as idle:
            pass
        assert server.billed == 0
    [ledger] = idle.books
    assert json.loads(ledger.path.read_text())["requests_sent"] == 0  # type: ignore[union-attr]


def test_the_breaker_opens_at_its_limit_of_failures_in_a_row() -> None:
    """Failures below the limit, broken by a success, never open it; the limit in a row
    does, in one line naming the last failure."""
    breaker = Breaker(3, "games", "were aborted")
    for _ in range(5):
        breaker.fail("a")
        breaker.fail("b")
        breaker.passed()
    breaker.fail("c")
    breaker.fail("d")
    with pytest.raises(CircuitOpen, match=r"^stopped after 3 games in a row were aborted for "
                       r"infrastructure reasons \(last: e\); the games finished so far are kept$"):
        breaker.fail("e")


@pytest.mark.parametrize(("aborted", "stopped", "status"), [
    (0, None, Exit.OK), (1, None, Exit.INCOMPLETE), (0, "stopped on budget", Exit.INCOMPLETE)])
def test_every_mode_ends_by_one_tail(aborted: int, stopped: str | None, status: Exit,
                                     tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     caplog: pytest.LogCaptureFixture) -> None:
    """`finish`, once the run is left: its books' line, every file written (the books last)
    and the status: a match with an aborted game or stopped early is incomplete (3), saying
    why and how to complete it; a complete one is 0."""
    result = MatchResult(first={"model": "a"}, second={"model": "b"}, settings={}, games=2,
                         aborted=aborted, complete=not aborted and stopped is None,
                         stopped=stopped, pairs=1, pentanomial=[0, 0, 1, 0, 0],
                         wdl=[0, 2, 0], score=None, elo_difference=None)
    with Run(tmp_path, [("match__a", "a", Budget(10.0, None))]) as run:
        written = [tmp_path / "match__a.json"]
    assert finish(run, result, written) == status
    out = capsys.readouterr().out.splitlines()
    assert out == ["  a: this invocation: 0 requests sent, 0 replies completed (0 unreadable), "
                   "0 given up on (possibly billed), 0.0000 charged",
                   f"wrote {tmp_path / 'match__a.json'}, {tmp_path / 'books' / 'match__a.jsonl'}"]
    if status == Exit.INCOMPLETE:
        assert ("1 games were aborted" if aborted else "the same command resumes the match") \
            in caplog.text
