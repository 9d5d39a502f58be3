"""``arbiter serve``: the listener and the arenas of one server, until cancelled.

Cancellation (the command line's Ctrl-C or SIGTERM) is the only way out:
games in progress are abandoned (not stored), connections closed, each
arena's tournament marked ``interrupted``.
"""

from __future__ import annotations

import ssl
import sys
from contextlib import ExitStack
from functools import partial

import trio

from arbiter.store import INTERRUPTED, RUNNING, Store
from arbiter.tokens import TokenStore

from .arena import Arena, ArenaSpec, open_arena
from .listener import Listener, Registry

__all__ = ["serve_forever"]


def _log(text: str) -> None:
    print(f"arbiter serve: {text}", file=sys.stderr, flush=True)


def server_tls(cert: str, key: str) -> ssl.SSLContext:
    """The server's TLS context from a certificate chain and its key (PEM
    files); :class:`ssl.SSLError` or :class:`OSError` if they cannot be used."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


async def serve_forever(db: str, host: str, port: int, specs: list[ArenaSpec], *,
                        tls: ssl.SSLContext | None = None) -> None:
    """Listen on ``host``:``port`` (0: any free port; the one taken is
    logged as ``listening on HOST:PORT``) and run an :class:`Arena` per spec.
    With ``tls`` every connection is a TLS stream (its handshake inside the
    wire's handshake timeout)."""
    with ExitStack() as stack:
        store = stack.enter_context(Store(db))
        tokens = stack.enter_context(TokenStore(db))
        registry = Registry()
        listener = Listener(tokens, registry, log=_log)
        arenas = []
        for spec in specs:
            tournament_id = open_arena(store, spec)
            stack.enter_context(store.claim_run(tournament_id))
            store.set_status(tournament_id, RUNNING)
            stack.callback(store.set_status, tournament_id, INTERRUPTED, "the server stopped")
            arenas.append(Arena(spec, registry, store, tournament_id, log=_log))
        tcp = await trio.open_tcp_listeners(port, host=host)
        bound = tcp[0].socket.getsockname()
        listeners: list[trio.abc.Listener[trio.abc.Stream]] = list(tcp)
        if tls is not None:
            listeners = [trio.SSLListener(one, tls, https_compatible=False) for one in tcp]
        if tls is not None:
            _log("TLS: every connection is encrypted")
        _log(f"listening on {host}:{bound[1]}")
        async with trio.open_nursery() as nursery:
            for arena in arenas:
                nursery.start_soon(arena.run)
            nursery.start_soon(partial(trio.serve_listeners, partial(_guarded, listener),
                                       listeners))
            await trio.sleep_forever()


async def _guarded(listener: Listener, stream: trio.abc.Stream) -> None:
    """One connection; a bug in its handling ends that connection only."""
    try:
        await listener.handle(stream)
    except Exception as exc:  # noqa: BLE001 - one connection's failure must not stop the server
        _log(f"a connection failed: {type(exc).__name__}: {exc}")
