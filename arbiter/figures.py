"""How each figure of the standings and rating lists is written: one
function per kind of figure for text, one precision per kind for JSON.

Every place that prints an Elo, an interval, a percentage (a score, a draw
ratio, a likelihood of superiority) takes it from here, so that one figure
reads the same in the live view, ``arbiter standings``, ``arbiter ratings``
and the per-game lines (``specs/tournament.md`` §Which figure where); JSON
carries fractions and Elo rounded as ``specs/tournament.md`` §JSON numbers
states.  Pure: no I/O, nothing but :mod:`math`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ELO_DIGITS", "FRACTION_DIGITS", "LLR_DIGITS", "json_number", "figures_json",
    "fmt_signed", "fmt_elo", "fmt_interval", "fmt_percent", "fmt_first_move",
]

#: Decimals of an Elo figure in JSON (a rating, a difference, its error and
#: interval, nElo, the first-move advantage): a tenth of a point, far below
#: any error bar a tournament can reach.
ELO_DIGITS = 1

#: Decimals of a fraction in JSON (a score, a draw ratio, a likelihood of
#: superiority): 0.01%, finer than the percentages of the text (0.1%).
FRACTION_DIGITS = 4

#: Decimals of an SPRT's log-likelihood ratio and bounds in JSON: the text
#: shows two; the chart of the web view is drawn from four.
LLR_DIGITS = 4


def json_number(x: float | None, digits: int) -> float | None:
    """A finite number rounded to ``digits`` decimals, else ``None`` (JSON
    has no infinity); never ``-0.0``."""
    return None if x is None or not math.isfinite(x) else round(x, digits) + 0.0


def figures_json(figures: Mapping[str, tuple[Any, str | None, int]]) -> dict[str, Any]:
    """``{key: (value, reason, digits)}`` as JSON values (an interval as a
    two-item list), with ``null_reasons``: for each figure that is ``null``,
    infinite or an interval with a ``null`` end, why."""
    out: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    for key, (value, why, digits) in figures.items():
        if isinstance(value, tuple):
            out[key] = [json_number(x, digits) for x in value]
        else:
            out[key] = json_number(value, digits)
        if why is not None:
            reasons[key] = why
    out["null_reasons"] = reasons
    return out


def fmt_signed(x: float | None) -> str:
    """``+35.2``, ``+inf``/``-inf``, or ``-`` when unknown (never ``-0.0``)."""
    if x is None:
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{round(x, 1) + 0.0:+.1f}"


def fmt_elo(value: float | None, error: float | None = None, *, undefined: bool = False) -> str:
    """``+35.2 +/- 20.1``; ``+159.0 +/- inf`` when the interval is unbounded;
    ``+0.0 +/- undefined`` with ``undefined`` (an interval that the data cannot
    give: no spread, ``specs/ratings.md`` §Edge cases); a bare ``+inf`` (the
    interval is infinite too) or ``-`` when unknown."""
    if value is None or math.isinf(value):
        return fmt_signed(value)
    if error is None:
        return f"{fmt_signed(value)} +/- undefined" if undefined else fmt_signed(value)
    return f"{fmt_signed(value)} +/- {'inf' if math.isinf(error) else f'{error:.1f}'}"


def fmt_interval(interval: tuple[float, float] | None) -> str:
    """``[-7.4, +85.0]`` (``+inf`` for an unbounded end), ``-`` without one."""
    if interval is None:
        return "-"
    return f"[{fmt_signed(interval[0])}, {fmt_signed(interval[1])}]"


def fmt_percent(fraction: float | None, digits: int = 1) -> str:
    """A fraction (a score, a draw ratio, a likelihood of superiority) as a
    percentage, ``84.1%``; ``-`` when unknown."""
    if fraction is None or not math.isfinite(fraction):
        return "-"
    return f"{100.0 * fraction:.{digits}f}%"


def fmt_first_move(side: str, elo: float | None, error: float | None, score: float | None,
                   games: int) -> str:
    """The first-move advantage in one line: ``first-move advantage (white
    moves first): +31.0 +/- 12.4 Elo, 95% [+18.6, +43.4]; the first mover
    scored 54.4% of 400 games`` (``specs/ratings.md`` §First-move advantage)."""
    head = f"first-move advantage ({side} moves first): "
    if elo is None or error is None:
        return head + "- (no games yet)"
    return (head + f"{fmt_elo(elo, error)} Elo, 95% {fmt_interval((elo - error, elo + error))}; "
            f"the first mover scored {fmt_percent(score)} of {games} games")
