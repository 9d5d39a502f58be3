"""Board pictures as SVG, drawn from the referees' own geometry (``specs/svg.md``).

``render_svg(position, last_move=None, title=None)`` returns an SVG document
(text) of any game's position: the real board (Troll's grid with its owned
edges, Atoll's hex columns and islands, the Morris squares, Talisman's
hexagon of triangles), coordinates, the last move marked when given, and a
caption with the side to move or the result.  One renderer per game lives in
``arbiter/svg/<game>.py``; each takes the referee's ``Position`` and imports
the referee's tables, so a picture cannot disagree with the rules.  Every
piece of text (title, move) is escaped: names and details come from peers.
Nothing here does I/O; the pictures are plain SVG, no script.
"""

from __future__ import annotations

import importlib

from arbiter.games import Position


def render_svg(position: Position, last_move: str | None = None, title: str | None = None) -> str:
    """The SVG document of ``position``; ``last_move`` is the move that made it
    (as written: only a well-formed move of the game is drawn, any text is
    shown in the caption), ``title`` a line above the board."""
    module = importlib.import_module(f"{__name__}.{position.game.name}")
    return module.render(position, last_move=last_move, title=title)


__all__ = ["render_svg"]
