"""A remote engine's connection as a :class:`~arbiter.engine.transport.Transport`:
the engine's UGI lines inside wire frames (``specs/wire.md``) over a trio stream.

The server authenticates a connection first (``hello``, ``welcome``: the
wire's handshake, not the engine's); :class:`SocketTransport` then carries
the open connection, and :class:`~arbiter.engine.conversation.Engine` talks
over it exactly as over a pipe.

The transport has its own tasks (:meth:`SocketTransport.run`), so that the
connection is served whoever waits on the engine:

- a **reader** takes every frame as it arrives (at most
  :data:`~protocol.wire.MAX_FRAMES_PER_SECOND`, :class:`~protocol.wire.FrameRate`),
  stamps the engine's lines with the time they arrived, answers the wire's
  own frames (heartbeats, sync answers: the round trip), and knows a silent
  peer (:data:`~protocol.wire.IDLE_TIMEOUT`); while :meth:`SocketTransport.receive`
  waits on a plain TCP socket, receive() reads it itself by the same rules
  (its own duplicate descriptor, so that both can wait on the socket), and
  the reader leaves the read to it;
- a **writer** (:class:`~arbiter.engine.socket_outbox.Outbox`): :meth:`send`
  never waits on the peer, and a peer that does not read is closed;
- a **keeper** (:class:`~arbiter.engine.socket_outbox.Keeper`) sends
  heartbeats and, while a game is on, clock syncs.

Clock fairness (``specs/wire.md`` §Clock fairness): the time a ``bestmove``
is credited with (``Received.time``) is the server's measured time less the
lag compensation of the game's :class:`~protocol.wire.LagQuota`; each such
move's round trip and compensation are kept in :attr:`lag`.  The rules'
state, and what a resume tells a fresh engine, is
:class:`~arbiter.engine.remote_session.RemoteSession` (pure, from the lines
sent); this module moves the bytes.

Disconnects (``specs/wire.md`` §Disconnect and resume): when the stream drops
without a ``close`` and :attr:`hold` says so (a game is on), the transport
waits detached for :meth:`attach` (the same engine reconnecting) instead of
ending the engine's stream; the clock goes on meanwhile, and the fresh
engine is restarted (:class:`~arbiter.engine.socket_resume.Restart`).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

import trio

from arbiter.engine.fdio import read_now
from arbiter.engine.iolog import IOLog
from arbiter.engine.remote_session import RemoteSession
from arbiter.engine.socket_inbox import MAX_INBOX_BYTES, FrameGate, Inbox
from arbiter.engine.socket_outbox import SEND_STALL_TIMEOUT, Dropped, Keeper, Outbox
from arbiter.engine.socket_resume import RESUME_HANDSHAKE_TIMEOUT, Restart
from arbiter.engine.streams import CLOSE_SEND_TIMEOUT, CLOSED_ERRORS, SecondReader, close_stream, write_now
from arbiter.engine.transport import End, Received, Transport, TransportClosed
from protocol import wire
from protocol.wire import WireConnection, WireError, WireState

__all__ = ["SocketTransport", "CLOSE_SEND_TIMEOUT", "SEND_STALL_TIMEOUT", "RESUME_HANDSHAKE_TIMEOUT", "close_stream",
           "write_now"]

_ENDS = {"closed": End.CLOSED, "overlong": End.OVERLONG}


class SocketTransport(Transport):
    """The engine lines of an open wire connection ``conn`` (server role,
    state ``OPEN``) over ``stream``.  One task at a time sends, one receives;
    :meth:`run` must be running (in the owner's nursery) for anything to move."""

    def __init__(self, stream: trio.abc.Stream, conn: WireConnection, *,
                 log: IOLog | None = None):
        if conn.state is not WireState.OPEN:
            raise ValueError(f"the connection is {conn.state.value}, not open")
        self._stream = stream
        self._conn = conn
        self._log = log
        self._detail: str | None = None  # why the stream ended, once it has
        self._inbox = Inbox()
        self._outbox = Outbox()
        self._finished = trio.Event()  # run() is over
        self._attached = trio.Event()
        self._stream_over = trio.Event()  # the current stream is closed
        self._gate = FrameGate()
        self._direct: SecondReader | None = None  # receive()'s reads of a plain TCP socket
        self._reader_scope: trio.CancelScope | None = None  # the reader waits (to wake it)
        self._handed: Dropped | None = None  # a drop receive() found, for the reader to raise
        now = trio.current_time()
        self._last_received = now
        self._keeper = Keeper(self._outbox, self._queue)
        #: the engine's session as the lines it was sent tell it (clock fairness, resume)
        self.session_state = RemoteSession()
        #: the engine's think time (ms) the client reported with its last bestmove
        self.think: int | None = None
        #: says whether a drop should wait for a reconnect (None: never)
        self.hold: Callable[[], bool] | None = None
        #: the transport waits for a reconnect since this time (None: attached)
        self.detached_since: float | None = None
        #: session of the connection's welcome (a reconnect names it)
        self.session = ""

    @property
    def rtt(self) -> float | None:
        """The last round trip measured by sync (seconds), None before one."""
        return self._keeper.rtt

    @property
    def lag(self) -> list[tuple[int | None, int]]:
        """Per bestmove of the game: (round trip ms or None, compensation ms)."""
        return self.session_state.lag

    # -- the Transport protocol ---------------------------------------------------------

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
        now = trio.current_time()
        if self.session_state.sent(lines, now):
            self._keeper.game_on = True
        if self.detached_since is not None:
            return  # kept by the session state if it matters; replayed by the resume
        try:
            self._queue_at(wire.lines_frames(lines), now)
        except wire.LocalWireError:
            self._end("closed the connection (a line the wire cannot carry)")
        if self._detail is not None:
            raise TransportClosed(f"the connection is over: {self._detail}")

    async def receive(self) -> Received:
        while not self._inbox:
            direct = self._direct
            if direct is None or self._gate.held is not None or self._handed is not None:
                await self._inbox.wait()  # (for a push: the reader task reads)
            else:
                await self._receive_direct(direct)
        return self._inbox.take()

    def receive_nowait(self) -> Received | None:
        return self._inbox.take() if self._inbox else None

    async def end_detail(self) -> str:
        return self._detail or "closed the connection"

    # -- the owner's side ---------------------------------------------------------------

    # -- the seat (Transport) ------------------------------------------------------------

    @property
    def lag_allowance(self) -> float:
        """The most the lag quota can take off the search in progress
        (seconds; 0 without a quota or a search): the match waits that much
        past the clock's deadline for its bestmove (specs/wire.md §Clock fairness)."""
        return self.session_state.lag_allowance()

    @property
    def last_lag(self) -> tuple[int | None, int] | None:
        lag = self.session_state.lag
        return lag[-1] if lag else None

    @property
    def detached(self) -> bool:
        return self.detached_since is not None

    def seat(self, plays_p1: bool) -> None:
        self.session_state.plays_p1 = plays_p1

    def game_over(self, game: str, result: str, termination: str, detail: str) -> None:
        """Tell the client a game of its engine ended (``game_over``, information)."""
        if self._detail is None and self.detached_since is None:
            self._queue(wire.GameOver(game[:wire.MAX_ID_CHARS], result[:wire.MAX_TEXT_CHARS],
                                      termination[:wire.MAX_TEXT_CHARS], detail[:wire.MAX_TEXT_CHARS]))

    def attach(self, stream: trio.abc.Stream, conn: WireConnection) -> trio.Event:
        """The engine reconnected (a resumed ``welcome`` went on ``conn``):
        serve it over ``stream`` from now on.  The event is set once the
        transport is done with ``stream`` (closed it)."""
        if self.detached_since is None or self._detail is not None or self._attached.is_set():
            raise ValueError("the transport is not waiting for a reconnect")
        self._stream, self._conn = stream, conn
        self._stream_over = trio.Event()
        self._gate = FrameGate()
        self._last_received = self._outbox.last_sent = trio.current_time()
        self._keeper.forget_sync()
        self._attached.set()
        return self._stream_over

    async def aclose(self, reason: str = wire.RELEASED.text()) -> None:
        """Close the connection (a ``close`` frame giving ``reason``, one of
        :data:`protocol.wire.REASONS`, if it is still open) and wait, within
        a bound, for :meth:`run` to end."""
        self._end(f"was disconnected by the server ({reason})", close=reason)
        with trio.move_on_after(2 * CLOSE_SEND_TIMEOUT):
            await self._finished.wait()

    def _queued_bytes(self) -> int:
        """Bytes held for the peer (queued and being written)."""
        return self._outbox.queued

    async def wait_finished(self) -> None:
        """Until :meth:`run` is over (the stream ended and is closed)."""
        await self._finished.wait()

    async def run(self) -> None:
        """Serve the connection (reader, writer, keeper) until it ends; a
        drop while :attr:`hold` says so waits for :meth:`attach` and goes
        on over the new stream.  The stream is closed on return."""
        try:
            resumed = False
            while self._detail is None:
                try:
                    await self._serve(resumed)
                except Dropped as dropped:
                    await close_stream(self._stream)
                    self._stream_over.set()
                    if not (self.hold is not None and self.hold()):
                        self._end(dropped.detail)
                        break
                    await self._wait_attach(dropped.detail)
                    resumed = True
        finally:
            stopping = trio.current_effective_deadline() == -math.inf  # cancelled: the owner stops
            self._end("was disconnected by the server",
                      close=wire.STOP.text() if stopping else wire.RELEASED.text())
            with trio.CancelScope(shield=True):
                await self._flush()
            await close_stream(self._stream)
            self._stream_over.set()
            self._finished.set()

    # -- tasks ---------------------------------------------------------------------------

    async def _serve(self, resumed: bool) -> None:
        """The three tasks on the current stream; :class:`Dropped` if it
        dropped, a return once the transport ended."""
        dropped: list[Dropped] = []
        self._handed = None
        if type(self._stream) is trio.SocketStream:
            self._direct = SecondReader(self._stream.socket.fileno())

        async def guard(task: Callable[[], Awaitable[None]], last: bool) -> None:
            try:
                await task()
            except Dropped as exc:
                dropped.append(exc)
                nursery.cancel_scope.cancel()
            finally:
                if not last:
                    self._cut_write()
            if last:  # the writer: once it has flushed the last frames, all stop
                nursery.cancel_scope.cancel()

        try:
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                if self._outbox.closing:  # ended while detached or before run
                    nursery.cancel_scope.deadline = trio.current_time() + CLOSE_SEND_TIMEOUT
                nursery.start_soon(guard, self._read_loop, False)
                nursery.start_soon(guard, self._write_loop, True)
                nursery.start_soon(self._keeper.run, lambda: self._detail is not None)
                if resumed:
                    nursery.start_soon(self._resume)
        finally:
            self._scope = None
            self._close_direct()
        if dropped and self._detail is None:
            raise dropped[0]

    async def _read_loop(self) -> None:
        """Read and take frames until the stream is over (:class:`Dropped`
        if it dropped).  While :meth:`receive` waits on the socket itself,
        this task still waits on it (the frames a receive() did not ask for,
        silence) but leaves the read to receive(), woken in the same pass."""
        fd = self._stream.socket.fileno() if type(self._stream) is trio.SocketStream else None
        while self._detail is None:
            if self._handed is not None:
                raise self._handed
            with trio.CancelScope() as scope:
                self._reader_scope = scope
                wait = self._consume(trio.current_time())
                if wait:
                    await trio.sleep(wait)  # the flooder's own connection waits, nobody else
                    continue
                if self._detail is not None:
                    return
                data = await self._read_chunk(fd)
            self._reader_scope = None
            if not scope.cancelled_caught:  # else receive() handed it something
                self._take_data(data)

    async def _read_chunk(self, fd: int | None) -> bytes | bytearray | None:
        """The next bytes of the stream (b"": it ended); None after
        :data:`~protocol.wire.IDLE_TIMEOUT` of silence (counted from the
        last bytes read, by this task or by :meth:`receive`).  A plain TCP
        socket is read directly (``wait_readable``, one ``os.read``: no extra
        scheduler pass after the read, unlike trio's ``receive_some``);
        while receive() waits on it, receive() reads, woken in the same pass."""
        while True:
            with trio.move_on_at(self._last_received + wire.IDLE_TIMEOUT):
                if fd is None:
                    try:
                        return await self._stream.receive_some(wire.READ_CHUNK)
                    except CLOSED_ERRORS:
                        return b""
                while True:
                    try:
                        await trio.lowlevel.wait_readable(fd)
                    except trio.ClosedResourceError:
                        return b""
                    if self._direct is not None and self._direct.waiting:
                        continue  # receive() waits on the socket too: it reads in this pass
                    data = read_now(fd, wire.READ_CHUNK)
                    if data is not None:
                        return data
            if trio.current_time() >= self._last_received + wire.IDLE_TIMEOUT:
                return None  # (else receive() read meanwhile: the silence counts from then)

    async def _receive_direct(self, direct: SecondReader) -> None:
        """Kept for speed (``bench/README.md`` §The match server): the
        receiver reads the socket in its own step, as ``PipeTransport``
        reads its pipe, so that a frame reaches the conversation without a
        task hop, and without a cancel scope of its own: the reader's timer
        knows silence, and another task that pushes a line (an end, a frame
        held for the rate) wakes this wait (:meth:`SecondReader.wake`).  Returns when the inbox may have
        something (or the reader must take over: a drop, a frame held for
        the rate)."""
        data = await direct.read(wire.READ_CHUNK)  # (b"": the end, a reset too)
        if data is None:  # woken by a push, closed, or the reader took it first
            return
        try:
            self._take_data(data)
        except Dropped as dropped:
            self._hand(dropped)
            return
        if self._consume(self._last_received):
            self._hand(None)  # the reader waits for the rate, then takes the held frame

    def _hand(self, dropped: Dropped | None) -> None:
        """Wake the reader for what :meth:`receive` found (``dropped``: it raises it)."""
        self._handed = dropped
        if self._reader_scope is not None:
            self._reader_scope.cancel()

    def _take_data(self, data: bytes | bytearray | None) -> None:
        """Bytes read (None: silence past the idle timeout) into the
        connection; :class:`Dropped` if the stream dropped."""
        if data is None:
            raise Dropped(f"was silent for {wire.IDLE_TIMEOUT:g} s")
        if not data and self._conn.state is WireState.OPEN:
            raise Dropped("dropped the connection without a close")
        self._last_received = trio.current_time()  # (the frames' arrival: _consume's now)
        try:
            self._conn.receive_data(data)
        except WireError as exc:
            self._end(f"broke the wire ({exc.reason})", close=wire.BROKEN.text(exc.reason))

    def _consume(self, now: float) -> float:
        """Take the frames the connection has buffered, in order, at most
        :data:`~protocol.wire.MAX_FRAMES_PER_SECOND` (:class:`~protocol.wire.FrameRate`),
        stamped ``now`` (when their bytes were read, or a held frame was let
        through); the seconds to wait before the next one (0: none left, or
        the stream is over)."""
        conn, gate = self._conn, self._gate
        try:
            while self._detail is None:
                frame = gate.next(conn, now)
                if frame is None:
                    return 0.0
                if isinstance(frame, float):
                    return frame
                self._frame(frame, now)
        except WireError as exc:
            self._end(f"broke the wire ({exc.reason})", close=wire.BROKEN.text(exc.reason))
        return 0.0

    def _close_direct(self) -> None:
        """receive()'s descriptor closed (a waiting receive() wakes and waits for the reader)."""
        direct, self._direct = self._direct, None
        if direct is not None:
            direct.close()

    def _frame(self, frame: wire.Frame, now: float) -> bool:
        """Take one frame from the client, which arrived at ``now``; False once the stream is over."""
        if type(frame) is wire.Lines:
            self._arrive(frame, now)
        elif isinstance(frame, wire.Sync):
            self._keeper.answered(now)
        elif isinstance(frame, wire.Eof):
            self._end(frame.detail or "closed its output", end=_ENDS[frame.reason])
            return False
        elif isinstance(frame, wire.Close):
            self._end(f"closed the connection ({frame.reason})")
            return False
        return True  # a heartbeat: a sign of life, nothing more

    async def _write_loop(self) -> None:
        if await self._outbox.write_loop(self._stream):
            self._end(f"did not read for {SEND_STALL_TIMEOUT:g} s")

    def _cut_write(self) -> None:
        self._outbox.cut()

    async def _flush(self) -> None:
        if self.detached_since is None:
            await self._outbox.flush(self._stream)

    # -- disconnect and resume ------------------------------------------------------------

    async def _wait_attach(self, detail: str) -> None:
        self.detached_since = trio.current_time()
        self.note(f"detached: {detail}")
        self._outbox.clear()
        self._attached = trio.Event()
        await self._attached.wait()
        self.detached_since = None
        self.note("attached again")

    async def _resume(self) -> None:
        """The fresh engine behind a reconnect restarted (:class:`Restart`),
        or the connection ends."""
        restart = self._restart = Restart(self.session_state, self.session, self._queue)
        try:
            restarted = await restart.run()
        finally:
            self._restart = None
        if not restarted:
            self._end(f"did not restart its engine within {RESUME_HANDSHAKE_TIMEOUT:g} s "
                      "of its reconnect", close=wire.FAULT.text("no ugiok/readyok after the resume"))

    # -- inside ----------------------------------------------------------------------------

    _restart: Restart | None = None  # a reconnected client's engine restarts
    _scope: trio.CancelScope | None = None

    def _arrive(self, frame: wire.Lines, now: float) -> None:
        lines = frame.lines
        if self._restart is not None:
            self._restart.heard(lines)
            return
        credited = now
        state = self.session_state
        state.answered(lines)
        if frame.think is not None:
            self.think = frame.think
        if state.ends_search(lines):
            credited = state.credit(now, frame.think, self._keeper.rtt)
        if not self._inbox.fits(lines):
            self._end(f"sent over {MAX_INBOX_BYTES} bytes of lines nobody asked for",
                      close=wire.FAULT.text("too many unrequested lines"))
            return
        self._push((lines, credited, None))

    def _push(self, received: Received) -> None:
        if self._log is not None:
            for line in received[0]:
                self._log.write("<", line)
        self._inbox.put(received)
        if self._direct is not None:  # receive() may wait on the socket
            self._direct.wake()

    def _queue(self, *frames: wire.Frame) -> None:
        self._queue_at(frames, trio.current_time())

    def _queue_at(self, frames: tuple[wire.Frame, ...] | list[wire.Lines], now: float) -> None:
        """Frames for the writer; over :data:`~protocol.wire.MAX_SEND_BUFFER`
        held for the peer, its connection ends (``did not read``)."""
        if self._detail is not None and not self._outbox.closing:
            return
        send = self._conn.send
        data = send(frames[0]) if len(frames) == 1 else b"".join([send(frame) for frame in frames])
        if not self._outbox.put(data, now, self._stream, None if self._direct is None else self._direct.fd,
                                detached=self.detached_since is not None):
            self._end(f"did not read: over {wire.MAX_SEND_BUFFER} bytes queued for it")

    def _end(self, detail: str, *, end: End = End.CLOSED, close: str | None = None) -> None:
        """The engine's stream is over for ``detail``: its end is given to
        the reader of lines; ``close`` (a reason) is sent if the wire is
        still open; the writer flushes and the tasks stop."""
        if self._detail is not None:
            return
        self._detail = detail
        self._push(([], trio.current_time(), end))
        self._outbox.close()
        if close is not None and self._conn.state is not WireState.CLOSED and self.detached_since is None:
            self._queue(wire.Close(close[:wire.MAX_TEXT_CHARS]))
        self._attached.set()  # a detached transport waits no more
        if self._scope is not None:  # the last frames get a bounded time, a stuck write none more
            self._scope.deadline = min(self._scope.deadline,
                                       trio.current_time() + CLOSE_SEND_TIMEOUT)
