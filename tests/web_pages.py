"""The web view in tests: the application over a database as a client, its
pages and JSON fetched, and read: the text a reader sees and the cells of a
table, from the HTML (the standard library's parser), so that a test states
the facts a page shows rather than its markup."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any


@contextmanager
def view_client(db: Path) -> Iterator[Any]:
    """Starlette's test client of the web view of ``db`` (its lifespan run:
    the live updates' feed), the database closed after."""
    from starlette.testclient import TestClient

    from arbiter.web import create_app

    app = create_app(db)
    with TestClient(app) as client:
        yield client
    app.state.reader.close()


def get_json(client: Any, url: str) -> Any:
    response = client.get(url)
    assert response.status_code == 200, (url, response.text)
    assert response.headers["content-type"] == "application/json"
    return response.json()


def get_page(client: Any, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.text)
    assert response.headers["content-type"].startswith("text/html")
    return response.text


class _Tables(HTMLParser):
    """The rows of every table whose class list has ``cls``, each a list of
    its cells' text (whitespace collapsed)."""

    def __init__(self, cls: str):
        super().__init__()
        self.cls = cls
        self.depth = 0  # inside a matching table (nested tables count)
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            classes = (dict(attrs).get("class") or "").split()
            if self.depth or self.cls in classes:
                self.depth += 1
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "table" and self.depth:
            self.depth -= 1
        elif self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def table_rows(page: str, cls: str) -> list[list[str]]:
    """The rows (header rows too) of the tables of class ``cls`` in ``page``."""
    parser = _Tables(cls)
    parser.feed(page)
    return parser.rows


def text(page: str) -> str:
    """The page's text without its markup, whitespace collapsed, entities
    read (what a reader sees, in order)."""
    import html

    body = re.sub(r"<(script|style|title)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())
