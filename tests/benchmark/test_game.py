"""Game starts, the rules' ends, adjudication, cp losses and PGN, on real positions."""

import io

import chess
import chess.pgn
import pytest

from chess_eval.benchmark.arena import game
from chess_eval.benchmark.arena.game import GameRecord
from chess_eval.benchmark.core import turns
from chess_eval.benchmark.core.data import BOOK
from chess_eval.benchmark.core.turns import ENGINE_TEMPLATE, Condition, Side, Start, take_turn
from chess_eval.benchmark.model.interface import ModelConfig
from chess_eval.benchmark.players import protocols as proto
from chess_eval.benchmark.players.player import ModelPlayer, StockfishPlayer
from chess_eval.benchmark.players.protocols import VERSIONS, GameProtocol
from chess_eval.errors import DataError
from chess_eval.kvstore import JsonStore, MemoryStore
from tests.benchmark.chatserver import ChatServer, Response


def test_chess960_starts_are_seeded_valid_and_never_the_standard_one() -> None:
    starts = [game.chess960_start(7, i) for i in range(400)]
    assert all(s.label != "960#518" for s in starts)
    assert len({s.label for s in starts}) > 300
    assert game.chess960_start(7, 3) == starts[3]
    assert game.chess960_start(8, 3) != starts[3] or game.chess960_start(8, 4) != starts[4]
    for s in starts[:50]:
        board = s.board()
        assert board.chess960 and board.is_valid() and board.fen() != chess.STARTING_FEN
        assert board.legal_moves.count() == 20 or board.legal_moves.count() >= 18


def test_a_mid_game_start_keeps_the_moves_that_led_to_it() -> None:
    history = ("e4", "e5", "Nf3", "Nc6")
    board = chess.Board()
    for san in history:
        board.push_san(san)
    start = Start("midgame", "q1", board.fen(), history)
    assert start.board().move_stack == board.move_stack
    # A history that does not lead to the FEN is ignored, not trusted.
    assert Start("midgame", "q2", board.fen(), ("d4",)).board().move_stack == []


def test_rule_ends_on_real_positions() -> None:
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    assert game.rule_end(mated) == ("0-1", "checkmate")
    stalemate = chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    assert game.rule_end(stalemate) == ("1/2-1/2", "stalemate")
    bare = chess.Board("8/8/4k3/8/8/3K4/8/8 w - - 0 1")
    assert game.rule_end(bare) == ("1/2-1/2", "insufficient material")
    board = chess.Board()
    for san in ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"]:
        board.push_san(san)
    assert game.rule_end(board) is None
    board.push_san("Ng8")  # the start position for the third time: claimed at once
    assert game.rule_end(board) == ("1/2-1/2", "threefold repetition")


def test_adjudication_needs_a_held_eval() -> None:
    held = [0, 300] + [1200] * game.DECISIVE_PLIES
    assert game.adjudicate(held, 40) == ("1-0", "adjudication: decisive")
    assert game.adjudicate(held[:-1] + [900], 40) is None
    assert game.adjudicate([-30000] * game.DECISIVE_PLIES, 40) == ("0-1", "adjudication: decisive")
    level = [0] * game.DEAD_DRAW_PLIES
    assert game.adjudicate(level, game.DEAD_DRAW_FROM) == ("1/2-1/2", "adjudication: dead draw")
    assert game.adjudicate(level, game.DEAD_DRAW_FROM - 1) is None


def _record() -> GameRecord:
    start = Start("standard", "standard", chess.STARTING_FEN)
    # e4 (eval 20 -> 30), e5 (30 -> 40: Black lost 10), Qh5 (40 -> -50: White lost 90),
    # Nc6 (-50 -> -1500: Black gained, loss 0).
    return GameRecord("k", "model", "rung", vars(start) | {"history": []},
                      moves=["e2e4", "e7e5", "d1h5", "b8c6"], sans=["e4", "e5", "Qh5", "Nc6"],
                      evals=[20, 30, 40, -50, -1500], result="0-1",
                      termination="forfeit: illegal moves", forfeit="3 illegal answers",
                      attempts=[{"ply": 2, "category": "state", "text": "Qd5", "answer": "Qd5"},
                                {"ply": 4, "category": "rule", "text": "Ke2", "answer": "Ke2"}])


def test_cp_losses_by_side() -> None:
    record = _record()
    assert game.cp_losses(record, white=True) == [0, 90]
    assert game.cp_losses(record, white=False) == [10, 0]


def test_pgn_has_players_rung_result_termination_and_illegal_tries() -> None:
    text = game.pgn(_record(), {"BlackElo": "1350", "Rung": "sf1350@1"})
    parsed = chess.pgn.read_game(io.StringIO(text))
    assert parsed is not None
    assert parsed.headers["White"] == "model" and parsed.headers["BlackElo"] == "1350"
    assert parsed.headers["Termination"] == "forfeit: illegal moves"
    assert parsed.headers["Result"] == "0-1"
    assert [m.uci() for m in parsed.mainline_moves()] == ["e2e4", "e7e5", "d1h5", "b8c6"]
    assert "illegal try 'Qd5': state" in text
    assert "forfeit: 3 illegal answers" in text and "'Ke2': rule" in text


def test_the_retry_prompt_says_what_was_wrong() -> None:
    board = chess.Board()
    start = game.standard_start()
    note = proto.feedback_line("Qh5", "Final answer: Qh5", "rule", "the queen is blocked")
    prompt = proto.game_prompt(board, [], start, legal=True, feedback=note)
    assert "'Qh5' was not accepted (rule: the queen is blocked)" in prompt
    assert "Legal moves: " in prompt and " Nf3 " in prompt
    assert "You play White" in prompt and chess.STARTING_FEN in prompt


def test_an_edited_game_prompt_is_asked_again(tmp_path, monkeypatch) -> None:
    """The move cache keys the prompt's text: the same turn is answered from the cache, but
    once the instruction's wording changes (same template version) the server is asked."""
    with ChatServer(lambda fen, attempt: Response("Final answer: e4")) as server:
        config = ModelConfig(base_url=server.base_url, model="m", retries=0, timeout_s=5)
        side = turns.Side(ModelPlayer(config), VERSIONS[GameProtocol.FEN])
        cache = JsonStore(tmp_path / "moves.db", "answers")

        def turn() -> list[turns.Attempt]:
            move, attempts = turns.take_turn(side, chess.Board(), [], game.standard_start(),
                                             "game-1", cache)
            assert move == chess.Move.from_uci("e2e4")
            return attempts
        try:
            assert [a.cached for a in turn()] == [False]
            assert [a.cached for a in turn()] == [True]
            monkeypatch.setattr(proto, "GAME_INSTRUCTION", "Answer as: Final answer: <move>")
            assert [a.cached for a in turn()] == [False]
        finally:
            cache.close()
        assert server.calls[chess.STARTING_FEN] == 2


# A real position of questions.csv (g-65e765483f842947), Black to move and better by about
# 370 cp; from the bare position the engine plays Bg6-h5.
REPEAT_FEN = "r3kb1r/ppp1p1pp/3qpnb1/3p4/8/1P1BPQ2/P1P2PPP/RNBR2K1 b kq - 0 11"


def test_an_engine_rung_sees_the_game_and_avoids_a_threefold_repetition(
        stockfish: str) -> None:
    """Given a bare position the rung plays Bh5; given the game, where Bh5 would repeat the
    position a third time (a draw by claim), it plays another move."""
    player = StockfishPlayer(stockfish, nodes=20_000)
    bare = chess.Board(REPEAT_FEN)
    bh5, qf5 = bare.parse_san("Bh5"), chess.Move.from_uci("f3f5")
    back, qf3 = chess.Move.from_uci("h5g6"), chess.Move.from_uci("f5f3")
    # The game: from the position after Bh5, Qf5 Bg6 Qf3 Bh5 Qf5 Bg6 Qf3 reaches the
    # position again, and the position after Bh5 has occurred twice.
    root = bare.copy()
    root.push(bh5)
    board = chess.Board(root.fen())
    for move in (qf5, back, qf3, bh5, qf5, back, qf3):
        board.push(move)
    assert board.epd() == bare.epd()  # the same position (the move counters differ)
    side = Side(player, ENGINE_TEMPLATE)
    start = Start(Condition.STANDARD, "standard", root.fen())
    without, _ = take_turn(side, bare, [], start, "bare", MemoryStore())
    with_game, _ = take_turn(side, board, ["?"] * 7, start, "game", MemoryStore())
    player.close()
    assert without == bh5
    board.push(bh5)
    assert board.can_claim_threefold_repetition()  # what the bare position did not show
    board.pop()
    assert with_game != bh5 and with_game in board.legal_moves


def test_distinct_games_counts_a_replayed_game_once(stockfish: str) -> None:
    """Two deterministic engines from one start play the same game twice (one distinct);
    from two book openings they play two."""
    from chess_eval.benchmark.arena.book import load_book
    from chess_eval.benchmark.arena.match import Played
    from chess_eval.benchmark.games.report import distinct_games
    from chess_eval.engine import Engine, EngineSettings
    white = Side(StockfishPlayer(stockfish, nodes=300), ENGINE_TEMPLATE)
    black = Side(StockfishPlayer(stockfish, nodes=600), ENGINE_TEMPLATE)
    book = [o.start() for o in load_book(BOOK)[:2]]
    counts = []
    with Engine(EngineSettings(stockfish)) as judge:
        for starts in ([game.standard_start()] * 2, book):
            games = [Played(f"g{i}", game.play_game(
                f"g{i}", white, black, start, game.FullJudge(judge), MemoryStore(),
                ply_cap=16), index=i, rung=0) for i, start in enumerate(starts)]
            counts.append(distinct_games(games))
    white.player.close()
    black.player.close()
    assert counts == [1, 2]


def _judged(stockfish: str, judge_path: str, screened: bool, key: str,
            rule: game.Adjudication = game.RULE) -> tuple:
    """One engine-only game from a book opening (mix rungs, so it is decided by the judge),
    judged in full or screened by `rule`; (result, termination, plies, full searches, the
    judge's node budgets)."""
    from chess_eval.benchmark.arena.book import load_book
    from chess_eval.benchmark.players.player import MixPlayer
    from chess_eval.engine import Engine, EngineSettings
    start = load_book(BOOK)[3].start()
    white = Side(MixPlayer(stockfish, 30, 1000, seed=1), ENGINE_TEMPLATE)
    black = Side(MixPlayer(stockfish, 70, 1000, seed=1), ENGINE_TEMPLATE)
    made = []
    try:
        with Engine(EngineSettings(judge_path)) as engine:
            def work(e: Engine) -> GameRecord:
                made.append(game.ScreenedJudge(e, rule) if screened else game.FullJudge(e))
                return game.play_game(key, white, black, start, made[-1], MemoryStore())
            record = engine.run(start.board(), work)
            nodes = engine.nodes_budget
    finally:
        white.player.close()
        black.player.close()
    return record.result, record.termination, len(record.moves), made[-1].searches, nodes


def test_the_screened_judge_ends_games_as_the_full_judge_does(stockfish: str) -> None:
    """Real games decided by adjudication: the same result, termination and ply under both
    judges, with fewer full searches (bench/judge_replay.py replays 300 committed games)."""
    for key in ("screen-a", "screen-b"):
        full = _judged(stockfish, stockfish, False, key)
        screened = _judged(stockfish, stockfish, True, key)
        assert full[1] == "adjudication: decisive", full
        assert screened[:3] == full[:3]
        assert screened[3] < full[3]  # the full searches it spared (17 of 91 a game in the bench)


def test_rule_2_ends_these_games_as_rule_1_does_on_a_third_of_the_judges_nodes(
        stockfish: str) -> None:
    """The cheaper rule (5,000 nodes a confirmation, not 20,000) on the same real games:
    the same result, termination and ply (bench/judge_replay.py --adjudication 2 counts the
    results it changes over committed games), for far fewer of the judge's nodes."""
    for key in ("screen-a", "screen-b"):
        one = _judged(stockfish, stockfish, True, key, game.RULES[1])
        two = _judged(stockfish, stockfish, True, key, game.RULES[2])
        assert two[1] == "adjudication: decisive" and two[:3] == one[:3]
        assert two[4] < one[4] / 2  # looks (1,000 nodes) stay; confirmations are a quarter


def test_a_rule_version_nobody_knows_is_one_line() -> None:
    with pytest.raises(DataError, match="unknown adjudication rule version 7"):
        game.rule_of(7)


def test_a_screened_judge_that_dies_has_its_game_redone_the_same(
        stockfish: str, tmp_path, monkeypatch) -> None:
    """The judge's engine dies at its 10th search: the game is redone from its start on a
    fresh engine (the looks keep the hash within a game) and ends as an undisturbed one."""
    from tests.conftest import fault_engine
    undisturbed = _judged(stockfish, stockfish, True, "screen-a")
    dying = fault_engine(tmp_path, stockfish, monkeypatch, "die", "10")
    redone = _judged(stockfish, dying, True, "screen-a")
    assert int((tmp_path / "go-count").read_text()) > 10  # it died at 10, and went on
    assert redone[:3] == undisturbed[:3]


def test_each_run_has_its_own_door_for_requests(tmp_path) -> None:
    """A run that stops closes its own door only: another run in the same process (another
    model of one eval, another task) still asks; a game's own door (a sample's limit) stops
    that game alone, and its requests still count in its run's."""
    from chess_eval.benchmark.model.inflight import InFlight

    with ChatServer(lambda fen, attempt: Response("Final answer: e4")) as server:
        config = ModelConfig(base_url=server.base_url, model="m", retries=0, timeout_s=5)
        first, second = InFlight(), InFlight()
        game_door = second.child()
        sides = [turns.Side(ModelPlayer(config), VERSIONS[GameProtocol.FEN], gate=g)
                 for g in (first, second, game_door)]
        cache = MemoryStore()

        def turn(side: turns.Side, key: str) -> chess.Move | None:
            return turns.take_turn(side, chess.Board(), [], game.standard_start(), key,
                                   cache)[0]
        first.drain()  # the first run stopped (Ctrl-C, a failure)
        with pytest.raises(turns.GameAborted, match="stopping"):
            turn(sides[0], "a")
        assert turn(sides[1], "b") == chess.Move.from_uci("e2e4")
        assert turn(sides[2], "c") == chess.Move.from_uci("e2e4")
        game_door.close()  # that game's sample hit its limit
        with pytest.raises(turns.GameAborted, match="stopping"):
            turn(sides[2], "d")
        assert turn(sides[1], "e") == chess.Move.from_uci("e2e4")
        second.drain()
        with pytest.raises(turns.GameAborted):
            turn(turns.Side(ModelPlayer(config), VERSIONS[GameProtocol.FEN],
                            gate=second.child()), "f")
    assert server.calls[chess.STARTING_FEN] == 3
