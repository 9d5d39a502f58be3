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
the tables, indexes and upgrade are :mod:`arbiter.store_schema`).

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

import datetime as _dt
import enum
import fcntl
import hashlib
import json
import os
import shlex
import shutil
import sqlite3
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arbiter.record import as_result
from arbiter.store_schema import (
    SCHEMA_VERSION,
    create_indexes,
    create_tables,
    foreign_problem,
    foreign_refusal,
    migrate,
    schema_version,
)

DEFAULT_DB = "arbiter.db"

#: bytes read at a time when hashing an engine's executable: a file of any
#: size is hashed in bounded memory
_HASH_CHUNK = 1 << 20

#: seconds a write (and opening the file) waits for another process's write
#: lock before it fails: long enough for any other run's commit, a tool's
#: transaction or a checkpoint; short enough that a lock left by a stuck
#: process ends the run with a message instead of hanging it.
BUSY_TIMEOUT = 30.0
#: seconds between two tries of the switch to WAL while another process
#: holds the file (two runs opening a new or old file at once): SQLite
#: answers that switch "locked" at once, without its busy handler, so it is
#: tried again until :data:`BUSY_TIMEOUT`; short beside a switch's few ms.
WAL_RETRY = 0.02

# SQLite's primary result codes (sqlite3.h) that mean something to a user
_BUSY, _LOCKED, _PERM, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = (
    5, 6, 3, 8, 10, 11, 13, 14, 26)

class RunStatus(enum.StrEnum):
    """A tournament's status (specs/storage.md §tournaments); string-valued,
    so the column and JSON keep their text."""

    RUNNING = "running"
    FINISHED = "finished"
    #: Ctrl-C, SIGTERM, a lost server: resumable
    INTERRUPTED = "interrupted"
    #: the run could not go on (an engine that cannot start, the database failed)
    ABORTED = "aborted"
    #: asked to stop gracefully (`arbiter stop`): its games in progress finished, resumable
    STOPPED = "stopped"


_STATUSES = frozenset(RunStatus)

_JSON_COLUMNS = {
    "tournaments": ("config", "engines"),
    "engines": (),
    "entrants": ("spec",),
    "games": ("opening_moves", "moves", "move_data", "record"),
    "events": (),
    "pairings": (),
}



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


class StoreError(Exception):
    """A database that cannot be used (not ours, newer schema, not found,
    locked, full, read-only, deleted or replaced): the message says which."""


class DuplicateGameError(StoreError):
    """A game whose (tournament, key) is already stored."""


class DuplicatePairingError(StoreError):
    """A game pair whose (tournament, pairing, pair) is already stored: a
    round paired a second time."""


class TournamentBusyError(StoreError):
    """Another run (another process, or another claim in this one) is
    playing the tournament now."""


class DatabaseGoneError(StoreError):
    """The database file was deleted or replaced since this store opened it:
    what is written now would go to a file nobody can read (or beside the
    new one), so nothing is."""


def explain(exc: sqlite3.Error, busy_timeout: float = BUSY_TIMEOUT) -> str:
    """What a failing SQLite call means for the user, and what to do: a
    locked, full, read-only or unreadable database each say so (the SQLite
    text alone, "disk I/O error", rarely tells which)."""
    code = _primary_code(exc)
    if code in (_BUSY, _LOCKED):
        return (f"the database is locked: another process (a second run, a tool holding a "
                f"write transaction) kept it longer than the busy timeout of {busy_timeout:g} s; "
                "try again once that process is done")
    if code == _FULL:
        return "the disk (or the database's size limit) is full; free some space and try again"
    if code in (_READONLY, _PERM):
        return ("the database cannot be written (a read-only file, folder or filesystem); "
                "make it writable or choose another --db")
    if code == _CANTOPEN:
        return ("the database file cannot be opened or created (a missing folder, no "
                "permission); check the path or choose another --db")
    if code == _IOERR:
        return ("an input/output error (a failing or full disk, a file size limit, a removed "
                "device); check the disk and try again")
    if code in (_CORRUPT, _NOTADB):
        return "not a usable SQLite database"
    return "the database failed"


def _primary_code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of ``exc`` (0 if it carries none)."""
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def _identity(path: Path) -> tuple[int, int] | None:
    """The file's identity (device, inode), None if there is no file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


def game_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """The complete record (``GameRecord.to_dict()``) of a ``games`` row
    read by any query that has its ``record`` and ``move_data`` columns:
    the record is stored without its moves, which are ``move_data``
    (specs/storage.md §Tables).  A row of a version-1 file, whose record
    still holds them, is returned as it is."""
    record = row["record"]
    record = json.loads(record) if isinstance(record, str) else dict(record)
    if "moves" in record:
        return record
    moves = row.get("move_data")
    moves = json.loads(moves) if isinstance(moves, str) else list(moves or [])
    ordered: dict[str, Any] = {}
    for name, value in record.items():  # the moves in their place: after the opening's
        ordered[name] = value
        if name == "opening_moves":
            ordered["moves"] = moves
    ordered.setdefault("moves", moves)
    return ordered


def executable_sha256(program: str, cwd: str | None) -> str | None:
    """SHA-256 (hex) of the file ``program`` runs, found as the system would
    start it from ``cwd`` (a path with a ``/`` from ``cwd``, a bare name on
    ``PATH``); None when there is no such readable file."""
    if os.sep in program:
        path: str | None = os.path.join(cwd or ".", program)
    else:
        path = shutil.which(program)
    if path is None or not os.path.isfile(path):
        return None
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            while chunk := file.read(_HASH_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _spec_command(spec: Mapping[str, Any]) -> str | None:
    """The command line an engine spec configures (``cmd`` and ``args``)."""
    cmd = spec.get("cmd")
    if not isinstance(cmd, str):
        return None
    args = [str(a) for a in spec.get("args") or []]
    return " ".join([cmd, shlex.join(args)]) if args else cmd


def connect_readonly(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A connection that can only read ``path`` (SQLite's ``mode=ro``), for
    ``Store(readonly=True)``: ``standings``, ``export``, the web view.

    A WAL database is read through its ``-shm`` index, which a reader makes
    when missing: in a folder it cannot write (a database copied from a
    finished run, a read-only mount) that fails, so there the file is opened
    ``immutable`` (no locks, no index) unless its ``-wal`` and ``-shm`` are
    both there already.  ``immutable`` ignores a ``-wal`` file: nobody can
    be writing where no one can make one."""
    uri = f"file:{urllib.parse.quote(str(path.absolute()))}?mode=ro"
    wal = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    if not os.access(path.absolute().parent, os.W_OK) and not all(p.exists() for p in wal):
        uri += "&immutable=1"
    return sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=busy_timeout)


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds and a ``Z``."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


#: what sqlite-utils imports when installed, only to map their scalars to
#: column types (the store writes none): numpy alone costs about 0.2 s of CPU
#: in every ``arbiter`` command that opens a database
_SKIPPED_BY_SQLITE_UTILS = ("numpy", "pandas")
_FIRST_IMPORT = threading.Lock()


def _sqlite_utils() -> Any:
    """The ``sqlite_utils`` module, imported without :data:`_SKIPPED_BY_SQLITE_UTILS`.

    While it is first imported, those names are marked missing in
    ``sys.modules`` (the documented way to make an import fail), and the
    marks are removed after: an ``import numpy`` later, by anyone, works as
    usual.  One already imported is left alone (sqlite-utils then uses it).
    The first import is made under a lock (stores are opened from worker
    threads too), normally by the first store a command opens."""
    with _FIRST_IMPORT:
        if "sqlite_utils" not in sys.modules:
            marked = [name for name in _SKIPPED_BY_SQLITE_UTILS if name not in sys.modules]
            for name in marked:
                sys.modules[name] = None  # type: ignore[assignment]  # the mark of a missing module
            try:
                import sqlite_utils  # noqa: F401  (imported here, without those)
            finally:
                for name in marked:
                    if sys.modules.get(name, ...) is None:
                        del sys.modules[name]
    import sqlite_utils

    return sqlite_utils


class Store:
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

    # -- games -----------------------------------------------------------

    def finished_keys(self, tournament_id: int) -> set[str]:
        with self._lock:
            rows = self.db.execute("select key from games where tournament = ?",
                                   [tournament_id]).fetchall()
        return {row[0] for row in rows}

    def save_game(self, tournament_id: int, *, key: str, seq: int, round: int, pairing: int,
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

    def games(self, tournament_id: int, *, with_record: bool = True) -> list[dict[str, Any]]:
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

    def rated_games(self, *, game: str | None = None,
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

    def count_games(self, tournament_id: int) -> int:
        with self._lock:
            return self.db.execute("select count(*) from games where tournament = ?",
                                   [tournament_id]).fetchone()[0]

    # -- events ----------------------------------------------------------

    def add_event(self, tournament_id: int, kind: str, detail: str, *,
                  engine: str | None = None, key: str | None = None) -> None:
        """Something worth knowing that is not a game: a crash, a restart, a
        failed handshake, an interruption."""
        with self.transaction():
            self.db.table("events").insert({"tournament": tournament_id, "time": now_iso(),
                                      "kind": kind, "engine": engine, "key": key,
                                      "detail": detail})

    def events(self, tournament_id: int) -> list[dict[str, Any]]:
        return self._rows("events", "select * from events where tournament = ? order by id",
                          [tournament_id])

    def iter_games(self, tournament_id: int) -> Iterator[dict[str, Any]]:
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

    def add_pairings(self, tournament_id: int, rows: Iterable[Mapping[str, Any]]) -> None:
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

    def pairings(self, tournament_id: int) -> list[dict[str, Any]]:
        """The tournament's stored game pairs and byes (:data:`PAIRING_COLUMNS`
        and ``created``), by round, pairing and pair; none in a file made
        before the table existed (read as it is)."""
        with self._lock:
            if "pairings" not in self.db.table_names():
                return []
        columns = ", ".join(f"[{c}]" for c in (*self.PAIRING_COLUMNS, "created"))
        return self._rows("pairings", f"select {columns} from pairings where tournament = ? "
                          "order by round, pairing, pair", [tournament_id])
