"""Accepting engine connections: the wire's handshake, its limits, and the
registry of authenticated engines (``specs/wire.md``).

Each connection has its own task, decoder and state (a hostile one touches
no other).  The ``hello`` is read under :data:`~protocol.wire.HANDSHAKE_TIMEOUT`;
its source's limits (:mod:`arbiter.server.gate`: connections not answered
yet, the pace of token checks) come before the token check, which runs in a
worker thread (a derivation must not hold the loop that times the engines).
The engine's name and a slot of its token are taken in the :class:`Registry`
at the hello, in the same step as their checks, and given back on every way
out, so that two hellos at once cannot both pass a limit.  An accepted
connection becomes an :class:`~arbiter.engine.Engine` over a
:class:`~arbiter.engine.socket_transport.SocketTransport`, does the engine's
``ugi`` handshake, and waits in the :class:`Registry` until whoever uses it
(the arena) lets it go or the server stops.  While it waits it is pinged
(``isready``) every :data:`IDLE_PING_INTERVAL`, so that a client gone while
idle is dropped before an arena pairs it.  Every ``refusal`` and ``close``
the server sends gives one of the wire's reasons (:data:`protocol.wire.REASONS`),
which tells the client whether to try again.
"""

from __future__ import annotations

import ipaddress
import math
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from arbiter.engine import Engine, EngineConfig, EngineError, EngineTimeouts
from arbiter.engine.socket_transport import (
    RESUME_HANDSHAKE_TIMEOUT,
    SocketTransport,
    close_stream,
    write_now,
)
from arbiter.server.client import RECONNECT_MAX_DELAY
from arbiter.server.gate import SourceGate, Throttled, Unanswered
from arbiter.tokens import TokenStore, valid_name
from protocol import wire
from protocol.wire import NEED_DATA, Role, WireConnection, WireError

__all__ = ["Listener", "Registry", "Remote", "fault_reason", "listen_problem"]

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
#: fresh engine's restart (:data:`~arbiter.engine.socket_resume.RESUME_HANDSHAKE_TIMEOUT`),
#: then the patience of a fresh start for the replayed ``isready``
REMOTE_READY_TIMEOUT = RECONNECT_MAX_DELAY + RESUME_HANDSHAKE_TIMEOUT + EngineTimeouts.ready

#: the ``cmd`` of a remote engine's config: it is run by the client, not here
REMOTE_CMD = "remote"

#: worker threads that check tokens at once: a derivation holds a core for a
#: few milliseconds, and the machine's other core is the engines' and the loop's
TOKEN_CHECK_THREADS = 2

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
    #: a reconnect of this engine is being welcomed (no second one may take it)
    resuming: bool = False
    #: the reason its connection's ``close`` gives (:data:`protocol.wire.REASONS`)
    reason: str = wire.RELEASED.text()

    def release(self, reason: str | None = None) -> None:
        """The connection is no longer wanted (a fault, a broken wire): its
        task closes it, giving ``reason`` (the first one given stands)."""
        if reason is not None and not self.done.is_set():
            self.reason = reason
        self.done.set()


def fault_reason(engine: Engine, what: str | None = None) -> str:
    """The ``close`` reason for an engine charged with a fault: ``what`` it
    did, else its conversation's fault, else that it is not fit to play on."""
    if what is None:
        what = engine.fault.detail if engine.fault is not None else "not ready for another game"
    return wire.FAULT.text(what)


class Registry:
    """The authenticated engines, by token name, and the names taken by
    hellos (:meth:`reserve`: from the hello to the connection's end, so that
    the limits count a connection from its hello); :meth:`wait_change` wakes
    whoever waits for engines (the arena) when one comes or goes."""

    def __init__(self) -> None:
        self.by_token: dict[str, list[Remote]] = {}
        self._reserved: dict[str, set[str]] = {}  # token -> engine names of its hellos
        self._changed = trio.Event()

    def __len__(self) -> int:
        return sum(len(remotes) for remotes in self.by_token.values())

    def names(self) -> set[str]:
        """Every engine name taken: registered or reserved by a hello."""
        names = {remote.name for remotes in self.by_token.values() for remote in remotes}
        return names.union(*self._reserved.values())

    def holds(self, token: str) -> int:
        """Connections ``token`` holds: its engines and its hellos in progress."""
        names = {remote.name for remote in self.by_token.get(token, [])}
        return len(names | self._reserved.get(token, set()))

    def reserve(self, token: str, name: str) -> None:
        """``name`` taken by a hello of ``token`` (its checks passed in this step)."""
        self._reserved.setdefault(token, set()).add(name)

    def unreserve(self, token: str, name: str) -> None:
        names = self._reserved.get(token)
        if names is not None:
            names.discard(name)
            if not names:
                del self._reserved[token]

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
            if remote.name == name and remote.transport.detached and not remote.done.is_set() \
                    and not remote.resuming:
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
    """The handshake ends with a ``refusal`` (or a ``close``) for ``reason``
    (a text of :data:`protocol.wire.REASONS`)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Listener:
    """The connection handler of :func:`trio.serve_tcp`: :meth:`handle` one
    stream from accept to close.  ``tokens`` checks the hellos; ``registry``
    receives the engines (with ``timeouts``, by default a local engine's but
    :data:`REMOTE_READY_TIMEOUT`); connections beyond :data:`~protocol.wire.MAX_CONNECTIONS`
    (all), :data:`~protocol.wire.MAX_UNANSWERED_PER_SOURCE` (of one source, not
    answered yet) or :data:`~protocol.wire.MAX_CONNECTIONS_PER_TOKEN` are refused."""

    def __init__(self, tokens: TokenStore, registry: Registry, *,
                 timeouts: EngineTimeouts | None = None, log: Log = _stderr):
        self.tokens = tokens
        self.registry = registry
        self.timeouts = timeouts or EngineTimeouts(ready=REMOTE_READY_TIMEOUT)
        self.log = log
        self.connections = 0  # accepted and not yet closed, authenticated or not
        self.gate = SourceGate()
        self._checkers = trio.CapacityLimiter(TOKEN_CHECK_THREADS)
        #: connections turned away, waiting out TURN_AWAY_DELAY, the oldest first
        self._turning_away: dict[trio.CancelScope, None] = {}

    async def handle(self, stream: trio.abc.Stream) -> None:
        address = _peer(stream)
        source = wire.source_key(address)
        self.connections += 1
        try:
            if self.connections > wire.MAX_CONNECTIONS:
                if not self._turning_away:
                    await _close_at_once(stream, wire.SERVER_FULL.text(
                        f"{wire.MAX_CONNECTIONS} connections already"))
                    return
                oldest = next(iter(self._turning_away))  # its answer goes now: its slot is this one's
                del self._turning_away[oldest]
                oldest.cancel()
            unanswered = self.gate.admit(source)
            if unanswered is None:
                self._log_turned_away(source, f"{address}: refused: "
                                      f"{wire.MAX_UNANSWERED_PER_SOURCE} connections of "
                                      f"{source} wait for their hello's answer")
                await self._turn_away_delay()
                await _close_at_once(stream, wire.SOURCE_FULL.text(
                    f"{source} ({wire.MAX_UNANSWERED_PER_SOURCE}): try again later"))
                return
            try:
                await self._serve(stream, address, unanswered)
            finally:
                unanswered.answered()
        finally:
            self.connections -= 1
            await close_stream(stream)

    async def _serve(self, stream: trio.abc.Stream, address: str, unanswered: Unanswered) -> None:
        conn = WireConnection(Role.SERVER)
        try:
            with trio.fail_after(wire.HANDSHAKE_TIMEOUT):
                hello = await _read_hello(stream, conn)
            source = unanswered.source
            token, detached = await self._authenticate(hello, source)
        except trio.TooSlowError:
            self._log_turned_away(unanswered.source,
                                  f"{address}: no hello within {wire.HANDSHAKE_TIMEOUT:g} s")
            await _send_quietly(stream, conn.send(wire.Close(wire.NO_HELLO.text())))
            return
        except _Refused as refused:
            self._log_turned_away(unanswered.source, f"{address}: refused: {refused.reason}")
            frame = (wire.Refusal(refused.reason) if conn.state is wire.WireState.AUTHENTICATING
                     else wire.Close(refused.reason))
            try:
                data = conn.send(frame)
            except wire.LocalWireError:
                return
            if wire.THROTTLED.says(refused.reason):
                await self._turn_away_delay()
            await _send_quietly(stream, data)
            return
        unanswered.answered()
        if detached is not None:
            await self._resume(stream, conn, detached)
            return
        try:  # the name and the token's slot are this connection's until it ends
            session = secrets.token_urlsafe(16)
            await stream.send_all(conn.send(wire.Welcome(
                wire.WIRE_VERSION, session, int(wire.HEARTBEAT_INTERVAL * 1000), False)))
            await self._hold(stream, conn, token, hello, session, source)
        finally:
            self.registry.unreserve(token, hello.name)

    async def _turn_away_delay(self) -> None:
        """Wait :data:`~protocol.wire.TURN_AWAY_DELAY` before turning a connection
        away unchecked, or less: when the server holds all its connections, the
        oldest of these waits ends at once (its slot goes to a new connection)."""
        scope = trio.CancelScope(deadline=trio.current_time() + wire.TURN_AWAY_DELAY)
        self._turning_away[scope] = None
        try:
            with scope:
                await trio.sleep_forever()
        finally:
            self._turning_away.pop(scope, None)

    def _log_turned_away(self, source: str, text: str) -> None:
        """A line about a connection that did not get in, unless ``source``
        had one within :data:`~arbiter.server.gate.LOG_INTERVAL` (counted instead)."""
        skipped = self.gate.loggable(source)
        if skipped is not None:
            self.log(f"{text} ({skipped} more of {source} not logged since)" if skipped else text)

    async def _resume(self, stream: trio.abc.Stream, conn: WireConnection, remote: Remote) -> None:
        """``remote`` came back while its game goes on: the game is its again
        over this stream (its transport replays the search), until the
        transport is done with the stream."""
        transport = remote.transport
        try:
            await stream.send_all(conn.send(wire.Welcome(
                wire.WIRE_VERSION, transport.session, int(wire.HEARTBEAT_INTERVAL * 1000), True)))
            away = trio.current_time() - (transport.detached_since or trio.current_time())
            over = transport.attach(stream, conn)
        finally:
            remote.resuming = False
        self.log(f"{remote.name} ({remote.token}) reconnected after {away:.1f} s: its game goes on")
        try:
            await over.wait()
        finally:  # stopped: the transport says its close on this stream before it is closed
            with trio.CancelScope(shield=True), trio.move_on_after(2 * REFUSAL_SEND_TIMEOUT):
                await over.wait()

    async def _hold(self, stream: trio.abc.Stream, conn: WireConnection, token: str,
                    hello: wire.Hello, session: str, source: str) -> None:
        """The authenticated connection as an engine, in the registry until
        released; its ``close`` gives the reason it was released for, or that
        the server stops."""
        transport = SocketTransport(stream, conn)
        transport.session = session
        engine = Engine(EngineConfig(cmd=REMOTE_CMD, name=hello.name), self.timeouts, transport)
        remote = Remote(token, hello.name, engine, transport)
        transport.hold = lambda: remote.busy and not remote.done.is_set()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(transport.run)
            try:
                await engine.handshake()
            except EngineError as exc:  # a hello for nothing: it counts for the source's pace
                self.gate.failed(source)
                self.log(f"{hello.name} ({token}): {exc}")  # (one per paced hello: not limited)
                await transport.aclose(fault_reason(engine, exc.reason))
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
                stopping = trio.current_effective_deadline() == -math.inf  # cancelled: the server stops
                await transport.aclose(wire.STOP.text() if stopping else remote.reason)
                self.log(f"{hello.name} ({token}) disconnected: {await transport.end_detail()}")

    async def _ping(self, remote: Remote) -> None:
        """``isready`` to an idle engine (marked busy meanwhile, so no game
        takes it); one that does not answer is released."""
        remote.busy = True
        try:
            await remote.engine.ping()
        except EngineError as exc:
            remote.release(fault_reason(remote.engine, exc.reason))
        finally:
            remote.busy = False
            self.registry.changed()

    async def _authenticate(self, hello: wire.Hello, source: str) -> tuple[str, Remote | None]:
        """The token's name and, when the hello takes back an engine that
        waits detached, that engine (claimed: :attr:`Remote.resuming`); else
        the engine's name and a slot of the token are reserved in the
        registry, in the same step as their checks.  :class:`_Refused` with
        the reason when the hello is refused."""
        problem = wire.hello_problem(hello)
        if problem is not None:
            raise _Refused(problem)
        try:
            async with self.gate.check(source):
                token = await trio.to_thread.run_sync(self.tokens.verify, hello.token,
                                                      limiter=self._checkers)
        except Throttled as exc:
            raise _Refused(wire.THROTTLED.text(f"{source}: {exc}")) from None
        try:
            return self._admit(hello, token)
        except _Refused:
            self.gate.failed(source)
            raise

    def _admit(self, hello: wire.Hello, token: str | None) -> tuple[str, Remote | None]:
        """:meth:`_authenticate`'s checks after the token's, and the
        reservation, in one step (no await: no other hello runs between)."""
        if token is None:
            raise _Refused(wire.TOKEN.text())
        if not valid_name(hello.name):
            raise _Refused(wire.NAME.text(f"{hello.name[:80]!r}: 1 to 64 letters, digits, "
                                          "'_' or '-'"))
        detached = self.registry.detached(token, hello.name)
        if detached is not None:
            detached.resuming = True
            return token, detached
        if self.registry.holds(token) >= wire.MAX_CONNECTIONS_PER_TOKEN:
            raise _Refused(wire.TOKEN_FULL.text(f"{token!r} holds "
                                                f"{wire.MAX_CONNECTIONS_PER_TOKEN} connections already"))
        if hello.name in self.registry.names():
            raise _Refused(wire.NAME_TAKEN.text(f"{hello.name!r} is connected already"))
        self.registry.reserve(token, hello.name)
        return token, None


async def _read_hello(stream: trio.abc.Stream, conn: WireConnection) -> wire.Hello:
    """The client's first frame, a ``hello``; :class:`_Refused` when the
    bytes break the wire (garbage, oversized, out of order) or the stream ends."""
    while True:
        try:
            event = conn.next_event()
        except WireError as exc:
            raise _Refused(wire.BROKEN.text(exc.reason)) from None
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
            raise _Refused(wire.BROKEN.text(exc.reason)) from None


async def _release_at_end(remote: Remote) -> None:
    """When ``remote``'s transport has ended (not a drop it waits out): a
    crash of its engine if nobody was reading it, and the connection released."""
    await remote.transport.wait_finished()
    await remote.engine.transport_lost()
    remote.release()


async def _close_at_once(stream: trio.abc.Stream, reason: str) -> None:
    """A connection turned away before its hello is read: a ``close`` with ``reason``."""
    await _send_quietly(stream, WireConnection(Role.SERVER).send(wire.Close(reason)))


async def _send_quietly(stream: trio.abc.Stream, data: bytes) -> None:
    """``data`` to a connection on its way out, within :data:`REFUSAL_SEND_TIMEOUT`
    (at once on a plain TCP socket that takes it: no timer, no scheduler pass)."""
    sent = write_now(stream, data)
    if sent == len(data):
        return
    with trio.move_on_after(REFUSAL_SEND_TIMEOUT):
        try:
            await stream.send_all(data[sent:])
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass


def _peer(stream: trio.abc.Stream) -> str:
    """The peer's address (no port: failures are counted per host)."""
    if isinstance(stream, trio.SSLStream):
        stream = stream.transport_stream
    socket = stream.socket if isinstance(stream, trio.SocketStream) else None
    try:
        return str(socket.getpeername()[0]) if socket is not None else "?"
    except OSError:
        return "?"
