"""The small text formats of record files (``specs/records.md``), shared by
the writer (:mod:`arbiter.records`) and the reader (:mod:`arbiter.pgn`).

Contract: tag-value escaping (:func:`escape_tag_value` and its inverse),
comment-safe text (:func:`comment_text`), scores as shown
(:func:`format_score` / :func:`parse_score`), times (:func:`format_seconds`),
PGN's embedded clock commands (:func:`format_clock` / :func:`parse_clock`,
:func:`split_commands`) and our move comment ``{+0.35/12 0.52s [%clk ...]}``
(:func:`format_move_comment` / :func:`parse_move_comment`, read into a
:class:`MoveData`).  Each parser is the inverse of its formatter on what the
formatter writes; parsers of text read from files never raise on free text
(they answer None), except :func:`parse_score` which raises ValueError.
Pure functions: no I/O, no knowledge of a game's rules or of the file layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from arbiter.record import Score

#: The comment that marks a move of the opening (not played by an engine).
BOOK_COMMENT = "book"


@dataclass(frozen=True)
class MoveData:
    """What a move comment like ``{+0.35/12 0.52s [%clk 0:00:09.48]}`` says."""

    score: str | None  # protocol form: "cp 35", "mate -3", "winprob 0.62"
    depth: int | None
    time_ms: int | None
    clock_ms: int | None = None  # the mover's clock after the move (``[%clk]``)

# --------------------------------------------------------------------------
# Small formats: tag values, scores, times
# --------------------------------------------------------------------------


def escape_tag_value(value: str) -> str:
    """PGN escaping: backslash and quote get a backslash; line breaks and
    other control characters (which a tag line cannot hold) become spaces."""
    value = "".join(" " if ord(ch) < 32 or ch == "\x7f" else ch for ch in value)
    return value.replace("\\", "\\\\").replace('"', '\\"')


def unescape_tag_value(raw: str) -> str:
    return re.sub(r"\\(.)", r"\1", raw)


def comment_text(text: str) -> str:
    """Text made safe for a ``{...}`` comment: braces, which PGN comments
    cannot escape, become parentheses; runs of whitespace one space."""
    text = text.replace("{", "(").replace("}", ")")
    return " ".join(text.split())


def format_seconds(ms: int) -> str:
    """Milliseconds as seconds with no trailing zeros: ``520`` -> ``0.52s``."""
    text = f"{Decimal(ms) / 1000:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text + "s"


def format_score(score: Score | str) -> str:
    """A score as it is shown (the PGN comments, the terminal, the web view),
    from the mover's view: ``cp 35`` -> ``+0.35``, ``mate -3`` -> ``-M3``,
    ``winprob 0.62`` -> ``62%``; the one formatter of a :class:`Score`
    (text is read as one first: ValueError if it is not)."""
    kind, _, value = str(Score.parse(score) if isinstance(score, str) else score).partition(" ")
    if kind == "cp":
        cp = int(value)
        sign = "+" if cp > 0 else "-" if cp < 0 else ""
        return f"{sign}{abs(cp) // 100}.{abs(cp) % 100:02d}"
    if kind == "mate":
        n = int(value)
        return f"{'-' if n < 0 else '+'}M{abs(n)}"
    if kind == "winprob":
        percent = f"{Decimal(value) * 100:f}"
        if "." in percent:
            percent = percent.rstrip("0").rstrip(".")
        return percent + "%"
    raise ValueError(f"unknown score kind {kind!r}")


_SCORE = re.compile(
    r"^(?:(?P<cp>[+-]?\d+(?:\.\d+)?)|(?P<mate>[+-])M(?P<plies>\d+)|(?P<pct>\d+(?:\.\d+)?)%|(?P<none>\?))$",
    re.ASCII,
)
_TIME = re.compile(r"^(?P<seconds>\d+(?:\.\d+)?)s$", re.ASCII)
_DIGITS = re.compile(r"[0-9]+")


def is_number(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` also takes ``²``, which int() refuses)."""
    return _DIGITS.fullmatch(text) is not None


def parse_score(text: str) -> str | None:
    """Inverse of :func:`format_score`; ``?`` (depth without score) is None.
    Raises ValueError for anything else."""
    m = _SCORE.match(text)
    if not m:
        raise ValueError(f"not a score: {text!r}")
    if m["none"]:
        return None
    if m["cp"] is not None:
        return f"cp {int((Decimal(m['cp']) * 100).to_integral_value())}"
    if m["mate"]:
        n = int(m["plies"])
        return f"mate {-n if m['mate'] == '-' else n}"
    # the number as the arbiter writes an engine's winprob (``:g``)
    return f"winprob {float(Decimal(m['pct']) / 100):g}"


def format_move_comment(score: str | None, depth: int | None, time_ms: int,
                        clock_ms: int | None = None) -> str:
    """``+0.35/12 0.52s [%clk 0:00:09.48] [%emt 0:00:00.52]``: score[/depth]
    from the mover's view, the time used, then the clock left after the move
    (when there is a clock) and the time used again as PGN's embedded
    commands, the forms chess tools read (``specs/records.md`` §4)."""
    parts = []
    if score is not None or depth is not None:
        evaluation = format_score(score) if score is not None else "?"
        if depth is not None:
            evaluation += f"/{depth}"
        parts.append(evaluation)
    parts.append(format_seconds(time_ms))
    if clock_ms is not None and clock_ms >= 0:
        parts.append(f"[%{CLOCK_COMMAND} {format_clock(clock_ms)}]")
    if time_ms >= 0:
        parts.append(f"[%{ELAPSED_COMMAND} {format_clock(time_ms)}]")
    return " ".join(parts)


#: PGN's embedded commands (``[%clk ...]`` in a comment) that a move comment
#: holds: the clock left after the move, and the time the move used
CLOCK_COMMAND = "clk"
ELAPSED_COMMAND = "emt"

#: an embedded command in a comment: ``[%name value]``
_COMMAND = re.compile(r"\[%(?P<name>[A-Za-z][A-Za-z0-9_]*)(?:\s+(?P<value>[^\]]*?))?\s*\]", re.ASCII)
#: a command's time, ``H:MM:SS`` with an optional fraction of a second
_CLOCK = re.compile(r"^(?P<h>\d+):(?P<m>\d+):(?P<s>\d+(?:\.\d+)?)$", re.ASCII)


def format_clock(ms: int) -> str:
    """Milliseconds as an embedded command's time, ``H:MM:SS`` and the
    fraction of a second without trailing zeros: ``9480`` -> ``0:00:09.48``."""
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    whole, _, fraction = format_seconds(rest).removesuffix("s").partition(".")
    return f"{hours}:{minutes:02d}:{int(whole):02d}" + (f".{fraction}" if fraction else "")


def parse_clock(text: str) -> int | None:
    """Inverse of :func:`format_clock` (any ``H:M:S[.f]``, rounded to the
    millisecond); None when it is not one."""
    m = _CLOCK.match(text.strip())
    if m is None:
        return None
    seconds = (int(m["h"]) * 60 + int(m["m"])) * 60 + Decimal(m["s"])
    return int((seconds * 1000).to_integral_value())


def split_commands(text: str) -> tuple[str, dict[str, str]]:
    """A comment's text without its embedded commands, and the commands'
    values by name (the first of each name)."""
    commands: dict[str, str] = {}
    for m in _COMMAND.finditer(text):
        commands.setdefault(m["name"], (m["value"] or "").strip())
    return _COMMAND.sub(" ", text), commands


def parse_move_comment(text: str) -> MoveData | None:
    """The data of a comment in our format, or None if it is free text.

    The embedded commands ``[%clk]`` and ``[%emt]`` are read wherever they
    stand and other ``[%...]`` commands skipped; what is left must be our
    ``EVAL TIME`` form, or nothing when a command gave a clock or a time (a
    comment such as ``{[%clk 0:00:09.8]}``, as chess tools write them)."""
    rest, commands = split_commands(text)
    clock = parse_clock(commands[CLOCK_COMMAND]) if CLOCK_COMMAND in commands else None
    elapsed = parse_clock(commands[ELAPSED_COMMAND]) if ELAPSED_COMMAND in commands else None
    words = rest.split()
    if not words:
        if clock is None and elapsed is None:
            return None
        return MoveData(score=None, depth=None, time_ms=elapsed, clock_ms=clock)
    if len(words) > 2:
        return None
    time = _TIME.match(words[-1])
    if not time:
        return None
    score: str | None = None
    depth: int | None = None
    if len(words) == 2:
        evaluation, slash, depth_text = words[0].partition("/")
        if slash and not is_number(depth_text):
            return None
        try:
            score = parse_score(evaluation)
        except (ValueError, InvalidOperation):
            return None
        depth = int(depth_text) if slash else None
        if score is None and depth is None:
            return None
    ms = Decimal(time["seconds"]) * 1000
    if ms != ms.to_integral_value():
        return None
    return MoveData(score=score, depth=depth, time_ms=int(ms), clock_ms=clock)
