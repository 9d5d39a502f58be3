"""What every board picture shares: the palette, stones, the caption, the document.

A picture is the board (drawn by the game's renderer in its own box) with an
optional title line above it and a caption below: who is to move (with a
stone of that colour) or how the game ended, the last move, and the lines a
game adds (Morris's pieces in hand, Talisman's scores).  Colours are named
here once; ``specs/svg.md`` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arbiter.games import Color, Position

from .markup import Markup, el, group, num

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
#: stones: fill and outline by colour
STONE_FILL = {Color.WHITE: "#f7f5ef", Color.BLACK: "#1e1e1e"}
STONE_EDGE = {Color.WHITE: "#3a3a3a", Color.BLACK: "#000000"}
#: the last move: a ring round the cells it used, a cross on what it removed
HIGHLIGHT = "#d62728"
INK = "#222222"  # lines and labels
LABEL = "#555555"  # coordinates
PAPER = "#ffffff"  # the picture's background
#: text sizes in pixels: the title and caption, and the coordinates
TEXT_SIZE = 15
LABEL_SIZE = 12
#: the height of one line of the title or caption
LINE = 22
#: blank space round the board and between the parts of the picture
MARGIN = 12
#: the width of an average character of the title as a share of its size (a
#: sans-serif font's is about half): what decides where a long title is cut
CHAR_WIDTH = 0.56


@dataclass(frozen=True)
class Board:
    """A drawn board: its SVG in a box from (0, 0) to (width, height)."""

    body: Markup
    width: float
    height: float


def stone(x: float, y: float, r: float, color: Color) -> Markup:
    return el("circle", cx=x, cy=y, r=r, fill=STONE_FILL[color], stroke=STONE_EDGE[color],
              stroke_width=max(1.0, r / 12))


def ring(x: float, y: float, r: float) -> Markup:
    """The last move's mark on a point or cell."""
    return el("circle", cx=x, cy=y, r=r, fill="none", stroke=HIGHLIGHT, stroke_width=3)


def cross(x: float, y: float, r: float) -> Markup:
    """The last move's mark on a piece it removed."""
    d = r * 0.7
    return el("path", d=f"M{num(x - d)},{num(y - d)}L{num(x + d)},{num(y + d)}"
              f"M{num(x - d)},{num(y + d)}L{num(x + d)},{num(y - d)}",
              stroke=HIGHLIGHT, stroke_width=3, stroke_linecap="round")


def label(x: float, y: float, text: str, size: int = LABEL_SIZE, color: str = LABEL,
          anchor: str = "middle") -> Markup:
    """Text centred (by default) on (x, y)."""
    return el("text", text, x=x, y=y + size * 0.35, font_size=size, fill=color,
              text_anchor=anchor, font_family=FONT)


def fit(text: str, width: float, size: int = TEXT_SIZE) -> str:
    """``text``, cut with an ellipsis to about ``width`` pixels: a title (an
    engine's name is a peer's text of any length) never runs off the picture."""
    most = max(1, int(width / (size * CHAR_WIDTH)))
    return text if len(text) <= most else text[: most - 1] + "\u2026"


def state_line(position: Position) -> str:
    """"white to move, ply 12" or "game over: 1-0, white wins (connection), ply 40"."""
    outcome = position.outcome()
    if outcome is None:
        return f"{position.to_move.value} to move, ply {position.ply}"
    who = "draw" if outcome.winner is None else f"{outcome.winner.value} wins"
    return f"game over: {outcome.result}, {who} ({outcome.termination.value}), ply {position.ply}"


def picture(position: Position, board: Board, *, title: str | None = None,
            last_move: str | None = None, extra: Sequence[str] = ()) -> str:
    """The whole SVG document: title, board, caption (state, last move, extra)."""
    width = board.width + 2 * MARGIN
    top = MARGIN + (LINE if title else 0)
    parts: list[Markup] = [el("rect", x=0, y=0, width="100%", height="100%", fill=PAPER)]
    if title:
        parts.append(label(width / 2, MARGIN + LINE / 2, fit(title, board.width), TEXT_SIZE, INK))
    parts.append(group(board.body, transform=f"translate({MARGIN},{top})"))
    y = top + board.height + MARGIN + LINE / 2
    outcome = position.outcome()
    text_x = MARGIN
    if outcome is None:  # a stone of the side to move before its line
        parts.append(stone(MARGIN + 8, y, 7, position.to_move))
        text_x += 22
    parts.append(label(text_x, y, state_line(position), TEXT_SIZE, INK, "start"))
    lines = ([f"last move: {last_move}"] if last_move else []) + list(extra)
    for line in lines:
        y += LINE
        parts.append(label(MARGIN, y, fit(line, board.width), TEXT_SIZE, INK, "start"))
    height = y + LINE / 2 + MARGIN
    name = f"{position.game.name}: {state_line(position)}"
    body = group(el("title", title or name), *parts)
    return el("svg", Markup("\n"), body, Markup("\n"), xmlns="http://www.w3.org/2000/svg",
              width=width, height=height, viewBox=f"0 0 {num(width)} {num(height)}") + "\n"
