"""How much of a move's time the engine SDK keeps back: its measured overhead (no I/O).

The arbiter's clock runs from ``go`` written to ``bestmove`` read.  A search
that stops exactly at its deadline still answers late by what happens after
the deadline passes: the stretch until the engine next looks at the clock
(the longest wall-clock gap between two looks, a stretch of search, of
garbage collection, or of the process not being scheduled at all), then the
SDK's own work up to the ``bestmove`` write.  :class:`OverheadMeter` measures
that per move and keeps the recent worst, and :func:`reserve_ms` turns it into
the milliseconds :func:`protocol.sdk.time_budget_ms` keeps back: at least the
fixed :data:`protocol.sdk.MOVE_OVERHEAD_MS` floor, more on a machine (or in a
position) where the SDK has been measured slower: the measured overhead,
as much again for the legs it cannot measure, and the pipes' allowance.
"""

from __future__ import annotations

import time
from collections import deque

__all__ = ["RESERVE_WINDOW", "PIPE_ALLOWANCE_MS", "UNMEASURED_SHARE", "PROBE_NAPS", "OverheadMeter",
           "reserve_ms", "scheduling_delay_ms"]

#: Moves whose measured overhead the reserve covers: the worst of the last 16
#: timed searches.  Load on a machine comes and goes over seconds (another
#: process's burst, a neighbour's build); 16 moves of a short ``movetime`` is
#: about a second, long enough to carry the worst stretch of a burst to its
#: next moves, short enough that one freak pause (a page fault storm, a
#: collector run) shortens only a few seconds of searches, never the game.
RESERVE_WINDOW = 16

#: Milliseconds added for what the engine cannot measure on an idle machine:
#: the pipe from the arbiter to the engine (``go`` written to read) and back
#: (``bestmove`` written to read), a few hundredths of a ms each.
PIPE_ALLOWANCE_MS = 1.0

#: What the engine cannot measure on a busy machine, as a multiple of what it
#: measured: the ``go`` line's way in and the ``bestmove`` line's way out
#: wait for a process to be scheduled (the engine's main thread, the
#: arbiter) as its own search thread waited, on the same cores.  On a
#: 2-core machine at load 4, ``arbiter match`` saw ``bestmove`` up to 10 ms
#: later than the engine had measured itself late.
UNMEASURED_SHARE = 1.0


#: Naps of :func:`scheduling_delay_ms`: ten 1 ms naps, about 10 ms on an
#: idle machine, spent between games (``uginewgame``, on no clock).
PROBE_NAPS = 10


def scheduling_delay_ms(naps: int = PROBE_NAPS) -> float:
    """How long this process waited to run again, at worst, after ``naps``
    naps of 1 ms each: the machine's scheduling delay now, in ms.

    The SDK records it in its meter at every ``uginewgame``, so that the
    first moves of a game, before any search was measured, keep a reserve
    that fits a loaded machine (a process at load 5 on 2 cores woke up to
    tens of ms late) as well as the later ones."""
    worst = 0.0
    for _ in range(naps):
        before = time.monotonic()
        time.sleep(0.001)
        worst = max(worst, time.monotonic() - before - 0.001)
    return worst * 1000


class OverheadMeter:
    """The worst overhead of the last :data:`RESERVE_WINDOW` timed searches, in ms.

    :meth:`record` takes one search's overhead: its longest wall-clock gap
    between two looks at the deadline plus the time from its last look to
    the ``bestmove`` write (the SDK measures both,
    :attr:`protocol.sdk.SearchLimits.overhead_ms`).  That bounds how late the
    search would have answered had its deadline fallen just after a look, so
    it is recorded for every timed search, one that ended early included.
    :meth:`worst_ms` is 0 before any search: the floor alone holds then."""

    __slots__ = ("_samples",)

    def __init__(self, window: int = RESERVE_WINDOW) -> None:
        if window < 1:
            raise ValueError("the window holds at least one search")
        self._samples: deque[float] = deque(maxlen=window)

    def record(self, overhead_ms: float) -> None:
        """One search's overhead (negative values, impossible, count as 0)."""
        self._samples.append(max(0.0, overhead_ms))

    def worst_ms(self) -> float:
        """The largest overhead of the window (0 when nothing was recorded)."""
        return max(self._samples, default=0.0)

    def __len__(self) -> int:
        return len(self._samples)


def reserve_ms(floor_ms: float, measured_ms: float) -> float:
    """Milliseconds kept back from a move's time: the larger of ``floor_ms``
    (the fixed reserve) and the measured overhead with the unmeasured legs
    added (``measured_ms * (1 + UNMEASURED_SHARE) + PIPE_ALLOWANCE_MS``),
    the latter only when something was measured."""
    if measured_ms <= 0:
        return floor_ms
    return max(floor_ms, measured_ms * (1 + UNMEASURED_SHARE) + PIPE_ALLOWANCE_MS)
