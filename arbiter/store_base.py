"""What :class:`arbiter.store.Store` is built on, usable without opening a store.

Contract: the store's errors (:class:`StoreError` and its kinds) and what a
failing SQLite call means for a user (:func:`explain`); a tournament's
:class:`RunStatus`; decoding a stored ``games`` row back into a complete
record (:func:`game_record`); hashing the executable an engine runs
(:func:`executable_sha256`); opening a database read-only
(:func:`connect_readonly`); timestamps (:func:`now_iso`); and importing
sqlite-utils without numpy (:func:`_sqlite_utils`).  No function here
writes a database.  Everything is re-exported by :mod:`arbiter.store`, the
import path callers use.
"""

from __future__ import annotations

import datetime as _dt
import enum
import hashlib
import json
import os
import shlex
import shutil
import sqlite3
import sys
import threading
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

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
