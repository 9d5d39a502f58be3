"""How the arbiter's lines reach an engine and the engine's lines come back.

:class:`Transport` is what the conversation (:class:`arbiter.engine.Engine`)
needs of a connection, and all it knows of one: send bytes, receive the
lines of the next chunk read (with the time it was read, and whether the
stream ended there), and say why it ended.  :class:`PipeTransport` is the
one for an engine process's pipes; a network connection is another
implementation of the same few methods, and the conversation does not change.

A transport splits what it reads into lines with the protocol's
:class:`~protocol.codec.LineSplitter` (so overlong lines, CRLF, invalid UTF-8
and a partial last line are dealt with the same way on every transport) and
is the one place that writes the lines of both directions to the I/O log.
"""

from __future__ import annotations

import enum
import os
import select
from typing import Protocol

import trio

from arbiter.engine.process import EngineProcess, IOLog
from protocol.codec import LineSplitter, ProtocolError

__all__ = ["Transport", "Received", "End", "TransportClosed", "PipeTransport"]


class End(enum.Enum):
    """Why an engine's stream of lines ended."""

    CLOSED = "closed"  # the end of its output (or the connection)
    OVERLONG = "overlong"  # a line over the length limit: what follows cannot be trusted


#: What a transport gives for one chunk read: its lines, when it was read
#: (``trio.current_time()``), and why the stream ended with it (after these
#: lines), or None.  (A plain tuple: one is made per reply.)
Received = tuple[list[str], float, End | None]


class TransportClosed(Exception):
    """The engine's end cannot take what is sent (it exited, or closed its input)."""


class Transport(Protocol):
    """A connection to one engine, as the conversation uses it.  One task at a
    time sends, one receives."""

    async def send(self, data: bytes) -> None:
        """Write ``data`` (whole lines) entirely, or raise :class:`TransportClosed`.
        The caller bounds the time (an engine that does not read blocks it)."""

    async def receive(self) -> Received:
        """The next chunk's lines (at least one line, or an ``end``).  Once
        the end has been returned, the stream is over: do not call again."""

    def receive_nowait(self) -> Received | None:
        """What has been written already, without waiting; None if nothing."""

    async def end_detail(self) -> str:
        """Why the stream ended, completing "the engine ...": ``exited
        (status 3)``, ``closed its output but is still running``."""

    def note(self, text: str) -> None:
        """Record an event of the arbiter's (``#`` in the I/O log, if one is kept)."""

    @property
    def alive(self) -> bool:
        """The other end is still there, as far as is known without asking."""

    def lag_allowance(self) -> float | None:
        """How much longer than its clock's deadline a search's ``bestmove``
        may be waited for over this connection (seconds; read again once the
        ``go`` was written), or None where there is no lag to allow (a local
        pipe: the match then keeps one deadline for the whole game).  A remote
        engine's is its lag quota's (specs/wire.md §Clock fairness)."""


#: Bytes read from stdout at a time (one pipe's capacity).
READ_CHUNK = 1 << 16
#: How long :meth:`PipeTransport.end_detail` waits for the process to exit
#: after its output ended (seconds): an engine that closed its output is
#: usually exiting.
EXIT_WAIT = 0.2


class PipeTransport:
    """An engine process's stdin and stdout, used through their raw file
    descriptors.

    The seam of the arbiter's pipe I/O: one ``os.write`` on the non-blocking
    pipe (trio's ``send_all`` only when the pipe is full), and
    ``trio.lowlevel.wait_readable`` then ``os.read`` instead of trio's
    streams, which pass through the scheduler more often per reply (the
    arbiter's cost per ply is measured against the bare pipe round trip in
    ``bench/overhead.py``).  ``stdin`` and ``stdout`` are the process's trio
    pipe streams (non-blocking fds); ``process``, if given, says how an
    ended stream is explained (its exit status)."""

    def __init__(self, stdin: trio.abc.SendStream, stdout: trio.abc.ReceiveStream, *,
                 log: IOLog | None = None, process: EngineProcess | None = None):
        self._stdin = stdin
        self._stdin_fd: int = stdin.fileno()  # type: ignore[attr-defined]  # trio's pipe streams have it
        self._stdout_fd: int = stdout.fileno()  # type: ignore[attr-defined]
        self._log = log
        self._process = process
        self._splitter = LineSplitter()
        self._ended = False  # the end of the output was returned
        self._poller = select.poll()  # "anything to read?" without reading
        self._poller.register(self._stdout_fd, select.POLLIN | select.POLLHUP | select.POLLERR)

    @classmethod
    def of(cls, process: EngineProcess) -> PipeTransport:
        """The transport over a spawned :class:`EngineProcess`'s pipes."""
        pipes = process.process
        assert pipes is not None and pipes.stdin is not None and pipes.stdout is not None
        return cls(pipes.stdin, pipes.stdout, log=process.io_log, process=process)

    @property
    def alive(self) -> bool:
        return self._process is None or self._process.running

    def lag_allowance(self) -> None:
        return None  # a pipe has no network lag to allow for

    def note(self, text: str) -> None:
        if self._log is not None:
            self._log.write("#", text)

    async def send(self, data: bytes) -> None:
        # No checkpoint when the write goes through at once (the usual case):
        # the caller's next wait is one.
        if self._log is not None:
            for line in data.decode("utf-8", "replace").splitlines():
                self._log.write(">", line)
        try:
            try:
                sent = os.write(self._stdin_fd, data)
            except BlockingIOError:
                sent = 0
            if sent < len(data):
                await self._stdin.send_all(data[sent:])
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            raise TransportClosed("the engine's input is closed") from None

    async def receive(self) -> Received:
        while True:
            if self._ended or (self._process is not None and self._process.closed):
                return [], trio.current_time(), End.CLOSED
            try:
                await trio.lowlevel.wait_readable(self._stdout_fd)
                data = os.read(self._stdout_fd, READ_CHUNK)
            except BlockingIOError:
                continue
            except (trio.ClosedResourceError, OSError):
                data = b""
            received = self._split(data, trio.current_time())
            if received[0] or received[2] is not None:
                return received

    def receive_nowait(self) -> Received | None:
        if self._ended or (self._process is not None and self._process.closed):
            return None
        if not self._poller.poll(0):
            return None
        try:
            data = os.read(self._stdout_fd, READ_CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            data = b""
        return self._split(data, trio.current_time())

    def _split(self, data: bytes, now: float) -> Received:
        """The lines of ``data`` (b"": the end of the output), logged."""
        splitter = self._splitter
        end = None
        if not data:
            end = End.CLOSED
            self._ended = True
            try:
                last = splitter.close()
            except ProtocolError:
                last = None
            lines = [] if last is None else [last]  # a partial last line still counts
        else:
            try:
                lines = splitter.feed(data)  # one whole line, the usual chunk, without a loop
            except ProtocolError as exc:
                lines = exc.lines
                end = End.OVERLONG
        log = self._log
        if log is not None:
            for line in lines:
                log.write("<", line)
            if end is End.OVERLONG:
                log.write("<", f"[line over {splitter.max_line_bytes} bytes, discarded]")
        return lines, now, end

    async def end_detail(self) -> str:
        if self._process is None:
            return "closed its output"
        status = await self._process.wait_exit(EXIT_WAIT)
        return "closed its output but is still running" if status is None else f"exited ({status})"
