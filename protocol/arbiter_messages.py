"""The messages the arbiter sends an engine, one frozen dataclass per command.

Each validates its fields on construction (the rules of
:mod:`protocol.fields`) and formats itself with ``to_line()``, a line
:mod:`protocol.codec` parses back to an equal message.  Times are
milliseconds; ``p1`` is the side that moves first (``specs/protocol.md``
§Arbiter to engine).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ProtocolError
from .fields import (
    QUERY_WORDS,
    _Message,
    _optional_int,
    check_phrase,
    check_text,
    check_token,
)
from .limits import MIN_INT


@dataclass(frozen=True)
class Ugi(_Message):
    """First command: the engine answers with ids, options and ``ugiok``."""

    def to_line(self) -> str:
        return "ugi"


@dataclass(frozen=True)
class IsReady(_Message):
    """Synchronisation: the engine answers ``readyok`` (also during a search)."""

    def to_line(self) -> str:
        return "isready"


@dataclass(frozen=True)
class SetOption(_Message):
    """``setoption name N [value V]``; ``value`` None for buttons."""

    name: str
    value: str | None = None

    def __post_init__(self) -> None:
        check_phrase(self.name, "option name", reserved=("value",))
        if self.value is not None:
            check_text(self.value, "option value", allow_empty=True)

    def to_line(self) -> str:
        if self.value is None:
            return f"setoption name {self.name}"
        return f"setoption name {self.name} value {self.value}".rstrip(" ")


@dataclass(frozen=True)
class UgiNewGame(_Message):
    """The next position belongs to a new game: engines clear what they learned."""

    def to_line(self) -> str:
        return "uginewgame"


@dataclass(frozen=True)
class SetPosition(_Message):
    """``position startpos|fen <position string> [moves m1 m2 ...]``.

    ``fen`` None means the game's start position."""

    fen: str | None = None
    moves: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.fen is not None:
            check_phrase(self.fen, "position string", reserved=("moves",))
        if not isinstance(self.moves, tuple):
            object.__setattr__(self, "moves", tuple(self.moves))
        for move in self.moves:
            check_token(move, "move")

    def to_line(self) -> str:
        parts = ["position", "startpos" if self.fen is None else f"fen {self.fen}"]
        if self.moves:
            parts.append("moves")
            parts.extend(self.moves)
        return " ".join(parts)


#: ``go`` fields in the order they are written.
GO_INT_FIELDS = ("p1time", "p2time", "p1inc", "p2inc", "movestogo", "movetime", "depth", "nodes")
_GO_MINIMUM = {"p1time": MIN_INT, "p2time": MIN_INT, "p1inc": 0, "p2inc": 0,
               "movestogo": 1, "movetime": 0, "depth": 1, "nodes": 1}


@dataclass(frozen=True)
class Go(_Message):
    """Start a search.  All times in milliseconds; clocks may be negative
    (an arbiter that lets an engine run over its time), increments not."""

    p1time: int | None = None
    p2time: int | None = None
    p1inc: int | None = None
    p2inc: int | None = None
    movestogo: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None
    infinite: bool = False

    def __post_init__(self) -> None:
        for name in GO_INT_FIELDS:
            _optional_int(getattr(self, name), f"go {name}", _GO_MINIMUM[name])
        if not isinstance(self.infinite, bool):
            raise ProtocolError(f"go infinite must be a bool, not {self.infinite!r}")

    def to_line(self) -> str:
        parts = ["go"]
        for name in GO_INT_FIELDS:
            value = getattr(self, name)
            if value is not None:
                parts += [name, str(value)]
        if self.infinite:
            parts.append("infinite")
        return " ".join(parts)

    @property
    def has_clock(self) -> bool:
        return self.p1time is not None or self.p2time is not None


@dataclass(frozen=True)
class Stop(_Message):
    """End the search now; the engine answers ``bestmove``."""

    def to_line(self) -> str:
        return "stop"


@dataclass(frozen=True)
class Quit(_Message):
    """Exit as soon as possible."""

    def to_line(self) -> str:
        return "quit"


@dataclass(frozen=True)
class Query(_Message):
    """``query gameover|p1turn|result``: the engine answers ``response ...``."""

    what: str

    def __post_init__(self) -> None:
        if self.what not in QUERY_WORDS:
            raise ProtocolError(
                f"query {self.what!r} is not one of {', '.join(QUERY_WORDS)}"
            )

    def to_line(self) -> str:
        return f"query {self.what}"


ArbiterMessage = Ugi | IsReady | SetOption | UgiNewGame | SetPosition | Go | Stop | Quit | Query

ARBITER_MESSAGE_TYPES = (Ugi, IsReady, SetOption, UgiNewGame, SetPosition, Go, Stop, Quit, Query)
