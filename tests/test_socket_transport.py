"""The socket transport (arbiter/engine/socket_transport.py) in process: the
real Engine conversation over wire frames on trio's in-memory streams, with
a scripted remote client on the other end."""

from __future__ import annotations

import trio
import trio.testing
from bad_engines.harness import FAST

from arbiter.engine.config import EngineConfig
from arbiter.engine.conversation import Engine
from arbiter.engine.socket_transport import SocketTransport
from protocol import wire
from protocol.search import SearchLimits
from protocol.wire import CLIENT, NEED_DATA, SERVER, WireConnection

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
        nursery.start_soon(scripted_client, client_end, client, heard)
        with trio.fail_after(10):  # a guard against a hang, not a measure
            await engine.handshake()
            assert (engine.id_name, engine.author) == ("remote", "tests")
            await engine.new_game("troll")
            await engine.go(b"position startpos\n", SearchLimits(time_ms=1000, opponent_time_ms=1000))
            reply = await engine.wait_bestmove()
            assert reply.move == "d5" and reply.info["score_cp"] == 3
            assert transport.think == 7 and engine.healthy
            await transport.send(engine.goodbye() or b"")
            received = await transport.receive()
    assert received[2] is not None and not transport.alive
    assert await transport.end_detail() == "exited (0)"
    assert heard[0] == "ugi" and "position startpos" in heard and heard[-1] == "quit"


async def test_a_peer_that_breaks_the_wire_ends_the_stream_with_the_reason_and_hears_it():
    server_end, server, client_end, client = await open_pair()
    transport = SocketTransport(server_end, server)
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
    await client_end.send_all((wire.MAX_FRAME_BYTES + 1).to_bytes(4, "big"))
    received = await transport.receive()
    assert received[2] is not None and "over the limit" in await transport.end_detail()
    server_end, server, client_end, _ = await open_pair()
    transport = SocketTransport(server_end, server)
    await client_end.aclose()
    received = await transport.receive()
    assert received[2] is not None and "without a close" in await transport.end_detail()
