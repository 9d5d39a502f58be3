"""What the web view shows, as plain JSON-able values (``specs/web.md``).

Every page is one of these dictionaries rendered by a template, and its
``/api/...`` twin is the same dictionary as JSON: the page cannot show a
figure the API does not have.  The figures come from the code the command
line uses: :class:`arbiter.store.Store` opened read-only,
:func:`arbiter.tournament.tournament_standings` (``arbiter standings``),
:func:`arbiter.records.write_game` with ``export``'s tags (``arbiter
export``), :func:`arbiter.svg.render_svg` (``arbiter show --svg``).

A :class:`Reader` is used from Starlette's worker threads (the endpoints are
plain functions, so no query runs on the event loop that serves the pages):
it takes one lock around each use of its one connection.  Nothing here
writes; every value from the database is returned as data, never as markup
(the templates escape it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arbiter.record import GameRecord
from arbiter.store import RUNNING, Store

#: games per page of a tournament's or an engine's games: a page stays small
#: (its response bounded) however many games a tournament has
GAMES_PAGE_SIZE = 50

#: the status shown for a tournament stored as running that no run holds
#: (its run was killed, or the machine crashed)
KILLED = "killed"

#: the columns of a game row shown in lists (not its moves or record)
_LIST_COLUMNS = ("id, tournament, key, seq, round, pairing, game_index, pair, game, white, black, "
                 "result, termination, detail, plies, opening, start_time, end_time")


class NotFound(LookupError):
    """An id, page or ply the database does not have; ``str()`` says which."""


class Reader:
    """The read-only queries of the web view over one results database.

    Raises :class:`arbiter.store.StoreError` when the file is not a
    results database (as ``arbiter standings`` does)."""

    def __init__(self, path: str | Path):
        self.store = Store(path, readonly=True)
        self._lock = threading.Lock()
        #: each tournament's standings JSON with the (games, updated) it was
        #: computed at: recomputed only when a game was stored since (a
        #: finished tournament of 10,000 games costs its recount once)
        self._standings: dict[int, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    def close(self) -> None:
        self.store.close()

    @contextmanager
    def _using(self) -> Iterator[Store]:
        with self._lock:
            yield self.store

    def _query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        """Rows of a query the Store has no method for (a page of games, one
        game, an engine's games), parameters always bound, never formatted."""
        with self._using() as store:
            cursor = store.db.execute(sql, params)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    # -- the tournaments ---------------------------------------------------

    def tournaments(self) -> dict[str, Any]:
        """Every tournament: name, game, format, status, games played of
        scheduled, created and updated."""
        with self._using() as store:
            rows = [_summary(store, row) for row in store.tournaments()]
        return {"tournaments": rows}

    def tournament(self, tournament_id: int, page: int = 1) -> dict[str, Any]:
        """One tournament: its summary, standings (``arbiter standings
        --json``'s figures), termination counts and one page of its games,
        the latest first."""
        from arbiter.tournament import tournament_standings  # trio and the run: only here

        with self._using() as store:
            row = store.tournament(tournament_id)
            if row is None:
                raise NotFound(f"no tournament {tournament_id}")
            summary = _summary(store, row)
            stamp = (summary["done"], row["updated"], row["status"])
            cached = self._standings.get(tournament_id)
            if cached is None or cached[0] != stamp:
                cached = stamp, tournament_standings(store, row).to_json()
                self._standings[tournament_id] = cached
            standings = cached[1]
        total = summary["done"]
        offset = _offset(page, total)
        games = self._query(f"select {_LIST_COLUMNS} from games where tournament = ? "
                            "order by seq desc, id desc limit ? offset ?",
                            [tournament_id, GAMES_PAGE_SIZE, offset])
        return {"tournament": summary, "standings": standings, "crosstable": crosstable(standings),
                "games": games, "page": _page_info(page, total)}

    # -- one game ------------------------------------------------------------

    def _game_row(self, game_id: int) -> dict[str, Any]:
        rows = self._query("select g.*, t.name as tournament_name, t.config as tournament_config, "
                           "t.total_games as tournament_total_games from games g "
                           "join tournaments t on t.id = g.tournament where g.id = ?", [game_id])
        if not rows:
            raise NotFound(f"no game {game_id}")
        return rows[0]

    def game(self, game_id: int, ply: int | None = None) -> dict[str, Any]:
        """One game at ``ply`` (None: the end): its board picture, the move
        list with each move's time, clock, score and depth, the termination
        and its detail, and the plies to step to."""
        from arbiter.games import get_game
        from arbiter.svg import render_svg

        row = self._game_row(game_id)
        record = GameRecord.from_dict(_json(row["record"]))
        moves = record.all_moves
        total = len(moves)
        shown = total if ply is None else ply
        if not 0 <= shown <= total:
            raise NotFound(f"game {game_id} has no ply {ply} (it has {total})")
        position = get_game(record.game).position(record.fen, moves[:shown])
        title = f"{record.white} - {record.black}, ply {shown} of {total}"
        svg = render_svg(position, last_move=moves[shown - 1] if shown else None, title=title)
        book = len(record.opening_moves)
        listed = [{"ply": i + 1, "move": m, "color": None, "book": True, "time_ms": None,
                   "clock_ms": None, "score": None, "depth": None}
                  for i, m in enumerate(record.opening_moves)]
        listed += [{"ply": book + i + 1, "move": p.move, "color": p.color, "book": False,
                    "time_ms": p.time_ms, "clock_ms": p.clock_ms,
                    "score": None if p.score is None else str(p.score), "depth": p.depth}
                   for i, p in enumerate(record.moves)]
        return {
            "game": {"id": row["id"], "tournament": row["tournament"],
                     "tournament_name": row["tournament_name"], "key": row["key"],
                     "game": record.game, "white": record.white, "black": record.black,
                     "result": record.result, "termination": record.termination,
                     "detail": record.termination_detail, "plies": total,
                     "start_time": record.start_time, "end_time": record.end_time},
            "moves": listed,
            "ply": shown,
            "steps": {"first": 0, "previous": max(shown - 1, 0),
                      "next": min(shown + 1, total), "last": total},
            "svg": svg,
        }

    def game_pgn(self, game_id: int) -> str:
        """The game as ``arbiter export`` writes it (the same tags, the same bytes)."""
        from arbiter import records
        from arbiter.records import export_tags  # the one rule for Event/Site/Round

        row = self._game_row(game_id)
        tournament = {"name": row["tournament_name"], "config": _json(row["tournament_config"]),
                      "total_games": row["tournament_total_games"]}
        record = _json(row["record"])
        return records.write_game(GameRecord.from_dict(record),
                                  export_tags(tournament, {**row, "record": record}))

    # -- one engine ----------------------------------------------------------

    def engine(self, name: str, page: int = 1) -> dict[str, Any]:
        """An engine's games across the tournaments of the database (the
        latest first), each with its result from the engine's side."""
        where = "from games g join tournaments t on t.id = g.tournament where g.white = ? or g.black = ?"
        total = self._query(f"select count(*) as n {where}", [name, name])[0]["n"]
        if total == 0 and not self._query("select 1 from engines where name = ? limit 1", [name]):
            raise NotFound(f"no engine {name!r}")
        offset = _offset(page, total)
        games = self._query(f"select g.id, g.tournament, t.name as tournament_name, g.game, g.white, "
                            f"g.black, g.result, g.termination, g.detail, g.plies, g.end_time {where} "
                            "order by g.id desc limit ? offset ?",
                            [name, name, GAMES_PAGE_SIZE, offset])
        for game in games:
            game["outcome"] = _outcome(game, name)
        return {"engine": name, "games": games, "page": _page_info(page, total)}


def crosstable(standings: dict[str, Any]) -> dict[str, Any]:
    """W-D-L of each engine against each other, in the standings' order,
    from the standings' own pairs (each pair seen from both sides), with the
    pentanomial counts of the complete game pairs."""
    names = [e["name"] for e in standings["engines"]]
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for pair in standings["pairs"]:
        a, b = pair["first"], pair["second"]
        penta = pair["pentanomial"]
        cells[a, b] = {"wins": pair["wins"], "draws": pair["draws"], "losses": pair["losses"],
                       "pentanomial": penta}
        cells[b, a] = {"wins": pair["losses"], "draws": pair["draws"], "losses": pair["wins"],
                       "pentanomial": None if penta is None else penta[::-1]}
    return {"engines": names,
            "rows": [{"name": a, "cells": [cells.get((a, b)) for b in names]} for a in names]}


def _summary(store: Store, row: dict[str, Any]) -> dict[str, Any]:
    """A tournament's line: what ``arbiter standings --list`` shows, the
    status ``killed`` for a ``running`` one that no run holds."""
    status = row["status"]
    if status == RUNNING and not store.run_active(row["id"]):
        status = KILLED
    return {"id": row["id"], "name": row["name"], "game": row["game"], "format": row["format"],
            "status": status, "note": row.get("note") or "", "done": store.count_games(row["id"]),
            "total_games": row["total_games"], "created": row["created"], "updated": row["updated"]}


def _offset(page: int, total: int) -> int:
    """The first row of ``page`` (1-based); a page past the last is not
    found (page 1 always exists, empty or not)."""
    if page < 1 or (page > 1 and (page - 1) * GAMES_PAGE_SIZE >= total):
        raise NotFound(f"no page {page}")
    return (page - 1) * GAMES_PAGE_SIZE


def _page_info(page: int, total: int) -> dict[str, Any]:
    pages = max(1, -(-total // GAMES_PAGE_SIZE))
    return {"page": page, "pages": pages, "size": GAMES_PAGE_SIZE, "total": total,
            "previous": page - 1 if page > 1 else None, "next": page + 1 if page < pages else None}


def _outcome(game: dict[str, Any], name: str) -> str:
    """``win``, ``draw`` or ``loss`` from ``name``'s side (both sides: its own game)."""
    if game["result"] == "1/2-1/2":
        return "draw"
    white_won = game["result"] == "1-0"
    return "win" if white_won == (game["white"] == name) else "loss"


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
