"""A search in the caller's words, and the protocol text that asks for it (no I/O).

The arbiter's clocks say what a search may use from the mover's point of
view (:class:`SearchLimits`, like python-chess's ``Limit``); this module is
the one place that turns that into a ``go`` line (``p1time``/``p2time`` are
the protocol's words: p1 is the side that moves first in the game) and that
builds the ``position ... moves ...`` line of a game as it is played.
"""

from __future__ import annotations

from dataclasses import dataclass

from .messages import Go, SetPosition

__all__ = ["SearchLimits", "go_message", "go_bytes", "PositionLine"]


@dataclass(frozen=True, slots=True)
class SearchLimits:
    """What one search may use, from the mover's side.  Times in ms.

    ``time_ms``/``inc_ms`` are the mover's clock and increment,
    ``opponent_time_ms``/``opponent_inc_ms`` the other side's (None when that
    side has no clock); ``moves_to_go`` the moves left in a ``moves/time``
    period; ``movetime_ms`` a fixed time per move; ``depth`` and ``nodes``
    search limits.  Nothing at all means an infinite search, ended by
    ``stop``.

    A clock ``go`` always carries all four of ``p1time p2time p1inc p2inc``
    (the form ``ugi.md`` lists; specs/protocol.md §Arbiter to engine): a
    missing increment is sent as 0, and an opponent without a clock (per-engine
    time controls) is sent the mover's own time and increment
    (:meth:`clock_fields`)."""

    time_ms: int | None = None
    inc_ms: int | None = None
    opponent_time_ms: int | None = None
    opponent_inc_ms: int | None = None
    moves_to_go: int | None = None
    movetime_ms: int | None = None
    depth: int | None = None
    nodes: int | None = None

    @property
    def infinite(self) -> bool:
        return (self.time_ms is None and self.movetime_ms is None
                and self.depth is None and self.nodes is None)

    def clock_fields(self, mover_is_p1: bool) -> tuple[int, int, int, int] | None:
        """``(p1time, p2time, p1inc, p2inc)`` of a clock search, all four
        given (see the class docstring); None without a clock."""
        mine = self.time_ms
        if mine is None:
            return None
        inc = self.inc_ms or 0
        theirs = self.opponent_time_ms
        if theirs is None:
            theirs, their_inc = mine, inc
        else:
            their_inc = self.opponent_inc_ms or 0
        if mover_is_p1:
            return mine, theirs, inc, their_inc
        return theirs, mine, their_inc, inc


def go_message(limits: SearchLimits, mover_is_p1: bool) -> Go:
    """The protocol's ``go`` for ``limits`` (checked like any message)."""
    p1time, p2time, p1inc, p2inc = limits.clock_fields(mover_is_p1) or (None, None, None, None)
    return Go(p1time=p1time, p2time=p2time, p1inc=p1inc, p2inc=p2inc, movestogo=limits.moves_to_go,
              movetime=limits.movetime_ms, depth=limits.depth, nodes=limits.nodes,
              infinite=limits.infinite)


def go_bytes(limits: SearchLimits, mover_is_p1: bool) -> bytes:
    """The ``go`` line (with its LF) for ``limits``: the text of
    ``go_message(limits, mover_is_p1).to_line()``, without making the message
    (this runs every ply; the arbiter's clocks make only valid values).
    The usual search, a clock and nothing else, is one formatting."""
    clock = limits.clock_fields(mover_is_p1)
    if clock is not None and limits.moves_to_go is None and limits.movetime_ms is None \
            and limits.depth is None and limits.nodes is None:
        return b"go p1time %d p2time %d p1inc %d p2inc %d\n" % clock
    parts = ["go"]
    if clock is not None:
        p1time, p2time, p1inc, p2inc = clock
        parts.append(f"p1time {p1time} p2time {p2time} p1inc {p1inc} p2inc {p2inc}")
    for name, value in (("movestogo", limits.moves_to_go), ("movetime", limits.movetime_ms),
                        ("depth", limits.depth), ("nodes", limits.nodes)):
        if value is not None:
            parts.append(f"{name} {value}")
    if limits.infinite:
        parts.append("infinite")
    return (" ".join(parts) + "\n").encode()


class PositionLine:
    """The ``position`` line of one game, grown by one move per ply.

    The line is kept as bytes and each move appended (amortised O(1)), so a
    long game never re-formats its whole move list every ply.  The moves
    come from the referee, which has checked them; the opening is checked
    here once (:class:`~protocol.messages.SetPosition`)."""

    __slots__ = ("_line", "_has_moves")

    def __init__(self, fen: str | None = None, moves: tuple[str, ...] | list[str] = ()):
        self._line = bytearray(SetPosition(fen, tuple(moves)).to_line().encode())
        self._has_moves = bool(moves)

    def append(self, move: str) -> None:
        if self._has_moves:
            self._line += b" " + move.encode()
        else:
            self._line += b" moves " + move.encode()
            self._has_moves = True

    def to_bytes(self) -> bytes:
        """The line and its LF, ready to write."""
        return bytes(self._line) + b"\n"

    def __str__(self) -> str:
        return self._line.decode()
