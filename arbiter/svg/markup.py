"""A tiny SVG writer: elements as strings, every text node and attribute escaped.

:class:`Markup` marks a string that is already SVG.  :func:`el` builds an
element: attribute values go through ``xml.sax.saxutils.quoteattr`` and any
child that is not Markup through ``escape``, so text from a peer (an engine
name, a termination detail, a move as written in a file) can only ever be
text.  Numbers are written with at most :data:`DECIMALS` decimals so that the
same position always gives the same bytes (the stored test pictures compare
them).
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

#: decimals of a coordinate: a hundredth of a pixel is invisible, and fewer
#: digits keep the pictures small and byte-stable
DECIMALS = 2


class Markup(str):
    """A string that is SVG already: :func:`el` inserts it as is."""

    __slots__ = ()


def num(value: float) -> str:
    """A coordinate as text: at most DECIMALS decimals, no trailing zeros."""
    text = f"{value:.{DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _attr(value: object) -> str:
    """An attribute value, quoted: a number as :func:`num` writes it (digits,
    a point and a sign need no escaping), anything else through quoteattr."""
    if isinstance(value, bool):
        raise TypeError("an SVG attribute is not a bool")
    if isinstance(value, int | float):
        return f'"{num(value)}"'
    return quoteattr(str(value))


def el(name: str, /, *children: object, **attrs: object) -> Markup:
    """``<name attrs>children</name>`` (or ``<name attrs/>`` when empty).

    An attribute named ``stroke_width`` is written ``stroke-width`` and a
    trailing ``_`` is dropped (``class_``); None values are left out.  A child
    that is not :class:`Markup` is text and is escaped."""
    parts = [name]
    for key, value in attrs.items():
        if value is None:
            continue
        parts.append(f"{key.rstrip('_').replace('_', '-')}={_attr(value)}")
    head = " ".join(parts)
    body = "".join(child if isinstance(child, Markup) else escape(str(child)) for child in children)
    if not body:
        return Markup(f"<{head}/>")
    return Markup(f"<{head}>{body}</{name}>")


def group(*children: Markup, **attrs: object) -> Markup:
    """A ``<g>`` of already built elements, one per line (readable diffs)."""
    return el("g", Markup("\n"), *(Markup(child + "\n") for child in children), **attrs)


def points(coords: list[tuple[float, float]]) -> str:
    """The ``points`` attribute of a polygon."""
    return " ".join(f"{num(x)},{num(y)}" for x, y in coords)
