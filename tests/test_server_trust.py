"""No peer of the match server can harm another's game (``specs/wire.md``
§Reasons, §Limits, §The server and the client): an ``arbiter serve`` process,
``arbiter connect`` clients and raw wire clients over real sockets on
127.0.0.1 (and 127.0.0.2, another source), each test a hostile peer beside an
honest one."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from cli import PROCESS_TIMEOUT, start
from server_peers import (
    DEAF_AT_GAME_ENGINE,
    OTHER_SOURCE,
    PY,
    RawClient,
    Server,
    add_token,
    answers,
    connect,
    reason,
    wait_gone,
)

from protocol import wire


def test_an_engine_that_fails_a_games_start_is_the_only_one_charged(tmp_path: Path) -> None:
    """§The server and the client: rx answers isready until its first game,
    then never; paired with the honest ra, the game cannot start.  rx alone is
    disconnected (a ``fault`` close: its client connects again) and rests; ra
    answers its isready, stays connected (its client never closed) and plays
    rb next.  No game of rx is stored."""
    db = tmp_path / "server.db"
    tag = f"arbiter-server-test-{uuid.uuid4().hex}"
    deaf = tmp_path / "deaf.py"
    deaf.write_text(DEAF_AT_GAME_ENGINE)
    server = Server(db, tag)
    rx = start("connect", f"127.0.0.1:{server.port}", "--token", add_token(db, "tx"), "-e",
               f"cmd='{PY} {deaf}' name=rx env.TAG={tag}", env={"TAG": tag})
    server.wait_log("rx (tx) connected")
    ra = connect(server, add_token(db, "ta"), "ra", tag)  # paired with rx at once
    server.wait_log("troll arena: rx - ra started")
    rb = connect(server, add_token(db, "tb"), "rb", tag)
    try:
        server.wait_log("rx disconnected and rested")
        games = server.wait_games(1)
        assert {games[0]["white"], games[0]["black"]} == {"ra", "rb"}, games
        assert not any("ra (ta) disconnected" in line for line in server.lines), server.lines
        assert ra.poll() is None and rb.poll() is None
        deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
        while sum("rx (tx) connected" in line for line in server.lines) < 2:  # its client came back
            assert rx.poll() is None and time.monotonic() < deadline, "".join(server.lines)
            time.sleep(0.1)
        closed = [line for line in server.lines if "rx (tx) disconnected" in line]
        assert closed and "no readyok" in closed[0], closed
    finally:
        ends = server.interrupt((rx, ra, rb))
    assert all("rx" not in (game["white"], game["black"]) for game in server.games())
    (_, rx_err), (ra_status, ra_err), _ = ends
    assert "engine fault: " in rx_err and "reconnecting" in rx_err, rx_err
    assert ra_status == 0 and "reconnecting" not in ra_err, ra_err
    assert "the server closed the connection (the server stops)" in ra_err, ra_err
    assert wait_gone(tag) == []


def test_two_hellos_of_one_engine_at_once_welcome_one(tmp_path: Path) -> None:
    """§Limits: a name is taken at the hello; two hellos with the same token
    and name at the same moment: one welcome, one refusal (``name-taken``, not
    final); once the welcomed connection ends, the name is free again."""
    db = tmp_path / "server.db"
    token = add_token(db, "alice")
    server = Server(db, "unused", None)
    try:
        clients = [RawClient(server.port) for _ in range(2)]
        for client in clients:
            client.hello(token, "twin")
        frames = answers(clients)
        for client in clients:
            client.close()
        _welcomed_again(server.port, token, "twin")
    finally:
        server.interrupt(())
    assert sorted(type(frame).__name__ for frame in frames) == ["Refusal", "Welcome"], frames
    assert [reason(frame) for frame in frames if isinstance(frame, wire.Refusal)] == \
        [wire.NAME_TAKEN]


def test_twenty_hellos_of_one_token_at_once_welcome_the_limit(tmp_path: Path) -> None:
    """§Limits: a token's connections count from the hello: twenty hellos of
    one token at once (twenty names): MAX_CONNECTIONS_PER_TOKEN welcomed, the
    others refused (``token-full``; once those refusals have made the source's
    failures, ``throttled``: §Authentication)."""
    db = tmp_path / "server.db"
    token = add_token(db, "alice")
    server = Server(db, "unused", None)
    try:
        clients = [RawClient(server.port) for _ in range(20)]
        for index, client in enumerate(clients):
            client.hello(token, f"e{index}")
        frames = answers(clients)
        for client in clients:
            client.close()
        _welcomed_again(server.port, token, "e0")  # the slots were given back
    finally:
        server.interrupt(())
    welcomed = [frame for frame in frames if isinstance(frame, wire.Welcome)]
    assert len(welcomed) == wire.MAX_CONNECTIONS_PER_TOKEN, frames
    refused = {reason(frame) for frame in frames if frame not in welcomed}
    assert wire.TOKEN_FULL in refused and refused <= {wire.TOKEN_FULL, wire.THROTTLED}, frames


def _welcomed_again(port: int, token: str, name: str) -> None:
    """A hello of ``name`` is welcomed once the server has seen its earlier
    connection end (a name or a slot given back on that way out; meanwhile
    refused, and the source's failures pace its tries)."""
    deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
    while True:
        client = RawClient(port)
        try:
            client.hello(token, name)
            frame = client.frame()
        finally:
            client.close()
        if isinstance(frame, wire.Welcome):
            return
        assert reason(frame) in (wire.NAME_TAKEN, wire.TOKEN_FULL, wire.THROTTLED), frame
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_silent_connections_from_one_source_leave_room_for_another(tmp_path: Path) -> None:
    """§Limits (MAX_UNANSWERED_PER_SOURCE): more silent connections from one
    source than the server holds in all: all but the cap are closed at once
    (``source-full``, the rest at the hello timeout), and a client with a
    valid token from another source is welcomed while they are held."""
    db = tmp_path / "server.db"
    token = add_token(db, "alice")
    server = Server(db, "unused", None)
    try:
        silent = [RawClient(server.port)
                  for _ in range(wire.MAX_CONNECTIONS + wire.MAX_UNANSWERED_PER_SOURCE)]
        other = RawClient(server.port, OTHER_SOURCE)
        other.hello(token, "honest")
        assert isinstance(other.frame(), wire.Welcome)
        ends = [reason(frame) for frame in answers(silent)]
        for client in (*silent, other):
            client.close()
    finally:
        server.interrupt(())
    assert ends.count(wire.NO_HELLO) <= wire.MAX_UNANSWERED_PER_SOURCE, ends.count(wire.NO_HELLO)
    assert ends.count(wire.SOURCE_FULL) + ends.count(wire.NO_HELLO) == len(silent)


def test_parallel_guesses_from_one_source_are_paced(tmp_path: Path) -> None:
    """§Authentication: 200 wrong tokens sent at once from one source: its
    token checks are no faster than the promised pace (AUTH_FAILURES_FREE,
    then one per AUTH_FAILURE_DELAY, across all its connections); the others
    are turned away unchecked; none is welcomed.  A valid client from another
    source is welcomed meanwhile."""
    db = tmp_path / "server.db"
    token = add_token(db, "alice")
    server = Server(db, "unused", None)
    try:
        began = time.monotonic()
        guesses = [RawClient(server.port) for _ in range(200)]
        for index, guess in enumerate(guesses):
            guess.hello(f"alice.guess{index}", f"g{index}")
        other = RawClient(server.port, OTHER_SOURCE)
        other.hello(token, "honest")
        assert isinstance(other.frame(), wire.Welcome)
        frames = answers(guesses)
        lasted = time.monotonic() - began  # every check was made within this time
        for client in (*guesses, other):
            client.close()
    finally:
        server.interrupt(())
    reasons = [reason(frame) for frame in frames]
    assert set(reasons) <= {wire.TOKEN, wire.THROTTLED, wire.SOURCE_FULL}, frames
    checked = reasons.count(wire.TOKEN)
    assert checked <= wire.AUTH_FAILURES_FREE + lasted / wire.AUTH_FAILURE_DELAY + 1, \
        (checked, lasted)
    assert checked >= wire.AUTH_FAILURES_FREE  # (the free ones were checked at once)
