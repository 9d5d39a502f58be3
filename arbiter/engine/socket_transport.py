"""A remote engine's connection as a :class:`~arbiter.engine.transport.Transport`:
the engine's UGI lines inside wire frames (``specs/wire.md``) over a trio stream.

The server authenticates a connection first (``hello``, ``welcome``: the
wire's handshake, not the engine's); :class:`SocketTransport` then carries
the open connection, and :class:`~arbiter.engine.conversation.Engine` talks
over it exactly as over a pipe.  What the transport reads that is not the
engine's (heartbeats) is taken here; what breaks the wire ends the stream
with the reason (``end_detail``), and the transport tries to tell the peer
with a ``close`` frame.
"""

from __future__ import annotations

import trio

from arbiter.engine.process import IOLog
from arbiter.engine.transport import End, Received, TransportClosed
from protocol import wire
from protocol.wire import NEED_DATA, WireConnection, WireError, WireState

__all__ = ["SocketTransport", "close_stream"]

#: how long a closing transport waits to hand its ``close`` frame to the
#: stream (seconds): the reason is a courtesy; a peer that does not read
#: must not hold the transport
CLOSE_SEND_TIMEOUT = 1.0

_ENDS = {"closed": End.CLOSED, "overlong": End.OVERLONG}


class SocketTransport:
    """The engine lines of an open wire connection ``conn`` (server role,
    state ``OPEN``) over ``stream``.  One task at a time sends, one receives."""

    def __init__(self, stream: trio.abc.Stream, conn: WireConnection, *,
                 log: IOLog | None = None):
        if conn.state is not WireState.OPEN:
            raise ValueError(f"the connection is {conn.state.value}, not open")
        self._stream = stream
        self._conn = conn
        self._log = log
        self._detail: str | None = None  # why the stream ended, once it has
        self._end_given = False  # receive() has returned the end
        #: the engine's think time (ms) the client reported with its last lines, if any
        self.think: int | None = None

    @property
    def alive(self) -> bool:
        return self._detail is None

    def note(self, text: str) -> None:
        if self._log is not None:
            self._log.write("#", text)

    async def send(self, data: bytes) -> None:
        if self._detail is not None:
            raise TransportClosed(f"the connection is over: {self._detail}")
        lines = data.decode("utf-8", "replace").splitlines()
        if self._log is not None:
            for line in lines:
                self._log.write(">", line)
        try:
            frames = b"".join(self._conn.send(frame) for frame in wire.lines_frames(lines))
            await self._stream.send_all(frames)
        except (wire.LocalWireError, trio.BrokenResourceError, trio.ClosedResourceError,
                OSError) as exc:
            self._ended(f"closed the connection ({type(exc).__name__})")
            raise TransportClosed("the connection is closed") from None

    async def receive(self) -> Received:
        while True:
            received = self._take()
            if received is not None:
                if self._conn.error is not None:
                    await self._say_close(self._conn.error)
                return received
            try:
                data = await self._stream.receive_some(wire.READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                data = b""
            try:
                self._conn.receive_data(data)
            except WireError as exc:
                await self._broken(exc.reason)

    def receive_nowait(self) -> Received | None:
        # only what is buffered already: a stream cannot be read without waiting
        return self._take()

    async def end_detail(self) -> str:
        return self._detail or "closed the connection"

    async def aclose(self) -> None:
        """Close the connection (a ``close`` frame first, if it is still open)."""
        if self._conn.state is WireState.OPEN:
            await self._say_close("the server closed the connection")
        self._ended("was disconnected by the server")
        await self._stream.aclose()

    # -- reading ----------------------------------------------------------------------

    def _take(self) -> Received | None:
        """The lines of the frames buffered (and the end, if one came); None
        when none is buffered.  A broken wire is an end (CLOSED)."""
        if self._detail is not None:  # ended by a send, or by bytes that broke the wire
            if self._end_given:
                return None
            self._end_given = True
            return ([], trio.current_time(), End.CLOSED)
        lines: list[str] = []
        end: End | None = None
        try:
            while end is None:
                event = self._conn.next_event()
                if event is NEED_DATA:
                    break
                if isinstance(event, wire.Lines):
                    lines += event.lines
                    if event.think is not None:
                        self.think = event.think
                elif isinstance(event, wire.Eof):
                    end = _ENDS[event.reason]
                    self._ended(event.detail or "closed its output")
                elif isinstance(event, wire.Close):
                    end = End.CLOSED
                    self._ended(f"closed the connection ({event.reason})")
                # heartbeats and sync answers are the connection's, not the engine's
        except WireError as exc:
            end = End.CLOSED
            self._ended(f"broke the wire ({exc.reason})")
        if not lines and end is None:
            return None
        self._end_given = end is not None
        if self._log is not None:
            for line in lines:
                self._log.write("<", line)
        return (lines, trio.current_time(), end)

    async def _broken(self, reason: str) -> None:
        self._ended(f"broke the wire ({reason})")
        await self._say_close(reason)

    async def _say_close(self, reason: str) -> None:
        try:
            data = self._conn.send(wire.Close(reason[:wire.MAX_TEXT_CHARS]))
        except wire.LocalWireError:
            return
        with trio.move_on_after(CLOSE_SEND_TIMEOUT):
            try:
                await self._stream.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass

    def _ended(self, detail: str) -> None:
        if self._detail is None:
            self._detail = detail


async def close_stream(stream: trio.abc.Stream) -> None:
    """Close ``stream``, even when cancelled, within :data:`CLOSE_SEND_TIMEOUT`
    (a TLS stream's goodbye is a write, which a peer that does not read blocks);
    past it, forcefully."""
    with trio.CancelScope(shield=True):
        with trio.move_on_after(CLOSE_SEND_TIMEOUT) as scope:
            try:
                await stream.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        if scope.cancelled_caught:
            await trio.aclose_forcefully(stream)
