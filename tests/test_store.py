"""The results database (specs/storage.md): real SQLite files in tmp_path."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
from typing import Any

import pytest

from arbiter.store import (
    FINISHED,
    RUNNING,
    DuplicateGameError,
    Store,
    StoreError,
)


def record(white="a", black="b", result="1-0", moves=("d5", "e4")):
    return {
        "game": "troll", "white": white, "black": black, "fen": None, "opening_moves": [],
        "moves": [{"move": m, "time_ms": 5, "clock_ms": 1000, "engine_time_ms": 4,
                   "score": "cp 10", "depth": 3, "nodes": 100, "pv": [m]} for m in moves],
        "result": result, "termination": "connection",
        "termination_detail": "White connected ranks 1 and 8",
        "start_time": "2024-01-01T00:00:00.000Z", "end_time": "2024-01-01T00:00:01.000Z",
    }


def new_tournament(store: Store, identity="id1") -> int:
    return store.create_tournament(
        name="test", game="troll", format="round-robin", identity=identity,
        config={"game": "troll", "engines": ["a", "b"]},
        engines=[{"name": "a", "cmd": "python3 a.py"}, {"name": "b", "cmd": "python3 b.py"}],
        total_games=2)


def save(store, tid, key="r1-p1-g1", seq=0, **kw):
    return store.save_game(tid, key=key, seq=seq, round=1, pairing=1, index=seq + 1, pair=1,
                           opening={"source": "book.txt:1", "fen": None, "moves": ["c3"]},
                           record=record(**kw))


def test_schema_and_wal(tmp_path):
    """specs/storage.md §Tables, §Durability: the tables exist, the file is in WAL mode."""
    path = tmp_path / "r.db"
    with Store(path) as store:
        assert {"tournaments", "engines", "games", "events", "meta"} <= set(store.db.table_names())
    conn = sqlite3.connect(path)
    assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"


def test_round_trip_of_a_game(tmp_path):
    with Store(tmp_path / "r.db") as store:
        tid = new_tournament(store)
        save(store, tid)
        (row,) = store.games(tid)
    assert row["key"] == "r1-p1-g1"
    assert row["moves"] == ["d5", "e4"]
    assert row["move_data"][0]["engine_time_ms"] == 4
    assert row["plies"] == 2
    assert row["opening"] == "book.txt:1" and row["opening_moves"] == ["c3"]
    assert row["record"]["termination_detail"] == "White connected ranks 1 and 8"
    assert (row["white"], row["black"], row["result"]) == ("a", "b", "1-0")


def test_a_game_is_never_stored_twice(tmp_path):
    """specs/storage.md §Games: UNIQUE(tournament, key)."""
    with Store(tmp_path / "r.db") as store:
        tid = new_tournament(store)
        save(store, tid)
        with pytest.raises(DuplicateGameError, match="r1-p1-g1"):
            save(store, tid, result="0-1")
        assert store.count_games(tid) == 1
        assert store.games(tid)[0]["result"] == "1-0"
        # the same key in another tournament is a different game
        other = new_tournament(store, identity="id2")
        save(store, other)
        assert store.finished_keys(other) == {"r1-p1-g1"}


def test_plain_sql_sees_the_documented_columns(tmp_path):
    """What specs/storage.md promises to sqlite-utils / Datasette users."""
    path = tmp_path / "r.db"
    with Store(path) as store:
        tid = new_tournament(store)
        save(store, tid, key="r1-p1-g1", seq=0, result="1-0")
        save(store, tid, key="r1-p1-g2", seq=1, white="b", black="a", result="1/2-1/2")
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "select t.name, g.white, g.black, g.result, g.termination, json_array_length(g.moves) "
        "from games g join tournaments t on t.id = g.tournament order by g.seq").fetchall()
    assert rows == [("test", "a", "b", "1-0", "connection", 2),
                    ("test", "b", "a", "1/2-1/2", "connection", 2)]
    config = json.loads(conn.execute("select config from tournaments").fetchone()[0])
    assert config["engines"] == ["a", "b"]


def found(row: dict[str, Any] | None) -> dict[str, Any]:
    """A row the test knows is there."""
    assert row is not None
    return row


def test_find_and_status(tmp_path):
    with Store(tmp_path / "r.db") as store:
        first = new_tournament(store, identity="same")
        second = new_tournament(store, identity="same")
        assert found(store.find_tournament("same"))["id"] == second
        assert store.find_tournament("other") is None
        assert found(store.tournament(first))["status"] == RUNNING
        store.set_status(first, FINISHED, note="done")
        assert found(store.tournament(first))["status"] == FINISHED
        assert found(store.tournament(first))["note"] == "done"
        assert found(store.latest_tournament())["id"] == second
        assert [e["name"] for e in store.engines(first)] == ["a", "b"]


def test_events(tmp_path):
    with Store(tmp_path / "r.db") as store:
        tid = new_tournament(store)
        store.add_event(tid, "crash", "engine a exited with status 3", engine="a", key="r1-p1-g1")
        (event,) = store.events(tid)
    assert (event["kind"], event["engine"], event["key"]) == ("crash", "a", "r1-p1-g1")


def test_readonly_store_needs_a_file(tmp_path):
    with pytest.raises(StoreError, match="no database"):
        Store(tmp_path / "missing.db", readonly=True)
    assert not (tmp_path / "missing.db").exists()


def test_foreign_database_is_refused(tmp_path):
    path = tmp_path / "theirs.db"
    conn = sqlite3.connect(path)
    conn.execute("create table games (x)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not an arbiter results database"):
        Store(path)


def test_garbage_file_is_refused(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="junk.db"):
        Store(path)


def test_reader_sees_committed_games_while_writer_is_open(tmp_path):
    """specs/storage.md §Reading while a run writes: WAL lets readers in."""
    path = tmp_path / "r.db"
    writer = Store(path)
    tid = new_tournament(writer)
    save(writer, tid)
    with Store(path, readonly=True) as reader:
        assert reader.count_games(tid) == 1
        save(writer, tid, key="r1-p1-g2", seq=1)
        assert reader.count_games(tid) == 2
    writer.close()


def _write_forever(path: str, ready) -> None:
    store = Store(path)
    tid = found(store.find_tournament("id1"))["id"]
    seq = 0
    while True:
        seq += 1
        save(store, tid, key=f"k{seq}", seq=seq, moves=["d5"] * 50)
        if seq == 20:
            ready.set()


def test_sigkill_while_writing_keeps_every_committed_game(tmp_path):
    """specs/storage.md §Durability: a process killed in the middle of its
    writes leaves a consistent file holding every game it committed."""
    path = str(tmp_path / "r.db")
    with Store(path) as store:
        new_tournament(store)
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    proc = ctx.Process(target=_write_forever, args=(path, ready))
    proc.start()
    assert ready.wait(60) and proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    conn = sqlite3.connect(path)
    assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
    keys = [row[0] for row in conn.execute("select key from games order by seq")]
    assert len(keys) >= 20
    assert keys == [f"k{n}" for n in range(1, len(keys) + 1)]  # no gap, no half game
    for (data,) in conn.execute("select move_data from games"):  # a game's moves: move_data
        assert len(json.loads(data)) == 50
