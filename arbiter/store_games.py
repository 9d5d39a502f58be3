"""The games, events and pairings tables of :class:`arbiter.store.Store`.

Contract: :class:`GameTables` is a mixin of :class:`~arbiter.store.Store`
(its only user): storing a finished game in one transaction, once per key
(:class:`DuplicateGameError` otherwise), reading games back (whole, for
ratings, counted, or streamed one at a time), the run's events, and the game
pairs of Swiss and knockout rounds (stored before their games, once:
:class:`DuplicatePairingError`).  It relies on the store's connection, lock,
transactions and row decoding, named by :class:`_StoreCore`; the schema is
``specs/storage.md``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

from arbiter.store_base import DuplicateGameError, DuplicatePairingError, game_record, now_iso

#: The columns :meth:`Store.save_game` writes, in one prepared statement: a
#: game is stored once per game of every run, and sqlite-utils' ``insert``
#: rebuilds its statement on each call (two thirds of a game's store time on
#: a cluster's coordinator, bench/README.md §cluster.py).
_GAME_COLUMNS = (
    "tournament", "key", "seq", "round", "pairing", "game_index", "pair", "game", "white",
    "black", "result", "termination", "detail", "plies", "opening", "opening_fen",
    "opening_moves", "start_time", "end_time", "moves", "move_data", "record", "stored",
    "white_engine", "black_engine")
_INSERT_GAME = (f"INSERT INTO games ({', '.join(_GAME_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_GAME_COLUMNS))})")


class _StoreCore(Protocol):
    """What :class:`GameTables` uses of the store it is mixed into."""

    @property
    def db(self) -> Any: ...  # a sqlite_utils.Database

    @property
    def _lock(self) -> AbstractContextManager[Any]: ...

    @property
    def PAIRING_COLUMNS(self) -> tuple[str, ...]: ...  # the class constant

    def transaction(self) -> AbstractContextManager[None]: ...

    def _rows(self, table: str, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]: ...

    def _engine_key(self, name: str, stamp: str) -> int: ...


class GameTables:
    """The games, events and pairings methods of :class:`arbiter.store.Store`."""

    # -- games -----------------------------------------------------------

    def finished_keys(self: _StoreCore, tournament_id: int) -> set[str]:
        with self._lock:
            rows = self.db.execute("select key from games where tournament = ?",
                                   [tournament_id]).fetchall()
        return {row[0] for row in rows}

    def save_game(self: _StoreCore, tournament_id: int, *, key: str, seq: int, round: int, pairing: int,
                              index: int, pair: int, opening: dict[str, Any], record: dict[str, Any],
                              move_data: str | None = None) -> int:
        """Store one finished game in one transaction; returns its row id.

        ``record`` is a game record's ``to_dict()``; ``move_data``, when the
        caller has it, the JSON text of its ``moves`` (else written here:
        :meth:`GameRecord.encoded_moves`).  Raises
        :class:`DuplicateGameError` if the key is already stored (nothing is
        written then)."""
        moves = record.get("moves") or []
        row = {
            "tournament": tournament_id, "key": key, "seq": seq, "round": round,
            "pairing": pairing, "game_index": index, "pair": pair,
            "game": record.get("game"), "white": record["white"], "black": record["black"],
            "result": record["result"], "termination": record["termination"],
            "detail": record.get("termination_detail") or "",
            "plies": len(record.get("opening_moves") or []) + len(moves),  # from the starting position
            "opening": opening.get("source", ""), "opening_fen": opening.get("fen"),
            "opening_moves": json.dumps(list(opening.get("moves") or [])),
            "start_time": record.get("start_time"), "end_time": record.get("end_time"),
            "moves": json.dumps([m["move"] if isinstance(m, dict) else str(m) for m in moves]),
            "move_data": json.dumps(moves) if move_data is None else move_data,  # stored here only
            "record": json.dumps({k: v for k, v in record.items() if k != "moves"}),
            "stored": now_iso(),
        }
        with self._lock:
            try:
                with self.transaction():
                    row["white_engine"] = self._engine_key(row["white"], row["stored"])
                    row["black_engine"] = self._engine_key(row["black"], row["stored"])
                    conn = self.db.conn
                    cursor = conn.execute(_INSERT_GAME, [row[c] for c in _GAME_COLUMNS])
                    conn.execute("UPDATE tournaments SET updated = ? WHERE id = ?",
                                 [row["stored"], tournament_id])
                    assert cursor.lastrowid is not None  # an insert sets it
                    return int(cursor.lastrowid)
            except sqlite3.IntegrityError as exc:
                if "UNIQUE" in str(exc):
                    raise DuplicateGameError(
                        f"game {key} of tournament {tournament_id} is already stored") from None
                raise

    def games(self: _StoreCore, tournament_id: int, *, with_record: bool = True) -> list[dict[str, Any]]:
        """The tournament's finished games in schedule order."""
        columns = "*" if with_record else (
            "id, tournament, key, seq, round, pairing, game_index, pair, game, white, black, "
            "result, termination, detail, plies, opening, start_time, end_time")
        rows = self._rows("games", f"select {columns} from games where tournament = ? "
                          "order by seq, id", [tournament_id])
        if with_record:
            for row in rows:
                row["record"] = game_record(row)
        return rows

    def rated_games(self: _StoreCore, *, game: str | None = None,
                                tournaments: Iterable[int] | None = None) -> list[dict[str, Any]]:
        """Every stored game's ``tournament``, ``game``, ``white``, ``black``
        and ``result`` (of ``game`` only, of the ``tournaments`` only, when
        given), by id: what a rating list is made of."""
        sql = "select tournament, game, white, black, result from games"
        where: list[str] = []
        params: list[Any] = []
        if game is not None:
            where.append("game = ?")
            params.append(game)
        if tournaments is not None:
            ids = sorted(set(tournaments))
            where.append(f"tournament in ({', '.join('?' * len(ids))})")
            params.extend(ids)
        if where:
            sql += " where " + " and ".join(where)
        return self._rows("games", sql + " order by id", params)

    def count_games(self: _StoreCore, tournament_id: int) -> int:
        with self._lock:
            return self.db.execute("select count(*) from games where tournament = ?",
                                   [tournament_id]).fetchone()[0]

    # -- events ----------------------------------------------------------

    def add_event(self: _StoreCore, tournament_id: int, kind: str, detail: str, *,
                              engine: str | None = None, key: str | None = None) -> None:
        """Something worth knowing that is not a game: a crash, a restart, a
        failed handshake, an interruption."""
        with self.transaction():
            self.db.table("events").insert({"tournament": tournament_id, "time": now_iso(),
                                      "kind": kind, "engine": engine, "key": key,
                                      "detail": detail})

    def events(self: _StoreCore, tournament_id: int) -> list[dict[str, Any]]:
        return self._rows("events", "select * from events where tournament = ? order by id",
                          [tournament_id])

    def iter_games(self: _StoreCore, tournament_id: int) -> Iterator[dict[str, Any]]:
        """The tournament's finished games in schedule order, one row at a
        time (``id``, ``key``, ``seq``, ``round`` and the complete ``record``, its
        moves put back from ``move_data``: :func:`game_record`),
        so that reading every game (``arbiter export``) holds one game in
        memory, whatever the database's size."""
        with self._lock:
            cursor = self.db.conn.execute(
                "select id, key, seq, round, record, move_data from games where tournament = ? "
                "order by seq, id", [tournament_id])
        while True:
            with self._lock:
                row = cursor.fetchone()
            if row is None:
                return
            yield {"id": row[0], "key": row[1], "seq": row[2], "round": row[3],
                   "record": game_record({"record": row[4], "move_data": row[5]})}

    # -- pairings of Swiss and knockout rounds ------------------------------

    #: the columns of a ``pairings`` row a caller gives (specs/storage.md §pairings)
    PAIRING_COLUMNS = ("round", "pairing", "pair", "first", "second", "seq", "opening")

    def add_pairings(self: _StoreCore, tournament_id: int, rows: Iterable[Mapping[str, Any]]) -> None:
        """Store game pairs of a Swiss or knockout round (each a mapping of
        :data:`PAIRING_COLUMNS`; ``arbiter.schedule.RoundPair.to_dict()``) in
        one transaction, before any of their games is played: all of them or
        none.  :class:`DuplicatePairingError` if one of them (tournament,
        pairing, pair) is stored already (nothing is written then)."""
        stamp = now_iso()
        values = [[tournament_id, *(row.get(c) for c in self.PAIRING_COLUMNS), stamp] for row in rows]
        columns = ("tournament", *self.PAIRING_COLUMNS, "created")
        sql = (f"INSERT INTO pairings ({', '.join(f'[{c}]' for c in columns)}) "
               f"VALUES ({', '.join('?' * len(columns))})")
        with self._lock:
            try:
                with self.transaction():
                    self.db.conn.executemany(sql, values)
            except sqlite3.IntegrityError as exc:
                if "UNIQUE" in str(exc):
                    raise DuplicatePairingError(
                        f"a game pair of tournament {tournament_id} is already stored "
                        f"({exc}): a round is paired once") from None
                raise

    def pairings(self: _StoreCore, tournament_id: int) -> list[dict[str, Any]]:
        """The tournament's stored game pairs and byes (:data:`PAIRING_COLUMNS`
        and ``created``), by round, pairing and pair; none in a file made
        before the table existed (read as it is)."""
        with self._lock:
            if "pairings" not in self.db.table_names():
                return []
        columns = ", ".join(f"[{c}]" for c in (*self.PAIRING_COLUMNS, "created"))
        return self._rows("pairings", f"select {columns} from pairings where tournament = ? "
                          "order by round, pairing, pair", [tournament_id])
