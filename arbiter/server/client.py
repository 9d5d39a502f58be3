"""``arbiter connect``: an engine run here, relayed to a server over the wire.

The engine is a local child process (:class:`~arbiter.engine.EngineProcess`:
its own process group, nothing left behind); the client sends ``hello``,
then relays lines both ways until the server closes, the engine ends, or
the command is stopped: the engine's output as ``lines`` frames (with
``think``, the engine's own time from the ``go`` written to the
``bestmove`` read, on this machine: ``specs/wire.md`` §Clock fairness), the
server's ``lines`` to the engine's input.  Heartbeats go out every
:data:`~protocol.wire.HEARTBEAT_INTERVAL`; a ``sync`` is answered at once.
"""

from __future__ import annotations

import os
import ssl
import sys
from collections.abc import Awaitable, Callable

import trio

from arbiter.engine import EngineConfig, EngineProcess, EngineTimeouts
from arbiter.engine.socket_transport import close_stream, write_now
from protocol import wire
from protocol.codec import LineSplitter
from protocol.errors import ProtocolError
from protocol.wire import NEED_DATA, Role, WireConnection, WireError

__all__ = ["ConnectError", "connect"]


class ConnectError(Exception):
    """The connection could not be made or was refused; the reason is the message."""


class _Client:
    """One connection's relay; every frame out goes through :meth:`send`."""

    def __init__(self, stream: trio.abc.Stream, process: EngineProcess):
        self.stream = stream
        self.process = process
        self.conn = WireConnection(Role.CLIENT)
        #: the socket's descriptor when the stream is plain TCP (read directly)
        self.fd: int | None = stream.socket.fileno() if type(stream) is trio.SocketStream else None
        self._lock = trio.Lock()  # frames from three tasks, each written whole
        self._go_at: float | None = None  # when the last go line was written to the engine
        self._last_sent = trio.current_time()
        self.ended: str | None = None  # why the relay ended
        self.dropped: str | None = None  # why the connection dropped (a reconnect may follow)

    async def send(self, frame: wire.Frame) -> None:
        """Write ``frame`` whole: at once when the socket takes it (the usual
        case, no scheduler pass), else through the stream under the lock."""
        if not self._lock.locked():
            data = self.conn.send(frame)
            sent = write_now(self.stream, data)
            if sent == len(data):
                self._last_sent = trio.current_time()
                return
            async with self._lock:
                await self.stream.send_all(data[sent:])
                self._last_sent = trio.current_time()
            return
        async with self._lock:
            data = self.conn.send(frame)
            await self.stream.send_all(data)
            self._last_sent = trio.current_time()

    async def receive(self) -> wire.Frame:
        """The next frame from the server; :class:`WireError` if it breaks the wire."""
        while True:
            event = self.conn.next_event()
            if event is not NEED_DATA:
                return event
            self.conn.receive_data(await self._read())

    async def _read(self) -> bytes | bytearray:
        """The next bytes from the server (b"": the connection ended).  A
        plain TCP socket is read in this task's own step (``wait_readable``
        then one ``os.read``), without the extra scheduler pass of trio's
        ``receive_some``; a TLS stream through the stream."""
        if self.fd is None:
            try:
                return await self.stream.receive_some(wire.READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                return b""
        while True:
            try:
                await trio.lowlevel.wait_readable(self.fd)
                return os.read(self.fd, wire.READ_CHUNK)
            except BlockingIOError:
                continue
            except (trio.ClosedResourceError, OSError):
                return b""

    async def handshake(self, hello: wire.Hello) -> None:
        await self.send(hello)
        try:
            with trio.fail_after(wire.HANDSHAKE_TIMEOUT):
                answer = await self.receive()
        except WireError as exc:
            raise ConnectError(exc.reason) from None
        except trio.TooSlowError:
            raise ConnectError(f"no answer to the hello within {wire.HANDSHAKE_TIMEOUT:g} s") from None
        if isinstance(answer, wire.Refusal):
            raise ConnectError(f"refused: {answer.reason}")
        if isinstance(answer, wire.Close):
            raise ConnectError(f"closed by the server: {answer.reason}")
        assert isinstance(answer, wire.Welcome)  # the state allows nothing else

    async def to_engine(self) -> None:
        """The server's frames: lines to the engine, syncs answered, until a close.

        Kept for speed (``bench/README.md`` §The match server): the lines of
        every frame read at once go to the engine in one ``os.write``."""
        stdin = self.process.process.stdin if self.process.process else None
        assert stdin is not None
        conn = self.conn
        while True:
            out: list[str] = []
            try:
                while (frame := conn.next_event()) is not NEED_DATA:
                    if isinstance(frame, wire.Lines):
                        out += frame.lines
                    elif not await self._control(frame):
                        return
                if out:
                    if any(line.startswith("go") for line in out):
                        self._go_at = trio.current_time()
                    try:
                        await _write_all(stdin, "".join(f"{line}\n" for line in out).encode())
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        self.ended = "the engine closed its input"
                        return
                with trio.move_on_after(wire.IDLE_TIMEOUT):
                    conn.receive_data(await self._read())
                    continue
                self.dropped = f"the server was silent for {wire.IDLE_TIMEOUT:g} s"
                return
            except WireError as exc:
                if "without a close" in exc.reason or "inside a frame" in exc.reason:
                    self.dropped = f"the connection dropped ({exc.reason})"
                else:
                    self.ended = f"the server broke the wire ({exc.reason})"
                return

    async def _control(self, frame: wire.Frame) -> bool:
        """A frame of the server's other than lines; False once it closed."""
        if isinstance(frame, wire.Sync):
            await self.send(wire.Sync(frame.seq))
        elif isinstance(frame, wire.Resume):
            _say(f"resuming game {frame.game} at ply {frame.ply}")
        elif isinstance(frame, wire.GameOver):
            _say(f"game {frame.game}: {frame.result} ({frame.termination})")
        elif isinstance(frame, wire.Close):
            self.ended = f"the server closed the connection ({frame.reason})"
            return False
        return True

    async def from_engine(self) -> None:
        """The engine's output as ``lines`` frames, then its ``eof``: each
        chunk read (``wait_readable`` then one ``os.read``, no extra
        scheduler pass) is one frame, written at once."""
        stdout = self.process.process.stdout if self.process.process else None
        assert stdout is not None
        fd: int = stdout.fileno()  # type: ignore[attr-defined]  # trio's pipe streams have it
        splitter = LineSplitter()
        reason = "closed"
        while True:
            try:
                await trio.lowlevel.wait_readable(fd)
                data = os.read(fd, wire.READ_CHUNK)
            except BlockingIOError:
                continue
            except (trio.ClosedResourceError, OSError):
                data = b""
            if not data:
                break
            try:
                lines = splitter.feed(data)
            except ProtocolError:
                reason = "overlong"
                break
            if lines:
                await self.send_lines(lines)
        status = await self.process.wait_exit(self.process.timeouts.quit_grace)
        await self.send(wire.Eof(reason, status or "closed its output"))
        self.ended = f"the engine {status or 'closed its output'}"

    async def send_lines(self, lines: list[str]) -> None:
        think = None
        if self._go_at is not None and any(line.startswith("bestmove") for line in lines):
            think = round((trio.current_time() - self._go_at) * 1000)
            self._go_at = None
        for frame in wire.lines_frames(lines, think):
            await self.send(frame)

    async def heartbeat(self) -> None:
        while True:
            await trio.sleep_until(self._last_sent + wire.HEARTBEAT_INTERVAL)
            if trio.current_time() >= self._last_sent + wire.HEARTBEAT_INTERVAL:
                await self.send(wire.Heartbeat())

    async def close(self, reason: str) -> None:
        with trio.CancelScope(shield=True), trio.move_on_after(1.0):
            try:
                await self.send(wire.Close(reason))
            except (wire.LocalWireError, trio.BrokenResourceError, trio.ClosedResourceError,
                    OSError):
                pass
        await close_stream(self.stream)


async def _write_all(stdin: trio.abc.SendStream, data: bytes) -> None:
    """``data`` to the engine's input: one ``os.write`` on the non-blocking
    pipe, trio's ``send_all`` only for what it did not take (as
    ``PipeTransport`` does)."""
    try:
        sent = os.write(stdin.fileno(), data)  # type: ignore[attr-defined]  # trio's pipe streams have it
    except BlockingIOError:
        sent = 0
    if sent < len(data):
        await stdin.send_all(data[sent:])


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
#: failed reconnects in a row before the client gives up (about a minute of
#: tries with the delays above: longer than a server restart, shorter than a
#: game's clock at most time controls)
RECONNECT_TRIES = 10


def _say(text: str) -> None:
    print(f"arbiter connect: {text}", file=sys.stderr, flush=True)


async def connect(host: str, port: int, token: str, config: EngineConfig, *,
                  timeouts: EngineTimeouts | None = None, log_dir: str | None = None,
                  tls: ssl.SSLContext | None = None) -> str:
    """Run the engine of ``config`` for the server at ``host``:``port`` until
    the server closes the connection or the engine ends; the reason it ended.
    A connection that drops (no ``close``) is made again, with a fresh
    engine, after :data:`RECONNECT_FIRST_DELAY` doubling to
    :data:`RECONNECT_MAX_DELAY`; the server gives back a game in progress
    (``specs/wire.md`` §Disconnect and resume).  Raises :class:`ConnectError`
    if the first connection cannot be made, a hello is refused, or
    :data:`RECONNECT_TRIES` reconnects in a row fail.  The engine's process
    group is gone on return, by every path."""
    hello = wire.Hello(wire.WIRE_VERSION, token, config.name or config.label, config.label)
    stream = await _open(host, port, tls)
    delay, failures = RECONNECT_FIRST_DELAY, 0
    while True:
        client = _Client(stream, EngineProcess(config, timeouts or EngineTimeouts(), log_dir))
        await _relay(client, hello)
        if client.dropped is None or client.ended is not None:
            return client.ended or "the connection ended"
        _say(f"{client.dropped}; reconnecting")
        while True:
            await trio.sleep(delay)
            try:
                stream = await _open(host, port, tls)
                break
            except ConnectError as exc:
                failures += 1
                if failures >= RECONNECT_TRIES:
                    raise ConnectError(f"{exc}; gave up after {failures} tries") from None
                delay = min(2 * delay, RECONNECT_MAX_DELAY)
        delay, failures = RECONNECT_FIRST_DELAY, 0


async def _relay(client: _Client, hello: wire.Hello) -> None:
    """One connection: the engine started, the hello, the relay until it
    ends (:attr:`_Client.ended` or :attr:`_Client.dropped` says why)."""
    process = client.process
    try:
        async with trio.open_nursery() as nursery:
            try:
                await process.spawn(nursery)
                await client.handshake(hello)
                async with trio.open_nursery() as relay:
                    for task in (client.to_engine, client.from_engine, client.heartbeat):
                        relay.start_soon(_then_cancel, task, relay.cancel_scope, client)
            finally:
                if client.dropped is None:
                    await client.close(client.ended or "the client stopped")
                else:
                    await close_stream(client.stream)
                await process.aclose()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        from arbiter.engine import sole_exception

        raise sole_exception(group) from None


async def _then_cancel(task: Callable[[], Awaitable[None]], scope: trio.CancelScope,
                       client: _Client) -> None:
    """Run ``task``; when it returns, end the relay's other tasks.  A write
    that fails is a dropped connection."""
    try:
        await task()
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        if client.ended is None and client.dropped is None:
            client.dropped = "the connection dropped (a write failed)"
    except wire.LocalWireError:
        pass
    scope.cancel()
