"""Who may try a hello, per source (``specs/wire.md`` §Limits): how many of a
source's connections wait for their hello's answer, and how fast its token
checks go.

A source is an IPv4 address or an IPv6 /64 (:func:`protocol.wire.source_key`).
One anonymous source must not lock others out, so both limits are its own:

- :meth:`SourceGate.admit`: at most
  :data:`~protocol.wire.MAX_UNANSWERED_PER_SOURCE` connections of a source
  whose hello has not been answered (welcome or refusal); one more is closed
  at once.  Silent sockets from one source hold that many slots of the
  server's :data:`~protocol.wire.MAX_CONNECTIONS`, not all of them.
- :meth:`SourceGate.check`: token checks of one source, across all its
  connections.  Up to :data:`~protocol.wire.AUTH_FAILURES_FREE` run at once
  while the source has fewer failed hellos than that in
  :data:`~protocol.wire.AUTH_FAILURE_WINDOW` (a check in flight counts as a
  possible failure, so parallel guesses are no faster than serial ones); from
  then on one starts every :data:`~protocol.wire.AUTH_FAILURE_DELAY`, and a
  hello whose turn is more than :data:`~protocol.wire.AUTH_WAIT_LIMIT` away is
  refused at once, its token unchecked.  A failed hello (:meth:`SourceGate.failed`)
  is one refused after its check, for whatever reason (its token, its name,
  the name taken, the token's limit), or one welcomed whose engine then
  failed its handshake: each made the server do a check's work for nothing.
- :meth:`SourceGate.loggable`: at most one log line per
  :data:`LOG_INTERVAL` about a source's connections that never got in, so
  that a source opening connections as fast as it can does not make the
  server write as fast.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio

from protocol import wire

__all__ = ["LOG_INTERVAL", "SourceGate", "Throttled", "Unanswered"]

#: seconds between two log lines about one source's turned-away connections
#: (the count of those not logged goes with the next): a flood is seen in
#: the log, without a line per connection
LOG_INTERVAL = 10.0
#: sources remembered (for their log lines, for their failures) before their
#: table is swept of those that no longer matter
KEPT_SOURCES = 4096


class Throttled(Exception):
    """The source's next turn for a token check is too far off (the message says when)."""


class Unanswered:
    """One connection of a source whose hello is not answered yet; :meth:`answered`
    (idempotent) gives its slot back."""

    def __init__(self, gate: SourceGate, source: str):
        self._gate, self.source = gate, source
        self._held = True

    def answered(self) -> None:
        if self._held:
            self._held = False
            self._gate._release(self.source)


@dataclass
class _Source:
    """One source's token checks: its recent failures, the checks admitted and
    not finished (running or waiting for their turn), and the earliest start
    of its next check once it is slowed down."""

    failures: deque[float] = field(default_factory=deque)
    checking: int = 0
    next_turn: float = -math.inf
    finished: trio.Event = field(default_factory=trio.Event)

    def expire(self, now: float) -> None:
        while self.failures and self.failures[0] < now - wire.AUTH_FAILURE_WINDOW:
            self.failures.popleft()


class SourceGate:
    """The per-source limits of one listener."""

    def __init__(self) -> None:
        self._unanswered: dict[str, int] = {}
        self._sources: dict[str, _Source] = {}
        self._logged: dict[str, tuple[float, int]] = {}  # source -> (last line, lines skipped)

    def loggable(self, source: str) -> int | None:
        """Whether a line about a turned-away connection of ``source`` may be
        logged now: the count of lines not logged since its last one, or None
        (not now: one was logged within :data:`LOG_INTERVAL`; this one is counted)."""
        now = trio.current_time()
        last, skipped = self._logged.get(source, (-math.inf, 0))
        if now - last < LOG_INTERVAL:
            self._logged[source] = (last, skipped + 1)
            return None
        if len(self._logged) >= KEPT_SOURCES:
            self._logged = {key: value for key, value in self._logged.items()
                            if now - value[0] < LOG_INTERVAL}
        self._logged[source] = (now, 0)
        return skipped

    def unanswered(self, source: str) -> int:
        return self._unanswered.get(source, 0)

    def admit(self, source: str) -> Unanswered | None:
        """A new connection of ``source``, unanswered; None when the source holds
        :data:`~protocol.wire.MAX_UNANSWERED_PER_SOURCE` already."""
        count = self._unanswered.get(source, 0)
        if count >= wire.MAX_UNANSWERED_PER_SOURCE:
            return None
        self._unanswered[source] = count + 1
        return Unanswered(self, source)

    def _release(self, source: str) -> None:
        count = self._unanswered[source] - 1
        if count:
            self._unanswered[source] = count
        else:
            del self._unanswered[source]

    @asynccontextmanager
    async def check(self, source: str) -> AsyncIterator[None]:
        """Wait for ``source``'s turn, then one token check (the body):
        :class:`Throttled` if the turn is too far off.  A refusal after the
        check is told to :meth:`failed` in the same step as the body's end
        (no other task runs between), so the check counts until then."""
        state = await self._turn(source)
        try:
            yield
        finally:
            state.checking -= 1
            state.finished.set()
            state.finished = trio.Event()
            self._forget_if_idle(source, state)

    def failed(self, source: str) -> None:
        """A hello of ``source`` failed (see the module's docstring)."""
        if len(self._sources) >= KEPT_SOURCES:
            now = trio.current_time()
            for key, state in list(self._sources.items()):
                self._forget_if_idle(key, state, now)
        self._sources.setdefault(source, _Source()).failures.append(trio.current_time())

    async def _turn(self, source: str) -> _Source:
        """Until a check of ``source`` may start; its state, which counts the
        check in ``checking`` on return."""
        while True:
            state = self._sources.setdefault(source, _Source())
            now = trio.current_time()
            state.expire(now)
            if len(state.failures) >= wire.AUTH_FAILURES_FREE:  # slowed down: one per delay
                start = max(now, state.next_turn)
                if start - now > wire.AUTH_WAIT_LIMIT:
                    raise Throttled(f"the next try in {math.ceil(start - now)} s")
                state.next_turn = start + wire.AUTH_FAILURE_DELAY
                state.checking += 1
                try:
                    await trio.sleep_until(start)
                except BaseException:
                    state.checking -= 1
                    self._forget_if_idle(source, state)
                    raise
                return state
            if len(state.failures) + state.checking < wire.AUTH_FAILURES_FREE:
                state.checking += 1
                state.next_turn = max(state.next_turn, now + wire.AUTH_FAILURE_DELAY)
                return state
            await state.finished.wait()  # the checks in flight may yet fail: their outcome first

    def _forget_if_idle(self, source: str, state: _Source, now: float | None = None) -> None:
        """A source with no check in flight and no failure in the window is
        not kept (the table holds only sources that matter now)."""
        state.expire(trio.current_time() if now is None else now)
        if not state.checking and not state.failures and self._sources.get(source) is state:
            del self._sources[source]
