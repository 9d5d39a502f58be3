"""The raw-fd reads and writes' contract (arbiter/engine/fdio.py), on real
non-blocking pipes: bytes, None for nothing yet, b"" at the end; writes
that take what they can, wait for the rest, and fail when the reader is gone."""

from __future__ import annotations

import os

import pytest
import trio
import trio.testing

from arbiter.engine.fdio import read_now, read_some, write_all, write_now


@pytest.fixture
def pipe():
    read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    fds = {"r": read_fd, "w": write_fd}
    yield fds
    for fd in fds.values():
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass


def _close(fds: dict[str, int], end: str) -> None:
    os.close(fds[end])
    fds[end] = -1


def test_read_now_tells_nothing_yet_from_the_end(pipe):
    assert read_now(pipe["r"]) is None
    assert write_now(pipe["w"], b"bestmove a1\n") == 12
    assert read_now(pipe["r"]) == b"bestmove a1\n"
    _close(pipe, "w")
    assert read_now(pipe["r"]) == b""


def test_a_full_pipe_takes_what_it_can_and_a_gone_reader_raises(pipe):
    taken = write_now(pipe["w"], b"x" * (1 << 22))
    assert 0 < taken < 1 << 22
    assert write_now(pipe["w"], b"more") == 0  # full: nothing taken, no error
    _close(pipe, "r")
    with pytest.raises(OSError):
        write_now(pipe["w"], b"more")


async def test_read_some_waits_for_bytes_and_ends_when_the_fd_is_closed(pipe):
    async def later() -> None:
        await trio.sleep(0.05)
        write_now(pipe["w"], b"readyok\n")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(later)
        assert await read_some(pipe["r"]) == b"readyok\n"

    got: list[bytes] = []

    async def reader() -> None:
        got.append(await read_some(pipe["r"]))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        await trio.testing.wait_all_tasks_blocked()
        trio.lowlevel.notify_closing(pipe["r"])  # what a trio stream's aclose does
    assert got == [b""]


async def test_write_all_waits_while_the_pipe_is_full(pipe):
    data = os.urandom(1 << 20)  # more than a pipe holds
    read: list[bytes] = []

    async def drain() -> None:
        while sum(map(len, read)) < len(data):
            read.append(await read_some(pipe["r"]))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drain)
        await write_all(pipe["w"], data)
    assert b"".join(read) == data
    _close(pipe, "r")
    with pytest.raises(OSError):
        await write_all(pipe["w"], b"quit\n")
