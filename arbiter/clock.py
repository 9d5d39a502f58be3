"""Time controls and clocks: pure bookkeeping, no I/O, no trio.

The match measures how long an engine took (from writing ``go`` to reading
``bestmove``, on a monotonic clock) and hands the figure to :meth:`Clock.stop`;
this module only does the arithmetic, so every rule of ``specs/match.md``
§Time controls can be tested without a process or a timer.

Time controls use cutechess-cli's syntax, plus search limits joined by commas:

========================  ===================================================
``40/60+0.5``             40 moves in 60 s, +0.5 s per move; repeats per period
``60+0.5`` / ``1:30``     Fischer: 60 s (or 1 min 30 s) for the game, +0.5 s
``st=2``                  a fixed 2 s per move (``go movetime 2000``)
``depth=8`` ``nodes=1e5``  a search limit and no clock
``inf``                   no limit: ``go infinite``, stopped by the arbiter
``60+1,depth=12``         a clock and a search limit together
========================  ===================================================

Increment convention (like cutechess-cli): the increment is added *after*
the move, so the first ``go`` of a ``60+1`` game says ``p1time 60000``;
with ``M/T`` the base time ``T`` is added again after every ``M``-th move of
that side, and ``movestogo`` counts down the moves left in the period.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from protocol.limits import MAX_INT
from protocol.search import SearchLimits

#: how long an engine without a clock (depth/nodes/inf) may search before the
#: arbiter sends ``stop``: generous, so only a hung engine ever reaches it.
DEFAULT_STALL_MS = 60_000

#: Longest time a time control (base, increment, movetime), a time margin or
#: a stall limit may state, in ms: 10**12 ms is about 31 years, longer than any
#: game, and small enough that a clock growing by it on every move of a game
#: of a million moves stays within the protocol's signed 64-bit fields
#: (:data:`protocol.limits.MAX_INT`), and exact as a float (below 2**53).
MAX_TIME_MS = 10**12

#: Largest ``depth=``, ``nodes=`` or moves per period: the protocol's
#: largest integer, so every ``go`` the arbiter writes is one engines can read.
MAX_COUNT = MAX_INT


class TimeControlError(ValueError):
    """A time-control string that cannot be parsed; the message says why."""

    def __init__(self, text: str, reason: str):
        self.text = text
        self.reason = reason
        super().__init__(f"bad time control {text!r}: {reason}")


_CLOCK_RE = re.compile(r"^(?:(?P<moves>\d+)/)?(?P<base>[0-9.:]+)(?:\+(?P<inc>[0-9.]+))?$")


def _seconds_to_ms(text: str, whole: str, what: str) -> int:
    """``"1.5"`` -> 1500, ``"1:30"`` -> 90000 (cutechess accepts minutes:seconds)."""
    parts = text.split(":")
    if len(parts) > 2 or not all(parts):
        raise TimeControlError(whole, f"{what} {text!r} is not seconds or minutes:seconds")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise TimeControlError(whole, f"{what} {text!r} is not a number") from None
    seconds = values[0] * 60 + values[1] if len(values) == 2 else values[0]
    if not math.isfinite(seconds) or seconds < 0:
        raise TimeControlError(whole, f"{what} {text!r} must be a finite number >= 0")
    if seconds * 1000 > MAX_TIME_MS:
        raise TimeControlError(whole, f"{what} {text!r} is over the limit of "
                               f"{MAX_TIME_MS // 1000} seconds")
    return round(seconds * 1000)


def _positive_int(text: str, whole: str, what: str) -> int:
    """A whole number >= 1 and <= :data:`MAX_COUNT`, digits or ``1e5``; read
    as a Decimal, so that neither ``1e400`` nor a long string of digits is
    turned into a float or a huge int before it is refused."""
    try:
        value: Decimal | None = Decimal(text)
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite():
        raise TimeControlError(whole, f"{what} {text!r} is not a whole number")
    if value < 1 or value != value.to_integral_value():
        raise TimeControlError(whole, f"{what} must be a whole number >= 1, not {text!r}")
    if value > MAX_COUNT:
        raise TimeControlError(whole, f"{what} {text!r} is over the limit of {MAX_COUNT}")
    return int(value)


@dataclass(frozen=True)
class TimeControl:
    """A parsed time control: at most one clock kind plus optional search limits.

    Exactly one of these describes the clock: ``base_ms`` (a game clock,
    optionally with ``moves`` per period and ``inc_ms``), ``movetime_ms``
    (fixed time per move), or neither (no clock: ``depth``/``nodes`` limits
    or ``inf``).  Times are milliseconds.
    """

    base_ms: int | None = None
    inc_ms: int = 0
    moves: int | None = None
    movetime_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None

    @property
    def has_clock(self) -> bool:
        return self.base_ms is not None

    @property
    def is_timed(self) -> bool:
        """True when running out of time is a time forfeit (clock or movetime)."""
        return self.base_ms is not None or self.movetime_ms is not None

    @property
    def is_infinite(self) -> bool:
        """No clock and no search limit: the engine gets ``go infinite``."""
        return not self.is_timed and self.depth is None and self.nodes is None

    @classmethod
    @lru_cache(maxsize=256)  # a TimeControl is immutable: one parse per spelling
    def parse(cls, text: str) -> TimeControl:
        """Parse cutechess syntax (see the module docstring); TimeControlError if bad."""
        whole = text
        terms = [t.strip() for t in text.replace(" ", ",").split(",") if t.strip()]
        if not terms:
            raise TimeControlError(whole, "empty")
        fields: dict[str, int | None] = {}
        clock_term: str | None = None
        for term in terms:
            key, eq, value = term.partition("=")
            key = key.lower()
            if eq:
                if key not in ("st", "depth", "nodes"):
                    raise TimeControlError(whole, f"unknown term {term!r} (expected st=, depth=, nodes=)")
                if key in fields or (key == "st" and clock_term):
                    raise TimeControlError(whole, f"{term!r} given twice or with another clock")
                if key == "st":
                    clock_term = term
                    ms = _seconds_to_ms(value, whole, "st")
                    if ms < 1:
                        raise TimeControlError(whole, "st= must be more than 0 seconds")
                    fields["movetime_ms"] = ms
                else:
                    fields[key] = _positive_int(value, whole, key)
                continue
            if clock_term:
                raise TimeControlError(whole, f"two clocks: {clock_term!r} and {term!r}")
            clock_term = term
            if key == "inf" or key == "infinite":
                continue
            match = _CLOCK_RE.match(term)
            if not match:
                raise TimeControlError(
                    whole, f"{term!r} is not moves/seconds+increment, seconds+increment, st=, depth=, nodes= or inf")
            base = _seconds_to_ms(match["base"], whole, "time")
            if base < 1:
                raise TimeControlError(whole, "the base time must be more than 0 seconds")
            fields["base_ms"] = base
            fields["inc_ms"] = _seconds_to_ms(match["inc"], whole, "increment") if match["inc"] else 0
            if match["moves"] is not None:
                fields["moves"] = _positive_int(match["moves"], whole, "moves per period")
        return cls(**fields)  # type: ignore[arg-type]

    def __str__(self) -> str:
        """The canonical spelling; ``TimeControl.parse(str(tc)) == tc``."""
        terms = []
        if self.base_ms is not None:
            text = _fmt_seconds(self.base_ms)
            if self.moves:
                text = f"{self.moves}/{text}"
            if self.inc_ms:
                text += f"+{_fmt_seconds(self.inc_ms)}"
            terms.append(text)
        elif self.movetime_ms is not None:
            terms.append(f"st={_fmt_seconds(self.movetime_ms)}")
        if self.depth is not None:
            terms.append(f"depth={self.depth}")
        if self.nodes is not None:
            terms.append(f"nodes={self.nodes}")
        return ",".join(terms) or "inf"


def _fmt_seconds(ms: int) -> str:
    """``1500`` -> ``"1.5"``, ``1000000500`` -> ``"1000000.5"``: the exact
    decimal of the ms (never an exponent, which would lose digits), so that
    it parses back to the same ms."""
    whole, part = divmod(ms, 1000)
    return f"{whole}" if part == 0 else f"{whole}.{part:03d}".rstrip("0")


class Clock:
    """One player's clock in one game.

    The match calls :meth:`deadline_ms` before a ``go`` (how long it may wait),
    then :meth:`stop` with the measured thinking time.  ``timemargin_ms`` lets
    an engine overstep its time by that much without forfeiting (cutechess's
    ``timemargin``); ``stall_ms`` bounds a search that has no clock.
    """

    def __init__(self, tc: TimeControl, *, timemargin_ms: int = 0, stall_ms: int = DEFAULT_STALL_MS):
        if timemargin_ms < 0:
            raise ValueError("timemargin must be >= 0 ms")
        if stall_ms <= 0:
            raise ValueError("the stall limit must be > 0 ms")
        self.tc = tc
        self.timemargin_ms = timemargin_ms
        self.stall_ms = stall_ms
        #: time left on the clock (ms); None without a game clock
        self.remaining_ms: float | None = float(tc.base_ms) if tc.base_ms is not None else None
        self.moves_played = 0

    @property
    def moves_to_go(self) -> int | None:
        """Moves left in the current period (``40/60``: 40, 39, ..., 1, 40, ...)."""
        if self.tc.moves is None or self.remaining_ms is None:
            return None
        return self.tc.moves - self.moves_played % self.tc.moves

    def deadline_ms(self) -> float:
        """How long after ``go`` the arbiter waits for ``bestmove``.

        With a clock or a movetime this is the time left plus the margin, and
        running past it is a time forfeit.  Without one it is the stall limit,
        after which the arbiter sends ``stop`` (see :attr:`TimeControl.is_timed`)."""
        if self.remaining_ms is not None:
            return max(self.remaining_ms, 0.0) + self.timemargin_ms
        if self.tc.movetime_ms is not None:
            return float(self.tc.movetime_ms + self.timemargin_ms)
        return float(self.stall_ms)

    def is_over_time(self, elapsed_ms: float) -> bool:
        """Would a move that took ``elapsed_ms`` lose on time?"""
        return self.tc.is_timed and elapsed_ms > self.deadline_ms()

    def stop(self, elapsed_ms: float) -> bool:
        """Charge a move that took ``elapsed_ms``; False when it flagged.

        On a flag the clock is left as it was (the game is over anyway).
        Otherwise: time is taken off (never below zero: the margin is grace,
        not debt), then the increment is added, then, at the end of a
        ``moves`` period, the base time again."""
        tc = self.tc
        if tc.is_timed and elapsed_ms > self.deadline_ms():  # is_over_time(), one call less a ply
            return False
        self.moves_played += 1
        if self.remaining_ms is not None and tc.base_ms is not None:
            remaining = max(self.remaining_ms - elapsed_ms, 0.0) + tc.inc_ms
            if tc.moves and self.moves_played % tc.moves == 0:
                remaining += tc.base_ms
            self.remaining_ms = remaining
        return True

    def clock_ms(self) -> int | None:
        """Time left, whole ms (what records show); None without a clock."""
        return None if self.remaining_ms is None else int(self.remaining_ms)

    def limits(self, opponent: Clock) -> SearchLimits:
        """What this side's next search may use, in the clock's words
        (:mod:`protocol.search` turns it into a ``go`` line).

        This side's time control decides the kind of search: a clock gives
        both clocks (the opponent's None if it has none: the ``go`` line then
        repeats the mover's own, :meth:`protocol.search.SearchLimits.clock_fields`,
        so that it always has all four clock fields) and, with a ``moves/time``
        period, the moves left in it (sent only to an engine that reads
        ``movestogo``: :attr:`protocol.session.EngineSession.reads_movestogo`); ``st=`` gives a movetime;
        depth and nodes limits are added as given; nothing at all is an
        infinite search.  Times never go below zero nor above the
        protocol's :data:`~protocol.limits.MAX_INT` (a clock that grew past
        it, by increments over a very long game, is sent as that)."""
        tc = self.tc
        time_ms = inc_ms = their_time = their_inc = movetime = None
        if self.remaining_ms is not None:
            time_ms, inc_ms = _ms_field(self.remaining_ms), tc.inc_ms
            if opponent.remaining_ms is not None:
                their_time, their_inc = _ms_field(opponent.remaining_ms), opponent.tc.inc_ms
        elif tc.movetime_ms is not None:
            movetime = tc.movetime_ms
        moves_to_go = None if tc.moves is None else self.moves_to_go
        return SearchLimits(time_ms, inc_ms, their_time, their_inc, moves_to_go, movetime, tc.depth, tc.nodes)


def _ms_field(ms: float) -> int:
    """Time left as a ``go`` field: whole ms, within 0..MAX_INT."""
    return min(max(int(ms), 0), MAX_INT)
