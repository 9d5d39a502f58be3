"""The routes of the web view: each page and its ``/api/...`` JSON twin.

Safety (``specs/web.md`` §Safety):

* GET (and HEAD) only: every route is declared with ``methods=["GET"]``, so
  anything else is a 405, and nothing behind a route writes;
* no path from a URL to the file system: templates are loaded by name from
  this package, the static files (stylesheet, script, icon) are read once at
  start into a table that a URL's name can only look up, ids are numbers
  looked up in the database;
* every id, page and ply is parsed by :func:`_number` (digits only, at most
  :data:`MAX_DIGITS`), every filter by :func:`_filters`; anything else, and
  any id the database does not have, is a 404 with one short line;
* the templates autoescape every value (engine names, details, tags are
  peers' text); the values marked safe are the pictures (boards, charts),
  which :mod:`arbiter.svg` and :mod:`arbiter.web.charts` escape themselves.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
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
from .format import FILTERS
from .runs import MAX_FILTER_CHARS, RESULTS

#: digits of an id, page or ply in a URL: SQLite's integers have 19, and a
#: longer string of digits is no id of ours (and no huge int is ever built)
MAX_DIGITS = 18

_TEMPLATES = Path(__file__).with_name("templates")
_STATIC = Path(__file__).with_name("static")
#: the static files' types, by suffix: only these are served
_MEDIA_TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}


def _static_files() -> dict[str, tuple[bytes, str, str]]:
    """The static files, read once: name -> (bytes, media type, version:
    the start of their SHA-256, put in their URLs so that a browser never
    keeps an old one)."""
    import hashlib

    files = {}
    for path in sorted(_STATIC.iterdir()):
        if path.suffix in _MEDIA_TYPES:
            body = path.read_bytes()
            files[path.name] = (body, _MEDIA_TYPES[path.suffix], hashlib.sha256(body).hexdigest()[:12])
    return files

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


def _filters(request: Request) -> dict[str, str | None]:
    """A games list's filters from the query (``engine``, ``result``,
    ``termination``): a result is one of :data:`RESULTS`, a text at most
    :data:`MAX_FILTER_CHARS` long; anything else is not found."""
    chosen = {key: request.query_params.get(key) or None for key in ("engine", "result", "termination")}
    for key, value in chosen.items():
        if value is not None and len(value) > MAX_FILTER_CHARS:
            raise NotFound(f"bad {key}")
    if chosen["result"] is not None and chosen["result"] not in RESULTS:
        raise NotFound("bad result")
    return chosen


def _environment(static: dict[str, tuple[bytes, str, str]]) -> Environment:
    env = Environment(loader=FileSystemLoader(_TEMPLATES), autoescape=select_autoescape(
        enabled_extensions=("html",), default_for_string=True, default=True))
    env.filters.update(FILTERS)
    env.globals["static"] = lambda name: f"/static/{name}?v={static[name][2]}"
    env.globals["results"] = RESULTS
    return env


def _query_url(path: str, params: dict[str, Any]) -> str:
    """``path`` with the query ``params`` that are set (a filter's link)."""
    from urllib.parse import urlencode

    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{path}?{query}" if query else path


class _Pages:
    """The endpoints over one :class:`Reader`.  Each is a plain function:
    Starlette runs it in a worker thread, off the event loop."""

    def __init__(self, reader: Reader, static: dict[str, tuple[bytes, str, str]]):
        self.reader = reader
        self.env = _environment(static)
        self.env.globals["query_url"] = _query_url

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
        return self.page("tournament.html", api,
                         self.reader.tournament(tid, _page(request), _filters(request)))

    def game(self, request: Request, api: bool) -> Response:
        gid = _number(request.path_params["id"], "game id")
        return self.page("game.html", api, self.reader.game(gid, _query_number(request, "ply", None)))

    def pgn(self, request: Request) -> Response:
        gid = _number(request.path_params["id"], "game id")
        return PlainTextResponse(self.reader.game_pgn(gid), media_type="application/x-chess-pgn",
                                 headers={"Content-Disposition": f'attachment; filename="game-{gid}.pgn"'})

    def engines(self, request: Request, api: bool) -> Response:
        return self.page("engines.html", api, self.reader.engines())

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
#: markup stays text), and pages that may load nothing but the stylesheet,
#: images and the one script file from here (no inline script or style
#: applies, even one that escaping missed) and its event streams and JSON
SAFETY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": ("default-src 'none'; style-src 'self'; img-src 'self'; "
                                "script-src 'self'; connect-src 'self'; base-uri 'none'; "
                                "form-action 'none'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
}


class SafetyHeaders:
    """ASGI middleware: every HTTP response of the view, whatever made it (a
    page, an event stream, a static file, a 404 of Starlette's own), gets the
    :data:`SAFETY_HEADERS`, at its start, in one place (a streamed response
    is never buffered for it)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).update(SAFETY_HEADERS)
            await send(message)

        await self.app(scope, receive, with_headers)


def _guarded(handler: Callable[..., Response], **fixed: Any) -> Callable[[Request], Response]:
    """``handler`` with :class:`NotFound` as a short 404 (JSON under ``/api``)."""
    def endpoint(request: Request) -> Response:
        try:
            return handler(request, **fixed)
        except NotFound as exc:
            return _not_found(request, str(exc))
    return endpoint


def _not_found(request: Request, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=404)
    return PlainTextResponse(f"not found: {message}\n", status_code=404)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such route, a method not allowed), short."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return _not_found(request, "no such page")
    return PlainTextResponse(f"{exc.detail}\n", status_code=exc.status_code, headers=exc.headers)


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


#: how long a browser keeps a static file: its URL changes with its bytes
STATIC_MAX_AGE = 86400


def _static(files: dict[str, tuple[bytes, str, str]], fixed: str | None = None
            ) -> Callable[[Request], Response]:
    """The static file the URL names (or ``fixed``): a lookup in ``files``,
    never a path from a URL; any other name is not found."""
    def endpoint(request: Request) -> Response:
        name = fixed or request.path_params["name"]
        if name not in files:
            response: Response = _not_found(request, f"no file {name!r}")
        else:
            body, media_type, _ = files[name]
            response = Response(body, media_type=media_type,
                                headers={"Cache-Control": f"max-age={STATIC_MAX_AGE}"})
        return response
    return endpoint


def create_app(db: str | Path) -> Starlette:
    """The web view of the database at ``db`` (opened read-only now:
    :class:`arbiter.store.StoreError` if it is not a results database).
    ``app.state.reader`` is closed by the caller when it is done; the live
    updates' :class:`Feed` (``app.state.feed``) runs while the application's
    lifespan does (Hypercorn, or a ``TestClient`` used as a context manager)."""
    reader = Reader(db)
    static = _static_files()
    pages = _Pages(reader, static)
    pages.warm()
    feed = Feed(reader.data_version, pages.render)
    routes = []
    for prefix, api in (("", False), ("/api", True)):
        routes += [
            Route(prefix + "/" if not api else "/api/tournaments", _guarded(pages.index, api=api),
                  methods=["GET"]),
            Route(prefix + "/tournament/{id}", _guarded(pages.tournament, api=api), methods=["GET"]),
            Route(prefix + "/game/{id}", _guarded(pages.game, api=api), methods=["GET"]),
            Route(prefix + "/engines", _guarded(pages.engines, api=api), methods=["GET"]),
            Route(prefix + "/engine/{name:path}", _guarded(pages.engine, api=api), methods=["GET"]),
            Route(prefix + "/tournament/{id}/live/{key}", _guarded(pages.live_game, api=api),
                  methods=["GET"]),
        ]
    routes += [
        Route("/events/tournament/{id}", _events(feed, _tournament_topic), methods=["GET"]),
        Route("/events/tournament/{id}/live/{key}", _events(feed, _game_topic), methods=["GET"]),
        Route("/static/{name}", _static(static), methods=["GET"]),
        Route("/favicon.ico", _static(static, "icon.svg"), methods=["GET"]),
    ]
    # before /game/{id}, which would take "5.pgn" as an id (and refuse it)
    routes.insert(0, Route("/game/{id}.pgn", _guarded(pages.pgn), methods=["GET"]))

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(feed.run)
            yield
            tasks.cancel_scope.cancel()

    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error}, lifespan=lifespan,
                    middleware=[Middleware(SafetyHeaders)])
    app.state.reader = reader
    app.state.feed = feed
    return app


__all__ = ["MAX_DIGITS", "create_app"]
