"""A trio stream's writes and close as the wire's connections need them
(:mod:`arbiter.engine.socket_transport`, the server's listener, ``arbiter
connect``)."""

from __future__ import annotations

import os

import trio

from arbiter.engine import fdio

__all__ = ["CLOSE_SEND_TIMEOUT", "CLOSED_ERRORS", "SecondReader", "close_stream", "write_now"]

#: how long a closing transport waits to hand its last frames (``close``) to
#: the stream (seconds): the reason is a courtesy; a peer that does not read
#: must not hold the transport
CLOSE_SEND_TIMEOUT = 1.0
#: what a stream raises once it is closed or broken
CLOSED_ERRORS = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)


def write_now(stream: trio.abc.Stream, data: bytes) -> int:
    """Bytes of ``data`` written at once to a plain TCP ``stream`` (its
    socket is non-blocking), without waiting; 0 for any other stream or
    when the socket is full or broken (the writer task then deals with it).

    Kept for speed (one seam, as ``PipeTransport`` writes its pipe): the
    usual frame goes out in the sender's own step, not one scheduler pass
    later in the writer's (``bench/README.md`` §The match server)."""
    if type(stream) is not trio.SocketStream:
        return 0
    try:
        return fdio.write_now(stream.socket.fileno(), data)
    except OSError:  # a broken connection
        return 0


async def close_stream(stream: trio.abc.Stream) -> None:
    """Close ``stream``, even when cancelled, within :data:`CLOSE_SEND_TIMEOUT`
    (a TLS stream's goodbye is a write, which a peer that does not read blocks);
    past it, forcefully.  A plain TCP stream's close never waits: it is closed
    at once (a server turning a flood of connections away pays no more)."""
    if type(stream) is trio.SocketStream:
        stream.socket.close()
        return
    with trio.CancelScope(shield=True):
        with trio.move_on_after(CLOSE_SEND_TIMEOUT) as scope:
            try:
                await stream.aclose()
            except CLOSED_ERRORS:
                pass
        if scope.cancelled_caught:
            await trio.aclose_forcefully(stream)


class SecondReader:
    """Kept for speed (``bench/README.md`` §The match server): a plain TCP
    socket read by a second task in its own step (the receiver of a
    connection whose reader task waits on the socket too), so that a frame
    reaches it without a task hop.  It waits on its own duplicate descriptor
    (trio lets one task wait per descriptor), which another task wakes with
    :meth:`wake` when it hands the receiver what it waits for."""

    def __init__(self, socket_fd: int):
        #: the duplicate descriptor (also writable: the same socket)
        self.fd = os.dup(socket_fd)
        #: a task waits in :meth:`read`
        self.waiting = False

    async def read(self, max_bytes: int) -> bytes | None:
        """The next bytes once the socket is readable (``b""``: the end, a
        reset too); None when woken (:meth:`wake`), closed, or when the
        other task read the bytes first."""
        self.waiting = True
        try:
            await trio.lowlevel.wait_readable(self.fd)
        except trio.ClosedResourceError:  # woken, or closed
            return None
        finally:
            self.waiting = False
        return fdio.read_now(self.fd, max_bytes)

    def wake(self) -> None:
        """Wake a task waiting in :meth:`read` (the descriptor stays open)."""
        if self.waiting:
            trio.lowlevel.notify_closing(self.fd)

    def close(self) -> None:
        """Close the descriptor (a task waiting in :meth:`read` wakes)."""
        trio.lowlevel.notify_closing(self.fd)
        os.close(self.fd)
