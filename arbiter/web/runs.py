"""What a tournament's page tells of its run beside the standings
(``specs/web.md`` §The tournament page): progress and the time left, the
run's configuration as stored, what an arena knows of its engines, and the
filters of the games list.  Plain values from the store (read-only), every
peer's text returned as data for the templates to escape.
"""

from __future__ import annotations

import datetime as _dt
import json
import shlex
from typing import Any

from arbiter.games import Result
from arbiter.store import RunStatus, Store

#: the ``format`` of an arena's tournament row (arbiter.server.arena.ARENA_FORMAT;
#: the view does not import the server)
ARENA = "arena"

#: the results a games list may be filtered by, with their words
RESULTS = {Result.WHITE_WINS: "White won", Result.DRAW: "drawn", Result.BLACK_WINS: "Black won"}

#: characters of a filter's text at most (an engine's name, a termination):
#: longer text is no name of ours, and is refused before any query
MAX_FILTER_CHARS = 1000


def progress(store: Store, summary: dict[str, Any]) -> dict[str, Any]:
    """Games done of scheduled, and for a running tournament the time left
    at this run's pace (games stored since its start)."""
    done, total = summary["done"], summary["total_games"] or 0
    info: dict[str, Any] = {"done": done, "total": total,
                            "percent": round(100 * done / total, 1) if total else 0.0,
                            "eta_seconds": None}
    if summary["status"] != RunStatus.RUNNING:
        return info
    started = store.db.conn.execute(
        "select time from events where tournament = ? and kind in ('start', 'resume') "
        "order by id desc limit 1", [summary["id"]]).fetchone()
    if started is None:
        return info
    played = store.db.conn.execute("select count(*) from games where tournament = ? and stored >= ?",
                                   [summary["id"], started[0]]).fetchone()[0]
    elapsed = (_dt.datetime.now(_dt.UTC) - parse_time(started[0])).total_seconds()
    if played and elapsed > 0:
        info["eta_seconds"] = round(elapsed / played * max(0, total - done))
    return info


def parse_time(text: str) -> _dt.datetime:
    """A stored time (``2026-12-02T00:40:00.068Z``) as an aware datetime."""
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def configuration(store: Store, row: dict[str, Any]) -> dict[str, Any]:
    """The run's configuration as stored (``specs/storage.md``): the
    settings that define its games and how it ran, and each engine with its
    command, options and build (``entrants``: ``id name``, author, the
    SHA-256 of its executable).  An engine's environment is not shown (it
    may hold what its owner keeps private)."""
    config = _json(row.get("config")) or {}
    builds = {e["name"]: e for e in store.engines(row["id"])}
    engines = []
    for spec in config.get("engines") or []:
        built = builds.get(spec.get("name"), {})
        argv = ([spec["cmd"]] if spec.get("cmd") else []) + [str(a) for a in spec.get("args") or []]
        engines.append({
            "name": spec.get("name"), "command": " ".join(argv) if argv else None,
            "options": {str(k): str(v) for k, v in (spec.get("options") or {}).items()},
            "tc": spec.get("tc"), "timemargin_ms": spec.get("timemargin_ms") or None,
            "build": {key: built.get(key) for key in ("id_name", "id_author", "command",
                                                      "executable_sha256")}})
    openings = config.get("openings") or []
    return {
        "format": config.get("format") or row.get("format"), "game": config.get("game") or row["game"],
        "tc": config.get("tc"), "games": config.get("games"), "rounds": config.get("rounds"),
        "total_games": row.get("total_games"),
        "openings": {"file": config.get("openings_file"), "count": len(openings),
                     "order": config.get("order"), "seed": config.get("seed"),
                     "random_plies": config.get("random_plies") or 0},
        "maxplies": config.get("maxplies"),
        "adjudication": {"resign": _setting(config.get("resign")), "draw": _setting(config.get("draw"))},
        "timemargin_ms": config.get("timemargin_ms"), "stall_ms": config.get("stall_ms"),
        "sprt": _setting(config.get("sprt")), "concurrency": config.get("concurrency"),
        "restart": config.get("restart"), "engines": engines,
    }


def _setting(value: Any) -> str | None:
    """A setting given as text or as a table (``resign``, ``draw``, ``sprt``), as text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(f"{k}={shlex.quote(str(v))}" for k, v in value.items())
    return str(value)


def arena_engines(store: Store, tournament_id: int, playing: set[str]) -> list[dict[str, Any]]:
    """An arena's engines, each with when its last game ended and whether it
    plays now (a game in progress).  Engines connected and waiting for a
    game are not in the database: the server keeps them in memory."""
    rows = store.db.conn.execute(
        "select name, max(end_time) from (select white as name, end_time from games where tournament = ? "
        "union all select black, end_time from games where tournament = ?) group by name",
        [tournament_id, tournament_id]).fetchall()
    last = {name: ended for name, ended in rows}
    return [{"name": name, "last_game": last.get(name), "playing": name in playing}
            for name in sorted(set(last) | playing, key=lambda n: (n not in playing, n))]


def filters_where(filters: dict[str, str | None]) -> tuple[str, list[Any]]:
    """The SQL condition (after ``tournament = ?``) and its bound values
    for a games list's filters (``engine``, ``result``, ``termination``)."""
    sql, params = "", []
    if filters.get("engine") is not None:
        sql += " and (white = ? or black = ?)"
        params += [filters["engine"], filters["engine"]]
    if filters.get("result") is not None:
        sql += " and result = ?"
        params.append(filters["result"])
    if filters.get("termination") is not None:
        sql += " and termination = ?"
        params.append(filters["termination"])
    return sql, params


def filter_options(standings: dict[str, Any], filters: dict[str, str | None]) -> dict[str, Any]:
    """What each filter may be set to: the standings' engines and
    terminations, the three results; the one chosen marked by the value."""
    return {"engine": [e["name"] for e in standings["engines"]],
            "result": [{"value": k, "label": v} for k, v in RESULTS.items()],
            "termination": sorted(standings["terminations"]),
            "active": any(v is not None for v in filters.values())}


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


__all__ = ["ARENA", "MAX_FILTER_CHARS", "RESULTS", "arena_engines", "configuration", "filter_options",
           "filters_where", "parse_time", "progress"]
