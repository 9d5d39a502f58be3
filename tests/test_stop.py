"""``arbiter stop`` (specs/tournament.md §Stopping): a running run asked to
finish its games in progress and start no new one, or with ``--now`` to stop
at once; real ``arbiter`` processes, real engines, real SQLite files.

The engines are paced (a move takes its 50 ms budget asleep, a game lasts
about a second), so a run is always in the middle of games when it is asked
to stop.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from bad_engines.harness import processes_with
from cli import PROCESS_TIMEOUT, arbiter, invoke, start
from test_tournament import HERE, PY, count_games, one, wait_for_games


def paced(name: str, tag: str) -> str:
    return f"cmd='{PY} {HERE / 'paced.py'}' name={name} env.TAG={tag}"


def run_args(db: Path, tag: str, *extra: str) -> list[str]:
    return ["match", "troll", paced("a", tag), paced("b", tag), "--games", "20", "-c", "2",
            "--tc", "st=0.05", "--maxplies", "20", "--plain", "--db", str(db), *extra]


def wait_gone(tag: str) -> list[int]:
    deadline = time.monotonic() + 30  # a guard against a hang only
    while (left := processes_with(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.mark.parametrize("workers", ["1", "2"])
def test_stop_finishes_the_games_in_progress_and_the_run_resumes(tmp_path, workers):
    """§Stopping: `arbiter stop` while games are in progress: they finish and
    are stored (none abandoned), no new game starts, the run exits 0 with
    status `stopped`; the same command then plays the rest, each game once.
    In this process and in worker processes alike."""
    db, tag = tmp_path / "s.db", f"arbiter-test-{uuid.uuid4()}"
    args = run_args(db, tag, "--workers", workers)
    proc = start(*args, cwd=tmp_path)
    try:
        wait_for_games(db, 2, proc, limit=PROCESS_TIMEOUT)
        asked = invoke("stop", "--db", db)
        assert asked.returncode == 0, asked.stderr
        assert f"(pid {proc.pid}) to finish its games in progress" in asked.stdout
        out, err = proc.communicate(timeout=PROCESS_TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "finishing the" in out + err and "abandoned" not in out + err
    assert "stopped after" in err and "Traceback" not in err
    assert one(db, "select status from tournaments")[0] == "stopped"
    stored = count_games(db)
    assert 2 <= stored < 20
    assert wait_gone(tag) == []
    again = arbiter(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    keys = [row[0] for row in _keys(db)]
    assert len(keys) == len(set(keys)) == 20
    assert one(db, "select status from tournaments")[0] == "finished"


def test_stop_now_stops_at_once(tmp_path):
    """§Stopping: `arbiter stop --now` is Ctrl-C: games in progress are
    abandoned (replayed on resume), exit 130, status `interrupted`."""
    db, tag = tmp_path / "n.db", f"arbiter-test-{uuid.uuid4()}"
    proc = start(*run_args(db, tag), cwd=tmp_path)
    try:
        wait_for_games(db, 1, proc, limit=PROCESS_TIMEOUT)
        asked = invoke("stop", "--db", db, "--now")
        assert asked.returncode == 0 and "stop now" in asked.stdout, asked.stderr
        _, err = proc.communicate(timeout=PROCESS_TIMEOUT)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert one(db, "select status from tournaments")[0] == "interrupted"
    assert wait_gone(tag) == []


def test_stop_without_a_run_says_so(tmp_path):
    """§Stopping: nothing to stop: exit 1 and a message; a tournament that
    does not exist: exit 2 naming it."""
    db = tmp_path / "e.db"
    done = invoke("match", "troll", "random", "greedy", "--games", "2", "--tc", "depth=1", "--db", db)
    assert done.returncode == 0, done.stderr
    idle = invoke("stop", "--db", db)
    assert idle.returncode == 1 and "nothing to stop" in idle.stderr
    missing = invoke("stop", "--db", db, "--tournament", "9")
    assert missing.returncode == 2 and "no tournament 9" in missing.stderr


def _keys(db: Path) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute("select key from games").fetchall()


def test_stop_drains_a_servers_arenas(tmp_path):
    """§Stopping, `arbiter serve`: asked to stop, the server pairs no new
    game, lets the game in progress end (stored), exits 0 with its arena
    `stopped`; its clients are told the server stops (a final reason) and
    end with 0; no engine is left."""
    from server_peers import Server, add_token, connect

    db, tag = tmp_path / "server.db", f"arbiter-test-{uuid.uuid4()}"
    alice, bob = add_token(db, "alice"), add_token(db, "bob")
    server = Server(db, tag)
    clients = [connect(server, alice, "ra", tag), connect(server, bob, "rb", tag)]
    try:
        server.wait_games(2)
        asked = invoke("stop", "--db", db)
        assert asked.returncode == 0 and f"(pid {server.proc.pid})" in asked.stdout, asked.stderr
        assert server.proc.wait(PROCESS_TIMEOUT) == 0, "".join(server.lines)
        ends = [client.wait(PROCESS_TIMEOUT) for client in clients]
    finally:
        for proc in (server.proc, *clients):
            proc.kill()
    assert "stopped (arbiter stop)" in "".join(server.lines)
    assert ends == [0, 0]
    assert one(db, "select status from tournaments")[0] == "stopped"
    assert wait_gone(tag) == []
