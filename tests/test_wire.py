"""The wire (protocol/wire.py, specs/wire.md), in process: frames, the
decoder's buffer, the connection states of both roles, the limits, the lag
quota and the frame budget.  No sockets."""

from __future__ import annotations

import struct

import msgpack  # type: ignore[import-untyped]  # msgpack ships no type hints
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import wire as w
from protocol.limits import MAX_LINE_BYTES
from protocol.wire import (
    CLIENT,
    NEED_DATA,
    SERVER,
    Close,
    Eof,
    GameOver,
    Heartbeat,
    Hello,
    LocalWireError,
    Refusal,
    Resume,
    Sync,
    Welcome,
    WireConnection,
    WireError,
    WireState,
)

HELLO = Hello(version=w.WIRE_VERSION, token="alice.s3cret", name="mcts", engine="MCTS 1.0")
WELCOME = Welcome(version=w.WIRE_VERSION, session="sess-1", heartbeat=5000)

EVERY_KIND = [HELLO, WELCOME, Refusal("revoked token"), w.Lines(["bestmove d5"], think=12),
              Eof("closed", "exited (0)"), Heartbeat(), Sync(3),
              GameOver("g1", "1-0", "normal", "checkmate"), Resume("g1", 12), Close("bye")]


def raw(value: object) -> bytes:
    """A frame of any msgpack value (the encoder refuses to make bad ones)."""
    body = msgpack.packb(value, use_bin_type=True)
    return struct.pack(">I", len(body)) + body


def frames(conn: WireConnection) -> list[w.Frame]:
    out = []
    while (event := conn.next_event()) is not NEED_DATA:
        assert isinstance(event, w.Frame)
        out.append(event)
    return out


def open_pair() -> tuple[WireConnection, WireConnection]:
    """A client and a server after hello and welcome."""
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    server.receive_data(client.send(HELLO))
    assert frames(server) == [HELLO] and server.state is WireState.AUTHENTICATING
    client.receive_data(server.send(WELCOME))
    assert frames(client) == [WELCOME]
    assert client.state is server.state is WireState.OPEN
    return client, server


def refused(conn: WireConnection, data: bytes) -> str:
    conn.receive_data(data)
    with pytest.raises(WireError) as info:
        frames(conn)
    assert conn.state is WireState.ERROR and conn.error == info.value.reason
    with pytest.raises(WireError):  # and it stays so
        conn.next_event()
    return info.value.reason


def test_the_side_that_found_a_fault_may_still_say_why():
    server = WireConnection(SERVER)
    refused(server, b"\x00\x00\x00\x01\xc1")
    data = server.send(Close("garbage"))
    assert w.decode_body(data[4:]) == Close("garbage") and server.state is WireState.CLOSED


# --- frames -------------------------------------------------------------------


@pytest.mark.parametrize("frame", EVERY_KIND, ids=lambda frame: frame.KIND)
def test_every_kind_round_trips_through_its_bytes(frame):
    data = w.encode_frame(frame)
    (size,) = struct.unpack(">I", data[:4])
    assert size == len(data) - 4
    assert w.decode_body(data[4:]) == frame


def test_optional_fields_are_left_out_and_the_token_is_not_in_the_repr():
    assert w.Lines(["x"]).to_map() == {"kind": "lines", "lines": ["x"]}
    assert "s3cret" not in repr(HELLO)
    decoded = w.decode_body(w.encode_frame(HELLO)[4:])
    assert isinstance(decoded, Hello) and decoded.session is None


def test_frames_split_byte_by_byte_and_coalesced_come_out_the_same():
    client, server = open_pair()
    sent = [w.Lines(["info depth 1", "bestmove d5"], think=3), Heartbeat(), w.Lines(["ok"])]
    data = b"".join(client.send(frame) for frame in sent)
    for byte in data:  # one byte at a time
        server.receive_data(bytes([byte]))
    assert frames(server) == sent
    client, server = open_pair()
    server.receive_data(b"".join(client.send(frame) for frame in sent))  # all at once
    assert frames(server) == sent


def test_lines_frames_cut_within_the_limits_and_keep_think_on_the_last():
    big = "x" * (MAX_LINE_BYTES - 1)
    cut = w.lines_frames(["a", big, "b"], think=7)
    assert [frame.lines for frame in cut] == [["a", big], ["b"]]
    assert [frame.think for frame in cut] == [None, 7]
    many = w.lines_frames(["l"] * (w.MAX_LINES_PER_FRAME + 1))
    assert [len(frame.lines) for frame in many] == [w.MAX_LINES_PER_FRAME, 1]
    for frame in cut + many:
        assert len(w.encode_frame(frame)) <= w.MAX_FRAME_BYTES + 4


def test_the_longest_line_fits_one_frame():
    client, server = open_pair()
    line = "é" * (MAX_LINE_BYTES // 2)  # MAX_LINE_BYTES bytes of UTF-8
    server.receive_data(client.send(w.Lines([line])))
    assert frames(server) == [w.Lines([line])]


# --- malformed frames ---------------------------------------------------------


def test_an_oversized_length_prefix_is_refused_before_its_body_arrives():
    server = WireConnection(SERVER)
    reason = refused(server, struct.pack(">I", w.MAX_FRAME_BYTES + 1))
    assert "over the limit" in reason
    assert refused(WireConnection(SERVER), struct.pack(">I", 0)) == "an empty frame"


@pytest.mark.parametrize("value, words", [
    ([1, 2], "must be a map"),
    ({"version": 1}, "without a kind"),
    ({"kind": 3}, "without a kind"),
    ({"kind": "teleport"}, "unknown frame kind"),
    ({"kind": "hello", "version": 1, "token": "t", "name": "n"}, "missing field 'engine'"),
    ({"kind": "hello", "version": "1", "token": "t", "name": "n", "engine": "e"}, "must be int"),
    ({"kind": "hello", "version": True, "token": "t", "name": "n", "engine": "e"}, "must be int"),
    ({"kind": "hello", "version": -1, "token": "t", "name": "n", "engine": "e"}, "out of range"),
    ({"kind": "hello", "version": 1, "token": "t", "name": "n" * 65, "engine": "e"},
     "over 64 characters"),
    ({"kind": "hello", "version": 1, "token": "t", "name": "n", "engine": "e", "x": 1},
     "unknown field 'x'"),
    ({"kind": "hello", "version": 1, "token": b"t", "name": "n", "engine": "e"},
     "not one msgpack value"),  # bin is refused by the decoder
])
def test_malformed_frames_close_the_connection_with_a_reason(value, words):
    assert words in refused(WireConnection(SERVER), raw(value))


@pytest.mark.parametrize("lines, words", [
    ([], "no line"),
    (["a\nb"], "line feed"),
    ([1], "must be str"),
    (["x"] * (w.MAX_LINES_PER_FRAME + 1), "not one msgpack value"),  # the decoder's array cap
    (["x" * (MAX_LINE_BYTES // 2 + 1)] * 2, "bytes of lines"),
])
def test_malformed_lines_frames(lines, words):
    client, server = open_pair()
    assert words in refused(server, raw({"kind": "lines", "lines": lines}))


@pytest.mark.parametrize("data", [
    b"\x00\x00\x00\x02\xc1\xc1",  # 0xc1: never used in msgpack
    b"\x00\x00\x00\x03\x81\xa1k",  # a map cut short
    raw({"kind": "heartbeat"})[:-1] + b"\x00" + raw({"kind": "heartbeat"}),  # a length too long
    b"\x00\x00\x00\x02\xa1\xff",  # a str that is not UTF-8
    b"\x00\x00\x00\x02\x80\x80",  # two values in one frame
])
def test_garbage_is_refused(data):
    refused(WireConnection(SERVER), data)


def test_an_ext_value_is_refused():
    body = msgpack.packb({"kind": "sync", "seq": msgpack.ExtType(1, b"x")})
    assert "not one msgpack value" in refused(WireConnection(SERVER),
                                             struct.pack(">I", len(body)) + body)


def test_a_stream_that_ends_without_a_close_or_inside_a_frame_is_a_fault():
    client, server = open_pair()
    server.receive_data(client.send(Heartbeat())[:3])
    server.receive_data(b"")
    with pytest.raises(WireError, match="inside a frame"):
        server.next_event()
    client, server = open_pair()
    server.receive_data(b"")
    with pytest.raises(WireError, match="without a close"):
        server.next_event()
    client, server = open_pair()
    server.receive_data(client.send(Close("done")) + b"")
    server.receive_data(b"")
    assert frames(server) == [Close("done")] and server.state is WireState.CLOSED


# --- states and order ---------------------------------------------------------


@pytest.mark.parametrize("frame", [f for f in EVERY_KIND if f.KIND not in ("hello", "close")],
                         ids=lambda frame: frame.KIND)
def test_the_first_frame_must_be_the_hello(frame):
    assert "out of order" in refused(WireConnection(SERVER), w.encode_frame(frame))


def test_a_second_hello_and_frames_before_the_welcome_are_out_of_order():
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    server.receive_data(client.send(HELLO))
    frames(server)
    assert "out of order" in refused(server, w.encode_frame(HELLO))
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    server.receive_data(client.send(HELLO))
    frames(server)
    assert "out of order" in refused(server, w.encode_frame(w.Lines(["ugiok"])))


def test_server_only_frames_from_a_client_are_out_of_order():
    for frame in [WELCOME, Refusal("x"), GameOver("g", "1-0", "normal", ""), Resume("g", 1)]:
        client, server = open_pair()
        assert "out of order" in refused(server, w.encode_frame(frame))
    client, server = open_pair()
    assert "out of order" in refused(client, w.encode_frame(Eof("closed", "")))


def test_the_local_side_cannot_send_against_the_table():
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    with pytest.raises(LocalWireError):
        server.send(WELCOME)  # no hello yet
    with pytest.raises(LocalWireError):
        client.send(w.Lines(["ugi"]))
    client, server = open_pair()
    with pytest.raises(LocalWireError):
        server.send(w.Lines(["go"], think=3))  # think is the client's
    with pytest.raises(LocalWireError):
        server.send(Resume("g", 1))  # not a resumed session


def test_a_refusal_closes_both_sides():
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    server.receive_data(client.send(HELLO))
    frames(server)
    client.receive_data(server.send(Refusal("unknown token")))
    assert frames(client) == [Refusal("unknown token")]
    assert client.state is server.state is WireState.CLOSED
    with pytest.raises(LocalWireError):
        client.send(Heartbeat())


def test_a_welcome_of_another_version_closes_the_client():
    client = WireConnection(CLIENT)
    client.send(HELLO)
    other = Welcome(version=w.WIRE_VERSION + 1, session="s", heartbeat=5000)
    assert "wire version" in refused(client, w.encode_frame(other))


def test_a_hello_of_another_version_is_for_a_refusal():
    assert w.hello_problem(HELLO) is None
    other = Hello(version=99, token="t", name="n", engine="e")
    assert w.hello_problem(other) == "wire version 99 is not supported; this server speaks 1"


def test_sync_answers_match_the_one_outstanding():
    client, server = open_pair()
    client.receive_data(server.send(Sync(1)))
    assert frames(client) == [Sync(1)]
    with pytest.raises(LocalWireError):
        server.send(Sync(2))  # one outstanding
    with pytest.raises(LocalWireError):
        client.send(Sync(5))  # not the one asked
    server.receive_data(client.send(Sync(1)))
    assert frames(server) == [Sync(1)]
    server.send(Sync(2))
    assert "sync answer 7" in refused(server, w.encode_frame(Sync(7)))
    client, server = open_pair()
    assert "sync answer" in refused(server, w.encode_frame(Sync(0)))  # none outstanding


def test_nothing_of_the_engine_after_its_eof():
    client, server = open_pair()
    server.receive_data(client.send(Eof("overlong", "wrote a line over the limit")))
    eof = frames(server)[0]
    assert isinstance(eof, Eof) and eof.reason == "overlong" and server.eof
    assert "after the engine's eof" in refused(server, w.encode_frame(w.Lines(["x"])))
    assert "unknown reason" in refused(open_pair()[1], raw(
        {"kind": "eof", "reason": "bored", "detail": ""}))


def test_a_resumed_session_gets_its_games_back():
    client, server = WireConnection(CLIENT), WireConnection(SERVER)
    server.receive_data(client.send(Hello(version=1, token="t", name="n", engine="e",
                                          session="sess-1")))
    hello = frames(server)[0]
    assert isinstance(hello, Hello) and hello.session == "sess-1"
    client.receive_data(server.send(Welcome(version=1, session="sess-1", heartbeat=5000,
                                            resumed=True)))
    client.receive_data(server.send(Resume("g1", 17)))
    assert frames(client)[1:] == [Resume("g1", 17)]
    _, plain = open_pair()
    assert "not resumed" in refused(open_pair()[0], w.encode_frame(Resume("g", 1)))
    assert plain.state is WireState.OPEN  # another connection: untouched


def test_the_transition_table_covers_both_roles_and_close_ends_every_live_state():
    for (role, state), moves in w.TRANSITIONS.items():
        for kind, after in moves.items():
            assert w.next_state(role, state, kind) is after
    for state in WireState:
        expected = None if state is WireState.CLOSED else WireState.CLOSED
        assert w.next_state(CLIENT, state, "close") is expected


def test_the_receive_buffer_is_bounded():
    server = WireConnection(SERVER)
    with pytest.raises(WireError, match="buffered"):
        server.receive_data(b"\x00" * (w.MAX_RECEIVE_BUFFER + 1))


# --- fuzz ---------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300), st.sampled_from([CLIENT, SERVER]), st.booleans())
def test_random_bytes_raise_nothing_but_the_wire_error(data, role, opened):
    if opened:
        client, server = open_pair()
        conn = server if role is SERVER else client
    else:
        conn = WireConnection(role)
    conn.receive_data(data)
    try:
        frames(conn)
    except WireError as exc:
        assert exc.reason and conn.state is WireState.ERROR


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 64) - 1) | st.floats()
    | st.text(max_size=20) | st.binary(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(w.KINDS)), st.dictionaries(
    st.sampled_from(["version", "token", "name", "engine", "session", "heartbeat", "resumed",
                     "reason", "lines", "think", "detail", "seq", "game", "ply", "result",
                     "termination", "x"]), _values, max_size=5))
def test_random_maps_of_real_kinds_raise_nothing_but_the_wire_error(kind, fields):
    client, server = open_pair()
    for conn in (server, client):
        conn.receive_data(raw({"kind": kind, **fields}))
        try:
            frames(conn)
        except WireError:
            assert conn.state is WireState.ERROR


# --- lag quota and frame budget ----------------------------------------------


def test_the_lag_quota_follows_the_spec():
    quota = w.LagQuota(10, 0.1)  # estimate 14 s: gain 70 ms
    assert quota.gain == pytest.approx(0.070)
    assert quota.quota == pytest.approx(0.210) and quota.quota_max == pytest.approx(0.490)
    charged, comp = quota.charge(0.5, 0.45)  # 50 ms of lag, all compensated
    assert (charged, comp) == (pytest.approx(0.45), pytest.approx(0.05))
    assert quota.quota == pytest.approx(0.230)
    for _ in range(10):  # a liar gains no more than the quota
        charged, comp = quota.charge(1.0, 0.0)
        assert comp <= 0.490 + 1e-9 and charged >= 0.5
    assert quota.charge(0.3, None) == (0.3, 0.0)  # nothing reported: no lag
    assert quota.charge(0.3, 5.0) == (0.3, 0.0)  # a think over the measured: clamped
    assert w.LagQuota(1, 0).gain == w.QUOTA_GAIN_MIN
    assert w.LagQuota(3600, 30).gain == w.QUOTA_GAIN_MAX


def test_the_frame_budget_waits_beyond_its_burst():
    rate = w.FrameRate(rate=10, burst=3)
    assert [rate.wait(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert rate.wait(0.0) == pytest.approx(0.1)
    assert rate.wait(1.0) == 0.0  # refilled


# --- reasons and sources (specs/wire.md §Reasons, §Limits) ---------------------


def test_every_reason_reads_back_from_its_text_and_none_begins_another():
    """specs/wire.md §Reasons: a reason travels as its text; each text has
    exactly one reason."""
    for reason in w.REASONS:
        assert w.reason_of(reason.text("some detail")) is reason
        assert w.reason_of(reason.text()) is reason
        others = [other for other in w.REASONS if other is not reason]
        assert not any(other.opening.startswith(reason.opening) for other in others), reason
    assert len({reason.name for reason in w.REASONS}) == len(w.REASONS)
    assert all(len(r.text("x" * 2000)) == w.MAX_TEXT_CHARS for r in w.REASONS)


def test_only_the_clients_own_mistakes_and_the_stop_are_final():
    """specs/wire.md §Reasons: a bad or revoked token, a refused name, the
    version, a broken wire and the server's stop end the client; a limit full
    now, its engine's fault and the server's choice do not; a reason no
    server of this version gives ends it (as every reason did before)."""
    final = {reason.name for reason in w.REASONS if reason.final}
    assert final == {"version", "token", "name", "broken", "stop"}
    assert w.is_final(w.TOKEN.text()) and w.is_final(w.hello_problem(
        Hello(version=99, token="t", name="n", engine="e")) or "")
    assert not w.is_final(w.FAULT.text("no readyok within 23 s of isready"))
    assert not w.is_final(w.NAME_TAKEN.text("'x' is connected already"))
    assert w.is_final("that is all") and w.reason_of("that is all") is None


@pytest.mark.parametrize(("address", "source"), [
    ("203.0.113.7", "203.0.113.7"),
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
    ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),  # the same /64: one source
    ("::ffff:198.51.100.4", "198.51.100.4"),  # an IPv4-mapped address is its IPv4 one
    ("?", "?"),
])
def test_a_source_is_an_ipv4_address_or_an_ipv6_64(address, source):
    assert w.source_key(address) == source
