"""The engine SDK's time management: how long a search may think, and when it must stop.

:func:`time_budget_ms` turns a ``go``'s clock fields into a budget for the
side to move, less a reserve; :class:`OverheadMeter` measures that reserve
(the SDK's own latency on this machine, over the last timed searches);
:class:`SearchLimits` is what ``choose_move`` receives: the budget, the
depth and node limits, and :meth:`SearchLimits.stopped`, which a search
calls often (at most :data:`MAX_UNCHECKED_MS` apart) to learn that ``stop``
came or the time is up.  The named constants are the rules, each with its
reason (``specs/protocol.md`` §Python SDK).  :mod:`arbiter.sdk` runs the
engine and re-exports these names.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field

from protocol import messages as m

#: Milliseconds kept back from every time budget: the SDK's own latency
#: (reading the line, building the position, writing ``bestmove``) on a busy
#: machine.  The arbiter's clock runs from ``go`` written to ``bestmove`` read.
MOVE_OVERHEAD_MS = 30

#: With a clock and no ``movestogo``, plan as if this many moves remain.
DEFAULT_MOVES_TO_GO = 30

#: Never plan to spend more than this share of the remaining clock on one move.
MAX_CLOCK_SHARE = 0.5

#: ``go`` without any limit: a search this long (an arbiter always sends one).
DEFAULT_BUDGET_MS = 1_000

#: The most CPU time (ms) a sample engine spends between two looks at its
#: deadline (:meth:`SearchLimits.stopped`), the SDK's own work before
#: ``bestmove`` included: well below the reserve :data:`MOVE_OVERHEAD_MS`
#: keeps (a quarter of a short ``movetime``: 12.5 ms of ``go movetime 50``),
#: so that an engine that looks this often answers in time on an unloaded
#: machine.  ``tests/test_sample_engines.py`` holds the sample engines to it.
MAX_UNCHECKED_MS = 5.0


#: Timed searches whose overhead :class:`OverheadMeter` remembers: about a
#: game's worth of one side's moves, so a loaded spell raises the reserve at
#: once and a quiet one lets it fall back within a game.
OVERHEAD_WINDOW = 32

#: The measured reserve never takes more than this share of a ``movetime``:
#: a machine that stalls longer than that cannot be out-waited by thinking
#: less, and the search must keep something.
MAX_RESERVE_SHARE = 0.5


class OverheadMeter:
    """What this engine's answers cost beyond its search, measured: the
    reserve the next budgets keep back (:func:`time_budget_ms`).

    After each timed search, :meth:`record` is given how late the
    ``bestmove`` was written after the search's own deadline (the last
    stretch of work and the SDK's answer) and the longest stall seen during
    the search (a stretch between two looks at the clock in which the
    search thread waited for a CPU instead of running: the machine is busy).
    A stall counts twice: the ``go`` line and the ``bestmove`` line each
    wait about as long to be read, on the engine's side and the arbiter's,
    and neither is seen by the search.  The garbage collection the SDK runs
    after answering (``after_ms``, see :meth:`EngineRunner._search_and_answer`)
    counts too: a ``go`` that arrives meanwhile waits for it.  The reserve is
    the largest such sum of the last :data:`OVERHEAD_WINDOW` searches."""

    def __init__(self) -> None:
        self._recent: deque[float] = deque(maxlen=OVERHEAD_WINDOW)

    def record(self, late_ms: float, stalled_ms: float, after_ms: float = 0.0) -> None:
        self._recent.append(max(0.0, late_ms) + 2 * max(0.0, stalled_ms) + max(0.0, after_ms))

    def reserve_ms(self) -> float:
        """Milliseconds to keep back from the next budget (0 before any search)."""
        return max(self._recent, default=0.0)


#: Naps of :func:`scheduling_delay_ms`: ten of 1 ms, about 10 ms spent at
#: each ``uginewgame`` (on no clock).
PROBE_NAPS = 10


def scheduling_delay_ms(naps: int = PROBE_NAPS) -> float:
    """How much later than asked this process woke from ``naps`` naps of
    1 ms, at worst, in ms: how long it waits for a CPU on this machine now.

    It is a stall as :class:`OverheadMeter` counts them: the runner records
    it at each ``uginewgame``, so that a game's first moves, before any of
    its searches was measured, keep a reserve that fits a loaded machine
    (at load 11 on 2 cores, ``mcts`` lost games on time on its first or
    second move, with only the 12.5 ms floor of ``go movetime 50``)."""
    worst = 0.0
    for _ in range(naps):
        before = time.monotonic()
        time.sleep(0.001)
        worst = max(worst, time.monotonic() - before - 0.001)
    return worst * 1000


def time_budget_ms(go: m.Go, mover_is_p1: bool, reserve_ms: float = 0.0) -> float | None:
    """Milliseconds this move may take, or None for no time limit.

    With a clock: the remaining time spread over the moves to go (30 when
    ``movestogo`` is absent, ``movestogo + 1`` when present, so the last move
    before a time control keeps a reserve), plus half the increment, never more
    than half the clock, minus the reserve.  ``movetime`` is a hard cap, less
    its reserve.  With ``infinite`` or only depth/nodes: None.

    The reserve is :data:`MOVE_OVERHEAD_MS` (of a ``movetime``: a quarter of
    it at most), or ``reserve_ms`` (the engine's measured overhead,
    :class:`OverheadMeter`) where that is larger; of a ``movetime`` at most
    :data:`MAX_RESERVE_SHARE`.
    """
    budgets: list[float] = []
    if go.movetime is not None:
        reserve = min(max(min(MOVE_OVERHEAD_MS, go.movetime / 4), reserve_ms),
                      go.movetime * MAX_RESERVE_SHARE)
        budgets.append(go.movetime - reserve)
    clock = go.p1time if mover_is_p1 else go.p2time
    if clock is not None:
        increment = (go.p1inc if mover_is_p1 else go.p2inc) or 0
        remaining = max(0.0, clock - max(MOVE_OVERHEAD_MS, reserve_ms))
        moves_to_go = go.movestogo + 1 if go.movestogo else DEFAULT_MOVES_TO_GO
        share = remaining / moves_to_go + increment / 2
        budgets.append(min(share, remaining * MAX_CLOCK_SHARE))
    if budgets:
        return max(0.0, min(budgets))
    if go.infinite or go.depth is not None or go.nodes is not None:
        return None
    return DEFAULT_BUDGET_MS


@dataclass
class SearchLimits:
    """What one search may spend.  Engines poll :meth:`stopped`.

    ``budget`` is in seconds (None: no time limit), counted from ``start``:
    under :func:`run`, the moment the ``go`` line was read, so the time spent
    setting up the position counts as the arbiter's clock counts it;
    ``depth`` and ``nodes`` come straight from ``go``; ``infinite`` means the
    SDK holds ``bestmove`` back until ``stop``, whenever the engine finishes.

    Each :meth:`stopped` also measures the CPU time the search thread spent
    since the previous look (:meth:`begin` starts the count):
    :attr:`longest_unchecked` is the longest such stretch, in seconds, the
    SDK's work before ``bestmove`` included.  It is what makes an engine
    late, whatever the machine's load, so it is what the sample engines are
    tested on (:data:`MAX_UNCHECKED_MS`).  :attr:`longest_stall` is the
    longest such stretch's wall-clock time beyond its CPU time: how long the
    search thread waited for a CPU (what the machine's load costs;
    :class:`OverheadMeter`)."""

    budget: float | None = None
    depth: int | None = None
    nodes: int | None = None
    infinite: bool = False
    go: m.Go = field(default_factory=m.Go)
    start: float = field(default_factory=time.monotonic)
    stop_event: threading.Event = field(default_factory=threading.Event)
    longest_unchecked: float = 0.0
    longest_stall: float = 0.0
    _cpu_mark: float = field(default_factory=time.thread_time, repr=False)
    _wall_mark: float = field(default_factory=time.monotonic, repr=False)

    @classmethod
    def from_go(cls, go: m.Go, mover_is_p1: bool, start: float | None = None,
                reserve_ms: float = 0.0) -> SearchLimits:
        """The limits of ``go``; ``start`` when it was read (default: now);
        ``reserve_ms`` the engine's measured overhead (:func:`time_budget_ms`)."""
        budget = time_budget_ms(go, mover_is_p1, reserve_ms)
        return cls(
            budget=None if budget is None else budget / 1000,
            depth=go.depth,
            nodes=go.nodes,
            infinite=go.infinite,
            go=go,
            start=time.monotonic() if start is None else start,
        )

    def begin(self) -> None:
        """The search thread starts: the counts of :meth:`stopped` start now."""
        self._cpu_mark = time.thread_time()
        self._wall_mark = time.monotonic()

    def checked(self) -> None:
        """Count the CPU time since the last look at the clock, and the wait
        for a CPU in it (see the class docstring)."""
        now, wall = time.thread_time(), time.monotonic()
        stretch = now - self._cpu_mark
        if stretch > self.longest_unchecked:
            self.longest_unchecked = stretch
        stall = (wall - self._wall_mark) - stretch
        if stall > self.longest_stall:
            self.longest_stall = stall
        self._cpu_mark, self._wall_mark = now, wall

    @classmethod
    def fixed(cls, *, nodes: int | None = None, depth: int | None = None,
              seconds: float | None = None) -> SearchLimits:
        """Limits for calling an engine directly from Python (tests, benches)."""
        return cls(budget=seconds, depth=depth, nodes=nodes)

    def elapsed(self) -> float:
        """Seconds since the search started."""
        return time.monotonic() - self.start

    def elapsed_ms(self) -> int:
        return int(self.elapsed() * 1000)

    @property
    def stop_requested(self) -> bool:
        """``stop`` (or ``quit``) arrived."""
        return self.stop_event.is_set()

    def out_of_time(self) -> bool:
        return self.budget is not None and self.elapsed() >= self.budget

    def stopped(self) -> bool:
        """True when the search must end now: ``stop`` came or time is up."""
        self.checked()
        return self.stop_event.is_set() or (
            self.budget is not None and time.monotonic() - self.start >= self.budget
        )
