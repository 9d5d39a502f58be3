"""One engine process, seen from the arbiter (trio).

An :class:`Engine` owns one child process and everything that can go wrong
with it.  Engines are untrusted: they crash, hang, flood, lie and leave
children behind, so

* the process runs in its own process group (``start_new_session``), and
  shutdown ends the whole group: ``quit``, a grace period, SIGTERM, then
  SIGKILL (``specs/match.md`` §Engine processes);
* stdout is read through the sans-IO codec (:mod:`protocol`) by the task
  that waits for an answer, when it waits (no reader task, no hand-off: one
  wake-up per reply, which is what keeps the arbiter's cost per ply near the
  bare pipe round trip; see ``bench/overhead.py``).  Overlong lines, CRLF,
  invalid UTF-8, a partial last line and floods of ``info`` cost bounded
  memory: ``info`` lines are kept raw (the last few of the search) and parsed
  only when the ``bestmove`` comes.  What an engine wrote while nobody was
  waiting is read, without blocking, before its next command, so a second
  ``bestmove`` is never taken for the answer to the next ``go``;
* stderr is always drained by a task (to the I/O log, or discarded), so a
  chatty engine can never block on a full pipe;
* a task watches for the process's exit (a pidfd): an engine that dies while
  nobody waits on it faults at once, and :attr:`Engine.on_fault` wakes
  whoever waits on *another* engine (the opponent's search);
* a fault (the process closed its output, broke the protocol) is recorded
  once as an :class:`EngineFault` with the monotonic time it was seen.  The
  match decides what a fault means for the game; this module only reports it.

Use :func:`open_engine` as an async context manager: the process, its tasks
and its shutdown live inside it, so no path out (game over, error, Ctrl-C,
cancellation) leaves a process behind.
"""

from __future__ import annotations

import dataclasses
import os
import re
import select
import shlex
import signal
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TextIO

import trio

from arbiter.procs import live_group_members
from protocol import limits
from protocol.codec import LineSplitter, ProtocolError, parse_engine_line
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

__all__ = [
    "EngineConfig", "EngineTimeouts", "EngineFault", "EngineError", "EngineStartError",
    "EngineFaultError", "Reply", "Engine", "IOLog", "open_engine", "format_score",
]


# --- configuration --------------------------------------------------------------------


@dataclass
class EngineConfig:
    """How to run one engine (cutechess-cli's per-engine settings).

    ``cmd`` is a command line, split like a shell would (``"python3 -m
    sample_engines.mcts"``); ``args`` are appended.  ``tc`` is a time-control
    string (see :mod:`arbiter.clock`), None to use the match's.  ``name``
    None means: the engine's own ``id name`` once it has said it.
    """

    cmd: str
    name: str | None = None
    args: list[str] = field(default_factory=list)
    dir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    options: dict[str, str | None] = field(default_factory=dict)
    tc: str | None = None
    timemargin_ms: int = 0

    def argv(self) -> list[str]:
        try:
            words = shlex.split(self.cmd)
        except ValueError as exc:
            raise EngineStartError(self.label, f"bad command {self.cmd!r}: {exc}") from None
        if not words:
            raise EngineStartError(self.label, "empty command")
        return words + list(self.args)

    @property
    def label(self) -> str:
        """A name for messages before the engine has introduced itself."""
        if self.name:
            return self.name
        try:
            words = shlex.split(self.cmd)
        except ValueError:
            words = self.cmd.split()
        if not words:
            return "engine"
        if len(words) >= 3 and words[1] == "-m":
            return words[2]
        return os.path.basename(words[-1] if os.path.basename(words[0]).startswith("python") else words[0])

    def to_dict(self) -> dict:
        return {"cmd": self.cmd, "name": self.name, "args": list(self.args), "dir": self.dir,
                "env": dict(self.env), "options": dict(self.options), "tc": self.tc,
                "timemargin_ms": self.timemargin_ms}


@dataclass(frozen=True)
class EngineTimeouts:
    """Deadlines (seconds) for the conversation outside searches.  Defaults are
    the ones ``specs/protocol.md`` promises engine authors (:mod:`protocol.limits`)."""

    handshake: float = limits.HANDSHAKE_TIMEOUT_MS / 1000
    ready: float = limits.READY_TIMEOUT_MS / 1000
    stop: float = limits.STOP_TIMEOUT_MS / 1000
    quit_grace: float = limits.QUIT_GRACE_MS / 1000
    term_grace: float = 0.5


#: How many non-``info`` messages may be read and not yet taken before the
#: engine is said to flood.  ``info`` lines never queue (only the last few of
#: a search are kept); the rest are answers to what the arbiter asked, plus a
#: handshake's options.
MAX_QUEUED_MESSAGES = limits.MAX_OPTIONS + 64

_READ_CHUNK = 1 << 16
#: ``isready``'s line, written with ``uginewgame`` in one write (:meth:`Engine.new_game`)
_ISREADY_LINE = b"isready\n"
#: the one ``readyok`` message (it has no fields): no new object per game
_READY_OK = ReadyOk()


# --- faults and errors ------------------------------------------------------------------


@dataclass(frozen=True)
class EngineFault:
    """What went wrong with an engine, once, and when (``trio.current_time()``).

    ``kind`` is ``"crash"`` (exited, killed, or closed its stdout or stdin),
    ``"protocol-error"`` (a line that breaks the protocol, including an overlong
    line, a second ``bestmove`` and a malformed ``bestmove``; ``command`` says
    which command and ``searching`` whether a search was on, so the match can
    tell a malformed ``bestmove`` apart), or ``"stall"`` (no answer to ``stop``
    in :meth:`Engine.finish_search`)."""

    kind: str
    detail: str
    time: float
    command: str | None = None
    searching: bool = False
    line: str | None = None  # the offending line (clipped), when there is one


class EngineError(Exception):
    """Something an engine did (or failed to do); the message names the engine."""

    def __init__(self, engine: str, message: str):
        self.engine = engine
        self.reason = message
        super().__init__(f"engine {engine!r}: {message}")


class EngineStartError(EngineError):
    """The engine could not be started, failed its handshake, refused an option,
    or did not answer ``isready``: no game can be played with it."""


class EngineFaultError(EngineError):
    """Raised while waiting on an engine that has faulted (see :class:`EngineFault`)."""

    def __init__(self, engine: str, fault: EngineFault):
        self.fault = fault
        super().__init__(engine, fault.detail)


class Reply:
    """A ``bestmove`` and what came with it: when its line was read, and the
    fields of the search's ``info`` lines merged (latest value of each).

    The ``info`` lines are kept as read and merged (parsed) only when
    :attr:`info` is first asked for: the match asks after the opponent's
    ``go`` is written, while the opponent thinks, so an engine's chatter never
    delays the next move.  (A plain slotted class: one is made per ply.)"""

    __slots__ = ("move", "ponder", "time", "_lines", "_info")

    def __init__(self, move: str, time: float, info_lines: list[str | Info] | None = None,
                 ponder: str | None = None):
        self.move = move
        self.ponder = ponder
        self.time = time
        self._lines = info_lines
        self._info: dict[str, object] | None = None

    @property
    def info(self) -> dict[str, object]:
        info = self._info
        if info is None:
            info = self._info = merge_info(self._lines) if self._lines else {}
            self._lines = None
        return info

    def __repr__(self) -> str:
        return f"Reply({self.move!r}, time={self.time!r}, info={self.info!r})"


def merge_info(lines: Iterable[str | Info]) -> dict[str, object]:
    """The latest value of each field over a search's ``info`` lines (raw
    text, parsed here, or parsed already); malformed lines are ignored
    (``specs/match.md`` §Engine errors)."""
    merged: dict[str, object] = {}
    for item in lines:
        if isinstance(item, str):
            try:
                item = parse_engine_line(item)
            except ProtocolError:
                continue  # malformed info: ignored
            if not isinstance(item, Info):
                continue
        for key in _INFO_FIELDS:
            value = getattr(item, key)
            if value is not None and value != ():
                merged[key] = value
        if item.score_cp is not None or item.score_mate is not None or item.score_winprob is not None:
            for key in _SCORE_FIELDS:
                merged[key] = getattr(item, key)
    return merged


def format_score(info: dict[str, object]) -> str | None:
    """``"cp 35"``, ``"mate -3"`` or ``"winprob 0.62"`` from merged info fields."""
    if info.get("score_mate") is not None:
        return f"mate {info['score_mate']}"
    if info.get("score_cp") is not None:
        return f"cp {info['score_cp']}"
    if info.get("score_winprob") is not None:
        return f"winprob {info['score_winprob']:g}"
    return None


_INFO_FIELDS = ("depth", "seldepth", "nodes", "nps", "time", "pv")
_SCORE_FIELDS = ("score_cp", "score_mate", "score_winprob")


# --- the I/O log ------------------------------------------------------------------------


class IOLog:
    """An engine's I/O log (``--log DIR``, ``specs/match.md`` §Engine processes):
    every line both ways, stderr and arbiter events, each with the seconds
    since the engine was started (monotonic).  ``>`` arbiter to engine, ``<``
    engine to arbiter, ``!`` stderr, ``#`` what the arbiter did or saw.
    Made by :meth:`Engine.spawn`; whoever talks to the engine may add to it
    with :meth:`write` (the conformance probe does)."""

    def __init__(self, path: str, start: float):
        self.path = path
        # line-buffered: a user tails the log of a hung engine while it hangs
        self._file: TextIO = open(path, "a", encoding="utf-8", errors="replace", buffering=1)
        self._start = start

    def write(self, tag: str, text: str) -> None:
        """One event: ``tag`` (``>``, ``<``, ``!`` or ``#``) and its text,
        cut at 4096 characters.  A no-op once the log is closed."""
        if self._file.closed:
            return
        stamp = trio.current_time() - self._start
        if len(text) > 4096:
            text = text[:4096] + f"... [{len(text) - 4096} more characters]"
        self._file.write(f"{stamp:12.6f} {tag} {text}\n")

    def close(self) -> None:
        self._file.close()


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def log_dir_problem(log_dir: str) -> str | None:
    """Why engine I/O logs cannot go into ``log_dir`` (made if missing), or None."""
    try:
        os.makedirs(log_dir, exist_ok=True)
    except OSError as exc:
        return f"cannot create the directory ({exc.strerror})"
    if not os.access(log_dir, os.W_OK | os.X_OK):
        return "the directory is not writable"
    return None


def _log_path(log_dir: str, label: str, pid: int) -> str:
    name = _UNSAFE.sub("_", label).strip("_") or "engine"
    return os.path.join(log_dir, f"{name}-{pid}.log")


# --- the engine -------------------------------------------------------------------------


class Engine:
    """A running engine.  Made by :func:`open_engine`; not to be built directly.

    After the handshake :attr:`name` is the configured name or the engine's
    ``id name``; :attr:`id_name`, :attr:`author` and :attr:`options` are what
    it declared.  :attr:`fault` is set once when the engine breaks;
    :attr:`on_fault` (if set) is then called, so that whoever waits on
    *another* engine can be woken (the match uses it).  One task at a time
    talks to an engine.

    The process itself, for a caller that holds its own conversation with
    it (the conformance checker's probe, :mod:`arbiter.check_probe`):
    :meth:`spawn` with ``read_stdout=False`` starts it without the
    handshake and leaves stdout to the caller; :attr:`process` (its pipes),
    :attr:`started_at`, :attr:`io_log`, :meth:`exit_status`,
    :meth:`wait_exit` and :meth:`aclose` (with a shorter ``grace`` for an
    engine known to be broken) are the rest of that API.
    """

    def __init__(self, config: EngineConfig, timeouts: EngineTimeouts, log_dir: str | None):
        self.config = config
        self.timeouts = timeouts
        self.session = EngineSession()
        self.fault: EngineFault | None = None
        self.on_fault: Callable[[Engine], None] | None = None
        self.pid: int | None = None
        self.log_path: str | None = None
        self._log_dir = log_dir
        self._log: IOLog | None = None
        self._process: trio.Process | None = None
        self._stdout_fd = -1
        self._stdin_fd = -1
        self._poller: select.poll | None = None
        self._splitter = LineSplitter()
        self._pending: deque[object] = deque()  # messages read, not yet taken
        self._reading = False  # a task is blocked reading stdout
        self._exited = trio.Event()
        self._pidfd: int | None = None
        #: the last info lines of the current search (raw text or parsed)
        self._info_lines: deque[str | Info] = deque(maxlen=limits.MAX_INFO_LINES_KEPT)
        self._started_at = 0.0
        self._exit_status: str | None = None
        self._reads_stdout = True  # False: the caller of spawn() reads stdout
        self._ready_asked = 0.0  # when start_new_game() wrote its isready (trio time)
        #: trio.current_time without its two lookups (bound in spawn(), inside trio)
        self._now: Callable[[], float] = trio.current_time

    # -- identity --------------------------------------------------------------------

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
    def process(self) -> trio.Process | None:
        """The engine's process (None before :meth:`spawn`).  Its ``stdin``
        and, after ``spawn(read_stdout=False)``, its ``stdout`` are the
        caller's to use; do not reap it (see :meth:`exit_status`)."""
        return self._process

    @property
    def started_at(self) -> float:
        """``trio.current_time()`` when the process was started (the zero of
        the I/O log's timestamps)."""
        return self._started_at

    @property
    def io_log(self) -> IOLog | None:
        """The I/O log, None when logging is off (no ``log_dir``)."""
        return self._log

    @property
    def searching(self) -> bool:
        return self.session.state is SessionState.SEARCHING

    @property
    def healthy(self) -> bool:
        """Running, not faulted, not searching: fit for another game."""
        return (self.fault is None and self._process is not None
                and not self._exited.is_set() and self._process.returncode is None
                and self.session.state is SessionState.IDLE)

    # -- starting ----------------------------------------------------------------------

    async def spawn(self, nursery: trio.Nursery, *, read_stdout: bool = True) -> None:
        """Start the process (no handshake; :func:`open_engine` does that):
        its own process group, pipes, the I/O log, and in ``nursery`` the
        tasks that drain stderr and watch for the exit.

        ``read_stdout=False`` is for a caller that reads ``process.stdout``
        itself: the engine then neither reads it (do not use :meth:`send`,
        :meth:`go` nor the other conversation methods) nor turns an exit
        into a :attr:`fault`; :meth:`exit_status` says how it ended.
        :class:`EngineStartError` if it cannot be started."""
        if self._process is not None:
            raise RuntimeError(f"engine {self.name!r} was already started")
        self._reads_stdout = read_stdout
        self._now = trio.lowlevel.current_clock().current_time
        argv = self.config.argv()
        env = None
        if self.config.env:
            env = dict(os.environ)
            env.update(self.config.env)
        cwd = self.config.dir
        if cwd is not None and not os.path.isdir(cwd):
            raise EngineStartError(self.name, f"working directory {cwd!r} does not exist")
        if self._log_dir is not None:  # before the process exists: nothing to clean up
            problem = log_dir_problem(self._log_dir)
            if problem is not None:
                raise EngineStartError(self.name, f"cannot write its I/O log into {self._log_dir!r}: "
                                                  f"{problem}")
        try:
            self._process = await trio.lowlevel.open_process(
                argv, stdin=-1, stdout=-1, stderr=-1, cwd=cwd, env=env,
                start_new_session=True,  # its own process group: see _shutdown
            )
        except OSError as exc:
            raise EngineStartError(
                self.name, f"cannot start {shlex.join(argv)!r}: {exc.strerror or exc}") from None
        self.pid = self._process.pid
        assert self._process.stdout is not None
        self._stdout_fd = self._process.stdout.fileno()
        assert self._process.stdin is not None
        self._stdin_fd = self._process.stdin.fileno()  # non-blocking, like stdout
        if read_stdout:
            self._poller = select.poll()  # "anything to read?" without reading
            self._poller.register(self._stdout_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._started_at = trio.current_time()
        if self._log_dir is not None:
            self.log_path = _log_path(self._log_dir, self.config.label, self.pid)
            self._log = IOLog(self.log_path, self._started_at)
            self._log.write("#", f"started pid {self.pid}: {shlex.join(argv)}"
                            + (f" in {cwd}" if cwd else ""))
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # pragma: no cover - no pidfd: exits seen on EOF
            self._pidfd = None
        nursery.start_soon(self._drain_stderr)
        if self._pidfd is not None:
            nursery.start_soon(self._watch_exit)

    async def _handshake(self) -> None:
        """``ugi`` until ``ugiok``, within the handshake timeout."""
        with trio.move_on_after(self.timeouts.handshake):
            await self.send(Ugi())
            await self._expect(UgiOk)
            return
        raise EngineStartError(self.name, f"no ugiok within {self.timeouts.handshake:g} s of ugi")

    # -- writing -----------------------------------------------------------------------

    async def send(self, *messages: ArbiterMessage) -> None:
        """Write messages (checked by the session first) in one write.

        A closed pipe becomes a ``crash`` fault and :class:`EngineFaultError`.
        The caller bounds the time (a full pipe blocks)."""
        self._read_nowait()
        data = b"".join([self.session.send(msg) for msg in messages])
        await self._write(data)

    async def _write(self, data: bytes, on_block: Callable[[], None] | None = None) -> None:
        """Write ``data`` whole.  The common case is one ``os.write`` on the
        non-blocking pipe and no trip through the scheduler (the caller's next
        wait is the checkpoint); a full pipe (the engine is not reading) falls
        back to trio's send_all, after calling ``on_block`` (the match uses it
        to put the exact deadline of the search on the write)."""
        if self.fault is not None:
            raise EngineFaultError(self.name, self.fault)
        if self._log is not None:
            for line in data.decode("utf-8", "replace").splitlines():
                self._log.write(">", line)
        process = self._process
        assert process is not None and process.stdin is not None
        try:
            try:
                sent = os.write(self._stdin_fd, data)
            except BlockingIOError:
                sent = 0
            if sent < len(data):
                if on_block is not None:
                    on_block()
                await process.stdin.send_all(data[sent:])
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            self._set_fault("crash", "closed its input (exited?) while the arbiter was writing")
            assert self.fault is not None
            raise EngineFaultError(self.name, self.fault) from None

    # -- reading -----------------------------------------------------------------------

    async def _receive(self) -> object:
        """The next message (reading stdout as needed); EngineFaultError once
        the engine has faulted and every message before the fault is taken."""
        while True:
            if self._pending:
                return self._pending.popleft()
            if self.fault is not None:
                raise EngineFaultError(self.name, self.fault)
            if not self._reads_stdout:
                raise RuntimeError(f"engine {self.name!r}: its stdout is read by the caller of spawn()")
            # wait_readable + os.read rather than receive_some: one pass
            # through the scheduler per reply instead of three
            self._reading = True
            try:
                await trio.lowlevel.wait_readable(self._stdout_fd)
                data = os.read(self._stdout_fd, _READ_CHUNK)
            except BlockingIOError:
                continue
            except (trio.ClosedResourceError, OSError):
                data = b""
            finally:
                self._reading = False
            now = self._now()
            if data:
                line = self._splitter.feed_line(data) if self.fault is None else None
                if line is not None:  # the usual chunk: one whole line
                    if line.startswith("bestmove ") and self._log is None and not self._pending:
                        # The usual end of a search: straight to the caller, unqueued.
                        move = self.session.receive_bestmove(line)
                        if move is not None:
                            return Reply(move, now, self._take_info_lines() if self._info_lines else None)
                    self._take_line(line, now)
                    if len(self._pending) == 1:  # (the usual case) without another pass
                        return self._pending.popleft()
                else:
                    self._feed(data, now)
            else:
                await self._note_eof(now)

    def _read_nowait(self) -> None:
        """Take in whatever the engine wrote while nobody was waiting on it,
        without blocking (a stray ``bestmove`` faults now, not later)."""
        if self.fault is not None or self._poller is None or not self._poller.poll(0):
            return
        while True:
            try:
                data = os.read(self._stdout_fd, _READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                status = self.exit_status()
                self._set_fault("crash", f"exited ({status})" if status else "closed its output",
                                searching=self.searching)
                return
            self._feed(data, trio.current_time())
            if len(data) < _READ_CHUNK or self.fault is not None:
                return

    def _feed(self, data: bytes, now: float) -> None:
        if self.fault is not None:
            return  # a faulted engine's output is drained and dropped
        line = self._splitter.feed_line(data)  # the usual chunk: one whole line
        if line is not None:
            self._take_line(line, now)
            return
        try:
            lines = self._splitter.feed(data)
        except ProtocolError as exc:
            for line in getattr(exc, "lines", ()):
                self._take_line(line, now)
            if self._log is not None:
                self._log.write("<", f"[line over {self._splitter.max_line_bytes} bytes, discarded]")
            self._set_fault("protocol-error",
                            f"wrote a line longer than {self._splitter.max_line_bytes} bytes", now=now)
            return
        for line in lines:
            self._take_line(line, now)
            if self.fault is not None:
                return

    def _take_line(self, line: str, now: float) -> None:
        if self._log is not None:
            self._log.write("<", line)
        session = self.session
        searching = session.state is SessionState.SEARCHING
        move = session.receive_bestmove(line) if searching else None
        if move is not None:
            # The fast path of every ply: exactly `bestmove <token>`.
            msg: object = Reply(move, now, self._take_info_lines() if self._info_lines else None)
        elif line == "readyok" and session.receive_readyok(line):
            # The fast path of every game's setup: exactly `readyok`, answering an isready.
            msg = _READY_OK
        elif line.startswith("info") and (len(line) == 4 or line[4] in " \t\r"):
            # The fast path for floods: info lines are kept raw (the last
            # MAX_INFO_LINES_KEPT of the search) and parsed only at bestmove.
            if searching:
                self._info_lines.append(line)
            return
        else:
            try:
                msg = session.receive(line)
            except ProtocolError as exc:
                if exc.command == "info":
                    return  # a malformed info line costs nothing: specs/match.md §Engine errors
                self._set_fault("protocol-error", f"wrote {line[:200]!r}: {exc}", now=now,
                                command=exc.command, searching=searching, line=line[:200])
                return
            if msg is None:
                return
            if isinstance(msg, Info):
                if searching:
                    self._info_lines.append(msg)
                return
            if isinstance(msg, BestMove):
                msg = Reply(msg.move, now, self._take_info_lines(), msg.ponder)
        if len(self._pending) >= MAX_QUEUED_MESSAGES:
            self._set_fault("protocol-error", f"flooded the arbiter with more than "
                            f"{MAX_QUEUED_MESSAGES} unrequested messages", now=now)
            return
        self._pending.append(msg)

    def _take_info_lines(self) -> list[str | Info] | None:
        """The search's kept ``info`` lines, for its :class:`Reply` (None: none)."""
        lines = self._info_lines
        if not lines:
            return None
        taken = list(lines)
        lines.clear()
        return taken

    async def _note_eof(self, now: float) -> None:
        """stdout closed at ``now``: a crash.  Says whether the process exited, and how."""
        try:
            last = self._splitter.close()
        except ProtocolError:
            last = None
        if last is not None:
            self._take_line(last, now)  # a partial last line still counts
        searching = self.searching
        status = await self.wait_exit(0.2)
        if status is None:
            detail = "closed its output but is still running"
        else:
            detail = f"exited ({status})"
        self._set_fault("crash", detail, now=now, searching=searching)

    async def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        stream = self._process.stderr
        pending = b""
        while True:
            try:
                data = await stream.receive_some(_READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                break
            if not data:
                break
            if self._log is not None:
                pending += data
                *complete, pending = pending.split(b"\n")
                for raw in complete:
                    self._log.write("!", raw.decode("utf-8", "replace"))
                if len(pending) > 4096:
                    self._log.write("!", pending.decode("utf-8", "replace"))
                    pending = b""
        if pending and self._log is not None:
            self._log.write("!", pending.decode("utf-8", "replace"))

    async def _watch_exit(self) -> None:
        """Wait for the process to exit (pidfd readable; it is not reaped here).

        If nobody is reading the engine then (it is idle, or between reads),
        that is a crash now: the opponent's wait is interrupted through
        :attr:`on_fault`.  A reader sees the exit as the end of stdout."""
        assert self._pidfd is not None
        try:
            await trio.lowlevel.wait_readable(self._pidfd)
        except trio.ClosedResourceError:  # pragma: no cover - closed by aclose first
            return
        self._exited.set()
        if self._reading or not self._reads_stdout or self.session.state is SessionState.CLOSED:
            return
        self._read_nowait()  # what it said before dying comes first
        status = self.exit_status() or "exited"
        self._set_fault("crash", f"exited ({status})", searching=self.searching)

    def _set_fault(self, kind: str, detail: str, *, now: float | None = None,
                   command: str | None = None, searching: bool = False,
                   line: str | None = None) -> None:
        if self.fault is not None:
            return
        self.fault = EngineFault(kind, detail, trio.current_time() if now is None else now,
                                 command, searching, line)
        if self._log is not None:
            self._log.write("#", f"fault: {kind}: {detail}")
        if self.on_fault is not None:
            self.on_fault(self)

    async def _expect(self, kind: type) -> object:
        """Wait for a message of ``kind``, skipping others (the caller sets the deadline)."""
        while True:
            msg = await self._receive()
            if isinstance(msg, kind):
                return msg

    # -- conversation ------------------------------------------------------------------

    async def configure(self, options: dict[str, str | None]) -> None:
        """Send ``setoption`` for each option, all validated against the
        declared options *before* any is sent; EngineStartError names the
        offending option."""
        messages = []
        for name, value in options.items():
            decl = self.session.option(name)
            if decl is None:
                declared = ", ".join(self.options) or "none"
                raise EngineStartError(
                    self.name, f"has no option {name!r} (it declares: {declared})")
            try:
                value = decl.validate_value(None if value is None else str(value))
                messages.append(SetOption(decl.name, value))
            except ProtocolError as exc:
                raise EngineStartError(self.name, f"bad value for {exc}") from None
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
        play ``game`` or cannot be written to."""
        messages: list[ArbiterMessage] = []
        plays = self.session.plays(game)
        if plays is False:
            decl = self.session.game_option
            assert decl is not None
            raise EngineStartError(
                self.name, f"does not play {game} (its {GAME_OPTION} option lists: {', '.join(decl.vars)})")
        if plays:
            decl = self.session.game_option
            assert decl is not None
            messages.append(SetOption(decl.name, decl.validate_value(game)))
        messages.append(UgiNewGame())
        self._read_nowait()  # as send() does
        data = b"".join([self.session.send(msg) for msg in messages])
        self._ready_asked = trio.current_time()
        if self.fault is None and len(data) + len(_ISREADY_LINE) <= select.PIPE_BUF:
            # The usual case: these lines and isready in one write, which the
            # non-blocking pipe takes whole or not at all (at most PIPE_BUF
            # bytes); if not, the plain way below: a send, then isready's.
            try:
                sent = os.write(self._stdin_fd, data + _ISREADY_LINE)
            except OSError:  # full (BlockingIOError) or closed: _write deals with it
                sent = 0
            if sent:
                assert sent == len(data) + len(_ISREADY_LINE)
                self.session.send(IsReady())  # allowed: uginewgame was
                if self._log is not None:
                    for line in data.decode("utf-8", "replace").splitlines():
                        self._log.write(">", line)
                    self._log.write(">", "isready")
                return
        with trio.move_on_after(self.timeouts.ready):
            try:
                await self._write(data)
            except EngineFaultError as exc:
                raise EngineStartError(self.name, exc.reason) from None
            await self._send_or_start_error([IsReady()])
            return
        raise EngineStartError(self.name, f"could not write to it within {self.timeouts.ready:g} s")

    async def wait_ready(self) -> None:
        """The waiting half of :meth:`new_game`: ``readyok`` within the ready
        timeout of :meth:`start_new_game`'s ``isready``, else :class:`EngineStartError`.
        A ``readyok`` that came already is taken without a trip through the
        scheduler (the second engine of a match, usually)."""
        self._read_nowait()
        pending = self._pending
        if pending and pending[0] is _READY_OK:
            pending.popleft()
            return
        with trio.CancelScope(deadline=self._ready_asked + self.timeouts.ready):
            await self._expect_readyok()
            return
        raise EngineStartError(self.name, f"no readyok within {self.timeouts.ready:g} s of isready")

    async def ping(self) -> None:
        """``isready`` -> ``readyok`` within the ready timeout, else
        :class:`EngineStartError`.

        The arbiter pings only before a game's first ``go`` (:meth:`new_game`),
        where failing is a ``handshake-failure``: the game is not played
        (``specs/match.md`` §Terminations).  It never pings during a game."""
        with trio.move_on_after(self.timeouts.ready):
            await self._send_or_start_error([IsReady()])
            await self._expect_readyok()
            return
        raise EngineStartError(self.name, f"no readyok within {self.timeouts.ready:g} s of isready")

    async def _expect_readyok(self) -> None:
        """Wait for ``readyok``, skipping other messages (the caller sets the
        deadline); a fault becomes :class:`EngineStartError`."""
        try:
            while True:
                msg = await self._receive()
                if type(msg) is ReadyOk:
                    return
        except EngineFaultError as exc:
            raise EngineStartError(self.name, f"{exc.reason} (waiting for readyok)") from None

    async def _send_or_start_error(self, messages: list[ArbiterMessage]) -> None:
        try:
            await self.send(*messages)
        except EngineFaultError as exc:
            raise EngineStartError(self.name, exc.reason) from None

    async def go(self, position: SetPosition | bytes, limits: Go | SearchLimits, mover_is_p1: bool = True,
                 on_block: Callable[[], None] | None = None) -> float:
        """Write ``position`` and the ``go`` for ``limits`` in one write;
        returns the time the write finished (the clock starts then).
        ``on_block``: see :meth:`_write`.

        The match's hot path passes ready-made bytes for the position line
        (:class:`protocol.search.PositionLine`) and the clock's
        :class:`~protocol.search.SearchLimits`, which the session formats
        (``mover_is_p1`` says whose ``p1time`` is whose)."""
        poller = self._poller
        if poller is not None and poller.poll(0):  # it wrote while nobody waited
            self._read_nowait()
        if self._info_lines:
            self._info_lines.clear()
        if isinstance(position, bytes):
            data = position
        else:
            data = self.session.send(position)
        if isinstance(limits, Go):
            data += self.session.send(limits)
        else:
            data += self.session.send_go(limits, mover_is_p1)
        if self.fault is None and self._log is None:
            # _write's usual case inline: the whole of it in one os.write
            try:
                sent = os.write(self._stdin_fd, data)
            except BlockingIOError:
                sent = 0
            except OSError:
                sent = 0  # a closed pipe: _write's own attempt makes it a fault
            if sent == len(data):
                return self._now()
            data = data[sent:]
        await self._write(data, on_block)
        return self._now()

    async def wait_bestmove(self) -> Reply:
        """The search's ``bestmove`` (the caller sets the deadline)."""
        while True:
            msg = await self._receive()
            if type(msg) is Reply:
                return msg

    async def stop(self) -> None:
        await self.send(Stop())

    async def finish_search(self) -> bool:
        """After a game that ended during this engine's search: ``stop`` and
        drain the ``bestmove`` so the engine can be reused.  False (and the
        engine marked faulted) if it does not answer within the stop timeout."""
        if not self.searching or self.fault is not None:
            return self.fault is None
        with trio.move_on_after(self.timeouts.stop):
            try:
                await self.stop()
                await self.wait_bestmove()
                return True
            except EngineFaultError:
                return False
        self._set_fault("stall", f"did not answer stop within {self.timeouts.stop:g} s")
        return False

    # -- shutdown ----------------------------------------------------------------------

    async def wait_exit(self, timeout: float) -> str | None:
        """Wait up to ``timeout`` s for the process to exit, *without reaping it*
        (so its pid, which is also its process group id, cannot be reused before
        the group is killed).  Returns :meth:`exit_status`: how it ended, or
        None if it still runs."""
        status = self.exit_status()
        if status is not None:
            return status
        with trio.move_on_after(timeout):
            if self._pidfd is not None:
                await self._exited.wait()
            else:  # pragma: no cover - kernels without pidfd
                while self.exit_status() is None:
                    await trio.sleep(0.01)
        return self.exit_status()

    def exit_status(self) -> str | None:
        """How the process ended (``"status 3"``, ``"killed by SIGKILL"``), or
        None while it runs; looked up without reaping it (:meth:`wait_exit`)."""
        assert self._process is not None
        if self._exit_status is not None:
            return self._exit_status
        if self._process.returncode is not None:
            return _describe_status(self._process.returncode)
        try:
            result = os.waitid(os.P_PID, self._process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return "exited"
        if result is None:
            return None
        if result.si_code == os.CLD_EXITED:
            self._exit_status = f"status {result.si_status}"
        else:
            self._exit_status = f"killed by {_signal_name(result.si_status)}"
        return self._exit_status

    def _kill_group(self, sig: int) -> None:
        assert self._process is not None
        try:
            os.killpg(self._process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    async def _shutdown(self, grace: float | None) -> None:
        """``quit``; grace; SIGTERM to the group; grace; SIGKILL to the group; reap.

        The group is always sent SIGKILL at the end, also when the engine quit
        nicely: children it left behind go with it (specs/match.md)."""
        process = self._process
        if process is None:
            return
        timeouts = self.timeouts
        if grace is not None:
            timeouts = dataclasses.replace(timeouts, quit_grace=min(timeouts.quit_grace, grace),
                                           term_grace=min(timeouts.term_grace, grace))
        if self.exit_status() is None:
            if self.session.state is not SessionState.CLOSED and process.stdin is not None:
                with trio.move_on_after(timeouts.quit_grace):
                    try:
                        data = self.session.send(Quit())
                        if self._log is not None:
                            self._log.write(">", "quit")
                        await process.stdin.send_all(data)
                    except (trio.BrokenResourceError, trio.ClosedResourceError,
                            trio.BusyResourceError, ProtocolError, OSError):
                        pass
            if process.stdin is not None:
                with trio.move_on_after(0.1):
                    try:
                        await process.stdin.aclose()
                    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                        pass
            status = await self.wait_exit(timeouts.quit_grace)
            if status is None:
                if self._log is not None:
                    self._log.write("#", f"no exit {timeouts.quit_grace:g} s after quit: SIGTERM to the group")
                self._kill_group(signal.SIGTERM)
                status = await self.wait_exit(timeouts.term_grace)
                if status is None and self._log is not None:
                    self._log.write("#", f"no exit {timeouts.term_grace:g} s after SIGTERM: SIGKILL")
        self._kill_group(signal.SIGKILL)
        await process.wait()
        # SIGKILL is delivered asynchronously: wait (briefly) until the rest of
        # the group is really gone, so that "closed" means "nothing left".
        with trio.move_on_after(1.0):
            while live_group_members(process.pid):
                await trio.sleep(0.005)
        if self._log is not None:
            self._log.write("#", f"ended: {_describe_status(process.returncode)}")

    async def aclose(self, *, grace: float | None = None) -> None:
        """End the process and its group (``quit``, the quit grace, SIGTERM,
        the term grace, SIGKILL to the group); safe to call twice.

        ``grace`` caps both grace periods, for an engine already known to be
        broken (hung, crashed, owing an answer) that a caller has waited for
        once already."""
        with trio.CancelScope(shield=True):
            await self._shutdown(grace)
            if self._pidfd is not None:
                trio.lowlevel.notify_closing(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = None
            if self._log is not None:
                self._log.close()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _describe_status(returncode: int | None) -> str:
    if returncode is None:
        return "running"
    if returncode < 0:
        return f"killed by {_signal_name(-returncode)}"
    return f"status {returncode}"


@asynccontextmanager
async def open_engine(
    config: EngineConfig,
    *,
    timeouts: EngineTimeouts | None = None,
    log_dir: str | None = None,
) -> AsyncIterator[Engine]:
    """Start an engine, do the handshake and set its options; yield it; end it.

    Raises :class:`EngineStartError` (the process is already gone by then) if
    the engine cannot be started, fails ``ugi``/``ugiok`` within the timeout,
    or refuses an option.  Leaving the block, by any path, runs the shutdown
    of :meth:`Engine.aclose`: nothing of the engine survives it."""
    engine = Engine(config, timeouts or EngineTimeouts(), log_dir)
    try:
        async with trio.open_nursery() as nursery:
            try:
                await engine.spawn(nursery)
                try:
                    await engine._handshake()
                except EngineFaultError as exc:
                    raise EngineStartError(engine.name, f"{exc.reason} during the handshake") from None
                await engine.configure(config.options)
                yield engine
            finally:
                await engine.aclose()
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        raise sole_exception(group) from None


def sole_exception(group: BaseExceptionGroup) -> BaseException:
    """The one exception inside ``group`` (nested groups flattened), or the group.

    The background tasks of :func:`open_engine` never raise, so a group out
    of its nursery holds what the body raised; callers get that exception
    itself, not a group around it."""
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else group
