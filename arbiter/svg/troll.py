"""Troll's board (specs/games/troll.md §1-§2): the 8x8 grid, rank 8 on top.

White's edges (ranks 1 and 8) are bands above and below the grid in White's
colour, Black's (files a and h) bands left and right in Black's; the corners,
which belong to both, are split diagonally.  Cell names and edges come from
the referee (``FILES``, ``CELLS``, ``EDGES``).
"""

from __future__ import annotations

from arbiter.games import COLORS, Position
from arbiter.games.troll import BIT, CELLS, EDGES, FILES, TrollPosition

from .frame import INK, STONE_EDGE, STONE_FILL, Board, label, picture, ring, stone
from .markup import Markup, el, points

CELL = 48  # pixels per cell
BAND = 10  # the width of an edge band
GUTTER = 18  # room for the coordinates outside the bands
BOARD_FILL = "#e3c98f"  # the cells
SIZE = len(FILES)


def _origin(index: int) -> tuple[float, float]:
    """The top-left corner of cell ``index`` (a1 = 0, rank 8 drawn on top)."""
    file, rank = index % SIZE, index // SIZE
    return GUTTER + BAND + file * CELL, GUTTER + BAND + (SIZE - 1 - rank) * CELL


def _edge_bands() -> list[Markup]:
    """One band per edge cell, on the side of the board that cell touches,
    in the colour of the side owning that edge; corners carry both."""
    out = []
    for side, edges in enumerate(EDGES):
        for edge in edges:
            for index in range(SIZE * SIZE):
                if not edge & BIT[index]:
                    continue
                x, y = _origin(index)
                if side == 0:  # a rank: the band above (rank 8) or below (rank 1)
                    by = y - BAND if index >= SIZE else y + CELL
                    box = dict(x=x, y=by, width=CELL, height=BAND)
                else:  # a file: the band left (file a) or right (file h)
                    bx = x - BAND if index % SIZE == 0 else x + CELL
                    box = dict(x=bx, y=y, width=BAND, height=CELL)
                out.append(el("rect", **box, fill=STONE_FILL[COLORS[side]],
                              stroke=STONE_EDGE[COLORS[side]], stroke_width=1))
    # The frame's corner squares, split along the diagonal: the half next to
    # the rank band in White's colour, the half next to the file band in Black's.
    inner = GUTTER + BAND + SIZE * CELL
    for ox, ix in ((GUTTER, GUTTER + BAND), (inner + BAND, inner)):
        for oy, iy in ((GUTTER, GUTTER + BAND), (inner + BAND, inner)):
            for side, third in ((0, (ix, oy)), (1, (ox, iy))):
                out.append(el("polygon", points=points([(ox, oy), third, (ix, iy)]),
                              fill=STONE_FILL[COLORS[side]], stroke=STONE_EDGE[COLORS[side]],
                              stroke_width=1))
    return out


def _coordinates() -> list[Markup]:
    full = 2 * (GUTTER + BAND) + SIZE * CELL
    out = []
    for i, file in enumerate(FILES):
        x = GUTTER + BAND + (i + 0.5) * CELL
        out += [label(x, GUTTER / 2, file), label(x, full - GUTTER / 2, file)]
    for rank in range(1, SIZE + 1):
        y = GUTTER + BAND + (SIZE - rank + 0.5) * CELL
        out += [label(GUTTER / 2, y, str(rank)), label(full - GUTTER / 2, y, str(rank))]
    return out


def board(position: TrollPosition, last_move: str | None) -> Board:
    full = 2 * (GUTTER + BAND) + SIZE * CELL
    parts = [*_edge_bands(), *_coordinates()]
    left = GUTTER + BAND
    parts.append(el("rect", x=left, y=left, width=SIZE * CELL, height=SIZE * CELL,
                    fill=BOARD_FILL, stroke=INK, stroke_width=2))
    for k in range(1, SIZE):
        parts.append(el("line", x1=left + k * CELL, y1=left, x2=left + k * CELL,
                        y2=left + SIZE * CELL, stroke=INK, stroke_width=1))
        parts.append(el("line", x1=left, y1=left + k * CELL, x2=left + SIZE * CELL,
                        y2=left + k * CELL, stroke=INK, stroke_width=1))
    stones = position.pieces()
    for index, name in enumerate(CELLS):
        x, y = _origin(index)
        if name in stones:
            parts.append(stone(x + CELL / 2, y + CELL / 2, CELL * 0.4, stones[name]))
        if name == last_move:
            parts.append(ring(x + CELL / 2, y + CELL / 2, CELL * 0.46))
    return Board(Markup("\n".join(parts)), full, full)


def render(position: Position, last_move: str | None = None, title: str | None = None) -> str:
    """Troll's picture; ``last_move`` (a cell or ``pass``) is ringed when it is a cell."""
    if not isinstance(position, TrollPosition):
        raise TypeError(f"not a Troll position: {position!r}")
    move = last_move.strip().lower() if last_move else None
    return picture(position, board(position, move), title=title, last_move=last_move,
                   extra=["white joins ranks 1 and 8, black joins files a and h"])
