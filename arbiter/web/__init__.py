"""The web view of a results database (``arbiter web``; ``specs/web.md``).

:func:`create_app` builds the Starlette application over one database:
``app.py`` has the routes, ``data.py`` the read-only queries (through the
store and standings code the command line uses), ``feed.py`` the live
updates (one watcher of the database, fanned out to bounded viewers),
``charts.py`` the SVG charts, ``serve.py`` Hypercorn inside a trio run,
``live.js`` the one script, ``templates/`` the pages.
"""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
