"""The results database: one SQLite file, written through sqlite-utils.

The tables hold everything a run produces (schema in ``specs/storage.md``):
``tournaments`` (with the full configuration as JSON), ``engines`` (one row
per engine name across every tournament, with what identifies its build),
``entrants`` (the engines of each tournament, as configured and as they
introduced themselves), ``games`` (one row per finished game, linked to its
two engines by key, with its moves, per-move data and record), plus
``events`` (crashes, restarts, failed handshakes) and ``pairings`` (the game
pairs of Swiss and knockout rounds, stored before their games).  An older file is
upgraded in place when opened for writing (``specs/storage.md`` §Migration;
the tables, indexes and upgrade are :mod:`arbiter.store_schema`).  The games,
events and pairings methods are :mod:`arbiter.store_games` (mixed into
:class:`Store`); the errors and helpers usable without a store are
:mod:`arbiter.store_base`.  Both are re-exported here: import from
:mod:`arbiter.store`.

Why it is shaped this way:

* WAL journal, so ``arbiter standings`` (or Datasette) can read while a run
  writes, and a SIGKILL at any moment leaves a consistent file;
* each finished game is committed in ONE transaction the moment it ends, so
  a killed run loses at most the games in progress;
* ``UNIQUE(tournament, key)`` on games: a scheduled game can never be stored
  twice, whatever a resumed run does;
* one run per tournament at a time (:meth:`Store.claim_run`): a lock the
  operating system drops when the process ends, however it ends, so a
  killed run never blocks its resume;
* every write transaction starts as a writer (``BEGIN IMMEDIATE``,
  :meth:`Store.transaction`): a deferred transaction that reads first and
  then finds another process committed meanwhile fails at once with
  "database is locked" (SQLite cannot wait for it), whatever the busy
  timeout; one that asks for the write lock first waits for it instead;
* the file's identity is checked at every commit: a database deleted or
  replaced while a run holds it open is an error, not games played into
  an unlinked file;
* someone else's SQLite file (tables of its own, no schema version of ours)
  is refused before anything is written, the switch to WAL included: our
  tables go only into a new or empty file (``specs/storage.md`` §Someone
  else's database).

The store knows nothing of running engines or schedules: callers hand it
plain dictionaries (a game record's ``to_dict()``), and of a build the names
and command line (:meth:`Store.record_build` only hashes the file the
command runs).  Every method takes a lock, so
one :class:`Store` may be used from a worker thread (``trio.to_thread``) to
keep commits off the event loop that times the engines.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arbiter.record import as_result
from arbiter.store_base import (
    _BUSY,
    _JSON_COLUMNS,
    _LOCKED,
    _STATUSES,
    BUSY_TIMEOUT,
    DEFAULT_DB,
    WAL_RETRY,
    DatabaseGoneError,
    DuplicateGameError,
    DuplicatePairingError,
    RunStatus,
    StoreError,
    TournamentBusyError,
    _identity,
    _primary_code,
    _spec_command,
    _sqlite_utils,
    connect_readonly,
    executable_sha256,
    explain,
    game_record,
    now_iso,
)
from arbiter.store_games import GameTables
from arbiter.store_schema import (
    SCHEMA_VERSION,
    create_indexes,
    create_tables,
    foreign_problem,
    foreign_refusal,
    migrate,
    schema_version,
)

# The helpers and errors live in arbiter.store_base and the games' tables in
# arbiter.store_games; this module re-exports them: callers import from here.
__all__ = [
    "Store", "DEFAULT_DB", "BUSY_TIMEOUT", "WAL_RETRY", "RunStatus", "StoreError",
    "DuplicateGameError", "DuplicatePairingError", "TournamentBusyError", "DatabaseGoneError",
    "explain", "game_record", "executable_sha256", "connect_readonly", "now_iso",
]


class Store(GameTables):
    """A results database at ``path`` (created with its schema if missing).

    ``readonly=True`` never creates or changes anything (for ``standings``)
    and raises :class:`StoreError` if the file is not there.  Opening waits
    up to ``busy_timeout`` seconds for another writer, and so does each write
    (:meth:`transaction`); past it a write raises ``sqlite3.OperationalError``
    (a run then aborts cleanly), opening a :class:`StoreError` saying why
    (:func:`explain`).
    """

    def __init__(self, path: str | Path = DEFAULT_DB, *, readonly: bool = False,
                 busy_timeout: float = BUSY_TIMEOUT):
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._depth = 0  # open transaction() blocks (nested ones join the outer)
        #: the file's schema version (an older one is read as it is when
        #: ``readonly``); None for a file without our tables yet
        self.version: int | None = None
        if readonly and not self.path.exists():
            raise StoreError(f"no database at {self.path}")
        Database = _sqlite_utils().Database  # here: `arbiter replay` and `show` need no SQLite
        try:
            # the busy timeout is set by connect() itself, before any statement:
            # the schema checks and the switch to WAL wait for a writer too
            conn = (connect_readonly(self.path, busy_timeout) if readonly else
                    sqlite3.connect(str(self.path), check_same_thread=False, timeout=busy_timeout))
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            # no sqlite-utils plugins: they would scan every installed
            # distribution at each open and run third-party code on our file
            self.db = Database(conn, execute_plugins=False)
            if not readonly:
                self._refuse_foreign()  # before the switch to WAL, which changes the file
                self._enable_wal(busy_timeout)
                # NORMAL in WAL mode: a committed game survives any crash of
                # the process (SIGKILL); only an OS crash may lose the last ones.
                self.db.execute("PRAGMA synchronous = NORMAL")
                self.db.execute("PRAGMA foreign_keys = ON")
            self._opened = _identity(self.path)
            if not readonly:
                self._ensure_schema()
            else:
                self._check_schema()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {explain(exc, busy_timeout)} ({exc})") from None

    def _enable_wal(self, busy_timeout: float) -> None:
        """The file in WAL mode, the switch tried again every
        :data:`WAL_RETRY` while another process holds it (up to
        ``busy_timeout``; then its ``sqlite3.OperationalError``)."""
        deadline = time.monotonic() + busy_timeout
        while True:
            try:
                self.db.enable_wal()
                return
            except sqlite3.OperationalError as exc:
                if _primary_code(exc) not in (_BUSY, _LOCKED) or time.monotonic() >= deadline:
                    raise
            time.sleep(WAL_RETRY)

    # -- lifecycle -------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self.db.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction around the block: committed at its end,
        rolled back if it raises.  A block inside another joins the outer
        one (an import is one transaction of many writes).

        It begins as a writer (``BEGIN IMMEDIATE``), so a competing writer
        makes it wait up to the busy timeout rather than fail at once, and
        it checks that the file is still the one opened
        (:class:`DatabaseGoneError` if not, before anything is written)."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            conn = self.db.conn
            conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                self._check_identity()
                yield
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise
            finally:
                self._depth = 0

    def _check_identity(self) -> None:
        now = _identity(self.path)
        if now != self._opened:
            what = "deleted" if now is None else "replaced by another file"
            raise DatabaseGoneError(f"{self.path} was {what} after it was opened")

    # -- one run at a time --------------------------------------------------

    def run_lock_path(self, tournament_id: int) -> Path:
        """The lock file of ``tournament_id``'s run, next to the database
        (``arbiter.db-run-3.lock``, holding the pid of the run); there while
        a run holds it, and after a run that was killed."""
        return self.path.with_name(f"{self.path.name}-run-{tournament_id}.lock")

    @contextmanager
    def claim_run(self, tournament_id: int) -> Iterator[None]:
        """Hold the right to run ``tournament_id`` while the block runs, or
        raise :class:`TournamentBusyError` at once if a run holds it.

        Two runs of one tournament would play the same games side by side
        (the second copy of each is refused at commit time, its engine time
        wasted) and overwrite each other's status.  The claim is an exclusive
        ``flock`` on the lock file: the kernel drops it when the file is
        closed or the process ends (SIGKILL included), so no stale claim can
        outlive its run.  The file is removed when the run ends; a claim
        taken on a file that was removed meanwhile (another run ending just
        then) is taken again on the new one."""
        path = self.run_lock_path(tournament_id)
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise StoreError(f"{path}: cannot create the run lock ({exc.strerror})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                os.close(fd)
                who = ("another run in this process" if holder == str(os.getpid())
                       else f"another process (pid {holder})" if holder.isdigit()
                       else "another process")
                raise TournamentBusyError(
                    f"tournament {tournament_id} in {self.path} is being run by {who}") from None
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # locked a file another run removed on its way out: again
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            try:
                os.unlink(path)  # while still holding it: no one can take this file after
            except OSError:
                pass
            os.close(fd)  # drops the lock

    def run_active(self, tournament_id: int) -> bool:
        """Whether a run holds ``tournament_id`` now (see :meth:`claim_run`):
        a status ``running`` without one is a run that was killed."""
        try:
            fd = os.open(self.run_lock_path(tournament_id), os.O_RDONLY)
        except OSError:
            return False  # never run since the lock files exist, or unreadable: no claim seen
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # refused while a claim is held
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    # -- schema ----------------------------------------------------------

    def _ensure_schema(self) -> None:
        """The tables and indexes of this version, created when missing, an
        older file upgraded first (:func:`arbiter.store_schema.migrate`), in
        one transaction: a second process opening the same old file waits,
        then finds it upgraded."""
        with self.transaction():
            version = self._check_schema(allow_empty=True)
            if version is not None and version < SCHEMA_VERSION:
                migrate(self.db, version)
            create_tables(self.db)
            create_indexes(self.db)
            self.db.table("meta").insert({"key": "schema_version", "value": str(SCHEMA_VERSION)},
                                         replace=True)
            self.version = SCHEMA_VERSION

    def _refuse_foreign(self) -> None:
        """:class:`StoreError` for someone else's SQLite file: no Arbiter
        schema version and tables of its own (specs/storage.md §Someone
        else's database).  Reads only: such a file is left as it was."""
        refusal = foreign_refusal(self.path, self.db.conn)
        if refusal is not None:
            raise StoreError(refusal)

    def _check_schema(self, allow_empty: bool = False) -> int | None:
        """The file's schema version (None: no tables of ours yet, when
        ``allow_empty``: a new or empty file), also kept as :attr:`version`;
        :class:`StoreError` for a file that is someone else's or newer than
        this arbiter."""
        version = schema_version(self.db.conn)
        if version is None:
            if allow_empty:
                self._refuse_foreign()
                self.version = None
                return None  # a new or empty file: our tables go next
            reason = foreign_problem(self.db.conn) or "no arbiter tables"
            raise StoreError(f"{self.path}: not an arbiter results database ({reason})")
        if not version.isdigit() or int(version) < 1:
            raise StoreError(f"{self.path}: no schema version this arbiter knows "
                             f"({version!r}) in its meta table")
        if int(version) > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema version {version} is newer than "
                             f"this arbiter's ({SCHEMA_VERSION})")
        self.version = int(version)
        return self.version

    # -- reading helpers -------------------------------------------------

    def _rows(self, table: str, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            rows = list(self.db.query(sql, list(params)))
        for row in rows:
            for column in _JSON_COLUMNS[table]:
                if isinstance(row.get(column), str):
                    row[column] = json.loads(row[column])
            if table == "tournaments" and row.get("status") in _STATUSES:
                row["status"] = RunStatus(row["status"])  # typed from here to the edge
            elif table == "games" and "result" in row:
                row["result"] = as_result(row["result"])
        return rows

    # -- tournaments -----------------------------------------------------

    def create_tournament(self, *, name: str, game: str, format: str, identity: str,
                          config: dict[str, Any], engines: list[dict[str, Any]],
                          total_games: int) -> int:
        """A new tournament and its entrants (``{"name": ..., ...spec}``),
        each linked to the ``engines`` row of its name (made if new), in one
        transaction; returns its id."""
        stamp = now_iso()
        with self.transaction():
            table = self.db.table("tournaments")
            table.insert({
                "name": name, "game": game, "format": format, "identity": identity,
                "config": json.dumps(config, sort_keys=True),
                "engines": json.dumps([e["name"] for e in engines]),
                "total_games": total_games, "status": RunStatus.RUNNING, "note": "",
                "created": stamp, "updated": stamp,
            })
            tournament_id = table.last_pk
            assert tournament_id is not None  # an insert sets it
            self.db.table("entrants").insert_all(
                {"tournament": tournament_id, "engine": self._engine_key(e["name"], stamp),
                 "spec": json.dumps(e, sort_keys=True), "command": _spec_command(e)}
                for e in engines)
        return int(tournament_id)

    def _engine_key(self, name: str, stamp: str) -> int:
        """The ``engines`` row of ``name`` (made if new), its ``last_seen``
        moved to ``stamp``; inside a transaction."""
        row = self.db.conn.execute(
            "INSERT INTO engines (name, first_seen, last_seen) VALUES (?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET last_seen = excluded.last_seen RETURNING id",
            [name, stamp, stamp]).fetchone()
        return int(row[0])

    def record_build(self, tournament_id: int, name: str, *, argv: list[str], cwd: str | None,
                     id_name: str | None, id_author: str | None) -> dict[str, str | None]:
        """What identifies the build engine ``name`` runs in this tournament:
        its ``id name`` and ``id author``, its command line and the SHA-256
        of its executable (``argv[0]`` found as the system would run it from
        ``cwd``; None when that is no readable file).  Stored on its entrant
        row and, as the latest build seen, on its ``engines`` row; returned.
        specs/storage.md §Engines."""
        build = {"id_name": id_name, "id_author": id_author, "command": shlex.join(argv),
                 "executable_sha256": executable_sha256(argv[0], cwd) if argv else None}
        stamp = now_iso()
        with self.transaction():
            key = self._engine_key(name, stamp)
            self.db.table("engines").update(key, build)
            found = self.db.execute("SELECT id FROM entrants WHERE tournament = ? AND engine = ?",
                                    [tournament_id, key]).fetchone()
            if found is None:
                self.db.table("entrants").insert({"tournament": tournament_id, "engine": key,
                                                  **build})
            else:
                self.db.table("entrants").update(found[0], build)
        return build

    def tournament(self, tournament_id: int) -> dict[str, Any] | None:
        rows = self._rows("tournaments", "select * from tournaments where id = ?", [tournament_id])
        return rows[0] if rows else None

    def tournaments(self) -> list[dict[str, Any]]:
        return self._rows("tournaments", "select * from tournaments order by id")

    def find_tournament(self, identity: str) -> dict[str, Any] | None:
        """The latest tournament created with this identity (config hash)."""
        rows = self._rows("tournaments",
                          "select * from tournaments where identity = ? order by id desc limit 1",
                          [identity])
        return rows[0] if rows else None

    def latest_tournament(self) -> dict[str, Any] | None:
        rows = self._rows("tournaments", "select * from tournaments order by id desc limit 1")
        return rows[0] if rows else None

    def set_status(self, tournament_id: int, status: RunStatus, note: str | None = None) -> None:
        values: dict[str, Any] = {"status": status, "updated": now_iso()}
        if note is not None:
            values["note"] = note
        with self.transaction():
            self.db.table("tournaments").update(tournament_id, values)

    def end_run(self, tournament_id: int, status: RunStatus, note: str, detail: str) -> None:
        """How a run ended: its status and note, and an event of kind
        ``status`` saying ``detail``, in one transaction (both are stored,
        or neither: a run can then say truly which)."""
        with self.transaction():
            self.set_status(tournament_id, status, note)
            self.add_event(tournament_id, status, detail)

    def engines(self, tournament_id: int) -> list[dict[str, Any]]:
        """The tournament's entrants in the order given: ``name`` and
        ``spec``, and (from version 2) the ``engine`` key and build columns."""
        if self.version == 1:  # an old file read as it is (readonly)
            return self._rows("entrants", "select * from engines where tournament = ? order by id",
                              [tournament_id])
        return self._rows("entrants", "select n.*, e.name as name from entrants n "
                          "join engines e on e.id = n.engine where n.tournament = ? order by n.id",
                          [tournament_id])

    def all_engines(self) -> list[dict[str, Any]]:
        """Every engine of the database (``engines`` rows) by key; none in a
        version-1 file."""
        if self.version == 1:
            return []
        return self._rows("engines", "select * from engines order by id")
