"""``arbiter connect``'s relay (``specs/wire.md`` §The server and the client)
against a server played by the test: a real ``arbiter connect`` process and
a real engine, the server's side a plain socket in this process speaking
the wire by hand, so that the test decides what the server does (reads or
not, closes, drops) and sees every frame the client sends.

The plain TCP relay is one blocking poll loop (``arbiter/server/relay_loop.py``);
what it must keep: sync answered, ``think`` on the ``bestmove``, heartbeats,
the engine's exit and overlong lines as ``eof``, a drop reconnected, the
server's ``close`` obeyed even while the server does not read, and nothing
left behind on Ctrl-C."""

from __future__ import annotations

import fcntl
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bad_engines.harness import HERE, processes_with
from cli import PROCESS_TIMEOUT, start
from server_peers import next_frame

from protocol import wire
from protocol.wire import SERVER, WireConnection

PY = sys.executable

#: an engine that answers the handshake, then floods ``info`` lines without
#: end; the first time it finds its output pipe nearly full (the client does
#: not read it: its frames wait for a server that does not read) it touches
#: the file ``MARK``
FLOOD_ENGINE = '''
import fcntl, os, struct, sys, termios
out = sys.stdout.buffer
line = sys.stdin.readline()
out.write(b"id name Flood\\nugiok\\n"); out.flush()
chunk = b"info string " + b"x" * 4000 + b"\\n"
marked = False
while True:
    if not marked:
        queued = struct.unpack("i", fcntl.ioctl(1, termios.FIONREAD, b"\\0" * 4))[0]
        if queued >= 60000:
            open(os.environ["MARK"], "w").close()
            marked = True
    out.write(chunk); out.flush()
'''


class _Peer:
    """The server's side of one client: a listening socket on 127.0.0.1 and
    the connections the client makes to it, spoken to by hand."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(PROCESS_TIMEOUT)  # a guard against a hang only
        self.port: int = self.listener.getsockname()[1]
        self.sock: socket.socket | None = None
        self.conn = WireConnection(SERVER)

    def accept(self) -> wire.Hello:
        """The client's next connection, its hello read and welcomed."""
        hello = self.accept_hello()
        self.send(wire.Welcome(wire.WIRE_VERSION, "session", 5000, False))
        return hello

    def accept_hello(self) -> wire.Hello:
        """The client's next connection and its hello, not answered yet."""
        if self.sock is not None:
            self.sock.close()
        self.sock, _ = self.listener.accept()
        self.sock.settimeout(PROCESS_TIMEOUT)
        self.conn = WireConnection(SERVER)
        hello = self.frame()
        assert isinstance(hello, wire.Hello)
        return hello

    def send(self, *frames: wire.Frame) -> None:
        assert self.sock is not None
        self.sock.sendall(b"".join(self.conn.send(frame) for frame in frames))

    def frame(self) -> wire.Frame | None:
        """The client's next frame; None when it closed the connection."""
        assert self.sock is not None
        return next_frame(self.sock, self.conn)

    def until(self, wanted) -> wire.Frame:
        """Frames until one for which ``wanted(frame)`` holds (each checked by the wire)."""
        while True:
            frame = self.frame()
            assert frame is not None, "the client closed the connection"
            if wanted(frame):
                return frame

    def lines_until(self, word: str) -> list[str]:
        """The engine's lines until one that starts with ``word`` (included)."""
        seen: list[str] = []
        while not any(line.startswith(word) for line in seen):
            frame = self.until(lambda f: isinstance(f, wire.Lines))
            assert isinstance(frame, wire.Lines)
            seen += frame.lines
        return seen

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.listener.close()


@contextmanager
def _relayed(engine: str) -> Iterator[tuple[_Peer, subprocess.Popen[str]]]:
    """A peer and an ``arbiter connect`` of ``engine`` (a spec's ``cmd=...``
    and options) to it; on the way out the client killed if it still runs,
    the peer closed, and then no process of the engine may be left."""
    tag, peer = _tag(), _Peer()
    client = start("connect", f"127.0.0.1:{peer.port}", "--token", "t.secret", "-e",
                   f"{engine} name=rc env.TAG={tag}", env={"TAG": tag})
    try:
        yield peer, client
    finally:
        if client.poll() is None:
            client.kill()
        peer.close()
    assert _wait_gone(tag) == []


def _bad(script: str) -> str:
    return f"cmd='{PY} {Path(HERE) / script}'"


def _wait_gone(tag: str) -> list[int]:
    deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
    while (left := processes_with(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _tag() -> str:
    return f"arbiter-client-test-{uuid.uuid4().hex}"


def test_a_game_through_the_relay() -> None:
    """The handshake relayed, a sync answered, a search's bestmove with its
    think time, a heartbeat when nothing else went, and the server's close
    obeyed: exit 0 with its reason, the engine gone."""
    with _relayed(f"cmd='{PY} -m sample_engines.random'") as (peer, client):
        hello = peer.accept()
        assert hello.name == "rc"
        peer.send(wire.Lines(["ugi"]))
        assert "ugiok" in peer.lines_until("ugiok")
        peer.send(wire.Sync(7))
        assert peer.until(lambda f: not isinstance(f, wire.Heartbeat)) == wire.Sync(7)
        peer.send(wire.Lines(["uginewgame", "position startpos",
                              "go p1time 60000 p2time 60000 p1inc 0 p2inc 0"]))
        reply = peer.until(lambda f: isinstance(f, wire.Lines)
                           and any(line.startswith("bestmove") for line in f.lines))
        assert isinstance(reply, wire.Lines) and reply.think is not None and reply.think >= 0
        assert isinstance(peer.until(lambda f: True), wire.Heartbeat)  # nothing else to send
        peer.send(wire.Close("that is all"))
        _, err = client.communicate(timeout=PROCESS_TIMEOUT)
        assert client.returncode == 0, err
        assert "the server closed the connection (that is all)" in err


def test_the_engines_exit_is_an_eof_with_its_status() -> None:
    with _relayed(_bad("exit_before_ugiok.py")) as (peer, client):
        peer.accept()
        peer.send(wire.Lines(["ugi"]))
        eof = peer.until(lambda f: isinstance(f, wire.Eof))
        assert eof == wire.Eof("closed", "status 1")
        closing = peer.frame()
        assert isinstance(closing, wire.Close) and "the engine status 1" in closing.reason
        _, err = client.communicate(timeout=PROCESS_TIMEOUT)
        assert client.returncode == 0 and "the engine status 1" in err, err


def test_an_overlong_line_is_an_overlong_eof() -> None:
    with _relayed(_bad("long_line.py")) as (peer, client):
        peer.accept()
        peer.send(wire.Lines(["ugi"]))
        peer.lines_until("ugiok")
        peer.send(wire.Lines(["position startpos", "go movetime 100"]))
        eof = peer.until(lambda f: isinstance(f, wire.Eof))
        assert isinstance(eof, wire.Eof) and eof.reason == "overlong"
        assert isinstance(peer.frame(), wire.Close)
        client.communicate(timeout=PROCESS_TIMEOUT)
        assert client.returncode == 0


def test_a_dropped_connection_is_made_again_with_a_fresh_engine() -> None:
    with _relayed(f"cmd='{PY} -m sample_engines.random'") as (peer, client):
        peer.accept()
        peer.send(wire.Lines(["ugi"]))
        peer.lines_until("ugiok")
        assert peer.sock is not None
        peer.sock.close()  # no close frame: a drop
        peer.sock = None
        peer.accept()  # the client is back, with a new engine
        peer.send(wire.Lines(["ugi"]))
        peer.lines_until("ugiok")
        peer.send(wire.Close("done"))
        _, err = client.communicate(timeout=PROCESS_TIMEOUT)
        assert client.returncode == 0, err
        assert "reconnecting" in err and "the server closed the connection (done)" in err


def test_a_close_for_a_reason_that_is_not_final_is_connected_again() -> None:
    """specs/wire.md §Reasons: the server closes the connection for its
    engine's fault (``fault``, not final): the client connects again with a
    fresh engine; then for the server's stop (final): it ends, exit 0."""
    with _relayed(f"cmd='{PY} -m sample_engines.random'") as (peer, client):
        peer.accept()
        peer.send(wire.Lines(["ugi"]))
        peer.lines_until("ugiok")
        peer.send(wire.Close(wire.FAULT.text("no readyok within 23 s of isready")))
        peer.accept()  # the client is back, with a new engine
        peer.send(wire.Lines(["ugi"]))
        peer.lines_until("ugiok")
        peer.send(wire.Close(wire.STOP.text()))
        _, err = client.communicate(timeout=PROCESS_TIMEOUT)
        assert client.returncode == 0, err
        assert "(engine fault: no readyok within 23 s of isready); reconnecting" in err, err
        assert "the server closed the connection (the server stops)" in err, err


def test_a_refusal_for_a_reason_that_is_not_final_is_tried_again() -> None:
    """specs/wire.md §Reasons: a hello refused because the name is taken now
    (``name-taken``, not final) is tried again after the backoff; one refused
    for its token (final) ends the client, exit 1 with the reason."""
    with _relayed(f"cmd='{PY} -m sample_engines.random'") as (peer, client):
        peer.accept_hello()
        peer.send(wire.Refusal(wire.NAME_TAKEN.text("'rc' is connected already")))
        peer.accept_hello()
        peer.send(wire.Refusal(wire.TOKEN.text()))
        _, err = client.communicate(timeout=PROCESS_TIMEOUT)
        assert client.returncode == 1, err
        assert "refused: an engine named 'rc' is connected already; trying again in" in err, err
        assert "refused: unknown or revoked token" in err, err


def test_a_server_that_stops_reading_does_not_deadlock_the_client(tmp_path: Path) -> None:
    """The engine floods while the server reads nothing: the client's writes
    back up to the engine (its pipe full) and the client still reads the
    server, so the server's close ends it (exit 0, the reason told), and the
    engine, stuck in its write, is ended with it."""
    engine = tmp_path / "flood.py"
    engine.write_text(FLOOD_ENGINE)
    mark = tmp_path / "mark"
    with _relayed(f"cmd='{PY} {engine}' env.MARK={mark}") as (peer, client):
        peer.accept()
        peer.send(wire.Lines(["ugi"]))
        deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
        while not mark.exists():  # the engine's pipe is full: the client stopped reading it
            assert client.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        assert peer.sock is not None
        queued = struct.unpack("i", fcntl.ioctl(peer.sock.fileno(), termios.FIONREAD,
                                                b"\0" * 4))[0]
        assert queued > 0  # what the client sent waits unread on this side
        peer.send(wire.Sync(1), wire.Close("you flood"))
        _, err = client.communicate(timeout=PROCESS_TIMEOUT)
        assert client.returncode == 0, err
        assert "the server closed the connection (you flood)" in err


def test_ctrl_c_during_a_search_closes_and_leaves_no_engine() -> None:
    """Ctrl-C while the engine searches (and hangs): exit 130, a close with
    the client's reason, and no engine process left."""
    with _relayed(_bad("hang_go.py")) as (peer, client):
        peer.accept()
        peer.send(wire.Lines(["ugi"]))
        peer.lines_until("ugiok")
        peer.send(wire.Lines(["uginewgame", "position startpos", "go movetime 50"]))
        peer.lines_until("bestmove")
        peer.send(wire.Lines(["position startpos", "go movetime 50"]))  # it hangs in this one
        peer.send(wire.Sync(2))
        assert peer.until(lambda f: not isinstance(f, wire.Heartbeat)) == wire.Sync(2)
        client.send_signal(signal.SIGINT)
        closing = peer.until(lambda f: not isinstance(f, wire.Heartbeat))
        assert closing == wire.Close("the client stopped"), closing
        assert peer.frame() is None
        client.communicate(timeout=PROCESS_TIMEOUT)
        assert client.returncode == 130
