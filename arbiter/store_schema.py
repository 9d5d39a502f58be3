"""The results database's tables and indexes, and the upgrade of an older file.

Split from :mod:`arbiter.store` (which calls these inside the transaction
that opens a file for writing) so the shape of the data reads in one place:
``specs/storage.md`` §Tables, §Indexes, §Migration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite3

    from sqlite_utils import Database

__all__ = ["SCHEMA_VERSION", "create_indexes", "create_tables", "migrate", "schema_version",
           "foreign_problem", "foreign_refusal", "PRE_SCHEMA_TABLES"]

#: 1: the first; 2: the engines of all tournaments keyed by name, the
#: ``entrants`` of each, games linked to engines by key, ``move_data`` no
#: longer repeated in ``record``.  (The ``pairings`` of Swiss and knockout
#: rounds came later as a table only, made when missing: an arbiter that
#: does not know it ignores it, so the version stayed 2.)
SCHEMA_VERSION = 2

#: The tables an Arbiter database may hold before its schema version is
#: written, with their columns: ``arbiter token add`` on a new file makes only
#: its ``tokens`` table (``arbiter/tokens.py``).  A table of that name with
#: other columns is someone else's.
PRE_SCHEMA_TABLES = {"tokens": ("name", "salt", "hash", "iterations", "created", "revoked")}
#: How many of a foreign database's own tables (views, indexes, triggers) a
#: refusal names: enough to recognise the file.
FOREIGN_NAMES_SHOWN = 5

#: ranks game names after every entrant of a tournament when the migration
#: numbers the engines (above any row id a version-1 file can hold in practice)
_AFTER_ENTRANTS = 1 << 40


def create_tables(db: Database) -> None:
    """Every table of this version that the file lacks (specs/storage.md
    §Tables); one that exists is left as it is."""
    db.table("meta").create({"key": str, "value": str}, pk="key", if_not_exists=True)
    db.table("tournaments").create({
        "id": int, "name": str, "game": str, "format": str, "identity": str,
        "config": str, "engines": str, "total_games": int, "status": str,
        "note": str, "created": str, "updated": str,
    }, pk="id", not_null={"name", "game", "identity", "config", "status", "created"},
        if_not_exists=True)
    build = {"id_name": str, "id_author": str, "command": str, "executable_sha256": str}
    db.table("engines").create({
        "id": int, "name": str, **build, "first_seen": str, "last_seen": str,
    }, pk="id", not_null={"name"}, if_not_exists=True)
    db.table("entrants").create({
        "id": int, "tournament": int, "engine": int, "spec": str, **build,
    }, pk="id", foreign_keys=[("tournament", "tournaments", "id"), ("engine", "engines", "id")],
        not_null={"tournament", "engine"}, if_not_exists=True)
    db.table("games").create({
        "id": int, "tournament": int, "key": str, "seq": int, "round": int,
        "pairing": int, "game_index": int, "pair": int, "game": str,
        "white": str, "black": str, "result": str, "termination": str,
        "detail": str, "plies": int, "opening": str, "opening_fen": str,
        "opening_moves": str, "start_time": str, "end_time": str,
        "moves": str, "move_data": str, "record": str, "stored": str,
        "white_engine": int, "black_engine": int,
    }, pk="id", foreign_keys=[("tournament", "tournaments", "id"),
                              ("white_engine", "engines", "id"),
                              ("black_engine", "engines", "id")],
        not_null={"tournament", "key", "white", "black", "result", "termination"},
        if_not_exists=True)
    db.table("events").create({
        "id": int, "tournament": int, "time": str, "kind": str, "engine": str,
        "key": str, "detail": str,
    }, pk="id", foreign_keys=[("tournament", "tournaments", "id")],
        not_null={"tournament", "time", "kind"}, if_not_exists=True)
    db.table("pairings").create({
        "id": int, "tournament": int, "round": int, "pairing": int, "pair": int,
        "first": str, "second": str, "seq": int, "opening": int, "created": str,
    }, pk="id", foreign_keys=[("tournament", "tournaments", "id")],
        not_null={"tournament", "round", "pairing", "pair", "first", "created"}, if_not_exists=True)

def create_indexes(db: Database) -> None:
    """The indexes the common questions need (specs/storage.md §Indexes)."""
    for table, columns, unique in (
            ("engines", ["name"], True),
            ("entrants", ["tournament", "engine"], True),
            ("games", ["tournament", "key"], True),
            ("games", ["tournament", "seq"], False),
            # Covering: the columns a standings count reads (web view, arbiter/web/data.py).
            ("games", ["tournament", "id", "white", "black", "result", "termination", "pairing",
                       "pair"], False),
            ("games", ["white_engine"], False),
            ("games", ["black_engine"], False),
            ("games", ["termination"], False),
            ("tournaments", ["identity"], False),
            ("tournaments", ["status"], False),
            ("events", ["tournament"], False),
            ("pairings", ["tournament", "pairing", "pair"], True)):
        db.table(table).create_index(columns, unique=unique, if_not_exists=True)


def migrate(db: Database, version: int) -> None:
    """Upgrade a version-1 file in place (specs/storage.md §Migration),
    inside the transaction of :meth:`arbiter.store.Store._ensure_schema`: all of it, or nothing.

    The per-tournament ``engines`` table becomes ``entrants``, linked to
    one new ``engines`` row per name (from the entrants and from the
    games, which also hold the names of arena engines); games get their
    engines' keys; the moves inside ``record`` are dropped (they are
    ``move_data``)."""
    assert version == 1, version  # the only older version there is
    execute = db.execute
    execute("ALTER TABLE engines RENAME TO engines_v1")
    create_tables(db)  # the new engines and entrants; games exists already
    execute("ALTER TABLE games ADD COLUMN white_engine INTEGER REFERENCES engines(id)")
    execute("ALTER TABLE games ADD COLUMN black_engine INTEGER REFERENCES engines(id)")
    # keys in the order the names first appear: by tournament, the entrants
    # as listed, then the names only games hold (arena engines)
    execute(f"""INSERT INTO engines (name, first_seen, last_seen)
               SELECT n.name, min(t.created), max(t.updated) FROM (
                   SELECT tournament, name, id AS rank FROM engines_v1
                   UNION ALL SELECT tournament, white, {_AFTER_ENTRANTS} + 2 * id FROM games
                   UNION ALL SELECT tournament, black, {_AFTER_ENTRANTS} + 2 * id + 1 FROM games) n
               JOIN tournaments t ON t.id = n.tournament
               GROUP BY n.name ORDER BY min(t.id * {_AFTER_ENTRANTS * 4} + n.rank)""")
    execute("""INSERT INTO entrants (id, tournament, engine, spec, command)
               SELECT o.id, o.tournament, e.id, o.spec, json_extract(o.spec, '$.cmd')
               FROM engines_v1 o JOIN engines e ON e.name = o.name ORDER BY o.id""")
    execute("DROP TABLE engines_v1")
    execute("""UPDATE games SET
               white_engine = (SELECT id FROM engines WHERE name = games.white),
               black_engine = (SELECT id FROM engines WHERE name = games.black),
               record = CASE WHEN json_valid(record) AND json_valid(move_data)
                             THEN json_remove(record, '$.moves') ELSE record END""")


# -- whose file it is (specs/storage.md §Someone else's database) --------------------------------


def _columns(conn: sqlite3.Connection, table: str) -> tuple[str, ...]:
    return tuple(row[0] for row in conn.execute("select name from pragma_table_info(?)", [table]))


def schema_version(conn: sqlite3.Connection) -> str | None:
    """The Arbiter schema version written in the file's ``meta`` table (as
    written: the caller judges it), or None when there is none (no such
    table, one of other columns, no such row).  Reads only."""
    if {"key", "value"} <= set(_columns(conn, "meta")):
        row = conn.execute("select value from meta where key = 'schema_version'").fetchone()
        if row is not None:
            return str(row[0])
    return None


def foreign_problem(conn: sqlite3.Connection) -> str | None:
    """Why the SQLite file of ``conn`` is someone else's database, which
    Arbiter must not change: it has no Arbiter schema version and holds
    tables (or views, indexes, triggers) of its own, besides
    :data:`PRE_SCHEMA_TABLES`.  None for an Arbiter database, and for a new
    or empty file (Arbiter's tables go there).  Reads only."""
    if schema_version(conn) is not None:
        return None
    entries = conn.execute("select name, tbl_name from sqlite_master "
                           "where substr(name, 1, 7) != 'sqlite_' order by name").fetchall()
    own = [name for name, table in entries
           if table not in PRE_SCHEMA_TABLES or _columns(conn, table) != PRE_SCHEMA_TABLES[table]]
    if not own:
        return None
    shown = ", ".join(repr(name[:64]) for name in own[:FOREIGN_NAMES_SHOWN])
    more = f" and {len(own) - FOREIGN_NAMES_SHOWN} more" if len(own) > FOREIGN_NAMES_SHOWN else ""
    return f"it holds tables of its own ({shown}{more}) and no Arbiter schema version"


def foreign_refusal(path: object, conn: sqlite3.Connection) -> str | None:
    """The message refusing the file at ``path`` (open as ``conn``) when it
    is someone else's database (:func:`foreign_problem`), else None: the one
    wording of the store and the token table."""
    problem = foreign_problem(conn)
    if problem is None:
        return None
    return (f"{path}: not an arbiter results database ({problem}); Arbiter adds its tables only "
            "to a new or empty file, so this one is left as it is: give another file")
