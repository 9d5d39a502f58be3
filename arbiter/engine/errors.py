"""What can go wrong with an engine: the start errors and the faults.

A *start error* means no game can be played with the engine (it could not be
started, failed its handshake, refused an option, did not answer
``isready``).  A *fault* is something it did once it was running; it is
recorded once, with the time it was seen, and the match decides what it
means for the game (``specs/match.md`` §Terminations).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["EngineError", "EngineStartError", "FaultKind", "EngineFault", "EngineFaultError",
           "stderr_clause"]


def stderr_clause(lines: list[str]) -> str:
    """``"; its last lines on stderr: 'a' | 'b'"`` (each line escaped) to end
    a message about an engine that failed, or "" when it wrote none."""
    if not lines:
        return ""
    return "; its last lines on stderr: " + " | ".join(repr(line) for line in lines)


class EngineError(Exception):
    """Something an engine did (or failed to do); the message names the engine."""

    def __init__(self, engine: str, message: str):
        self.engine = engine
        self.reason = message
        super().__init__(f"engine {engine!r}: {message}")


class EngineStartError(EngineError):
    """The engine could not be started, failed its handshake, refused an option,
    or did not answer ``isready``: no game can be played with it.

    :attr:`stderr` holds the last lines the engine wrote on stderr, when
    whoever ran its process added them (:meth:`add_stderr`): they often say
    why (a Python engine's ``No module named ...``)."""

    stderr: tuple[str, ...] = ()

    def add_stderr(self, lines: list[str]) -> None:
        """Quote ``lines`` (the end of the engine's stderr) in the message,
        each escaped, once; nothing when there are none."""
        if self.stderr or not lines:
            return
        self.stderr = tuple(lines)
        self.reason += stderr_clause(lines)
        self.args = (f"engine {self.engine!r}: {self.reason}",)


class FaultKind(enum.StrEnum):
    """The kinds of :class:`EngineFault` (string values, as stored in records)."""

    #: it exited, was killed, or closed its output or its input
    CRASH = "crash"
    #: a line that breaks the protocol (an overlong line, a second ``bestmove``,
    #: a malformed ``bestmove``, a flood of unrequested messages)
    PROTOCOL_ERROR = "protocol-error"
    #: no answer to ``stop`` within the stop timeout
    STALL = "stall"


@dataclass(frozen=True)
class EngineFault:
    """What went wrong with an engine, once, and when (``trio.current_time()``
    when its evidence was read).

    ``command`` says which command broke the protocol and ``searching``
    whether a search was on, so the match can tell a malformed ``bestmove``
    apart; ``line`` is the offending line (clipped), when there is one."""

    kind: FaultKind
    detail: str
    time: float
    command: str | None = None
    searching: bool = False
    line: str | None = None


class EngineFaultError(EngineError):
    """Raised while waiting on (or writing to) an engine that has faulted."""

    def __init__(self, engine: str, fault: EngineFault):
        self.fault = fault
        super().__init__(engine, fault.detail)
