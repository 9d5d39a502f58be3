"""Serving the web view (``arbiter web``, ``arbiter serve --http``;
``specs/web.md``).

:func:`serve_view`: Hypercorn's trio worker runs the Starlette application
as tasks of the caller's trio run (``arbiter web``'s own process).
:func:`beside`: a run (the match server) with the view served by a child
process, never on the run's own event loop (``arbiter/web/child.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio


async def serve_view(view: Any, host: str, port: int, *,
                     task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Serve ``view`` (:func:`arbiter.web.create_app`) on ``host``:``port`` until
    cancelled; ``task_status.started`` gets the URLs bound (port 0: the one
    taken)."""
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = None  # the command says what matters; a viewer's error is not ours
    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serve, view, config)
        task_status.started(binds)


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


__all__ = ["beside", "serve_view"]
