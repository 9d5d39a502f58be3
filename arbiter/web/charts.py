"""Small charts drawn on the server as inline SVG (``specs/web.md`` §Charts).

* :func:`llr_chart`: the SPRT's log-likelihood ratio over games, with its
  two bounds as lines;
* :func:`move_chart`: a game's time per move and score per move, both
  sides (White and Black in the board pictures' stone colours, edged).

Plain SVG like the boards (``specs/svg.md``): no script, no external
reference; every number is formatted here and the only text drawn is
numbers and fixed labels.  The same data gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from arbiter.svg.markup import Markup, el, num

#: the drawing's size in user units (the page scales it)
WIDTH, HEIGHT = 480.0, 150.0
#: room for the axis labels left and below
LEFT, BOTTOM, TOP, RIGHT = 44.0, 18.0, 8.0, 8.0
#: a score's height is clipped here (centipawns): a mate or a lost position
#: would otherwise flatten every other score of the game to a line
SCORE_CLIP = 1000
#: a mate's score drawn as this many centipawns (at the clip)
MATE_CP = SCORE_CLIP
#: the sides' line colours: dark enough on white for both, told apart by dash
SIDES = {"white": ("#8a6d3b", ""), "black": ("#1e1e1e", "4 3")}
LLR_COLOR = "#1f77b4"
BOUND_COLOR = "#d62728"
AXIS = "#555555"


def _document(width: float, height: float, body: str, title: str) -> str:
    """A standalone SVG document (it is put inline in a page)."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{num(width)}" height="{num(height)}" '
            f'viewBox="0 0 {num(width)} {num(height)}">' + el("title", title) + body + "</svg>")


def _frame(y_low: float, y_high: float, x_high: float, label_low: str, label_high: str,
           title: str) -> tuple[list[Markup], Callable[[float], float], Callable[[float], float]]:
    """The axes and their end labels; returns the parts and the x and y maps."""
    span_y = (y_high - y_low) or 1.0
    span_x = x_high or 1.0

    def x(v: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * v / span_x

    def y(v: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (y_high - v) / span_y

    parts = [
        el("rect", x=0, y=0, width=(WIDTH), height=(HEIGHT), fill="#ffffff"),
        el("line", x1=(LEFT), y1=(TOP), x2=(LEFT), y2=(HEIGHT - BOTTOM), stroke=AXIS),
        el("line", x1=(LEFT), y1=(HEIGHT - BOTTOM), x2=(WIDTH - RIGHT), y2=(HEIGHT - BOTTOM),
           stroke=AXIS),
        el("text", label_high, x=(LEFT - 4), y=(TOP + 8), font_size=10, text_anchor="end", fill=AXIS),
        el("text", label_low, x=(LEFT - 4), y=(HEIGHT - BOTTOM), font_size=10, text_anchor="end",
           fill=AXIS),
        el("text", f"{x_high:g}", x=(WIDTH - RIGHT), y=(HEIGHT - 4), font_size=10,
           text_anchor="end", fill=AXIS),
        el("text", title, x=(LEFT + 4), y=(HEIGHT - 4), font_size=10, fill=AXIS),
    ]
    return parts, x, y


def _polyline(points: Sequence[tuple[float, float]], color: str, dash: str = "") -> Markup:
    attrs: dict[str, Any] = {"points": " ".join(f"{num(a)},{num(b)}" for a, b in points),
                             "fill": "none", "stroke": color, "stroke_width": 1.5}
    if dash:
        attrs["stroke_dasharray"] = dash
    return el("polyline", **attrs)


def llr_chart(points: Sequence[Sequence[float]], lower: float, upper: float) -> str:
    """The LLR (``[games, llr]`` pairs) between its bounds ``lower`` and ``upper``."""
    games = max((p[0] for p in points), default=0)
    values = [p[1] for p in points if math.isfinite(p[1])]
    y_low, y_high = min([lower, *values]), max([upper, *values])
    margin = (y_high - y_low) * 0.05
    y_low, y_high = y_low - margin, y_high + margin
    parts, x, y = _frame(y_low, y_high, games, f"{y_low:.1f}", f"{y_high:.1f}", "LLR over games")
    for bound in (lower, upper):
        parts.append(el("line", x1=(LEFT), y1=(y(bound)), x2=(WIDTH - RIGHT), y2=(y(bound)),
                        stroke=BOUND_COLOR, stroke_dasharray="5 3"))
    parts.append(el("line", x1=(LEFT), y1=(y(0)), x2=(WIDTH - RIGHT), y2=(y(0)),
                    stroke="#cccccc"))
    drawn = [(x(p[0]), y(min(max(p[1], y_low), y_high))) for p in points if math.isfinite(p[1])]
    if drawn:
        parts.append(_polyline(drawn, LLR_COLOR))
    return _document(WIDTH, HEIGHT, "".join(parts), "the SPRT's log-likelihood ratio over games")


def score_cp(text: str | None) -> float | None:
    """A score's text (``cp 35``, ``mate -3``, ``winprob 0.62``) as
    centipawns from the mover's view, clipped to :data:`SCORE_CLIP`."""
    if not text:
        return None
    kind, _, value = text.partition(" ")
    try:
        number = float(value)
    except ValueError:
        return None
    if kind == "cp":
        cp = number
    elif kind == "mate":
        cp = MATE_CP if number > 0 else -MATE_CP
    elif kind == "winprob" and 0 < number < 1:
        cp = 400 * math.log10(number / (1 - number))  # the Elo curve, 400 a decade
    else:
        return None
    return max(-SCORE_CLIP, min(SCORE_CLIP, cp))


def move_chart(moves: Sequence[dict[str, Any]]) -> str:
    """Two charts in one picture: time per move (seconds) above, score per
    move (centipawns, each side from its own view) below, per side."""
    played = [m for m in moves if not m.get("book")]
    last = max((m["ply"] for m in played), default=0)
    times = {side: [(m["ply"], (m["time_ms"] or 0) / 1000) for m in played if m["color"] == side]
             for side in SIDES}
    scores = {side: [(m["ply"], cp) for m in played if m["color"] == side
                     and (cp := score_cp(m.get("score"))) is not None] for side in SIDES}
    top = max((t for side in times.values() for _, t in side), default=0) or 1.0
    high = max((abs(s) for side in scores.values() for _, s in side), default=0) or 100.0
    pictures: list[str] = []
    for title, series, y_low, y_high, labels in (
            ("time per move (s)", times, 0.0, top, ("0", f"{top:.2f}")),
            ("score per move (cp, mover's view)", scores, -high, high, (f"{-high:.0f}", f"{high:.0f}"))):
        parts, x, y = _frame(y_low, y_high, last, labels[0], labels[1], title)
        for side, (color, dash) in SIDES.items():
            if series[side]:
                parts.append(_polyline([(x(a), y(b)) for a, b in series[side]], color, dash))
        pictures.append("".join(parts))
    legend = "".join(
        el("text", side, x=(WIDTH - RIGHT - 90 + 50 * i), y=(TOP + 8), font_size=10,
           fill=SIDES[side][0]) for i, side in enumerate(SIDES))
    body = (pictures[0] + legend + el("g", Markup(pictures[1]), transform=f"translate(0,{num(HEIGHT)})"))
    return _document(WIDTH, 2 * HEIGHT, body, "time and score per move, both sides")


__all__ = ["llr_chart", "move_chart", "score_cp"]
