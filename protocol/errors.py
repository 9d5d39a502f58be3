"""The protocol's single error type.

It lives in its own module so that messages, codec and session can all raise
it without importing each other; :mod:`protocol.codec` re-exports it, which is
where callers are told to find it.
"""

from __future__ import annotations


class ProtocolError(ValueError):
    """A line, a message or a sequence of messages that breaks ``specs/protocol.md``.

    The message says what was wrong and where (the command, the token).
    ``command`` is the line's first token when one is known (e.g. ``"info"``),
    so that a caller can choose to tolerate a malformed ``info`` line while
    treating a malformed ``bestmove`` as fatal.  ``lines`` is set by
    :meth:`protocol.codec.LineSplitter.feed`: the good lines of the chunk.
    """

    def __init__(self, message: str, *, command: str | None = None, line: str | None = None,
                 lines: list[str] | None = None):
        self.command = command
        self.line = line
        self.lines: list[str] = lines if lines is not None else []
        super().__init__(message)
