"""Peers of the match server for the tests (``specs/wire.md``): an
``arbiter serve`` process, ``arbiter connect`` clients, and raw wire clients
that behave as a hostile peer would (a hello and nothing more, a flood,
hellos at once, silent sockets, from a chosen loopback source address).

Shared by the test modules of the server (``tests/`` is on ``sys.path``)."""

from __future__ import annotations

import contextlib
import selectors
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from bad_engines.harness import processes_with
from cli import PROCESS_TIMEOUT, ListeningLog, invoke, start

from protocol import wire
from protocol.wire import CLIENT, NEED_DATA, WireConnection, encode_frame

PY = sys.executable

#: the terminations of a game cut by an engine's fault (the faulty side loses)
FAULTS = ("crash", "protocol-error", "stall", "time-forfeit")

#: the arena of these tests: instant engines, a clock no honest one runs out of
ARENA = "game=troll tc=20+0.2"
#: the arena of a test where an engine's client is killed and stays away: its
#: game ends when the gone engine's clock runs out (the clock goes on while it
#: is away, specs/wire.md §Disconnect and resume), so a short clock makes a short
#: wait; the increment is still a hundred times what an instant engine's move
#: over loopback costs
SHORT_ARENA = "game=troll tc=3+0.1"


def spec(name: str, tag: str) -> str:
    return f"cmd='{PY} -m sample_engines.random' name={name} env.TAG={tag}"


def add_token(db: Path, name: str) -> str:
    run = invoke("token", "add", name, "--db", db)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


class Server:
    """An ``arbiter serve`` process; its stderr read by a thread (the port it
    took, then its log: :class:`cli.ListeningLog`)."""

    def __init__(self, db: Path, tag: str, arena: str | None = ARENA, *options: str | Path):
        self.db = db
        self.proc = start("serve", "--db", db, "--listen", "127.0.0.1:0",
                          *(("--arena", arena) if arena else ()), *options, env={"TAG": tag})
        log = ListeningLog(self.proc)
        self.lines = log.lines
        self.port: int = log.port()

    def wait_log(self, *texts: str) -> None:
        deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
        while not all(any(text in line for line in self.lines) for text in texts):
            assert self.proc.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.1)

    def games(self) -> list[dict]:
        with sqlite3.connect(self.db) as db:
            db.row_factory = sqlite3.Row
            try:
                rows = db.execute("select g.*, t.format from games g join tournaments t "
                                  "on g.tournament = t.id order by g.id").fetchall()
            except sqlite3.OperationalError:  # not made yet
                return []
        return [dict(row) for row in rows]

    def wait_games(self, count: int) -> list[dict]:
        deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
        while len(games := self.games()) < count:
            assert self.proc.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.1)
        return games

    def interrupt(self, clients) -> list[tuple[int, str]]:
        """Ctrl-C to the server (it must exit 130), then each client's end:
        its exit status and stderr (None in ``clients``: one never started)."""
        self.proc.send_signal(signal.SIGINT)
        assert self.proc.wait(PROCESS_TIMEOUT) == 130, "".join(self.lines)
        ends = []
        for client in clients:
            if client is not None:
                _, err = client.communicate(timeout=PROCESS_TIMEOUT)
                ends.append((client.returncode, err))
        return ends


def connect(server: Server, token: str, name: str, tag: str,
             *options: str | Path) -> subprocess.Popen[str]:
    return start("connect", f"127.0.0.1:{server.port}", "--token", token, "-e", spec(name, tag),
                 *options, env={"TAG": tag})


def raw_hello(port: int, token: str, name: str) -> socket.socket:
    """A raw connection to ``port`` that sends its hello and reads nothing more."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(WireConnection(CLIENT).send(wire.Hello(wire.WIRE_VERSION, token, name, "raw")))
    return sock


class RawPeers:
    """Two raw connections to the server at ``port``, each past its hello:
    ``fl`` then sends heartbeat frames as fast as the socket takes them, from a
    thread, and ``nr`` sends nothing more.  :meth:`close` ends both (the flood's
    socket is shut first, so a send blocked on the server's read limit ends at
    once)."""

    def __init__(self, port: int, flood_token: str, silent_token: str) -> None:
        self.flooder = raw_hello(port, flood_token, "fl")
        self.silent = raw_hello(port, silent_token, "nr")
        self.thread = threading.Thread(target=self._flood, daemon=True)
        self.thread.start()

    def _flood(self) -> None:
        beats = b"".join(encode_frame(wire.Heartbeat()) for _ in range(1000))
        try:
            while True:
                self.flooder.sendall(beats)
        except OSError:
            pass  # closed by the server, or by close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.flooder.shutdown(socket.SHUT_RDWR)
        self.thread.join()
        self.flooder.close()
        self.silent.close()


def frames_until_eof(sock: socket.socket) -> bytes:
    """What the server sends until it closes the connection."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def wait_gone(tag: str) -> list[int]:
    deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
    while (left := processes_with(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


# --------------------------------------------------------------------------
# Raw wire clients by hand (tests/test_server_trust.py): hellos at once, from
# a chosen loopback source address, and the frames the server answers
# --------------------------------------------------------------------------

#: a second loopback source address (all of 127.0.0.0/8 is loopback on Linux):
#: another source for the server's per-source limits
OTHER_SOURCE = "127.0.0.2"


def next_frame(sock: socket.socket, conn: WireConnection) -> wire.Frame | None:
    """The next frame the peer on ``sock`` sends (read into ``conn``, checked
    by the wire); None when it closed the connection."""
    while (event := conn.next_event()) is NEED_DATA:
        data = sock.recv(65536)
        if not data:
            return None
        conn.receive_data(data)
    assert isinstance(event, wire.Frame)
    return event


class RawClient:
    """One connection to the server at ``port`` from ``source``, spoken to by
    hand: :meth:`send` frames, :meth:`frame` the server's next one."""

    def __init__(self, port: int, source: str = "127.0.0.1") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=PROCESS_TIMEOUT,
                                             source_address=(source, 0))
        self.conn = WireConnection(CLIENT)

    def send(self, *frames: wire.Frame) -> None:
        self.sock.sendall(b"".join(self.conn.send(frame) for frame in frames))

    def hello(self, token: str, name: str) -> None:
        self.send(wire.Hello(wire.WIRE_VERSION, token, name, "raw"))

    def frame(self) -> wire.Frame | None:
        """The server's next frame; None when it closed the connection."""
        return next_frame(self.sock, self.conn)

    def close(self) -> None:
        self.sock.close()


def answers(clients: list[RawClient]) -> list[wire.Frame | None]:
    """Each client's first frame from the server (None: closed without one),
    read as they come (any order), within the guard of a hang."""
    found: dict[int, wire.Frame | None] = {}
    with selectors.DefaultSelector() as selector:
        for index, client in enumerate(clients):
            selector.register(client.sock, selectors.EVENT_READ, index)
        deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
        while len(found) < len(clients):
            assert time.monotonic() < deadline, f"{len(found)} of {len(clients)} answered"
            for key, _ in selector.select(timeout=1.0):
                client = clients[key.data]
                data = client.sock.recv(65536)
                if data:
                    client.conn.receive_data(data)
                    event = client.conn.next_event()
                    if event is NEED_DATA:
                        continue  # a part of a frame
                    found[key.data] = event
                else:
                    found[key.data] = None
                selector.unregister(client.sock)
    return [found[index] for index in range(len(clients))]


def reason(frame: wire.Frame | None) -> wire.Reason | None:
    """The wire's reason of a refusal or a close (None for any other frame)."""
    if isinstance(frame, wire.Refusal | wire.Close):
        return wire.reason_of(frame.reason)
    return None


#: an engine that answers the handshake and every isready until its first game,
#: then never again: it passes the server's idle pings and fails a game's start
#: (no readyok after uginewgame)
DEAF_AT_GAME_ENGINE = '''
import sys
started = False
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "ugi":
        print("id name deaf\\nugiok", flush=True)
    elif word == "uginewgame":
        started = True
    elif word == "isready" and not started:
        print("readyok", flush=True)
    elif word == "quit":
        break
'''
