"""The routes of the web view: each page and its ``/api/...`` JSON twin.

Safety (``specs/web.md`` §Safety):

* GET (and HEAD) only: every route is declared with ``methods=["GET"]``, so
  anything else is a 405, and nothing behind a route writes;
* no path from a URL to the file system: templates are loaded by name from
  this package, ids are numbers looked up in the database, and there is no
  static-file route;
* every id, page and ply is parsed by :func:`_number` (digits only, at most
  :data:`MAX_DIGITS`); anything else, and any id the database does not
  have, is a 404 with one short line;
* the templates autoescape every value (engine names, details, tags are
  peers' text); the one value marked safe is the board picture, which
  :func:`arbiter.svg.render_svg` escapes itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from .data import Finished, NotFound, Reader
from .feed import Feed, event_text

#: digits of an id, page or ply in a URL: SQLite's integers have 19, and a
#: longer string of digits is no id of ours (and no huge int is ever built)
MAX_DIGITS = 18

_TEMPLATES = Path(__file__).with_name("templates")
#: the one script of the view, read once: served by a fixed route, never a path from a URL
_SCRIPT = (Path(__file__).with_name("live.js")).read_bytes()

#: the sections of each page a live update replaces (element ids; each a template)
TOURNAMENT_SECTIONS = ("summary", "standings", "live", "recent")
GAME_SECTIONS = ("summary", "board", "moves", "chart")


def _number(text: str, what: str) -> int:
    """A number from a URL, else :class:`NotFound` naming ``what``."""
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_DIGITS):
        raise NotFound(f"bad {what}")
    return int(text)


def _query_number(request: Request, name: str, default: int | None) -> int | None:
    """The query parameter ``name`` as a number (``default`` when absent)."""
    text = request.query_params.get(name)
    return default if text is None else _number(text, name)


def _page(request: Request) -> int:
    page = _query_number(request, "page", 1)
    assert page is not None  # it has a default
    return page


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=select_autoescape(
        enabled_extensions=("html",), default_for_string=True, default=True))
    env.filters["ms"] = _seconds
    env.filters["part"] = _path_part
    env.filters["duration"] = _duration
    return env


def _duration(seconds: int) -> str:
    """``3725`` seconds as ``1:02:05`` (``2:05`` under an hour)."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _seconds(ms: int | None) -> str:
    """``1234`` ms as ``1.23s`` (empty when unknown)."""
    return "" if ms is None else f"{ms / 1000:.2f}s"


def _path_part(text: str) -> str:
    """``text`` as one piece of a URL path (every reserved character quoted)."""
    return quote(text, safe="")


class _Pages:
    """The endpoints over one :class:`Reader`.  Each is a plain function:
    Starlette runs it in a worker thread, off the event loop."""

    def __init__(self, reader: Reader):
        self.reader = reader
        self.env = _environment()

    def warm(self) -> None:
        """Compile every template and import what the pages use now, not at
        the first viewer's request (seconds on a loaded machine)."""
        import arbiter.svg  # noqa: F401
        import arbiter.tournament  # noqa: F401

        for name in sorted(p.name for p in _TEMPLATES.glob("*.html")):
            self.env.get_template(name)

    def page(self, template: str, api: bool, data: dict[str, Any]) -> Response:
        if api:
            return JSONResponse(data)
        return HTMLResponse(self.env.get_template(template).render(**data))

    def index(self, request: Request, api: bool) -> Response:
        return self.page("index.html", api, self.reader.tournaments())

    def tournament(self, request: Request, api: bool) -> Response:
        tid = _number(request.path_params["id"], "tournament id")
        return self.page("tournament.html", api, self.reader.tournament(tid, _page(request)))

    def game(self, request: Request, api: bool) -> Response:
        gid = _number(request.path_params["id"], "game id")
        return self.page("game.html", api, self.reader.game(gid, _query_number(request, "ply", None)))

    def pgn(self, request: Request) -> Response:
        gid = _number(request.path_params["id"], "game id")
        return PlainTextResponse(self.reader.game_pgn(gid), media_type="application/x-chess-pgn",
                                 headers={"Content-Disposition": f'attachment; filename="game-{gid}.pgn"'})

    def engine(self, request: Request, api: bool) -> Response:
        return self.page("engine.html", api, self.reader.engine(request.path_params["name"], _page(request)))

    def live_game(self, request: Request, api: bool) -> Response:
        tid = _number(request.path_params["id"], "tournament id")
        try:
            data = self.reader.live_game(tid, request.path_params["key"])
        except Finished as done:
            return RedirectResponse(f"{'/api' if api else ''}/game/{done.game_id}", status_code=303)
        return self.page("live_game.html", api, data)

    def sections(self, prefix: str, names: tuple[str, ...], data: dict[str, Any]) -> dict[str, str]:
        """Each live section of a page (``_{prefix}_{name}.html``) as its own
        event: ``section`` with ``{"id": name, "html": ...}``."""
        return {name: event_text("section", {"id": name, "html": self.env.get_template(
            f"_{prefix}_{name}.html").render(**data)}) for name in names}

    def render(self, topic: Hashable) -> dict[str, str] | None:
        """One update of ``topic``: its sections' events (in a worker thread)."""
        assert isinstance(topic, tuple)
        try:
            if topic[0] == "tournament":
                return self.sections("tournament", TOURNAMENT_SECTIONS, self.reader.tournament(topic[1]))
            return self.sections("game", GAME_SECTIONS, self.reader.live_game(topic[1], topic[2]))
        except Finished as done:
            return {"finished": event_text("finished", {"url": f"/game/{done.game_id}"})}
        except NotFound:
            return None


#: headers of every response: no type sniffing (a PGN download holding
#: markup stays text), and pages that may load nothing but their own inline
#: style, images from here, the one script file from here (no inline script
#: runs, even one that escaping missed) and its event streams and JSON
SAFETY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
                                "script-src 'self'; connect-src 'self'; base-uri 'none'; "
                                "form-action 'none'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
}


def _guarded(handler: Callable[..., Response], **fixed: Any) -> Callable[[Request], Response]:
    """``handler`` with :class:`NotFound` as a short 404 (JSON under ``/api``)
    and the :data:`SAFETY_HEADERS`."""
    def endpoint(request: Request) -> Response:
        try:
            response = handler(request, **fixed)
        except NotFound as exc:
            response = _not_found(request, str(exc))
        response.headers.update(SAFETY_HEADERS)
        return response
    return endpoint


def _not_found(request: Request, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=404)
    return PlainTextResponse(f"not found: {message}\n", status_code=404)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such route, a method not allowed), short."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        response = _not_found(request, "no such page")
    else:
        response = PlainTextResponse(f"{exc.detail}\n", status_code=exc.status_code, headers=exc.headers)
    response.headers.update(SAFETY_HEADERS)
    return response


def _events(feed: Feed, topic: Callable[[Request], Hashable]) -> Callable[[Request], Any]:
    """An event stream (``text/event-stream``) of a topic's updates."""
    async def endpoint(request: Request) -> Response:
        response: Response
        try:
            subject = topic(request)
        except NotFound as exc:
            response = _not_found(request, str(exc))
        else:
            first = None if feed.full() else await feed.current(subject)
            if feed.full():
                response = PlainTextResponse("too many viewers\n", status_code=503)
            elif first is None:
                response = _not_found(request, _missing(subject))
            else:
                response = StreamingResponse(_stream(feed, subject, first), media_type="text/event-stream",
                                             headers={"Cache-Control": "no-store"})
        response.headers.update(SAFETY_HEADERS)
        return response
    return endpoint


def _missing(topic: Hashable) -> str:
    """What a topic that is not there is (an event stream's 404)."""
    assert isinstance(topic, tuple)
    if topic[0] == "tournament":
        return f"no tournament {topic[1]}"
    return f"no game {topic[2]!r} in progress in tournament {topic[1]}"


async def _stream(feed: Feed, topic: Hashable, first: dict[str, str]) -> AsyncIterator[str]:
    """The event stream's text; the viewer is removed as soon as it ends
    (``aclosing``: a gone viewer does not wait for the garbage collector)."""
    yield "retry: 2000\n\n"  # the browser reconnects 2 s after a lost connection
    async with aclosing(feed.watch(topic, first)) as events:
        async for event in events:
            yield event


def _tournament_topic(request: Request) -> Hashable:
    return ("tournament", _number(request.path_params["id"], "tournament id"))


def _game_topic(request: Request) -> Hashable:
    return ("game", _number(request.path_params["id"], "tournament id"), request.path_params["key"])


#: the view's icon (a 2x2 board), so that a browser's own request for one is not a 404
_ICON = (b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 2 2"><rect width="2" height="2" '
         b'fill="#e3c98f"/><rect width="1" height="1" fill="#1e1e1e"/><rect x="1" y="1" width="1" '
         b'height="1" fill="#1e1e1e"/></svg>')


def _fixed(body: bytes, media_type: str) -> Callable[[Request], Response]:
    """A route serving ``body``: fixed bytes, never a file named by a URL."""
    def endpoint(request: Request) -> Response:
        response = Response(body, media_type=media_type, headers={"Cache-Control": "max-age=3600"})
        response.headers.update(SAFETY_HEADERS)
        return response
    return endpoint


def create_app(db: str | Path) -> Starlette:
    """The web view of the database at ``db`` (opened read-only now:
    :class:`arbiter.store.StoreError` if it is not a results database).
    ``app.state.reader`` is closed by the caller when it is done; the live
    updates' :class:`Feed` (``app.state.feed``) runs while the application's
    lifespan does (Hypercorn, or a ``TestClient`` used as a context manager)."""
    reader = Reader(db)
    pages = _Pages(reader)
    pages.warm()
    feed = Feed(reader.data_version, pages.render)
    routes = []
    for prefix, api in (("", False), ("/api", True)):
        routes += [
            Route(prefix + "/" if not api else "/api/tournaments", _guarded(pages.index, api=api),
                  methods=["GET"]),
            Route(prefix + "/tournament/{id}", _guarded(pages.tournament, api=api), methods=["GET"]),
            Route(prefix + "/game/{id}", _guarded(pages.game, api=api), methods=["GET"]),
            Route(prefix + "/engine/{name:path}", _guarded(pages.engine, api=api), methods=["GET"]),
            Route(prefix + "/tournament/{id}/live/{key}", _guarded(pages.live_game, api=api),
                  methods=["GET"]),
        ]
    routes += [
        Route("/events/tournament/{id}", _events(feed, _tournament_topic), methods=["GET"]),
        Route("/events/tournament/{id}/live/{key}", _events(feed, _game_topic), methods=["GET"]),
        Route("/live.js", _fixed(_SCRIPT, "text/javascript"), methods=["GET"]),
        Route("/favicon.ico", _fixed(_ICON, "image/svg+xml"), methods=["GET"]),
    ]
    # before /game/{id}, which would take "5.pgn" as an id (and refuse it)
    routes.insert(0, Route("/game/{id}.pgn", _guarded(pages.pgn), methods=["GET"]))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(feed.run)
            yield
            tasks.cancel_scope.cancel()

    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error}, lifespan=lifespan)
    app.state.reader = reader
    app.state.feed = feed
    return app


__all__ = ["MAX_DIGITS", "create_app"]
