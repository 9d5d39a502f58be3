"""A lost cluster worker costs a replay, not the run (specs/cluster.md
§Addresses, §Exactly once, §Workers, §Stopping): real local Dask clusters
(``--cluster local:2``), real worker processes killed by SIGKILL, a real
``dask scheduler`` with a plain ``dask worker``, real engine processes, real
SQLite files.

Each moment is reached by what the test sees, never by a timing guess: a
worker process killed the moment the coordinator has spawned it (Dask is
still starting it), a worker killed while the engine it plays waits at a
gate after a finished game of its batch, a stop signalled while a batch is
held at a gate, a signal once the coordinator has said what it waits for.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from bad_engines.harness import processes_with
from cli import child_env, start
from test_cluster import (
    FAST,
    GUARD,
    assert_every_game_once,
    gate_engines,
    gated,
    kill_worker_of,
    own_scheduler,
    wait_until,
)
from test_tournament import PY, count_games, one, spec, wait_for_games

from arbiter.procs import proc_table

pytest.importorskip("distributed")


def spawned_workers(coordinator: int) -> list[int]:
    """Pids of the worker processes a ``local:N`` coordinator has spawned
    (Dask's nannies start them with multiprocessing's spawn)."""
    found = []
    for pid, (_, parent, _) in proc_table().items():
        if parent == coordinator:
            try:
                if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                continue  # ended meanwhile
    return found


def assert_finished_cleanly(proc: subprocess.Popen, err: str, db: Path, tag: str) -> None:
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    assert one(db, "select status from tournaments where id = 1")[0] == "finished"
    assert wait_until("no engine left", lambda: processes_with(tag) == [] or None, limit=30)


def test_a_worker_killed_while_the_local_cluster_starts_costs_a_new_start(tmp_path):
    """§Exactly once (2), §Addresses: the first worker process of a
    ``local:2`` cluster is killed the moment it exists, while Dask still
    starts it (which fails Dask's whole start: "Nanny failed to start").  The
    coordinator says so and starts the cluster again (``LOCAL_STARTS``); the
    run plays every game once and ends ``finished``, no traceback."""
    db, tag = tmp_path / "s.db", f"arbiter-test-{uuid.uuid4()}"
    proc = start("tournament", "-g", "troll", "-e", spec("a", TAG=tag), "-e", spec("b", TAG=tag),
                 "--games", "4", "-c", "2", "--db", db, "--cluster", "local:2", *FAST, cwd=tmp_path)
    try:
        first = wait_until("a worker process", lambda: spawned_workers(proc.pid), proc)[0]
        os.kill(first, signal.SIGKILL)
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
    assert "cluster local:2: a worker was lost while the cluster started" in out, out + err
    assert "starting it again (2 of 3)" in out
    assert_every_game_once(db, ["a", "b"], 4)
    assert_finished_cleanly(proc, err, db, tag)


def test_a_local_cluster_losing_a_worker_at_every_start_aborts_saying_so(tmp_path):
    """§Addresses: every worker process of a ``local:2`` cluster is killed the
    moment it exists; after ``LOCAL_STARTS`` (3) starts the run aborts with a
    message saying so (exit status 1, status ``aborted``), no game played,
    no traceback."""
    db = tmp_path / "a.db"
    proc = start("tournament", "-g", "troll", "-e", spec("a"), "-e", spec("b"), "--games", "2",
                 "--db", db, "--cluster", "local:2", *FAST, cwd=tmp_path)
    killed: set[int] = set()
    try:
        deadline = time.monotonic() + GUARD
        while proc.poll() is None and time.monotonic() < deadline:
            for pid in set(spawned_workers(proc.pid)) - killed:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            time.sleep(0.02)
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
    assert proc.returncode == 1, out + err
    assert "Traceback" not in err, err
    assert "starting it again (3 of 3)" in out
    assert ("aborted: the local cluster local:2 failed to start 3 times (a worker process lost "
            "while it started?); the last: RuntimeError: Nanny failed to start.") in err
    assert one(db, "select status from tournaments where id = 1")[0] == "aborted"
    assert count_games(db) == 0


COUNTED = """
import os, time
from arbiter.sdk import Engine, run

class Counted(Engine):
    # every process appends a line to COUNT per game begun; in a game numbered
    # beyond AFTER it writes its pid to WAITING and waits at its first move for GATE
    name = "Counted"
    waits = False

    def new_game(self):
        with open(os.environ["COUNT"], "a") as file:
            file.write("game\\n")
        with open(os.environ["COUNT"]) as file:
            self.waits = len(file.readlines()) > int(os.environ["AFTER"])

    def choose_move(self, position, limits):
        if self.waits:
            with open(os.environ["WAITING"] + ".tmp", "w") as file:
                file.write(str(os.getpid()))
            os.replace(os.environ["WAITING"] + ".tmp", os.environ["WAITING"])
            while not os.path.exists(os.environ["GATE"]):
                time.sleep(0.01)
            self.waits = False
        return self.rng.choice(position.legal_moves())

run(Counted)
"""


def test_a_worker_killed_mid_batch_loses_only_a_replay(tmp_path):
    """§Exactly once (2): with one pair taker, the first batch is one pair
    (games 1-2, stored); the second batch begins with game 3, which its
    worker plays to the end, and waits at game 4.  That worker is killed:
    its engines end with it, the finished game 3 never reaches the
    coordinator, and the batch is played again elsewhere (game 3 a second
    time: six games begun for four stored).  Every game is stored once, the
    run ends ``finished``."""
    db, gate, tag = tmp_path / "b.db", tmp_path / "gate", f"arbiter-test-{uuid.uuid4()}"
    count, waiting = tmp_path / "count", tmp_path / "waiting"
    (tmp_path / "counted.py").write_text(COUNTED)
    counted = (f"cmd='{PY} {tmp_path / 'counted.py'}' name=a env.COUNT={count} env.AFTER=3 "
               f"env.WAITING={waiting} env.GATE={gate} env.TAG={tag}")
    proc = start("tournament", "-g", "troll", "-e", counted, "-e", spec("b", TAG=tag),
                 "--games", "4", "-c", "1", "--db", db, "--cluster", "local:2", *FAST, cwd=tmp_path)
    try:
        engine = int(wait_until("game 4 at the gate", lambda: waiting.exists() and waiting.read_text(),
                                proc))
        assert count.read_text().count("game") == 4 and count_games(db) == 2
        kill_worker_of(engine, tag, proc)
        gate.touch()
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
        gate.touch()
    assert count.read_text().count("game") == 6  # games 3 and 4 begun again elsewhere
    assert_every_game_once(db, ["a", "b"], 4)
    assert_finished_cleanly(proc, err, db, tag)


class _Lines:
    """A started process's stdout read by a thread, line by line."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        assert proc.stdout is not None
        stdout = proc.stdout
        threading.Thread(target=lambda: [self.lines.put(line) for line in stdout], daemon=True).start()

    def wait_for(self, *texts: str, limit: float = GUARD) -> dict[str, str]:
        """The first line with each of ``texts`` (in their order), once all have come."""
        found = dict.fromkeys(texts, "")
        while not all(found.values()):
            try:
                line = self.lines.get(timeout=limit)
            except queue.Empty:
                pytest.fail(f"no line with each of {texts} after {limit} s; seen: {''.join(self.seen)}")
            self.seen.append(line)
            found.update({text: line for text in texts if text in line and not found[text]})
        return found


def test_a_plain_dask_worker_is_named_not_waited_for_in_silence(tmp_path):
    """§Workers: a plain ``dask worker`` (no ``slots`` resource, no arbiter
    plugin) is never given a batch; the coordinator says so, naming it and
    the command to use, and that no worker can play, instead of waiting in
    silence; a Ctrl-C then ends the run ``interrupted`` (exit 130), nothing
    played, no traceback."""
    db = tmp_path / "p.db"
    with own_scheduler(tmp_path) as address:
        plain = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                  "--nthreads", "1", "--no-dashboard"], env=child_env(),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        proc = start("tournament", "-g", "troll", "-e", spec("a"), "-e", spec("b"), "--games", "2",
                     "--db", db, "--cluster", address, *FAST, cwd=tmp_path)
        try:
            plain_said, none_said = _Lines(proc).wait_for(
                "offers no 'slots' resource", "no worker offers 'slots'").values()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=GUARD)  # stdout is the reader thread's; stderr holds a few lines
            assert proc.stderr is not None
            err = proc.stderr.read()
        finally:
            proc.kill()
            plain.terminate()
            plain.communicate(timeout=60)
    assert "worker tcp://127.0.0.1:" in plain_said and "(a plain `dask worker`?)" in plain_said
    assert "start workers with `arbiter worker SCHEDULER --engines FILE`" in plain_said
    assert "(an `arbiter worker`); the games wait for one to join" in none_said
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert one(db, "select status from tournaments where id = 1")[0] == "interrupted"
    assert count_games(db) == 0


def test_a_second_signal_during_the_stop_still_stores_the_status(tmp_path):
    """specs/tournament.md §Stopping (the stored status): SIGINT and then SIGTERM at once, while
    the pairs of engine ``a`` wait at a gate: the first stops the run
    cleanly, the second cancels that stop; the run exits 130 all the same
    with its status ``interrupted`` (never left ``running``), the games
    stored kept, no traceback, no engine left."""
    db, gate, tag = tmp_path / "i.db", tmp_path / "gate", f"arbiter-test-{uuid.uuid4()}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arbiter", "tournament", "-g", "troll", "-e", gated("a", gate, tag),
         "-e", spec("b", TAG=tag), "-e", spec("c", "greedy", TAG=tag), "--games", "2", "-c", "3",
         "--db", str(db), "--cluster", "local:2", *FAST], cwd=tmp_path, env=child_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for_games(db, 2, proc, limit=GUARD)  # b-c stored; a's pairs wait at the gate
        wait_until("two gate engines", lambda: len(gate_engines(tag)) == 2, proc)
        os.killpg(proc.pid, signal.SIGINT)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
        gate.touch()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert one(db, "select status from tournaments where id = 1")[0] == "interrupted"
    assert count_games(db) == 2
    assert wait_until("no engine left", lambda: processes_with(tag) == [] or None, limit=30)
