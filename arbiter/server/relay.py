"""What ``arbiter connect`` relays, as bytes in and bytes out (no I/O, no trio).

:class:`Relay` is the one place that decides what the client does with
what it reads, whichever loop does the reading (``client.py``: trio tasks
over a TLS stream; ``relay_loop.py``: one blocking poll loop in a thread
over a plain TCP socket)::

    relay = Relay(conn)                        # conn: the client's WireConnection, welcomed
    to_engine, to_server = relay.server_data(chunk)  # b"": the connection ended
    to_server = relay.engine_data(chunk)       # b"": the engine's output ended
    to_server = relay.eof(status)              # after the output ended: the eof frame

The loops write the bytes returned and look at :attr:`Relay.ended` (the
relay is over: the server closed for a final reason, the engine ended, the
server broke the wire) and :attr:`Relay.dropped` (the connection dropped, or
the server closed it for a reason that is not final: a reconnect follows)
after each call.
"""

from __future__ import annotations

import sys
import time

from protocol import wire
from protocol.codec import LineSplitter
from protocol.errors import ProtocolError
from protocol.wire import NEED_DATA, WireConnection, WireError

__all__ = ["Relay", "say"]


def say(text: str) -> None:
    """One line of ``arbiter connect`` on stderr."""
    print(f"arbiter connect: {text}", file=sys.stderr, flush=True)


class Relay:
    """One connection's relay decisions (``specs/wire.md`` §The server and
    the client): the server's ``lines`` become the engine's input, its
    ``sync`` is answered at once, ``resume`` and ``game_over`` are printed,
    ``close`` ends the relay; the engine's output becomes ``lines`` frames
    (the one carrying a ``bestmove`` with ``think``: the time from the
    ``go`` handed to the engine to the ``bestmove`` read, on
    :func:`time.monotonic`), then one ``eof``.  A ``close`` whose reason is
    final (:func:`protocol.wire.is_final`) ends the relay; any other is a
    drop (the client connects again).

    Not thread-safe: one loop at a time calls it."""

    def __init__(self, conn: WireConnection):
        self.conn = conn
        self.splitter = LineSplitter()
        self.go_at: float | None = None  # when the last go line was handed to the engine
        #: why the relay ended (None: it goes on, or it dropped)
        self.ended: str | None = None
        #: why the connection dropped, or was closed for a reason that is not
        #: final (a reconnect follows)
        self.dropped: str | None = None
        #: the server closed the connection for a fault of the engine (its ``fault`` reason)
        self.faulted = False
        #: games of this connection the server said were over (``game_over``)
        self.games = 0
        #: the engine's output ended: the eof's reason (``closed``, ``overlong``)
        self.output_end: str | None = None

    @property
    def over(self) -> bool:
        """Ended or dropped: the loop stops."""
        return self.ended is not None or self.dropped is not None

    # -- the server's side -----------------------------------------------------

    def server_data(self, data: bytes | bytearray) -> tuple[bytes, bytes]:
        """Bytes read from the server (``b""``: its stream ended); the bytes
        for the engine's input and for the server (sync answers)."""
        self.conn.receive_data(data)
        return self.take_frames()

    def take_frames(self) -> tuple[bytes, bytes]:
        """The frames already received (after the handshake some may be),
        as :meth:`server_data` returns them.

        Kept for speed (``bench/README.md`` §The match server): the lines of
        every frame read at once go to the engine as one write."""
        conn = self.conn
        lines: list[str] = []
        replies = b""
        try:
            while (frame := conn.next_event()) is not NEED_DATA:
                if type(frame) is wire.Lines:
                    lines += frame.lines
                elif isinstance(frame, wire.Sync):
                    replies += conn.send(wire.Sync(frame.seq))
                elif isinstance(frame, wire.Resume):
                    say(f"resuming game {frame.game} at ply {frame.ply}")
                elif isinstance(frame, wire.GameOver):
                    self.games += 1
                    say(f"game {frame.game}: {frame.result} ({frame.termination})")
                elif isinstance(frame, wire.Close):
                    why = f"the server closed the connection ({frame.reason})"
                    if wire.is_final(frame.reason):
                        self.ended = why
                    else:
                        self.dropped, self.faulted = why, wire.FAULT.says(frame.reason)
                    return b"", replies
        except WireError as exc:
            if "without a close" in exc.reason or "inside a frame" in exc.reason:
                self.dropped = f"the connection dropped ({exc.reason})"
            else:
                self.ended = f"the server broke the wire ({exc.reason})"
            return b"", replies
        if not lines:
            return b"", replies
        if any(line.startswith("go") for line in lines):
            self.go_at = time.monotonic()
        return "".join(f"{line}\n" for line in lines).encode(), replies

    def silent(self) -> None:
        """Nothing came from the server for :data:`~protocol.wire.IDLE_TIMEOUT`."""
        self.dropped = f"the server was silent for {wire.IDLE_TIMEOUT:g} s"

    def input_closed(self) -> None:
        """A write to the engine's input failed: the engine closed it."""
        self.ended = "the engine closed its input"

    def write_failed(self) -> None:
        """A write to the server failed: the connection dropped."""
        if not self.over:
            self.dropped = "the connection dropped (a write failed)"

    # -- the engine's side -----------------------------------------------------

    def engine_data(self, data: bytes | bytearray) -> bytes:
        """A chunk of the engine's output (``b""``: it ended); the frames
        for the server.  A line over the protocol's limit ends the output
        (``overlong``); after the end, :meth:`eof` gives the last frame."""
        if not data:
            self.output_end = self.output_end or "closed"
            return b""
        try:
            lines = self.splitter.feed(data)
        except ProtocolError:
            self.output_end = "overlong"
            return b""
        if not lines:
            return b""
        think = None
        if self.go_at is not None and any(line.startswith("bestmove") for line in lines):
            think = round((time.monotonic() - self.go_at) * 1000)
            self.go_at = None
        send = self.conn.send
        frames = wire.lines_frames(lines, think)
        if len(frames) == 1:
            return send(frames[0])
        return b"".join(send(frame) for frame in frames)

    def eof(self, status: str | None) -> bytes:
        """The ``eof`` frame once the output ended, ``status`` the engine's
        exit (None: still running); the relay is then over."""
        detail = status or "closed its output"
        data = self.conn.send(wire.Eof(self.output_end or "closed", detail))
        self.ended = f"the engine {detail}"
        return data

    # -- the wire's own frames -------------------------------------------------

    def heartbeat(self) -> bytes:
        return self.conn.send(wire.Heartbeat())

    def close(self, reason: str) -> bytes:
        """The ``close`` frame, or ``b""`` when the connection is closed
        already (the server's ``close`` came)."""
        try:
            return self.conn.send(wire.Close(reason))
        except wire.LocalWireError:
            return b""
