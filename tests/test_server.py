"""The match server end to end (``specs/wire.md``): ``arbiter serve`` and
``arbiter connect`` as real processes over real sockets on 127.0.0.1, and
the checks of the command line that need no process (in this process)."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import struct
import subprocess
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
import trio
import trio.lowlevel
import trio.testing
from bad_engines.harness import FAST
from bad_engines.harness import HERE as BAD_ENGINES_DIR
from cli import PROCESS_TIMEOUT, ListeningLog, arbiter, invoke, start
from server_peers import (
    ARENA,
    FAULTS,
    PY,
    SHORT_ARENA,
    RawPeers,
    Server,
    add_token,
    connect,
    frames_until_eof,
    spec,
    wait_gone,
)

from arbiter.server.arena import ArenaSpec, ArenaSpecError, _pair
from arbiter.server.gate import SourceGate, Throttled
from arbiter.server.listener import Listener, Registry, Remote, listen_problem
from arbiter.tokens import TokenStore
from protocol import wire
from protocol.wire import CLIENT, NEED_DATA, WireConnection


def test_arena_games_over_the_wire(tmp_path: Path) -> None:
    """Two connected engines play arena games to the end, stored; a wrong
    token, garbage bytes and an oversized frame are refused, and a client that
    floods and one that never answers are connected, while the games go on;
    Ctrl-C stops the server (130), the clients end, nothing is left.  (Their
    close at the handshake timeout, with the reason: :func:`test_idle_clients_leave`.)"""
    db = tmp_path / "server.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    alice, bob, carol, dave = (add_token(db, name) for name in ("alice", "bob", "carol", "dave"))
    server = Server(db, tag)
    clients = [connect(server, alice, "ra", tag), connect(server, bob, "rb", tag)]
    # a client that floods and one that stops reading, each on its own connection, from
    # the start: the games below are played while they are connected
    peers = RawPeers(server.port, carol, dave)
    try:
        first = server.wait_games(1)[0]
        assert {first["white"], first["black"]} == {"ra", "rb"}
        assert first["result"] in ("1-0", "0-1", "1/2-1/2") and first["plies"] > 0
        assert first["format"] == "arena"

        refused = arbiter("connect", f"127.0.0.1:{server.port}", "--token", "bob.wrong",
                          "-e", spec("rc", tag), env={"TAG": tag})
        assert refused.returncode == 1
        assert "refused: unknown or revoked token" in refused.stderr

        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(b"\x00\x00\x00\x05hello")  # a length, then no msgpack
            answer = frames_until_eof(sock)
        assert b"close" in answer and b"not one msgpack value" in answer
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(struct.pack(">I", 1 << 30))  # over the frame limit
            assert b"over the limit" in frames_until_eof(sock)

        played = len(server.games())
        games = server.wait_games(played + 2)  # the arena goes on, both colours
        assert {(g["white"], g["black"]) for g in games} == {("ra", "rb"), ("rb", "ra")}
        assert all(g["termination"] not in FAULTS for g in games[played:])
        assert all(client.poll() is None for client in clients)
    finally:
        peers.close()
        for status, err in server.interrupt(clients):
            assert status == 0, err
            assert "the server closed the connection" in err, err
    assert wait_gone(tag) == []
    with sqlite3.connect(db) as conn:
        assert conn.execute("select status from tournaments").fetchall() == [("interrupted",)]
        stored = conn.execute("select count(*) from games").fetchone()[0]
    standings = invoke("standings", "--db", db, "--arena", "troll arena", "--json")
    assert standings.returncode == 0, standings.stderr
    table = json.loads(standings.stdout)
    assert table["tournament"]["format"] == "arena" and table["tournament"]["done"] == stored
    exported = invoke("export", "--db", db, "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert len(records) == stored and {r["record"]["white"] for r in records} == {"ra", "rb"}
    missing = invoke("standings", "--db", db, "--arena", "nope")
    assert missing.returncode == 2 and "no arena named 'nope'" in missing.stderr


def test_arena_over_tls(tmp_path: Path) -> None:
    """specs/wire.md §Transport: with --tls-cert/--tls-key the arena plays
    over TLS (clients checking the server against --tls-ca); a plain-TCP
    client and one trusting another authority do not get in."""
    trustme = pytest.importorskip("trustme")
    ca, other = trustme.CA(), trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert_file, key_file, ca_file, other_file = (tmp_path / n for n in
                                                ("cert.pem", "key.pem", "ca.pem", "other.pem"))
    cert.private_key_and_cert_chain_pem.write_to_path(str(cert_file))
    cert.private_key_pem.write_to_path(str(key_file))
    ca.cert_pem.write_to_path(str(ca_file))
    other.cert_pem.write_to_path(str(other_file))
    db = tmp_path / "server.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    alice, bob = add_token(db, "alice"), add_token(db, "bob")
    server = Server(db, tag, ARENA, "--tls-cert", cert_file, "--tls-key", key_file)
    clients = [connect(server, alice, "ra", tag, "--tls-ca", ca_file),
               connect(server, bob, "rb", tag, "--tls-ca", ca_file)]
    try:
        first = server.wait_games(1)[0]
        assert {first["white"], first["black"]} == {"ra", "rb"} and first["plies"] > 0
        untrusted = arbiter("connect", f"127.0.0.1:{server.port}", "--token", bob, "-e",
                            spec("rc", tag), "--tls-ca", other_file, env={"TAG": tag})
        assert untrusted.returncode == 1 and "TLS with 127.0.0.1" in untrusted.stderr
        plain = arbiter("connect", f"127.0.0.1:{server.port}", "--token", bob, "-e",
                        spec("rd", tag), env={"TAG": tag})
        assert plain.returncode == 1, plain.stderr
        server.wait_games(len(server.games()) + 1)  # the arena went on
    finally:
        for status, err in server.interrupt(clients):
            assert status == 0, err
    assert "TLS: every connection is encrypted" in "".join(server.lines)
    assert wait_gone(tag) == []


def test_tls_options_are_checked(tmp_path: Path) -> None:
    run = invoke("serve", "--db", tmp_path / "x.db", "--tls-cert", tmp_path / "none.pem")
    assert run.returncode == 2 and "--tls-cert and --tls-key go together" in run.stderr
    run = invoke("serve", "--db", tmp_path / "x.db", "--tls-cert", tmp_path / "none.pem",
                 "--tls-key", tmp_path / "none.pem")
    assert run.returncode == 2 and "none.pem" in run.stderr
    run = invoke("connect", "127.0.0.1:1", "--token", "a.b", "-e", "cmd=x",
                 "--tls-ca", tmp_path / "none.pem")
    assert run.returncode == 2 and "--tls-ca" in run.stderr


def test_serve_refuses_off_loopback_without_tls(tmp_path: Path) -> None:
    run = invoke("serve", "--db", tmp_path / "x.db", "--listen", "0.0.0.0:0")
    assert run.returncode == 2
    assert "not a loopback address" in run.stderr and "--insecure" in run.stderr
    assert listen_problem("0.0.0.0", tls=False, insecure=True) is None
    assert listen_problem("0.0.0.0", tls=True, insecure=False) is None
    assert listen_problem("192.168.1.2", tls=False, insecure=False) is not None
    assert listen_problem("::1", tls=False, insecure=False) is None
    assert listen_problem("localhost", tls=False, insecure=False) is None


@pytest.mark.parametrize("text", ["tc=10+0.1", "game=nogame", "game=troll tc=x",
                                  "game=troll colour=red", "game=troll maxplies=many"])
def test_bad_arena_is_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(ArenaSpecError):
        ArenaSpec.parse(text)
    run = invoke("serve", "--db", tmp_path / "x.db", "--arena", text)
    assert run.returncode == 2 and "arena" in run.stderr


def test_arena_spec() -> None:
    arena = ArenaSpec.parse("game=troll tc=10+0.1 maxplies=300 name=blitz")
    assert (arena.game, arena.tc, arena.maxplies, arena.title) == ("troll", "10+0.1", 300, "blitz")
    assert ArenaSpec.parse("game=atoll").title == "atoll arena"


def test_connect_without_server(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nobody listens on (bound, never listening)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        run = invoke("connect", f"127.0.0.1:{port}", "--token", "a.b", "-e",
                     f"cmd='{PY} -m sample_engines.random' name=rand")
    assert run.returncode == 1 and "cannot connect" in run.stderr


def test_idle_clients_leave(tmp_path: Path) -> None:
    """Idle engines (no arena): a client stopped with Ctrl-C exits 130 and
    one killed with SIGKILL are both seen gone by the server (its idle
    ping), and neither leaves an engine behind; a client that sends its hello
    and then only floods, and one that sends its hello and nothing more, are
    closed at the engine handshake timeout with the reason; SIGTERM stops the
    server (130)."""
    db = tmp_path / "server.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    alice, bob, carol, dave = (add_token(db, name) for name in ("alice", "bob", "carol", "dave"))
    server = Server(db, tag, arena=None)
    peers = RawPeers(server.port, carol, dave)
    try:
        stopped, killed = connect(server, alice, "ra", tag), connect(server, bob, "rb", tag)
        server.wait_log("ra (alice) connected", "rb (bob) connected")
        stopped.send_signal(signal.SIGINT)
        assert stopped.wait(PROCESS_TIMEOUT) == 130
        killed.kill()
        killed.wait(PROCESS_TIMEOUT)
        server.wait_log("ra (alice) disconnected", "rb (bob) disconnected")
        server.wait_log("fl (carol): ", "nr (dave): ")
        closed = [line for line in server.lines if "fl (carol): " in line or "nr (dave): " in line]
        assert len(closed) == 2 and all("no ugiok within" in line for line in closed), closed
    finally:
        peers.close()
        server.proc.send_signal(signal.SIGTERM)  # stops it like Ctrl-C
        assert server.proc.wait(PROCESS_TIMEOUT) == 130, "".join(server.lines)
    assert wait_gone(tag) == []


def test_arena_pairs_every_engine(tmp_path: Path) -> None:
    """Three engines: the one left waiting plays next, so every pair meets."""
    db = tmp_path / "server.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    server = Server(db, tag)
    names = ["ra", "rb", "rc"]
    clients = [connect(server, add_token(db, f"t{name}"), name, tag) for name in names]
    try:
        deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
        while len({frozenset((g["white"], g["black"])) for g in server.games()}) < 3:
            assert server.proc.poll() is None, "".join(server.lines)
            assert time.monotonic() < deadline, "".join(server.lines)
            time.sleep(0.1)
    finally:
        server.interrupt(clients)
    assert wait_gone(tag) == []


def test_an_arena_leaves_an_engine_that_does_not_play_its_game(tmp_path: Path) -> None:
    """specs/wire.md §The server and the client: rc's game option lists atoll
    only; the troll arena pairs ra and rb and leaves rc connected, unpaired."""
    db = tmp_path / "server.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    server = Server(db, tag)
    atoll_only = (f"cmd='{PY} {Path(BAD_ENGINES_DIR) / 'instant.py'}' name=rc env.TAG={tag} "
                  "env.BAD_ENGINE_GAMES=atoll")
    clients = [_connect_spec(server, add_token(db, "tc"), atoll_only, tag)]
    server.wait_log("rc (tc) connected")
    clients += [connect(server, add_token(db, f"t{name}"), name, tag) for name in ("ra", "rb")]
    try:
        games = server.wait_games(3)
        assert all({game["white"], game["black"]} == {"ra", "rb"} for game in games)
        assert not any("rc (tc) disconnected" in line for line in server.lines)
    finally:
        server.interrupt(clients)
    assert wait_gone(tag) == []


# --------------------------------------------------------------------------
# The listener in this process: trio's memory streams, a scripted client
# --------------------------------------------------------------------------


def _listener(tmp_path: Path) -> tuple[Listener, dict[str, str]]:
    tokens = TokenStore(tmp_path / "tokens.db")
    secrets = {name: tokens.add(name) for name in ("alice", "bob")}
    tokens.revoke("bob")
    return Listener(tokens, Registry(), timeouts=FAST, log=lambda text: None), secrets


def _hello(token: str, name: str = "remote", version: int = wire.WIRE_VERSION) -> wire.Hello:
    return wire.Hello(version=version, token=token, name=name, engine="Remote 1")


async def _next_frame(stream: trio.abc.Stream, conn: WireConnection) -> wire.Frame | None:
    """The next frame from the server; None when it closed the stream."""
    while (event := conn.next_event()) is NEED_DATA:
        data = await stream.receive_some()
        if not data:
            return None
        conn.receive_data(data)
    assert isinstance(event, wire.Frame)
    return event


async def _answer(listener: Listener, hello: wire.Hello | None) -> wire.Frame | None:
    """What the listener answers ``hello`` (None: send nothing), on a connection
    it then ends."""
    server_end, client_end = trio.testing.memory_stream_pair()
    conn = WireConnection(CLIENT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(listener.handle, server_end)
        if hello is not None:
            await client_end.send_all(conn.send(hello))
        answer = await _next_frame(client_end, conn)
        assert await _next_frame(client_end, conn) is None  # and the server closed
    return answer


@pytest.mark.parametrize(("token", "name", "version", "reason"), [
    ("alice.wrong", "remote", 1, "unknown or revoked token"),
    ("nobody.x", "remote", 1, "unknown or revoked token"),
    ("bob", "remote", 1, "unknown or revoked token"),  # revoked (the secret does not matter)
    ("alice", "remote", 2, "wire version 2 is not supported"),
    ("alice", "bad name!", 1, "engine name"),
])
async def test_refused_hellos(tmp_path: Path, token: str, name: str, version: int,
                              reason: str) -> None:
    listener, secrets = _listener(tmp_path)
    answer = await _answer(listener, _hello(secrets.get(token, token), name, version))
    assert isinstance(answer, wire.Refusal) and reason in answer.reason
    assert listener.connections == 0 and len(listener.registry) == 0


async def test_no_hello_in_time(tmp_path: Path, autojump_clock: trio.abc.Clock) -> None:
    listener, _ = _listener(tmp_path)
    started = trio.current_time()
    answer = await _answer(listener, None)
    assert answer == wire.Close("no hello in time")
    assert trio.current_time() - started == pytest.approx(wire.HANDSHAKE_TIMEOUT)


async def test_repeated_failures_are_slowed_down(tmp_path: Path,
                                                 autojump_clock: trio.abc.Clock) -> None:
    listener, _ = _listener(tmp_path)
    for _ in range(wire.AUTH_FAILURES_FREE):
        started = trio.current_time()
        await _answer(listener, _hello("alice.wrong"))
        assert trio.current_time() == started  # (the virtual clock: no wait)
    started = trio.current_time()
    await _answer(listener, _hello("alice.wrong"))
    assert trio.current_time() - started == pytest.approx(wire.AUTH_FAILURE_DELAY)


async def test_limits_per_token_and_name(tmp_path: Path) -> None:
    listener, secrets = _listener(tmp_path)
    transport = SimpleNamespace(detached=False)  # only counted: no connection behind them
    taken = [Remote("alice", f"e{i}", None, transport)  # type: ignore[arg-type]
             for i in range(wire.MAX_CONNECTIONS_PER_TOKEN)]
    listener.registry.by_token["alice"] = taken
    answer = await _answer(listener, _hello(secrets["alice"], "other"))
    assert isinstance(answer, wire.Refusal) and "connections already" in answer.reason
    listener.registry.by_token["alice"] = taken[:1]
    answer = await _answer(listener, _hello(secrets["alice"], "e0"))
    assert isinstance(answer, wire.Refusal) and "'e0' is connected already" in answer.reason


async def test_a_slow_token_check_does_not_hold_the_loop(tmp_path: Path) -> None:
    """specs/wire.md §Authentication: tokens are checked in worker threads,
    off the loop that times the engines.  A hello whose token takes long to
    check (its row asks a million derivations) is taken first; a hello with
    a valid token, sent after it, is welcomed before it is answered."""
    listener, secrets = _listener(tmp_path)
    with sqlite3.connect(tmp_path / "tokens.db") as db:
        db.execute("update tokens set iterations = 1000000 where name = 'bob'")
    answered: list[tuple[str, type]] = []
    both = trio.Event()

    async def hello(nursery: trio.Nursery, token: str, label: str) -> None:
        server_end, client_end = trio.testing.memory_stream_pair()
        conn = WireConnection(CLIENT)
        nursery.start_soon(listener.handle, server_end)
        await client_end.send_all(conn.send(_hello(token, label)))
        answered.append((label, type(await _next_frame(client_end, conn))))
        if len(answered) == 2:
            both.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(hello, nursery, "bob.wrong", "slow")
        await trio.testing.wait_all_tasks_blocked()  # its check is under way (or, on the loop, done)
        nursery.start_soon(hello, nursery, secrets["alice"], "quick")
        await both.wait()
        nursery.cancel_scope.cancel()
    assert answered == [("quick", wire.Welcome), ("slow", wire.Refusal)]


async def test_token_checks_of_one_source_are_paced_across_its_connections(
        autojump_clock: trio.abc.Clock) -> None:
    """specs/wire.md §Authentication: twenty failing hellos of one source at
    once: AUTH_FAILURES_FREE checks at once (a check in flight counts as a possible
    failure), then one per AUTH_FAILURE_DELAY, as long as the turn is within
    AUTH_WAIT_LIMIT; the rest refused unchecked.  Another source is not slowed."""
    gate = SourceGate()
    began = trio.current_time()
    started: list[float] = []
    throttled: list[str] = []

    async def guess(source: str) -> None:
        try:
            async with gate.check(source):
                started.append(trio.current_time() - began)
                await trio.sleep(0.004)  # a derivation's time
            gate.failed(source)  # refused: told in the step the check ends
        except Throttled as exc:
            throttled.append(str(exc))

    async with trio.open_nursery() as nursery:
        for _ in range(20):
            nursery.start_soon(guess, "203.0.113.7")
    free = wire.AUTH_FAILURES_FREE
    queued = int(wire.AUTH_WAIT_LIMIT // wire.AUTH_FAILURE_DELAY)
    assert started[:free] == [0.0] * free
    assert started[free:] == pytest.approx(  # start to start: one try per delay
        [(k + 1) * wire.AUTH_FAILURE_DELAY for k in range(queued)])
    assert len(throttled) == 20 - free - queued
    at = trio.current_time()
    async with gate.check("198.51.100.1"):
        assert trio.current_time() == at  # another source: at once


async def test_a_connection_over_its_sources_limit_is_answered_late(
        tmp_path: Path, autojump_clock: trio.abc.Clock) -> None:
    """specs/wire.md §Limits (MAX_UNANSWERED_PER_SOURCE, TURN_AWAY_DELAY): with
    its source's unanswered connections all held (silent), one more is closed
    with ``source-full``, after TURN_AWAY_DELAY: a source that opens
    connections as fast as they are answered gets one answer per connection
    per delay."""
    listener, _ = _listener(tmp_path)
    async with trio.open_nursery() as nursery:
        ends = []
        for _ in range(wire.MAX_UNANSWERED_PER_SOURCE):  # (in memory, every peer is one source)
            server_end, client_end = trio.testing.memory_stream_pair()
            ends.append(client_end)
            nursery.start_soon(listener.handle, server_end)
        await trio.testing.wait_all_tasks_blocked()
        started = trio.current_time()
        answer = await _answer(listener, None)
        waited = trio.current_time() - started
        nursery.cancel_scope.cancel()
    assert isinstance(answer, wire.Close) and wire.reason_of(answer.reason) is wire.SOURCE_FULL
    assert waited == pytest.approx(wire.TURN_AWAY_DELAY)


async def test_an_arena_never_pairs_an_engine_with_itself() -> None:
    """specs/wire.md §The server and the client: two connections under one
    name are one engine: never paired together; with a third engine, the
    longest waiting plays it."""
    transport = SimpleNamespace(detached=False)  # only paired: no connection behind them
    first, twin, other = (Remote(token, name, None, transport)  # type: ignore[arg-type]
                          for token, name in (("alice", "ra"), ("alice", "ra"), ("bob", "rb")))
    assert _pair([first, twin]) is None
    assert _pair([first, twin, other]) == (first, other)
    assert _pair([other, first, twin]) == (other, first)


async def test_accepted_engine_is_registered_then_released(tmp_path: Path) -> None:
    listener, secrets = _listener(tmp_path)
    server_end, client_end = trio.testing.memory_stream_pair()
    conn = WireConnection(CLIENT)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(listener.handle, server_end)
        await client_end.send_all(conn.send(_hello(secrets["alice"])))
        welcome = await _next_frame(client_end, conn)
        assert isinstance(welcome, wire.Welcome) and not welcome.resumed
        assert await _next_frame(client_end, conn) == wire.Lines(["ugi"])
        await client_end.send_all(b"".join(conn.send(frame) for frame in wire.lines_frames(
            ["id name Remote 1", "ugiok"])))
        while not listener.registry.idle():
            await trio.lowlevel.checkpoint()
        (remote,) = listener.registry.idle()
        assert (remote.token, remote.name, remote.engine.id_name) == ("alice", "remote", "Remote 1")
        remote.release()
        closing = await _next_frame(client_end, conn)
        assert isinstance(closing, wire.Close)
        assert await _next_frame(client_end, conn) is None
    assert len(listener.registry) == 0 and listener.connections == 0


def test_client_killed_mid_arena(tmp_path: Path) -> None:
    """A client killed with SIGKILL while its engine plays: a game cut by it
    is lost by that engine, the server drops it and pairs the next one."""
    db = tmp_path / "server.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    server = Server(db, tag, SHORT_ARENA)
    ra = connect(server, add_token(db, "alice"), "ra", tag)
    rb = connect(server, add_token(db, "bob"), "rb", tag)
    rc: subprocess.Popen[str] | None = None
    try:
        played = len(server.wait_games(1))
        rb.kill()
        rb.wait(PROCESS_TIMEOUT)
        server.wait_log("rb (bob) disconnected")
        rc = connect(server, add_token(db, "carol"), "rc", tag)
        games = server.wait_games(len(server.games()) + 1)
        assert "rc" in {games[-1]["white"], games[-1]["black"]}
        for game in games[played:]:
            if "rb" in (game["white"], game["black"]) and game["termination"] in FAULTS:
                assert game["result"] == ("0-1" if game["white"] == "rb" else "1-0"), game
    finally:
        server.interrupt((ra, rc))
    assert wait_gone(tag) == []


# --------------------------------------------------------------------------
# Disconnect and resume (specs/wire.md §Disconnect and resume)
# --------------------------------------------------------------------------

#: an engine that, in its second move, marks the file ``MARK`` and waits for
#: the file ``GATE``: it holds its game in the middle for as long as a test
#: needs (to kill its client there), without any timing guess
HELD_ENGINE = '''
import os, time
from arbiter.sdk import Engine, run

class Held(Engine):
    name = "Held"
    author = "the arbiter tests"
    played = 0

    def choose_move(self, position, limits):
        self.played += 1
        if self.played == 2:
            open(os.environ["MARK"], "w").close()
            while not os.path.exists(os.environ["GATE"]):
                time.sleep(0.01)
        return self.rng.choice(position.legal_moves())

run(Held)
'''




def held_spec(name: str, tag: str, tmp_path: Path, gate: Path) -> str:
    """The held engine (written to ``tmp_path``), marking ``tmp_path/mark``
    and waiting for ``gate`` in its second move."""
    engine = tmp_path / "held.py"
    engine.write_text(HELD_ENGINE)
    return (f"cmd='{PY} {engine}' name={name} env.TAG={tag} env.MARK={tmp_path / 'mark'} "
            f"env.GATE={gate}")


def _connect_spec(server: Server, token: str, engine: str, tag: str) -> subprocess.Popen[str]:
    return start("connect", f"127.0.0.1:{server.port}", "--token", token, "-e", engine,
                 env={"TAG": tag})


def _kill_mid_game(tmp_path: Path, arena: str, tag: str) -> tuple[Server, list, str]:
    """An arena game of ra against rb held in its middle by rb (at its
    second move), then rb's client killed with SIGKILL."""
    db = tmp_path / "server.db"
    bob = add_token(db, "bob")
    server = Server(db, tag, arena)
    ra = connect(server, add_token(db, "alice"), "ra", tag)
    rb = _connect_spec(server, bob, held_spec("rb", tag, tmp_path, tmp_path / "gate"), tag)
    deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
    while not (tmp_path / "mark").exists():  # the game is under way; rb cannot finish it
        assert server.proc.poll() is None and time.monotonic() < deadline, "".join(server.lines)
        time.sleep(0.05)
    rb.kill()
    rb.wait(PROCESS_TIMEOUT)
    (tmp_path / "gate").touch()  # the orphaned engine plays on, finds its input closed, ends
    return server, [ra], bob


def test_a_client_killed_mid_game_comes_back_and_the_game_goes_on(tmp_path: Path) -> None:
    """Killed with SIGKILL mid-game, then restarted with the same token and
    name: the server gives the game back (position, clock, the go) and it
    is played to its end; its remote plies carry the lag fields."""
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    server, clients, bob = _kill_mid_game(tmp_path, "game=troll tc=120+1", tag)
    try:
        clients.append(_connect_spec(server, bob, held_spec("rb", tag, tmp_path, tmp_path / "gate"),
                                     tag))
        server.wait_log("rb (bob) reconnected")
        first = server.wait_games(1)[0]
        assert {first["white"], first["black"]} == {"ra", "rb"}
        assert first["termination"] not in ("disconnect", "time-forfeit", "crash"), first
        assert first["plies"] > 6
        moves = json.loads(first["move_data"])
        assert all("comp_ms" in ply and "rtt_ms" in ply for ply in moves)
        assert all(ply["comp_ms"] >= 0 for ply in moves)
    finally:
        for _, err in server.interrupt(clients):
            assert "the server closed the connection" in err, err
    assert wait_gone(tag) == []


def test_a_client_killed_mid_game_that_stays_away_loses_by_disconnect(tmp_path: Path) -> None:
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    server, clients, _ = _kill_mid_game(tmp_path, SHORT_ARENA, tag)
    try:
        first = server.wait_games(1)[0]
        assert first["termination"] == "disconnect", first
        assert first["result"] == ("0-1" if first["white"] == "rb" else "1-0")
        assert "rb was disconnected" in first["detail"]
    finally:
        server.interrupt(clients)
    assert wait_gone(tag) == []


# --------------------------------------------------------------------------
# Remote participants of a tournament (specs/wire.md §Remote participants)
# --------------------------------------------------------------------------


def test_a_remote_engine_plays_a_tournament_beside_a_local_one(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    bob = add_token(db, "bob")
    run = start("tournament", "-g", "troll", "-e", spec("local", tag), "-e", "remote:rb",
                "--listen", "127.0.0.1:0", "--wait-engines", "120", "--games", "2",
                "--tc", "20+0.2", "--db", db, "--plain", env={"TAG": tag})
    log = ListeningLog(run)
    client = start("connect", f"127.0.0.1:{log.port()}", "--token", bob, "-e", spec("rb", tag),
                   env={"TAG": tag})
    run.communicate(timeout=PROCESS_TIMEOUT)
    assert run.returncode == 0, log.join()
    _, client_err = client.communicate(timeout=PROCESS_TIMEOUT)
    assert client.returncode == 0, client_err
    with sqlite3.connect(db) as conn:
        games = conn.execute("select white, black, move_data from games").fetchall()
    assert sorted((w, b) for w, b, _ in games) == [("local", "rb"), ("rb", "local")]
    for white, _, move_data in games:  # the remote plies carry their lag, the local ones not
        remote = "white" if white == "rb" else "black"
        for ply in json.loads(move_data):
            assert ("comp_ms" in ply) == (ply["color"] == remote), ply
    assert wait_gone(tag) == []


def test_remote_engines_are_waited_for_within_a_bound(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    run = invoke("match", "troll", f"cmd='{PY} -m sample_engines.random' name=la", "remote:rb",
                 "--listen", "127.0.0.1:0", "--wait-engines", "0.2", "--db", db)
    assert run.returncode == 1, run.stderr
    assert "--wait-engines 0.2: not connected in time: remote:rb" in run.stderr
    run = invoke("match", "troll", f"cmd='{PY} -m sample_engines.random'", "remote:rb", "--db", db)
    assert run.returncode == 2 and "remote:rb needs --listen" in run.stderr


def test_connect_reconnects_when_the_server_comes_back(tmp_path: Path) -> None:
    """specs/wire.md §Disconnect and resume: a server killed with SIGKILL and
    started again on the same port: the clients reconnect by themselves
    (backoff), with fresh engines, and the arena plays them."""
    db = tmp_path / "server.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    alice, bob = add_token(db, "alice"), add_token(db, "bob")
    first = Server(db, tag, None)
    clients = [connect(first, alice, "ra", tag), connect(first, bob, "rb", tag)]
    second: Server | None = None
    try:
        first.wait_log("ra (alice) connected", "rb (bob) connected")
        first.proc.kill()
        first.proc.wait(PROCESS_TIMEOUT)
        # the same port (a later --listen wins over the helper's port 0)
        second = Server(db, tag, ARENA, "--listen", f"127.0.0.1:{first.port}")
        second.wait_log("ra (alice) connected", "rb (bob) connected")
        assert {g["white"] for g in second.wait_games(1)} <= {"ra", "rb"}
    finally:
        if second is not None:
            second.proc.send_signal(signal.SIGINT)
            assert second.proc.wait(PROCESS_TIMEOUT) == 130, "".join(second.lines)
        for client in clients:
            _, err = client.communicate(timeout=PROCESS_TIMEOUT)
            assert "reconnecting" in err, err
    assert wait_gone(tag) == []
