"""Why a connection ends: the reasons a server gives, as data (specs/wire.md §Reasons).

Each :class:`Reason` has a name, the words its text begins with and whether
it is final (the client ends) or not (the client tries again).  A reason
travels as the text of a ``refusal`` or ``close`` frame; :func:`reason_of`
reads it back and :func:`is_final` says whether a client ends for it.  No
opening begins another, so a text has at most one reason.  No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from .frames import MAX_TEXT_CHARS

# --------------------------------------------------------------------------
# Why a connection ends: the reasons, as data (specs/wire.md §Reasons)
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason a server gives in a ``refusal`` or a ``close``: its name
    (for logs and the spec), the words its text begins with, and whether it
    is **final** (the client ends: trying again cannot help) or not (the
    client tries again with its backoff).  The reason travels as its text
    (the frames are those of version 1): :func:`reason_of` reads it back."""

    name: str
    opening: str
    final: bool

    def text(self, detail: str = "") -> str:
        """The reason's text: its opening, then ``detail`` (within the field's limit)."""
        return (self.opening + detail)[:MAX_TEXT_CHARS]

    def says(self, text: str) -> bool:
        return text.startswith(self.opening)


#: final: the client's own setting is wrong; it would be refused again
VERSION = Reason("version", "wire version ", True)
TOKEN = Reason("token", "unknown or revoked token", True)
NAME = Reason("name", "engine name ", True)
BROKEN = Reason("broken", "broke the wire: ", True)
STOP = Reason("stop", "the server stops", True)
#: not final: a limit full now, a timeout, the engine's fault, the server's choice
NAME_TAKEN = Reason("name-taken", "an engine named ", False)
TOKEN_FULL = Reason("token-full", "the token ", False)
SERVER_FULL = Reason("server-full", "the server holds ", False)
SOURCE_FULL = Reason("source-full", "too many unanswered connections from ", False)
THROTTLED = Reason("throttled", "too many failed hellos from ", False)
NO_HELLO = Reason("no-hello", "no hello in time", False)
FAULT = Reason("fault", "engine fault: ", False)
RELEASED = Reason("released", "the server closed the connection", False)

#: every reason a server gives; no opening begins another, so a text has one reason
REASONS: tuple[Reason, ...] = (VERSION, TOKEN, NAME, BROKEN, STOP, NAME_TAKEN, TOKEN_FULL,
                               SERVER_FULL, SOURCE_FULL, THROTTLED, NO_HELLO, FAULT, RELEASED)


def reason_of(text: str) -> Reason | None:
    """The reason a ``refusal``'s or ``close``'s text gives (None: none of
    :data:`REASONS`: an older or newer server's, or a client's)."""
    for reason in REASONS:
        if reason.says(text):
            return reason
    return None


def is_final(text: str) -> bool:
    """Whether a client ends for a server's ``refusal`` or ``close`` with
    this text: a final reason, or one it does not know (as every reason was
    before the set was stated; trying again is the exception)."""
    reason = reason_of(text)
    return reason is None or reason.final
