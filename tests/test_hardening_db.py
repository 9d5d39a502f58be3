"""The database under contention and faults (specs/storage.md §Durability,
§Imports): real SQLite files, and real processes where another writer
or a run of its own is the point.

* a second process taking the write lock in short bursts (``db_helpers/
  lock_bursts.py``) makes a run's writes wait, never fail; a lock held past
  the busy timeout still aborts the run cleanly;
* a locked, full or read-only database says which, and a run says truly
  whether its final status was stored;
* a database deleted or replaced under a run stops it (exit 1);
* ``arbiter import`` is all or nothing, and can be retried.
"""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from bad_engines.harness import processes_with
from cli import arbiter, child_env, invoke, start

from arbiter.config import TournamentConfig
from arbiter.engine import EngineConfig
from arbiter.run.coordinator import Coordinator
from arbiter.run.observer import Observer
from arbiter.store import Store, StoreError, explain
from arbiter.tournament import open_tournament

PY = sys.executable
LOCK_BURSTS = Path(__file__).parent / "db_helpers" / "lock_bursts.py"
#: a guard against a hang, never a measure of speed
WAIT = 120.0


def engine(name: str, tag: str = "", kind: str = "random") -> str:
    text = f"cmd='{PY} -m sample_engines.{kind}' name={name}"
    return text + (f" env.TAG={tag}" if tag else "")


def lock_bursts(db: Path, hold_ms: float, every_ms: float) -> subprocess.Popen[str]:
    """The helper writer, started and holding the lock once (it said ``locked``)."""
    proc = subprocess.Popen([PY, str(LOCK_BURSTS), str(db), str(hold_ms), str(every_ms)],
                            stdout=subprocess.PIPE, text=True, env=child_env())
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def stop_helper(proc: subprocess.Popen[str]) -> int:
    """End the helper; the bursts it committed."""
    proc.terminate()
    out, _ = proc.communicate(timeout=WAIT)
    return int(out.split()[-1]) if out.split() else 0


def one(db: Path, sql: str, *params):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchone()
    finally:
        conn.close()


def count_games(db: Path) -> int:
    try:
        return one(db, "select count(*) from games")[0]
    except sqlite3.OperationalError:  # no schema yet
        return 0


def instant_config(tag: str, games: int) -> TournamentConfig:
    engines = [EngineConfig(cmd=f"{PY} -m sample_engines.random", name=name, env={"TAG": tag})
               for name in ("a", "b")]
    return TournamentConfig(game="troll", engines=engines, games=games, tc="depth=1")


# --------------------------------------------------------------------------
# Another writer
# --------------------------------------------------------------------------


def test_a_run_waits_out_another_writers_lock_bursts(tmp_path):
    """A second process holds the write lock 50 ms of every 150 ms, writing
    each time, from before the run opens the file to its end: the run
    (opening, schema check, every game, the final status) waits for it and
    finishes every game."""
    db = tmp_path / "shared.db"
    games = 30
    Store(db).close()  # an arbiter database, where the helper's table is a tool's: a file
    # that holds only someone else's tables is refused (specs/storage.md §Someone else's database)
    helper = lock_bursts(db, 50, 150)
    try:
        # in this process (the other writer is the real process here): the
        # run's waits are SQLite's busy handler either way
        run = invoke("tournament", "-g", "troll", "-e", engine("a"), "-e", engine("b", kind="greedy"),
                     "--games", games, "--tc", "depth=1", "--plain", "--db", db, cwd=tmp_path)
    finally:
        bursts = stop_helper(helper)
    assert run.returncode == 0, run.stderr
    assert "locked" not in run.stderr
    assert count_games(db) == games
    assert one(db, "select status from tournaments")[0] == "finished"
    assert bursts >= 1 and one(db, "select count(*) from lock_bursts")[0] == bursts
    print(f"lock bursts survived: {bursts}, games finished: {count_games(db)}")


async def test_a_lock_held_past_the_busy_timeout_still_aborts_cleanly(tmp_path):
    """The other process takes the lock after the first game and keeps it:
    the next write gives up after the (here shortened) busy timeout, the run
    aborts, the first game stays, the message says the database is locked
    and, truly, that the status could not be stored."""
    db = tmp_path / "held.db"
    tag = f"arbiter-test-{uuid.uuid4()}"
    config = instant_config(tag, 6)
    helpers: list[subprocess.Popen[str]] = []

    class LockAfterTheFirstGame(Observer):
        def game_finished(self, game, record, standings):
            if standings.games == 1:
                helpers.append(lock_bursts(db, 10**9, 10**9))

    try:
        with Store(db, busy_timeout=0.3) as store:
            tournament_id, _ = open_tournament(store, config)
            result = await Coordinator(config, store, tournament_id,
                                      observer=LockAfterTheFirstGame()).run()
            stored_status = one(db, "select status from tournaments")[0]
    finally:
        for helper in helpers:
            stop_helper(helper)
    assert result.status == "aborted"
    assert "database is locked" in result.note and "busy timeout of 0.3 s" in result.note
    assert "running the same command again" in result.note
    assert "this status could not be stored" in result.note and stored_status == "running"
    assert count_games(db) == 1
    assert processes_with(tag) == []


# --------------------------------------------------------------------------
# Honest messages
# --------------------------------------------------------------------------


async def test_the_run_says_truly_whether_its_end_was_stored(tmp_path):
    """A database that refuses new games and new 'aborted' events but still
    takes updates (a full disk does that: rows grow, pages are not added)
    aborts the run; the end is stored whole or not at all, and the note says
    which."""
    db = tmp_path / "refusing.db"
    tag = f"arbiter-test-{uuid.uuid4()}"
    config = instant_config(tag, 4)
    with Store(db) as store:
        tournament_id, _ = open_tournament(store, config)
        for table, when in (("games", "new.key != 'r1-p1-g1'"), ("events", "new.kind = 'aborted'")):
            store.db.execute(f"create trigger refuse_{table} before insert on {table} when {when} "
                             "begin select raise(abort, 'database or disk is full'); end")
        result = await Coordinator(config, store, tournament_id).run()
    assert result.status == "aborted" and "database or disk is full" in result.note
    stored = one(db, "select status from tournaments")[0]
    said_not_stored = "this status could not be stored" in result.note
    assert said_not_stored == (stored != "aborted"), (stored, result.note)
    assert count_games(db) == 1


def _unwritable(path: Path) -> None:
    with Store(path):
        pass
    path.chmod(0o444)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_a_read_only_database_says_so(tmp_path):
    db = tmp_path / "ro.db"
    _unwritable(db)
    with pytest.raises(StoreError, match="cannot be written"):
        Store(db)


def test_a_locked_database_says_so_when_opened(tmp_path):
    """Opening waits the busy timeout for the write lock (the schema check
    writes), then says the database is locked, not that it is unusable."""
    db = tmp_path / "locked.db"
    with Store(db):
        pass
    helper = lock_bursts(db, 10**9, 10**9)
    try:
        with pytest.raises(StoreError) as caught:
            Store(db, busy_timeout=0.2)
    finally:
        stop_helper(helper)
    message = str(caught.value)
    assert "the database is locked" in message and "not a usable" not in message
    assert "try again" in message


def test_a_read_only_database_says_so_when_written(tmp_path):
    """A real SQLITE_READONLY (a connection that may not write: as a file on
    a read-only filesystem) is told as such."""
    db = tmp_path / "ro.db"
    with Store(db):
        pass
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.execute("insert into meta values ('x', 'y')")
    conn.close()
    assert "cannot be written" in explain(caught.value)
    assert "make it writable or choose another --db" in explain(caught.value)


def test_a_full_database_says_so(tmp_path):
    """A full disk, simulated by SQLite's own size limit on the connection."""
    db = tmp_path / "full.db"
    with Store(db) as store:
        tournament_id = store.create_tournament(
            name="t", game="troll", format="round-robin", identity="x", config={},
            engines=[{"name": "a"}], total_games=1)
        pages = store.db.execute("pragma page_count").fetchone()[0]
        store.db.execute(f"pragma max_page_count = {pages}")
        with pytest.raises(sqlite3.OperationalError) as caught:
            store.add_event(tournament_id, "note", "x" * 100_000)
    assert "is full; free some space" in explain(caught.value)


# --------------------------------------------------------------------------
# The file deleted or replaced under a run
# --------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_database_deleted_or_replaced_mid_run_stops_it(tmp_path, how):
    db = tmp_path / "moving.db"
    tag = f"arbiter-test-{uuid.uuid4()}"
    proc = start("tournament", "-g", "troll", "-e", engine("a", tag), "-e", engine("b", tag),
                 "--games", "400", "--tc", "depth=1", "--plain", "--db", db, cwd=tmp_path)
    deadline = time.monotonic() + WAIT
    while count_games(db) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()
    if how == "deleted":
        db.unlink()
    else:
        copy = tmp_path / "copy.db"
        with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
            source.backup(target)
        os.replace(copy, db)
    out, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert f"was {how}" in err and "aborted" in err
    if how == "replaced":  # the new file is not written to
        assert one(db, "select status from tournaments")[0] == "running"
    assert processes_with(tag) == []


# --------------------------------------------------------------------------
# Import: all or nothing
# --------------------------------------------------------------------------


#: the tests of the module fixture below, kept on one xdist worker under
#: ``--dist loadgroup`` (under ``load`` each worker that gets one of them
#: builds the fixture again)
RECORD_FILE_GROUP = pytest.mark.xdist_group("hardening-record-file")


@pytest.fixture(scope="module")
def record_file(tmp_path_factory) -> Path:
    """A record file of 36 finished games, exported from a real run."""
    where = tmp_path_factory.mktemp("records")
    db = where / "source.db"
    run = invoke("tournament", "-g", "troll", "-e", engine("a"), "-e", engine("b", kind="greedy"),
                 "--games", "36", "--tc", "depth=1", "--plain", "--db", db, cwd=where)
    assert run.returncode == 0, run.stderr
    exported = invoke("export", "--db", db)
    assert exported.returncode == 0, exported.stderr
    path = where / "games.pgn"
    path.write_text(exported.stdout)
    return path


def _file_size_limit(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@RECORD_FILE_GROUP
def test_import_on_a_full_disk_is_all_or_nothing_and_can_be_retried(tmp_path, record_file):
    """The import's process may not grow files past a few pages beyond the
    empty database (a real limit of the kernel, RLIMIT_FSIZE: writes past it
    fail as on a full disk): nothing is imported, no tournament is left
    behind, the message says so; once the limit is gone the same import
    works."""
    db = tmp_path / "target.db"
    with Store(db):
        pass
    limit = db.stat().st_size + 8 * 4096
    full = subprocess.run([PY, "-m", "arbiter", "import", str(record_file), "--db", str(db)],
                          capture_output=True, text=True, env=child_env(), timeout=WAIT,
                          preexec_fn=_file_size_limit(limit))
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr
    assert "nothing imported" in full.stderr and "not a usable" not in full.stderr
    assert one(db, "select count(*) from tournaments")[0] == 0
    assert count_games(db) == 0
    assert one(db, "pragma integrity_check")[0] == "ok"
    again = arbiter("import", record_file, "--db", db)
    assert again.returncode == 0, again.stderr
    assert "imported 36 games" in again.stdout
    assert one(db, "select status, total_games from tournaments") == ("finished", 36)
    assert count_games(db) == 36


@RECORD_FILE_GROUP
def test_import_that_fails_half_way_leaves_nothing(tmp_path, record_file):
    """In-process: the database refuses the 20th game; no tournament, no game
    is left, and the retry works."""
    from arbiter.cli.records import import_games
    from arbiter.records import context_tags, parse_games
    from arbiter.replay import to_record

    db = tmp_path / "target.db"
    text = record_file.read_text()
    games = [(to_record(p), context_tags(p)) for p in parse_games(text, str(record_file))]
    with Store(db) as store:
        store.db.execute("create trigger refuse before insert on games when new.key = 'import-20' "
                         "begin select raise(abort, 'database or disk is full'); end")
        with pytest.raises(sqlite3.Error):
            import_games(store, str(record_file), text, games)
        assert store.tournaments() == [] and count_games(db) == 0
        store.db.execute("drop trigger refuse")
        ((_, _, count),) = import_games(store, str(record_file), text, games)
    assert count == 36 and count_games(db) == 36
