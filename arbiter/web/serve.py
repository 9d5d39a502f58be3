"""Serving the web view (``arbiter web``, ``arbiter serve --http``;
``specs/web.md``).

:func:`serve_view`: Hypercorn's trio worker runs the Starlette application
as tasks of the caller's trio run (``arbiter web``'s own process).
:func:`beside`: a run (the match server) with the view served by a child
process, never on the run's own event loop (``arbiter/web/child.py``).

Stopping whatever the viewers do (``specs/web.md`` §Stopping): Hypercorn
writes each response's bytes in a cancel scope shielded from cancellation,
so a viewer whose event stream stopped reading (its socket's buffers full)
holds a write that no cancellation ends, and with it the whole run.  When
the view is cancelled, :func:`cut_connections` shuts down, at the socket,
every connection accepted on the view's port: a write held by a viewer
then fails at once and Hypercorn ends like for a viewer that went away.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import trio

#: seconds between two cuts of the view's connections while it stops: one
#: accepted in the moment of the stop, or a write begun after a cut, is cut
#: by the next (a stop takes a few of these at most)
CUT_INTERVAL = 0.2


async def serve_view(view: Any, host: str, port: int, *,
                     task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Serve ``view`` (:func:`arbiter.web.create_app`) on ``host``:``port`` until
    cancelled; ``task_status.started`` gets the URLs bound (port 0: the one
    taken).  Cancelled, it ends within moments whatever its viewers do
    (:func:`cut_connections`)."""
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None  # the command says what matters; a viewer's error is not ours
    served = trio.Event()

    async def run(*, task_status: Any) -> None:
        try:
            await serve(view, config, task_status=task_status)
        finally:
            served.set()

    async with trio.open_nursery() as nursery:
        binds = await nursery.start(run)
        task_status.started(binds)
        ports = {urlsplit(url).port for url in binds}
        try:
            await trio.sleep_forever()
        finally:
            with trio.CancelScope(shield=True):
                while not served.is_set():
                    cut_connections(ports)
                    with trio.move_on_after(CUT_INTERVAL):
                        await served.wait()


def cut_connections(ports: set[int | None]) -> int:
    """Shut down (both ways) every connected TCP socket of this process whose
    local port is one of ``ports`` (the view's: its accepted connections,
    never its listening socket or another connection of the process); the
    number cut.  A write waiting on such a socket fails at once."""
    cut = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            with socket.socket(fileno=os.dup(int(name))) as sock:  # a copy: the fd stays open
                if sock.type != socket.SOCK_STREAM or sock.getsockname()[1] not in ports:
                    continue
                sock.getpeername()  # OSError (not connected) for the listener
                sock.shutdown(socket.SHUT_RDWR)
                cut += 1
        except (OSError, ValueError, IndexError, TypeError):
            continue  # closed meanwhile, not an internet socket, not connected
    return cut


def beside(main: Callable[[], Awaitable[None]], db: str | Path, host: str, port: int,
           log: Callable[[str], None]) -> Callable[[], Awaitable[None]]:
    """``main`` with the web view of ``db`` beside it (``arbiter serve
    --http``): served by an ``arbiter web`` child process that the run
    supervises (:mod:`arbiter.web.child`: its own process, at a lower CPU
    priority, so no viewer's work runs on the loop timing the engines).
    The view's URL is printed once it listens, before ``main`` starts; the
    child ends when ``main`` does (or is cancelled).  The database is made
    first if it is missing (``main`` would make it: the view opens it
    read-only).  :class:`arbiter.web.child.ViewFailed` if the view cannot
    start (raised as itself, before ``main`` runs)."""
    from arbiter.store import Store

    from .child import port_of, start_view, stop_view, supervise

    async def both() -> None:
        Store(db).close()  # the schema, as the server's own Store makes it
        proc, url = await start_view(db, host, port)
        print(f"arbiter: web view of {db} at {url}/", file=sys.stderr, flush=True)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(supervise, proc, db, host, port_of(url), log)
                await main()
                nursery.cancel_scope.cancel()
        finally:
            await stop_view(proc)  # (done already if supervise ended it)
    return both


__all__ = ["CUT_INTERVAL", "beside", "cut_connections", "serve_view"]
