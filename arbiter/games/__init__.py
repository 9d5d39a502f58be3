"""The referee core: the rules of every game behind one interface.

``get_game("troll")`` returns the :class:`~arbiter.games.base.Game` for a name;
``GAME_NAMES`` lists them in a fixed order.  Each game lives in its own module
(``arbiter/games/<name>.py``) exposing ``GAME``; modules load on first use.
"""

from __future__ import annotations

import importlib

from .base import (
    BLACK_WINS,
    COLORS,
    DRAW,
    RESULTS,
    SIDE_LETTERS,
    WHITE_WINS,
    Color,
    Game,
    GameError,
    IllegalMoveError,
    InvalidFenError,
    MoveSequenceError,
    Outcome,
    Position,
    Result,
    Termination,
    perft,
    perft_divide,
    play_moves,
    result_for,
    split_moves,
)

GAME_NAMES: tuple[str, ...] = ("troll", "atoll", "morris", "talisman")


class UnknownGameError(GameError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(f"unknown game {name!r}; choose one of: {', '.join(GAME_NAMES)}")


def get_game(name: str) -> Game:
    """The game called ``name`` (case-insensitive); UnknownGameError otherwise."""
    key = name.strip().lower()
    if key not in GAME_NAMES:
        raise UnknownGameError(name)
    return importlib.import_module(f"{__name__}.{key}").GAME


def all_games() -> list[Game]:
    return [get_game(name) for name in GAME_NAMES]


__all__ = [
    "BLACK_WINS", "COLORS", "DRAW", "RESULTS", "Result", "SIDE_LETTERS", "WHITE_WINS", "Color", "Game",
    "GameError",
    "IllegalMoveError", "InvalidFenError", "MoveSequenceError", "Outcome", "Position",
    "Termination", "perft", "perft_divide", "play_moves", "result_for", "split_moves",
    "GAME_NAMES", "UnknownGameError", "get_game", "all_games",
]
