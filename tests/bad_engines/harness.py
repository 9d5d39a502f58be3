"""What the match tests share: engine configs for the scripts in this
directory, short timeouts, and checks that no process is left behind.

Zombies count as gone: in a container whose init does not reap orphans, an
engine's reparented child stays a zombie after it was killed."""

from __future__ import annotations

import os
import sys

from arbiter.engine import EngineConfig, EngineTimeouts
from arbiter.procs import GONE, live_group_members, pid_alive, proc_table, processes_with  # noqa: F401 (re-exported for tests)

HERE = os.path.dirname(os.path.abspath(__file__))

#: short deadlines so misbehaving engines cost the suite little time
FAST = EngineTimeouts(handshake=10, ready=5, stop=0.5, quit_grace=0.5, term_grace=0.3)


_STEM = "<the script's name>"


def config(script: str, *args: str, name: str | None = _STEM, **kw) -> EngineConfig:
    """An engine config running ``tests/bad_engines/<script>`` with this Python,
    named after the script (``name=None``: after its ``id name``)."""
    return EngineConfig(cmd=f"{sys.executable} {os.path.join(HERE, script)}", args=list(args),
                        name=script.removesuffix(".py") if name == _STEM else name, **kw)


# one home for reading /proc: arbiter/procs.py
group_alive = live_group_members


