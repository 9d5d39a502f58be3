"""A trio stream's writes and close as the wire's connections need them
(:mod:`arbiter.engine.socket_transport`, the server's listener, ``arbiter
connect``)."""

from __future__ import annotations

import trio

from arbiter.engine import fdio

__all__ = ["CLOSE_SEND_TIMEOUT", "CLOSED_ERRORS", "close_stream", "write_now"]

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
