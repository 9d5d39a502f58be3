"""The socket transport (arbiter/engine/socket_transport.py) in process: the
real Engine conversation over wire frames on trio's in-memory streams, with
a scripted remote client on the other end."""

from __future__ import annotations

import os

import pytest
import trio
import trio.testing
from bad_engines.harness import FAST

from arbiter.engine.config import EngineConfig
from arbiter.engine.conversation import Engine
from arbiter.engine.socket_transport import SEND_STALL_TIMEOUT, SocketTransport
from arbiter.engine.transport import End, TransportClosed
from protocol import wire
from protocol.search import SearchLimits
from protocol.wire import CLIENT, FRAME_BURST, MAX_FRAMES_PER_SECOND, NEED_DATA, SERVER, WireConnection

HELLO = wire.Hello(version=wire.WIRE_VERSION, token="alice.x", name="remote", engine="Remote 1")

#: what the scripted engine answers to each command word
ANSWERS = {"ugi": ["id name remote", "id author tests", "ugiok"], "isready": ["readyok"],
           "go": ["info depth 1 score cp 3 pv d5", "bestmove d5"]}


async def open_pair() -> tuple[trio.abc.Stream, WireConnection, trio.abc.Stream, WireConnection]:
    """Both ends of a connection after hello and welcome."""
    server_end, client_end = trio.testing.memory_stream_pair()
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    await client_end.send_all(client.send(HELLO))
    server.receive_data(await server_end.receive_some())
    assert server.next_event() == HELLO
    await server_end.send_all(server.send(wire.Welcome(version=1, session="s", heartbeat=5000)))
    client.receive_data(await client_end.receive_some())
    assert isinstance(client.next_event(), wire.Welcome)
    return server_end, server, client_end, client


async def scripted_client(stream: trio.abc.Stream, conn: WireConnection, heard: list[str]) -> None:
    """A remote engine: answers by ANSWERS (a heartbeat first, as a client
    may), reports a think time with its bestmove, and ends on quit."""
    await stream.send_all(conn.send(wire.Heartbeat()))
    while True:
        data = await stream.receive_some()
        conn.receive_data(data)
        while (event := conn.next_event()) is not NEED_DATA:
            assert isinstance(event, wire.Lines)
            for line in event.lines:
                heard.append(line)
                if line == "quit":
                    await stream.send_all(conn.send(wire.Eof("closed", "exited (0)")))
                    return
                answer = ANSWERS.get(line.split()[0])
                if answer:
                    think = 7 if line.startswith("go") else None
                    out = b"".join(conn.send(frame) for frame in wire.lines_frames(answer, think))
                    await stream.send_all(out)


async def test_the_engine_conversation_runs_unchanged_over_wire_frames():
    server_end, server, client_end, client = await open_pair()
    heard: list[str] = []
    transport = SocketTransport(server_end, server)
    engine = Engine(EngineConfig(cmd="remote:alice"), FAST, transport)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        nursery.start_soon(scripted_client, client_end, client, heard)
        with trio.fail_after(10):  # a guard against a hang, not a measure
            await engine.handshake()
            assert (engine.id_name, engine.author) == ("remote", "tests")
            await engine.new_game("troll")
            await engine.go(b"position startpos\n", SearchLimits(time_ms=1000, opponent_time_ms=1000))
            reply = await engine.wait_bestmove()
            assert reply.move == "d5" and str(reply.info.score) == "cp 3"
            assert transport.think == 7 and engine.healthy
            await transport.send(engine.goodbye() or b"")
            received = await transport.receive()
    assert received[2] is not None and not transport.alive
    assert await transport.end_detail() == "exited (0)"
    assert heard[0] == "ugi" and "position startpos" in heard and heard[-1] == "quit"


async def test_a_peer_that_breaks_the_wire_ends_the_stream_with_the_reason_and_hears_it():
    server_end, server, client_end, client = await open_pair()
    transport = SocketTransport(server_end, server)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        await client_end.send_all(b"\x00\x00\x00\x01\xc1")  # not msgpack
        received = await transport.receive()
        assert received[2] is not None and received[0] == []
        assert "broke the wire" in await transport.end_detail() and not transport.alive
        client.receive_data(await client_end.receive_some())
        close = client.next_event()
        assert isinstance(close, wire.Close) and "msgpack" in close.reason


async def test_an_oversized_prefix_ends_it_before_the_body_and_a_dropped_peer_is_an_end():
    server_end, server, client_end, _ = await open_pair()
    transport = SocketTransport(server_end, server)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        await client_end.send_all((wire.MAX_FRAME_BYTES + 1).to_bytes(4, "big"))
        received = await transport.receive()
        assert received[2] is not None and "over the limit" in await transport.end_detail()
    server_end, server, client_end, _ = await open_pair()
    transport = SocketTransport(server_end, server)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        await client_end.aclose()
        received = await transport.receive()
        assert received[2] is not None and "without a close" in await transport.end_detail()


# --------------------------------------------------------------------------
# The transport's limits and its clock fairness (specs/wire.md §Limits,
# §Clock fairness), on the virtual clock: exact figures, no timing guess
# --------------------------------------------------------------------------


async def open_lockstep_pair() -> tuple[trio.abc.Stream, WireConnection, trio.abc.Stream,
                                        WireConnection]:
    """Both ends after hello and welcome, over a stream with no buffer: a
    write waits until the other end reads (a peer that stops reading)."""
    server_end, client_end = trio.testing.lockstep_stream_pair()
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client_end.send_all, client.send(HELLO))
        server.receive_data(await server_end.receive_some())
    assert server.next_event() == HELLO
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server_end.send_all, server.send(
            wire.Welcome(version=1, session="s", heartbeat=5000)))
        client.receive_data(await client_end.receive_some())
    assert isinstance(client.next_event(), wire.Welcome)
    return server_end, server, client_end, client


async def _heartbeats(stream: trio.abc.Stream, conn: WireConnection) -> None:
    """A peer that writes heartbeats (so it is not silent) and reads nothing."""
    while True:
        await stream.send_all(conn.send(wire.Heartbeat()))
        await trio.sleep(wire.HEARTBEAT_INTERVAL)


async def test_a_peer_that_stops_reading_is_closed_and_never_blocks_the_sender(
        autojump_clock: trio.abc.Clock):
    """specs/wire.md §Limits MAX_SEND_BUFFER: sends return at once (the
    writer task waits, not the caller); over the limit the connection ends
    with the reason; the memory held stays under the limit."""
    server_end, server, client_end, client = await open_lockstep_pair()
    transport = SocketTransport(server_end, server)
    line = b"position startpos moves " + b"d5 " * ((wire.MAX_FRAME_BYTES - 100_000) // 3) + b"\n"
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        nursery.start_soon(_heartbeats, client_end, client)
        started = trio.current_time()
        sent = 0
        with pytest.raises(TransportClosed):
            while True:
                await transport.send(line)
                sent += 1
                assert transport._queued_bytes() <= wire.MAX_SEND_BUFFER
        assert trio.current_time() == started  # no send waited on the peer
        assert sent == wire.MAX_SEND_BUFFER // len(line)
        assert "did not read: over" in await transport.end_detail()
        assert (await transport.receive())[2] is End.CLOSED
        nursery.cancel_scope.cancel()


async def test_a_write_stuck_on_a_peer_that_does_not_read_ends_the_connection(
        autojump_clock: trio.abc.Clock):
    server_end, server, client_end, client = await open_lockstep_pair()
    transport = SocketTransport(server_end, server)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        nursery.start_soon(_heartbeats, client_end, client)
        started = trio.current_time()
        await transport.send(b"isready\n")
        assert (await transport.receive())[2] is End.CLOSED
        assert trio.current_time() - started == pytest.approx(SEND_STALL_TIMEOUT)
        assert await transport.end_detail() == f"did not read for {SEND_STALL_TIMEOUT:g} s"
        nursery.cancel_scope.cancel()


async def test_a_flooding_peer_is_read_at_the_frame_rate_and_another_connection_is_not_slowed(
        autojump_clock: trio.abc.Clock):
    """specs/wire.md §Limits MAX_FRAMES_PER_SECOND: frames over the burst wait
    for the bucket (the flooder's own connection); a quiet connection beside
    it is served at once."""
    flood_end, flood_server, flooder, flood_conn = await open_pair()
    quiet_end, quiet_server, quiet, quiet_conn = await open_pair()
    flooded, calm = SocketTransport(flood_end, flood_server), SocketTransport(quiet_end, quiet_server)
    extra = 3000
    async with trio.open_nursery() as nursery:
        nursery.start_soon(flooded.run)
        nursery.start_soon(calm.run)
        started = trio.current_time()
        await flooder.send_all(b"".join(flood_conn.send(wire.Heartbeat())
                                        for _ in range(FRAME_BURST + extra))
                               + flood_conn.send(wire.Lines(["readyok"])))
        await quiet.send_all(quiet_conn.send(wire.Lines(["readyok"])))
        lines, at, _ = await calm.receive()
        assert lines == ["readyok"] and at == started
        lines, at, _ = await flooded.receive()
        assert lines == ["readyok"]
        assert at - started == pytest.approx((extra + 1) / MAX_FRAMES_PER_SECOND, abs=0.01)
        nursery.cancel_scope.cancel()


async def _answer_go(stream: trio.abc.Stream, conn: WireConnection, delay: float,
                     think: int) -> None:
    """A remote engine whose bestmove reaches the server ``delay`` seconds
    after the go, reporting ``think`` ms."""
    while True:
        conn.receive_data(await stream.receive_some())
        while (event := conn.next_event()) is not NEED_DATA:
            if isinstance(event, wire.Lines) and any(x.startswith("go") for x in event.lines):
                await trio.sleep(delay)
                await stream.send_all(conn.send(wire.Lines(["bestmove d5"], think)))


@pytest.mark.parametrize(("think", "comp_ms"), [
    (1000, 0),  # honest, no lag: nothing to compensate
    (0, 210),  # a lie of 0 ms: compensated by the quota it has, 3 gains of 70 ms at 10+0.1
    (900, 100),  # 100 ms of lag, within the quota
])
async def test_the_clock_is_charged_the_measured_time_less_the_bounded_lag_compensation(
        autojump_clock: trio.abc.Clock, think: int, comp_ms: int):
    server_end, server, client_end, client = await open_pair()
    transport = SocketTransport(server_end, server)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        nursery.start_soon(_answer_go, client_end, client, 1.0, think)
        await transport.send(b"uginewgame\n")
        started = trio.current_time()
        await transport.send(b"position startpos\ngo p1time 10000 p2time 10000 p1inc 100 "
                             b"p2inc 100\n")
        lines, credited, _ = await transport.receive()
        assert lines == ["bestmove d5"]
        assert credited - started == pytest.approx(1.0 - comp_ms / 1000)
        assert transport.lag == [(None, comp_ms)]
        nursery.cancel_scope.cancel()


# --------------------------------------------------------------------------
# Over real TCP sockets on 127.0.0.1: receive() reads the socket itself
# (specs/wire.md §Transport); the safety rules hold on that path too
# --------------------------------------------------------------------------


async def open_tcp_pair() -> tuple[trio.SocketStream, WireConnection, trio.SocketStream,
                                   WireConnection]:
    """Both ends of a loopback TCP connection after hello and welcome."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    client_end = await trio.open_tcp_stream("127.0.0.1", port)
    server_end = await listeners[0].accept()
    await listeners[0].aclose()
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    await client_end.send_all(client.send(HELLO))
    while (event := server.next_event()) is NEED_DATA:
        server.receive_data(await server_end.receive_some())
    assert event == HELLO
    await server_end.send_all(server.send(wire.Welcome(version=1, session="s", heartbeat=5000)))
    while (event := client.next_event()) is NEED_DATA:
        client.receive_data(await client_end.receive_some())
    assert isinstance(event, wire.Welcome)
    return server_end, server, client_end, client


class _Passes(trio.abc.Instrument):
    """The scheduler's passes (each waits for I/O once)."""

    def __init__(self) -> None:
        self.count = 0

    def after_io_wait(self, timeout: float) -> None:
        self.count += 1


async def _receive_into(transport: SocketTransport, got: list[tuple[list[str], int]],
                        passes: _Passes | None) -> None:
    """One receive(): its lines and the scheduler pass it returned in (0
    without ``passes``; an end must come with no line)."""
    lines, _, end = await transport.receive()
    assert (end is not None) == (passes is None)
    got.append((lines, passes.count if passes else 0))


async def test_over_tcp_the_conversation_runs_and_a_frame_reaches_receive_in_the_pass_it_arrives():
    """The engine conversation over a real socket; both ends have TCP_NODELAY
    (a small frame is not held back for the previous one's ACK); a frame is
    taken by the waiting receive() in the scheduler pass that finds it
    readable, without a hop through the reader task."""
    server_end, server, client_end, client = await open_tcp_pair()
    for end in (server_end, client_end):
        assert end.getsockopt(trio.socket.IPPROTO_TCP, trio.socket.TCP_NODELAY)
    heard: list[str] = []
    transport = SocketTransport(server_end, server)
    engine = Engine(EngineConfig(cmd="remote:alice"), FAST, transport)
    passes = _Passes()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        with trio.fail_after(10):  # a guard against a hang, not a measure
            talk = trio.open_nursery()
            async with talk as inner:
                inner.start_soon(scripted_client, client_end, client, heard)
                await engine.handshake()
                await engine.new_game("troll")
                await engine.go(b"position startpos\n", SearchLimits(time_ms=1000,
                                                                     opponent_time_ms=1000))
                assert (await engine.wait_bestmove()).move == "d5"
                inner.cancel_scope.cancel()
            trio.lowlevel.add_instrument(passes)
            for _ in range(5):
                got: list[tuple[list[str], int]] = []
                async with trio.open_nursery() as inner:
                    inner.start_soon(_receive_into, transport, got, passes)
                    await trio.testing.wait_all_tasks_blocked()
                    before = passes.count
                    os.write(client_end.socket.fileno(), client.send(wire.Lines(["readyok"])))
                assert got == [(["readyok"], before + 1)]
            trio.lowlevel.remove_instrument(passes)
        nursery.cancel_scope.cancel()
    assert heard[0] == "ugi" and "position startpos" in heard


async def test_over_tcp_a_drop_or_a_broken_wire_while_receive_waits_is_an_end():
    for ending, detail in ((None, "dropped the connection without a close"),
                           (b"\x00\x00\x00\x01\xc1", "broke the wire")):
        server_end, server, client_end, client = await open_tcp_pair()
        transport = SocketTransport(server_end, server)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(transport.run)
            with trio.fail_after(10):
                async with trio.open_nursery() as inner:
                    got: list[tuple[list[str], int]] = []
                    inner.start_soon(_receive_into, transport, got, None)
                    await trio.testing.wait_all_tasks_blocked()
                    if ending is None:
                        await client_end.aclose()
                    else:
                        await client_end.send_all(ending)
                assert got == [([], 0)] and transport._inbox.held_bytes == 0
                assert detail in await transport.end_detail() and not transport.alive
                await transport.wait_finished()
        if ending is not None:
            client.receive_data(await client_end.receive_some())
            close = client.next_event()
            assert isinstance(close, wire.Close) and "msgpack" in close.reason
            await client_end.aclose()


async def test_over_tcp_a_flood_waits_for_the_frame_rate_while_receive_waits():
    """specs/wire.md §Limits MAX_FRAMES_PER_SECOND on the direct path: frames
    over the burst are held until the bucket allows them, in order; the
    line after them comes no sooner than the rate lets it."""
    server_end, server, client_end, client = await open_tcp_pair()
    transport = SocketTransport(server_end, server)
    extra = 200
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)
        with trio.fail_after(10):
            started = trio.current_time()
            flood = b"".join(client.send(wire.Heartbeat()) for _ in range(FRAME_BURST + extra))
            nursery.start_soon(client_end.send_all, flood + client.send(wire.Lines(["one"]))
                               + client.send(wire.Lines(["two"])))
            first = await transport.receive()
            second = await transport.receive()
        assert (first[0], second[0]) == (["one"], ["two"])
        assert first[1] - started >= (extra + 1) / MAX_FRAMES_PER_SECOND - 0.001
        nursery.cancel_scope.cancel()


async def test_over_tcp_frames_read_by_receive_keep_the_connection_alive_past_the_idle_timeout(
        autojump_clock: trio.abc.Clock):
    """specs/wire.md §Disconnect and resume: the peer is silent only when
    nothing arrived for IDLE_TIMEOUT, whoever read what arrived (here a
    waiting receive() reads every heartbeat, over three idle timeouts)."""
    server_end, server, client_end, client = await open_tcp_pair()
    transport = SocketTransport(server_end, server)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(transport.run)

        async def beat() -> None:
            for _ in range(round(3 * wire.IDLE_TIMEOUT / wire.HEARTBEAT_INTERVAL)):
                await trio.sleep(wire.HEARTBEAT_INTERVAL)
                await client_end.send_all(client.send(wire.Heartbeat()))
            await client_end.send_all(client.send(wire.Lines(["readyok"])))

        await trio.testing.wait_all_tasks_blocked()  # the transport serves: receive() reads
        nursery.start_soon(beat)
        lines, _, end = await transport.receive()
        assert (lines, end) == (["readyok"], None) and transport.alive
        assert trio.current_time() >= 3 * wire.IDLE_TIMEOUT
        nursery.cancel_scope.cancel()
