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

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .data import NotFound, Reader

#: digits of an id, page or ply in a URL: SQLite's integers have 19, and a
#: longer string of digits is no id of ours (and no huge int is ever built)
MAX_DIGITS = 18

_TEMPLATES = Path(__file__).with_name("templates")


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
    return env


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


#: headers of every response: no type sniffing (a PGN download holding
#: markup stays text), and pages that may load nothing but their own inline
#: style (no script runs, even one that escaping missed) and images from here
SAFETY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'",
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


def create_app(db: str | Path) -> Starlette:
    """The web view of the database at ``db`` (opened read-only now:
    :class:`arbiter.store.StoreError` if it is not a results database).
    ``app.state.reader`` is closed by the caller when it is done."""
    reader = Reader(db)
    pages = _Pages(reader)
    routes = []
    for prefix, api in (("", False), ("/api", True)):
        routes += [
            Route(prefix + "/" if not api else "/api/tournaments", _guarded(pages.index, api=api),
                  methods=["GET"]),
            Route(prefix + "/tournament/{id}", _guarded(pages.tournament, api=api), methods=["GET"]),
            Route(prefix + "/game/{id}", _guarded(pages.game, api=api), methods=["GET"]),
            Route(prefix + "/engine/{name:path}", _guarded(pages.engine, api=api), methods=["GET"]),
        ]
    # before /game/{id}, which would take "5.pgn" as an id (and refuse it)
    routes.insert(0, Route("/game/{id}.pgn", _guarded(pages.pgn), methods=["GET"]))
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
    app.state.reader = reader
    return app


__all__ = ["MAX_DIGITS", "create_app"]
