"""Remote entrants of tournaments and matches (``specs/tournament.md`` §Remote
engines, ``specs/wire.md`` §Remote engines in tournaments), and an arena's
standings and export (``specs/tournament.md`` §Standings): real ``arbiter``
processes, ``arbiter connect`` clients over real sockets on 127.0.0.1, real
SQLite files."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from bad_engines.harness import FAST, processes_with
from cli import PROCESS_TIMEOUT, ListeningLog, invoke, start
from server_peers import FAULTS, Server, add_token, connect, frames_until_eof, spec, wait_gone
from test_server import HELD_ENGINE

from arbiter.cli.records import ARENA_FORMAT as CLI_ARENA_FORMAT
from arbiter.config import TournamentConfig
from arbiter.engine import Engine, EngineConfig, EngineTimeouts
from arbiter.engine.socket_transport import SocketTransport
from arbiter.enginespec import EngineSpecError, parse_engine_spec
from arbiter.games import get_game
from arbiter.match import play_game
from arbiter.run.coordinator import Coordinator
from arbiter.run.inprocess import InProcessPlayer
from arbiter.run.observer import Observer
from arbiter.server.arena import ARENA_FORMAT, Arena, ArenaSpec, open_arena
from arbiter.server.listener import REMOTE_READY_TIMEOUT, Registry, Remote
from arbiter.server.remote_run import RemoteEngines, remote_name
from arbiter.store import Store
from arbiter.tournament import open_tournament
from protocol import wire
from protocol.wire import CLIENT, NEED_DATA, SERVER, WireConnection

#: the runs of these tests: instant engines, a clock no honest one runs out of
TC = "20+0.2"

class _Run:
    """An ``arbiter tournament`` / ``match`` process listening for remote
    engines; its stderr read by a thread (the port it took, then its log:
    :class:`cli.ListeningLog`)."""

    def __init__(self, *args: str | Path, tag: str):
        self.proc = start(*args, "--listen", "127.0.0.1:0", "--plain", env={"TAG": tag})
        self._log = ListeningLog(self.proc)
        self.lines = self._log.lines
        self.port: int = self._log.port()

    def wait(self) -> tuple[int, str, str]:
        """Exit status, stdout, stderr once the run ends (stderr is the thread's)."""
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        self.proc.wait(PROCESS_TIMEOUT)
        return self.proc.returncode, out, self._log.join()

    def connect(self, token: str, engine_spec: str, tag: str) -> subprocess.Popen[str]:
        return start("connect", f"127.0.0.1:{self.port}", "--token", token, "-e", engine_spec,
                     env={"TAG": tag})


def _rows(db: Path, query: str) -> list[dict]:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        try:
            return [dict(row) for row in conn.execute(query).fetchall()]
        except sqlite3.OperationalError:  # no such table: nothing was ever made
            return []


def _wait_for(path: Path, run: _Run) -> None:
    deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
    while not path.exists():
        assert run.proc.poll() is None, "".join(run.lines)
        assert time.monotonic() < deadline, "".join(run.lines)
        time.sleep(0.05)


# --------------------------------------------------------------------------
# The spec
# --------------------------------------------------------------------------


def test_remote_spec() -> None:
    """specs/tournament.md §Remote engines: remote:NAME names the entrant
    NAME; it takes only what the arbiter applies (its clock)."""
    config = parse_engine_spec("remote:bob tc=5+0.1 timemargin=20")
    assert (remote_name(config), config.name, config.tc, config.timemargin_ms) == \
        ("bob", "bob", "5+0.1", 20)
    assert remote_name(parse_engine_spec(spec("ra", "x"))) is None
    for bad, words in (("remote:", "give remote:NAME"), ("remote:a/b", "1 to 64 letters"),
                       ("remote:bob cmd=x", "cmd= is not for a remote engine"),
                       ("remote:bob env.A=1", "env.A= is not for a remote engine"),
                       ("remote:bob option.Depth=3", "is not for a remote engine")):
        with pytest.raises(EngineSpecError, match=words):
            parse_engine_spec(bad)


def test_remote_options_are_checked_first(tmp_path: Path) -> None:
    """Nothing listens, nothing is made, exit 2: a remote engine without
    --listen, --listen without one, a bad --wait-engines, off loopback."""
    db = tmp_path / "r.db"
    local = spec("ra", "x")
    cases = [
        ((), "remote:bob needs --listen"),
        (("--listen", "127.0.0.1:0", "--wait-engines", "0"), "--wait-engines must be a number"),
        (("--listen", "127.0.0.1:0", "--wait-engines", "nan"), "--wait-engines must be a number"),
        (("--listen", "0.0.0.0:0"), "not a loopback address"),
    ]
    for extra, message in cases:
        run = invoke("match", "troll", "remote:bob", local, "--db", db, *extra)
        assert run.returncode == 2 and message in run.stderr, (extra, run.stderr)
    run = invoke("match", "troll", local, spec("rb", "x"), "--db", db, "--listen", "127.0.0.1:0")
    assert run.returncode == 2 and "--listen is for remote engines" in run.stderr
    assert _rows(db, "select * from tournaments") == []


def test_commands_that_run_the_engine_here_refuse_a_remote_one(tmp_path: Path) -> None:
    """specs/wire.md §Remote participants: play, check, engine info and
    connect run their engine here: remote:NAME is refused with what to give
    instead (it said "cannot start 'remote:x'")."""
    local = spec("ra", "x")
    for args, command in ((("play", "troll", "-e", "remote:x", "-e", local), "play"),
                          (("play", "troll", "-e", local, "-e", "remote:x"), "play"),
                          (("check", "troll", "-e", "remote:x"), "check"),
                          (("engine", "info", "-e", "remote:x"), "engine info"),
                          (("connect", "127.0.0.1:1", "--token", "a.b", "-e", "remote:x"), "connect")):
        run = invoke(*args)
        assert run.returncode == 2, (args, run.stderr)
        assert f"-e remote:x: arbiter {command} runs the engine here: give it as cmd=..." in run.stderr
        assert "cannot start" not in run.stderr


# --------------------------------------------------------------------------
# Runs with remote engines
# --------------------------------------------------------------------------


def test_remote_engine_in_round_robin(tmp_path: Path) -> None:
    """specs/tournament.md §Remote engines: a remote:NAME entrant beside two
    local ones plays its games through `arbiter connect`; they are stored
    like local games (names, records, its build); the run closes the
    connection at its end; nothing is left on either side."""
    db = tmp_path / "r.db"
    tag = f"arbiter-remote-test-{uuid.uuid4().hex}"
    token = add_token(db, "bob")
    run = _Run("tournament", "-g", "troll", "-e", spec("ra", tag), "-e", spec("rb", tag),
               "-e", "remote:bob", "--tc", TC, "--db", db, tag=tag)
    client = run.connect(token, spec("bob", tag), tag)
    status, out, err = run.wait()
    assert status == 0, err
    assert "bob (bob) connected" in err
    _, client_err = client.communicate(timeout=PROCESS_TIMEOUT)
    assert client.returncode == 0 and "the server closed the connection" in client_err
    assert wait_gone(tag) == []

    (tournament,) = _rows(db, "select * from tournaments")
    assert (tournament["status"], tournament["format"]) == ("finished", "round-robin")
    with Store(db, readonly=True) as store:
        games = store.games(tournament["id"])
    assert len(games) == 6
    remote = [g for g in games if "bob" in (g["white"], g["black"])]
    assert len(remote) == 4 and {g["white"] for g in remote} >= {"bob"}
    for game in remote:
        record = game["record"]
        assert game["plies"] > 0 and game["result"] in ("1-0", "0-1", "1/2-1/2")
        side = "white_id" if record["white"] == "bob" else "black_id"
        assert record[side]["name"] == "Random"  # the engine's own id, over the wire
        assert record["time_control"] == {"white": TC, "black": TC}
    builds = {row["name"]: row["command"] for row in _rows(
        db, "select e.name, n.command from entrants n join engines e on e.id = n.engine")}
    assert builds["bob"] == "remote:bob"
    table = invoke("standings", "--db", db, "--json")
    assert {row["name"] for row in json.loads(table.stdout)["engines"]} == {"ra", "rb", "bob"}


def test_a_match_with_a_remote_engine_over_tls(tmp_path: Path) -> None:
    """specs/wire.md §Remote participants: ``--tls-cert``/``--tls-key`` on a
    match make its listener TLS (as on ``arbiter serve``); a client checking
    it against ``--tls-ca`` plays, a plain one does not get in."""
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert_file, key_file, ca_file = (tmp_path / n for n in ("cert.pem", "key.pem", "ca.pem"))
    issued = ca.issue_cert("127.0.0.1")
    issued.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    issued.private_key_pem.write_to_path(str(key_file))
    ca.cert_pem.write_to_path(str(ca_file))
    db = tmp_path / "r.db"
    tag = f"arbiter-remote-test-{uuid.uuid4().hex}"
    token = add_token(db, "bob")
    run = _Run("match", "troll", "remote:bob", spec("ra", tag), "--tc", TC, "--db", db,
               "--tls-cert", cert_file, "--tls-key", key_file, tag=tag)
    plain = run.connect(token, spec("bob", tag), tag)
    _, plain_err = plain.communicate(timeout=PROCESS_TIMEOUT)
    assert plain.returncode == 1, plain_err
    client = start("connect", f"127.0.0.1:{run.port}", "--token", token, "-e", spec("bob", tag),
                   "--tls-ca", ca_file, env={"TAG": tag})
    status, _, err = run.wait()
    _, client_err = client.communicate(timeout=PROCESS_TIMEOUT)
    assert status == 0, err
    assert "TLS: every connection is encrypted" in err
    assert client.returncode == 0 and "the server closed the connection" in client_err
    games = _rows(db, "select white, black, plies from games")
    assert sorted((g["white"], g["black"]) for g in games) == [("bob", "ra"), ("ra", "bob")]
    assert wait_gone(tag) == []


def test_a_remote_run_off_loopback_needs_tls_or_insecure(tmp_path: Path) -> None:
    """specs/wire.md §Remote participants: the rule of ``arbiter serve``."""
    db = tmp_path / "r.db"
    engines = ("match", "troll", "remote:bob", f"cmd='{sys.executable} -m sample_engines.random'")
    run = invoke(*engines, "--listen", "0.0.0.0:0", "--db", db)
    assert run.returncode == 2 and "0.0.0.0 is not a loopback address" in run.stderr
    assert "--tls-cert/--tls-key, or --insecure" in run.stderr
    run = invoke(*engines, "--listen", "127.0.0.1:0", "--tls-cert", tmp_path / "none.pem", "--db", db)
    assert run.returncode == 2 and "--tls-cert and --tls-key go together" in run.stderr
    run = invoke(*engines, "--listen", "127.0.0.1:0", "--tls-cert", tmp_path / "none.pem",
                 "--tls-key", tmp_path / "none.pem", "--db", db)
    assert run.returncode == 2 and "none.pem" in run.stderr
    run = invoke(*engines, "--listen", "127.0.0.1:0", "--insecure", "--wait-engines", "0.1",
                 "--db", db)
    assert run.returncode == 1 and "warning: --insecure: tokens travel in clear" in run.stderr
    assert _rows(db, "select * from tournaments") == []


#: the wait of the test below: it must outlast one connection from this test
#: process (milliseconds; no process to start), and is waited out in full
REFUSED_WAIT = "3"


def test_wait_expires_and_a_wrong_token_is_refused(tmp_path: Path) -> None:
    """specs/tournament.md §Remote engines: a client with a wrong token is
    refused (its connection closed with the reason; ``arbiter connect``'s exit 1
    on a refusal: ``test_server.test_arena_games_over_the_wire``); the run's wait
    then expires with an error naming the missing engine, exit 1, and no
    tournament is left behind."""
    db = tmp_path / "r.db"
    tag = f"arbiter-remote-test-{uuid.uuid4().hex}"
    add_token(db, "bob")
    run = _Run("match", "troll", "remote:bob", spec("ra", tag), "--tc", TC, "--db", db,
               "--wait-engines", REFUSED_WAIT, tag=tag)
    conn = WireConnection(CLIENT)
    with socket.create_connection(("127.0.0.1", run.port)) as sock:
        sock.sendall(conn.send(wire.Hello(wire.WIRE_VERSION, "bob.wrong", "bob", "raw")))
        conn.receive_data(frames_until_eof(sock))
    assert conn.next_event() == wire.Refusal("unknown or revoked token")
    status, _, err = run.wait()
    assert status == 1, err
    assert "refused: unknown or revoked token" in err
    assert (f"--wait-engines {REFUSED_WAIT}: not connected in time: remote:bob; nothing was played"
            in err)
    assert "Traceback" not in err
    assert _rows(db, "select * from tournaments") == []
    assert wait_gone(tag) == []


def test_wait_expires_in_process(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    add_token(db, "bob")
    add_token(db, "carol")
    run = invoke("tournament", "-g", "troll", "-e", "remote:bob", "-e", "remote:carol",
                 "-e", spec("ra", "x"), "--db", db, "--listen", "127.0.0.1:0",
                 "--wait-engines", "0.2")
    assert run.returncode == 1
    assert "not connected in time: remote:bob, remote:carol" in run.stderr
    assert _rows(db, "select * from tournaments") == []


def test_remote_engine_lost_mid_game_is_waited_for_again(tmp_path: Path) -> None:
    """specs/wire.md §Disconnect and resume, specs/tournament.md §Remote
    engines: a client killed in the middle of a game and not back loses it
    on time (termination ``disconnect``); the run waits for the engine again
    and plays on with it once a client connects it."""
    db = tmp_path / "r.db"
    tag = f"arbiter-remote-test-{uuid.uuid4().hex}"
    held = tmp_path / "held.py"
    held.write_text(HELD_ENGINE)
    mark, gate = tmp_path / "mark", tmp_path / "gate"
    token = add_token(db, "bob")
    # the cut game lasts until bob's clock runs out: a short one (test_server.SHORT_ARENA)
    run = _Run("match", "troll", "remote:bob", spec("ra", tag), "--tc", "3+0.1", "--games", "2",
               "--db", db, tag=tag)
    held_spec = (f"cmd='{sys.executable} {held}' name=bob env.TAG={tag} "
                 f"env.MARK={mark} env.GATE={gate}")
    first = run.connect(token, held_spec, tag)
    second = None
    try:
        _wait_for(mark, run)  # its second move: the first game is under way
        first.kill()
        first.wait(PROCESS_TIMEOUT)
        gate.touch()  # the orphaned engine plays on, finds its input closed, ends
        deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
        while not _rows(db, "select * from games"):  # lost on time, stored
            assert run.proc.poll() is None and time.monotonic() < deadline, "".join(run.lines)
            time.sleep(0.1)
        second = run.connect(token, spec("bob", tag), tag)
        status, _, err = run.wait()
    finally:
        gate.touch()
        for client in (first, second):
            if client is not None and client.poll() is None:
                client.kill()
            if client is not None:
                client.communicate(timeout=PROCESS_TIMEOUT)
    assert status == 0, err
    games = _rows(db, "select * from games order by seq")
    assert len(games) == 2, err
    cut = games[0]
    assert cut["termination"] == "disconnect", cut
    assert cut["result"] == ("0-1" if cut["white"] == "bob" else "1-0"), cut
    assert games[1]["termination"] not in (*FAULTS, "disconnect"), games[1]
    assert wait_gone(tag) == []


def test_interrupted_while_waiting(tmp_path: Path) -> None:
    """specs/tournament.md §Remote engines: Ctrl-C during the wait: exit 130,
    nothing made."""
    db = tmp_path / "r.db"
    tag = f"arbiter-remote-test-{uuid.uuid4().hex}"
    add_token(db, "bob")
    run = _Run("match", "troll", "remote:bob", spec("ra", tag), "--db", db, tag=tag)
    run.proc.send_signal(signal.SIGINT)
    status, _, err = run.wait()
    assert status == 130, err
    assert "while waiting for remote engines; nothing was played" in err
    assert _rows(db, "select * from tournaments") == []


# --------------------------------------------------------------------------
# An arena's standings and export
# --------------------------------------------------------------------------


def test_arena_standings_and_export(tmp_path: Path) -> None:
    """specs/wire.md §The server and the client, specs/records.md §9:
    `standings --arena NAME` and `export --arena NAME` select an arena by its name."""
    db = tmp_path / "server.db"
    tag = f"arbiter-remote-test-{uuid.uuid4().hex}"
    alice, bob = add_token(db, "alice"), add_token(db, "bob")
    server = Server(db, tag, arena=f"game=troll tc={TC} name=blitz")
    clients = [connect(server, alice, "ra", tag), connect(server, bob, "rb", tag)]
    try:
        server.wait_games(1)
    finally:
        server.interrupt(clients)
    assert wait_gone(tag) == []
    played = len(server.games())

    table = invoke("standings", "--db", db, "--arena", "blitz", "--json")
    assert table.returncode == 0, table.stderr
    data = json.loads(table.stdout)
    assert data["tournament"]["format"] == "arena" and data["tournament"]["name"] == "blitz"
    assert data["tournament"]["done"] == played
    assert {row["name"] for row in data["engines"]} == {"ra", "rb"}
    text = invoke("standings", "--db", db, "--arena", "blitz")
    # an arena has no schedule: its total is the games it played (it said N/0)
    assert f"tournament 1: blitz (troll, arena) - {played}/{played} games" in text.stdout
    listed = invoke("standings", "--db", db, "--list", "--json")
    assert [(r["name"], r["done"], r["total_games"]) for r in json.loads(listed.stdout)] == \
        [("blitz", played, played)]
    assert f"{played}/{played} games" in invoke("standings", "--db", db, "--list").stdout
    assert CLI_ARENA_FORMAT == ARENA_FORMAT  # one value, two places


    export = invoke("export", "--db", db, "--arena", "blitz", "--format", "jsonl")
    assert export.returncode == 0, export.stderr
    records = [json.loads(line) for line in export.stdout.splitlines()]
    assert len(records) == played and {records[0]["record"]["white"], records[0]["record"]["black"]} == {"ra", "rb"}
    assert invoke("export", "--db", db).stdout.count("[Event \"blitz\"]") == played

    unknown = invoke("export", "--db", db, "--arena", "nope")
    assert unknown.returncode == 2 and "no arena 'nope' (arenas: 'blitz')" in unknown.stderr
    both = invoke("export", "--db", db, "--arena", "blitz", "--tournament", "1")
    assert both.returncode == 2 and "not both" in both.stderr
    unknown = invoke("standings", "--db", db, "--arena", "nope")
    assert unknown.returncode == 2 and "no arena named 'nope'" in unknown.stderr


# --------------------------------------------------------------------------
# A remote engine's clock in the match, in process (specs/wire.md §Clock
# fairness, §Disconnect and resume): the real match, conversation and
# socket transport over trio's in-memory streams, a scripted client on the
# other end, trio's autojump clock (no real time)
# --------------------------------------------------------------------------


async def _wire_pair(resumed: bool = False
                     ) -> tuple[trio.abc.Stream, WireConnection, trio.abc.Stream, WireConnection]:
    """Both ends of a connection after hello and welcome (``resumed``: a reconnect's)."""
    server_end, client_end = trio.testing.memory_stream_pair()
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    server.receive_data(client.send(wire.Hello(wire.WIRE_VERSION, "alice.x", "remote", "Remote 1")))
    assert isinstance(server.next_event(), wire.Hello)
    client.receive_data(server.send(wire.Welcome(wire.WIRE_VERSION, "s", 5000, resumed)))
    assert isinstance(client.next_event(), wire.Welcome)
    return server_end, server, client_end, client


async def _scripted_client(stream: trio.abc.Stream, conn: WireConnection, *, delay: float = 0.0,
                           think: int | None = None, heard: list[str] | None = None) -> None:
    """A remote troll engine: its bestmove (the first legal move) ``delay``
    seconds after each go, reporting ``think`` ms; what it hears in
    ``heard``; heartbeats and syncs answered."""
    position = get_game("troll").position(None, [])
    while data := await stream.receive_some():
        conn.receive_data(data)
        while (event := conn.next_event()) is not NEED_DATA:
            if isinstance(event, wire.Heartbeat | wire.Sync):  # alive, as a real client
                await stream.send_all(conn.send(event))
            if not isinstance(event, wire.Lines):
                continue
            for line in event.lines:
                if heard is not None:
                    heard.append(line)
                word = line.split()[0]
                answer: list[str] = []
                if word == "ugi":
                    answer = ["id name scripted", "ugiok"]
                elif word == "isready":
                    answer = ["readyok"]
                elif word == "position":
                    moves = line.split(" moves ", 1)[1].split() if " moves " in line else []
                    position = get_game("troll").position(None, moves)
                elif word == "go":
                    await trio.sleep(delay)
                    answer = [f"bestmove {position.legal_moves()[0]}"]
                if answer:
                    frames = wire.lines_frames(answer, think if word == "go" else None)
                    await stream.send_all(b"".join(conn.send(frame) for frame in frames))


@asynccontextmanager
async def _remote_engine(nursery: trio.Nursery, **client: Any) -> AsyncIterator[Engine]:
    server_end, server, client_end, client_conn = await _wire_pair()
    transport = SocketTransport(server_end, server)
    nursery.start_soon(transport.run)
    nursery.start_soon(partial(_scripted_client, client_end, client_conn, **client))
    engine = Engine(EngineConfig(cmd="remote:x", name=client.pop("name", "remote")), FAST, transport)
    await engine.handshake()
    yield engine


@pytest.mark.parametrize(("delay", "think", "termination"), [
    (1.04, 990, "max-plies"),  # 50 ms of lag on the last 10 ms: the quota (60 ms) saves it
    (1.07, 0, "time-forfeit"),  # past the deadline and the whole quota: lost on time
])
async def test_the_search_deadline_is_extended_by_the_lag_quota(
        autojump_clock: trio.abc.Clock, delay: float, think: int, termination: str) -> None:
    """specs/wire.md §Clock fairness: a bestmove that arrives after the clock's
    deadline but within what the lag quota can compensate is waited for and
    charged less its lag; the wait is bounded by the quota (at 1+0: 3 gains
    of 20 ms)."""
    async with trio.open_nursery() as nursery:
        async with _remote_engine(nursery, delay=delay, think=think) as white, \
                _remote_engine(nursery) as black:
            record = await play_game("troll", white, black, tc="1+0", maxplies=2)
        nursery.cancel_scope.cancel()
    assert record.termination == termination, record.termination_detail
    if termination == "max-plies":
        assert record.moves[0].time_ms == 990  # 1.04 s measured, 50 ms compensated
    else:
        assert record.result == "0-1" and record.moves == []


#: the game of the resume tests, held at its third ply with Black to move
HELD_POSITION = "position startpos moves b1 a2"


async def _drop_then_resume(nursery: trio.Nursery, transport: SocketTransport,
                            client_end: trio.abc.Stream, away: float, heard: list[str]) -> float:
    """The client drops (its stream closed), stays away ``away`` seconds,
    then a fresh one connects again (a scripted engine hearing into
    ``heard``); the time it was back."""
    await client_end.aclose()
    await trio.testing.wait_all_tasks_blocked()
    assert transport.detached
    await trio.sleep(away)
    server_end, server, new_end, new_conn = await _wire_pair(resumed=True)
    transport.attach(server_end, server)
    nursery.start_soon(partial(_scripted_client, new_end, new_conn, heard=heard))
    return trio.current_time()


@pytest.mark.parametrize("plays_p1", [True, False])
async def test_a_resumed_search_gives_back_the_time_away_on_the_movers_clock_only(
        autojump_clock: trio.abc.Clock, plays_p1: bool) -> None:
    """specs/wire.md §Disconnect and resume: during a drop only the mover's
    clock runs, so the replayed go is the original one with the time away
    taken off the mover's time; the other side's is as it was."""
    server_end, server, client_end, _ = await _wire_pair()
    transport = SocketTransport(server_end, server)
    transport.hold = lambda: True
    transport.seat(plays_p1)
    heard: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        await transport.send(f"uginewgame\n{HELD_POSITION}\n".encode())
        await transport.send(b"go p1time 10000 p2time 8000 p1inc 100 p2inc 100\n")
        went = trio.current_time()
        away = round((await _drop_then_resume(nursery, transport, client_end, 3.0, heard) - went) * 1000)
        lines, _, _ = await transport.receive()  # the bestmove of the replayed search
        nursery.cancel_scope.cancel()
    assert lines[0].startswith("bestmove")
    assert heard[:4] == ["ugi", "uginewgame", "isready", HELD_POSITION]
    mover, other = ("p1time", "p2time") if plays_p1 else ("p2time", "p1time")
    go = heard[4].split()
    original = {"p1time": 10000, "p2time": 8000}
    assert away >= 3000 and int(go[go.index(mover) + 1]) == original[mover] - away
    assert int(go[go.index(other) + 1]) == original[other]


async def test_a_drop_at_the_games_start_is_waited_out_and_the_game_is_played(
        autojump_clock: trio.abc.Clock) -> None:
    """specs/wire.md §Disconnect and resume: a client gone between the new
    game's isready and its readyok, back after a while: the fresh engine is
    told the game and answers the match's isready, which had the patience of
    a fresh start (REMOTE_READY_TIMEOUT), and the game is played."""
    server_end, server, client_end, client_conn = await _wire_pair()
    transport = SocketTransport(server_end, server)
    transport.hold = lambda: True
    timeouts = EngineTimeouts(ready=REMOTE_READY_TIMEOUT)
    heard: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        white = Engine(EngineConfig(cmd="remote:x", name="white"), timeouts, transport)
        handshake = trio.Event()

        async def first_client() -> None:  # answers the handshake, then nothing
            await _answer_handshake(client_end, client_conn)
            handshake.set()

        nursery.start_soon(first_client)
        await white.handshake()
        await handshake.wait()
        async with _remote_engine(nursery) as black:
            await white.start_new_game("troll")
            # away longer than a local engine's ready timeout, but the client is back in time
            await _drop_then_resume(nursery, transport, client_end, 2 * EngineTimeouts.ready, heard)
            await white.wait_ready()
            record = await play_game("troll", white, black, tc="10+0.1", maxplies=4)
        nursery.cancel_scope.cancel()
    assert heard[:4] == ["ugi", "uginewgame", "isready", "isready"]
    assert record.termination == "max-plies", record.termination_detail


async def _answer_handshake(stream: trio.abc.Stream, conn: WireConnection) -> None:
    """A client's engine that answers ugi, then is silent."""
    while True:
        conn.receive_data(await stream.receive_some())
        while (event := conn.next_event()) is not NEED_DATA:
            if isinstance(event, wire.Lines) and "ugi" in event.lines:
                await stream.send_all(conn.send(wire.Lines(["id name first", "ugiok"])))
                return


async def test_a_remote_engine_waited_for_holds_no_start_up_slot(tmp_path: Path) -> None:
    """specs/tournament.md §Remote engines: a remote entrant is waited for
    outside the start-up wave (it costs no CPU here): with one start-up at
    a time, two workers waiting for a remote engine that is not there do
    not keep a third from starting its local engines and playing."""
    tag = f"arbiter-remote-test-{uuid.uuid4().hex}"
    local = [EngineConfig(cmd=f"{sys.executable} -m sample_engines.random", name=name,
                          env={"TAG": tag}) for name in ("la", "lb")]
    config = TournamentConfig(game="troll", engines=[parse_engine_spec("remote:bob"), *local],
                              games=1, tc="depth=1", maxplies=4, concurrency=3)
    assert [(g.white, g.black) for g in config.schedule()][-1] == ("la", "lb")
    local_game = trio.Event()

    class Played(Observer):
        def game_finished(self, game, record, standings):
            if game.players == frozenset(("la", "lb")):
                local_game.set()

    with Store(tmp_path / "r.db") as store:
        tournament_id, _ = open_tournament(store, config)
        player = InProcessPlayer(config, source=RemoteEngines(Registry(), wait=PROCESS_TIMEOUT),
                                 startups=1)
        tournament = Coordinator(config, store, tournament_id, observer=Played(), player=player)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(tournament.run)
            with trio.fail_after(PROCESS_TIMEOUT / 2):  # a guard against a hang only
                await local_game.wait()
            nursery.cancel_scope.cancel()  # bob never comes
        assert store.count_games(tournament_id) == 1
    assert processes_with(tag) == []


async def _gone_at_isready(stream: trio.abc.Stream, conn: WireConnection) -> None:
    """A client whose engine answers ugi, then drops at the first isready."""
    await _answer_handshake(stream, conn)
    while True:
        conn.receive_data(await stream.receive_some())
        while (event := conn.next_event()) is not NEED_DATA:
            if isinstance(event, wire.Lines) and "isready" in event.lines:
                await stream.aclose()
                return


async def test_an_arena_game_not_played_for_a_client_gone_releases_that_engine_only(
        tmp_path: Path, autojump_clock: trio.abc.Clock) -> None:
    """specs/wire.md §The server and the client: a game that cannot start
    because one client dropped and stays away (no readyok within
    REMOTE_READY_TIMEOUT) releases that engine only; the other stays for the
    next pairing (both were released: a detached engine looks healthy)."""
    timeouts = EngineTimeouts(ready=REMOTE_READY_TIMEOUT)
    with Store(tmp_path / "a.db") as store:
        arena_spec = ArenaSpec("troll", "10+0.1")
        arena = Arena(arena_spec, Registry(), store, open_arena(store, arena_spec), log=lambda _: None)
        async with trio.open_nursery() as nursery:
            remotes = []
            for name, client in (("gone", _gone_at_isready), ("there", None)):
                server_end, server, client_end, client_conn = await _wire_pair()
                transport = SocketTransport(server_end, server)
                engine = Engine(EngineConfig(cmd="remote", name=name), timeouts, transport)
                remote = Remote("alice", name, engine, transport, busy=True)
                transport.hold = partial(lambda r: r.busy and not r.done.is_set(), remote)
                nursery.start_soon(transport.run)
                nursery.start_soon(client or _scripted_client, client_end, client_conn)
                await engine.handshake()
                remotes.append(remote)
            gone, there = remotes
            assert await arena._play(gone, there) is None
            assert gone.done.is_set() and not there.done.is_set()
            nursery.cancel_scope.cancel()
