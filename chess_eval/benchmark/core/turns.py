"""A player's move in a game position: the protocol's requests through one door, cached.

Shared by games and puzzle lines. How a side is asked is its protocol's (model.protocols: one
object per protocol, with the request, the feedback after a failed answer and how a reply is
read); this module owns what every protocol shares: the side, the answer cache and its key,
and what an infrastructure failure does to the game. Replies are cached per (player, prompt
version, game, position, moves so far, attempt, digest of the request), the moment they
arrive, so an interrupted game resumes without asking twice and replays exactly what was
played.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import chess

from chess_eval.benchmark.model.inflight import InFlight
from chess_eval.benchmark.model.interface import ContextTooLong, FatalInfraError, InfraError, Reply
from chess_eval.benchmark.model.metered import bought
from chess_eval.benchmark.players.player import Player, cached_answer
from chess_eval.benchmark.players.protocols import (
    CHAT_WINDOW,
    ENGINE_TEMPLATE,
    Attempt,
    GameProtocol,
    TurnState,
    protocol_for,
)
from chess_eval.benchmark.question.start import Condition, Start
from chess_eval.kvstore import Store

__all__ = ["ENGINE_TEMPLATE", "RETRIES", "Attempt", "Condition", "GameAborted", "Side",
           "Start", "move_key", "take_turn"]

RETRIES = 2  # illegal answers retried, each told what was wrong, before a forfeit


class GameAborted(Exception):
    """A move could not be had for infrastructure reasons: the game is not rated."""


@dataclass(frozen=True)
class Side:
    """A player in a game, with how it is asked."""

    player: Player
    template: str  # the protocol's version (+legal), or ENGINE_TEMPLATE for engine rungs
    legal: bool = False  # the prompt lists the legal moves
    retries: int = RETRIES
    protocol: GameProtocol = GameProtocol.FEN  # how a model is asked
    chat_history: int = CHAT_WINDOW  # chat: exchanges kept (0: the whole game)
    # The run's requests in flight (its own, or one game's child of it): a stopping run lets
    # them land and sends no more. None: a side that asks no one (an engine rung).
    gate: InFlight | None = field(default=None, compare=False, repr=False)


def move_key(side: Side, game_key: str, board: chess.Board, sans: list[str], attempt: int,
             prompt: str) -> str:
    """The answer-cache key: player, prompt version, game, position, moves so far, attempt,
    and a digest of the request's text.

    The game is part of it: two games reaching the same position must not share an answer,
    or every game of a seeded or random player with the same colour against the same rung
    would replay the first one (and a model sampled at a temperature would too). The
    request's digest is part of it so that editing a template without bumping its version
    never reuses an answer to the old text, and so that identical requests (a chat game's
    early moves under another window) share one answer.
    """
    version = protocol_for(side.template, side.protocol).key_version(side.legal)
    history = hashlib.sha256(" ".join(sans).encode()).hexdigest()[:16]
    text = hashlib.sha256(prompt.encode()).hexdigest()[:16]
    return f"{side.player.id}|{version}|{game_key}|{board.fen()}|{history}|{attempt}|{text}"


def _door(side: Side, game_key: str, board: chess.Board, sans: list[str],
          cache: Store) -> Callable[[int, str, Callable[[], Reply]], tuple[Reply, bool]]:
    """Every request of a turn goes through here: the cached reply under its key, or the
    request's, stored the moment it arrives. A failure every request would repeat stops the
    run; a context too small goes back to the protocol (chat trims); any other failure aborts
    the game, unrated (a closed gate too: the run or the game is stopping)."""
    gate = side.gate if side.gate is not None else InFlight()  # counted by no one else

    def door(attempt: int, digested: str, send: Callable[[], Reply]) -> tuple[Reply, bool]:
        key = move_key(side, game_key, board, sans, attempt, digested)
        hit = cached_answer(cache, key, side.player)
        if hit is not None:
            return Reply.stored(hit), True
        try:
            with gate.request():  # counted until stored: a stopping run waits for it
                reply = bought(cache, key, send)  # stored the moment it arrives
        except (FatalInfraError, ContextTooLong):
            raise
        except InfraError as exc:
            raise GameAborted(str(exc)) from exc
        return reply, False
    return door


def take_turn(side: Side, board: chess.Board, sans: list[str], start: Start, game_key: str,
              cache: Store, earlier: Sequence[dict[str, Any]] = ()
              ) -> tuple[chess.Move | None, list[Attempt]]:
    """The side's legal move (or None: forfeit) and every answer it took. `earlier`: the
    side's attempts so far in this game (the chat protocol's conversation)."""
    state = TurnState(side.player, board, sans, start, side.legal, side.retries,
                      side.chat_history, f"{game_key}:{len(sans)}", tuple(earlier),
                      float(getattr(side.player, "temperature", 0.0)))
    protocol = protocol_for(side.template, side.protocol)
    try:
        return protocol.turn(state, _door(side, game_key, board, sans, cache))
    except ContextTooLong as exc:
        raise GameAborted(str(exc)) from exc
