"""Tournaments through the CLI, with real engine processes and real SQLite
files (specs/tournament.md, specs/storage.md).

Every run uses ``--tc depth=1`` (the sample engines answer at once) and a
handful of games, so each test takes a second or two.  The CLI runs
in-process (typer's CliRunner: ``cli.invoke``) unless a test needs a real
process of its own: a signal, a SIGKILL, a pipe closed under it, or a run
that goes on while the test changes its files (``cli.start``, ``cli.arbiter``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
import trio
from bad_engines.harness import processes_with
from cli import arbiter, invoke, start
from players import FixedRecords

from arbiter.cli.app import OUTPUT_CLOSED, Interrupted, run_interruptible
from arbiter.config import ConfigError, TournamentConfig, engines_file_for, from_file_and_flags
from arbiter.engine import EngineConfig
from arbiter.games import get_game
from arbiter.run.coordinator import Coordinator
from arbiter.run.observer import Observer
from arbiter.schedule import build_schedule, parse_openings
from arbiter.store import Store, TournamentBusyError
from arbiter.tournament import open_tournament

PY = sys.executable
HERE = Path(__file__).parent / "engines_for_tournament"
FAST = ["--tc", "depth=1", "--plain"]
#: the in-process CLI by the name tests/test_cluster.py imports from here
cli = invoke


def spec(name: str, kind: str = "random", **env: str) -> str:
    text = f"cmd='{PY} -m sample_engines.{kind}' name={name}"
    return text + "".join(f" env.{k}={v}" for k, v in env.items())


def script(name: str, file: str, **env: str) -> str:
    text = f"cmd='{PY} {HERE / file}' name={name}"
    return text + "".join(f" env.{k}={v}" for k, v in env.items())


def rows(db: Path, tournament: int = 1) -> list[dict]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute(
            "select * from games where tournament = ? order by seq", [tournament])]
    finally:
        conn.close()


def one(db: Path, sql: str, *params):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchone()
    finally:
        conn.close()


def count_games(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return one(db, "select count(*) from games")[0]
    except sqlite3.OperationalError:  # schema not created yet
        return 0


def wait_for_games(db: Path, n: int, proc: subprocess.Popen, limit: float = 60) -> int:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        done = count_games(db)
        if done >= n:
            return done
        if proc.poll() is not None:
            assert proc.stderr is not None
            pytest.fail(f"arbiter exited early: {proc.stderr.read()}")
        time.sleep(0.02)
    pytest.fail(f"fewer than {n} games after {limit} s")


def standings_json(db: Path, cwd: Path, *extra: str) -> Any:
    done = invoke("standings", "--db", str(db), "--json", *extra, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_clean(done: subprocess.CompletedProcess, code: int = 0) -> None:
    assert done.returncode == code, done.stderr + done.stdout
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------
# Schedules, colours, openings, concurrency
# --------------------------------------------------------------------------


def test_round_robin_with_concurrency(tmp_path):
    """specs/tournament.md §Schedule, §Colours, §Concurrency: every pair,
    colours swapped within each game pair, each engine White half the time,
    two games at once, one line per game when stdout is not a terminal."""
    db = tmp_path / "r.db"
    pgn = tmp_path / "games.pgn"
    logs = tmp_path / "logs"
    done = invoke("tournament", "-g", "troll", "-e", spec("a"), "-e", spec("b"),
                   "-e", spec("c", "greedy"), "--games", "2", "--rounds", "2",
                   "--concurrency", "2", "--db", str(db), "--pgn", str(pgn),
                   "--log", str(logs), *FAST, cwd=tmp_path)
    assert_clean(done)
    # §Engine reuse: one I/O log per process; reused across games, so fewer than 2 per game
    assert 2 <= len(list(logs.iterdir())) < 24
    games = rows(db)
    schedule = build_schedule(["a", "b", "c"], games=2, rounds=2)
    assert len(games) == len(schedule) == 12
    expected = {g.key: g for g in schedule}
    for row in games:
        planned = expected[row["key"]]
        assert (row["white"], row["black"]) == (planned.white, planned.black)
        assert (row["round"], row["pairing"], row["pair"]) == (planned.round, planned.pairing, planned.pair)
    by_pair = defaultdict(list)
    for row in games:
        by_pair[(row["pairing"], row["pair"])].append((row["white"], row["black"]))
    assert all(p[0] == p[1][::-1] for p in by_pair.values()) and len(by_pair) == 6
    assert Counter(r["white"] for r in games) == {"a": 4, "b": 4, "c": 4}
    assert sum(1 for line in done.stdout.splitlines() if line.startswith("[")) == 12
    data = standings_json(db, tmp_path)
    assert data["tournament"]["status"] == "finished"
    assert data["games"] == 12
    assert sum(e["points"] for e in data["engines"]) == 12
    assert {(p["first"], p["second"]) for p in data["pairs"]} == {("a", "b"), ("a", "c"), ("b", "c")}
    assert all(p["pentanomial"] is not None and sum(p["pentanomial"]) == 2 for p in data["pairs"])
    from arbiter.records import parse_games
    assert len(parse_games(pgn.read_text(), str(pgn))) == 12


def test_gauntlet_with_random_openings(tmp_path):
    """§Schedule (gauntlet), §Openings (--random-plies, each played both ways),
    §Engine reuse (--restart: fresh processes for every game)."""
    db = tmp_path / "g.db"
    logs = tmp_path / "logs"
    done = invoke("tournament", "-g", "atoll", "-e", spec("hero"), "-e", spec("x"),
                   "-e", spec("y"), "--format", "gauntlet", "--games", "2", "--restart",
                   "--random-plies", "3", "--seed", "5", "--db", str(db), "--log", str(logs),
                   *FAST, cwd=tmp_path)
    assert_clean(done)
    assert len(list(logs.iterdir())) == 8  # two processes per game
    games = rows(db)
    assert len(games) == 4
    assert all("hero" in (r["white"], r["black"]) for r in games)
    assert {frozenset((r["white"], r["black"])) for r in games} == {
        frozenset(("hero", "x")), frozenset(("hero", "y"))}
    openings = defaultdict(set)
    for r in games:
        moves = json.loads(r["opening_moves"])
        assert len(moves) == 3 and r["opening"].startswith("random:")
        openings[r["pair"]].add(tuple(moves))
        record = json.loads(r["record"])
        assert record["opening_moves"] == moves
        get_game("atoll").position(None, moves + json.loads(r["moves"]))  # all legal
    assert all(len(s) == 1 for s in openings.values())


def test_openings_file_each_opening_both_ways(tmp_path):
    """§Openings: each line of the file is played twice, colours swapped."""
    troll = get_game("troll")
    after = troll.position(None, ["d5", "e4"]).fen()
    book = tmp_path / "book.txt"
    book.write_text(f"# two openings\nc3 f6\n\n{after} moves e5\n")
    db = tmp_path / "o.db"
    pgn = tmp_path / "o.pgn"
    done = invoke("match", "troll", spec("a"), spec("b"), "--games", "4",
                   "--openings", str(book), "--db", str(db), "--pgn", str(pgn), *FAST, cwd=tmp_path)
    assert_clean(done)
    # one worker, one pairing: the games are stored in schedule order, and the
    # file written as they ended is what `export` writes (specs/records.md)
    exported = invoke("export", "--db", str(db), cwd=tmp_path)
    assert_clean(exported)
    assert exported.stdout == pgn.read_text()
    games = rows(db)
    assert [(r["white"], r["opening"].rsplit(":", 1)[1]) for r in games] == [
        ("a", "2"), ("b", "2"), ("a", "4"), ("b", "4")]
    for r in games:
        record = json.loads(r["record"])
        if r["opening"].endswith(":2"):
            assert (record["fen"], record["opening_moves"]) == (None, ["c3", "f6"])
        else:
            assert (record["fen"], record["opening_moves"]) == (after, ["e5"])
    openings = parse_openings(troll, book.read_text(), str(book))
    assert [o.source for o in openings] == [f"{book}:2", f"{book}:4"]


# --------------------------------------------------------------------------
# Resume
# --------------------------------------------------------------------------


def test_sigkill_mid_run_then_resume(tmp_path):
    """specs/tournament.md §Resume, specs/storage.md §Durability: a run killed
    with SIGKILL keeps every finished game; the same command plays only the
    rest, each game once, on the same schedule.  `standings` reads the file
    while the run writes it.  (The gate engine holds the run mid-way until
    the test creates the gate file.)"""
    db = tmp_path / "k.db"
    gate = tmp_path / "gate"
    tag = f"arbiter-test-{uuid.uuid4()}"
    args = ["tournament", "-g", "troll",
            "-e", script("a", "gate.py", GATE=str(gate), GATE_AFTER="40", TAG=tag),
            "-e", spec("b", "greedy", TAG=tag),
            "--games", "40", "--random-plies", "2", "--concurrency", "2", "--db", str(db), *FAST]
    proc = start(*args, cwd=tmp_path)
    try:
        wait_for_games(db, 2, proc)
        live = standings_json(db, tmp_path)
        assert live["tournament"]["status"] == "running"
        assert live["tournament"]["running_now"] is True
        assert 2 <= live["games"] < 40
        # One run per tournament (specs/tournament.md §Resume): the same
        # command meanwhile is refused, naming the run, and starts nothing.
        second = invoke(*args, cwd=tmp_path)
        assert second.returncode == 3, second.stderr
        assert f"is being run by another process (pid {proc.pid}); nothing was started" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        proc.kill()  # SIGKILL: no clean-up at all
        proc.communicate()
        gate.touch()  # let the orphaned engines run into their closed pipes
    killed_at = count_games(db)
    assert 2 <= killed_at < 40
    # the status still says running, but nobody holds the run any more
    after = standings_json(db, tmp_path)
    assert (after["tournament"]["status"], after["tournament"]["running_now"]) == ("running", False)
    listing = invoke("standings", "--list", "--db", str(db), cwd=tmp_path)
    assert "running, but no run is alive (killed?)" in listing.stdout
    assert Path(f"{db}-run-1.lock").exists()  # left by the killed run, unlocked: taken over below
    assert one(db, "pragma integrity_check")[0] == "ok"
    deadline = time.monotonic() + 30
    while processes_with(tag) and time.monotonic() < deadline:
        time.sleep(0.05)

    done = invoke(*args, cwd=tmp_path)
    assert_clean(done)
    assert "resuming tournament 1" in done.stderr
    assert not Path(f"{db}-run-1.lock").exists()
    games = rows(db)
    assert one(db, "select count(*) from tournaments")[0] == 1
    schedule = build_schedule(["a", "b"], games=40, random_plies=2, game=get_game("troll"))
    assert sorted(r["key"] for r in games) == sorted(g.key for g in schedule)
    planned = {g.key: g for g in schedule}
    for r in games:
        g = planned[r["key"]]
        assert (r["white"], r["black"], json.loads(r["opening_moves"])) == (
            g.white, g.black, list(g.opening.moves))
    assert sum(1 for line in done.stdout.splitlines() if line.startswith("[")) == 40 - killed_at
    assert standings_json(db, tmp_path)["games"] == 40
    kinds = [k for (k,) in sqlite3.connect(db).execute("select kind from events order by id")]
    assert kinds[0] == "start" and "resume" in kinds and kinds[-1] == "finished"


def test_one_run_per_tournament_in_one_process_too(tmp_path):
    """specs/storage.md §One run at a time: the claim is refused to a second
    holder even inside one process, and is free again once released."""
    with Store(tmp_path / "r.db") as store:
        assert not store.run_active(7)
        with store.claim_run(7):
            assert store.run_active(7) and not store.run_active(8)
            with pytest.raises(TournamentBusyError, match="being run by another run in this process"):
                with store.claim_run(7):
                    pass  # pragma: no cover
            with store.claim_run(8):  # another tournament of the same file: its own claim
                assert store.run_active(8)
        assert not store.run_active(7) and not store.run_active(8)
        assert not store.run_lock_path(7).exists()  # a run that ends cleans up after itself


def test_ctrl_c_stops_cleanly_then_resume_by_id(tmp_path):
    """§Stopping: SIGINT abandons the games in progress, kills the engines,
    prints the summary, exits 130; `--resume ID` finishes the run."""
    db = tmp_path / "c.db"
    gate = tmp_path / "gate"
    tag = f"arbiter-test-{uuid.uuid4()}"
    proc = start("match", "troll",
                 script("a", "gate.py", GATE=str(gate), GATE_AFTER="60", TAG=tag),
                 spec("b", TAG=tag), "--games", "30", "-c", "2", "--db", str(db), *FAST,
                 cwd=tmp_path)
    try:
        wait_for_games(db, 2, proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        gate.touch()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "--resume 1" in err
    assert "Traceback" not in err
    assert "engine" in out and "W" in out  # the summary: standings table
    assert processes_with(tag) == []
    status, note = one(db, "select status, note from tournaments where id = 1")
    assert status == "interrupted"
    assert "interrupted with" in note
    assert count_games(db) < 30

    done = invoke("tournament", "--resume", "1", "--db", str(db), "-c", "2", "--plain", cwd=tmp_path)
    assert_clean(done)
    assert len({r["key"] for r in rows(db)}) == len(rows(db)) == 30
    assert one(db, "select status from tournaments where id = 1")[0] == "finished"


def _read_first_line_then_close(proc: subprocess.Popen, prefix: str) -> str:
    """What `| head -1` does to a run: read its first line (it starts with
    ``prefix``), close its output, wait for it to end; its stderr."""
    assert proc.stdout is not None and proc.stderr is not None
    try:
        assert proc.stdout.readline().startswith(prefix)
        proc.stdout.close()
        err = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    return err


def test_a_reader_going_away_stops_the_run_cleanly(tmp_path):
    """§Stopping: `arbiter match ... | head -1` -- the run's output closed
    under it -- stops the run as Ctrl-C does (status `interrupted`, noting
    why; engines ended; the stderr message; exit 130), never a traceback
    nor a status left at `running`."""
    db = tmp_path / "p.db"
    tag = f"arbiter-test-{uuid.uuid4()}"
    proc = start("match", "troll", spec("a", TAG=tag), spec("b", TAG=tag), "--games", "40",
                 "--db", str(db), *FAST, cwd=tmp_path)
    err = _read_first_line_then_close(proc, "tournament 1:")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted after" in err
    status, note = one(db, "select status, note from tournaments where id = 1")
    assert status == "interrupted" and note.endswith("(its output was closed)")
    assert count_games(db) < 40
    assert processes_with(tag) == []


def test_a_record_file_that_fails_mid_run_costs_no_game(tmp_path):
    """`--pgn FILE` that stops taking appends during the run (a full disk;
    here a link to nowhere put in its place, in one rename so that no append
    can fall between): the run goes on, every game is in the database, the
    failure is said once and kept as an event."""
    db, pgn, gate = tmp_path / "g.db", tmp_path / "games.pgn", tmp_path / "gate"
    waiting = tmp_path / "waiting"
    proc = start("match", "troll", script("a", "gate.py", GATE=str(gate), GATE_AFTER="30",
                                          GATE_WAITING=str(waiting)),
                 spec("b"), "--games", "6", "-c", "1", "--pgn", str(pgn), "--db", str(db), *FAST,
                 cwd=tmp_path)
    try:
        # mid-run: a game stored, or the first game held at the gate (it lasted over 30 moves of a)
        deadline = time.monotonic() + 60
        while count_games(db) < 1 and not waiting.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "no game stored, none held"
            time.sleep(0.02)
        link = tmp_path / "link"
        link.symlink_to(tmp_path / "no" / "such.pgn")
        link.rename(pgn)  # appending to it now fails
        gate.touch()
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        gate.touch()
    assert proc.returncode == 0, err
    assert count_games(db) == 6
    assert out.count(f"note: cannot append to {pgn} (No such file or directory)") == 1
    (kind, detail), = sqlite3.connect(db).execute(
        "select kind, detail from events where kind = 'pgn-error'").fetchall()
    assert "all are in the database" in detail


async def test_a_failing_database_aborts_the_run_cleanly(tmp_path):
    """specs/storage.md §Durability: when a write fails (here another
    connection holds the database past the busy timeout; a full disk is the
    same), the run aborts instead of crashing: the games stored before stay,
    the game that could not be stored is abandoned (replayed on resume), the
    engines are ended, the reason is the note."""
    db = tmp_path / "locked.db"
    tag = f"arbiter-test-{uuid.uuid4()}"
    engines = [EngineConfig(cmd=f"{PY} -m sample_engines.random", name=name, env={"TAG": tag})
               for name in ("a", "b")]
    config = TournamentConfig(game="troll", engines=engines, games=6, tc="depth=1")
    holder = sqlite3.connect(db, isolation_level=None)

    class LockAfterTheFirstGame(Observer):
        def game_finished(self, game, record, standings):
            if standings.games == 1:
                holder.execute("BEGIN EXCLUSIVE")  # every write now waits, then fails

    with Store(db, busy_timeout=0.2) as store:
        tournament_id, _ = open_tournament(store, config)
        result = await Coordinator(config, store, tournament_id,
                                  observer=LockAfterTheFirstGame()).run()
    holder.rollback()
    assert result.status == "aborted"
    assert "the database failed while storing game" in result.note
    assert "database is locked" in result.note and "running the same command again" in result.note
    assert len(result.abandoned) == 1
    assert count_games(db) == 1
    assert processes_with(tag) == []


def test_rerun_of_a_finished_tournament_and_new(tmp_path):
    db = tmp_path / "f.db"
    args = ["match", "troll", spec("a"), spec("b"), "--games", "2", "--db", str(db), *FAST]
    assert_clean(invoke(*args, cwd=tmp_path))
    again = invoke(*args, cwd=tmp_path)
    assert_clean(again)
    assert "already finished" in again.stderr
    assert count_games(db) == 2
    fresh = invoke(*args, "--new", cwd=tmp_path)
    assert_clean(fresh)
    assert [len(rows(db, t)) for t in (1, 2)] == [2, 2]
    listing = standings_json(db, tmp_path, "--list")
    assert [(t["id"], t["done"], t["status"]) for t in listing] == [(1, 2, "finished"),
                                                                     (2, 2, "finished")]


# --------------------------------------------------------------------------
# Start-up
# --------------------------------------------------------------------------


async def test_engines_start_in_a_bounded_wave(tmp_path):
    """specs/tournament.md §Running: at most ``startups`` engines start at
    once (from the spawn to the end of the handshake and options), however
    many workers want theirs; every game is still played."""
    log = tmp_path / "starts.log"
    engines = [EngineConfig(cmd=f"{PY} {HERE / 'ready_order.py'}", name=name,
                            env={"NAME": name, "START_LOG": str(log), "UGI_DELAY": "0.1"})
               for name in ("a", "b", "c")]
    config = TournamentConfig(game="troll", engines=engines, games=2, tc="depth=1", maxplies=4,
                              concurrency=4)
    with Store(tmp_path / "w.db") as store:
        tournament_id, _ = open_tournament(store, config)
        result = await Coordinator(config, store, tournament_id, startups=2).run()
    assert (result.status, result.done) == ("finished", 6)
    starting, most = 0, 0
    lines = log.read_text().split()[::2]
    for word in lines:
        starting += 1 if word == "start" else -1
        most = max(most, starting)
    assert most <= 2 and lines.count("start") == lines.count("ugiok") >= 2


def test_no_go_before_both_engines_answered_readyok(tmp_path):
    """specs/match.md §Games: a game's clock starts with its first ``go``,
    sent only once both engines have answered ``readyok`` to the new game;
    nothing else is sent to an engine while its ``readyok`` is awaited.
    (Each engine writes a marker before its ``readyok`` and looks for its
    opponent's on ``go``; one of them is slow to answer.)"""
    ready = tmp_path / "ready"
    ready.mkdir()
    slow = script("slow", "ready_order.py", NAME="slow", OPPONENT="fast", READY_DIR=str(ready),
                  READY_DELAY="0.3")
    fast = script("fast", "ready_order.py", NAME="fast", OPPONENT="slow", READY_DIR=str(ready))
    done = invoke("match", "troll", slow, fast, "--games", "4", "--maxplies", "6",
               "--db", str(tmp_path / "r.db"), *FAST, cwd=tmp_path)
    assert_clean(done)
    assert count_games(tmp_path / "r.db") == 4
    assert sorted(p.name for p in ready.iterdir()) == sorted(
        f"{name}-{n}" for name in ("slow", "fast") for n in range(1, 5))  # no fault-* file


# --------------------------------------------------------------------------
# The interrupt policy (arbiter/cli/app.py)
# --------------------------------------------------------------------------


def test_one_interrupt_policy():
    """run_interruptible: the first signal asks for a clean stop (``stop``
    with its name), a second one, or any without ``stop``, cancels main with
    Interrupted(reason); main's own exceptions come out as themselves."""
    stops: list[str] = []
    asked: list[trio.Event] = []  # the run's own, set by stop()

    def stop(reason: str) -> None:
        stops.append(reason)
        asked[-1].set()

    async def signal_then_wait(number: signal.Signals) -> None:
        asked.append(trio.Event())
        os.kill(os.getpid(), number)
        await asked[-1].wait()

    async def stops_cleanly() -> str:
        await signal_then_wait(signal.SIGTERM)
        return "stopped cleanly"

    assert run_interruptible(stops_cleanly, stop=stop) == "stopped cleanly"
    assert stops == ["SIGTERM"]

    async def stops_slowly() -> None:
        await signal_then_wait(signal.SIGHUP)
        os.kill(os.getpid(), signal.SIGINT)  # a second signal: no more waiting
        await trio.sleep_forever()

    with pytest.raises(Interrupted) as again:
        run_interruptible(stops_slowly, stop=stop)
    assert stops == ["SIGTERM", "SIGHUP"] and again.value.reason == "SIGINT"

    async def no_stop() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        await trio.sleep_forever()

    with pytest.raises(Interrupted) as cancelled:
        run_interruptible(no_stop)
    assert cancelled.value.reason == "SIGTERM"

    async def fails() -> None:
        raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        run_interruptible(fails)


def test_sigterm_stops_a_tournament_cleanly(tmp_path):
    """§Stopping, in-process: SIGTERM through the command line's runner is
    Coordinator.stop("SIGTERM"): games in progress abandoned, engines ended,
    status interrupted with the signal in the note."""
    tag = f"arbiter-test-{uuid.uuid4()}"
    engines = [EngineConfig(cmd=f"{PY} -m sample_engines.random", name=name, env={"TAG": tag})
               for name in ("a", "b")]
    config = TournamentConfig(game="troll", engines=engines, games=40, tc="depth=1", concurrency=2)

    class SignalAfterTheFirstGame(Observer):
        sent = False

        def game_finished(self, game, record, standings):
            if not self.sent:
                self.sent = True
                os.kill(os.getpid(), signal.SIGTERM)

    with Store(tmp_path / "t.db") as store:
        tournament_id, _ = open_tournament(store, config)
        tournament = Coordinator(config, store, tournament_id, observer=SignalAfterTheFirstGame())
        result = run_interruptible(tournament.run, stop=tournament.stop)
        status, note = store.tournament(tournament_id)["status"], result.note  # type: ignore[index]
    assert (result.status, status) == ("interrupted", "interrupted")
    assert note.endswith("(SIGTERM)") and result.done < 40
    assert processes_with(tag) == []


def test_a_closed_output_stops_play_too(tmp_path):
    """The runner's policy for `arbiter play ... | head -1`: the engines are
    ended, a message on stderr, exit status 130, never a traceback."""
    tag = f"arbiter-test-{uuid.uuid4()}"
    proc = start("play", "troll", "-e", spec("a", TAG=tag), "-e", spec("b", "greedy", TAG=tag),
                 "--tc", "depth=1", cwd=tmp_path)
    err = _read_first_line_then_close(proc, "troll: a (White) vs b (Black)")
    assert proc.returncode == 130, err
    assert f"interrupted ({OUTPUT_CLOSED}); engines stopped" in err and "Traceback" not in err
    assert processes_with(tag) == []


# --------------------------------------------------------------------------
# Engine faults
# --------------------------------------------------------------------------


def test_crash_is_recovered_and_flaky_handshake_retried(tmp_path):
    """§Engine faults: a crashed engine loses that game and is restarted for
    the next; a failed handshake is retried once with a fresh process."""
    db = tmp_path / "x.db"
    crash_marker, flaky_marker = tmp_path / "crashed", tmp_path / "flaky"
    done = invoke("tournament", "-g", "troll",
                   "-e", script("crashy", "crash_once.py", CRASH_MARKER=str(crash_marker)),
                   "-e", spec("steady"),
                   "-e", script("flaky", "flaky_handshake.py", FLAKY_MARKER=str(flaky_marker)),
                   "--games", "2", "--db", str(db), *FAST, cwd=tmp_path)
    assert_clean(done)
    assert crash_marker.exists() and flaky_marker.exists()
    games = rows(db)
    assert len(games) == 6
    crashes = [r for r in games if r["termination"] == "crash"]
    assert len(crashes) == 1
    (crash,) = crashes
    loser = crash["white"] if crash["result"] == "0-1" else crash["black"]
    assert loser == "crashy"
    later = [r for r in games if "crashy" in (r["white"], r["black"]) and r["id"] > crash["id"]]
    assert later and all(r["termination"] != "crash" for r in later)
    events = sqlite3.connect(db).execute("select kind, engine from events").fetchall()
    assert ("restart", "crashy") in events
    assert ("handshake-failed", "flaky") in events
    assert "restarted" in done.stdout and "handshake-failure" in done.stdout


def test_engine_that_never_handshakes_aborts_the_run(tmp_path):
    """§Engine faults: two failed handshakes end the run (exit 1); since each
    engine is started once before the tournament is created (issue 15), the
    check fails first and no tournament is left in the database."""
    db = tmp_path / "h.db"
    done = invoke("match", "troll", script("dead", "no_handshake.py"), spec("b"),
                   "--games", "2", "--db", str(db), *FAST, cwd=tmp_path)
    assert_clean(done, 1)
    assert "'dead'" in done.stderr and "handshake" in done.stderr
    assert "no tournament was created" in done.stderr
    assert "retrying with a fresh process" in done.stdout
    assert count_games(db) == 0
    assert one(db, "select count(*) from tournaments")[0] == 0


# --------------------------------------------------------------------------
# SPRT
# --------------------------------------------------------------------------


def test_sprt_stops_the_match_on_complete_game_pairs(tmp_path):
    """§SPRT: greedy crushes random, H1 is accepted long before the cap, and
    the match stops with its game pairs complete."""
    db = tmp_path / "s.db"
    done = invoke("match", "troll", spec("greedy", "greedy"), spec("random"),
                   "--sprt", "elo0=0 elo1=200 alpha=0.05 beta=0.05", "--games", "400",
                   "-c", "2", "--db", str(db), "--json", "--tc", "depth=1", cwd=tmp_path)
    assert_clean(done)
    data = json.loads(done.stdout)
    assert data["sprt"]["decision"] == "H1"
    assert data["sprt"]["llr"] >= data["sprt"]["upper"]
    assert data["tournament"]["status"] == "finished"
    assert "SPRT: H1 accepted" in data["tournament"]["note"]
    played = count_games(db)
    assert played < 400 and played % 2 == 0
    assert sum(data["pairs"][0]["pentanomial"]) == played // 2


# --------------------------------------------------------------------------
# Config files and bad configs
# --------------------------------------------------------------------------


def test_config_file_with_flag_overrides(tmp_path):
    """§Config file: TOML keys, [engines.NAME] tables, paths relative to the
    file, and flags that override the file."""
    sub = tmp_path / "conf"
    sub.mkdir()
    (sub / "run.toml").write_text(f"""
name = "from the file"
game = "morris"
games = 4
db = "results.db"
engine = ["alpha", "beta tc=depth=1"]

[engines.alpha]
cmd = "{PY} -m sample_engines.random"
options = {{ Seed = 3 }}

[engines.beta]
cmd = "{PY} -m sample_engines.greedy"
""")
    done = invoke("tournament", str(sub / "run.toml"), "--games", "2", "--tc", "depth=1",
                   "--plain", cwd=tmp_path)
    assert_clean(done)
    db = sub / "results.db"
    assert one(db, "select name, game from tournaments") == ("from the file", "morris")
    assert {(r["white"], r["black"]) for r in rows(db)} == {("alpha", "beta"), ("beta", "alpha")}
    config = json.loads(one(db, "select config from tournaments")[0])
    assert config["games"] == 2
    assert config["engines"][0]["options"] == {"Seed": "3"}
    assert config["engines"][1]["tc"] == "depth=1"


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


BAD = [
    (["--format", "monrad"], "unknown format 'monrad'"),
    (["-g", "chess"], "unknown game 'chess'"),
    (["--tc", "40/"], "bad time control '40/'"),
    (["--games", "0"], "--games must be at least 1"),
    (["--sprt", "elo0=0 elo1=5", "-e", spec("c")], "sprt needs exactly two engines"),
    (["--sprt", "elo0=5 elo1=0"], "elo0 (5.0) must be less than elo1"),
    (["--random-plies", "-2"], "--random-plies must be at least 0"),
    (["--openings", "/nonexistent/book.txt"], "/nonexistent/book.txt: cannot read openings"),
    (["-e", spec("a")], "two engines are called 'a'"),
    (["--engine", "name=nocmd"], "no cmd="),
]


@pytest.mark.parametrize("extra, message", BAD)
def test_bad_flags_are_rejected(tmp_path, extra, message):
    """specs/tournament.md §Errors: exit status 2 and one clear line."""
    args = ["tournament", "-e", spec("a"), "-e", spec("b"), "--db", str(tmp_path / "b.db")]
    if "-g" not in extra:
        args += ["-g", "troll"]
    done = invoke(*args, *extra, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("arbiter: error:") and message in done.stderr
    assert not (tmp_path / "b.db").exists()


def test_resume_of_an_unknown_tournament(tmp_path):
    Store(tmp_path / "b.db").close()  # an empty results database
    done = invoke("tournament", "--resume", "7", "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert done.returncode == 2 and "no tournament 7" in done.stderr
    done = invoke("tournament", "--resume", "1", "-g", "troll", "--db", str(tmp_path / "b.db"), cwd=tmp_path)
    assert done.returncode == 2 and "drop --game" in done.stderr


def test_bad_files_are_rejected_naming_file_and_place(tmp_path):
    def run(*extra):
        done = invoke("tournament", *extra, "--db", str(tmp_path / "b.db"), cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.startswith("arbiter: error:")
        return done.stderr

    book = _write(tmp_path, "book.txt", "d5 e4\nd5 d5\n")
    err = run("-g", "troll", "-e", spec("a"), "-e", spec("b"), "--openings", book)
    assert f"{book}:2:" in err and "illegal move 'd5'" in err
    err = run("-g", "troll", "-e", spec("a"), "-e", spec("b"), "--openings", str(tmp_path / "none"))
    assert "none: cannot read openings" in err
    err = run(_write(tmp_path, "syntax.toml", "game = \n"))
    assert "syntax.toml" in err and "not valid TOML" in err
    err = run(_write(tmp_path, "typo.toml", 'game = "troll"\ngmes = 3\n'))
    assert "typo.toml" in err and "unknown key 'gmes'" in err
    err = run(_write(tmp_path, "type.toml", 'game = "troll"\ngames = "two"\n'))
    assert "type.toml" in err and "key 'games' must be a whole number" in err
    err = run(_write(tmp_path, "lonely.toml", 'game = "troll"\n[engines.a]\ncmd = "x"\n'))
    assert "lonely.toml" in err and "at least two engines (got 1)" in err
    err = run(_write(tmp_path, "ghost.toml", 'game = "troll"\nengine = ["a", "ghost"]\n'
                                            '[engines.a]\ncmd = "x"\n'))
    assert "ghost.toml" in err and "no engine 'ghost'" in err
    assert not (tmp_path / "b.db").exists()


def test_one_rule_for_the_engines_file(tmp_path):
    """arbiter/config.py: the engines file that applies is --engines FILE,
    else the config file's engines_file, else ./engines.toml when present,
    for SPECs given as flags and in the config file alike; the config file's
    own [engines.NAME] tables win (specs/tournament.md §Config file)."""
    (tmp_path / "engines.toml").write_text('[engines.a]\ncmd = "here-a"\n[engines.b]\ncmd = "here-b"\n')
    other = _write(tmp_path, "other.toml", '[engines.a]\ncmd = "other-a"\n')
    run = _write(tmp_path, "run.toml", 'game = "troll"\nengine = ["a", "b"]\n'
                                       '[engines.b]\ncmd = "own-b"\n')
    named = _write(tmp_path, "named.toml", f'game = "troll"\nengine = ["a", "b"]\nengines_file = "{other}"\n'
                                           '[engines.b]\ncmd = "own-b"\n')

    def commands(config_file, specs, engines_file, flags=None):
        config, _ = from_file_and_flags(config_file, specs, engines_file, flags or {})
        return [e.cmd for e in config.engines]

    with contextlib.chdir(tmp_path):
        assert (engines_file_for(None), engines_file_for(other)) == ("engines.toml", other)
        assert commands(None, ["a", "b"], None, {"game": "troll"}) == ["here-a", "here-b"]
        assert commands(None, ["a", "cmd=z name=z"], other, {"game": "troll"}) == ["other-a", "z"]
        assert commands(run, None, None) == ["here-a", "own-b"]
        assert commands(run, None, other) == ["other-a", "own-b"]
        assert commands(named, None, None) == ["other-a", "own-b"]
        assert commands(run, ["a", "b"], None) == ["here-a", "own-b"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with contextlib.chdir(empty):
        assert engines_file_for(None) is None
        with pytest.raises(ConfigError, match="there is no engines file"):
            from_file_and_flags(None, ["a", "b"], None, {"game": "troll"})


def test_a_run_through_a_subprocess_never_shows_a_traceback(tmp_path):
    done = arbiter("tournament", "-g", "troll", "-e", spec("a"), "-e", spec("b"),
                   "--openings", _write(tmp_path, "b.txt", "zz\n"), cwd=tmp_path)
    assert_clean(done, 2)
    assert done.stderr.startswith("arbiter: error: ") and "b.txt:1:" in done.stderr


def test_standings_from_rows():
    """arbiter/standings.py: W/D/L per engine and per pair, pentanomial from
    complete game pairs only (an incomplete pair counts in W/D/L)."""
    from arbiter.standings import compute_standings

    games = [  # pairing 1 = a-b: pair 1 complete (a wins both), pair 2 half played
        dict(white="a", black="b", result="1-0", pairing=1, pair=1, termination="connection"),
        dict(white="b", black="a", result="0-1", pairing=1, pair=1, termination="connection"),
        dict(white="a", black="b", result="1/2-1/2", pairing=1, pair=2, termination="no-moves"),
        # pairing 2 = a-c: one pair, a draw and a loss for a
        dict(white="a", black="c", result="1/2-1/2", pairing=2, pair=1, termination="no-moves"),
        dict(white="c", black="a", result="1-0", pairing=2, pair=1, termination="crash"),
    ]
    table = compute_standings(["a", "b", "c"], games)
    lines = {e.name: (e.games, e.points, e.wins, e.draws, e.losses) for e in table.engines}
    assert lines == {"a": (5, 3.0, 2, 2, 1), "b": (3, 0.5, 0, 1, 2), "c": (2, 1.5, 1, 1, 0)}
    pairs = {(p.first, p.second): p.stats for p in table.pairs}
    assert (pairs[("a", "b")].wins, pairs[("a", "b")].draws, pairs[("a", "b")].losses) == (2, 1, 0)
    assert pairs[("a", "b")].pentanomial == (0, 0, 0, 0, 1)
    assert pairs[("a", "c")].pentanomial == (0, 1, 0, 0, 0)
    assert table.terminations == {"connection": 2, "no-moves": 2, "crash": 1}
    assert table.games == 5
    elos = {e.name: e.elo for e in table.engines}
    a, b = elos["a"], elos["b"]
    assert a is not None and b is not None and all(e is not None for e in elos.values())
    assert a > b and abs(sum(e for e in elos.values() if e is not None)) < 1e-6  # mean 0


def test_standings_tallied_game_by_game_match_the_games_one_by_one():
    """arbiter/standings.py Tally: the standings a running tournament keeps up
    game by game agree, after every game, with the games counted afresh in
    the plainest way (W/D/L, points, pentanomial of complete game pairs), and
    the joint ratings made from each pair's totals are those made from every
    game (specs/ratings.md §Joint ratings: the pair totals are all they use)."""
    import random

    from arbiter.rating import Anchor, joint_ratings
    from arbiter.standings import Tally

    rng = random.Random(5)
    names = ["a", "b", "c", "d"]
    rows: list[dict[str, Any]] = []
    for pairing in range(6):
        first, second = rng.sample(names, 2)
        for pair in range(12):
            for white, black in ((first, second), (second, first)):
                rows.append(dict(white=white, black=black, pairing=pairing, pair=pair,
                                 result=rng.choice(["1-0", "0-1", "1/2-1/2", "1-0"]),
                                 termination=rng.choice(["connection", "no-moves"])))
    rng.shuffle(rows)  # game pairs complete out of order, as with concurrency
    rows.insert(17, dict(white="a", black="b", result="*", termination="crash"))  # not counted
    score = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}

    def afresh(games):
        lines: defaultdict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0, 0, 0])
        pentas: defaultdict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * 5)
        halves: dict[tuple[int, int], float] = {}
        for g in games:
            if g["result"] not in score:
                continue
            w = score[g["result"]]
            for name, s in ((g["white"], w), (g["black"], 1 - w)):
                line = lines[name]
                line[0] += 1
                line[1] += s
                line[2 + {1.0: 0, 0.5: 1, 0.0: 2}[s]] += 1
            first = min(g["white"], g["black"], key=names.index)
            second = g["black"] if first == g["white"] else g["white"]
            mine = w if first == g["white"] else 1 - w
            key = (g["pairing"], g["pair"])
            if key in halves:
                pentas[(first, second)][int(2 * (halves.pop(key) + mine))] += 1
            else:
                halves[key] = mine
        return ({n: tuple(v) for n, v in lines.items()}, {k: tuple(v) for k, v in pentas.items()})

    tally = Tally(names)
    for count, row in enumerate(rows, 1):
        tally.add(row)
        table = tally.standings()
        lines = {e.name: (e.games, e.points, e.wins, e.draws, e.losses) for e in table.engines if e.games}
        pentas = {(p.first, p.second): p.stats.pentanomial for p in table.pairs if p.stats.pentanomial}
        assert (lines, pentas) == afresh(rows[:count]), f"after {count} games"
    scored: list[tuple[str, str, float]] = [(r["white"], r["black"], score[r["result"]])
                                            for r in rows if r["result"] in score]
    per_game = {r.engine: r.elo for r in joint_ratings(scored, anchor=Anchor(), engines=names,
                                                       first_move=True)}  # White first: no game given
    assert table.games == len(rows) - 1
    for line in table.engines:
        mine, theirs = line.elo, per_game[line.name]
        assert mine is not None and theirs is not None and abs(mine - theirs) < 1e-6


# --------------------------------------------------------------------------
# Game pairs handed to a pair player (the cluster's seam)
# --------------------------------------------------------------------------


async def test_a_pair_player_is_handed_whole_pairs_in_schedule_order(tmp_path):
    """specs/tournament.md §Colours and game pairs, specs/cluster.md §Game
    pairs as tasks: the games a player is handed are whole game pairs
    (both games of an opening, or the one left of it on resume), pair by pair
    in schedule order, each game once; also a pair that spans two rounds
    (an odd ``--games``), and after a resume that stored one game of a pair.
    The player here plays nothing: it gives each game a fixed record."""
    from arbiter.record import GameRecord

    engines = [EngineConfig(cmd="unused", name=name) for name in ("a", "b", "c")]
    config = TournamentConfig(game="troll", engines=engines, games=3, rounds=2, tc="depth=1",
                              concurrency=2)
    player = FixedRecords(slots=2)

    schedule = build_schedule(["a", "b", "c"], games=3, rounds=2).games
    with Store(tmp_path / "p.db") as store:
        tournament_id, _ = open_tournament(store, config)
        first = schedule[0]  # one game of the first pair stored before: a resume
        store.save_game(tournament_id, key=first.key, seq=first.seq, round=first.round,
                        pairing=first.pairing, index=first.index, pair=first.pair,
                        opening=first.opening.to_dict(),
                        record=GameRecord("troll", first.white, first.black, "1-0", "connection",
                                          "before").to_dict())
        result = await Coordinator(config, store, tournament_id, player=player).run()
    assert (result.status, result.done) == ("finished", len(schedule))
    pairs = [pair for batch in player.handed for pair in batch]
    taken = [key for pair in pairs for key in pair]
    assert sorted(taken) == sorted(g.key for g in schedule[1:])  # each once, the stored one not
    by_key = {g.key: g for g in schedule}
    expected: dict[tuple[int, int], list[str]] = {}
    for game in schedule[1:]:
        expected.setdefault((game.pairing, game.pair), []).append(game.key)
    # whole pairs, games in schedule order; while fewer pairs are left than
    # idle slots, a pair's games may be handed out one by one (specs/tournament.md
    # §Coordinator and players): the halves of a split pair, joined, are the pair
    split = [pair for pair in pairs if pair not in expected.values()]
    joined = [sorted(k for part in split for k in part if (by_key[k].pairing, by_key[k].pair) == pid)
              for pid in {(by_key[p[0]].pairing, by_key[p[0]].pair) for p in split}]
    assert sorted([p for p in pairs if p not in split] + joined) == sorted(expected.values())
    assert all(len(part) == 1 for part in split)
    assert any(len({by_key[k].round for k in pair}) == 2 for pair in pairs)  # one spans rounds
    firsts = [by_key[pair[0]].seq for pair in pairs]
    assert firsts == sorted(firsts)  # taken pair by pair in schedule order
