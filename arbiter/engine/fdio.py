"""Reads and writes on a raw non-blocking file descriptor: the one home of
the arbiter's pipe and socket trick.

Every engine pipe and plain TCP socket the arbiter serves is read with
``trio.lowlevel.wait_readable`` then one ``os.read``, and written with one
``os.write`` at once (waiting with ``wait_writable`` only for what the fd did
not take), instead of through trio's streams, whose ``receive_some`` and
``send_all`` pass through the scheduler more often per reply (the cost per
ply is measured against the bare pipe round trip in ``bench/overhead.py``;
``bench/README.md`` §The match, §The match server).  The users: the pipe
transport, the socket transport's direct reads and writes, the stderr
drain, ``arbiter connect``'s relay (its trio tasks and its blocking poll
loop), the conformance checker's probe.

The contract, the same everywhere (``fd`` is non-blocking):

* a read gives bytes, or ``b""`` at the **end**: end of file, an error
  that ends the stream (a reset connection, a closed pipe), or, for the
  waiting reads, the fd closed meanwhile (``trio.lowlevel.notify_closing``
  wakes the wait); :func:`read_now` gives None when nothing is there yet
  (``EAGAIN``), and :func:`read_some` waits instead;
* a write that does not wait (:func:`write_now`) gives the number of bytes
  taken, 0 when the fd is full (``EAGAIN``), and raises :class:`OSError`
  when the other end is gone (``EPIPE``, a reset); :func:`write_all` writes
  everything, waiting while the fd is full, and raises :class:`OSError` (the
  other end is gone) or :class:`trio.ClosedResourceError` (the fd was closed
  meanwhile).

One task at a time may wait to read, and one to write, on an fd (trio's
rule: a second waiter raises :class:`trio.BusyResourceError`).
"""

from __future__ import annotations

import os

import trio

__all__ = ["READ_CHUNK", "read_now", "read_some", "write_now", "write_all"]

#: Bytes read at a time by default (one pipe's capacity).
READ_CHUNK = 1 << 16


def read_now(fd: int, max_bytes: int = READ_CHUNK) -> bytes | None:
    """One read that does not wait: up to ``max_bytes``; ``b""`` at the end
    (end of file, or an error that ends the stream); None when there is
    nothing now."""
    try:
        return os.read(fd, max_bytes)
    except BlockingIOError:
        return None
    except OSError:
        return b""


async def read_some(fd: int, max_bytes: int = READ_CHUNK) -> bytes:
    """The next bytes of ``fd`` (up to ``max_bytes``), waited for; ``b""`` at
    the end, or once the fd is closed (``notify_closing``) while waiting.
    Cancellable while it waits; nothing is lost then (no read was made)."""
    while True:
        try:
            await trio.lowlevel.wait_readable(fd)
        except trio.ClosedResourceError:
            return b""
        data = read_now(fd, max_bytes)
        if data is not None:
            return data


def write_now(fd: int, data: bytes | bytearray | memoryview) -> int:
    """As much of ``data`` as ``fd`` takes now: the number of bytes written
    (0: the fd is full).  :class:`OSError` when the other end is gone."""
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0


async def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """All of ``data`` to ``fd``: one write at once (no checkpoint when it
    takes everything, the usual case: the caller's next wait is one), then
    ``wait_writable`` for the rest.  :class:`OSError` when the other end is
    gone, :class:`trio.ClosedResourceError` when the fd is closed while
    waiting.  The caller bounds the time (a reader that does not read blocks it)."""
    sent = write_now(fd, data)
    if sent == len(data):
        return
    view = memoryview(data)
    while sent < len(view):
        await trio.lowlevel.wait_writable(fd)
        sent += write_now(fd, view[sent:])
