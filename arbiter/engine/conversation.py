"""The arbiter's conversation with one engine, over any transport (trio).

:class:`Engine` holds the protocol side of a running engine: the handshake,
its options, a new game, ``position``/``go`` and the ``bestmove`` that ends
a search, ``stop``, ``isready``, and every fault the engine commits on the
way.  It knows nothing of processes or pipes: it talks through a
:class:`~arbiter.engine.transport.Transport`, and checks every line both
ways with the sans-IO :class:`~protocol.session.EngineSession`.

* The engine's lines are read by the task that waits for an answer, when it
  waits (no reader task, no hand-off: one wake-up per reply).  What an engine
  wrote while nobody waited is taken in, without waiting, before its next
  command, so a second ``bestmove`` is never taken for the answer to the next
  ``go``: at most what a pipe can hold (:data:`CATCH_UP_READS`), so an engine
  that writes as fast as it is read cannot keep a command from going out,
  nor a deadline or a signal from acting (each read after the first is a
  checkpoint).
* ``info`` lines do not go through the session (they are allowed at any time
  and change no state): during a search they are kept, bounded, by a
  :class:`~arbiter.engine.info.SearchInfo` and parsed only when the match
  asks for :attr:`Reply.info` (the lazy ``info`` seam).
* A fault (the engine's end closed, a line that breaks the protocol, no
  answer to ``stop``) is recorded once as an :class:`EngineFault` with the
  time its evidence was read, and :attr:`Engine.on_fault` is called, so that
  whoever waits on *another* engine (the match) can be woken.  The match
  decides what a fault means for the game; this module only reports it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import trio

from arbiter.engine.config import EngineConfig, EngineTimeouts
from arbiter.engine.errors import EngineFault, EngineFaultError, EngineStartError, FaultKind
from arbiter.engine.info import Reply, SearchInfo
from arbiter.engine.transport import End, Received, Transport, TransportClosed
from protocol import limits
from protocol.codec import ProtocolError, is_info_line
from protocol.messages import (
    GAME_OPTION,
    ArbiterMessage,
    BestMove,
    Go,
    Info,
    IsReady,
    OptionDecl,
    Quit,
    ReadyOk,
    SetOption,
    SetPosition,
    Stop,
    Ugi,
    UgiNewGame,
    UgiOk,
)
from protocol.search import SearchLimits
from protocol.session import EngineSession, SessionState

__all__ = ["Engine", "MAX_QUEUED_MESSAGES", "CATCH_UP_READS"]

#: How many non-``info`` messages may be read and not yet taken before the
#: engine is said to flood.  ``info`` lines never queue (:class:`SearchInfo`
#: keeps a bounded few); the rest are answers to what the arbiter asked,
#: plus a handshake's options.
MAX_QUEUED_MESSAGES = limits.MAX_OPTIONS + 64

#: The most characters of an engine's line quoted in a start error (what it
#: wrote instead of ``ugiok`` or ``readyok``): enough to recognise it.
LAST_LINE_SHOWN = 80

#: The most reads (chunks) taken without waiting before the arbiter's next
#: command (:meth:`Engine._catch_up`).  What an engine wrote while nobody read
#: it is at most what its pipe holds: 1 MiB at most for an unprivileged
#: process (Linux's ``pipe-max-size``), 16 reads of the pipe transport's
#: 64 KiB chunk.  An engine that still has more is writing as fast as it is
#: read (``yes``): the rest is left to the next wait for an answer, which
#: reads under that wait's deadline.
CATCH_UP_READS = 16


class Engine:
    """A running engine, seen through its conversation.  Made by
    :func:`arbiter.engine.open_engine` (or by whoever opens a transport to an
    engine); one task at a time talks to it.

    After the handshake :attr:`name` is the configured name or the engine's
    ``id name``; :attr:`id_name`, :attr:`author` and :attr:`options` are what
    it declared.  :attr:`fault` is set once when the engine breaks;
    :attr:`on_fault` (if set) is then called.  :attr:`pid` and
    :attr:`log_path` describe the process behind the transport, when there
    is one.  Whoever made the transport calls :meth:`transport_lost` when it
    learns the other end is gone (a process's exit)."""

    def __init__(self, config: EngineConfig, timeouts: EngineTimeouts, transport: Transport, *,
                 pid: int | None = None, log_path: str | None = None):
        self.config = config
        self.timeouts = timeouts
        self.transport = transport
        self.session = EngineSession()
        self.fault: EngineFault | None = None
        self.on_fault: Callable[[Engine], None] | None = None
        self.pid = pid
        self.log_path = log_path
        self._pending: deque[object] = deque()  # messages read, not yet taken
        self._reading = False  # a task waits in transport.receive()
        #: the info lines of the search in progress, taken by the bestmove
        #: that ends it (none are kept while no search is on)
        self._info = SearchInfo()
        self._ready_asked = 0.0  # when start_new_game() wrote its isready
        self._lines_at_ready = 0  # _lines_read then
        self._lines_read = 0  # lines read on its stdout so far (for messages)
        self._last_line = ""  # the last of them
        #: the last :class:`EngineStartError` this conversation raised
        self.start_error: EngineStartError | None = None
        #: when stop() was written in the current search (None: not yet):
        #: finish_search() then waits out that stop's timeout, not a second one
        self._stopped_at: float | None = None

    # -- identity ----------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.config.name or self.session.name or self.config.label

    @property
    def id_name(self) -> str | None:
        return self.session.name

    @property
    def author(self) -> str | None:
        return self.session.author

    @property
    def options(self) -> dict[str, OptionDecl]:
        return self.session.options

    @property
    def searching(self) -> bool:
        return self.session.state is SessionState.SEARCHING

    @property
    def healthy(self) -> bool:
        """Running, not faulted, not searching: fit for another game."""
        return self.fault is None and self.transport.alive and self.session.state is SessionState.IDLE

    # -- starting ----------------------------------------------------------------------

    async def handshake(self) -> None:
        """``ugi`` until ``ugiok``, within the handshake timeout; then the
        configured options (:meth:`configure`).  :class:`EngineStartError`
        if it fails."""
        with trio.move_on_after(self.timeouts.handshake) as scope:
            try:
                await self.send(Ugi())
                while type(await self._receive()) is not UgiOk:
                    pass
            except EngineFaultError as exc:
                raise self._start_error(f"{exc.reason} during the handshake") from None
        if scope.cancelled_caught:
            raise self._start_error(f"no ugiok within {self.timeouts.handshake:g} s of ugi "
                                    f"({self._what_it_wrote(0)})")
        await self.configure(self.config.options)

    def _what_it_wrote(self, since: int) -> str:
        """What the engine wrote on stdout after its ``since``-th line, for a
        message about an answer that never came: how many lines and the
        last one (escaped, clipped).  An engine that speaks another protocol
        (``uciok``) or floods (``y``) is recognised by it."""
        count = self._lines_read - since
        if not count:
            return "it wrote nothing" if not since else "it wrote nothing since"
        last = self._last_line
        if len(last) > LAST_LINE_SHOWN:
            last = last[:LAST_LINE_SHOWN] + "..."
        return f"it wrote {count} line(s), the last {last!r}"

    def _start_error(self, reason: str) -> EngineStartError:
        """The :class:`EngineStartError` of this engine for ``reason``,
        remembered as :attr:`start_error` (whoever runs the process adds
        what it knows: :func:`arbiter.engine.open_engine` its stderr)."""
        self.start_error = EngineStartError(self.name, reason)
        return self.start_error

    async def configure(self, options: dict[str, str | None]) -> None:
        """Send ``setoption`` for each option, all validated against the
        declared options *before* any is sent; EngineStartError names the
        offending option."""
        messages: list[ArbiterMessage] = []
        for name, value in options.items():
            decl = self.session.option(name)
            if decl is None:
                declared = ", ".join(self.options) or "none"
                raise self._start_error(f"has no option {name!r} (it declares: {declared})")
            try:
                value = decl.validate_value(None if value is None else str(value))
            except ProtocolError as exc:
                raise self._start_error(f"bad value for {exc}") from None
            messages.append(SetOption(decl.name, value))
        if messages:
            await self._send_or_start_error(messages)

    async def new_game(self, game: str) -> None:
        """Select ``game`` (through the game option, if the engine declares one),
        send ``uginewgame``, and wait for ``readyok``: :meth:`start_new_game`
        then :meth:`wait_ready`."""
        await self.start_new_game(game)
        await self.wait_ready()

    async def start_new_game(self, game: str) -> None:
        """The writing half of :meth:`new_game`: the game option (if the engine
        declares one), ``uginewgame`` and ``isready``, without waiting for
        ``readyok`` (:meth:`wait_ready`), so that a match sets up both engines
        in one round trip.  :class:`EngineStartError` if the engine does not
        play ``game`` or cannot be written to within the ready timeout."""
        messages: list[ArbiterMessage] = []
        plays = self.session.plays(game)
        decl = self.session.game_option
        if plays is False:
            assert decl is not None
            raise self._start_error(
                f"does not play {game} (its {GAME_OPTION} option lists: {', '.join(decl.vars)})")
        if plays:
            assert decl is not None
            messages.append(SetOption(decl.name, decl.validate_value(game)))
        messages += [UgiNewGame(), IsReady()]
        self._ready_asked = trio.current_time()
        self._lines_at_ready = self._lines_read
        with trio.move_on_after(self.timeouts.ready):
            await self._send_or_start_error(messages)
            return
        raise self._start_error(f"could not write to it within {self.timeouts.ready:g} s")

    async def wait_ready(self) -> None:
        """The waiting half of :meth:`new_game`: ``readyok`` within the ready
        timeout of :meth:`start_new_game`'s ``isready``, else :class:`EngineStartError`."""
        await self._catch_up()
        with trio.CancelScope(deadline=self._ready_asked + self.timeouts.ready):
            await self._expect_readyok()
            return
        raise self._start_error(f"no readyok within {self.timeouts.ready:g} s of isready "
                                f"({self._what_it_wrote(self._lines_at_ready)})")

    async def ping(self) -> None:
        """``isready`` -> ``readyok`` within the ready timeout, else
        :class:`EngineStartError`.

        The arbiter pings only before a game's first ``go`` (:meth:`new_game`),
        where failing is a ``handshake-failure``: the game is not played
        (``specs/match.md`` §Terminations).  It never pings during a game."""
        with trio.move_on_after(self.timeouts.ready):
            await self._send_or_start_error([IsReady()])
            self._lines_at_ready = self._lines_read
            await self._expect_readyok()
            return
        raise self._start_error(f"no readyok within {self.timeouts.ready:g} s of isready "
                                f"({self._what_it_wrote(self._lines_at_ready)})")

    async def _expect_readyok(self) -> None:
        """Wait for ``readyok``, skipping other messages (the caller sets the
        deadline); a fault becomes :class:`EngineStartError`."""
        try:
            while type(await self._receive()) is not ReadyOk:
                pass
        except EngineFaultError as exc:
            raise self._start_error(f"{exc.reason} (waiting for readyok)") from None

    async def _send_or_start_error(self, messages: list[ArbiterMessage]) -> None:
        try:
            await self.send(*messages)
        except EngineFaultError as exc:
            raise self._start_error(exc.reason) from None

    # -- searching ---------------------------------------------------------------------

    async def go(self, position: SetPosition | bytes, limits: Go | SearchLimits,
                 mover_is_p1: bool = True) -> float:
        """Write ``position`` and the ``go`` for ``limits`` in one write;
        returns the time the write finished (the clock starts then).

        ``position`` may be ready-made bytes (the match's
        :class:`protocol.search.PositionLine`); :class:`~protocol.search.SearchLimits`
        are formatted by the session (``mover_is_p1`` says whose ``p1time``
        is whose).  The caller bounds the time (a full pipe blocks)."""
        received = self.transport.receive_nowait() if self.fault is None else None
        if received is not None:  # (the check inline: it runs before every go)
            await self._catch_up(received)
        session = self.session
        if self.fault is not None:  # (its session refuses all but quit: say so first)
            raise EngineFaultError(self.name, self.fault)
        data = position if isinstance(position, bytes) else session.send(position)
        if isinstance(limits, Go):
            data += session.send(limits)
        else:
            data += session.send_go(limits, mover_is_p1)
        await self._write(data)
        self._stopped_at = None
        return trio.current_time()

    async def wait_bestmove(self) -> Reply:
        """The search's ``bestmove`` (the caller sets the deadline)."""
        while True:
            msg = await self._receive()
            if type(msg) is Reply:
                return msg

    async def stop(self) -> None:
        await self.send(Stop())
        self._stopped_at = trio.current_time()

    async def finish_search(self) -> bool:
        """After a game that ended during this engine's search: ``stop`` and
        drain the ``bestmove`` so the engine can be reused.  False (and the
        engine marked faulted) if it does not answer within the stop timeout.

        A search already told to ``stop`` (a game ended by a stall: the match
        sent it and waited its grace) is not told again: the bestmove is
        waited for until that stop's timeout ends, so a stalled engine costs
        one stop timeout, not two."""
        if not self.searching or self.fault is not None:
            return self.fault is None
        stopped = self._stopped_at
        deadline = (trio.current_time() if stopped is None else stopped) + self.timeouts.stop
        with trio.move_on_at(deadline):
            try:
                if stopped is None:
                    await self.stop()
                await self.wait_bestmove()
                return True
            except EngineFaultError:
                return False
        self._set_fault(FaultKind.STALL, f"did not answer stop within {self.timeouts.stop:g} s")
        return False

    # -- writing -----------------------------------------------------------------------

    async def send(self, *messages: ArbiterMessage) -> None:
        """Write messages (checked by the session first) in one write.

        A closed input becomes a ``crash`` fault and :class:`EngineFaultError`.
        The caller bounds the time (a full pipe blocks)."""
        await self._catch_up()
        if self.fault is not None:  # (a broken engine's session refuses all but quit)
            raise EngineFaultError(self.name, self.fault)
        await self._write(b"".join([self.session.send(msg) for msg in messages]))
        if any(type(msg) is Go for msg in messages):
            self._stopped_at = None  # a new search: not stopped yet

    async def _write(self, data: bytes) -> None:
        if self.fault is not None:
            raise EngineFaultError(self.name, self.fault)
        try:
            await self.transport.send(data)
        except TransportClosed:
            self._set_fault(FaultKind.CRASH, "closed its input (exited?) while the arbiter was writing")
            assert self.fault is not None
            raise EngineFaultError(self.name, self.fault) from None

    def goodbye(self) -> bytes | None:
        """The conversation's last line (``quit``), for whoever ends the engine
        to write; the session is closed from here on, so the engine's exit is
        no fault.  None if it was closed already."""
        if self.session.state is SessionState.CLOSED:
            return None
        return self.session.send(Quit())

    # -- reading -----------------------------------------------------------------------

    async def _receive(self) -> object:
        """The next message (reading as needed); EngineFaultError once the
        engine has faulted and every message before the fault is taken."""
        while True:
            if self._pending:
                return self._pending.popleft()
            if self.fault is not None:
                raise EngineFaultError(self.name, self.fault)
            self._reading = True
            try:
                lines, now, end = await self.transport.receive()
            finally:
                self._reading = False
            self._take_lines(lines, now)
            if end is not None:
                await self._take_end(end, now)

    async def _catch_up(self, received: Received | None = None) -> None:
        """Take in whatever the engine wrote while nobody waited on it,
        without waiting (a stray ``bestmove`` faults now, not later);
        ``received``: what the caller took from the transport already.

        At most :data:`CATCH_UP_READS` reads, with a checkpoint between two
        (the caller's deadline and the command line's signals act there): an
        engine that writes as fast as it is read cannot hold the arbiter here."""
        reads = 0
        while self.fault is None:
            if received is None:
                if reads:  # more than one chunk: the engine may be flooding
                    if reads >= CATCH_UP_READS:
                        return
                    await trio.lowlevel.checkpoint()
                received = self.transport.receive_nowait()
                if received is None:
                    return
            reads += 1
            lines, now, end = received
            received = None
            self._take_lines(lines, now)
            if end is not None:
                await self._take_end(end, now)

    async def transport_lost(self) -> None:
        """The other end is gone (the process exited).  If nobody is reading
        (the engine is idle, or between reads), that is a crash now, and the
        opponent's wait is interrupted through :attr:`on_fault`; a reader sees
        it as the end of the stream instead."""
        if self._reading or self.session.state is SessionState.CLOSED:
            return
        await self._catch_up()  # what it said before it went comes first
        if self.fault is None:
            self._set_fault(FaultKind.CRASH, await self.transport.end_detail(), searching=self.searching)

    def _take_lines(self, lines: list[str], now: float) -> None:
        if lines:
            self._lines_read += len(lines)
            self._last_line = lines[-1]
        for line in lines:
            if self.fault is not None:
                return  # a faulted engine's output is dropped
            self._take_line(line, now)

    async def _take_end(self, end: End, now: float) -> None:
        """The stream ended (read at ``now``): a fault, unless one came first."""
        if self.fault is not None:
            return
        if end is End.OVERLONG:
            self._set_fault(FaultKind.PROTOCOL_ERROR,
                            f"wrote a line longer than {limits.MAX_LINE_BYTES} bytes", now=now)
        else:
            searching = self.searching
            self._set_fault(FaultKind.CRASH, await self.transport.end_detail(), now=now, searching=searching)

    def _take_line(self, line: str, now: float) -> None:
        session = self.session
        searching = session.state is SessionState.SEARCHING
        if is_info_line(line):  # the lazy info seam: kept raw, parsed when asked for (Reply.info)
            if searching:
                self._info.keep(line)
            return
        try:
            msg = session.receive(line)
        except ProtocolError as exc:
            if exc.command == "info":
                return  # a malformed info line costs nothing: specs/match.md §Engine errors
            self._set_fault(FaultKind.PROTOCOL_ERROR, f"wrote {line[:200]!r}: {exc}", now=now,
                            command=exc.command, searching=searching, line=line[:200])
            return
        if msg is None:
            return
        if isinstance(msg, Info):  # an info line with leading blanks
            if searching:
                self._info.keep(line)
            return
        if len(self._pending) >= MAX_QUEUED_MESSAGES:
            self._set_fault(FaultKind.PROTOCOL_ERROR, f"flooded the arbiter with more than "
                            f"{MAX_QUEUED_MESSAGES} unrequested messages", now=now)
            return
        if type(msg) is BestMove:
            self._pending.append(Reply(msg.move, now, self._info.take(), msg.ponder))
        else:
            self._pending.append(msg)

    def _set_fault(self, kind: FaultKind, detail: str, *, now: float | None = None,
                   command: str | None = None, searching: bool = False,
                   line: str | None = None) -> None:
        if self.fault is not None:
            return
        self.fault = EngineFault(kind, detail, trio.current_time() if now is None else now,
                                 command, searching, line)
        self.transport.note(f"fault: {kind}: {detail}")
        if self.on_fault is not None:
            self.on_fault(self)
