"""The messages an engine sends the arbiter, one frozen dataclass per command.

Each validates its fields on construction (the rules of
:mod:`protocol.fields`) and formats itself with ``to_line()``, a line
:mod:`protocol.codec` parses back to an equal message
(``specs/protocol.md`` §Engine to arbiter).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import ProtocolError
from .fields import (
    INFO_KEYWORDS,
    OPTION_TYPES,
    RESPONSE_WORDS,
    _Message,
    _optional_int,
    check_int,
    check_phrase,
    check_text,
    check_token,
    parse_int,
)


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


EngineMessage = IdName | IdAuthor | OptionDecl | UgiOk | ReadyOk | Info | BestMove | Response

ENGINE_MESSAGE_TYPES = (IdName, IdAuthor, OptionDecl, UgiOk, ReadyOk, Info, BestMove, Response)
