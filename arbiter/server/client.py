"""``arbiter connect``: an engine run here, relayed to a server over the wire.

The engine is a local child process (:class:`~arbiter.engine.EngineProcess`:
its own process group, nothing left behind); the client sends ``hello``,
then relays lines both ways until the server closes, the engine ends, or
the command is stopped: the engine's output as ``lines`` frames (with
``think``, the engine's own time from the ``go`` written to the
``bestmove`` read, on this machine: ``specs/wire.md`` §Clock fairness), the
server's ``lines`` to the engine's input.  Heartbeats go out every
:data:`~protocol.wire.HEARTBEAT_INTERVAL`; a ``sync`` is answered at once.

What is relayed is decided in one place, :class:`~arbiter.server.relay.Relay`
(bytes in, bytes out); two loops drive it:

- a plain TCP connection: :class:`~arbiter.server.relay_loop.SocketLoop`,
  one blocking ``poll`` loop in a thread (``trio.to_thread.run_sync``) over
  the socket and the engine's pipes, without trio's scheduler on the hot
  path (``bench/README.md`` §`server.py`); the trio side wakes it when the
  command is cancelled and when the engine exits;
- a TLS connection: trio tasks (:class:`_StreamRelay`), since an
  ``SSLStream`` is trio's to read and write.

Both keep the engine's process, the handshake, the reconnects and the
``close`` on the trio side.

The client ends for good only for a reason that is final (``specs/wire.md``
§Reasons: a bad or revoked token, a refused name, the version, a broken wire,
the server's stop) or one it does not know; for any other refusal or close (a
limit full now, its engine's fault, the server's own choice) and for a drop
it connects again with its backoff (:class:`_Backoff`), so that another
peer's fault never ends it.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable

import trio

from arbiter.engine import EngineConfig, EngineProcess, EngineTimeouts, stderr_clause
from arbiter.engine.fdio import read_some, write_all
from arbiter.engine.streams import close_stream, write_now
from arbiter.server.relay import Relay, say
from arbiter.server.relay_loop import SocketLoop
from protocol import wire
from protocol.wire import NEED_DATA, Role, WireConnection, WireError

__all__ = ["ConnectError", "connect"]

#: how long the client's ``close`` may take to go out (seconds): the reason
#: is a courtesy; a server that does not read must not hold the client
CLOSE_TIMEOUT = 1.0


class ConnectError(Exception):
    """The connection could not be made or was refused; the reason is the
    message.  ``final``: trying again cannot help (else the client does, with
    its backoff)."""

    def __init__(self, message: str, *, final: bool = True):
        super().__init__(message)
        self.final = final


class _Client:
    """One connection: its stream, its engine, its :class:`Relay`; every
    write to the stream from the trio side goes through :meth:`send`."""

    def __init__(self, stream: trio.abc.Stream, process: EngineProcess):
        self.stream = stream
        self.process = process
        self.conn = WireConnection(Role.CLIENT)
        self.relay = Relay(self.conn)
        self._lock = trio.Lock()  # bytes from several tasks, each write whole and in order
        self.last_sent = trio.current_time()  # when the last write from the trio side went
        #: bytes the relay loop left unwritten, to go before the close
        self.unsent = b""

    async def send(self, data: bytes) -> None:
        """Write ``data`` whole: at once when a plain TCP socket takes it
        (no scheduler pass), else through the stream under the lock (in the
        order the callers came)."""
        if not self._lock.locked():
            sent = write_now(self.stream, data)
            if sent == len(data):
                self.last_sent = trio.current_time()
                return
            data = data[sent:]
        async with self._lock:
            await self.stream.send_all(data)
            self.last_sent = trio.current_time()

    async def receive(self) -> wire.Frame:
        """The next frame from the server; :class:`WireError` if it breaks the wire."""
        while True:
            event = self.conn.next_event()
            if event is not NEED_DATA:
                return event
            try:
                data = await self.stream.receive_some(wire.READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                data = b""
            self.conn.receive_data(data)

    async def handshake(self, hello: wire.Hello) -> None:
        await self.send(self.conn.send(hello))
        try:
            with trio.fail_after(wire.HANDSHAKE_TIMEOUT):
                answer = await self.receive()
        except WireError as exc:
            raise ConnectError(exc.reason) from None
        except trio.TooSlowError:
            raise ConnectError(f"no answer to the hello within {wire.HANDSHAKE_TIMEOUT:g} s",
                               final=False) from None
        if isinstance(answer, wire.Refusal):
            raise ConnectError(f"refused: {answer.reason}", final=wire.is_final(answer.reason))
        if isinstance(answer, wire.Close):
            raise ConnectError(f"closed by the server: {answer.reason}",
                               final=wire.is_final(answer.reason))
        assert isinstance(answer, wire.Welcome)  # the state allows nothing else

    async def run(self) -> None:
        """The relay, by the loop that fits the stream, until it is over."""
        if type(self.stream) is trio.SocketStream:
            await self._run_loop()
        else:
            await _StreamRelay(self).run()

    async def _run_loop(self) -> None:
        """The plain TCP relay: :class:`SocketLoop` in a thread; this task
        wakes it when cancelled (it then returns soon) and passes it the
        engine's exit (from the process's exit watch)."""
        assert isinstance(self.stream, trio.SocketStream)
        process = self.process
        trio_process = process.process
        assert trio_process is not None and trio_process.stdin is not None
        assert trio_process.stdout is not None
        loop = SocketLoop(self.relay, self.stream.socket.fileno(),
                          trio_process.stdin.fileno(),  # type: ignore[attr-defined]  # trio's pipe streams have it
                          trio_process.stdout.fileno(),  # type: ignore[attr-defined]
                          process.timeouts.quit_grace)

        async def exited() -> None:
            loop.exited(process.exit_status())

        process.on_exit = exited
        status = process.exit_status()
        if status is not None:  # it exited before: its watch may have told nobody
            loop.exited(status)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_stop_when_cancelled, loop)
                await trio.to_thread.run_sync(loop.run)  # returns soon after stop()
                nursery.cancel_scope.cancel()
        finally:
            process.on_exit = None
            self.unsent = loop.unsent
            loop.close()

    async def close(self, reason: str) -> None:
        """What the relay left unwritten and the ``close`` (unless the
        server closed), within :data:`CLOSE_TIMEOUT`; then the stream."""
        data = self.relay.close(reason)
        if data:
            with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_TIMEOUT):
                try:
                    await self.send(self.unsent + data)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    pass
        await close_stream(self.stream)


async def _stop_when_cancelled(loop: SocketLoop) -> None:
    try:
        await trio.sleep_forever()
    finally:
        loop.stop()


class _StreamRelay:
    """The relay over a trio stream (TLS): a task each for the server's
    frames, the engine's output and the heartbeat; the first to end ends
    the others."""

    def __init__(self, client: _Client):
        self.client = client
        self.relay = client.relay

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            for task in (self.to_engine, self.from_engine, self.heartbeat):
                nursery.start_soon(self._then_cancel, task, nursery.cancel_scope)

    async def _then_cancel(self, task: Callable[[], Awaitable[None]],
                           scope: trio.CancelScope) -> None:
        """Run ``task``; when it returns, end the other tasks.  A write
        that fails is a dropped connection."""
        try:
            await task()
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self.relay.write_failed()
        except wire.LocalWireError:
            pass
        scope.cancel()

    async def to_engine(self) -> None:
        """The server's frames: lines to the engine, syncs answered, until the end."""
        process = self.client.process.process
        stdin = process.stdin if process else None
        assert stdin is not None
        relay, stream = self.relay, self.client.stream
        to_engine, replies = relay.take_frames()  # what came with the welcome first
        while True:
            if replies:
                await self.client.send(replies)
            if to_engine:
                try:
                    await _write_all(stdin, to_engine)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    relay.input_closed()
                    return
            if relay.over:
                return
            with trio.move_on_after(wire.IDLE_TIMEOUT):
                try:
                    data = await stream.receive_some(wire.READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    data = b""
                to_engine, replies = relay.server_data(data)
                continue
            relay.silent()
            return

    async def from_engine(self) -> None:
        """The engine's output as ``lines`` frames, then its ``eof``: each
        chunk read (:func:`arbiter.engine.fdio.read_some`: no extra
        scheduler pass) is one write."""
        process = self.client.process
        stdout = process.process.stdout if process.process else None
        assert stdout is not None
        fd: int = stdout.fileno()  # type: ignore[attr-defined]  # trio's pipe streams have it
        relay = self.relay
        while relay.output_end is None:
            data = await read_some(fd, wire.READ_CHUNK)
            frames = relay.engine_data(data)
            if frames:
                await self.client.send(frames)
        status = await process.wait_exit(process.timeouts.quit_grace)
        await self.client.send(relay.eof(status))

    async def heartbeat(self) -> None:
        client = self.client
        while True:
            await trio.sleep_until(client.last_sent + wire.HEARTBEAT_INTERVAL)
            if trio.current_time() >= client.last_sent + wire.HEARTBEAT_INTERVAL:
                await client.send(self.relay.heartbeat())


async def _write_all(stdin: trio.abc.SendStream, data: bytes) -> None:
    """``data`` to the engine's input (:func:`arbiter.engine.fdio.write_all`,
    as ``PipeTransport`` writes it)."""
    await write_all(stdin.fileno(), data)  # type: ignore[attr-defined]  # trio's pipe streams have it


def client_tls(ca_file: str | None) -> ssl.SSLContext:
    """The client's TLS context: the server's certificate checked against
    ``ca_file`` (PEM) or, without one, the system's authorities."""
    return ssl.create_default_context(cafile=ca_file)


async def _open(host: str, port: int, tls: ssl.SSLContext | None) -> trio.abc.Stream:
    """The stream to the server (TLS: its handshake done, the certificate
    checked for ``host``); :class:`ConnectError` if it cannot be made."""
    try:
        if tls is None:
            return await trio.open_tcp_stream(host, port)
        stream = await trio.open_ssl_over_tcp_stream(host, port, ssl_context=tls)
        with trio.fail_after(wire.HANDSHAKE_TIMEOUT):
            await stream.do_handshake()
        return stream
    except OSError as exc:
        raise ConnectError(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    except trio.BrokenResourceError as exc:
        cause = exc.__cause__ or exc
        raise ConnectError(f"TLS with {host}:{port} failed: {cause}") from None
    except trio.TooSlowError:
        raise ConnectError(f"TLS with {host}:{port}: no handshake within "
                           f"{wire.HANDSHAKE_TIMEOUT:g} s") from None


#: the wait before the first reconnect after a drop (seconds), doubled after
#: each failed try up to :data:`RECONNECT_MAX_DELAY`: soon enough to be back
#: within a move's time, spread out so that a restarting server is not hammered
RECONNECT_FIRST_DELAY = 0.5
RECONNECT_MAX_DELAY = 8.0
#: failed tries in a row before the client gives up (about a minute of tries
#: with the delays above: longer than a server restart, shorter than a game's
#: clock at most time controls).  A failed try: a connection that could not be
#: made, a hello refused for a reason that is not final, or a connection closed
#: for its engine's fault before it finished a game (an engine that cannot play
#: is not restarted for ever)
RECONNECT_TRIES = 10


class _Backoff:
    """The waits between tries: :data:`RECONNECT_FIRST_DELAY` after a
    connection that went well, doubled after each failed try up to
    :data:`RECONNECT_MAX_DELAY`; :data:`RECONNECT_TRIES` failed tries in a
    row end the client."""

    def __init__(self) -> None:
        self.delay, self.failures = RECONNECT_FIRST_DELAY, 0

    def reset(self) -> None:
        self.delay, self.failures = RECONNECT_FIRST_DELAY, 0

    def failed(self, why: str) -> None:
        """A failed try (``why``); :class:`ConnectError` if it was the last allowed."""
        self.failures += 1
        if self.failures >= RECONNECT_TRIES:
            raise ConnectError(f"{why}; gave up after {self.failures} tries")

    async def reopen(self, host: str, port: int, tls: ssl.SSLContext | None) -> trio.abc.Stream:
        """A new stream to the server after the current delay, failed tries counted."""
        while True:
            await trio.sleep(self.delay)
            self.delay = min(2 * self.delay, RECONNECT_MAX_DELAY)
            try:
                return await _open(host, port, tls)
            except ConnectError as exc:
                self.failed(str(exc))


async def connect(host: str, port: int, token: str, config: EngineConfig, *,
                  timeouts: EngineTimeouts | None = None, log_dir: str | None = None,
                  tls: ssl.SSLContext | None = None) -> str:
    """Run the engine of ``config`` for the server at ``host``:``port`` until
    the server closes the connection for a final reason or the engine ends;
    the reason it ended.  A connection that drops, or that the server refuses
    or closes for a reason that is not final (``specs/wire.md`` §Reasons), is
    made again, with a fresh engine, after :data:`RECONNECT_FIRST_DELAY`
    doubling to :data:`RECONNECT_MAX_DELAY`; the server gives back a game in
    progress (``specs/wire.md`` §Disconnect and resume).  Raises
    :class:`ConnectError` if the first connection cannot be made, a hello is
    refused for a final reason, or :data:`RECONNECT_TRIES` tries in a row
    fail.  The engine's process group is gone on return, by every path."""
    hello = wire.Hello(wire.WIRE_VERSION, token, config.name or config.label, config.label)
    stream = await _open(host, port, tls)
    backoff = _Backoff()
    while True:
        client = _Client(stream, EngineProcess(config, timeouts or EngineTimeouts(), log_dir))
        try:
            await _relay(client, hello)
        except ConnectError as exc:
            if exc.final:
                raise
            backoff.failed(str(exc))
            say(f"{exc}; trying again in {backoff.delay:g} s")
        else:
            relay = client.relay
            if relay.dropped is None or relay.ended is not None:
                if relay.output_end is not None:  # the engine ended: why, in its words (here only)
                    return f"{relay.ended}{stderr_clause(client.process.stderr_tail())}"
                return relay.ended or "the connection ended"
            if relay.faulted and not relay.games:
                backoff.failed(relay.dropped)
            else:
                backoff.reset()
            say(f"{relay.dropped}; reconnecting")
        stream = await backoff.reopen(host, port, tls)


async def _relay(client: _Client, hello: wire.Hello) -> None:
    """One connection: the engine started, the hello, the relay until it
    ends (:attr:`Relay.ended` or :attr:`Relay.dropped` says why)."""
    process = client.process
    try:
        async with trio.open_nursery() as nursery:
            try:
                await process.spawn(nursery)
                await client.handshake(hello)
                await client.run()
            finally:
                if client.relay.dropped is None:
                    await client.close(client.relay.ended or "the client stopped")
                else:
                    await close_stream(client.stream)
                await process.aclose()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        from arbiter.engine import sole_exception

        raise sole_exception(group) from None
