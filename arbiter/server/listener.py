"""Accepting engine connections: the wire's handshake, its limits, and the
registry of authenticated engines (``specs/wire.md``).

Each connection has its own task, decoder and state (a hostile one touches
no other).  The handshake (``hello`` -> token check -> ``welcome`` or
``refusal``) runs under :data:`~protocol.wire.HANDSHAKE_TIMEOUT`; an
accepted connection becomes an :class:`~arbiter.engine.Engine` over a
:class:`~arbiter.engine.socket_transport.SocketTransport`, does the engine's
``ugi`` handshake, and waits in the :class:`Registry` until whoever uses it
(the arena) lets it go or the server stops.  While it waits it is pinged
(``isready``) every :data:`IDLE_PING_INTERVAL`, so that a client gone while
idle is dropped before an arena pairs it.
"""

from __future__ import annotations

import ipaddress
import secrets
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from arbiter.engine import Engine, EngineConfig, EngineError, EngineTimeouts
from arbiter.engine.socket_transport import RESUME_HANDSHAKE_TIMEOUT, SocketTransport, close_stream
from arbiter.server.client import RECONNECT_MAX_DELAY
from arbiter.tokens import TokenStore, valid_name
from protocol import wire
from protocol.wire import NEED_DATA, Role, WireConnection, WireError

__all__ = ["Listener", "Registry", "Remote", "listen_problem"]

#: how long a refused connection waits to hand its refusal to the stream
#: (seconds): a courtesy; a peer that does not read must not hold the slot
REFUSAL_SEND_TIMEOUT = 1.0

#: how often an idle engine is asked ``isready`` (seconds): a client gone
#: while it waited for a game is found within this, and never paired
IDLE_PING_INTERVAL = wire.HEARTBEAT_INTERVAL

#: how long a remote engine has to answer ``isready`` (seconds).  A drop
#: between ``isready`` and ``readyok`` (at a game's start) is waited out like
#: one during a search, but the conversation's wait counts from the
#: ``isready``: a local engine's 5 s (``protocol.limits.READY_TIMEOUT_MS``)
#: would be spent before the client is back.  So: the longest a client waits
#: before a reconnect (:data:`~arbiter.server.client.RECONNECT_MAX_DELAY`), its
#: fresh engine's restart (:data:`~arbiter.engine.socket_transport.RESUME_HANDSHAKE_TIMEOUT`),
#: then the patience of a fresh start for the replayed ``isready``
REMOTE_READY_TIMEOUT = RECONNECT_MAX_DELAY + RESUME_HANDSHAKE_TIMEOUT + EngineTimeouts.ready

#: the ``cmd`` of a remote engine's config: it is run by the client, not here
REMOTE_CMD = "remote"

Log = Callable[[str], None]


def _stderr(text: str) -> None:
    print(f"arbiter serve: {text}", file=sys.stderr, flush=True)


def listen_problem(host: str, *, tls: bool, insecure: bool) -> str | None:
    """Why the server must not listen on ``host`` (None: it may): off
    loopback, tokens would travel in clear without TLS unless ``--insecure``."""
    if tls or insecure:
        return None
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback:
        return None
    return (f"{host} is not a loopback address: without TLS the tokens travel in clear; "
            "give --tls-cert/--tls-key, or --insecure to accept that")


@dataclass(eq=False)
class Remote:
    """One authenticated engine connection: its token's name, the name it
    plays under, its conversation.  :attr:`busy` while a game uses it;
    :meth:`release` ends the connection."""

    token: str
    name: str
    engine: Engine
    transport: SocketTransport
    busy: bool = False
    done: trio.Event = field(default_factory=trio.Event)
    #: when it last became free for a game (connected, or its last game over)
    idle_since: float = field(default_factory=trio.current_time)
    #: the engine it last played, so that an arena pairs it with another when it can
    last_opponent: Remote | None = None

    def release(self) -> None:
        """The connection is no longer wanted (a fault, a broken wire): its
        task closes it."""
        self.done.set()


class Registry:
    """The authenticated engines, by token name; :meth:`wait_change` wakes
    whoever waits for engines (the arena) when one comes or goes."""

    def __init__(self) -> None:
        self.by_token: dict[str, list[Remote]] = {}
        self._changed = trio.Event()

    def __len__(self) -> int:
        return sum(len(remotes) for remotes in self.by_token.values())

    def names(self) -> set[str]:
        return {remote.name for remotes in self.by_token.values() for remote in remotes}

    def idle(self) -> list[Remote]:
        """Connected engines fit for a game, the longest waiting first."""
        idle = [remote for remotes in self.by_token.values() for remote in remotes
                if not remote.busy and not remote.done.is_set() and remote.engine.healthy
                and not remote.transport.detached]
        return sorted(idle, key=lambda remote: remote.idle_since)

    def detached(self, token: str, name: str) -> Remote | None:
        """The engine ``name`` of ``token`` that dropped mid-game and waits
        for its client to come back, if there is one."""
        for remote in self.by_token.get(token, []):
            if remote.name == name and remote.transport.detached and not remote.done.is_set():
                return remote
        return None

    def add(self, remote: Remote) -> None:
        self.by_token.setdefault(remote.token, []).append(remote)
        self.changed()

    def remove(self, remote: Remote) -> None:
        remotes = self.by_token.get(remote.token, [])
        if remote in remotes:
            remotes.remove(remote)
            if not remotes:
                del self.by_token[remote.token]
        self.changed()

    def changed(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_change(self) -> None:
        await self._changed.wait()


class _Refused(Exception):
    """The handshake ends with a ``refusal`` (or a ``close``) for ``reason``."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Listener:
    """The connection handler of :func:`trio.serve_tcp`: :meth:`handle` one
    stream from accept to close.  ``tokens`` checks the hellos; ``registry``
    receives the engines (with ``timeouts``, by default a local engine's but
    :data:`REMOTE_READY_TIMEOUT`); connections beyond :data:`~protocol.wire.MAX_CONNECTIONS`
    (all) or :data:`~protocol.wire.MAX_CONNECTIONS_PER_TOKEN` are refused."""

    def __init__(self, tokens: TokenStore, registry: Registry, *,
                 timeouts: EngineTimeouts | None = None, log: Log = _stderr):
        self.tokens = tokens
        self.registry = registry
        self.timeouts = timeouts or EngineTimeouts(ready=REMOTE_READY_TIMEOUT)
        self.log = log
        self.connections = 0  # accepted and not yet closed, authenticated or not
        self._failures: dict[str, deque[float]] = {}  # address -> times of failed hellos

    async def handle(self, stream: trio.abc.Stream) -> None:
        address = _peer(stream)
        self.connections += 1
        try:
            if self.connections > wire.MAX_CONNECTIONS:
                conn = WireConnection(Role.SERVER)
                await _send_quietly(stream, conn.send(wire.Close(
                    f"the server holds {wire.MAX_CONNECTIONS} connections already")))
                return
            await self._serve(stream, address)
        finally:
            self.connections -= 1
            await close_stream(stream)

    async def _serve(self, stream: trio.abc.Stream, address: str) -> None:
        conn = WireConnection(Role.SERVER)
        await self._slow_down(address)
        try:
            with trio.fail_after(wire.HANDSHAKE_TIMEOUT):
                hello = await _read_hello(stream, conn)
            token = self._authenticate(hello, address)
        except trio.TooSlowError:
            self.log(f"{address}: no hello within {wire.HANDSHAKE_TIMEOUT:g} s")
            await _send_quietly(stream, conn.send(wire.Close("no hello in time")))
            return
        except _Refused as refused:
            self.log(f"{address}: refused: {refused.reason}")
            frame = (wire.Refusal(refused.reason) if conn.state is wire.WireState.AUTHENTICATING
                     else wire.Close(refused.reason))
            try:
                data = conn.send(frame)
            except wire.LocalWireError:
                return
            await _send_quietly(stream, data)
            return
        detached = self.registry.detached(token, hello.name)
        if detached is not None:
            await self._resume(stream, conn, detached)
            return
        session = secrets.token_urlsafe(16)
        await stream.send_all(conn.send(wire.Welcome(
            wire.WIRE_VERSION, session, int(wire.HEARTBEAT_INTERVAL * 1000), False)))
        await self._hold(stream, conn, token, hello, session)

    async def _resume(self, stream: trio.abc.Stream, conn: WireConnection, remote: Remote) -> None:
        """``remote`` came back while its game goes on: the game is its again
        over this stream (its transport replays the search), until the
        transport is done with the stream."""
        transport = remote.transport
        await stream.send_all(conn.send(wire.Welcome(
            wire.WIRE_VERSION, transport.session, int(wire.HEARTBEAT_INTERVAL * 1000), True)))
        away = trio.current_time() - (transport.detached_since or trio.current_time())
        over = transport.attach(stream, conn)
        self.log(f"{remote.name} ({remote.token}) reconnected after {away:.1f} s: its game goes on")
        try:
            await over.wait()
        finally:  # stopped: the transport says its close on this stream before it is closed
            with trio.CancelScope(shield=True), trio.move_on_after(2 * REFUSAL_SEND_TIMEOUT):
                await over.wait()

    async def _hold(self, stream: trio.abc.Stream, conn: WireConnection, token: str,
                    hello: wire.Hello, session: str) -> None:
        """The authenticated connection as an engine, in the registry until released."""
        transport = SocketTransport(stream, conn)
        transport.session = session
        engine = Engine(EngineConfig(cmd=REMOTE_CMD, name=hello.name), self.timeouts, transport)
        remote = Remote(token, hello.name, engine, transport)
        transport.hold = lambda: remote.busy and not remote.done.is_set()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(transport.run)
            try:
                await engine.handshake()
            except EngineError as exc:
                self.log(f"{hello.name} ({token}): {exc}")
                await transport.aclose()
                return
            nursery.start_soon(_release_at_end, remote)
            self.registry.add(remote)
            self.log(f"{hello.name} ({token}) connected: {engine.id_name or '?'}")
            try:
                while not remote.done.is_set():
                    with trio.move_on_after(IDLE_PING_INTERVAL):
                        await remote.done.wait()
                    if remote.done.is_set() or remote.busy:
                        continue
                    if transport.detached:
                        remote.release()
                    else:
                        await self._ping(remote)
            finally:
                self.registry.remove(remote)
                await transport.aclose()
                self.log(f"{hello.name} ({token}) disconnected: {await transport.end_detail()}")

    async def _ping(self, remote: Remote) -> None:
        """``isready`` to an idle engine (marked busy meanwhile, so no game
        takes it); one that does not answer is released."""
        remote.busy = True
        try:
            await remote.engine.ping()
        except EngineError:
            remote.release()
        finally:
            remote.busy = False
            self.registry.changed()

    def _authenticate(self, hello: wire.Hello, address: str) -> str:
        """The token's name, or :class:`_Refused` with the reason."""
        problem = wire.hello_problem(hello)
        if problem is not None:
            raise _Refused(problem)
        token = self.tokens.verify(hello.token)  # a few ms: the wire's chosen cost
        if token is None:
            self._failures.setdefault(address, deque()).append(trio.current_time())
            raise _Refused("unknown or revoked token")
        if not valid_name(hello.name):
            raise _Refused(f"engine name {hello.name[:80]!r}: 1 to 64 letters, digits, '_' or '-'")
        if len(self.registry.by_token.get(token, [])) >= wire.MAX_CONNECTIONS_PER_TOKEN:
            raise _Refused(f"token {token!r} holds {wire.MAX_CONNECTIONS_PER_TOKEN} "
                           "connections already")
        if hello.name in self.registry.names() and self.registry.detached(token, hello.name) is None:
            raise _Refused(f"an engine named {hello.name!r} is connected already")
        return token

    async def _slow_down(self, address: str) -> None:
        """After :data:`~protocol.wire.AUTH_FAILURES_FREE` failed hellos from
        ``address`` within the window, wait before reading its next hello."""
        failures = self._failures.get(address)
        if failures is None:
            return
        now = trio.current_time()
        while failures and failures[0] < now - wire.AUTH_FAILURE_WINDOW:
            failures.popleft()
        if not failures:
            del self._failures[address]
        elif len(failures) >= wire.AUTH_FAILURES_FREE:
            await trio.sleep(wire.AUTH_FAILURE_DELAY)


async def _read_hello(stream: trio.abc.Stream, conn: WireConnection) -> wire.Hello:
    """The client's first frame, a ``hello``; :class:`_Refused` when the
    bytes break the wire (garbage, oversized, out of order) or the stream ends."""
    while True:
        try:
            event = conn.next_event()
        except WireError as exc:
            raise _Refused(exc.reason) from None
        if isinstance(event, wire.Hello):
            return event
        if event is not NEED_DATA:  # close: the only other frame allowed in HELLO
            raise _Refused("the client closed the connection")
        try:
            data = await stream.receive_some(wire.READ_CHUNK)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            data = b""
        try:
            conn.receive_data(data)
        except WireError as exc:
            raise _Refused(exc.reason) from None


async def _release_at_end(remote: Remote) -> None:
    """When ``remote``'s transport has ended (not a drop it waits out): a
    crash of its engine if nobody was reading it, and the connection released."""
    await remote.transport.wait_finished()
    await remote.engine.transport_lost()
    remote.release()


async def _send_quietly(stream: trio.abc.Stream, data: bytes) -> None:
    with trio.move_on_after(REFUSAL_SEND_TIMEOUT):
        try:
            await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass


def _peer(stream: trio.abc.Stream) -> str:
    """The peer's address (no port: failures are counted per host)."""
    if isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    socket = getattr(stream, "socket", None)
    try:
        return str(socket.getpeername()[0]) if socket is not None else "?"
    except OSError:
        return "?"
