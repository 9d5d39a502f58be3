"""The one interface every game implements.

Matches, perft, records, the conformance checker, the sample engines and the
tests are written once against this module, in the manner of OpenSpiel's
``Game``/``State`` split and python-chess's ``Board``:

* a :class:`Game` describes a game (its name, who moves first) and makes
  positions: :meth:`Game.start` and :meth:`Game.from_fen`;
* a :class:`Position` is an immutable state of that game: the side to move,
  the legal moves as canonical strings, :meth:`Position.play` returning the next
  position, and :meth:`Position.outcome` returning an :class:`Outcome` once the
  rules end the game.

Positions are immutable so that search code (perft, MCTS) can keep any number
of them without copying or undoing, and so that a position handed to an engine
SDK can never be changed behind the referee's back.  A position carries what
its repetition rules need (the keys of earlier positions since the last
irreversible move), so ``outcome()`` is a function of the position alone.

Nothing here does I/O.  The referee core imports nothing else of ours.
"""

from __future__ import annotations

import enum
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar


class Color(enum.StrEnum):
    """A side.  Results are always written from White's view (PGN style),
    whoever moved first in the game.

    String valued: a colour is its record text (``Color.WHITE == "white"``,
    ``str(Color.WHITE) == "white"``), the text of :attr:`Ply.color
    <arbiter.record.Ply.color>`, JSON and the store.  It hashes and compares
    as that text with ``str``'s own C methods, as fast as identity for the
    dicts keyed by colour the match looks up on each ply."""

    WHITE = "white"
    BLACK = "black"

    @property
    def other(self) -> Color:
        return Color.BLACK if self is Color.WHITE else Color.WHITE

    @property
    def side(self) -> int:
        """This colour's side index: 0 for White, 1 for Black (see COLORS)."""
        return 0 if self is Color.WHITE else 1



#: The colours by side index.  Whose turn it is is one convention in every
#: game: a position keeps the side index of the mover in ``_side`` (0 White,
#: 1 Black), :attr:`Position.to_move` is ``COLORS[_side]``, the position
#: string writes ``SIDE_LETTERS[_side]``, and pairs by colour are (white, black).
COLORS: tuple[Color, Color] = (Color.WHITE, Color.BLACK)
#: The side-to-move field of every game's position string, by side index.
SIDE_LETTERS: tuple[str, str] = ("w", "b")


class Termination(enum.StrEnum):
    """Why the rules ended a game.  Values are the short reasons printed by the
    CLI and stored in records; each is defined in ``specs/games/*.md``.
    Match-level endings (time forfeit, illegal move, crash ...) live in
    ``arbiter.match`` because the referee never sees them."""

    CONNECTION = "connection"  # troll, atoll: the mover connected his edges/islands
    NO_MOVES = "no-moves"  # troll: neither side has a legal drop (draw)
    FEWER_THAN_THREE = "fewer-than-three"  # morris: a side is down to two pieces
    BLOCKED = "blocked"  # morris, talisman: the side to move has no legal move (loses)
    REPETITION = "repetition"  # morris, talisman: threefold repetition
    NO_PROGRESS = "no-progress"  # morris: 100 plies without removal; talisman: 50 without a triangle
    ALL_TRIANGLES = "all-triangles"  # talisman: every unit triangle is owned
    CANNOT_CATCH_UP = "cannot-catch-up"  # talisman: the trailing side cannot reach the leader


class Result(enum.StrEnum):
    """A finished game's result from White's view, as PGN writes it (string
    valued: records, the store and JSON keep the text)."""

    WHITE_WINS = "1-0"
    BLACK_WINS = "0-1"
    DRAW = "1/2-1/2"


WHITE_WINS, BLACK_WINS, DRAW = Result.WHITE_WINS, Result.BLACK_WINS, Result.DRAW
RESULTS = tuple(Result)


def result_for(winner: Color | None) -> Result:
    """The PGN result string for a winner (``None`` is a draw)."""
    if winner is None:
        return DRAW
    return WHITE_WINS if winner is Color.WHITE else BLACK_WINS


@dataclass(frozen=True)
class Outcome:
    """How a game ended by the rules: the reason and the winner (None = draw)."""

    termination: Termination
    winner: Color | None

    @property
    def result(self) -> str:
        return result_for(self.winner)


class GameError(ValueError):
    """Base class of the referee's errors: the message says what was wrong."""


class IllegalMoveError(GameError):
    """A move string that is malformed or not legal in the position.

    ``move`` is the text that was tried, ``reason`` says why it was refused
    (e.g. ``"cell d5 is occupied"``).  Callers add where it happened (ply,
    file, line).
    """

    def __init__(self, move: str, reason: str):
        self.move = move
        self.reason = reason
        super().__init__(f"illegal move {move!r}: {reason}")


class InvalidFenError(GameError):
    """A position string that does not describe a position of the game."""

    def __init__(self, fen: str, reason: str):
        self.fen = fen
        self.reason = reason
        super().__init__(f"invalid position {fen!r}: {reason}")


class Position(ABC):
    """An immutable state of a game.

    Subclasses must implement the abstract members; the rest are derived.
    ``legal_moves`` must be empty exactly when the position is terminal
    (``outcome()`` is not None) -- or, for games with a forced ``pass``, list
    ``pass`` as the only move.
    """

    # No instance dict: subclasses that declare __slots__ get compact,
    # quick-to-make positions (perft and playouts make millions).
    __slots__ = ()

    game: ClassVar[Game]
    #: The side index of the side to move (0 White, 1 Black: ``COLORS``).
    #: Every game keeps it under this name; subclasses declare the slot.
    _side: int

    @property
    def to_move(self) -> Color:
        """The side whose turn it is."""
        return COLORS[self._side]

    @property
    @abstractmethod
    def ply(self) -> int:
        """Plies played since the start position (or the count in the FEN)."""

    @abstractmethod
    def legal_moves(self) -> list[str]:
        """Every legal move, canonical strings; empty when the game is over."""

    @abstractmethod
    def play(self, move: str) -> Position:
        """The position after ``move``; raises IllegalMoveError if it is not legal.

        Accepts any spelling that :meth:`parse_move` accepts."""

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """The rules' verdict, or None while the game goes on."""

    @abstractmethod
    def fen(self) -> str:
        """The position string (see ``specs/games/<game>.md``); round-trips
        through ``Game.from_fen`` and fits ``position fen <...>``."""

    @abstractmethod
    def pieces(self) -> dict[str, Color]:
        """Occupied cells/points by name, and who owns the stone on each."""

    @abstractmethod
    def diagram(self) -> str:
        """A multi-line text picture of the board (for ``arbiter show``)."""

    def scores(self) -> tuple[int, int] | None:
        """(white, black) scores for games that keep a score, else None."""
        return None

    def parse_move(self, text: str) -> str:
        """The canonical form of ``text`` if it is a legal move here.

        Raises IllegalMoveError with a reason.  Games override this to explain
        *why* a move is illegal; this default only checks membership."""
        move = text.strip()
        if self.outcome() is not None:
            raise IllegalMoveError(text, "the game is already over")
        if move in self.legal_moves():
            return move
        raise IllegalMoveError(text, "not a legal move in this position")

    def is_legal(self, text: str) -> bool:
        try:
            self.parse_move(text)
        except IllegalMoveError:
            return False
        return True

    def is_over(self) -> bool:
        return self.outcome() is not None

    def __str__(self) -> str:
        return self.fen()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game.name} {self.fen()!r}>"


class Game(ABC):
    """A game: its name, who moves first, and how to make positions."""

    name: ClassVar[str]
    description: ClassVar[str]  # one line, for `arbiter games`
    #: The side that moves first (the protocol's "p1"): ``start().to_move``.
    first: ClassVar[Color] = Color.WHITE
    has_scores: ClassVar[bool] = False

    @abstractmethod
    def start(self) -> Position:
        """The start position."""

    @abstractmethod
    def from_fen(self, fen: str) -> Position:
        """Parse a position string; raises InvalidFenError with a reason."""

    def position(self, fen: str | None = None, moves: Iterable[str] = ()) -> Position:
        """The position from ``fen`` (or the start) after ``moves``.

        Raises :class:`MoveSequenceError` naming the ply that failed."""
        pos = self.from_fen(fen) if fen else self.start()
        return play_moves(pos, moves)

    def prepare(self) -> None:  # noqa: B027 - a hook, empty for the games that build nothing lazily
        """Build what the game computes on first use (move tables), so that an
        engine can pay it before any clock runs; a no-op for most games."""

    def __repr__(self) -> str:
        return f"<Game {self.name}>"


class MoveSequenceError(GameError):
    """An illegal move inside a move sequence: says at which ply (1-based,
    counted from the first move of the sequence) and why."""

    def __init__(self, ply: int, move: str, reason: str):
        self.ply = ply
        self.move = move
        self.reason = reason
        super().__init__(f"ply {ply}: illegal move {move!r}: {reason}")


def play_moves(position: Position, moves: Iterable[str]) -> Position:
    """Play ``moves`` in order from ``position``; MoveSequenceError on a bad one."""
    for index, move in enumerate(moves, start=1):
        try:
            position = position.play(move)
        except IllegalMoveError as exc:
            raise MoveSequenceError(index, move, exc.reason) from None
    return position


def perft(position: Position, depth: int) -> int:
    """The number of legal move sequences of exactly ``depth`` plies.

    Standard perft: a game that ends before ``depth`` contributes nothing."""
    if depth == 0:
        return 1
    moves = position.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(perft(position.play(move), depth - 1) for move in moves)


def perft_divide(position: Position, depth: int) -> dict[str, int]:
    """perft below each legal move (``depth`` >= 1)."""
    return {move: perft(position.play(move), depth - 1) for move in position.legal_moves()}


_EMPTY_RUN = re.compile(r"\.+")


def run_lengths(cells: str) -> str:
    """A row of a position string: one character per cell (``.`` for an empty
    one), each run of empty cells written as its length (``"..W...B"`` ->
    ``"2W3B"``), as in chess FEN."""
    return _EMPTY_RUN.sub(lambda run: str(len(run.group())), cells)


def split_moves(text: str | Sequence[str] | None) -> list[str]:
    """A move list given as one whitespace-separated string, or a sequence."""
    if text is None:
        return []
    if isinstance(text, str):
        return text.split()
    return [m for part in text for m in part.split()]
