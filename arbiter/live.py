"""Games in progress, written by the run (a tournament's, an arena's) for
readers in other processes.

A finished game is one row of ``games``; a game in progress exists only in
the run's memory.  So that a reader of the database (``arbiter web``, in
another process) can show games in progress, :class:`LiveGames` keeps a
``live`` row per running game (``specs/web.md`` §Games in progress):

* the match driver tells it each ply (``play_game``'s ``on_move``): on the
  event loop, a dictionary update and nothing else (with the time the ply
  was seen, so a reader can run the side to move's clock on);
* a task of the run writes every game changed since the last write, every
  :data:`LIVE_INTERVAL` seconds, in ONE transaction in a worker thread, so
  the event loop that times the engines never waits for the disk, and the
  number of writes does not grow with the plies played;
* a game's row goes when the game is stored (it is in ``games`` then) or
  abandoned; all of the run's rows go when it ends (a killed run's rows
  stay, and readers ignore them: no run holds the tournament,
  :meth:`arbiter.store.Store.run_active`);
* a write that fails is skipped (the next one writes the newest state): the
  games' own writes decide whether the run can go on, not this view.

The table is made by the first write (``CREATE TABLE IF NOT EXISTS``), so a
database written before it existed stays readable; :func:`live_games` reads
it (nothing if there is no such table).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from arbiter.store import Store, StoreError, now_iso

#: seconds between two writes of the games in progress: a viewer sees a
#: game move about four times a second (several plies at a time in a fast
#: game), for one small transaction per interval for all games together
LIVE_INTERVAL = 0.25

LIVE_TABLE = "live"

#: games in progress that ended as a stored game of another key (an
#: arena's: its games are keyed by the order they are stored in, known only
#: then): a reader's live page leads to the stored game through it
DONE_TABLE = "live_done"

#: rows of :data:`DONE_TABLE` kept per tournament, the newest: a viewer of a
#: game in progress sees its end within a second; a row is only for that
DONE_KEPT = 100

_CREATE = (f"create table if not exists {LIVE_TABLE} ("
           "tournament integer not null, key text not null, seq integer, game text, "
           "white text, black text, fen text, opening text, moves text, plies integer, "
           "started text, updated text, primary key (tournament, key))")

_CREATE_DONE = (f"create table if not exists {DONE_TABLE} ("
                "tournament integer not null, key text not null, stored text not null, "
                "primary key (tournament, key))")

_PRUNE_DONE = (f"delete from {DONE_TABLE} where tournament = ? and rowid not in (select rowid "
               f"from {DONE_TABLE} where tournament = ? order by rowid desc limit {DONE_KEPT})")

_UPSERT = (f"insert or replace into {LIVE_TABLE} (tournament, key, seq, game, white, black, fen, "
           "opening, moves, plies, started, updated) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")


def ply_entry(ply: Any) -> dict[str, Any]:
    """The figures of one ply a viewer is shown (a :class:`arbiter.record.Ply`)."""
    return {"move": ply.move, "color": ply.color, "time_ms": ply.time_ms, "clock_ms": ply.clock_ms,
            "score": None if ply.score is None else str(ply.score), "depth": ply.depth}


class LiveGames:
    """The running games of one run, and their rows in ``live``."""

    def __init__(self, store: Store, tournament_id: int, game: str):
        self.store = store
        self.tournament_id = tournament_id
        self.game = game
        self._games: dict[str, dict[str, Any]] = {}
        self._changed: set[str] = set()
        self._gone: set[str] = set()
        self._done: dict[str, str] = {}  # live key -> the stored game's key, when they differ
        self._clear = True  # the first write removes a killed run's rows

    # -- on the event loop ------------------------------------------------------

    def started(self, scheduled: Any) -> None:
        """A game of the schedule (:class:`arbiter.schedule.ScheduledGame`) begins."""
        self.begin(scheduled.key, scheduled.seq, scheduled.white, scheduled.black,
                   scheduled.opening.fen, scheduled.opening.moves)

    def begin(self, key: str, seq: int | None, white: str, black: str, fen: str | None = None,
              opening: Any = ()) -> None:
        """Game ``key`` begins (``seq`` orders the games shown; ``fen`` and
        ``opening`` where it starts: the game's start by default)."""
        self._games[key] = {"key": key, "seq": seq, "white": white, "black": black, "fen": fen,
                            "opening": list(opening), "moves": [], "started": now_iso()}
        self._changed.add(key)
        self._gone.discard(key)

    def mover(self, key: str) -> Callable[[Any, Any], None]:
        """The ``on_move`` of game ``key`` for ``play_game`` (a fresh move
        list: a game tried again after a failed handshake starts over)."""
        moves: list[dict[str, Any]] = []
        if key in self._games:
            self._games[key]["moves"] = moves

        def on_move(ply: Any, position: Any) -> None:
            moves.append({**ply_entry(ply), "at": round(time.time(), 3)})
            self._changed.add(key)
        return on_move

    def moved(self, key: str, plies: Any) -> None:
        """Plies of game ``key`` (each a :func:`ply_entry` with the time
        ``at`` it was seen), from a player that plays it elsewhere or here."""
        game = self._games.get(key)
        if game is not None:
            game["moves"].extend(plies)
            self._changed.add(key)

    def ended(self, key: str, stored: str | None = None) -> None:
        """The game is stored (as game ``stored`` when its stored key is not
        ``key``), or abandoned: its row goes at the next write."""
        if self._games.pop(key, None) is not None:
            self._changed.discard(key)
            self._gone.add(key)
            if stored is not None and stored != key:
                self._done[key] = stored

    def _batch(self) -> tuple[list[tuple[Any, ...]], list[tuple[str, str | None]], bool]:
        """What changed since the last write, copied (the thread writes copies)."""
        stamp = now_iso()
        rows = []
        for key in self._changed:
            g = self._games[key]
            rows.append((self.tournament_id, key, g["seq"], self.game, g["white"], g["black"],
                         g["fen"], g["opening"], list(g["moves"]), len(g["opening"]) + len(g["moves"]),
                         g["started"], stamp))
        gone, clear = [(key, self._done.pop(key, None)) for key in self._gone], self._clear
        self._changed.clear()
        self._gone.clear()
        self._clear = False
        return rows, gone, clear

    async def keep_written(self, interval: float = LIVE_INTERVAL, *, in_thread: bool = True) -> None:
        """Write what changed every ``interval`` seconds, until cancelled: in a
        worker thread (``in_thread``: engines are timed on this loop), or at once."""
        import trio

        while True:
            await trio.sleep(interval)
            rows, gone, clear = self._batch()
            if not (rows or gone or clear):
                continue
            if in_thread:
                await trio.to_thread.run_sync(self.write, rows, gone, clear)
            else:
                self.write(rows, gone, clear)

    # -- in a worker thread -------------------------------------------------------

    def write(self, rows: list[tuple[Any, ...]], gone: list[tuple[str, str | None]],
              clear: bool = False) -> None:
        """One transaction: upsert ``rows``, delete ``gone`` (``(key,
        stored)``: a stored key other than ``key`` goes into
        :data:`DONE_TABLE`), all of the tournament's rows first if ``clear``.
        A failure is skipped."""
        encoded = [(*row[:7], json.dumps(row[7]), json.dumps(row[8]), *row[9:]) for row in rows]
        done = [(self.tournament_id, key, stored) for key, stored in gone if stored is not None]
        tid = self.tournament_id
        try:
            with self.store.transaction():
                db = self.store.db.conn
                db.execute(_CREATE)
                db.execute(_CREATE_DONE)
                if clear:
                    db.execute(f"delete from {LIVE_TABLE} where tournament = ?", [tid])
                    db.execute(f"delete from {DONE_TABLE} where tournament = ?", [tid])
                db.executemany(f"delete from {LIVE_TABLE} where tournament = ? and key = ?",
                               [(tid, key) for key, _ in gone])
                db.executemany(_UPSERT, encoded)
                if done:
                    db.executemany(f"insert or replace into {DONE_TABLE} values (?, ?, ?)", done)
                    db.execute(_PRUNE_DONE, [tid, tid])
        except (sqlite3.Error, OSError, StoreError):  # StoreError: the file was deleted or replaced
            pass  # see the module's docstring: the next write has the newest state

    def clear(self) -> None:
        """The run ends: none of its games is in progress any more."""
        self._games.clear()
        self._changed.clear()
        self.write([], [], clear=True)


def stored_key(store: Store, tournament_id: int, key: str) -> str | None:
    """The key of the stored game that game in progress ``key`` became,
    when it is not ``key`` itself (an arena's game; :data:`DONE_TABLE`)."""
    try:
        row = store.db.conn.execute(f"select stored from {DONE_TABLE} where tournament = ? "
                                    "and key = ?", [tournament_id, key]).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return None if row is None else str(row[0])


def live_games(store: Store, tournament_id: int) -> list[dict[str, Any]]:
    """The ``live`` rows of a tournament, in schedule order (moves decoded);
    none when the table does not exist (nothing was ever written live)."""
    try:
        cursor = store.db.conn.execute(
            f"select * from {LIVE_TABLE} where tournament = ? order by seq, key", [tournament_id])
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    for row in rows:
        row["opening"] = json.loads(row["opening"] or "[]")
        row["moves"] = json.loads(row["moves"] or "[]")
    return rows


__all__ = ["DONE_KEPT", "LIVE_INTERVAL", "LiveGames", "live_games", "ply_entry", "stored_key"]
