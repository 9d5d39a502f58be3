"""The fields of the protocol's messages: the words, keywords and option names
every command shares, and the checks each field's value must pass.

A *token* (a move, a combo value, a query word) is non-empty and holds no
whitespace; a *phrase* (an option name, a default, a position string) is
tokens joined by single spaces, none of them a keyword of its command; a
*text* is free text on one line that does not start or end with whitespace.
Each ``check_*`` returns the value or raises :class:`ProtocolError`;
``parse_int`` / ``parse_float`` read a number the strict way (ASCII digits
only).  The underscored helpers and ``_Message`` are shared by
:mod:`protocol.arbiter_messages` and :mod:`protocol.engine_messages` only.
"""

from __future__ import annotations

import re

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
