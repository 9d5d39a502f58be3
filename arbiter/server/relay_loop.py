"""``arbiter connect``'s relay over a plain TCP socket: one blocking poll loop.

The hot path of a remote engine's ply is the client's relay: a frame in,
a write to the engine, a read of its ``bestmove``, a frame out.  Over a
plain TCP socket :class:`SocketLoop` does it in one ``poll(2)`` loop over
the socket, the engine's stdout and stdin, and a wake-up pipe, run in a
thread of its own (``trio.to_thread.run_sync``), without trio's scheduler
on the way (``bench/README.md`` §`server.py`).  What it relays is decided
by :class:`~arbiter.server.relay.Relay`, the same as on the trio path that
TLS streams keep (an ``SSLStream`` is trio's to read and write).

The trio side keeps what is not on the hot path: the engine's process
(:class:`~arbiter.engine.EngineProcess`: its group, stderr, exit watch,
shutdown), the handshake, the reconnects, the ``close``.  It tells the loop
two things through :meth:`SocketLoop.stop` and :meth:`SocketLoop.exited`,
each a byte on the wake-up pipe: stop (the command was cancelled: Ctrl-C),
and the engine's exit status (from its exit watch).

The loop's contract:

- the server's frames are taken as they come (:meth:`Relay.server_data`);
  their lines go to the engine's input, and what the input does not take
  at once waits in the loop (the socket is then not read until it went:
  the server's writes back up, as a blocked write would make them) while
  the engine's output and the socket's writes go on;
- the engine's output is read only while less than :data:`OUTPUT_BOUND`
  bytes wait for the socket: a server that does not read stops the
  engine's output (its pipe fills) and never the loop, which still reads
  the server's frames (its ``close``) and answers its ``sync``;
- a heartbeat goes out when nothing went for
  :data:`~protocol.wire.HEARTBEAT_INTERVAL`; a server silent for
  :data:`~protocol.wire.IDLE_TIMEOUT` while the loop listens is a drop;
- the engine's output ending (EOF, an overlong line, or its exit, after
  what its pipe still holds) is followed by the ``eof`` frame with its exit
  status, waited for at most the quit grace;
- it returns when the relay is over (:attr:`Relay.ended`,
  :attr:`Relay.dropped`) or it was stopped; what it could not write yet is
  :attr:`SocketLoop.unsent`, for the trio side to write before its ``close``.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable, Iterable

from arbiter.engine import fdio
from arbiter.server.relay import Relay
from protocol import wire

__all__ = ["OUTPUT_BOUND", "SocketLoop"]

#: bytes of frames waiting for the socket above which the engine's output is
#: not read: one read's worth, so that a server that does not read stops the
#: engine (its pipe fills) instead of filling the client's memory
OUTPUT_BOUND = wire.READ_CHUNK
#: bytes of lines waiting for the engine's input above which the socket is
#: not read: one read's worth, for the same reason the other way
INPUT_BOUND = wire.READ_CHUNK
#: reads of the engine's pipe after its exit before the ``eof`` (1 MiB: the
#: most a pipe holds, ``/proc/sys/fs/pipe-max-size``; a child the engine
#: left behind may write on, and must not hold the ``eof`` back)
EXIT_DRAIN_READS = (1 << 20) // wire.READ_CHUNK

_IN = select.POLLIN
_OUT = select.POLLOUT
_BAD = select.POLLERR | select.POLLHUP | select.POLLNVAL
_STOP = b"s"  # on the wake-up pipe: the command was cancelled
_EXIT = b"x"  # on the wake-up pipe: the engine's exit status is in


class SocketLoop:
    """The relay of one connection over the socket descriptor ``sock``,
    between the engine's ``stdin`` and ``stdout`` descriptors (all
    non-blocking, none owned: the caller closes them after :meth:`run`);
    ``exit_grace``: how long the ``eof`` waits for the engine's exit status
    once its output ended."""

    def __init__(self, relay: Relay, sock: int, stdin: int, stdout: int, exit_grace: float):
        self.relay = relay
        self.sock, self.stdin, self.stdout = sock, stdin, stdout
        self.exit_grace = exit_grace
        #: bytes for the server not written when the loop returned
        self.unsent = b""
        #: the engine's exit status once its exit watch told it (:meth:`exited`)
        self.status: str | None = None
        #: how many times the loop woke up (``poll`` returned): the bench's count
        self.wakeups = 0
        self._stopped = False
        self._exited = False
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    # -- from the trio side (another thread) -----------------------------------

    def stop(self) -> None:
        """End :meth:`run` soon (the command was cancelled)."""
        self._wake(_STOP)

    def exited(self, status: str | None) -> None:
        """The engine exited with ``status`` (:meth:`EngineProcess.exit_status`)."""
        self.status = status
        self._wake(_EXIT)

    def _wake(self, what: bytes) -> None:
        try:
            fdio.write_now(self._wake_write, what)  # (0: full, it is awake already)
        except OSError:  # closed (it returned)
            pass

    def close(self) -> None:
        """The wake-up pipe closed (after :meth:`run` returned)."""
        for fd in (self._wake_read, self._wake_write):
            os.close(fd)
        self._wake_read = self._wake_write = -1

    # -- the loop (its own thread) -----------------------------------------------

    def run(self) -> None:
        """Relay until the relay is over or :meth:`stop` (see the module)."""
        relay, sock, stdin, stdout = self.relay, self.sock, self.stdin, self.stdout
        to_engine, to_server = relay.take_frames()  # what came with the welcome
        poller = select.poll()
        poller.register(self._wake_read, _IN)
        now = time.monotonic()
        last_sent = last_received = now
        output_open = True
        eof_by: float | None = None  # the output ended: the eof goes by then at the latest
        interest = {sock: 0, stdin: 0, stdout: 0}  # the events registered for each
        while not relay.over:
            if to_engine:
                to_engine = self._write_engine(to_engine)
            if to_server:
                to_server = self._write_server(to_server)
                if not to_server:
                    last_sent = now
            if relay.over:
                break
            if output_open and (relay.output_end is not None or self._exited):
                if relay.output_end is None:  # it exited: what its pipe holds first
                    to_server += self._drain_output()
                output_open = False
                eof_by = now + self.exit_grace
            if eof_by is not None and (self._exited or now >= eof_by):
                to_server += relay.eof(self.status)
                break  # the rest (and the close) is the trio side's to write
            listening = len(to_engine) < INPUT_BOUND
            if not listening:  # deaf on purpose: the server's silence does not count
                last_received = now
            elif now >= last_received + wire.IDLE_TIMEOUT:
                relay.silent()
                break
            if not to_server and now >= last_sent + wire.HEARTBEAT_INTERVAL:
                to_server = self._write_server(relay.heartbeat())
                last_sent = now
                continue
            # what to wait for, and until when
            _register(poller, interest, (
                (sock, (_IN if listening else 0) | (_OUT if to_server else 0)),
                (stdin, _OUT if to_engine else 0),
                (stdout, _IN if output_open and len(to_server) < OUTPUT_BOUND else 0)))
            deadlines = [last_received + wire.IDLE_TIMEOUT] if listening else []
            if not to_server:
                deadlines.append(last_sent + wire.HEARTBEAT_INTERVAL)
            if eof_by is not None:
                deadlines.append(eof_by)
            ready = poller.poll(max(0.0, min(deadlines) - now) * 1000 if deadlines else None)
            self.wakeups += 1
            now = time.monotonic()
            more_engine, more_server, heard = self._take(ready, bool(to_server))
            to_engine += more_engine
            to_server += more_server
            if heard:
                last_received = now
            if self._stopped:
                break
        self.unsent = bytes(to_server)

    def _take(self, ready: list[tuple[int, int]], sending: bool) -> tuple[bytes, bytes, bool]:
        """What the fds ``poll`` found ready hold: the bytes for the engine,
        the bytes for the server, and whether the server sent any.  The
        writable fds are the writes' at the top of :meth:`run`; a socket in
        error is read (to learn the end) only when nothing is ``sending``."""
        relay, to_engine, to_server, heard = self.relay, b"", b"", False
        for fd, events in ready:
            if relay.over:  # the server closed or dropped: nothing more goes to it
                break
            if fd == self.sock:
                if events & _IN or (events & _BAD and not (sending or to_server)):
                    data = _read(fd)
                    if data is not None:
                        heard = True
                        more_engine, more_server = relay.server_data(data)
                        to_engine += more_engine
                        to_server += more_server
            elif fd == self.stdout:
                data = _read(fd)
                if data is not None:
                    to_server += relay.engine_data(data)
            elif fd == self._wake_read:
                woken = _drain(fd)
                self._stopped = self._stopped or _STOP in woken
                self._exited = self._exited or _EXIT in woken
        return to_engine, to_server, heard

    def _drain_output(self) -> bytes:
        """The frames of what the engine's pipe still holds once it exited
        (at most :data:`EXIT_DRAIN_READS` reads: a child it left may write on)."""
        frames = b""
        for _ in range(EXIT_DRAIN_READS):
            data = _read(self.stdout)
            if data is None or self.relay.output_end is not None:
                break
            frames += self.relay.engine_data(data)
        self.relay.output_end = self.relay.output_end or "closed"
        return frames

    def _write_server(self, data: bytes) -> bytes:
        """``data`` to the socket, as much as it takes now; the rest."""
        return _write(self.sock, data, self.relay.write_failed)

    def _write_engine(self, data: bytes) -> bytes:
        """``data`` to the engine's input, as much as it takes now; the rest."""
        return _write(self.stdin, data, self.relay.input_closed)


def _register(poller: select.poll, interest: dict[int, int],
              wanted: Iterable[tuple[int, int]]) -> None:
    """Make ``poller`` wait for the ``wanted`` events of each fd (none: not
    registered); ``interest`` holds what is registered, so an unchanged fd
    costs no system call."""
    for fd, events in wanted:
        if interest[fd] != events:
            if events:
                poller.register(fd, events)
            else:
                poller.unregister(fd)
            interest[fd] = events


def _write(fd: int, data: bytes, failed: Callable[[], object]) -> bytes:
    """``data`` to the non-blocking ``fd``, as much as it takes now; the rest
    (b"" after a failed write, told to ``failed``)."""
    try:
        sent = fdio.write_now(fd, data)
    except OSError:
        failed()
        return b""
    return data[sent:] if sent < len(data) else b""


def _read(fd: int) -> bytes | None:
    """One read that does not wait: the bytes (``b""``: the end, or an
    error such as a reset connection or a closed pipe), None when there is
    nothing now."""
    return fdio.read_now(fd, wire.READ_CHUNK)


def _drain(fd: int) -> bytes:
    """What the wake-up pipe holds."""
    woken = b""
    while chunk := fdio.read_now(fd, 64):  # (None: drained; b"": closed)
        woken += chunk
    return woken
