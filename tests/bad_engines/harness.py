"""What the match tests share: engine configs for the scripts in this
directory, short timeouts, and checks that no process is left behind.

Zombies count as gone: in a container whose init does not reap orphans, an
engine's reparented child stays a zombie after it was killed."""

from __future__ import annotations

import os
import sys

from arbiter.engine import EngineConfig, EngineTimeouts

HERE = os.path.dirname(os.path.abspath(__file__))

#: short deadlines so misbehaving engines cost the suite little time
FAST = EngineTimeouts(handshake=10, ready=5, stop=0.5, quit_grace=0.5, term_grace=0.3)


_STEM = "<the script's name>"


def config(script: str, *args: str, name: str | None = _STEM, **kw) -> EngineConfig:
    """An engine config running ``tests/bad_engines/<script>`` with this Python,
    named after the script (``name=None``: after its ``id name``)."""
    return EngineConfig(cmd=f"{sys.executable} {os.path.join(HERE, script)}", args=list(args),
                        name=script.removesuffix(".py") if name == _STEM else name, **kw)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of a process, None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[2])


def pid_alive(pid: int) -> bool:
    """True if ``pid`` runs (zombies and missing processes are dead)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def group_alive(pgid: int) -> list[int]:
    """The live (non-zombie) processes of process group ``pgid``."""
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] == pgid and stat[0] not in ("Z", "X"):
                alive.append(int(entry))
    return alive
