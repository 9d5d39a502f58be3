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
  :mod:`arbiter.engine.spawner`, which forks engines and finds what they leave behind);
* :class:`~arbiter.engine.iolog.IOLog` is its I/O log (``--log DIR``).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import signal
import subprocess
from collections import deque
from collections.abc import Awaitable, Callable

import trio

from arbiter.engine.config import EngineConfig, EngineTimeouts
from arbiter.engine.errors import EngineStartError
from arbiter.engine.fdio import read_some
from arbiter.engine.iolog import LOG_LINE_CHARS, IOLog, log_dir_problem, log_path
from arbiter.engine.spawner import ENGINE_MARK, GROUP_GONE_WAIT, Spawner, end_escapees, new_mark
from arbiter.procs import live_group_members
from protocol.messages import Quit

__all__ = ["EngineProcess", "QUIT_LINE"]

#: What the shutdown writes first, unless told otherwise (:meth:`EngineProcess.aclose`).
QUIT_LINE = (Quit().to_line() + "\n").encode()

#: Bytes read from stderr at a time (one pipe's capacity).
_STDERR_CHUNK = 1 << 16
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
        self._mark = new_mark()
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
            self._process = process = await Spawner.open(argv, cwd, env)
        except (OSError, subprocess.SubprocessError) as exc:
            raise EngineStartError(
                config.label,
                f"cannot start {shlex.join(argv)!r}: {getattr(exc, 'strerror', None) or exc}") from None
        self.pid = process.pid
        self.started_at = trio.current_time()
        if self._log_dir is not None:
            self.log_path = log_path(self._log_dir, config.label, process.pid)
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
        Spawner.own.discard(process.pid)
        with trio.move_on_after(GROUP_GONE_WAIT):
            while live_group_members(process.pid):  # noqa: ASYNC110 - /proc has no event to wait for
                await trio.sleep(0.005)
        await end_escapees(self._mark, self.io_log)
        if self.io_log is not None:
            self.io_log.write("#", f"ended: {_describe_status(process.returncode)}")

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
