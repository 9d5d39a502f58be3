"""Atoll's board (specs/games/atoll.md §1-§2): 13 hex columns, b d f h j l
half a cell higher, and the eight islands on the rim in their owners' colours.

Cells are flat-topped hexagons laid out from the referee's ``COLUMNS`` and
``ROWS``; islands from ``ISLAND_OF`` (cell -> owner and compass part).  Each empty playable cell carries its
name in small type; island cells carry their island's compass letter.
"""

from __future__ import annotations

import math

from arbiter.games import COLORS, Color, Position
from arbiter.games.atoll import CELLS, COLUMNS, ISLAND_OF, ROWS, AtollPosition

from .frame import INK, LABEL, STONE_EDGE, STONE_FILL, Board, label, picture, ring, stone
from .markup import Markup, el, points

R = 21.0  # a hexagon's circumradius in pixels
H = math.sqrt(3) * R  # a hexagon's height (flat top to flat bottom)
TOP_ROW = max(rows.stop - 1 for rows in ROWS.values())  # the highest row of a low column
GUTTER = 18.0  # room for the column letters
SEA = "#bcdcec"  # the playable cells
CELL_NAME_SIZE = 8  # the names inside empty cells


def centre(name: str) -> tuple[float, float]:
    """A cell's centre: columns left to right, row 1 at the bottom, high
    columns (b d f ... odd index) half a cell up."""
    col = COLUMNS.index(name[0])
    row = int(name[1:])
    x = GUTTER + R + 1.5 * R * col
    y = GUTTER + H / 2 + (TOP_ROW - row) * H - (H / 2 if col % 2 else 0)
    return x, y


def hexagon(x: float, y: float) -> list[tuple[float, float]]:
    return [(x + R, y), (x + R / 2, y + H / 2), (x - R / 2, y + H / 2),
            (x - R, y), (x - R / 2, y - H / 2), (x + R / 2, y - H / 2)]


def _cell(name: str, owner: Color | None, island: bool) -> list[Markup]:
    x, y = centre(name)
    if island:
        assert owner is not None  # island cells always hold their owner's colour
        side, part = ISLAND_OF[name]
        letter_color = STONE_FILL[COLORS[1 - side]]
        return [el("polygon", points=points(hexagon(x, y)), fill=STONE_FILL[owner],
                   stroke=STONE_EDGE[owner], stroke_width=2),
                label(x, y, part[0].upper(), 11, letter_color)]
    out = [el("polygon", points=points(hexagon(x, y)), fill=SEA, stroke=INK, stroke_width=1)]
    if owner is None:
        out.append(label(x, y, name, CELL_NAME_SIZE, LABEL))
    else:
        out.append(stone(x, y, R * 0.7, owner))
    return out


def board(position: AtollPosition, last_move: str | None) -> Board:
    stones = position.pieces()
    parts: list[Markup] = []
    for name in CELLS:
        parts += _cell(name, stones.get(name), name in ISLAND_OF)
    if last_move == "swap":  # the one placed White stone is the exchanged one
        marked = [n for n, c in stones.items() if c is Color.WHITE and n not in ISLAND_OF]
    else:
        marked = [last_move] if last_move in CELLS and last_move not in ISLAND_OF else []
    for name in marked:
        parts.append(ring(*centre(name), R * 0.8))
    width = 2 * GUTTER + 2 * R + 1.5 * R * (len(COLUMNS) - 1)
    height = 2 * GUTTER + H * TOP_ROW
    for column in COLUMNS:
        x = centre(f"{column}1")[0]
        parts += [label(x, GUTTER / 2, column), label(x, height - GUTTER / 2, column)]
    return Board(Markup("\n".join(parts)), width, height)


def render(position: Position, last_move: str | None = None, title: str | None = None) -> str:
    """Atoll's picture; ``last_move`` (a cell or ``swap``) is ringed."""
    if not isinstance(position, AtollPosition):
        raise TypeError(f"not an Atoll position: {position!r}")
    move = last_move.strip().lower() if last_move else None
    extra = ["white may swap"] if position.swap_available else []
    extra.append("join North-South or East-West islands of your colour")
    return picture(position, board(position, move), title=title, last_move=last_move, extra=extra)
