"""Runs played in local worker processes (``--workers N``,
specs/tournament.md §Worker processes): real ``arbiter`` processes, real
worker processes, real engines, real SQLite files; and the pure parts (the
pipe's frames, how many workers ``auto`` picks, how pending games are taken)
in-process.

The gate engine (``GATE_AFTER=0``) holds every game of engine ``a`` at its
first move until the test creates the gate file, so "mid-run" needs no timing
guess: with three engines and ``--concurrency 3`` the pair ``b``-``c`` is
stored while the pairs of ``a`` wait.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from bad_engines.harness import processes_with
from cli import arbiter, child_env, invoke, start
from test_tournament import HERE, PY, one, rows, script, spec, wait_for_games

from arbiter.procs import proc_table
from arbiter.run import frames
from arbiter.run.pending import PendingGames
from arbiter.run.workers import AUTO, SLOTS_PER_LOOP, WorkersError, choose_workers, parse_workers
from arbiter.schedule import build_schedule

FAST = ["--tc", "depth=1", "--plain"]
#: seconds a run may take before the test fails: a guard against a hang, not a measure
GUARD = 240


def gated(name: str, gate: Path, tag: str) -> str:
    """Engine ``name``: a random mover waiting at its first move for ``gate``."""
    return (f"cmd='{PY} {HERE / 'gate.py'}' name={name} env.GATE={gate} env.GATE_AFTER=0 "
            f"env.TAG={tag}")


def wait_until(what: str, check, proc: subprocess.Popen | None = None, limit: float = GUARD):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"arbiter exited early ({proc.returncode}): {proc.communicate()[1]}")
        time.sleep(0.05)
    pytest.fail(f"no {what} after {limit} s")


def gate_engines(tag: str) -> list[int]:
    """Pids of the gate engines now running (they wait at the gate)."""
    return [pid for pid in processes_with(tag) if "gate.py" in Path(f"/proc/{pid}/cmdline").read_text()]


def workers_of(pid: int) -> list[int]:
    """The worker processes of the run ``pid``."""
    return [p for p, (_, parent, _) in proc_table().items()
            if parent == pid and "arbiter.run.worker" in Path(f"/proc/{p}/cmdline").read_text()]


def assert_every_game_once(db: Path, engines: list[str], games: int) -> None:
    keys = [r["key"] for r in rows(db)]
    assert sorted(keys) == sorted(g.key for g in build_schedule(engines, games=games))
    assert len(keys) == len(set(keys))
    assert one(db, "pragma integrity_check")[0] == "ok"


# --------------------------------------------------------------------------
# Real runs
# --------------------------------------------------------------------------


def test_worker_processes_play_every_game_once(tmp_path):
    """§Worker processes: the games of a round robin spread over two worker
    processes, each stored once, the same standings a run in one process
    makes of them; the run says where it played; no process is left."""
    tag = f"arbiter-test-{uuid.uuid4()}"
    engines = ["-e", spec("a", TAG=tag), "-e", spec("b", TAG=tag), "-e", spec("c", "greedy", TAG=tag)]
    done = arbiter("tournament", "-g", "troll", *engines, "--games", "4", "-c", "4",
                   "--workers", "2", "--db", tmp_path / "w.db", *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert_every_game_once(tmp_path / "w.db", ["a", "b", "c"], 4)
    start_event = one(tmp_path / "w.db", "select detail from events where kind = 'start'")[0]
    assert "2 worker process(es)" in start_event
    built = one(tmp_path / "w.db", "select count(*) from entrants where id_name is not null")[0]
    assert built == 3  # each engine's build stored, whichever worker started it
    assert processes_with(tag) == []


def test_a_worker_killed_mid_run_costs_a_replay(tmp_path):
    """§Worker processes, worker loss: a worker SIGKILLed with games in
    flight takes its engines with it (parent-death signal); its games are
    played again by another worker, every game is stored once, the run
    finishes and says what happened, without a traceback."""
    db, gate, tag = tmp_path / "k.db", tmp_path / "gate", f"arbiter-test-{uuid.uuid4()}"
    proc = start("tournament", "-g", "troll", "-e", gated("a", gate, tag), "-e", spec("b", TAG=tag),
                 "-e", spec("c", "greedy", TAG=tag), "--games", "2", "-c", "3", "--workers", "3",
                 "--db", db, *FAST, cwd=tmp_path)
    try:
        wait_for_games(db, 2, proc, limit=GUARD)  # b-c done; a's two pairs wait at the gate
        waiting = wait_until("two gate engines", lambda: len(gate_engines(tag)) == 2 and gate_engines(tag), proc)
        worker = proc_table()[waiting[0]][1]  # an engine's parent: the worker process playing it
        assert worker in workers_of(proc.pid)
        doomed = [pid for pid in processes_with(tag) if proc_table().get(pid, ("", 0))[1] == worker]
        os.kill(worker, signal.SIGKILL)
        wait_until("end of the killed worker's engines",
                   lambda: not set(doomed) & set(processes_with(tag)), proc, limit=30)
        gate.touch()
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
        gate.touch()
    assert proc.returncode == 0, err
    assert "Traceback" not in err + out
    assert f"(pid {worker}) was lost (killed by SIGKILL)" in out + err
    assert_every_game_once(db, ["a", "b", "c"], 2)
    assert one(db, "select status from tournaments where id = 1")[0] == "finished"
    assert wait_until("no engine left", lambda: processes_with(tag) == [] or None, limit=30)


def test_ctrl_c_stops_worker_processes_and_a_rerun_resumes(tmp_path):
    """§Stopping: Ctrl-C (SIGINT to the whole process group, as a terminal
    sends it: the workers are in a session of their own and never see it)
    stops the games on the workers, exits 130 with the games stored kept,
    leaves no worker and no engine; the same command then plays the rest."""
    db, gate, tag = tmp_path / "c.db", tmp_path / "gate", f"arbiter-test-{uuid.uuid4()}"
    args = ["tournament", "-g", "troll", "-e", gated("a", gate, tag), "-e", spec("b", TAG=tag),
            "-e", spec("c", "greedy", TAG=tag), "--games", "2", "-c", "3", "--workers", "2",
            "--db", str(db), *FAST]
    proc = subprocess.Popen([sys.executable, "-m", "arbiter", *args], cwd=tmp_path,
                            env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        wait_for_games(db, 2, proc, limit=GUARD)
        wait_until("two gate engines", lambda: len(gate_engines(tag)) == 2, proc)
        workers = workers_of(proc.pid)
        assert len(workers) == 2
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert not [pid for pid in workers if pid in proc_table()]
    assert wait_until("no engine left", lambda: processes_with(tag) == [] or None, limit=30)
    assert one(db, "select status from tournaments where id = 1")[0] == "interrupted"
    gate.touch()
    again = arbiter(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert_every_game_once(db, ["a", "b", "c"], 2)


def test_a_game_that_keeps_killing_its_workers_aborts_the_run(tmp_path):
    """§Worker processes, worker loss: an engine that kills the worker
    playing it takes down a worker each time its game is tried; after
    LOSSES_ALLOWED the run aborts (exit 1) naming the game, keeps the games
    stored, and leaves no process behind."""
    db, tag = tmp_path / "x.db", f"arbiter-test-{uuid.uuid4()}"
    done = arbiter("tournament", "-g", "troll", "-e", script("k", "kill_parent.py", TAG=tag),
                   "-e", spec("b", TAG=tag), "-e", spec("c", TAG=tag), "--games", "2", "-c", "2",
                   "--workers", "2", "--db", db, *FAST, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "was being played by 3 workers that were lost" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert one(db, "select status from tournaments where id = 1")[0] == "aborted"
    assert processes_with(tag) == []


def test_bad_workers_values_are_refused():
    """§Worker processes: --workers is a positive number or auto."""
    for value, said in (("0", "at least 1"), ("many", "or 'auto'")):
        run = invoke("match", "troll", "random", "greedy", "--workers", value)
        assert run.returncode == 2 and said in run.stderr, run.stderr


# --------------------------------------------------------------------------
# Pure parts
# --------------------------------------------------------------------------


def test_auto_keeps_small_runs_in_one_process():
    """§Worker processes: auto plays in this process up to SLOTS_PER_LOOP
    games at once, then one worker per SLOTS_PER_LOOP, one per core at most;
    a number is taken as it is, never above the games at once."""
    assert choose_workers(AUTO, 1, 16) == 1
    assert choose_workers(AUTO, SLOTS_PER_LOOP, 16) == 1
    assert choose_workers(AUTO, SLOTS_PER_LOOP + 1, 16) == 2
    assert choose_workers(AUTO, 128, 16) == 16
    assert choose_workers(AUTO, 128, 2) == 2
    assert choose_workers(4, 2, 16) == 2
    assert choose_workers(3, 8, 2) == 3
    assert parse_workers(None) == AUTO and parse_workers(" Auto ") == AUTO and parse_workers("3") == 3
    with pytest.raises(WorkersError):
        parse_workers("-1")


def test_frames_round_trip_in_pieces_and_refuse_what_is_not_one():
    """§Worker processes, the pipe: frames read back whole from any split of
    the bytes; an oversized length, bytes that are not msgpack, or a kind
    the reader does not take are errors naming what was wrong."""
    data = frames.encode("play", batch=1, pairs=[[{"white": "a"}]]) + frames.encode("drain")
    reader = frames.FrameReader(frames.KINDS_TO_WORKER)
    got = [frame for byte in range(len(data)) for frame in reader.feed(data[byte:byte + 1])]
    assert got == [{"kind": "play", "batch": 1, "pairs": [[{"white": "a"}]]}, {"kind": "drain"}]
    with pytest.raises(frames.FrameError, match="over the limit"):
        frames.FrameReader(frames.KINDS_TO_WORKER).feed((frames.MAX_FRAME + 1).to_bytes(4, "big"))
    with pytest.raises(frames.FrameError, match="unknown frame"):
        frames.FrameReader(frames.KINDS_FROM_WORKER).feed(frames.encode("play"))
    with pytest.raises(frames.FrameError, match="not msgpack"):
        frames.FrameReader(frames.KINDS_TO_WORKER).feed(b"\0\0\0\1\xc1")


def test_pending_games_are_taken_as_pairs_split_only_for_idle_takers():
    """§Coordinator and players: whole pairs in schedule order while there
    are as many pairs as idle takers; a pair's games one by one when fewer;
    games handed back are taken again first; once drained, only the games of
    pairs begun."""
    schedule = build_schedule(["a", "b", "c"], games=2).games  # three pairs
    pending = PendingGames(schedule)
    first = pending.take(1, 3, 3)
    assert [[g.key for g in pair] for pair in first] == [[schedule[0].key, schedule[1].key]]
    second = pending.take(1, 3, 2)  # two pairs left, two idle: whole
    assert len(second[0]) == 2
    third = pending.take(1, 3, 2)  # one pair left, two idle (one came back): split
    assert [len(pair) for pair in third] == [1]
    pending.give_back(second[0])
    assert [g.key for g in pending.take(1, 3, 1)[0]] == [g.key for g in second[0]]
    pending.drained = True
    assert pending.take(1, 3, 1)[0][0].key == schedule[-1].key  # the rest of a pair begun
    assert pending.take(1, 3, 1) == []
    fresh = PendingGames(schedule)
    fresh.drained = True
    assert fresh.take(1, 3, 3) == []  # no pair begun: none is
