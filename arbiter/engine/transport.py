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

Beyond lines, a transport says what a game needs of the connection (its
*seat*: a lag allowance, a lag figure per ply, whether it is detached, whose
clock a resumed search runs on); a pipe keeps :class:`Transport`'s defaults.
"""

from __future__ import annotations

import abc
import enum
import select

import trio

from arbiter.engine.fdio import read_now, read_some, write_all, write_now
from arbiter.engine.iolog import IOLog
from arbiter.engine.process import EngineProcess
from protocol.codec import LineSplitter, ProtocolError

__all__ = ["Seat", "Transport", "Received", "End", "TransportClosed", "PipeTransport"]


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


class Seat:
    """What a game needs of an engine's connection beyond lines
    (``specs/wire.md`` §Clock fairness, §Disconnect and resume): a lag
    allowance and lag figures, whether it is away, whose clock a resumed
    search runs on.  This class is a local engine's seat: none of it (no lag
    allowance, never detached); a remote connection overrides it.  Typed
    here rather than probed for, so that the match treats every engine the
    same way."""

    @property
    def lag_allowance(self) -> float | None:
        """None when the replies' times are the arbiter's own readings (a
        local engine).  Otherwise the most a lag compensation can take off
        the time of the search in progress (seconds, read once its ``go``
        went; 0 when none can): the match waits that much past the clock's
        deadline for its ``bestmove``, whose time is credited (specs/wire.md
        §Clock fairness).  Whether it is None never changes."""
        return None

    @property
    def last_lag(self) -> tuple[int | None, int] | None:
        """The round trip (ms, None: not measured yet) and the lag
        compensation (ms) of the last ``bestmove`` received, for its ply's
        record; None without lag compensation."""
        return None

    @property
    def detached(self) -> bool:
        """The connection dropped and the transport waits for the engine to
        come back (its clock runs meanwhile; specs/wire.md §Disconnect and
        resume).  Never for a pipe."""
        return False

    def seat(self, plays_p1: bool) -> None:
        """A game begins in which this engine plays p1 (``plays_p1``) or p2:
        a search resumed after a reconnect gives the time away back on its
        own clock only.  Nothing to do for a pipe."""
        return None

    def game_over(self, game: str, result: str, termination: str, detail: str) -> None:
        """Tell the engine's side that a game of its engine ended (information
        only, after the game is stored).  Nothing to do for a pipe: the
        engine itself is told nothing beyond the protocol."""
        return None


class Transport(Seat, abc.ABC):
    """A connection to one engine, as the conversation and the match use it.
    One task at a time sends, one receives.

    The abstract methods are the conversation's (lines both ways); the
    :class:`Seat` is the match's (a pipe keeps a local engine's)."""

    @abc.abstractmethod
    async def send(self, data: bytes) -> None:
        """Write ``data`` (whole lines) entirely, or raise :class:`TransportClosed`.
        The caller bounds the time (an engine that does not read blocks it)."""

    @abc.abstractmethod
    async def receive(self) -> Received:
        """The next chunk's lines (at least one line, or an ``end``).  Once
        the end has been returned, the stream is over: do not call again."""

    @abc.abstractmethod
    def receive_nowait(self) -> Received | None:
        """What has been written already, without waiting; None if nothing."""

    @abc.abstractmethod
    async def end_detail(self) -> str:
        """Why the stream ended, completing "the engine ...": ``exited
        (status 3)``, ``closed its output but is still running``."""

    @abc.abstractmethod
    def note(self, text: str) -> None:
        """Record an event of the arbiter's (``#`` in the I/O log, if one is kept)."""

    @property
    @abc.abstractmethod
    def alive(self) -> bool:
        """The other end is still there, as far as is known without asking."""


#: How long :meth:`PipeTransport.end_detail` waits for the process to exit
#: after its output ended (seconds): an engine that closed its output is
#: usually exiting.
EXIT_WAIT = 0.2


class PipeTransport(Transport):
    """An engine process's stdin and stdout, used through their raw file
    descriptors.

    The seam of the arbiter's pipe I/O: the raw-fd reads and writes of
    :mod:`arbiter.engine.fdio` instead of trio's streams, which pass through
    the scheduler more often per reply (the arbiter's cost per ply is
    measured against the bare pipe round trip in ``bench/overhead.py``).  ``stdin`` and ``stdout`` are the process's trio
    pipe streams (non-blocking fds); ``process``, if given, says how an
    ended stream is explained (its exit status)."""

    def __init__(self, stdin: trio.abc.SendStream, stdout: trio.abc.ReceiveStream, *,
                 log: IOLog | None = None, process: EngineProcess | None = None):
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
            sent = write_now(self._stdin_fd, data)  # (usually all: no coroutine made)
            if sent < len(data):
                await write_all(self._stdin_fd, data[sent:])
        except (trio.ClosedResourceError, OSError):
            raise TransportClosed("the engine's input is closed") from None

    async def receive(self) -> Received:
        while True:
            if self._ended or (self._process is not None and self._process.closed):
                return [], trio.current_time(), End.CLOSED
            data = await read_some(self._stdout_fd)  # (b"" too when aclose closed the pipe)
            received = self._split(data, trio.current_time())
            if received[0] or received[2] is not None:
                return received

    def receive_nowait(self) -> Received | None:
        if self._ended or (self._process is not None and self._process.closed):
            return None
        if not self._poller.poll(0):
            return None
        data = read_now(self._stdout_fd)
        if data is None:
            return None
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
