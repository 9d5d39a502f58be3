"""``arbiter web``: the web view of a results database (``specs/web.md``).

Served by Hypercorn's trio worker inside this trio process, under the
command line's one interrupt policy: Ctrl-C (or SIGTERM, SIGHUP) cancels
the server and the command exits 130.  The database is opened read-only and
nothing is ever written to it.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import typer

from arbiter.store import DEFAULT_DB, StoreError
from arbiter.web.child import CHILD_OPTION

from .app import Interrupted, app, exit_interrupted, fail, run_interruptible

if TYPE_CHECKING:
    from starlette.applications import Starlette

#: where the view listens unless told: loopback, so only this machine sees it
DEFAULT_HTTP = "127.0.0.1:8000"


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) as (host, port), or ``fail()``."""
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        fail(f"--http {text}: give HOST:PORT, such as {DEFAULT_HTTP}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve anywhere


def web_address(http: str) -> tuple[str, int]:
    """``--http``'s (host, port), warning on stderr when it is not loopback."""
    host, port = parse_http(http)
    if not is_loopback(host):
        print(f"arbiter: warning: --http {http} is not loopback: anyone who can reach this "
              "machine can read every tournament in the database", file=sys.stderr)
    return host, port


def with_web_view(main: Callable[[], Awaitable[None]], db: str, http: str
                  ) -> Callable[[], Awaitable[None]]:
    """``main`` (``arbiter serve``'s server) with the web view of ``db`` on
    ``--http`` served beside it by an ``arbiter web`` child process
    (``specs/web.md`` §The server's view); a view that cannot start is an
    error naming ``--http`` (exit 2) before the server starts.  The child
    warns of an address off loopback, as ``arbiter web`` does."""
    from arbiter.web.child import ViewFailed
    from arbiter.web.serve import beside

    def log(text: str) -> None:
        print(f"arbiter serve: {text}", file=sys.stderr, flush=True)

    both = beside(main, db, *parse_http(http), log)

    async def checked() -> None:
        try:
            await both()
        except ViewFailed as exc:
            fail(f"--http {http}: {exc}")
    return checked


@app.command()
def web(
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database (read only)"),
    http: str = typer.Option(DEFAULT_HTTP, "--http", help="HOST:PORT to listen on (port 0: any free port)"),
    child: bool = typer.Option(False, CHILD_OPTION, hidden=True,
                               help="arbiter serve --http's view (arbiter/web/child.py)"),
) -> None:
    """A read-only web view of the database: tournaments, standings, games with board pictures."""
    from arbiter.web import create_app

    host, port = web_address(http)
    try:
        view = create_app(db)
    except StoreError as exc:
        fail(str(exc))
    try:
        run_interruptible(lambda: _serve(view, host, port, child))
    except Interrupted as exc:
        exit_interrupted(exc, "the web view stopped; the database was not changed")
    except OSError as exc:  # the address: in use, not this machine's
        fail(f"--http {http}: {exc.strerror or exc}")
    finally:
        view.state.reader.close()


async def _serve(view: Starlette, host: str, port: int, child: bool = False) -> None:
    """Serve until cancelled, printing the URL once the socket listens; as
    the server's child, also until stdin reaches its end."""
    import trio

    from arbiter.web.child import be_child, lower_priority
    from arbiter.web.serve import serve_view

    try:
        async with trio.open_nursery() as nursery:
            if child:
                nursery.start_soon(be_child(), nursery.cancel_scope)
            urls = await nursery.start(serve_view, view, host, port)
            # Listening (an in-process call that cannot bind never gets here): a viewer
            # never takes a core the engines need (specs/web.md §The server's view).
            lower_priority()
            for url in urls:
                print(f"arbiter: web view of {view.state.reader.store.path} at {url}/", flush=True)
    except* OSError as group:  # binding the address failed (inside Hypercorn's nurseries)
        raise _first(group) from None


def _first(group: BaseException) -> BaseException:
    """The first exception at the bottom of nested exception groups."""
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    return group
