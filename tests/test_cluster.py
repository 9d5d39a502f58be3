"""Tournaments on a Dask cluster (specs/cluster.md): real local clusters
(``--cluster local:2``: two worker processes), real engine processes, real
SQLite files.

A cluster costs a few seconds to start on two cores, so there are few tests,
each with a handful of ``--tc depth=1`` games.  Runs that must be signalled
or whose workers are killed are processes of their own; the others run
in-process (typer's CliRunner).  The gate engine (``GATE_AFTER=0``) holds
every game of engine ``a`` at its first move until the test creates the gate
file, so "mid-run" needs no timing guess: with three engines and
``--concurrency 3`` the pair ``b``-``c`` is stored while the pairs of ``a``
wait.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from bad_engines.harness import processes_with
from cli import child_env, start
from test_tournament import HERE, PY, cli, count_games, one, rows, spec, wait_for_games

from arbiter.cluster.address import ClusterAddressError, parse_target
from arbiter.procs import proc_table
from arbiter.schedule import build_schedule

pytest.importorskip("distributed")

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


def kill_worker_of(engine: int, tag: str, proc: subprocess.Popen) -> None:
    """SIGKILL the worker process that runs engine process ``engine`` (its
    parent; not the coordinator ``proc``), and wait until the engines of
    ``tag`` it ran have ended with it (parent-death signal)."""
    worker = proc_table()[engine][1]
    assert worker != proc.pid
    doomed = [pid for pid in processes_with(tag) if proc_table().get(pid, ("", 0))[1] == worker]
    os.kill(worker, signal.SIGKILL)
    wait_until("end of the killed worker's engines",
               lambda: not set(doomed) & set(processes_with(tag)), proc, limit=30)


def assert_every_game_once(db: Path, engines: list[str], games: int) -> None:
    keys = [r["key"] for r in rows(db)]
    assert sorted(keys) == sorted(g.key for g in build_schedule(engines, games=games))
    assert len(keys) == len(set(keys))
    assert one(db, "pragma integrity_check")[0] == "ok"


def test_a_round_robin_on_a_local_cluster_plays_what_a_local_run_plays(tmp_path):
    """specs/cluster.md §The coordinator: the same schedule, the same games
    (seeded engines, fresh processes for each game, so the same moves), the
    same standings; events and the live display as for a local run."""
    engines = ["-e", spec("a") + " option.Seed=3", "-e", spec("b") + " option.Seed=5",
               "-e", spec("c", "greedy") + " option.Seed=7"]
    args = ["tournament", "-g", "troll", *engines, "--games", "2", "--random-plies", "2",
            "--restart", "-c", "2", *FAST]
    local = cli(*args, "--db", str(tmp_path / "local.db"), cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    done = cli(*args, "--db", str(tmp_path / "cluster.db"), "--cluster", "local:2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "cluster local:2: 2 worker(s)" in done.stdout
    assert sum(1 for line in done.stdout.splitlines() if line.startswith("[")) == 6
    mine, theirs = rows(tmp_path / "cluster.db"), rows(tmp_path / "local.db")
    assert len(mine) == len(theirs) == 6
    fields = ("key", "seq", "white", "black", "opening_moves", "moves", "result", "termination")
    assert sorted(tuple(r[f] for f in fields) for r in mine) == sorted(
        tuple(r[f] for f in fields) for r in theirs)
    assert Counter(r["termination"] for r in mine) == Counter(r["termination"] for r in theirs)
    standings = cli("standings", "--db", str(tmp_path / "cluster.db"), "--json", cwd=tmp_path)
    data = json.loads(standings.stdout)
    assert (data["tournament"]["status"], data["games"]) == ("finished", 6)
    assert all(sum(p["pentanomial"]) == 1 for p in data["pairs"])


def test_a_worker_killed_mid_run_loses_nothing(tmp_path):
    """§Exactly once: a worker SIGKILLed with games in flight takes its
    engines with it (parent-death signal); its pair is played again on
    another worker, every game is stored once, the file is sound."""
    db, gate, tag = tmp_path / "k.db", tmp_path / "gate", f"arbiter-test-{uuid.uuid4()}"
    proc = start("tournament", "-g", "troll", "-e", gated("a", gate, tag), "-e", spec("b", TAG=tag),
                 "-e", spec("c", "greedy", TAG=tag), "--games", "2", "-c", "3", "--db", db,
                 "--cluster", "local:2", *FAST, cwd=tmp_path)
    try:
        wait_for_games(db, 2, proc, limit=GUARD)  # b-c done; a's two pairs wait at the gate
        waiting = wait_until("two gate engines", lambda: len(gate_engines(tag)) == 2 and gate_engines(tag), proc)
        kill_worker_of(waiting[0], tag, proc)
        gate.touch()
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
        gate.touch()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert_every_game_once(db, ["a", "b", "c"], 2)
    assert one(db, "select status from tournaments where id = 1")[0] == "finished"
    assert wait_until("no engine left", lambda: processes_with(tag) == [] or None, limit=30)


def test_ctrl_c_mid_run_then_rerun_resumes_exactly(tmp_path):
    """§Stopping: Ctrl-C (SIGINT to the whole process group, as a terminal
    sends it: the local workers ignore it) stops the games in flight on the
    workers (their engines end), exits 130 with the games stored kept; the
    same command then plays only the rest, each game once."""
    db, gate, tag = tmp_path / "c.db", tmp_path / "gate", f"arbiter-test-{uuid.uuid4()}"
    args = ["tournament", "-g", "troll", "-e", gated("a", gate, tag), "-e", spec("b", TAG=tag),
            "-e", spec("c", "greedy", TAG=tag), "--games", "2", "-c", "3", "--db", str(db),
            "--cluster", "local:2", *FAST]
    proc = subprocess.Popen([sys.executable, "-m", "arbiter", *args], cwd=tmp_path,
                            env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        wait_for_games(db, 2, proc, limit=GUARD)
        wait_until("two gate engines", lambda: len(gate_engines(tag)) == 2, proc)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert processes_with(tag) == []  # the stop ended every engine before the exit
    assert one(db, "select status from tournaments where id = 1")[0] == "interrupted"
    assert count_games(db) == 2
    gate.touch()
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "resuming tournament 1" in done.stderr
    assert sum(1 for line in done.stdout.splitlines() if line.startswith("[")) == 4
    assert_every_game_once(db, ["a", "b", "c"], 2)
    assert processes_with(tag) == []


def test_an_sprt_match_stops_with_its_pairs_complete(tmp_path):
    """§Stopping (SPRT): once H1 is accepted no new pair is submitted, the
    pairs in flight end, and nothing is left running."""
    db, tag = tmp_path / "s.db", f"arbiter-test-{uuid.uuid4()}"
    done = cli("tournament", "-g", "troll", "-e", spec("greedy", "greedy", TAG=tag),
               "-e", spec("random", TAG=tag), "--sprt", "elo0=0 elo1=200 alpha=0.05 beta=0.05",
               "--games", "200", "-c", "2", "--db", str(db), "--cluster", "local:2", "--json",
               "--tc", "depth=1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["sprt"]["decision"] == "H1"
    assert "SPRT: H1 accepted" in data["tournament"]["note"]
    played = count_games(db)
    assert played < 200 and played % 2 == 0
    assert sum(data["pairs"][0]["pentanomial"]) == played // 2
    assert processes_with(tag) == []


def _address(path: Path) -> str | None:
    try:
        return json.loads(path.read_text())["address"]
    except (OSError, ValueError, KeyError):
        return None  # not written yet, or being written


@contextlib.contextmanager
def own_scheduler(tmp_path: Path, scheduler_args: tuple[str, ...] = ()):
    """A ``dask scheduler`` on 127.0.0.1 (``scheduler_args`` added); yields
    its address; it ends on the way out."""
    info = tmp_path / "scheduler.json"
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
         "0", "--no-dashboard", "--scheduler-file", str(info), *scheduler_args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env())
    try:
        yield wait_until("scheduler address", lambda: _address(info), scheduler)
    finally:
        scheduler.terminate()
        scheduler.communicate(timeout=60)


@contextlib.contextmanager
def own_cluster(tmp_path: Path, worker_args: list[str], scheduler_args: tuple[str, ...] = ()):
    """:func:`own_scheduler` and one ``arbiter worker ADDRESS *worker_args``
    joined to it; yields the address and the line the worker printed once
    joined; both end on the way out."""
    with own_scheduler(tmp_path, scheduler_args) as address:
        worker = start("worker", address, *worker_args, cwd=tmp_path)
        try:
            assert worker.stderr is not None
            joined = ""
            while "joined" not in joined:
                joined = worker.stderr.readline()
                assert joined, "the worker ended before it joined"
            yield address, joined
        finally:
            worker.terminate()
            worker.communicate(timeout=60)


def test_a_worker_without_an_engine_gives_a_clear_error(tmp_path):
    """§Workers: `arbiter worker` plays only the engines of its own file; a
    tournament naming another one aborts, naming the worker and the engine,
    and no game is counted."""
    (tmp_path / "engines.toml").write_text(
        f'[engines.a]\ncmd = "{PY} -m sample_engines.random"\n'
        f'[engines.b]\ncmd = "{PY} -m sample_engines.greedy"\n')
    (tmp_path / "worker.toml").write_text(f'[engines.a]\ncmd = "{PY} -m sample_engines.random"\n')
    with own_cluster(tmp_path, ["--engines", "worker.toml"]) as (address, joined):
        assert "engines a from worker.toml" in joined, joined
        done = cli("tournament", "-g", "troll", "-e", "a", "-e", "b", "--games", "2",
                   "--db", str(tmp_path / "m.db"), "--cluster", address, *FAST, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "has no engine 'b' in worker.toml (it has: a)" in done.stderr
    assert "worker tcp://127.0.0.1:" in done.stderr
    assert count_games(tmp_path / "m.db") == 0


def test_a_cluster_over_tls_plays_the_tournament(tmp_path):
    """§Security: a scheduler, a worker and a coordinator each with a
    certificate of one CA (mutual TLS, Dask's Security), all over tls://:
    every game is played on the worker and stored once; the worker's engines
    are kept from pair to pair (§Workers: one process per engine here)."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    for who in ("scheduler", "worker", "coordinator"):
        cert = ca.issue_cert("127.0.0.1", "localhost", common_name=who)
        cert.private_key_pem.write_to_path(str(tmp_path / f"{who}.key"))
        cert.cert_chain_pems[0].write_to_path(str(tmp_path / f"{who}.pem"))

    def tls(who: str) -> list[str]:
        return ["--tls-ca", str(tmp_path / "ca.pem"), "--tls-cert", str(tmp_path / f"{who}.pem"),
                "--tls-key", str(tmp_path / f"{who}.key")]

    tag = f"arbiter-test-{uuid.uuid4()}"
    (tmp_path / "engines.toml").write_text(
        f'[engines.a]\ncmd = "{PY} -m sample_engines.random"\nenv = {{TAG = "{tag}"}}\n'
        f'[engines.b]\ncmd = "{PY} -m sample_engines.greedy"\nenv = {{TAG = "{tag}"}}\n')
    scheduler_tls = ("--protocol", "tls", "--tls-ca-file", str(tmp_path / "ca.pem"),
                     "--tls-cert", str(tmp_path / "scheduler.pem"),
                     "--tls-key", str(tmp_path / "scheduler.key"))
    db = tmp_path / "t.db"
    with own_cluster(tmp_path, ["--engines", "engines.toml", *tls("worker")],
                     scheduler_tls) as (address, joined):
        assert address.startswith("tls://127.0.0.1:") and "worker tls://127.0.0.1:" in joined
        done = cli("tournament", "-g", "troll", "-e", "a", "-e", "b", "--games", "6", "-c", "1",
                   "--db", str(db), "--cluster", address, *tls("coordinator"), *FAST, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert len(processes_with(tag)) == 2  # kept by the worker for a next pair, idle
    assert f"cluster {address}: 1 worker(s)" in done.stdout
    assert_every_game_once(db, ["a", "b"], 6)
    assert len({(r["white"], r["black"]) for r in rows(db)}) == 2
    assert wait_until("no engine left", lambda: processes_with(tag) == [] or None, limit=30)


KILLER = """
import os, signal, time
from arbiter.sdk import Engine, run

class Killer(Engine):
    name = "Killer"

    def choose_move(self, position, limits):
        while not os.path.exists(os.environ["GATE"]):
            time.sleep(0.01)
        os.kill(os.getppid(), signal.SIGKILL)  # the worker process that runs this engine
        time.sleep(60)
        return position.legal_moves()[0]

run(Killer)
"""


def test_a_pair_that_kills_three_workers_aborts_keeping_the_stored_games(tmp_path):
    """§Exactly once (3): engine ``a`` kills the worker process playing it at
    its first move (once the gate file exists, after the pair b-c is
    stored); Dask restarts the worker and plays the batch elsewhere, three
    times; then the run aborts saying so (Dask's KilledWorker), with every
    stored game kept and no engine left."""
    db, gate, tag = tmp_path / "kw.db", tmp_path / "gate", f"arbiter-test-{uuid.uuid4()}"
    (tmp_path / "killer.py").write_text(KILLER)
    killer = f"cmd='{PY} {tmp_path / 'killer.py'}' name=a env.GATE={gate} env.TAG={tag}"
    proc = start("tournament", "-g", "troll", "-e", killer, "-e", spec("b", TAG=tag),
                 "-e", spec("c", "greedy", TAG=tag), "--games", "2", "-c", "3", "--db", db,
                 "--cluster", "local:2", *FAST, cwd=tmp_path)
    try:
        wait_for_games(db, 2, proc, limit=GUARD)  # b-c stored; a's two pairs wait at the gate
        gate.touch()
        out, err = proc.communicate(timeout=GUARD)
    finally:
        proc.kill()
    assert proc.returncode == 1, err
    assert "took down 3 workers in a row (Dask's KilledWorker" in err, err
    assert "the games stored are kept" in err and "Traceback" not in err
    assert sorted(r["key"] for r in rows(db)) == [
        g.key for g in build_schedule(["a", "b", "c"], games=2) if "a" not in g.players]
    assert one(db, "pragma integrity_check")[0] == "ok"
    assert one(db, "select status from tournaments where id = 1")[0] == "aborted"
    assert wait_until("no engine left", lambda: processes_with(tag) == [] or None, limit=30)


@pytest.mark.parametrize(("address", "flags", "message"), [
    ("tcp://10.1.2.3:8786", {}, "must be reached over tls:// with certificates"),
    ("tls://10.1.2.3:8786", {}, "tls:// needs certificates"),
    ("tls://10.1.2.3:8786", {"tls_ca": "ca.pem"}, "--tls-cert is missing"),
    ("local:0", {}, "local:N needs a number of worker processes from 1 to"),
    ("udp://host:1", {}, "unknown scheme 'udp'"),
])
def test_addresses_off_this_machine_need_tls(address, flags, message):
    """§Security: plain TCP only on the loopback interface (or --insecure)."""
    with pytest.raises(ClusterAddressError, match=message):
        parse_target(address, **flags)
    assert parse_target("tcp://10.1.2.3:8786", insecure=True).address == "tcp://10.1.2.3:8786"
    assert parse_target("127.0.0.1:8786").address == "tcp://127.0.0.1:8786"


def test_a_result_keeps_only_the_requested_games_once():
    """§Exactly once (1): a record is kept only for a key of the request,
    once, with the scheduled colours; the rest is dropped with a reason."""
    from arbiter.cluster.task import read_result
    from arbiter.record import GameRecord

    first, second = build_schedule(["a", "b"], games=2).games

    def record(white: str, black: str) -> dict:
        return GameRecord("troll", white, black, "1-0", "connection", "a connection").to_dict()

    outcome = read_result({"worker": "tcp://w:1", "games": [
        {"key": first.key, "record": record("a", "b")},
        {"key": first.key, "record": record("a", "b")},  # a second result for the key
        {"key": "r9-p9-g9", "record": record("a", "b")},  # not requested
        {"key": second.key, "record": record("a", "b")},  # colours not the scheduled ones
        {"key": second.key, "record": {"moves": "nonsense"}},
    ]}, [first, second])
    assert [(s.key, r.white) for s, r in outcome.played] == [(first.key, "a")]
    assert len(outcome.dropped) == 4
    assert "a second result" in outcome.dropped[0] and "not requested" in outcome.dropped[1]
    assert "scheduled for b and a" in outcome.dropped[2]
    assert read_result("junk", [first]).dropped == ["a result that is not a mapping (str)"]


def test_a_received_record_is_the_record_it_parses_to():
    """§Exactly once (1), read cheaply: a worker's record that is exactly a
    record's ``to_dict()`` is kept as it came (its plies made objects only
    when read), and gives the same values, text, fields and plies as the
    record parsed; any other form is parsed as before (same values after),
    and one that does not parse is refused with the parser's error."""
    from arbiter.cluster.task import ReceivedRecord, read_record
    from arbiter.record import GameRecord, Ply, Score

    plies = [Ply("d2", "white", 5, 995, None, Score.parse("cp 35"), 7, 100, ["d2", "f6"]),
             Ply("f6", "black", 4, 996, 3, Score.parse("winprob 0.62"), rtt_ms=2, comp_ms=1),
             Ply("f1", "white", 6, None, None, Score.parse("mate -3"))]
    record = GameRecord("troll", "a", "b", "1-0", "connection", "a connection",
                        opening_moves=["b4"], moves=plies, time_control={"white": "1+0"},
                        scores=[1, 0])
    values = json.loads(json.dumps(record.to_dict()))
    received = read_record(values)
    assert isinstance(received, ReceivedRecord)
    assert json.dumps(received.to_dict()) == json.dumps(record.to_dict())
    assert received == record and record == received
    assert (received.white, received.result, received.plies) == ("a", "1-0", 4)
    assert received.moves == plies and received.all_moves == record.all_moves
    # what the store reads is the same values, in the same order (its JSON text)
    assert json.dumps(received.values_to_store()) == json.dumps(record.values_to_store())
    received.moves = plies[:1]  # replaced plies are what it writes then
    assert received.to_dict()["moves"] == [plies[0].to_dict()]

    def changed(change) -> dict:
        data = json.loads(json.dumps(record.to_dict()))
        change(data)
        return data

    for other in (changed(lambda d: d["moves"][1].update(score="winprob 0.620000")),
                  changed(lambda d: d["moves"][0].update(pv=None)),
                  changed(lambda d: d["moves"][0].update(rtt_ms=4)),  # no comp_ms: not written
                  changed(lambda d: d.update(unknown=1)),
                  changed(lambda d: d["moves"][2].pop("depth")),
                  changed(lambda d: d.update(moves=None))):
        parsed = read_record(other)
        assert type(parsed) is GameRecord
        assert parsed.to_dict() == GameRecord.from_dict(other).to_dict()
    with pytest.raises(ValueError, match="move 1: bad score"):
        read_record(changed(lambda d: d["moves"][0].update(score="cp x")))
    with pytest.raises(ValueError, match="move 1: 'purple' is not a valid Color"):
        read_record(changed(lambda d: d["moves"][0].update(color="purple")))


def test_a_workers_plies_text_is_stored_as_it_came(tmp_path):
    """§Requests and results: a worker sends each record's plies as one JSON
    text (``result_game``); the coordinator reads the same record from it,
    and stores that text as the game's ``move_data`` (not encoded again),
    the same values a local run's row holds.  Plies replaced since, or a
    record of another form, are encoded by the store; text that is not JSON
    is dropped with a reason."""
    from arbiter.cluster.task import read_record, read_result, result_game
    from arbiter.record import GameRecord, Ply, Score
    from arbiter.store import Store

    record = GameRecord("troll", "a", "b", "1-0", "connection", "a connection",
                        moves=[Ply("d2", "white", 5, 995, None, Score.parse("cp 35"), 7, 100, ["d2"]),
                               Ply("f6", "black", 4, 996)])
    sent = json.loads(json.dumps(result_game("r1-p1-g1", record)))
    assert json.loads(sent["record"]["moves"]) == record.to_dict()["moves"]
    # written more tightly than the store would: the row shows whose text it is
    sent["record"]["moves"] = json.dumps(json.loads(sent["record"]["moves"]), separators=(",", ":"))
    received = read_record(sent["record"])
    assert received == record and received.moves == record.moves
    assert received.encoded_moves() == sent["record"]["moves"]
    assert record.encoded_moves() is None  # a local record: the store encodes it
    store = Store(str(tmp_path / "t.db"))
    tid = store.create_tournament(name="t", game="troll", format="gauntlet", identity="t",
                                  config={}, engines=[{"name": "a"}, {"name": "b"}], total_games=2)
    for key, kept in (("r1-p1-g1", received), ("r1-p1-g2", record)):
        store.save_game(tid, key=key, seq=1, round=1, pairing=1, index=1, pair=1, opening={},
                        record=kept.to_dict(), move_data=kept.encoded_moves())
    rows = store.db.conn.execute("SELECT move_data FROM games ORDER BY key").fetchall()
    assert rows[0][0] == sent["record"]["moves"]
    assert json.loads(rows[0][0]) == json.loads(rows[1][0]) == record.to_dict()["moves"]
    store.close()
    received.moves = record.moves[:1]
    assert received.encoded_moves() is None  # replaced: written from the plies
    first = build_schedule(["a", "b"], games=2).games[0]
    broken = {**sent["record"], "moves": sent["record"]["moves"][:-1]}
    outcome = read_result({"worker": "tcp://w:1", "games": [{"key": first.key, "record": broken}]},
                          [first])
    assert outcome.played == [] and "not a game record" in outcome.dropped[0]


def test_a_worker_of_another_version_is_refused():
    """§Versions: each difference is named, with both values."""
    from arbiter.cluster.task import version_problem, versions

    ours = versions()
    assert version_problem("tcp://w:1", ours, dict(ours)) is None
    problem = version_problem("tcp://w:1", ours, {**ours, "rules": "0123456789ab"})
    assert problem is not None and problem.startswith("worker tcp://w:1 refused the games")
    assert f"rules {ours['rules']} here, 0123456789ab on the coordinator" in problem
