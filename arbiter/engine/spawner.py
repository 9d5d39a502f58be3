"""Where engine processes are forked, and what they leave behind (Linux).

* :class:`Spawner` forks every engine from one long-lived thread, with the
  parent-death signal set in the child (an arbiter killed by SIGKILL takes
  its engines with it) and the arbiter made a child subreaper (an engine's
  orphans come back to it, to be found and reaped);
* :data:`ENGINE_MARK`, an inherited environment variable, marks every
  process an engine starts, so that :func:`end_escapees` finds and kills
  the descendants that left the engine's process group (``setsid``) and
  reaps them, and the orphans that ended on their own, so that no zombie
  remains.

:class:`arbiter.engine.process.EngineProcess` uses both (``specs/match.md``
§Engine processes); the run's worker processes are forked by the same
:class:`Spawner`.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import itertools
import os
import signal
import subprocess
import sys
from collections.abc import Callable

import trio

from arbiter.engine.iolog import IOLog
from arbiter.procs import GONE, descendants, proc_table, with_environ

__all__ = ["ENGINE_MARK", "GROUP_GONE_WAIT", "Spawner", "new_mark", "end_escapees"]

#: How long the last members of an engine's process group, or its escaped
#: descendants, may take to be gone after SIGKILL (delivered
#: asynchronously), in seconds.
GROUP_GONE_WAIT = 1.0

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


def new_mark() -> str:
    """A fresh :data:`ENGINE_MARK` value for an engine about to start."""
    return f"{os.getpid()}.{next(_ENGINE_NUMBERS)}"


class Spawner:
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


async def end_escapees(mark: str, log: IOLog | None) -> None:
    """SIGKILL the descendants of the engine that left its process group
    (``setsid``), found below the arbiter (a subreaper: orphans come back
    to it) by the engine's :data:`ENGINE_MARK` value ``mark``, and wait (briefly) until
    each is gone, reaping those that are the arbiter's children, so that
    no zombie remains either.  Linux only (``/proc``)."""
    if _PRCTL is None or not mark:
        return
    entry = f"{ENGINE_MARK}={mark}".encode()
    me = os.getpid()
    table = proc_table()
    _reap_orphans(table)
    escapees = with_environ(entry, descendants(me, table))
    if not escapees:
        return
    if log is not None:
        log.write("#", f"SIGKILL to {len(escapees)} process(es) that left the group: "
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


def _reap_orphans(table: dict[int, tuple[str, int, int]]) -> None:
    """Reap the dead children of the arbiter that are not its engines: orphans
    of engines (reparented to it, a subreaper) that ended on their own.  The
    arbiter starts no other processes; while a fork is under way its child
    cannot be told from an orphan yet, so nothing is reaped then."""
    if Spawner.in_flight:
        return
    me = os.getpid()
    for pid, (state, ppid, _) in table.items():
        if ppid == me and state in GONE and pid not in Spawner.own:
            _reap(pid)


def _reap(pid: int) -> None:
    """Collect the exit of ``pid``, a dead child of the arbiter that no
    :class:`trio.Process` owns (an engine's orphan)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
