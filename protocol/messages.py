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

The messages live in :mod:`protocol.arbiter_messages` (arbiter to engine)
and :mod:`protocol.engine_messages` (engine to arbiter), their fields'
rules in :mod:`protocol.fields`; this module re-exports them all, the import
path the callers have always used.
"""

from __future__ import annotations

from .arbiter_messages import (
    _GO_MINIMUM as _GO_MINIMUM,  # protocol.codec reads it as messages._GO_MINIMUM
)
from .arbiter_messages import (
    ARBITER_MESSAGE_TYPES,
    GO_INT_FIELDS,
    ArbiterMessage,
    Go,
    IsReady,
    Query,
    Quit,
    SetOption,
    SetPosition,
    Stop,
    Ugi,
    UgiNewGame,
)
from .engine_messages import (
    EMPTY_DEFAULT,
    ENGINE_MESSAGE_TYPES,
    OPTION_KEYWORDS,
    BestMove,
    EngineMessage,
    IdAuthor,
    IdName,
    Info,
    OptionDecl,
    ReadyOk,
    Response,
    UgiOk,
)
from .fields import (
    GAME_OPTION,
    INFO_KEYWORDS,
    MOVESTOGO_OPTION,
    OPTION_TYPES,
    QUERY_WORDS,
    RESPONSE_WORDS,
    WHITESPACE,
    check_int,
    check_phrase,
    check_text,
    check_token,
    parse_float,
    parse_int,
)

__all__ = [
    "Ugi", "IsReady", "SetOption", "UgiNewGame", "SetPosition", "GO_INT_FIELDS", "Go", "Stop",
    "Quit", "Query", "ArbiterMessage", "ARBITER_MESSAGE_TYPES", "IdName", "IdAuthor",
    "OPTION_KEYWORDS", "EMPTY_DEFAULT", "OptionDecl", "UgiOk", "ReadyOk", "Info", "BestMove",
    "Response", "EngineMessage", "ENGINE_MESSAGE_TYPES", "WHITESPACE", "GAME_OPTION",
    "MOVESTOGO_OPTION", "INFO_KEYWORDS", "QUERY_WORDS", "RESPONSE_WORDS", "OPTION_TYPES",
    "check_token", "check_phrase", "check_text", "check_int", "parse_int", "parse_float",
]
