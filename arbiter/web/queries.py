"""The one way the view's own queries (those the store has no method for)
reach the database: parameters always bound, never formatted into the SQL,
each row a dictionary of its columns."""

from __future__ import annotations

from typing import Any

from arbiter.store import Store


def rows(store: Store, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    """The rows of ``sql`` with ``params`` bound, as dictionaries."""
    cursor = store.db.conn.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


__all__ = ["rows"]
