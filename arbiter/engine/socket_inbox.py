"""What a wire connection receives, as :class:`~arbiter.engine.socket_transport.SocketTransport`
keeps it: the frames let through at the wire's rate (:class:`FrameGate`),
and the engine's lines held until the conversation takes them
(:class:`Inbox`, bounded: an engine cannot make the server hold its flood).
"""

from __future__ import annotations

from collections import deque

import trio

from arbiter.engine.transport import Received
from protocol import wire
from protocol.wire import NEED_DATA, FrameRate, WireConnection

__all__ = ["FrameGate", "Inbox", "MAX_INBOX_BYTES"]

#: bytes of engine lines the transport keeps that nobody has taken yet (an
#: idle engine's unrequested output): a few of the largest lines; over it the
#: peer floods and its stream ends
MAX_INBOX_BYTES = 4 * wire.MAX_FRAME_BYTES


class FrameGate:
    """The frames a connection has decoded, let through in order, at most
    :data:`~protocol.wire.MAX_FRAMES_PER_SECOND` (:class:`~protocol.wire.FrameRate`):
    a frame over the rate is held until its time (the flooder's own
    connection waits, nobody else)."""

    def __init__(self) -> None:
        self._rate = FrameRate()
        #: a frame read, waiting for the rate (until ``_until``)
        self.held: wire.Frame | None = None
        self._until = 0.0

    def next(self, conn: WireConnection, now: float) -> wire.Frame | float | None:
        """At ``now``: the next frame to take, or the seconds to wait before
        it (a float, over 0), or None when ``conn`` has no whole frame.
        :class:`~protocol.wire.WireError` from ``conn``'s decoding."""
        frame = self.held
        if frame is None:
            event = conn.next_event()
            if event is NEED_DATA:
                return None
            wait = self._rate.wait(now)
            if wait:
                self.held, self._until = event, now + wait
                return wait
            return event
        left = self._until - now
        if left > 0:
            return left
        self.held = None
        return frame


class Inbox:
    """The engine's lines received and not taken yet, at most
    :data:`MAX_INBOX_BYTES` of them; :attr:`arrived` is set by the next
    :meth:`put` (a receiver that waits sets it)."""

    def __init__(self) -> None:
        self._items: deque[Received] = deque()
        self._bytes = 0
        #: the event a waiting receiver waits on (None: nobody waits)
        self.arrived: trio.Event | None = None

    def __bool__(self) -> bool:
        return bool(self._items)

    @property
    def held_bytes(self) -> int:
        """Bytes of the lines held."""
        return self._bytes

    def fits(self, lines: list[str]) -> bool:
        """Whether ``lines`` stay within :data:`MAX_INBOX_BYTES` with what is held."""
        return self._bytes + sum(map(len, lines)) <= MAX_INBOX_BYTES

    def put(self, received: Received) -> None:
        self._items.append(received)
        self._bytes += sum(map(len, received[0]))
        if self.arrived is not None:
            self.arrived.set()
            self.arrived = None

    def take(self) -> Received:
        received = self._items.popleft()
        self._bytes -= sum(map(len, received[0]))
        return received

    async def wait(self) -> None:
        """Until the next :meth:`put`."""
        arrived = self.arrived = trio.Event()
        try:
            await arrived.wait()
        finally:  # (cancelled too: a put must not go to an event nobody waits on)
            if self.arrived is arrived:
                self.arrived = None
