"""No engine process escapes (``specs/match.md`` §Engine processes), with
real processes, on Linux: a descendant that leaves the engine's process
group (``setsid``) is ended with the engine and reaped, and an engine that
ignores the end of its input is ended with an arbiter killed by SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest
import trio
from bad_engines.harness import FAST, HERE, config, pid_alive, processes_with

from arbiter.engine import open_engine
from arbiter.engine.spawner import _die_with

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

#: how long the killed arbiter's engine may take to be gone (the kernel
#: delivers the parent-death signal asynchronously), in seconds
GONE_BOUND = 5.0


async def _gone(tag: str) -> list[int]:
    """The live processes tagged ``tag`` once none is left, or at
    :data:`GONE_BOUND` those still there."""
    with trio.move_on_after(GONE_BOUND):
        while processes_with(tag):  # noqa: ASYNC110 - /proc has no event to wait for
            await trio.sleep(0.02)
    return processes_with(tag)


async def test_descendant_that_calls_setsid_is_ended_and_reaped(tmp_path):
    tag = f"escape-{uuid.uuid4().hex}"
    pidfile = tmp_path / "child.pid"
    async with open_engine(config("setsid_child.py", str(pidfile), env={"TAG": tag}),
                           timeouts=FAST, log_dir=str(tmp_path)) as engine:
        await engine.ping()
        child = int(pidfile.read_text())
        assert pid_alive(child) and os.getsid(child) == child  # it left the engine's session
    assert processes_with(tag) == []  # nothing of it is left once the block is closed
    assert not os.path.exists(f"/proc/{child}")  # not even a zombie: reaped
    log = next(tmp_path.glob("setsid_child-*.log")).read_text()
    assert "that left the group" in log


async def test_engine_that_ignores_eof_dies_with_a_killed_arbiter():
    tag = f"pdeath-{uuid.uuid4().hex}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [os.path.dirname(HERE), os.environ.get("PYTHONPATH")])))
    arbiter = await trio.lowlevel.open_process(
        [sys.executable, os.path.join(HERE, "arbiter_with_stuck_engine.py"), tag],
        stdout=subprocess.PIPE, env=env)
    try:
        assert arbiter.stdout is not None
        line = b""
        while not line.endswith(b"\n"):
            chunk = await arbiter.stdout.receive_some(64)
            assert chunk, "the arbiter script ended before printing its engine's pid"
            line += chunk
        engine = int(line)
        assert pid_alive(engine) and processes_with(tag) == [engine]
        arbiter.send_signal(signal.SIGKILL)
        await arbiter.wait()
        assert await _gone(tag) == []
    finally:
        arbiter.kill()
        await arbiter.wait()
        if arbiter.stdout is not None:
            await arbiter.stdout.aclose()


def test_child_exits_at_once_when_the_arbiter_died_before_the_prctl():
    # the fork-to-prctl race: the parent seen by the child is not the arbiter
    # whose pid was recorded before the fork, so the child must not exec
    me = os.getpid()  # recorded before the fork, as the spawner does
    child = subprocess.Popen(["true"], preexec_fn=lambda: _die_with(me + 1))
    assert child.wait() == 1
    child = subprocess.Popen(["true"], preexec_fn=lambda: _die_with(me))
    assert child.wait() == 0
