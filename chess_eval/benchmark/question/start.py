"""Where a game or a puzzle line begins: its condition and its start position."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import chess


class Condition(StrEnum):
    """How a game (or a puzzle line) starts."""

    STANDARD = "standard"  # the initial position
    CHESS960 = "chess960"  # a seeded Chess960 start, never the standard one
    MIDGAME = "midgame"  # a game position of questions.csv, with the moves that led to it
    PUZZLE = "puzzle"  # a puzzle's FEN (puzzle lines)



# The conditions a game may start from (play's and calibrate's; PUZZLE is the lines').
GAME_CONDITIONS = (Condition.STANDARD, Condition.CHESS960, Condition.MIDGAME)


@dataclass(frozen=True)
class Start:
    """Where a game begins."""

    condition: Condition  # how the game starts
    label: str  # the opening's name: standard, 960#N or the question id
    fen: str
    history: tuple[str, ...] = ()  # SAN from the initial position (mid-game starts)
    chess960: bool = False

    def board(self) -> chess.Board:
        """The start position, with the moves that led to it when they are known."""
        if self.history:
            board = chess.Board()
            for san in self.history:
                board.push_san(san)
            if board.fen() == self.fen:
                return board
        return chess.Board(self.fen, chess960=self.chess960)
