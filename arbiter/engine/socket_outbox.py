"""What a wire connection sends (``specs/wire.md``): the bytes of its frames,
queued by any task without waiting and written by one writer task, with the
bounds that keep a peer that does not read from holding the server; and
what it sends of its own accord (:class:`Keeper`: heartbeats, clock syncs).

:class:`Outbox` is the sending half of
:class:`~arbiter.engine.socket_transport.SocketTransport`: the transport
encodes frames and decides when the connection ends; the outbox holds the
bytes, writes them, and says when the peer does not read (over
:data:`~protocol.wire.MAX_SEND_BUFFER` queued, or a write stuck for
:data:`SEND_STALL_TIMEOUT`).
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from arbiter.engine import fdio
from arbiter.engine.streams import CLOSE_SEND_TIMEOUT, CLOSED_ERRORS, write_now
from protocol import wire

__all__ = ["Outbox", "Keeper", "Dropped", "SEND_STALL_TIMEOUT"]

#: a write that has not gone through after this many seconds: the peer does
#: not read (the same patience as for a peer that sends nothing)
SEND_STALL_TIMEOUT = wire.IDLE_TIMEOUT


class Dropped(Exception):
    """The stream dropped without a ``close`` (EOF, reset, silence): maybe resumable."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class Outbox:
    """The bytes held for the peer and the one task that writes them
    (:meth:`write_loop`, on the current stream).  :meth:`put` never waits."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._in_flight = 0  # bytes taken by the writer, not yet written
        self._scope: trio.CancelScope | None = None  # the write under way (shielded)
        self._wake = trio.Event()
        #: the last frames are queued: the writer flushes them, then returns
        self.closing = False
        #: when bytes last went to the stream (the keeper's heartbeat counts from it)
        self.last_sent = trio.current_time()

    @property
    def queued(self) -> int:
        """Bytes held for the peer (queued and being written)."""
        return len(self._buffer) + self._in_flight

    @property
    def idle(self) -> bool:
        """Nothing queued nor being written."""
        return not self._buffer and not self._in_flight

    def put(self, data: bytes, now: float, stream: trio.abc.Stream, fd: int | None,
            *, detached: bool) -> bool:
        """Queue ``data`` (encoded frames), read at ``now``; False when that
        would hold over :data:`~protocol.wire.MAX_SEND_BUFFER` for the peer
        (all held is dropped then: the peer does not read).

        Kept for speed (``bench/README.md`` §The match server): when nothing
        is queued, the bytes are written at once in the caller's step (``fd``:
        the transport's own descriptor of a plain TCP socket while it is
        served, else :func:`~arbiter.engine.streams.write_now` on ``stream``),
        and the writer task is woken only for what the socket did not take.
        Nothing is written while ``detached`` (no stream): the bytes wait."""
        if len(self._buffer) + self._in_flight + len(data) > wire.MAX_SEND_BUFFER:
            self._buffer.clear()
            return False
        if not self._buffer and not self._in_flight and not detached:
            if fd is None:
                sent = write_now(stream, data)
            else:
                try:
                    sent = fdio.write_now(fd, data)
                except OSError:  # broken: the writer task deals with it
                    sent = 0
            if sent == len(data):
                self.last_sent = now
                return True
            data = data[sent:]
        self._buffer += data
        self._wake.set()
        return True

    def close(self) -> None:
        """The last frames are queued: the writer flushes them and returns."""
        self.closing = True
        self._wake.set()

    def clear(self) -> None:
        """Drop what is held (the stream is gone: a resume starts afresh)."""
        self._buffer.clear()
        self._in_flight = 0

    def cut(self) -> None:
        """The write under way, if any, ends within :data:`CLOSE_SEND_TIMEOUT`."""
        scope = self._scope
        if scope is not None:
            scope.deadline = min(scope.deadline, trio.current_time() + CLOSE_SEND_TIMEOUT)

    async def write_loop(self, stream: trio.abc.Stream) -> bool:
        """Write what is queued to ``stream`` until :attr:`closing` and all
        is written; True when a write was stuck for :data:`SEND_STALL_TIMEOUT`
        (the peer does not read), :class:`Dropped` when the stream broke
        before closing."""
        while True:
            while not self._buffer:
                if self.closing:
                    return False
                await self._wake.wait()
                self._wake = trio.Event()
            await trio.lowlevel.checkpoint_if_cancelled()
            data = bytes(self._buffer)
            self._buffer.clear()
            self._in_flight = len(data)
            timeout = CLOSE_SEND_TIMEOUT if self.closing else SEND_STALL_TIMEOUT
            # A write once begun is not cut by a cancellation from outside (a
            # server stopping): a cut write breaks a TLS stream and leaves half
            # a frame on a plain one, so the ``close`` frame could not follow.
            # When the other tasks end, :meth:`cut` gives it at most
            # CLOSE_SEND_TIMEOUT more: a peer that does not read holds nothing.
            scope = self._scope = trio.CancelScope(shield=True, deadline=trio.current_time() + timeout)
            try:
                with scope:
                    try:
                        await stream.send_all(data)
                    except CLOSED_ERRORS:
                        if self.closing:
                            return False
                        raise Dropped("dropped the connection without a close") from None
            finally:
                self._scope = None
            self._in_flight = 0
            if scope.cancelled_caught:
                return not self.closing
            self.last_sent = trio.current_time()

    async def flush(self, stream: trio.abc.Stream) -> None:
        """What is queued (the last ``close``), written within
        :data:`CLOSE_SEND_TIMEOUT`, when the writer was cancelled before it could."""
        if not self._buffer or self._in_flight:
            return
        data = bytes(self._buffer)
        self._buffer.clear()
        with trio.move_on_after(CLOSE_SEND_TIMEOUT):
            try:
                await stream.send_all(data)
            except CLOSED_ERRORS:
                pass


class Keeper:
    """What a connection sends of its own accord (``specs/wire.md``
    §Heartbeats, §Clock fairness): a ``heartbeat`` after
    :data:`~protocol.wire.HEARTBEAT_INTERVAL` without a frame sent, and a
    ``sync`` every :data:`~protocol.wire.SYNC_INTERVAL` while a game is on
    (one outstanding), whose answer measures the round trip (:attr:`rtt`)."""

    def __init__(self, outbox: Outbox, queue: Callable[[wire.Frame], None]):
        self._outbox = outbox
        self._queue = queue
        self._seq = 0
        self._sync_at: float | None = None  # when the outstanding sync went
        #: a go went since the last sync (the sender says so)
        self.game_on = False
        #: the last round trip measured (seconds), None before one
        self.rtt: float | None = None

    def answered(self, now: float) -> None:
        """The peer answered a ``sync`` at ``now``."""
        if self._sync_at is not None:
            self.rtt = now - self._sync_at
        self._sync_at = None

    def forget_sync(self) -> None:
        """A new stream: the outstanding sync will not be answered."""
        self._sync_at = None

    async def run(self, over: Callable[[], bool]) -> None:
        """Keep the connection until ``over()`` (checked after each wake)."""
        outbox = self._outbox
        next_sync = trio.current_time() + wire.SYNC_INTERVAL
        while not over():
            await trio.sleep_until(min(outbox.last_sent + wire.HEARTBEAT_INTERVAL, next_sync))
            now = trio.current_time()
            if now >= next_sync:
                next_sync = now + wire.SYNC_INTERVAL
                if self.game_on and self._sync_at is None:
                    self.game_on = False
                    self._seq += 1
                    self._sync_at = now
                    self._queue(wire.Sync(self._seq))
            if now >= outbox.last_sent + wire.HEARTBEAT_INTERVAL:
                if outbox.idle:  # else the writer is sending
                    self._queue(wire.Heartbeat())
                outbox.last_sent = now  # (no spin while a write is stuck)
