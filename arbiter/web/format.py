"""How the pages write figures (``specs/web.md`` §Figures): the templates'
filters.  Each takes a JSON value of a page and returns text (the templates
escape it); an undefined figure becomes words, never a dash."""

from __future__ import annotations

import datetime as _dt
from urllib.parse import quote

from arbiter.figures import fmt_percent, fmt_signed
from arbiter.record import Score, ScoreKind

#: the words of a figure the database has no value for
NO_VALUE = "none yet"


def seconds(ms: int | None) -> str:
    """``1234`` ms as ``1.23s`` (empty when unknown)."""
    return "" if ms is None else f"{ms / 1000:.2f}s"


def duration(secs: int | float) -> str:
    """``3725`` seconds as ``1:02:05`` (``2:05`` under an hour)."""
    hours, rest = divmod(int(secs), 3600)
    minutes, rem = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{rem:02d}" if hours else f"{minutes}:{rem:02d}"


def path_part(text: str) -> str:
    """``text`` as one piece of a URL path (every reserved character quoted)."""
    return quote(text, safe="")


def when(text: str | None) -> str:
    """A stored time (``2026-12-04T17:53:19.314Z``) as ``2026-12-04 17:53`` (UTC)."""
    if not text:
        return NO_VALUE
    try:
        moment = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    return moment.strftime("%Y-%m-%d %H:%M")


def signed(value: float | None) -> str:
    """``12.345`` as ``+12.3`` (a sign always: an Elo difference), as the
    terminal writes it (:func:`arbiter.figures.fmt_signed`)."""
    return NO_VALUE if value is None else fmt_signed(value)


def percent(share: float | None, digits: int = 1) -> str:
    """``0.5774`` as ``57.7%``, as the terminal writes it
    (:func:`arbiter.figures.fmt_percent`; specs/tournament.md §Which figure where)."""
    return NO_VALUE if share is None else fmt_percent(share, digits)


def count(value: int | float | None) -> str:
    """``10000`` as ``10,000``; a half point kept (``7.5``)."""
    if value is None:
        return NO_VALUE
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def big(value: int | None) -> str:
    """A node count or speed: ``1234567`` as ``1.23M``, ``45600`` as ``45.6k``."""
    if value is None:
        return ""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.3g}{unit}"
    return str(value)


def reason(text: str | None) -> str:
    """Why a figure is undefined, in a few words: the reason's first part
    (``every game won: a score of 100% ...`` -> ``every game won``)."""
    if not text:
        return "undefined"
    head = text.split(":", 1)[0]
    return "no games yet" if head == "no games" else head


def read_score(text: str | None) -> Score | None:
    """A score as a record writes it (``cp 35``, ``mate -3``, ``winprob
    0.62``), read; None when there is none or it is not one."""
    if not text:
        return None
    try:
        return Score.parse(text)
    except ValueError:
        return None


def score(text: str | None) -> str:
    """An engine's score as written in a record as a reader reads it:
    ``+0.35``, ``mate -3``, ``62%`` (a text that is no score, as it is)."""
    read = read_score(text)
    if read is None:
        return text or ""
    if read.kind is ScoreKind.CP:
        return f"{read.value / 100:+.2f}"
    if read.kind is ScoreKind.MATE:
        return f"mate {int(read.value):+d}"
    return f"{100 * read.value:.0f}%"


FILTERS = {"ms": seconds, "duration": duration, "part": path_part, "when": when, "signed": signed,
           "percent": percent, "count": count, "big": big, "reason": reason, "score": score}

__all__ = ["FILTERS", "NO_VALUE", "read_score"]
