"""Charts drawn on the server as inline SVG (``specs/web.md`` §Charts).

* :func:`score_chart`: a game's score per ply, each engine's own view (the
  mover's), clamped and mate-aware; :func:`time_chart`: its time per move.
  Both have a column per ply that links to the game at that ply, and a
  marker at the ply shown (the page's script moves it: ``data-x0`` and
  ``data-dx`` on the picture give a ply's x);
* :func:`llr_chart`: the SPRT's log-likelihood ratio over games between its
  two bounds;
* :func:`rating_chart`: an engine's rating after each tournament, with its
  95% error bars.

Plain SVG like the boards (``specs/svg.md``): no script, no external
reference, no style attribute; each part has a class (``chart-*``) that the
page's stylesheet colours for its scheme, and presentation attributes that
draw it on white without one (the JSON's pictures stand alone).  Every
number is formatted here; the only text drawn is numbers, fixed labels and
moves, escaped.  The same data gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from arbiter.record import ScoreKind
from arbiter.svg.markup import Markup, el, num

from .format import read_score

#: the drawing's width in user units (the page scales it to its column)
WIDTH = 400.0
#: room for the axis labels left and below, and the margins
LEFT, RIGHT, TOP, BOTTOM = 44.0, 8.0, 10.0, 20.0
#: heights of the score, time, LLR and rating charts
SCORE_HEIGHT, TIME_HEIGHT, LLR_HEIGHT, RATING_HEIGHT = 140.0, 96.0, 150.0, 150.0
FONT_SIZE = 12
#: what centres a label on a line: a third of its size below the line
MID = FONT_SIZE * 0.35
#: a score's height is clipped here (centipawns): a mate or a lost position
#: would otherwise flatten every other score of the game to a line
SCORE_CLIP = 1000
#: a mate's score drawn as this many centipawns (at the clip)
MATE_CP = SCORE_CLIP
#: the smallest score range drawn (centipawns either side of 0): a quiet
#: game's small scores are not blown up to the chart's whole height
SCORE_FLOOR = 100
#: plies of a game whose chart columns are links at most: past it the chart
#: is only a picture (its size stays bounded; the slider steps the game)
MAX_LINKED_PLIES = 1000
#: the sides' colours without the stylesheet, and their dash: told apart by
#: dash as well as hue
SIDES = {"white": ("#9a5b00", ""), "black": ("#2b4a86", "4 3")}
LINE, BOUND, AXIS, GRID, LABEL, PAPER = "#1b5bb8", "#b8322c", "#b9b3a6", "#e7e3da", "#565d66", "#ffffff"


def _document(height: float, body: str, title: str, **attrs: Any) -> str:
    """A standalone SVG document of :data:`WIDTH` x ``height`` (put inline in a page)."""
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{num(WIDTH)}" '
            f'height="{num(height)}" viewBox="0 0 {num(WIDTH)} {num(height)}" role="img"{extra}>'
            + el("title", title) + body + "</svg>")


def _label(text: str, x: float, y: float, anchor: str = "end", cls: str = "chart-label",
           fill: str = LABEL) -> Markup:
    return el("text", text, x=x, y=y, font_size=FONT_SIZE, text_anchor=anchor, fill=fill, class_=cls)


def _hline(y: float, cls: str, stroke: str, dash: str | None = None) -> Markup:
    return el("line", x1=LEFT, y1=y, x2=WIDTH - RIGHT, y2=y, stroke=stroke, stroke_dasharray=dash,
              class_=cls)


class _Frame:
    """A chart's box: the x and y maps of its plot, its background and axes."""

    def __init__(self, height: float, x_low: float, x_high: float, y_low: float, y_high: float):
        self.height = height
        self.x_low, self.x_span = x_low, (x_high - x_low) or 1.0
        self.y_high, self.y_span = y_high, (y_high - y_low) or 1.0
        self.plot_width = WIDTH - LEFT - RIGHT
        self.plot_height = height - TOP - BOTTOM

    def x(self, v: float) -> float:
        return LEFT + self.plot_width * (v - self.x_low) / self.x_span

    def y(self, v: float) -> float:
        return TOP + self.plot_height * (self.y_high - v) / self.y_span

    def parts(self) -> list[Markup]:
        bottom = self.height - BOTTOM
        return [el("rect", x=0, y=0, width=WIDTH, height=self.height, fill=PAPER, class_="chart-bg"),
                el("line", x1=LEFT, y1=TOP, x2=LEFT, y2=bottom, stroke=AXIS, class_="chart-axis"),
                el("line", x1=LEFT, y1=bottom, x2=WIDTH - RIGHT, y2=bottom, stroke=AXIS,
                   class_="chart-axis")]


def _polyline(points: Sequence[tuple[float, float]], cls: str, color: str, dash: str = "") -> Markup:
    return el("polyline", points=" ".join(f"{num(a)},{num(b)}" for a, b in points), fill="none",
              stroke=color, stroke_width=1.75, stroke_dasharray=dash or None, stroke_linejoin="round",
              class_=cls)


# -- a game: score and time per ply ----------------------------------------------


def score_cp(text: str | None) -> float | None:
    """A score's text (``cp 35``, ``mate -3``, ``winprob 0.62``) as
    centipawns from the mover's view, clipped to :data:`SCORE_CLIP`."""
    score = read_score(text)
    if score is None:
        return None
    if score.kind is ScoreKind.CP:
        cp = float(score.value)
    elif score.kind is ScoreKind.MATE:
        cp = MATE_CP if score.value > 0 else -MATE_CP
    elif 0 < score.value < 1:
        cp = 400 * math.log10(score.value / (1 - score.value))  # the Elo curve, 400 a decade
    else:
        return None
    return max(-SCORE_CLIP, min(SCORE_CLIP, cp))


def _ply_title(move: dict[str, Any]) -> str:
    """A column's text: the ply, who played what, its score and time."""
    who = move.get("color") or "book"
    parts = [f"ply {move['ply']}: {who} {move['move']}"]
    if move.get("score"):
        parts.append(str(move["score"]))
    if move.get("time_ms") is not None:
        parts.append(f"{move['time_ms'] / 1000:.2f}s")
    return ", ".join(parts)


def _columns(frame: _Frame, moves: Sequence[dict[str, Any]], link: str | None) -> list[Markup]:
    """A column per ply over the whole plot: a link to the game at that ply
    (``link`` + ply) with the ply's text; no links without ``link`` or
    past :data:`MAX_LINKED_PLIES` plies."""
    if link is None or not moves or len(moves) > MAX_LINKED_PLIES:
        return []
    half = frame.plot_width / frame.x_span / 2
    out = []
    for move in moves:
        x = frame.x(move["ply"])
        left, right = max(LEFT, x - half), min(WIDTH - RIGHT, x + half)
        out.append(el("a", el("title", _ply_title(move)),
                      el("rect", x=left, y=TOP, width=right - left, height=frame.plot_height,
                         fill="transparent", class_="chart-hit"),
                      href=f"{link}{move['ply']}", tabindex="-1", data_ply=str(move["ply"])))
    return out


def _marker(frame: _Frame, ply: int | None) -> list[Markup]:
    """The shown ply's line (moved by the page's script as it steps)."""
    if ply is None:
        return []
    x = frame.x(ply)
    return [el("line", x1=x, y1=TOP, x2=x, y2=frame.height - BOTTOM, stroke="#1c1f23",
               stroke_width=1, stroke_dasharray="2 2", class_="chart-marker")]


def _game_document(frame: _Frame, parts: list[Markup], title: str, plies: int) -> str:
    return _document(frame.height, "".join(parts), title, data_x0=num(LEFT),
                     data_dx=num(frame.plot_width / max(plies, 1)), data_plies=str(plies))


def score_chart(moves: Sequence[dict[str, Any]], ply: int | None = None, link: str | None = None) -> str:
    """The score per ply, a line per side, each from its own engine's view
    (centipawns, ``mate`` at the clip with a dot, clamped to
    :data:`SCORE_CLIP`); its range the largest score drawn, at least
    :data:`SCORE_FLOOR`.  ``ply``: the marker; ``link``: the columns' URL."""
    plies = max((m["ply"] for m in moves), default=0)
    series: dict[str, list[tuple[int, float, bool]]] = {side: [] for side in SIDES}
    for m in moves:
        if not m.get("book") and m.get("color") in series and (cp := score_cp(m.get("score"))) is not None:
            series[m["color"]].append((m["ply"], cp, str(m["score"]).startswith("mate")))
    high = max([SCORE_FLOOR] + [abs(cp) for side in series.values() for _, cp, _ in side])
    frame = _Frame(SCORE_HEIGHT, 0, plies, -high, high)
    parts = frame.parts()
    parts.append(_hline(frame.y(0), "chart-zero", AXIS))
    for value in (high, -high):
        parts.append(_hline(frame.y(value), "chart-grid", GRID, "2 3"))
    parts += [_label(f"{high:+.0f}", LEFT - 4, frame.y(high) + MID), _label("0", LEFT - 4, frame.y(0) + MID),
              _label(f"{-high:+.0f}", LEFT - 4, frame.y(-high) + MID),
              _label(f"ply {plies}", WIDTH - RIGHT, SCORE_HEIGHT - 4),
              _label("cp", LEFT + 4, SCORE_HEIGHT - 4, "start")]
    for side, (color, dash) in SIDES.items():
        points = series[side]
        if points:
            parts.append(_polyline([(frame.x(p), frame.y(cp)) for p, cp, _ in points],
                                   f"chart-{side}", color, dash))
            parts += [el("circle", cx=frame.x(p), cy=frame.y(cp), r=2.5, fill=color,
                         class_=f"chart-{side}-fill") for p, cp, mate in points if mate]
    parts += _marker(frame, ply) + _columns(frame, moves, link)
    return _game_document(frame, parts, "score per ply, each engine's own view", plies)


def time_chart(moves: Sequence[dict[str, Any]], ply: int | None = None, link: str | None = None) -> str:
    """The time each move took (seconds), a bar per ply in its side's colour."""
    plies = max((m["ply"] for m in moves), default=0)
    played = [m for m in moves if not m.get("book") and m.get("time_ms") is not None]
    top = max((m["time_ms"] / 1000 for m in played), default=0.0) or 1.0
    frame = _Frame(TIME_HEIGHT, 0, plies, 0, top)
    parts = frame.parts()
    parts.append(_hline(frame.y(top), "chart-grid", GRID, "2 3"))
    width = max(0.5, min(8.0, frame.plot_width / max(plies, 1) * 0.7))
    for m in played:
        color = SIDES.get(m["color"], (LINE, ""))[0]
        y = frame.y(m["time_ms"] / 1000)
        parts.append(el("rect", x=frame.x(m["ply"]) - width / 2, y=y, width=width,
                        height=max(0.5, TIME_HEIGHT - BOTTOM - y), fill=color,
                        class_=f"chart-{m['color']}-fill"))
    parts += [_label(f"{top:.2f}s", LEFT - 4, frame.y(top) + MID), _label("0", LEFT - 4, frame.y(0)),
              _label(f"ply {plies}", WIDTH - RIGHT, TIME_HEIGHT - 4)]
    parts += _marker(frame, ply) + _columns(frame, moves, link)
    return _game_document(frame, parts, "time per move, both sides", plies)


# -- a tournament's SPRT, an engine's ratings -----------------------------------------


def llr_chart(points: Sequence[Sequence[float]], lower: float, upper: float) -> str:
    """The LLR (``[games, llr]`` pairs) between its bounds ``lower`` and ``upper``."""
    games = max((p[0] for p in points), default=0)
    values = [p[1] for p in points if math.isfinite(p[1])]
    y_low, y_high = min([lower, *values]), max([upper, *values])
    margin = (y_high - y_low) * 0.08
    frame = _Frame(LLR_HEIGHT, 0, games, y_low - margin, y_high + margin)
    parts = frame.parts()
    parts.append(_hline(frame.y(0), "chart-zero", AXIS))
    for bound, name in ((upper, "H1 accepted"), (lower, "H0 accepted")):
        y = frame.y(bound)
        parts.append(_hline(y, "chart-bound", BOUND, "5 3"))
        parts.append(_label(f"{bound:+.2f}", LEFT - 4, y + MID, cls="chart-bound-label", fill=BOUND))
        parts.append(_label(name, WIDTH - RIGHT - 2, y - 4 if bound > 0 else y + FONT_SIZE + 2, cls="chart-bound-label",
                            fill=BOUND))
    parts += [_label("0", LEFT - 4, frame.y(0) + MID), _label(f"{games:g} games", WIDTH - RIGHT, LLR_HEIGHT - 4),
              _label("LLR", LEFT + 4, LLR_HEIGHT - 4, "start")]
    drawn = [(frame.x(p[0]), frame.y(p[1])) for p in points if math.isfinite(p[1])]
    if drawn:
        parts.append(_polyline(drawn, "chart-line", LINE))
        parts.append(el("circle", cx=drawn[-1][0], cy=drawn[-1][1], r=3, fill=LINE, class_="chart-dot"))
    return _document(LLR_HEIGHT, "".join(parts), "the SPRT's log-likelihood ratio over games")


def rating_chart(points: Sequence[dict[str, Any]]) -> str:
    """An engine's rating (``elo``) after each tournament, with its 95%
    error bar (``error``); a point without a rating is left out."""
    rated = [(i, p) for i, p in enumerate(points) if p.get("elo") is not None]
    lows = [p["elo"] - (p.get("error") or 0) for _, p in rated]
    highs = [p["elo"] + (p.get("error") or 0) for _, p in rated]
    y_low, y_high = min(lows + [0.0]), max(highs + [0.0])
    margin = max(10.0, (y_high - y_low) * 0.08)
    frame = _Frame(RATING_HEIGHT, -0.5, len(points) - 0.5, y_low - margin, y_high + margin)
    parts = frame.parts()
    parts.append(_hline(frame.y(0), "chart-zero", AXIS))
    parts += [_label(f"{y_high + margin:+.0f}", LEFT - 4, TOP + FONT_SIZE), _label("0", LEFT - 4, frame.y(0) + MID),
              _label(f"{y_low - margin:+.0f}", LEFT - 4, RATING_HEIGHT - BOTTOM)]
    for i, p in enumerate(points):
        parts.append(_label(f"#{p['tournament']}", frame.x(i), RATING_HEIGHT - 4, "middle"))
    for i, p in rated:
        x, error = frame.x(i), p.get("error") or 0
        parts.append(el("line", x1=x, y1=frame.y(p["elo"] - error), x2=x, y2=frame.y(p["elo"] + error),
                        stroke=LINE, stroke_width=1.5, stroke_opacity=0.45, class_="chart-line"))
    if rated:
        parts.append(_polyline([(frame.x(i), frame.y(p["elo"])) for i, p in rated], "chart-line", LINE))
        parts += [el("circle", el("title", f"tournament {p['tournament']}: {p['elo']:+.1f} \u00b1 "
                                  f"{p.get('error') or 0:.1f}"), cx=frame.x(i), cy=frame.y(p["elo"]), r=3.5,
                     fill=LINE, class_="chart-dot") for i, p in rated]
    return _document(RATING_HEIGHT, "".join(parts), "rating after each tournament, with its 95% interval")


__all__ = ["MAX_LINKED_PLIES", "SCORE_CLIP", "llr_chart", "rating_chart", "score_chart", "score_cp",
           "time_chart"]
