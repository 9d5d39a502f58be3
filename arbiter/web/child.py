"""``arbiter serve --http``: the web view in a child process of the server
(``specs/web.md`` §The server's view).

The server's trio loop times the engines; the view's work (rendering pages,
writing a hundred event streams) must not run on it, nor take its core when
the machine is busy.  So the server starts ``arbiter web`` on the same
database (read-only, WAL: the view reads the store as it does for any
run) as a child process, and supervises it:

* the child runs at a lower CPU priority (:data:`VIEW_NICENESS`, set by the
  child itself, as every ``arbiter web`` does): when the cores are scarce, the engines and the server get
  them first;
* it is in a session of its own, so a terminal's Ctrl-C reaches the server
  only, which then ends it: the one interrupt message and exit status are
  the server's;
* its stdin is a pipe only the server holds: the child ends when it reads
  end of file, which is also what happens when the server is killed
  (``SIGKILL`` included), so it never outlives the server;
* a child that ends by itself (a crash) is started again on the same port
  after :data:`RESTART_DELAY`, the server going on meanwhile.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # trio is imported where it runs: the command line starts without it
    import trio

#: how much lower than the server the view's CPU priority is (``nice``; 19,
#: the lowest): a busy machine gives its cores to the engines and the
#: server first, the view takes what they leave (bench/README.md §web.py)
VIEW_NICENESS = 19

#: seconds the view has to end after its stdin closed, before it is killed
STOP_TIMEOUT = 5.0

#: seconds between a view that ended by itself and its next start: a view
#: that cannot start costs one attempt a second, not a busy loop
RESTART_DELAY = 1.0

#: the hidden option of ``arbiter web`` that makes it the server's child
CHILD_OPTION = "--child-of-server"

#: bytes of the child's first line (its URL) read at most
MAX_LINE = 4096

Log = Callable[[str], None]


class ViewFailed(Exception):
    """The view process ended before it listened; ``str()`` says how."""


async def _first_line(stream: trio.abc.ReceiveStream) -> bytes:
    """The child's first line (its URL), or what it wrote before it ended."""
    line = b""
    while b"\n" not in line and len(line) < MAX_LINE:
        chunk = await stream.receive_some(MAX_LINE)
        if not chunk:
            break
        line += chunk
    return line


async def start_view(db: str | Path, host: str, port: int,
                     env: dict[str, str] | None = None) -> tuple[trio.Process, str]:
    """An ``arbiter web`` child on ``host``:``port`` (0: any free port) and
    the URL it listens on; :class:`ViewFailed` if it ended first (its
    reason is on stderr, which the child shares with the server).  ``env``:
    the child's environment (this process's by default; ``bench/web.py``
    runs an earlier version's view with it)."""
    import trio

    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "arbiter", "web", "--db", str(db), "--http", address, CHILD_OPTION],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True, env=env)
    assert proc.stdout is not None
    try:
        line = (await _first_line(proc.stdout)).decode(errors="replace").strip()
    except BaseException:
        await stop_view(proc)
        raise
    if " at " not in line:
        await stop_view(proc)
        raise ViewFailed(f"the web view did not start (exit {proc.returncode})")
    return proc, line.rsplit(" at ", 1)[1].rstrip("/")


async def stop_view(proc: trio.Process) -> None:
    """End the child: its stdin closed, then killed after
    :data:`STOP_TIMEOUT`; waited for (shielded: this runs on the way out)."""
    import trio

    with trio.CancelScope(shield=True):
        if proc.stdin is not None:
            await proc.stdin.aclose()
        with trio.move_on_after(STOP_TIMEOUT):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        if proc.stdout is not None:
            await proc.stdout.aclose()


async def supervise(proc: trio.Process, db: str | Path, host: str, port: int, log: Log) -> None:
    """Keep a view on ``host``:``port`` (the port the first one took) until
    cancelled, starting it again whenever it ends; the last one is ended
    on the way out."""
    import trio

    current: trio.Process | None = proc
    try:
        while True:
            if current is not None:
                code = await current.wait()
                await stop_view(current)
                current = None
                log(f"the web view ended (exit {code}); starting it again")
            await trio.sleep(RESTART_DELAY)
            try:
                current, _ = await start_view(db, host, port)
            except ViewFailed as exc:
                log(f"{exc}; trying again")
    finally:
        if current is not None:
            await stop_view(current)


def port_of(url: str) -> int:
    """The port of ``http://HOST:PORT``."""
    return int(url.rsplit(":", 1)[1])


def lower_priority() -> None:
    """Lower this process's CPU priority by :data:`VIEW_NICENESS`: every
    ``arbiter web`` does, the server's child or one beside a running
    tournament, so a busy machine gives its cores to the engines first."""
    import os

    try:
        os.nice(VIEW_NICENESS)
    except OSError:
        pass  # a system that refuses: the view still runs, at its starter's priority


def be_child() -> Any:
    """(In the child.) The task that cancels ``scope`` when stdin reaches end
    of file (the server ended or was killed)."""
    import os

    import trio

    async def until_stdin_closes(scope: trio.CancelScope) -> None:
        stdin = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
        async with stdin:
            while await stdin.receive_some(MAX_LINE):
                pass  # the server writes nothing; only the end matters
        scope.cancel()
    return until_stdin_closes


__all__ = ["CHILD_OPTION", "RESTART_DELAY", "STOP_TIMEOUT", "VIEW_NICENESS", "ViewFailed", "lower_priority",
           "be_child", "port_of", "start_view", "stop_view", "supervise"]
