"""Serving the web view inside a trio program (``arbiter web``, ``arbiter
serve --http``; ``specs/web.md``).

Hypercorn's trio worker runs the Starlette application as tasks of the
caller's trio run: the view's requests and its one database watcher share
the event loop with whatever else the program does (the match server's
games), and never run a query on it (``arbiter/web/feed.py``, the
endpoints run in worker threads).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from .app import create_app


async def serve_view(view: Any, host: str, port: int, *,
                     task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Serve ``view`` (:func:`create_app`) on ``host``:``port`` until
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


def beside(main: Callable[[], Awaitable[None]], db: str | Path, host: str, port: int
           ) -> Callable[[], Awaitable[None]]:
    """``main`` with the web view of ``db`` served beside it in the same trio
    run (``arbiter serve --http``): the view's URL is printed once it
    listens; both end when either does.  The database is made first if it
    is missing (``main`` would make it: the view opens it read-only)."""
    from arbiter.store import Store

    async def both() -> None:
        Store(db).close()  # the schema, as the server's own Store makes it
        view = create_app(db)
        try:
            async with trio.open_nursery() as nursery:
                for url in await nursery.start(serve_view, view, host, port):
                    print(f"arbiter: web view of {db} at {url}/", file=sys.stderr, flush=True)

                async def run_main() -> None:
                    await main()
                    nursery.cancel_scope.cancel()
                nursery.start_soon(run_main)
        finally:
            view.state.reader.close()
    return both


__all__ = ["beside", "serve_view"]
