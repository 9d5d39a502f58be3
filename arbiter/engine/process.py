"""One engine process: started, watched and ended, whatever it does (trio).

Engines are untrusted: they crash, hang, flood and leave children behind.
:class:`EngineProcess` is the process side only (``specs/match.md``
§Engine processes); what is said over its pipes is the business of whoever
holds them (the conversation of :mod:`arbiter.engine.conversation` through a
:class:`~arbiter.engine.transport.PipeTransport`, or the conformance
checker's probe, which reads them itself):

* it runs in its own process group (``start_new_session``), and
  :meth:`EngineProcess.aclose` ends the whole group: ``quit``, a grace
  period, SIGTERM, a grace period, SIGKILL, then a wait until no live member
  of the group remains;
* stderr is always drained by a task (into the I/O log, or discarded), so a
  chatty engine can never block on a full pipe;
* a task watches for the exit (a pidfd) and calls :attr:`EngineProcess.on_exit`,
  so an engine that dies while nobody reads it can be noticed at once;
* the process is never reaped before its group is killed (:meth:`exit_status`
  and :meth:`wait_exit` look without reaping), so its pid, which is also the
  group's id, cannot be reused in between;
* on Linux nothing escapes: descendants that left the group (``setsid``)
  are found by the engine's :data:`ENGINE_MARK` below the arbiter (a child
  subreaper) and killed and reaped at the shutdown, and the engine gets the
  parent-death signal, so it ends with an arbiter killed by SIGKILL (see
  :class:`_Spawner`);
* :class:`IOLog` is its I/O log (``--log DIR``).
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import dataclasses
import itertools
import os
import re
import shlex
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TextIO

import trio

from arbiter.engine.config import EngineConfig, EngineTimeouts
from arbiter.engine.errors import EngineStartError
from arbiter.engine.fdio import read_some
from arbiter.procs import GONE, descendants, live_group_members, proc_table, with_environ
from protocol.messages import Quit

__all__ = ["EngineProcess", "IOLog", "log_dir_problem", "QUIT_LINE"]

#: What the shutdown writes first, unless told otherwise (:meth:`EngineProcess.aclose`).
QUIT_LINE = (Quit().to_line() + "\n").encode()

#: Bytes read from stderr at a time (one pipe's capacity).
_STDERR_CHUNK = 1 << 16
#: The longest entry of the I/O log, in characters: long enough for any
#: honest line, short enough that a flooding engine cannot fill the disk fast.
LOG_LINE_CHARS = 4096
#: How long :meth:`EngineProcess.aclose` waits for the group's last members
#: to be gone after SIGKILL (delivered asynchronously), in seconds.
GROUP_GONE_WAIT = 1.0
#: How long closing the engine's stdin may take in the shutdown, in seconds.
STDIN_CLOSE_WAIT = 0.1
#: How long :meth:`EngineProcess.aclose` waits, once the group is killed, for
#: the stderr drain to read what is left in the pipe, in seconds.  Every
#: writer is gone by then, so the end comes at once; the wait only runs out
#: when a process the arbiter cannot find (one that left the group and lost
#: the engine's mark) still holds the pipe.
STDERR_END_WAIT = 0.2
#: How many of the last lines an engine wrote on stderr are kept, to be
#: quoted when it fails to start (:meth:`EngineProcess.stderr_tail`): a
#: Python traceback ends with the failing frame, its line of code and the
#: exception, and an interpreter's own complaint (``No module named ...``)
#: is one line; five show those and keep the error message readable.
STDERR_TAIL_LINES = 5
#: The most characters of each of those lines quoted: a long line is cut.
STDERR_TAIL_CHARS = 300

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")

#: The environment variable that marks every process an engine starts (it is
#: inherited), so that its descendants that left its process group can be
#: found at its shutdown: ``<arbiter pid>.<engine number>``.
ENGINE_MARK = "ARBITER_ENGINE"

# prctl(2) options (linux/prctl.h)
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _load_prctl() -> Callable[..., int] | None:
    """libc's prctl (Linux), or None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_PRCTL = _load_prctl()
_ENGINE_NUMBERS = itertools.count(1)


class _Spawner:
    """Where engine processes are forked: one thread that lives as long as the
    arbiter.  The parent-death signal fires when the *thread* that forked a
    process exits, and trio's own worker threads exit when idle, which would
    kill the engine; so the fork never happens in one of them.  The first use
    also makes the arbiter a child subreaper, so that orphaned descendants of
    an engine are reparented to it (and can be found and reaped) rather than
    to init."""

    _pool: concurrent.futures.ThreadPoolExecutor | None = None
    #: pids of the engine processes not reaped yet (owned by their trio.Process)
    own: set[int] = set()
    #: forks under way, whose pid is not in :attr:`own` yet
    in_flight = 0

    @classmethod
    def _executor(cls) -> concurrent.futures.ThreadPoolExecutor:
        if cls._pool is None:
            if _PRCTL is not None:
                _PRCTL(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            cls._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="engine-spawner")
        return cls._pool

    @classmethod
    async def open(cls, argv: list[str], cwd: str | None, env: dict[str, str]) -> trio.Process:
        """:func:`trio.lowlevel.open_process` with pipes for stdin, stdout and
        stderr and its own session, forked by the spawner thread, with the
        parent-death signal SIGKILL set in the child before exec."""
        pipes = [os.pipe() for _ in range(3)]  # (read, write); close-on-exec until dup2'd
        child_ends = [pipes[0][0], pipes[1][1], pipes[2][1]]
        ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
        arbiter = os.getpid()
        cls.in_flight += 1
        try:
            future = cls._executor().submit(
                subprocess.Popen, argv, stdin=child_ends[0], stdout=child_ends[1],
                stderr=child_ends[2], cwd=cwd, env=env,
                start_new_session=True,  # its own process group: see EngineProcess.aclose
                preexec_fn=(lambda: _die_with(arbiter)) if _PRCTL is not None else None)
            popen = await trio.to_thread.run_sync(future.result)  # not cancellable: no leak
            cls.own.add(popen.pid)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            cls.in_flight -= 1
            for fd in child_ends:
                os.close(fd)
        streams = [trio.lowlevel.FdStream(fd) for fd in ours]
        # trio.Process has no public constructor for a Popen made elsewhere
        return trio.Process._create(popen, *streams)


def _die_with(arbiter: int) -> None:
    """In the child, between fork and exec: SIGKILL when the spawner thread
    (hence the arbiter) dies; if the arbiter died already (after the fork,
    before the prctl), exit at once.  Kept tiny: it runs in a forked copy of a
    threaded process."""
    assert _PRCTL is not None
    _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != arbiter:
        os._exit(1)


class IOLog:
    """An engine's I/O log (``--log DIR``, ``specs/match.md`` §Engine processes):
    every line both ways, stderr and arbiter events, each with the seconds
    since the engine was started (monotonic).  ``>`` arbiter to engine, ``<``
    engine to arbiter, ``!`` stderr, ``#`` what the arbiter did or saw.
    Made by :meth:`EngineProcess.spawn`; whoever talks to the engine adds to it
    with :meth:`write` (the transport does, and the conformance probe)."""

    def __init__(self, path: str, start: float):
        self.path = path
        # line-buffered: a user tails the log of a hung engine while it hangs
        self._file: TextIO = open(path, "a", encoding="utf-8", errors="replace", buffering=1)
        self._start = start

    def write(self, tag: str, text: str) -> None:
        """One event: ``tag`` (``>``, ``<``, ``!`` or ``#``) and its text,
        cut at :data:`LOG_LINE_CHARS`.  A no-op once the log is closed."""
        if self._file.closed:
            return
        stamp = trio.current_time() - self._start
        if len(text) > LOG_LINE_CHARS:
            text = text[:LOG_LINE_CHARS] + f"... [{len(text) - LOG_LINE_CHARS} more characters]"
        self._file.write(f"{stamp:12.6f} {tag} {text}\n")

    def close(self) -> None:
        self._file.close()


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


class EngineProcess:
    """An engine's process and its process group.  :meth:`spawn` it in a
    nursery (which then holds its stderr drain and exit watch); end it with
    :meth:`aclose`, on every path out.

    :attr:`process` is the :class:`trio.Process`: its ``stdin`` and ``stdout``
    are the caller's to use; do not reap it (see :meth:`exit_status`).
    :attr:`on_exit`, if set, is awaited by the exit watch when the process
    exits."""

    def __init__(self, config: EngineConfig, timeouts: EngineTimeouts, log_dir: str | None = None):
        self.config = config
        self.timeouts = timeouts
        self.pid: int | None = None
        self.log_path: str | None = None
        self.started_at = 0.0  # trio.current_time() at the start: the zero of the log's stamps
        self.io_log: IOLog | None = None  # None when logging is off (no log_dir)
        self.on_exit: Callable[[], Awaitable[None]] | None = None
        self.closed = False  # aclose() has run: the pipes are closed
        self._log_dir = log_dir
        self._process: trio.Process | None = None
        self._exited = trio.Event()
        self._pidfd: int | None = None
        self._exit_status: str | None = None
        self._mark = ""  # its ENGINE_MARK value, set by spawn
        self._stderr_tail: deque[bytes] = deque(maxlen=STDERR_TAIL_LINES)  # non-blank lines
        self._stderr_done = trio.Event()  # the drain has read stderr to its end (or stopped)

    @property
    def process(self) -> trio.Process | None:
        """The process (None before :meth:`spawn`)."""
        return self._process

    def _started(self) -> trio.Process:
        if self._process is None:
            raise RuntimeError(f"engine {self.config.label!r} was not started")
        return self._process

    @property
    def running(self) -> bool:
        """Started and not exited (as far as the exit watch knows)."""
        return (self._process is not None and not self._exited.is_set()
                and self._process.returncode is None)

    async def spawn(self, nursery: trio.Nursery) -> None:
        """Start the process: its own process group, pipes for stdin, stdout
        and stderr, the I/O log, and in ``nursery`` the tasks that drain
        stderr and watch for the exit.  :class:`EngineStartError` if it
        cannot be started (nothing is left to clean up then)."""
        if self._process is not None:
            raise RuntimeError(f"engine {self.config.label!r} was already started")
        config = self.config
        argv = config.argv()
        self._mark = f"{os.getpid()}.{next(_ENGINE_NUMBERS)}"
        env = dict(os.environ, **config.env, **{ENGINE_MARK: self._mark})
        cwd = config.dir
        if cwd is not None and not await trio.Path(cwd).is_dir():
            raise EngineStartError(config.label, f"working directory {cwd!r} does not exist")
        if self._log_dir is not None:  # before the process exists: nothing to clean up
            problem = log_dir_problem(self._log_dir)
            if problem is not None:
                raise EngineStartError(config.label, f"cannot write its I/O log into "
                                                     f"{self._log_dir!r}: {problem}")
        try:
            self._process = process = await _Spawner.open(argv, cwd, env)
        except (OSError, subprocess.SubprocessError) as exc:
            raise EngineStartError(
                config.label,
                f"cannot start {shlex.join(argv)!r}: {getattr(exc, 'strerror', None) or exc}") from None
        self.pid = process.pid
        self.started_at = trio.current_time()
        if self._log_dir is not None:
            self.log_path = _log_path(self._log_dir, config.label, process.pid)
            self.io_log = IOLog(self.log_path, self.started_at)
            self.io_log.write("#", f"started pid {process.pid}: {shlex.join(argv)}"
                              + (f" in {cwd}" if cwd else ""))
        try:
            self._pidfd = os.pidfd_open(process.pid)
        except (AttributeError, OSError):  # pragma: no cover - no pidfd: exits seen on EOF
            self._pidfd = None
        nursery.start_soon(self._drain_stderr)
        if self._pidfd is not None:
            nursery.start_soon(self._watch_exit)

    # -- watching ----------------------------------------------------------------------

    async def _drain_stderr(self) -> None:
        """Read stderr to its end: every line into the I/O log (if kept), the
        last few non-blank ones into the tail (:meth:`stderr_tail`)."""
        stream = self._started().stderr
        assert stream is not None
        fd: int = stream.fileno()  # type: ignore[attr-defined]  # trio's pipe streams have it
        try:
            pending = b""
            while True:
                data = await read_some(fd, _STDERR_CHUNK)  # (b"" too once aclose closed the pipe)
                if not data:
                    break
                pending += data
                *complete, pending = pending.split(b"\n")
                if len(pending) > LOG_LINE_CHARS:  # a line without end: taken as it is
                    complete.append(pending)
                    pending = b""
                self._take_stderr(complete)
            if pending:
                self._take_stderr([pending])
        finally:
            self._stderr_done.set()

    def _take_stderr(self, lines: list[bytes]) -> None:
        if self.io_log is not None:
            for raw in lines:
                self.io_log.write("!", raw.decode("utf-8", "replace"))
        last: list[bytes] = []
        for raw in reversed(lines):  # (of a flood, only its end)
            if raw.strip():
                last.append(raw)
                if len(last) == STDERR_TAIL_LINES:
                    break
        self._stderr_tail.extend(reversed(last))

    async def _stderr_end(self) -> None:
        """Wait (:data:`STDERR_END_WAIT` at most) until the drain has read
        stderr to its end."""
        with trio.move_on_after(STDERR_END_WAIT):
            await self._stderr_done.wait()

    async def last_words(self) -> list[str]:
        """:meth:`stderr_tail`, complete when the process has exited (the
        drain's end waited for, :data:`STDERR_END_WAIT` at most)."""
        if self._process is not None and self.exit_status() is not None:
            await self._stderr_end()
        return self.stderr_tail()

    def stderr_tail(self) -> list[str]:
        """The last non-blank lines the engine wrote on stderr so far, oldest
        first: at most :data:`STDERR_TAIL_LINES`, each cut at
        :data:`STDERR_TAIL_CHARS` characters (raw text: escape it to show it)."""
        tail = []
        for raw in self._stderr_tail:
            text = raw.decode("utf-8", "replace").rstrip("\r")
            if len(text) > STDERR_TAIL_CHARS:
                text = text[:STDERR_TAIL_CHARS] + "..."
            tail.append(text)
        return tail

    async def _watch_exit(self) -> None:
        """Wait for the exit (the pidfd readable; nothing is reaped here), then
        tell :attr:`on_exit`."""
        assert self._pidfd is not None
        try:
            await trio.lowlevel.wait_readable(self._pidfd)
        except trio.ClosedResourceError:  # pragma: no cover - closed by aclose first
            return
        self._exited.set()
        if self.on_exit is not None:
            await self.on_exit()

    def exit_status(self) -> str | None:
        """How the process ended (``"status 3"``, ``"killed by SIGKILL"``), or
        None while it runs; looked up without reaping it (:meth:`wait_exit`)."""
        process = self._started()
        if self._exit_status is not None:
            return self._exit_status
        if process.returncode is not None:
            return _describe_status(process.returncode)
        try:
            result = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return "exited"
        if result is None:
            return None
        if result.si_code == os.CLD_EXITED:
            self._exit_status = f"status {result.si_status}"
        else:
            self._exit_status = f"killed by {_signal_name(result.si_status)}"
        return self._exit_status

    async def wait_exit(self, timeout: float) -> str | None:  # noqa: ASYNC109 - its contract: None on timeout
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
                while self.exit_status() is None:  # noqa: ASYNC110 - no event to wait for without a pidfd
                    await trio.sleep(0.01)
        return self.exit_status()

    # -- ending ------------------------------------------------------------------------

    async def aclose(self, *, grace: float | None = None, farewell: bytes | None = QUIT_LINE) -> None:
        """End the process and its group, then close its pipes; safe to call twice.

        ``farewell`` (``quit``, unless the caller says its conversation ended
        already: None) is written first; then stdin is closed, the quit grace
        waited, SIGTERM sent to the group, the term grace waited, and SIGKILL
        sent to the group, always (children the engine left behind go with it).
        ``grace`` caps both grace periods, for an engine already known to be
        broken (hung, crashed, owing an answer) that a caller has waited for
        once already."""
        with trio.CancelScope(shield=True):
            if self._process is None or self.closed:
                return
            timeouts = self.timeouts
            if grace is not None:
                timeouts = dataclasses.replace(timeouts, quit_grace=min(timeouts.quit_grace, grace),
                                               term_grace=min(timeouts.term_grace, grace))
            if self.exit_status() is None:
                await self._ask_to_quit(farewell, timeouts)
                await self._terminate(timeouts)
            await self._kill_group()
            await self._stderr_end()  # its last words, for the log and stderr_tail()
            self.closed = True
            for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
                if stream is not None:
                    await _close_quietly(stream)
            if self._pidfd is not None:
                trio.lowlevel.notify_closing(self._pidfd)
                os.close(self._pidfd)
                self._pidfd = None
            if self.io_log is not None:
                self.io_log.close()

    async def _ask_to_quit(self, farewell: bytes | None, timeouts: EngineTimeouts) -> None:
        """``farewell`` (within the quit grace), then the end of its input."""
        stdin = self._started().stdin
        if stdin is None:  # pragma: no cover - always a pipe
            return
        if farewell is not None:
            with trio.move_on_after(timeouts.quit_grace):
                if self.io_log is not None:
                    for line in farewell.decode("utf-8", "replace").splitlines():
                        self.io_log.write(">", line)
                try:
                    await stdin.send_all(farewell)
                except (trio.BrokenResourceError, trio.ClosedResourceError,
                        trio.BusyResourceError, OSError):
                    pass
        with trio.move_on_after(STDIN_CLOSE_WAIT):
            await _close_quietly(stdin)

    async def _terminate(self, timeouts: EngineTimeouts) -> None:
        """The quit grace, then SIGTERM to the group and the term grace."""
        log = self.io_log
        if await self.wait_exit(timeouts.quit_grace) is not None:
            return
        if log is not None:
            log.write("#", f"no exit {timeouts.quit_grace:g} s after quit: SIGTERM to the group")
        self._signal_group(signal.SIGTERM)
        if await self.wait_exit(timeouts.term_grace) is None and log is not None:
            log.write("#", f"no exit {timeouts.term_grace:g} s after SIGTERM: SIGKILL")

    async def _kill_group(self) -> None:
        """SIGKILL to the group, reap the process, and wait (briefly) until the
        rest of the group is really gone, so that "closed" means "nothing left"."""
        process = self._started()
        self._signal_group(signal.SIGKILL)
        await process.wait()
        _Spawner.own.discard(process.pid)
        with trio.move_on_after(GROUP_GONE_WAIT):
            while live_group_members(process.pid):  # noqa: ASYNC110 - /proc has no event to wait for
                await trio.sleep(0.005)
        await self._end_escapees()
        if self.io_log is not None:
            self.io_log.write("#", f"ended: {_describe_status(process.returncode)}")

    async def _end_escapees(self) -> None:
        """SIGKILL the descendants of the engine that left its process group
        (``setsid``), found below the arbiter (a subreaper: orphans come back
        to it) by the engine's :data:`ENGINE_MARK`, and wait (briefly) until
        each is gone, reaping those that are the arbiter's children, so that
        no zombie remains either.  Linux only (``/proc``)."""
        if _PRCTL is None or not self._mark:
            return
        entry = f"{ENGINE_MARK}={self._mark}".encode()
        me = os.getpid()
        table = proc_table()
        _reap_orphans(table)
        escapees = with_environ(entry, descendants(me, table))
        if not escapees:
            return
        if self.io_log is not None:
            self.io_log.write("#", f"SIGKILL to {len(escapees)} process(es) that left the group: "
                                   + " ".join(map(str, escapees)))
        for pid in escapees:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        left = set(escapees)
        with trio.move_on_after(GROUP_GONE_WAIT):
            while left:
                table = proc_table()
                for pid in list(left):
                    state, ppid, _ = table.get(pid, ("X", 0, 0))
                    if state in GONE and ppid == me:
                        _reap(pid)
                    if pid not in table or (state in GONE and ppid == me):
                        left.discard(pid)
                if left:
                    await trio.sleep(0.005)

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self._started().pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


async def _close_quietly(stream: trio.abc.AsyncResource) -> None:
    try:
        await stream.aclose()
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
        pass


def _reap_orphans(table: dict[int, tuple[str, int, int]]) -> None:
    """Reap the dead children of the arbiter that are not its engines: orphans
    of engines (reparented to it, a subreaper) that ended on their own.  The
    arbiter starts no other processes; while a fork is under way its child
    cannot be told from an orphan yet, so nothing is reaped then."""
    if _Spawner.in_flight:
        return
    me = os.getpid()
    for pid, (state, ppid, _) in table.items():
        if ppid == me and state in GONE and pid not in _Spawner.own:
            _reap(pid)


def _reap(pid: int) -> None:
    """Collect the exit of ``pid``, a dead child of the arbiter that no
    :class:`trio.Process` owns (an engine's orphan)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


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
