"""Talisman's board (specs/games/talisman.md §2): the hexagon of side 2, its
19 points A-S and the 24 unit triangles, owned ones shaded in the owner's
colour; the caption shows the scores.

Coordinates come from the referee's ``ROW_OF`` and ``X_OF`` (a doubled
horizontal coordinate: points across a line are 2 apart), the edges from
``ADJACENT``, the triangles from ``UNIT_TRIANGLES`` and what a move jumped
over from ``MOVE_TABLE``.  The last move rings the point moved from (dashed)
and to, and the pieces it turned over (dotted).
"""

from __future__ import annotations

import math

from arbiter.games import Color, Position
from arbiter.games.talisman import (
    ADJACENT,
    MOVE_TABLE,
    POINTS,
    ROW_OF,
    UNIT_TRIANGLES,
    X_OF,
    TalismanPosition,
)

from .frame import HIGHLIGHT, INK, Board, label, picture, ring, stone
from .markup import Markup, el, points

SIDE = 96  # the length of a unit triangle's side in pixels
GUTTER = 30  # room round the hexagon for the point names
BOARD_FILL = "#dcd6c4"  # the neutral triangles
#: the shade of a triangle by owner: lighter or darker than the neutral ones,
#: and not the stones' own colours, so a stone on its corner stays visible
OWNED_FILL = {Color.WHITE: "#fbfaf3", Color.BLACK: "#6b6b6b"}
NAME_SIZE = 13


def centre(point: str) -> tuple[float, float]:
    return (GUTTER + X_OF[point] * SIDE / 2,
            GUTTER + ROW_OF[point] * SIDE * math.sqrt(3) / 2)


def _marks(last_move: str | None) -> list[Markup]:
    entry = MOVE_TABLE.get(last_move) if last_move else None
    if entry is None:
        return []
    out = []
    for i, point in enumerate(POINTS):
        bit = 1 << i
        x, y = centre(point)
        if entry.source & bit:
            out.append(el("circle", cx=x, cy=y, r=SIDE * 0.22, fill="none", stroke=HIGHLIGHT,
                          stroke_width=2, stroke_dasharray="4 3"))
        elif entry.target & bit:
            out.append(ring(x, y, SIDE * 0.26))
        elif entry.jumped & bit:
            out.append(el("circle", cx=x, cy=y, r=SIDE * 0.26, fill="none", stroke=HIGHLIGHT,
                          stroke_width=2, stroke_dasharray="1 4", stroke_linecap="round"))
    return out


def board(position: TalismanPosition, last_move: str | None) -> Board:
    owners = position.triangle_owners()
    parts: list[Markup] = []
    for triangle in UNIT_TRIANGLES:
        owner = owners.get(triangle)
        parts.append(el("polygon", points=points([centre(p) for p in triangle]),
                        fill=BOARD_FILL if owner is None else OWNED_FILL[owner]))
    for pair in sorted("".join(sorted(pair)) for pair in ADJACENT):
        (x1, y1), (x2, y2) = centre(pair[0]), centre(pair[1])
        parts.append(el("line", x1=x1, y1=y1, x2=x2, y2=y2, stroke=INK, stroke_width=2))
    pieces = position.pieces()
    for point in POINTS:
        x, y = centre(point)
        if point in pieces:
            parts.append(stone(x, y, SIDE * 0.2, pieces[point]))
        else:
            parts.append(el("circle", cx=x, cy=y, r=4, fill=INK))
        # the name above-left of its point, clear of the lines there
        parts.append(label(x - SIDE * 0.27, y - SIDE * 0.22, point, NAME_SIZE, INK))
    parts += _marks(last_move)
    width = 2 * GUTTER + max(X_OF.values()) * SIDE / 2
    height = 2 * GUTTER + max(ROW_OF.values()) * SIDE * math.sqrt(3) / 2
    return Board(Markup("\n".join(parts)), width, height)


def render(position: Position, last_move: str | None = None, title: str | None = None) -> str:
    """Talisman's picture; the caption adds the scores and the phase."""
    if not isinstance(position, TalismanPosition):
        raise TypeError(f"not a Talisman position: {position!r}")
    move = last_move.strip().upper() if last_move else None
    white, black = position.scores()
    phase = "placement" if position.in_placement else "movement"
    extra = [f"score: white {white}, black {black}",
             f"{phase}; no claim for {position.no_claim_plies} plies"]
    return picture(position, board(position, move), title=title, last_move=last_move, extra=extra)
