"""The ``arbiter`` command line from the tests: in this process, or as a real process.

Most CLI tests only check what a command prints and its exit status: they call
:func:`invoke`, typer's ``CliRunner`` on ``arbiter.cli.app`` in this process
(no interpreter start-up and no imports per call, so it costs milliseconds
where a process costs a second).  A test that needs a real process -- signals,
the exit of a killed run, pipes, the ``python -m arbiter`` entry point
itself -- calls :func:`arbiter` (run to the end) or :func:`start` (a process to
drive; :class:`Watched` reads its output as it comes, for a command that runs
until it is stopped).

``invoke`` and ``arbiter`` return the same ``subprocess.CompletedProcess[str]``
(``returncode``, ``stdout``, ``stderr``), so a test moves from one to the other
by changing the name.  Both fail the test on a traceback, as the CLI's contract
is one clear line for any error, never a traceback (``invoke`` raises the
exception a command let out, with its own traceback).

Usage, from a test file (``tests/`` is on ``sys.path``)::

    from cli import arbiter, invoke

    run = invoke("moves", "troll", "--json")
    assert run.returncode == 0, run.stderr
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from typer.testing import CliRunner

from arbiter.cli import app

#: the repository: first on a child's PYTHONPATH, so a real process runs this
#: work tree's code whatever is installed
ROOT = Path(__file__).resolve().parent.parent

#: seconds a real ``arbiter`` process may run before the test fails: a guard
#: against a hang, never a measure of speed
PROCESS_TIMEOUT = 300.0

#: a command-line argument (passed as its str())
Arg = str | os.PathLike[str] | int
#: a directory to run in
Place = str | os.PathLike[str]


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with ``env`` over it and :data:`ROOT` first
    on ``PYTHONPATH`` (the engines an arbiter process starts inherit it)."""
    merged = {**os.environ, **(env or {})}
    path = merged.get("PYTHONPATH")
    merged["PYTHONPATH"] = str(ROOT) if not path else f"{ROOT}{os.pathsep}{path}"
    return merged


def _command(args: tuple[Arg, ...]) -> list[str]:
    return [sys.executable, "-m", "arbiter", *map(str, args)]


def arbiter(*args: Arg, cwd: Place | None = None, timeout: float = PROCESS_TIMEOUT,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m arbiter ARGS`` as a real process, run to its end; its exit
    status and output as text.  ``env`` is added to the environment."""
    run = subprocess.run(_command(args), cwd=cwd, env=child_env(env), capture_output=True,
                         text=True, timeout=timeout)
    assert "Traceback" not in run.stderr, run.stderr
    return run


def start(*args: Arg, cwd: Place | None = None,
          env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """``python -m arbiter ARGS`` started and left running, stdout and stderr
    piped as text: for a test that signals, kills or reads it live.  The
    caller waits for it (or kills it)."""
    return subprocess.Popen(_command(args), cwd=cwd, env=child_env(env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def invoke(*args: Arg, cwd: Place | None = None) -> subprocess.CompletedProcess[str]:
    """The same command in this process (``cwd``: run from that directory),
    with what it printed: what :func:`arbiter` would return, without the
    process.  An exception the command lets out is raised here."""
    argv = [str(arg) for arg in args]
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = CliRunner().invoke(app, argv, prog_name="arbiter")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert "Traceback" not in result.stderr, result.stderr
    return subprocess.CompletedProcess(["arbiter", *argv], result.exit_code, result.stdout,
                                       result.stderr)


class ListeningLog:
    """The stderr of a started process that listens (``arbiter serve``, a
    run with ``--listen``), read line by line by a thread so that the
    process never blocks on a full pipe: :attr:`lines` so far, and
    :meth:`port`, the one of its first ``listening on HOST:PORT`` line."""

    def __init__(self, proc: subprocess.Popen[str]):
        self.proc = proc
        self.lines: list[str] = []
        self._port: int | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        try:
            for line in self.proc.stderr:
                self.lines.append(line)
                if self._port is None and "listening on " in line:
                    self._port = int(line.split("listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
                    self._ready.set()
        except ValueError:  # the test closed the stream while this thread read it: the end
            pass
        finally:
            self._ready.set()  # the stream ended without it: port() says so

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def port(self) -> int:
        """The port it listens on, once it said so (the test fails if it
        ends or takes :data:`PROCESS_TIMEOUT` without saying it)."""
        assert self._ready.wait(PROCESS_TIMEOUT), "the process did not say where it listens"
        assert self._port is not None, self.text
        return self._port

    def join(self) -> str:
        """All of stderr, once the process has closed it."""
        self._thread.join(PROCESS_TIMEOUT)
        return self.text


class Watched:
    """A started process (:func:`start`) whose stdout and stderr are read
    line by line by a thread each, so that it never blocks on a full pipe:
    :attr:`lines` so far (both streams, in the order read), :meth:`wait_for`
    a line, :meth:`stop` it with a signal, :meth:`wait` for its end.  For a
    command that runs until it is stopped (``arbiter serve``, ``web``,
    ``connect``, ``worker``)."""

    def __init__(self, proc: subprocess.Popen[str]):
        self.proc = proc
        self.lines: list[str] = []
        self._closed = 0  # streams read to their end
        self._news = threading.Condition()
        self._threads = [threading.Thread(target=self._read, args=(stream,), daemon=True)
                         for stream in (proc.stdout, proc.stderr) if stream is not None]
        for thread in self._threads:
            thread.start()

    def _read(self, stream) -> None:
        try:
            for line in stream:
                with self._news:
                    self.lines.append(line)
                    self._news.notify_all()
        finally:
            with self._news:
                self._closed += 1
                self._news.notify_all()

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def wait_for(self, text: str) -> str:
        """The first line holding ``text``, once printed; the test fails if
        the process closes its output first, or takes :data:`PROCESS_TIMEOUT`."""
        def found() -> str | None:
            return next((line for line in self.lines if text in line), None)

        with self._news:
            self._news.wait_for(lambda: found() is not None or self._closed == len(self._threads),
                                PROCESS_TIMEOUT)
            line = found()
        assert line is not None, f"no line with {text!r} from {self.proc.args}:\n{self.text}"
        return line

    def wait(self) -> int:
        """Its exit status once it has ended on its own, its output read."""
        self.proc.wait(PROCESS_TIMEOUT)
        for thread in self._threads:
            thread.join(PROCESS_TIMEOUT)
        assert "Traceback" not in self.text, self.text
        return self.proc.returncode

    def stop(self, signum: int) -> int:
        """Its exit status after ``signum`` (SIGINT: Ctrl-C; SIGTERM)."""
        self.proc.send_signal(signum)
        return self.wait()

    def kill(self) -> None:
        """SIGKILL if it still runs (a test's clean-up after a failure)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(PROCESS_TIMEOUT)
