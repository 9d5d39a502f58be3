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

from arbiter.games import Result
from arbiter.live import live_games, ply_entry, stored_key
from arbiter.record import GameRecord, Ply
from arbiter.store import RunStatus, Store, game_record

from . import charts, engines, runs
from .counts import Count, crosstable
from .queries import rows

#: games per page of a tournament's or an engine's games: a page stays small
#: (its response bounded) however many games a tournament has
GAMES_PAGE_SIZE = 50

#: the status shown for a tournament stored as running that no run holds
#: (its run was killed, or the machine crashed)
KILLED = "killed"

#: the columns of a game row shown in lists (not its moves or record)
_LIST_COLUMNS = ("id, tournament, key, seq, round, pairing, game_index, pair, game, white, black, "
                 "result, termination, detail, plies, opening, start_time, end_time")


#: board pictures of games in progress remembered (by game and ply): each
#: viewer's update of a tournament page shows every running game, so one
#: picture serves every viewer; a few concurrencies' worth is plenty
LIVE_PICTURES = 64

#: engines whose page figures (totals, head to head, rating history) are
#: remembered until a game is stored: each costs a pass over every game of
#: the database (about 100 ms of CPU at 10,000 games, bench/README.md)
ENGINE_PAGES = 32


class NotFound(LookupError):
    """An id, page or ply the database does not have; ``str()`` says which."""


class Finished(LookupError):
    """A game in progress that has ended since: ``game_id`` is its stored game."""

    def __init__(self, game_id: int):
        super().__init__(f"game {game_id}")
        self.game_id = game_id


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
        #: (svg, side to move, position string) of a game in progress at a ply
        self._pictures: dict[tuple[int, str, int], tuple[str, str, str]] = {}
        self._counts: dict[int, Count] = {}
        #: each engine's page figures with the last game id they counted
        self._engines: dict[str, tuple[int | None, dict[str, Any]]] = {}

    def close(self) -> None:
        self.store.close()

    def data_version(self) -> int:
        """SQLite's ``data_version``: it changes whenever another connection
        (a run writing the database) commits; cheap, and nothing is read."""
        with self._using() as store:
            return int(store.db.conn.execute("pragma data_version").fetchone()[0])

    @contextmanager
    def _using(self) -> Iterator[Store]:
        with self._lock:
            yield self.store

    def _query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        """Rows of a query the Store has no method for (a page of games, one
        game, an engine's games), parameters always bound, never formatted."""
        with self._using() as store:
            return rows(store, sql, params)

    # -- the tournaments ---------------------------------------------------

    def tournaments(self) -> dict[str, Any]:
        """Every tournament: name, game, format, status, games played of
        scheduled, created and updated (arenas among them: format ``arena``)."""
        with self._using() as store:
            listed = [_summary(store, row) for row in store.tournaments()]
        return {"tournaments": listed}

    def tournament(self, tournament_id: int, page: int = 1,
                   filters: dict[str, str | None] | None = None) -> dict[str, Any]:
        """One tournament: its summary, progress, standings (``arbiter
        standings --json``'s figures), results by colour, the SPRT's chart,
        the games in progress, its configuration, and one page of its games
        (the latest first; ``filters``: only an engine's, a result's, a
        termination's)."""
        filters = {key: (filters or {}).get(key) for key in ("engine", "result", "termination")}
        with self._using() as store:
            row = store.tournament(tournament_id)
            if row is None:
                raise NotFound(f"no tournament {tournament_id}")
            summary = _summary(store, row)
            standings, llr, colours = self._standings_of(store, row, summary)
            progress = runs.progress(store, summary)
            configuration = runs.configuration(store, row)
            where, params = runs.filters_where(filters)
            total = summary["done"] if not where else store.db.conn.execute(
                f"select count(*) from games where tournament = ?{where}",
                [tournament_id, *params]).fetchone()[0]
            offset = _offset(page, total)
            games = rows(store, f"select {_LIST_COLUMNS} from games where tournament = ?{where} "
                         "order by seq desc, id desc limit ? offset ?",
                         [tournament_id, *params, GAMES_PAGE_SIZE, offset])
        live = self.live(tournament_id) if summary["status"] == RunStatus.RUNNING else []
        sprt = standings["sprt"]
        arena = None
        if summary["format"] == runs.ARENA:
            with self._using() as store:
                arena = {"engines": runs.arena_engines(store, tournament_id,
                                                       {n for g in live for n in (g["white"], g["black"])})}
        return {"tournament": summary, "progress": progress, "standings": standings,
                "colours": colours, "crosstable": crosstable(standings), "sprt_llr": llr,
                "sprt_chart": charts.llr_chart(llr, sprt["lower"], sprt["upper"]) if sprt else None,
                "live": live, "arena": arena, "configuration": configuration,
                "filters": filters, "filter_options": runs.filter_options(standings, filters),
                "games": games, "page": _page_info(page, total)}

    def _standings_of(self, store: Store, row: dict[str, Any], summary: dict[str, Any]
                      ) -> tuple[dict[str, Any], list[list[float]], dict[str, Any]]:
        """The standings JSON and the LLR over games: counted on from the
        last look when a game was stored since, remembered otherwise (the
        key: games stored, ``updated``, status)."""
        stamp = (summary["done"], row["updated"], row["status"])
        cached = self._standings.get(row["id"])
        if cached is None or cached[0] != stamp:
            count = self._counts.get(row["id"])
            if count is None:
                count = self._counts[row["id"]] = Count(store, row)
            count.update(store)
            cached = stamp, {"standings": count.standings().to_json(), "llr": list(count.points),
                             "colours": count.colour_counts()}
            self._standings[row["id"]] = cached
        return cached[1]["standings"], cached[1]["llr"], cached[1]["colours"]

    # -- games in progress ---------------------------------------------------

    def live(self, tournament_id: int) -> list[dict[str, Any]]:
        """The games in progress of a tournament a run holds now: each with
        its board (small), clocks, last move and page."""
        with self._using() as store:
            if not store.run_active(tournament_id):
                return []
            found = live_games(store, tournament_id)
        return [self._live_entry(tournament_id, row) for row in found]

    def _live_entry(self, tournament_id: int, row: dict[str, Any]) -> dict[str, Any]:
        moves = [m["move"] for m in row["moves"]]
        shown = len(row["opening"]) + len(moves)
        key = (tournament_id, row["key"], shown)
        cached = self._pictures.get(key)
        if cached is None:
            position = _position(row["game"], row["fen"], row["opening"] + moves)
            cached = (_render(position, moves[-1] if moves else None,
                              f"{row['white']} - {row['black']}, ply {shown}"),
                      position.to_move.value, position.fen())
            if len(self._pictures) >= LIVE_PICTURES:
                self._pictures.clear()
            self._pictures[key] = cached
        svg, to_move, fen = cached
        clocks: dict[str, int | None] = {"white": None, "black": None}
        for m in row["moves"]:
            clocks[m["color"]] = m["clock_ms"]
        last = row["moves"][-1] if row["moves"] else None
        return {"key": row["key"], "white": row["white"], "black": row["black"], "plies": shown,
                "last_move": last and last["move"], "clock_ms": clocks, "svg": svg, "fen": fen,
                "to_move": to_move, "ticking": _ticking(to_move, clocks[to_move], last and last.get("at")),
                "started": row["started"], "updated": row["updated"]}

    def live_game(self, tournament_id: int, key: str) -> dict[str, Any]:
        """A game in progress as :meth:`game` shows a stored one (at its
        last ply); :class:`Finished` once it is stored."""
        with self._using() as store:
            active = store.run_active(tournament_id)
            found = [r for r in live_games(store, tournament_id) if r["key"] == key] if active else []
            became = None if found else stored_key(store, tournament_id, key)
            name = None
            if found:
                name = store.db.conn.execute("select name from tournaments where id = ?",
                                             [tournament_id]).fetchone()[0]
        if not found:
            stored = self._query("select id from games where tournament = ? and key = ?",
                                 [tournament_id, key if became is None else became])
            if stored:
                raise Finished(stored[0]["id"])
            raise NotFound(f"no game {key!r} in progress in tournament {tournament_id}")
        row = found[0]
        entry = self._live_entry(tournament_id, row)
        moves = _listed(row["opening"], [{k: v for k, v in m.items() if k != "at"} for m in row["moves"]])
        return {"game": {"tournament": tournament_id, "tournament_name": name, "key": key,
                         "game": row["game"], "white": row["white"], "black": row["black"],
                         "plies": entry["plies"], "start_time": row["started"], "updated": row["updated"]},
                "live": entry, "moves": moves, "info": moves[-1] if moves else None,
                "charts": {"score": charts.score_chart(moves), "time": charts.time_chart(moves)}}

    # -- one game ------------------------------------------------------------

    def _game_row(self, game_id: int) -> dict[str, Any]:
        found = self._query("select g.*, t.name as tournament_name, t.config as tournament_config, "
                            "t.total_games as tournament_total_games from games g "
                            "join tournaments t on t.id = g.tournament where g.id = ?", [game_id])
        if not found:
            raise NotFound(f"no game {game_id}")
        return found[0]

    def game(self, game_id: int, ply: int | None = None) -> dict[str, Any]:
        """One game at ``ply`` (None: the end): its board picture and
        position string, the move list with each move's time, clock, score,
        depth, nodes, speed and principal variation (``info``: the shown
        ply's), the charts of score and time per ply, the termination and
        its detail, and the plies to step to."""
        row = self._game_row(game_id)
        record = GameRecord.from_dict(game_record(row))
        moves = record.all_moves
        total = len(moves)
        shown = total if ply is None else ply
        if not 0 <= shown <= total:
            raise NotFound(f"game {game_id} has no ply {ply} (it has {total})")
        position = _position(record.game, record.fen, moves[:shown])
        svg = _render(position, moves[shown - 1] if shown else None,
                      f"{record.white} - {record.black}, ply {shown} of {total}")
        listed = _listed(record.opening_moves, [_figures(p) for p in record.moves])
        link = f"/game/{game_id}?ply="
        return {
            "game": {"id": row["id"], "tournament": row["tournament"],
                     "tournament_name": row["tournament_name"], "key": row["key"],
                     "game": record.game, "white": record.white, "black": record.black,
                     "result": record.result, "termination": record.termination,
                     "detail": record.termination_detail, "plies": total,
                     "start_time": record.start_time, "end_time": record.end_time},
            "moves": listed,
            "ply": shown,
            "info": listed[shown - 1] if shown else None,
            "steps": {"first": 0, "previous": max(shown - 1, 0),
                      "next": min(shown + 1, total), "last": total},
            "svg": svg,
            "fen": position.fen(),
            "charts": {"score": charts.score_chart(listed, shown, link),
                       "time": charts.time_chart(listed, shown, link)},
        }

    def game_pgn(self, game_id: int) -> str:
        """The game as ``arbiter export`` writes it (the same tags, the same bytes)."""
        from arbiter import records
        from arbiter.records import export_tags  # the one rule for Event/Site/Round

        row = self._game_row(game_id)
        tournament = {"name": row["tournament_name"], "config": _json(row["tournament_config"]),
                      "total_games": row["tournament_total_games"]}
        record = game_record(row)
        return records.write_game(GameRecord.from_dict(record),
                                  export_tags(tournament, {**row, "record": record}))

    # -- the engines ---------------------------------------------------------

    def engines(self) -> dict[str, Any]:
        """Every engine of the database with its totals (:func:`engines.engine_list`)."""
        with self._using() as store:
            return {"engines": engines.engine_list(store)}

    def engine(self, name: str, page: int = 1) -> dict[str, Any]:
        """An engine: its build, totals, rating after each tournament (per
        game kind, with its chart), results against each opponent, and its
        games across the tournaments of the database (the latest first),
        each with its result from the engine's side."""
        with self._using() as store:
            last = store.db.conn.execute("select max(id) from games").fetchone()[0]
            cached = self._engines.get(name)
            if cached is None or cached[0] != last:
                summary = engines.engine_summary(store, name)
                if summary is None:
                    raise NotFound(f"no engine {name!r}")
                history = engines.rating_history(store, name)
                for series in history:
                    series["chart"] = charts.rating_chart(series["points"]) if series["points"] else None
                if len(self._engines) >= ENGINE_PAGES:
                    self._engines.clear()
                cached = self._engines[name] = (last, {**summary, "ratings": history})
            figures = cached[1]
            total = figures["totals"]["games"]
            offset = _offset(page, total)
            games = rows(store, "select g.id, g.tournament, t.name as tournament_name, g.game, g.white, "
                         "g.black, g.result, g.termination, g.detail, g.plies, g.end_time from games g "
                         "join tournaments t on t.id = g.tournament where g.white = ? or g.black = ? "
                         "order by g.id desc limit ? offset ?", [name, name, GAMES_PAGE_SIZE, offset])
        for game in games:
            game["outcome"] = _outcome(game, name)
        return {"engine": name, **figures, "games": games, "page": _page_info(page, total)}


def _figures(ply: Ply) -> dict[str, Any]:
    """A stored ply's figures (:func:`arbiter.live.ply_entry`) with what only
    a stored game has: nodes, the speed (nodes per second of the engine's
    own time, else of the measured one), the principal variation."""
    seconds = (ply.engine_time_ms or ply.time_ms or 0) / 1000
    return {**ply_entry(ply), "nodes": ply.nodes, "pv": list(ply.pv),
            "nps": round(ply.nodes / seconds) if ply.nodes and seconds > 0 else None}


def _position(game: str, fen: str | None, moves: list[str]) -> Any:
    from arbiter.games import get_game

    return get_game(game).position(fen, moves)


def _render(position: Any, last_move: str | None, title: str) -> str:
    from arbiter.svg import render_svg

    return render_svg(position, last_move=last_move, title=title)


def _ticking(side: str, clock_ms: int | None, moved: float | None) -> dict[str, Any] | None:
    """The clock of the side to move (``side``) now, for the page to count
    down from (``specs/web.md`` §Clocks): its clock after its own last move
    less the time since the last move of the game (``moved``, the epoch
    seconds the run wrote with it), never below zero; None before that
    side's first move (no figure to count from)."""
    import time

    if clock_ms is None or moved is None:
        return None
    return {"side": side, "left_ms": max(0, round(clock_ms - 1000 * (time.time() - moved)))}


def _listed(opening: list[str] | tuple[str, ...], plies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The move list: the opening's book moves (no figures), then each
    played ply with its figures (:func:`_figures`; a game in progress's
    have no nodes, speed or principal variation)."""
    book = len(opening)
    listed: list[dict[str, Any]] = [{"ply": i + 1, "move": m, "color": None, "book": True, "time_ms": None,
               "clock_ms": None, "score": None, "depth": None, "nodes": None, "pv": [], "nps": None}
              for i, m in enumerate(opening)]
    listed += [{"ply": book + i + 1, "book": False, "nodes": None, "pv": [], "nps": None, **p}
               for i, p in enumerate(plies)]
    return listed


def _summary(store: Store, row: dict[str, Any]) -> dict[str, Any]:
    """A tournament's line: what ``arbiter standings --list`` shows, the
    status ``killed`` for a ``running`` one that no run holds."""
    status = row["status"]
    if status == RunStatus.RUNNING and not store.run_active(row["id"]):
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
    if game["result"] == Result.DRAW:
        return "draw"
    white_won = game["result"] == Result.WHITE_WINS
    return "win" if white_won == (game["white"] == name) else "loss"


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
