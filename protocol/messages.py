"""One frozen dataclass per protocol command, each able to format itself.

Messages validate their fields on construction, so any message that exists
formats to a line that :mod:`protocol.codec` parses back to an equal message
(the property tests check this).  Field rules, in short:

* a *token* (a move, a combo value, a query word) is non-empty and holds no
  whitespace;
* a *phrase* (an option name, a default, a position string) is tokens joined
  by single spaces, and none of its tokens is a keyword of its command;
* a *text* (``id name``, ``info string``, a ``setoption`` value) is free text on
  one line that does not start or end with whitespace.

Times are milliseconds.  ``p1`` is the side that moves first in the game
(Black in Atoll, White in the others); see ``specs/protocol.md``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .errors import ProtocolError
from .limits import MAX_INT, MIN_INT

#: Characters that separate tokens.  CR is included so that a line given with
#: its CR still parses; LF never occurs inside a line.
WHITESPACE = " \t\r"
_WS_RE = re.compile(r"[ \t\r]")

#: The combo option through which an engine that plays several games is told
#: which one to play (like UCI_Variant for chess variants).
GAME_OPTION = "UGI_Game"

#: The check option through which an engine declares that it reads our
#: extension ``movestogo`` in a clock ``go`` (``ugi.md`` lists no such
#: field): declared with default ``true`` (or set ``true``), the arbiter
#: sends ``movestogo`` under ``moves/time`` controls; otherwise it sends only
#: the four clock fields (specs/protocol.md §Arbiter to engine).
MOVESTOGO_OPTION = "UGI_MovesToGo"

#: Every ``info`` keyword known to the arbiter: ours, UCI's, and those of
#: ``ugi.md``'s example (``tthits``).  Each one ends a ``pv`` (``pv a b nodes
#: 12`` is the pv ``a b`` and then ``nodes 12``), so no pv move may be one.
#: No game's notation has a move spelled like them.
INFO_KEYWORDS = frozenset((
    "depth", "seldepth", "score", "nodes", "nps", "time", "pv", "string",
    "multipv", "currmove", "currmovenumber", "hashfull", "tbhits", "sbhits", "cpuload",
    "refutation", "currline", "lowerbound", "upperbound", "tthits",
))

QUERY_WORDS = ("gameover", "p1turn", "result")
RESPONSE_WORDS = ("true", "false", "p1win", "p2win", "draw", "none")
OPTION_TYPES = ("check", "spin", "combo", "button", "string")


# --- field validation -------------------------------------------------------


def check_token(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ProtocolError(f"{what} must be a non-empty string, not {value!r}")
    if _WS_RE.search(value) or "\n" in value:
        raise ProtocolError(f"{what} {_clip(value)!r} must not contain whitespace")
    _check_encodable(value, what)
    return value


def check_phrase(value: object, what: str, reserved: tuple[str, ...] = ()) -> str:
    """Tokens separated by single spaces, none of them a reserved keyword."""
    if not isinstance(value, str):
        raise ProtocolError(f"{what} must be a string, not {value!r}")
    tokens = value.split(" ")
    for token in tokens:
        if not token or _WS_RE.search(token) or "\n" in token:
            raise ProtocolError(
                f"{what} {_clip(value)!r} must be words separated by single spaces"
            )
        if token in reserved:
            raise ProtocolError(f"{what} {_clip(value)!r} must not contain the keyword {token!r}")
    _check_encodable(value, what)
    return value


def check_text(value: object, what: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ProtocolError(f"{what} must be a string, not {value!r}")
    if not value and not allow_empty:
        raise ProtocolError(f"{what} must not be empty")
    if "\n" in value or "\r" in value:
        raise ProtocolError(f"{what} {_clip(value)!r} must fit on one line")
    if value != value.strip(" \t"):
        raise ProtocolError(f"{what} {_clip(value)!r} must not start or end with whitespace")
    _check_encodable(value, what)
    return value


def check_int(value: object, what: str, minimum: int = MIN_INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(f"{what} must be an integer, not {value!r}")
    if not minimum <= value <= MAX_INT:
        raise ProtocolError(f"{what} {value} is out of range [{minimum}, {MAX_INT}]")
    return value


def _optional_int(value: object, what: str, minimum: int = MIN_INT) -> None:
    if value is not None:
        check_int(value, what, minimum)


def _check_encodable(value: str, what: str) -> None:
    """Lone surrogates cannot be written as UTF-8: refuse them up front."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(f"{what} {_clip(value)!r} is not valid Unicode text") from None


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


class _Message:
    """Shared behaviour: ``str(msg)`` is its line."""

    def to_line(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return self.to_line()


# --- arbiter -> engine ------------------------------------------------------


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


# --- engine -> arbiter ------------------------------------------------------


@dataclass(frozen=True)
class IdName(_Message):
    name: str

    def __post_init__(self) -> None:
        check_text(self.name, "id name")

    def to_line(self) -> str:
        return f"id name {self.name}"


@dataclass(frozen=True)
class IdAuthor(_Message):
    author: str

    def __post_init__(self) -> None:
        check_text(self.author, "id author")

    def to_line(self) -> str:
        return f"id author {self.author}"


OPTION_KEYWORDS = ("name", "type", "default", "min", "max", "var")
#: Spelling of an empty string default, as in UCI.
EMPTY_DEFAULT = "<empty>"


@dataclass(frozen=True)
class OptionDecl(_Message):
    """``option name N type T [default D] [min m] [max M] [var v]...``.

    Consistency is checked here: a spin has min <= max and an integer
    default in range, a check defaults to true/false, a combo's default is
    one of its vars, a button has no default."""

    name: str
    type: str
    default: str | None = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_phrase(self.name, "option name", reserved=OPTION_KEYWORDS)
        if self.type not in OPTION_TYPES:
            raise ProtocolError(
                f"option {self.name!r}: type {self.type!r} is not one of {', '.join(OPTION_TYPES)}"
            )
        if not isinstance(self.vars, tuple):
            object.__setattr__(self, "vars", tuple(self.vars))
        where = f"option {self.name!r}"
        if self.default is not None and self.default != "":
            check_phrase(self.default, f"{where}: default", reserved=OPTION_KEYWORDS)
            if self.default == EMPTY_DEFAULT:
                raise ProtocolError(f"{where}: default {EMPTY_DEFAULT!r} is reserved for ''")
        for var in self.vars:
            check_phrase(var, f"{where}: var", reserved=OPTION_KEYWORDS)
        if self.type != "spin" and (self.min is not None or self.max is not None):
            raise ProtocolError(f"{where}: only spin options take min/max")
        if self.type != "combo" and self.vars:
            raise ProtocolError(f"{where}: only combo options take var")
        if self.type == "button" and self.default is not None:
            raise ProtocolError(f"{where}: a button takes no default")
        if self.type == "check" and self.default not in (None, "true", "false"):
            raise ProtocolError(f"{where}: a check defaults to true or false, not {self.default!r}")
        if self.type == "spin":
            if self.min is None or self.max is None:
                raise ProtocolError(f"{where}: a spin needs min and max")
            check_int(self.min, f"{where}: min")
            check_int(self.max, f"{where}: max")
            if self.min > self.max:
                raise ProtocolError(f"{where}: min {self.min} > max {self.max}")
            if self.default is not None:
                value = parse_int(self.default, f"{where}: default")
                if not self.min <= value <= self.max:
                    raise ProtocolError(
                        f"{where}: default {value} outside [{self.min}, {self.max}]"
                    )
        if self.type == "combo":
            if not self.vars:
                raise ProtocolError(f"{where}: a combo needs at least one var")
            if self.default is not None and self.default not in self.vars:
                raise ProtocolError(f"{where}: default {self.default!r} is not one of its vars")

    def to_line(self) -> str:
        parts = [f"option name {self.name} type {self.type}"]
        if self.default is not None:
            parts.append(f"default {self.default or EMPTY_DEFAULT}")
        if self.min is not None:
            parts.append(f"min {self.min}")
        if self.max is not None:
            parts.append(f"max {self.max}")
        parts.extend(f"var {var}" for var in self.vars)
        return " ".join(parts)

    def validate_value(self, value: str | None) -> str | None:
        """The value to send for ``setoption``, or ProtocolError saying why not."""
        where = f"option {self.name!r}"
        if self.type == "button":
            if value is not None:
                raise ProtocolError(f"{where} is a button and takes no value")
            return None
        if value is None:
            raise ProtocolError(f"{where} ({self.type}) needs a value")
        check_text(value, f"{where}: value", allow_empty=True)
        if self.type == "check":
            if value not in ("true", "false"):
                raise ProtocolError(f"{where} is a check: value must be true or false, not {value!r}")
        elif self.type == "spin":
            number = parse_int(value, f"{where}: value")
            assert self.min is not None and self.max is not None
            if not self.min <= number <= self.max:
                raise ProtocolError(f"{where}: value {number} outside [{self.min}, {self.max}]")
        elif self.type == "combo":
            matches = [var for var in self.vars if var.lower() == value.lower()]
            if not matches:
                raise ProtocolError(
                    f"{where}: value {value!r} is not one of {', '.join(self.vars)}"
                )
            return matches[0]
        return value


@dataclass(frozen=True)
class UgiOk(_Message):
    def to_line(self) -> str:
        return "ugiok"


@dataclass(frozen=True)
class ReadyOk(_Message):
    def to_line(self) -> str:
        return "readyok"


@dataclass(frozen=True)
class Info(_Message):
    """Search progress.  ``pv`` moves are tokens; ``string`` is free text and
    always written last.  Scores are from the engine's (side to move's) view:
    centipawn-like units, mate in N plies, or a win probability in [0, 1]."""

    depth: int | None = None
    seldepth: int | None = None
    score_cp: int | None = None
    score_mate: int | None = None
    score_winprob: float | None = None
    nodes: int | None = None
    nps: int | None = None
    time: int | None = None
    pv: tuple[str, ...] = ()
    string: str | None = None

    def __post_init__(self) -> None:
        for name in ("depth", "seldepth", "nodes", "nps", "time"):
            _optional_int(getattr(self, name), f"info {name}", 0)
        _optional_int(self.score_cp, "info score cp")
        _optional_int(self.score_mate, "info score mate")
        if self.score_winprob is not None:
            prob = self.score_winprob
            if isinstance(prob, bool) or not isinstance(prob, (int, float)):
                raise ProtocolError(f"info score winprob must be a number, not {prob!r}")
            if not (math.isfinite(prob) and 0.0 <= prob <= 1.0):
                raise ProtocolError(f"info score winprob {prob!r} is not in [0, 1]")
            object.__setattr__(self, "score_winprob", float(prob))
        if not isinstance(self.pv, tuple):
            object.__setattr__(self, "pv", tuple(self.pv))
        for move in self.pv:
            check_token(move, "info pv move")
            if move in INFO_KEYWORDS:
                raise ProtocolError(f"info pv move must not be the info keyword {move!r}")
        if self.string is not None:
            check_text(self.string, "info string", allow_empty=True)

    def to_line(self) -> str:
        parts = ["info"]
        for name in ("depth", "seldepth"):
            value = getattr(self, name)
            if value is not None:
                parts += [name, str(value)]
        if self.score_cp is not None:
            parts += ["score", "cp", str(self.score_cp)]
        if self.score_mate is not None:
            parts += ["score", "mate", str(self.score_mate)]
        if self.score_winprob is not None:
            parts += ["score", "winprob", repr(self.score_winprob)]
        for name in ("nodes", "nps", "time"):
            value = getattr(self, name)
            if value is not None:
                parts += [name, str(value)]
        if self.pv:
            parts.append("pv")
            parts.extend(self.pv)
        if self.string is not None:
            parts.append("string")
            if self.string:
                parts.append(self.string)
        return " ".join(parts)


@dataclass(frozen=True)
class BestMove(_Message):
    """``bestmove <move> [ponder <move>]``: the end of every search."""

    move: str
    ponder: str | None = None

    def __post_init__(self) -> None:
        check_token(self.move, "bestmove move")
        if self.ponder is not None:
            check_token(self.ponder, "bestmove ponder move")

    def to_line(self) -> str:
        if self.ponder is None:
            return f"bestmove {self.move}"
        return f"bestmove {self.move} ponder {self.ponder}"


@dataclass(frozen=True)
class Response(_Message):
    """The answer to ``query``: one of true false p1win p2win draw none."""

    value: str

    def __post_init__(self) -> None:
        if self.value not in RESPONSE_WORDS:
            raise ProtocolError(
                f"response {self.value!r} is not one of {', '.join(RESPONSE_WORDS)}"
            )

    def to_line(self) -> str:
        return f"response {self.value}"


ArbiterMessage = Ugi | IsReady | SetOption | UgiNewGame | SetPosition | Go | Stop | Quit | Query
EngineMessage = IdName | IdAuthor | OptionDecl | UgiOk | ReadyOk | Info | BestMove | Response

ARBITER_MESSAGE_TYPES = (Ugi, IsReady, SetOption, UgiNewGame, SetPosition, Go, Stop, Quit, Query)
ENGINE_MESSAGE_TYPES = (IdName, IdAuthor, OptionDecl, UgiOk, ReadyOk, Info, BestMove, Response)


# --- numbers ------------------------------------------------------------------

_INT_RE = re.compile(r"-?[0-9]{1,19}")
_FLOAT_RE = re.compile(r"-?[0-9]{1,30}(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,4})?")


def parse_int(text: str, what: str, minimum: int = MIN_INT) -> int:
    """A decimal integer in range: only ASCII digits and an optional minus sign
    (no '+', no '_', no other scripts' digits, unlike ``int()``)."""
    if not _INT_RE.fullmatch(text):
        raise ProtocolError(f"{what}: {_clip(text)!r} is not an integer")
    value = int(text)
    if not minimum <= value <= MAX_INT:
        raise ProtocolError(f"{what}: {value} is out of range [{minimum}, {MAX_INT}]")
    return value


def parse_float(text: str, what: str) -> float:
    if not _FLOAT_RE.fullmatch(text):
        raise ProtocolError(f"{what}: {_clip(text)!r} is not a number")
    return float(text)


