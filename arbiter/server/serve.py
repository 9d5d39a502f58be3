"""``arbiter serve``: the listener and the arenas of one server.

Cancellation (the command line's Ctrl-C or SIGTERM) stops it at once: games
in progress are abandoned (not stored), connections closed, each arena's
tournament marked ``interrupted``.  :meth:`Server.drain` (``arbiter stop``)
stops it gracefully: no new game is paired, the games in progress end and
are stored, then the server ends, each arena ``stopped``.
"""

from __future__ import annotations

import ssl
import sys
from contextlib import ExitStack
from functools import partial

import trio

from arbiter.store import RunStatus, Store
from arbiter.tokens import TokenStore

from .arena import Arena, ArenaSpec, open_arena
from .listener import Listener, Registry

__all__ = ["Server"]


def _log(text: str) -> None:
    print(f"arbiter serve: {text}", file=sys.stderr, flush=True)


def server_tls(cert: str, key: str) -> ssl.SSLContext:
    """The server's TLS context from a certificate chain and its key (PEM
    files); :class:`ssl.SSLError` or :class:`OSError` if they cannot be used."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


class Server:
    """``arbiter serve``'s server: :meth:`run` listens on ``host``:``port``
    (0: any free port; the one taken is logged as ``listening on
    HOST:PORT``) and runs an :class:`Arena` per spec until cancelled, or
    until :meth:`drain` (``arbiter stop``) has let every arena's games in
    progress end.  With ``tls`` every connection is a TLS stream (its
    handshake inside the wire's handshake timeout)."""

    def __init__(self, db: str, host: str, port: int, specs: list[ArenaSpec], *,
                 tls: ssl.SSLContext | None = None):
        self.db, self.host, self.port, self.specs, self.tls = db, host, port, specs, tls
        self.arenas: list[Arena] = []
        self.drained: str | None = None  # why the server was asked to stop gracefully
        self._drain_asked = trio.Event()  # set by drain (called on the server's loop)

    def drain(self, reason: str) -> None:
        """Pair no new game in any arena; the server ends once the games in
        progress are over (each stored), its arenas' status ``stopped``."""
        if self.drained is None:
            self.drained = reason
            _log(f"{reason}: no new game is paired; stopping once the games in progress end")
            for arena in self.arenas:
                arena.drain()
            self._drain_asked.set()

    async def run(self) -> None:
        with ExitStack() as stack:
            store = stack.enter_context(Store(self.db))
            tokens = stack.enter_context(TokenStore(self.db))
            registry = Registry()
            listener = Listener(tokens, registry, log=_log)
            for spec in self.specs:
                tournament_id = open_arena(store, spec)
                stack.enter_context(store.claim_run(tournament_id))
                store.set_status(tournament_id, RunStatus.RUNNING)
                stack.callback(self._ended, store, tournament_id)
                self.arenas.append(Arena(spec, registry, store, tournament_id, log=_log))
            tcp = await trio.open_tcp_listeners(self.port, host=self.host)
            bound = tcp[0].socket.getsockname()
            listeners: list[trio.abc.Listener[trio.abc.Stream]] = list(tcp)
            if self.tls is not None:
                listeners = [trio.SSLListener(one, self.tls, https_compatible=False) for one in tcp]
                _log("TLS: every connection is encrypted")
            _log(f"listening on {self.host}:{bound[1]}")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(partial(trio.serve_listeners, partial(_guarded, listener),
                                           listeners))
                async with trio.open_nursery() as games:
                    for arena in self.arenas:
                        games.start_soon(arena.run)
                # Arenas end only once drained; a server without one serves
                # until cancelled or drained (nothing in progress to wait for).
                await self._drain_asked.wait()
                nursery.cancel_scope.cancel()  # drained: the listener goes too

    def _ended(self, store: Store, tournament_id: int) -> None:
        if self.drained is not None:
            store.set_status(tournament_id, RunStatus.STOPPED, f"the server stopped ({self.drained})")
        else:
            store.set_status(tournament_id, RunStatus.INTERRUPTED, "the server stopped")


async def _guarded(listener: Listener, stream: trio.abc.Stream) -> None:
    """One connection; a bug in its handling ends that connection only."""
    try:
        await listener.handle(stream)
    except Exception as exc:  # noqa: BLE001 - one connection's failure must not stop the server
        _log(f"a connection failed: {type(exc).__name__}: {exc}")
