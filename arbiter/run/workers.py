"""How many worker processes a run plays in (``--workers N|auto``,
``specs/tournament.md`` §Worker processes)."""

from __future__ import annotations

import math

from .gameloop import cores

__all__ = ["AUTO", "SLOTS_PER_LOOP", "choose_workers", "parse_workers", "WorkersError"]

AUTO = "auto"

#: Games at once that one event loop carries with room to spare.  Measured
#: (bench/scale.py, bench/README.md §Worker processes): one loop saturates at
#: about 3,000 plies a second, which random movers at 1+0.01 reach near 16
#: games at once on the 16-core machine; at 8 games at once the loop is at
#: about half a core, and its delay stays within a few milliseconds.  So a
#: run of at most this many games at once stays in its own process (and
#: pays no worker start-up), and a larger one gets a worker per this many
#: games, one per core at most.
SLOTS_PER_LOOP = 8


class WorkersError(ValueError):
    """A ``--workers`` value that is neither a positive number nor ``auto``."""


def parse_workers(text: str | int | None) -> int | str:
    """``auto`` (or None), or a positive number of worker processes."""
    if text is None or str(text).strip().lower() == AUTO:
        return AUTO
    try:
        value = int(str(text).strip())
    except ValueError:
        raise WorkersError(f"--workers {text!r}: a number of worker processes (1 plays in this "
                           "process) or 'auto'") from None
    if value < 1:
        raise WorkersError(f"--workers {value}: at least 1 (1 plays in this process)")
    return value


def choose_workers(workers: int | str, concurrency: int, machine_cores: int | None = None) -> int:
    """The worker processes of a run of ``concurrency`` games at once: the
    number asked for (never more than the games at once), or for ``auto``
    one process up to :data:`SLOTS_PER_LOOP` games at once, then one worker
    per that many, at most one per core (1 means: in this process)."""
    if workers != AUTO:
        return max(1, min(int(workers), concurrency))
    if concurrency <= SLOTS_PER_LOOP:
        return 1
    return max(1, min(machine_cores or cores(), math.ceil(concurrency / SLOTS_PER_LOOP)))
