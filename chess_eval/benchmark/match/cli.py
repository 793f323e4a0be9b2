"""`benchmark.py match`: two players play each other in colour-reversed pairs."""

from __future__ import annotations

import argparse
import copy
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chess_eval.benchmark.arena import book
from chess_eval.benchmark.arena.game import PLY_CAP, pgn, side_usage
from chess_eval.benchmark.arena.ladder import reference_nu
from chess_eval.benchmark.arena.ladder_check import (
    check_of,
    elo_block,
    elo_difference_text,
    find_play,
    ladder_lines,
)
from chess_eval.benchmark.core.cli import (
    add_breaker_arg,
    add_chat_args,
    add_model_arg,
    add_protocol_arg,
    model_config,
    model_label,
)
from chess_eval.benchmark.core.data import BOOK, data_path
from chess_eval.benchmark.core.header import Kind, file_name
from chess_eval.benchmark.core.results import run_name, slug
from chess_eval.benchmark.core.run import Run, finish
from chess_eval.benchmark.core.turns import ENGINE_TEMPLATE, RETRIES, Side, Start
from chess_eval.benchmark.match.result import MatchResult
from chess_eval.benchmark.match.run import BREAKER, MatchConfig, MatchSession, play_match
from chess_eval.benchmark.model.cost import Budget, PlayerBudget, Price
from chess_eval.benchmark.players.player import (
    Player,
    baseline_stockfish,
    budget_of,
    is_baseline,
    make_player,
)
from chess_eval.benchmark.players.protocols import CHAT_WINDOW, GameProtocol
from chess_eval.benchmark.players.protocols import template as protocol_template
from chess_eval.benchmark.stats.pairs import MAX_GAMES, TARGET, PairStats
from chess_eval.cli import add_stockfish_arg, non_negative_int, positive_float, positive_int
from chess_eval.engine import EngineSettings
from chess_eval.errors import ChessEvalError, ConfigError
from chess_eval.files import atomic_write, ensure_writable_dir, sha256_file

log = logging.getLogger(__name__)


def add_parser(commands: Any) -> None:
    """Options of a head-to-head match."""
    p = commands.add_parser(
        "match", help="two players play each other in colour-reversed pairs",
        description="Two players (models or baselines) play each other in colour-reversed "
        "pairs of games from the opening book, with play's adjudication rule and ply cap, "
        "until the Elo difference's 90% interval is within +-TARGET or MAX_GAMES are "
        "played. The score's interval comes from the pairs (pentanomial, as fishtest "
        "counts them). Writes a JSON and markdown result and a PGN of every game. Exit "
        "status: 0 complete, 2 error, 3 written but incomplete (a budget, or games aborted "
        "for infrastructure reasons: rerun to complete), 130 interrupted (rerun to resume).")
    add_model_arg(p, extra="; the first player")
    p.add_argument("--opponent", required=True, metavar="MODEL",
                   help="the second player, named as --model is (a model or a baseline)")
    add_chat_args(p)
    add_protocol_arg(p, tuple(GameProtocol))
    add_opponent_args(p)
    p.add_argument("--legal-moves", action="store_true",
                   help="list the legal moves in every prompt (refused where a model's "
                   "protocol is tools or pgn, which have none)")
    p.add_argument("--illegal-retries", type=non_negative_int, default=RETRIES,
                   help=f"failed answers followed up before a forfeit (default {RETRIES})")
    p.add_argument("--ply-cap", type=positive_int, default=PLY_CAP,
                   help=f"a game this many plies long is drawn (default {PLY_CAP})")
    p.add_argument("--target", type=positive_float, default=TARGET,
                   help="stop when the Elo difference's 90%% interval is within +-TARGET "
                   f"(default {TARGET:.0f})")
    p.add_argument("--max-games", type=positive_int, default=MAX_GAMES,
                   help=f"stop after this many games (default {MAX_GAMES}; games come in "
                   "pairs, so an odd number is rounded up)")
    add_breaker_arg(p, "games", BREAKER)
    p.add_argument("--concurrency", type=positive_int, default=1,
                   help="pairs played at once (default 1)")
    p.add_argument("--seed", type=int, default=0,
                   help="where in the book the match begins, and its games' seeds (default 0)")
    p.add_argument("--book", type=data_path, default=BOOK,
                   help="the opening book (default data/openings.csv)")
    p.add_argument("--no-book", action="store_true",
                   help="every pair starts from the initial position")
    p.add_argument("--out", type=Path, default=Path("results"),
                   help="output directory (default results/)")
    p.add_argument("--store", type=Path, default=None,
                   help="the games and answers store (default OUT/match.db)")
    p.add_argument("--play-results", type=Path, default=None, metavar="DIR",
                   help="where both players' play results are (default --out): where each "
                   "has one on the same ladder, the ladder's predicted score is shown beside "
                   "the match's, with both ratings refitted with the match's games")
    add_stockfish_arg(p)
    p.set_defaults(handler=match_command)


# --model's options the opponent has its own of, as --opponent-X (default: --X's value).
OPPONENT_OPTIONS = ("base_url", "api_key_env", "temperature", "max_tokens", "reasoning_effort",
                    "system", "stop", "extra", "response_format", "endpoint_id", "price",
                    "protocol")


def add_opponent_args(p: argparse.ArgumentParser) -> None:
    """--opponent-X for each of OPPONENT_OPTIONS: --X's values, and --X's value by default."""
    actions = {a.dest: a for a in p._actions}
    for dest in OPPONENT_OPTIONS:
        own = actions[dest]
        flag = own.option_strings[0]
        p.add_argument(f"--opponent-{flag[2:]}", action=type(own), type=own.type or str,
                       choices=own.choices,
                       metavar=own.metavar or (None if own.choices else dest.upper()),
                       default=None, help=f"the opponent's {flag} (default: {flag}'s)")


def _side(args: argparse.Namespace, spec: str, player: Player) -> Side:
    """How a player is asked: a baseline reads the board; a model gets its --protocol's
    prompt (the opponent's, in _opponent_args)."""
    if is_baseline(spec):
        return Side(player, ENGINE_TEMPLATE)
    history = CHAT_WINDOW if args.protocol == GameProtocol.CHAT else 0
    return Side(player, protocol_template(args.protocol, args.legal_moves, history),
                args.legal_moves, args.illegal_retries, args.protocol, history)


def _opponent_args(args: argparse.Namespace) -> argparse.Namespace:
    """--model's options for the opponent: its own name, and each --opponent-X given in
    place of --X."""
    other = copy.copy(args)
    other.model = args.opponent
    for dest in OPPONENT_OPTIONS:
        if (given := getattr(args, f"opponent_{dest}")) is not None:
            setattr(other, dest, given)
    return other


def _check_protocols(args: argparse.Namespace, other: argparse.Namespace) -> None:
    """Refused in one line: --opponent-protocol for a baseline (it reads the board), and
    --legal-moves under a model's protocol without a prompt (tools, pgn)."""
    if args.opponent_protocol not in (None, GameProtocol.FEN) and is_baseline(args.opponent):
        raise ConfigError(f"--opponent-protocol {args.opponent_protocol}: a baseline reads "
                          "the board, not a prompt")
    for option, a in (("--protocol", args), ("--opponent-protocol", other)):
        if args.legal_moves and not is_baseline(a.model) and \
                a.protocol in (GameProtocol.TOOLS, GameProtocol.PGN):
            raise ConfigError(f"--legal-moves lists the moves in a prompt; under {option} "
                              f"{a.protocol} there is none (tools has get_legal_moves)")


def match_players(args: argparse.Namespace, stockfish: str) -> tuple[Player, Player]:
    """Both players, a model's budget the match's (one --max-cost for both)."""
    other = _opponent_args(args)
    if args.model == args.opponent and (other.base_url or "") == (args.base_url or ""):
        raise ConfigError(f"--model and --opponent are both {args.model!r} at the same "
                          "endpoint: a player against itself measures nothing")
    _check_protocols(args, other)
    shared = Budget(args.max_cost, args.price)
    players: list[Player] = []
    for option, a in (("--model", args), ("--opponent", other)):
        try:
            chat = None if is_baseline(a.model) else model_config(a)
            # Each model's own books under the one --max-cost of the match.
            players.append(make_player(a.model, chat, stockfish, args.seed,
                                       2 * args.concurrency,
                                       None if chat is None else PlayerBudget(shared,
                                                                              a.price)))
        except ChessEvalError as exc:  # which of the two options it was, in the one line
            for made in players:
                made.close()
            raise type(exc)(f"{option} {a.model}: {exc}") from None
    return players[0], players[1]


@dataclass(frozen=True)
class MatchSetup:
    """A match ready to play: both players as they are asked, the rules and the judge."""

    first: Player  # --model
    second: Player  # --opponent
    sides: tuple[Side, Side]  # each player with how it is asked
    config: MatchConfig
    settings: EngineSettings  # the judge's engine

    def close(self) -> None:
        """Let both players go."""
        self.first.close()
        self.second.close()


def match_setup(args: argparse.Namespace) -> MatchSetup:
    """The players, the sides, the rules and the judge of `match ARGS`."""
    # The judge's build is the players' (a Stockfish baseline plays on it): the one
    # `play` takes.
    settings = EngineSettings(baseline_stockfish(args.stockfish))
    first, second = match_players(args, settings.path)
    openings = () if args.no_book else tuple(o.start() for o in book.load_book(args.book))
    config = match_config(args, openings)
    return MatchSetup(first, second, (_side(args, args.model, first),
                                      _side(_opponent_args(args), args.opponent, second)),
                      config, settings)


def match_config(args: argparse.Namespace, openings: tuple[Start, ...]) -> MatchConfig:
    """How `match ARGS` is played and when it stops (`openings`: its book's starts)."""
    return MatchConfig(args.target, args.max_games, args.concurrency, args.seed,
                       args.ply_cap, openings, reference_nu(), args.breaker)


def match_shown(args: argparse.Namespace, book: bool) -> dict[str, Any]:
    """The match's settings as its result records and its name digests them (each player's
    request settings are in its id)."""
    shown = {"protocol": str(args.protocol), "legal_moves": args.legal_moves,
             "illegal_retries": args.illegal_retries, "ply_cap": args.ply_cap,
             "target": args.target, "max_games": args.max_games, "seed": args.seed,
             "book_sha256": sha256_file(args.book) if book else None}
    theirs = _opponent_args(args).protocol
    # Only where it differs: absent from the names of matches made before the option.
    return shown | ({"opponent_protocol": str(theirs)} if theirs != args.protocol else {})


def match_command(args: argparse.Namespace) -> int:
    """Play the match, write its result, PGN and report; the exit status."""
    ensure_writable_dir(args.out, "--out")
    setup = match_setup(args)
    first, second, config, settings = setup.first, setup.second, setup.config, setup.settings
    shown = match_shown(args, bool(config.openings)) | {"nu": config.nu}
    labels = (model_label(args), model_label(_opponent_args(args)))
    label = "__vs__".join(labels)
    name = run_name(file_name(Kind.MATCH, label), [first.id, second.id, shown])
    # A ledger per model that buys (a baseline has none): books/NAME__MODEL.jsonl.
    with Run(args.out, [(f"{name}__{slug(label)}", label, budget_of(player))
                        for player, label in zip((first, second), labels, strict=True)]) as run:
        run.owns(setup)
        session = play_match(*setup.sides, config, args.store or args.out / "match.db",
                             settings, run=run)
        result = match_result(args, first, second, session, shown)
        paths = write_match(args.out, name, result, session)
        print(match_summary(result.as_dict()))
    return finish(run, result, paths)


def model_usage(session: MatchSession, first: bool, price: Price | None,
               player: Player) -> dict[str, Any] | None:
    """One model's tokens, requests, tool calls and cost over the match's finished games
    (replies stored by an earlier invocation included), in all, per move and per game; None
    for a baseline (an engine asks no one and costs nothing)."""
    if budget_of(player) is None:
        return None
    return side_usage(((g.record, g.first_white == first) for g in session.games
                       if g.record is not None), price)


def match_result(args: argparse.Namespace, first: Player, second: Player,
                 session: MatchSession, shown: dict[str, Any]) -> MatchResult:
    """The match's result: its pairs' statistics, and the ladder's check of them."""
    stats: PairStats | None = session.stats()
    aborted = sum(g.record is None for g in session.games)
    result = MatchResult(
        first={"model": model_label(args), "player": first.id,
               "usage": model_usage(session, True, args.price, first)},
        second={"model": model_label(_opponent_args(args)), "player": second.id,
                "usage": model_usage(session, False, _opponent_args(args).price, second)},
        settings=shown, games=2 * len(session.totals()), aborted=aborted,
        complete=session.stopped is None and not aborted, stopped=session.stopped,
        pairs=0 if stats is None else stats.pairs,
        pentanomial=[0] * 5 if stats is None else list(stats.pentanomial),
        wdl=list(session.wins_draws_losses()) if stats is not None else [0, 0, 0],
        score=None if stats is None else {"value": round(stats.score, 4),
                                          "lo": round(stats.score_lo, 4),
                                          "hi": round(stats.score_hi, 4)},
        elo_difference=None if stats is None else elo_block(stats),
        ladder_check_missing="no complete pair" if stats is None else None)
    return result if stats is None else replace(result, **_ladder_check(args,
                                                                        result.as_dict()))


def _ladder_check(args: argparse.Namespace, result: dict[str, Any]) -> dict[str, Any]:
    """The ladder's prediction and the joint refit from the play results in --play-results
    (default --out), or why there is none."""
    folder = args.play_results or args.out
    plays = [p for label in (result["first"]["model"], result["second"]["model"])
             if (p := find_play(folder, label)) is not None]
    check = check_of(result, plays)
    if check["ladder_check_missing"]:  # the folder is the terminal's (results read the same)
        log.info("no ladder check: %s in %s", check["ladder_check_missing"], folder)
    return check


def match_summary(result: dict[str, Any]) -> str:
    """The terminal's lines of a match."""
    s = result["score"]
    score = "no complete pair" if s is None else \
        f"{s['value']:.3f} [{s['lo']:.3f}, {s['hi']:.3f}]"
    return (f"{result['first']['model']} vs {result['second']['model']}: {result['games']} "
            f"games in {result['pairs']} pair{'' if result['pairs'] == 1 else 's'} (pentanomial "
            f"{'/'.join(map(str, result['pentanomial']))})"
            + (f", {result['aborted']} aborted" if result["aborted"] else "") +
            f"\n  score of {result['first']['model']}: {score} (90%)"
            f"\n  Elo difference: {elo_difference_text(result['elo_difference'])}"
            + "".join(f"\n  {line}" for line in ladder_lines(result))
            + "".join(f"\n  {usage_line(result[side])}" for side in ("first", "second")
                      if (result[side].get("usage") or {}).get("tokens")))


def usage_line(side: dict[str, Any]) -> str:
    """What one player's answers took, in a line (a model's: tokens, requests, cost)."""
    u = side["usage"]
    spent = "cost unknown" if u["cost"] is None else f"cost {u['cost']:.4f}"
    game = u.get("per_game") or {}
    each = "" if not game else f" (a game: {game['requests']} requests, {game['tokens']:,.0f} " \
        "tokens)"
    return f"{side['model']}: {u['requests']:,} requests, {u['tokens']:,} tokens, {spent}{each}"


def write_match(out: Path, name: str, result: MatchResult,
                session: MatchSession) -> list[Path]:
    """JSON, markdown and PGN, each written atomically; their paths."""
    paths = [out / f"{name}.json", out / f"{name}.md", out / f"{name}.pgn"]
    result.write(paths[0])
    with atomic_write(paths[1]) as handle:
        handle.write(f"# Match: {result.first['model']} vs {result.second['model']}"
                     f"\n\n```\n{match_summary(result.as_dict())}\n```\n")
    with atomic_write(paths[2], encoding="utf-8") as handle:
        for g in session.games:
            if g.record is not None:
                headers = {"Event": "chess-eval match",
                           "Round": f"{g.pair + 1}.{1 if g.first_white else 2}",
                           "GameId": g.record.key}
                handle.write(pgn(g.record, headers) + "\n\n")
    return paths
