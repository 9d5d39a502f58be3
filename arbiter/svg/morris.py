"""The Morris board (specs/games/morris.md §1): three nested squares joined at
their mid-points, 24 points named like chess squares.

The lines are the referee's ``MILLS`` (each mill is a straight segment of
three points), the points its ``POINTS``; a point's name is its place (file
a-g across, rank 1-7 up).  The last move rings the point moved from (dashed)
and the point moved to, and crosses out the point a mill removed.
"""

from __future__ import annotations

import re

from arbiter.games import Position
from arbiter.games.morris import MILLS, POINTS, MorrisPosition

from .frame import HIGHLIGHT, INK, Board, cross, label, picture, ring, stone
from .markup import Markup, el

STEP = 52  # pixels between neighbouring files or ranks
GUTTER = 22  # room for the coordinates
BOARD_FILL = "#e8d3a0"
FILES = "abcdefg"
RANKS = 7
#: a move as the referee writes it: ``d2``, ``d2-d3``, ``d2xa1``, ``d2-d3xa1``
MOVE = re.compile(r"([a-g][1-7])(?:-([a-g][1-7]))?(?:x([a-g][1-7]))?")


def centre(point: str) -> tuple[float, float]:
    return (GUTTER + STEP / 2 + FILES.index(point[0]) * STEP,
            GUTTER + STEP / 2 + (RANKS - int(point[1:])) * STEP)


def _marks(last_move: str | None) -> list[Markup]:
    match = MOVE.fullmatch(last_move) if last_move else None
    if match is None or any(p is not None and p not in POINTS for p in match.groups()):
        return []
    first, second, removed = match.groups()
    out = []
    if second is not None:  # a slide or flight: from ``first`` to ``second``
        x, y = centre(first)
        out.append(el("circle", cx=x, cy=y, r=STEP * 0.3, fill="none", stroke=HIGHLIGHT,
                      stroke_width=2, stroke_dasharray="4 3"))
    out.append(ring(*centre(second or first), STEP * 0.4))
    if removed is not None:
        out.append(cross(*centre(removed), STEP * 0.3))
    return out


def board(position: MorrisPosition, last_move: str | None) -> Board:
    size = 2 * GUTTER + RANKS * STEP
    parts = [el("rect", x=GUTTER, y=GUTTER, width=RANKS * STEP, height=RANKS * STEP,
                fill=BOARD_FILL, rx=6)]
    for mill in MILLS:
        (x1, y1), (x2, y2) = centre(mill[0]), centre(mill[-1])
        parts.append(el("line", x1=x1, y1=y1, x2=x2, y2=y2, stroke=INK, stroke_width=3,
                        stroke_linecap="square"))
    pieces = position.pieces()
    for point in POINTS:
        x, y = centre(point)
        parts.append(stone(x, y, STEP * 0.32, pieces[point]) if point in pieces
                     else el("circle", cx=x, cy=y, r=5, fill=INK))
    parts += _marks(last_move)
    for i, file in enumerate(FILES):
        x = GUTTER + STEP / 2 + i * STEP
        parts += [label(x, GUTTER / 2, file), label(x, size - GUTTER / 2, file)]
    for rank in range(1, RANKS + 1):
        y = GUTTER + STEP / 2 + (RANKS - rank) * STEP
        parts += [label(GUTTER / 2, y, str(rank)), label(size - GUTTER / 2, y, str(rank))]
    return Board(Markup("\n".join(parts)), size, size)


def render(position: Position, last_move: str | None = None, title: str | None = None) -> str:
    """The Morris picture; the caption adds the pieces in hand and the
    plies without removal (the 100-ply rule)."""
    if not isinstance(position, MorrisPosition):
        raise TypeError(f"not a Morris position: {position!r}")
    move = last_move.strip().lower() if last_move else None
    white, black = position.in_hand
    extra = [f"in hand: white {white}, black {black}; "
             f"plies without removal {position.plies_without_removal}"]
    return picture(position, board(position, move), title=title, last_move=last_move, extra=extra)
