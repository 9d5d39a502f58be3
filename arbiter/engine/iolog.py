"""An engine's I/O log (``--log DIR``, ``specs/match.md`` §Engine processes)."""

from __future__ import annotations

import os
import re
from typing import TextIO

import trio

__all__ = ["IOLog", "LOG_LINE_CHARS", "log_dir_problem", "log_path"]

#: The longest entry of the I/O log, in characters: long enough for any
#: honest line, short enough that a flooding engine cannot fill the disk fast.
LOG_LINE_CHARS = 4096

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


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


def log_path(log_dir: str, label: str, pid: int) -> str:
    """Where the I/O log of engine ``label``, process ``pid``, goes in ``log_dir``."""
    name = _UNSAFE.sub("_", label).strip("_") or "engine"
    return os.path.join(log_dir, f"{name}-{pid}.log")
