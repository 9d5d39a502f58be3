"""An engine process under examination: the conformance checker's probe.

:class:`Probe` runs an engine the way a match does (an
:class:`arbiter.engine.EngineProcess`: its own process group, stderr
drained, exit watched, the whole group ended by ``quit``, SIGTERM and SIGKILL)
but holds a different conversation: it reads stdout itself (the raw-fd reads of :mod:`arbiter.engine.fdio`) through the
protocol's :class:`~protocol.codec.LineSplitter`, keeps a transcript of every
line both ways, tracks the protocol with its own
:class:`~protocol.session.EngineSession`, and hands every message to the
checks -- also the ones a match would treat as a fault -- so that
the checks (``arbiter/check/checks_*.py``) can judge them.  What the whole-run checks judge
(``info`` lines, floods, unasked lines, flush problems) is gathered in an
:class:`Evidence` shared by every process of a run.  Memory is bounded
whatever the engine writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import trio

from arbiter.engine import EngineConfig, EngineProcess, EngineTimeouts, stderr_clause
from arbiter.engine.fdio import read_some, write_all
from arbiter.games import IllegalMoveError, Position
from arbiter.procs import proc_table
from protocol.codec import LineSplitter, ProtocolError, parse_engine_line
from protocol.messages import ArbiterMessage, BestMove, Go, Info, OptionDecl
from protocol.session import EngineSession, SessionState

__all__ = ["Line", "Received", "Search", "Evidence", "Gone", "Probe", "pv_problem",
           "leftovers", "describe_fault", "clip",
           "FLOOD_LINES", "FLOOD_LINES_PER_S", "FLOOD_BYTES", "FLOOD_BYTES_PER_S"]

#: How much ``info`` output one search may produce before it counts as a flood:
#: a base allowance plus a rate (specs/check.md §output.flood).
FLOOD_LINES = 200
FLOOD_LINES_PER_S = 1000
FLOOD_BYTES = 256 * 1024
FLOOD_BYTES_PER_S = 1024 * 1024
#: ``info`` lines parsed (and pv-checked) per search; the rest are only counted.
INFO_PARSED_PER_SEARCH = 200
#: ``info`` lines per search kept in the transcript (the first ones).
INFO_KEPT_PER_SEARCH = 12
#: Transcript and message caps per process (a flooding engine costs bounded memory).
MAX_TRANSCRIPT = 50_000
MAX_RECEIVED = 20_000
#: Seconds of grace (after ``quit``, after SIGTERM) for an engine already known broken.
HURRIED_GRACE = 0.2


@dataclass
class Line:
    """One transcript line: ``>`` sent, ``<`` read, ``#`` what the checker did or saw."""

    process: int
    at: float  # trio.current_time()
    rel: float  # seconds since the process started
    direction: str  # ">", "<", "#"
    text: str

    def render(self) -> str:
        return f"[p{self.process} {self.rel:8.3f}] {self.direction} {self.text}"


@dataclass
class Received:
    """A non-``info`` line from the engine, parsed, with what was wrong with it."""

    line: Line
    message: object | None  # an EngineMessage, or None (blank/unknown/malformed)
    command: str | None  # its first token
    error: str | None = None  # malformed: the codec's message
    violation: str | None = None  # well-formed but not allowed now (the session's message)


@dataclass
class Search:
    """One ``go``: where, when, and what the engine said during it."""

    check: str
    position: Position
    go: Go
    sent_at: float
    info_lines: int = 0
    info_bytes: int = 0
    ended_at: float | None = None
    go_line: Line | None = None


@dataclass
class Evidence:
    """What the aggregate checks judge, collected over every process of a run."""

    searches: list[Search] = field(default_factory=list)
    info_total: int = 0
    info_errors: list[tuple[Line, str]] = field(default_factory=list)
    pv_problems: list[tuple[Line, str]] = field(default_factory=list)
    pv_checked: int = 0
    violations: list[tuple[Line, str]] = field(default_factory=list)
    floods: list[tuple[Line | None, str]] = field(default_factory=list)
    flush: list[tuple[list[Line], str]] = field(default_factory=list)
    idle_info: int = 0


class Gone(Exception):
    """The engine crashed or broke the protocol beyond repair (its fault)."""

    def __init__(self, detail: str):
        self.detail = detail
        super().__init__(detail)


def clip(text: str, width: int = 300) -> str:
    return text if len(text) <= width else text[:width] + f"... [{len(text) - width} more characters]"


def is_info(line: str) -> bool:
    return line.startswith("info") and (len(line) == 4 or line[4] in " \t\r")


class Probe:
    """An engine process whose every line is kept and judged, not acted upon.

    The process itself is an :class:`~arbiter.engine.EngineProcess`: started in
    its own process group with stderr drained and its exit watched, and
    ended by :meth:`EngineProcess.aclose` (``quit``, grace, SIGTERM, SIGKILL to the
    group).  What differs from a match is the conversation: this probe reads
    stdout itself (through the codec's :class:`LineSplitter`), keeps a
    transcript, tracks the protocol with its own :class:`EngineSession` and
    hands every message to the checks, including those a match would treat
    as a fault, so that the checks can judge them."""

    def __init__(self, number: int, config: EngineConfig, timeouts: EngineTimeouts,
                 log_dir: str | None, evidence: Evidence):
        self.number = number
        self.engine = EngineProcess(config, timeouts, log_dir)
        self.session = EngineSession(tolerant=True)
        self.evidence = evidence
        self.pid: int | None = None
        self.fault: str | None = None
        self.lines: list[Line] = []
        self.dropped_lines = 0
        self.received: list[Received] = []
        self.cursor = 0
        self.search: Search | None = None
        self.dirty = False  # the checker left it in a state it cannot vouch for
        self.game_selected = False
        self.closing = False
        self.before_ugi: list[Received] = []
        self.arrival = trio.Event()
        self._started_at = 0.0
        self._idle_info = 0
        self._idle_flooded = False

    @property
    def id_name(self) -> str | None:
        return self.session.name

    @property
    def author(self) -> str | None:
        return self.session.author

    @property
    def options(self) -> dict[str, OptionDecl]:
        return self.session.options

    # -- the process -----------------------------------------------------------------------

    async def start(self, nursery: trio.Nursery) -> None:
        """Start the process (EngineError if it cannot be) and the stdout reader."""
        engine = self.engine
        await engine.spawn(nursery)  # this probe reads stdout itself
        self.pid = engine.pid
        self._started_at = engine.started_at
        nursery.start_soon(self._read_stdout)

    async def stderr_clause(self) -> str:
        """The end of the engine's stderr as the end of a message (``"; its
        last lines on stderr: ..."``), or "" if it wrote none: why an engine
        that failed to start did (specs/check.md §startup.quiet)."""
        return stderr_clause(await self.engine.last_words())

    @property
    def exit_status(self) -> str | None:
        """How the process ended (without reaping it), or None while it runs."""
        return self.engine.exit_status()

    async def wait_exit(self, timeout: float) -> str | None:  # noqa: ASYNC109 - None at the timeout is an answer
        return await self.engine.wait_exit(timeout)

    async def aclose(self, hurry: bool = False) -> None:
        """End the process and its whole group, then stop reading its pipes.

        ``hurry``: the engine is known to be broken (hung, crashed, owing an
        answer), so its ``quit`` gets a short grace instead of the full one:
        the checker has already waited for it once."""
        self.closing = True  # its end of output is no news now
        with trio.CancelScope(shield=True):
            await self.engine.aclose(grace=HURRIED_GRACE if hurry else None)
            process = self.engine.process
            if process is not None:  # a child outside the group could hold them open
                for stream in (process.stdout, process.stderr):
                    if stream is not None:
                        try:
                            await stream.aclose()
                        except (trio.ClosedResourceError, OSError):
                            pass

    # -- transcript ------------------------------------------------------------------------

    def note(self, direction: str, text: str, at: float | None = None) -> Line:
        at = trio.current_time() if at is None else at
        line = Line(self.number, at, at - self._started_at, direction, clip(text))
        if len(self.lines) < MAX_TRANSCRIPT:
            self.lines.append(line)
        else:
            self.dropped_lines += 1
        log = self.engine.io_log
        if log is not None and direction != "<":
            log.write(direction, text)
        return line

    def _pulse(self) -> None:
        self.arrival.set()
        self.arrival = trio.Event()

    def set_fault(self, detail: str, at: float | None = None) -> None:
        """The engine broke for good (``detail`` completes "the engine ...")."""
        if self.fault is None:
            self.fault = detail
            self.note("#", f"the engine {detail}", at)
            self._pulse()

    # -- writing ---------------------------------------------------------------------------

    async def send(self, *messages: ArbiterMessage) -> float:
        """Write messages in one write (checked by the session); the time the write ended."""
        try:
            data = b"".join(self.session.send(message) for message in messages)
        except ProtocolError as exc:  # the checker's own sequencing went wrong
            self.dirty = True
            raise Gone(f"cannot send now ({exc}); the engine is in state {self.session.state.value}") from None
        if self.fault is not None:
            raise Gone(f"the engine {self.fault}")
        now = trio.current_time()
        for message in messages:
            self.note(">", message.to_line(), now)
        process = self.engine.process
        assert process is not None and process.stdin is not None
        try:
            await write_all(process.stdin.fileno(), data)  # type: ignore[attr-defined]  # a pipe stream's
        except (trio.ClosedResourceError, OSError):
            status = await self.wait_exit(0.2)
            self.set_fault("closed its input" + (f" and exited ({status})" if status else ""))
            raise Gone(f"the engine {self.fault}") from None
        return trio.current_time()

    async def close_input(self) -> None:
        """Close the engine's stdin (the flush diagnosis: does output appear now?)."""
        self.note("#", "closed the engine's input")
        self.dirty = True
        process = self.engine.process
        if process is not None and process.stdin is not None:
            with trio.move_on_after(0.5):
                try:
                    await process.stdin.aclose()
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    pass

    # -- reading ---------------------------------------------------------------------------

    async def _read_stdout(self) -> None:
        process = self.engine.process
        assert process is not None and process.stdout is not None
        fd: int = process.stdout.fileno()  # type: ignore[attr-defined]  # trio's pipe streams have it
        splitter = LineSplitter()
        while True:
            data = await read_some(fd)  # (b"" too once the pipe is closed: the engine's end)
            now = trio.current_time()
            if not data:
                break
            if self.fault is not None:
                continue  # keep draining: a broken engine must not block on its pipe
            try:
                lines = splitter.feed(data)
            except ProtocolError as exc:
                for line in exc.lines:
                    self._take_line(line, now)
                detail = f"wrote a line longer than {splitter.max_line_bytes} bytes"
                self.evidence.floods.append((self.note("#", f"(a line over {splitter.max_line_bytes} "
                                                            "bytes, discarded)", now), f"the engine {detail}"))
                self.set_fault(detail, now)
                continue
            for line in lines:
                self._take_line(line, now)
                if self.fault is not None:
                    break
        if self.fault is None and not self.closing:
            try:
                last = splitter.close()
            except ProtocolError:
                last = None
            if last is not None:
                self._take_line(last, trio.current_time())
            status = await self.wait_exit(0.2)
            self.set_fault("closed its output but is still running" if status is None
                           else f"exited ({status})")

    def _take_line(self, line: str, now: float) -> None:
        log = self.engine.io_log
        if log is not None:
            log.write("<", line)
        if is_info(line):
            self._take_info(line, now)
            return
        if len(self.received) >= MAX_RECEIVED:
            self.evidence.floods.append((None, f"more than {MAX_RECEIVED} lines other than info"))
            self.set_fault(f"flooded the checker with more than {MAX_RECEIVED} lines", now)
            return
        entry = self.note("<", line, now)
        words = line.split()
        received = Received(entry, None, words[0] if words else None)
        try:
            received.message = parse_engine_line(line)
        except ProtocolError as exc:
            received.error = str(exc)
        if received.error is None and received.message is not None:
            try:
                self.session.receive(line)
            except ProtocolError as exc:
                received.violation = str(exc)
        if not self.session.ugi_sent:
            self.before_ugi.append(received)
        elif received.violation is not None or (received.error is not None
                                                and received.command not in ("bestmove", "id", "option")):
            self.evidence.violations.append((entry, received.violation or received.error or ""))
        if isinstance(received.message, BestMove) and received.violation is None and self.search:
            self.search.ended_at = now
            self.search = None
        self.received.append(received)
        self._pulse()

    def _take_info(self, line: str, now: float) -> None:
        evidence = self.evidence
        evidence.info_total += 1
        search = self.search
        count = search.info_lines + 1 if search is not None else self._idle_info + 1
        if search is not None:
            search.info_lines = count
            search.info_bytes += len(line) + 1
        else:
            self._idle_info = count
            evidence.idle_info += 1
            if count > FLOOD_LINES * 5 and not self._idle_flooded:
                self._idle_flooded = True
                evidence.floods.append((None, f"more than {FLOOD_LINES * 5} info lines outside any search"))
        if count <= INFO_KEPT_PER_SEARCH:
            entry: Line | None = self.note("<", line, now)
        else:
            if count == INFO_KEPT_PER_SEARCH + 1:
                self.note("#", "(further info lines of this search are counted, not shown)", now)
            entry = None
        if count > INFO_PARSED_PER_SEARCH:
            return
        if entry is None:
            entry = Line(self.number, now, now - self._started_at, "<", clip(line))
        try:
            info = parse_engine_line(line)
        except ProtocolError as exc:
            if len(evidence.info_errors) < 200:
                evidence.info_errors.append((entry, str(exc)))
            return
        if search is not None and isinstance(info, Info) and info.pv:
            evidence.pv_checked += 1
            problem = pv_problem(search.position, info.pv)
            if problem and len(evidence.pv_problems) < 200:
                evidence.pv_problems.append((entry, f"{problem} (searching {search.position.fen()})"))

    # -- waiting ---------------------------------------------------------------------------

    async def next(self, deadline: float) -> Received | None:
        """The next non-``info`` line read, or None at ``deadline``; Gone once
        the engine has crashed or broken the stream (after the lines before)."""
        while True:
            if self.cursor < len(self.received):
                self.cursor += 1
                return self.received[self.cursor - 1]
            if self.fault is not None:
                raise Gone(f"the engine {self.fault}")
            with trio.move_on_at(deadline) as scope:
                await self.arrival.wait()
            if scope.cancelled_caught:
                return None

    def skip_pending(self) -> None:
        self.cursor = len(self.received)

    @property
    def usable(self) -> bool:
        return (not self.dirty and self.fault is None and self.engine.process is not None
                and self.exit_status is None and self.session.state is SessionState.IDLE
                and self.session.pending_ready == 0 and not self.session.pending_queries)

    @property
    def started_at(self) -> float:
        return self._started_at


def describe_fault(probe: Probe) -> str:
    return f"the engine {probe.fault}"


def pv_problem(position: Position, pv: tuple[str, ...]) -> str | None:
    """Why ``pv`` is not a legal line from ``position``, or None."""
    pos = position
    for index, move in enumerate(pv, start=1):
        if pos.outcome() is not None:
            return f"pv move {index} {move!r} comes after the end of the game"
        try:
            pos = pos.play(move)
        except IllegalMoveError as exc:
            return f"pv move {index} {move!r} is illegal: {exc.reason}"
    return None


# --- processes: who is alive -------------------------------------------------------------------


def leftovers(root: int, earlier: set[int]) -> list[int]:
    """Live (non-zombie) processes of ``root``'s group or among ``earlier``
    descendants, other than ``root`` itself."""
    table = proc_table()
    alive = []
    for pid, (state, _, pgid) in table.items():
        if pid == root or state in ("Z", "X"):
            continue
        if pgid == root or pid in earlier:
            alive.append(pid)
    return sorted(alive)
