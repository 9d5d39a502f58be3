"""The web view of a results database (``arbiter web``; ``specs/web.md``).

:func:`create_app` builds the Starlette application over one database:
``app.py`` has the routes, ``data.py`` the read-only queries (through the
store and standings code the command line uses), ``feed.py`` the live
updates (one watcher of the database, fanned out to bounded viewers),
``charts.py`` the SVG charts, ``serve.py`` Hypercorn inside a trio run,
``static/`` the stylesheet and the one script (``live.js``), ``templates/``
the pages; ``counts.py``, ``runs.py``, ``engines.py`` what the tournament
and engine pages count and tell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    """:func:`create_app` imported when first asked for: ``arbiter --help``
    and the server's view supervisor (:mod:`arbiter.web.child`) import this
    package without Starlette, Jinja2 and anyio."""
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
