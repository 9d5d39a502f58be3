"""The engine protocol as pure code: messages, parsing, formatting, limits and
the per-engine state machine, with no I/O (h11 style).  ``specs/protocol.md``
is the prose version.

Nothing here does I/O or imports ``arbiter`` (``tests/test_protocol_codec.py``
checks every module): the engine SDK, which does both, is :mod:`arbiter.sdk`.
"""

from .codec import LineSplitter, ProtocolError, parse_arbiter_line, parse_engine_line, tokenize
from .limits import MAX_LINE_BYTES
from .messages import (
    GAME_OPTION,
    QUERY_WORDS,
    RESPONSE_WORDS,
    ArbiterMessage,
    BestMove,
    EngineMessage,
    Go,
    IdAuthor,
    IdName,
    Info,
    IsReady,
    OptionDecl,
    Query,
    Quit,
    ReadyOk,
    Response,
    SetOption,
    SetPosition,
    Stop,
    Ugi,
    UgiNewGame,
    UgiOk,
)
from .session import EngineSession, SessionState

__all__ = [
    "LineSplitter", "ProtocolError", "parse_arbiter_line", "parse_engine_line", "tokenize",
    "MAX_LINE_BYTES", "GAME_OPTION", "QUERY_WORDS", "RESPONSE_WORDS", "ArbiterMessage",
    "EngineMessage", "BestMove", "Go", "IdAuthor", "IdName", "Info", "IsReady", "OptionDecl",
    "Query", "Quit", "ReadyOk", "Response", "SetOption", "SetPosition", "Stop", "Ugi",
    "UgiNewGame", "UgiOk", "EngineSession", "SessionState",
]
