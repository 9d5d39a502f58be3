"""The PGN-like syntax of record files (``specs/records.md``): reading files.

:func:`iter_games` reads a file given line by line, one game's lines at a
time, so that a file of any size is read in bounded memory
(:mod:`arbiter.recordfile` gives it a file's lines); a broken game becomes
its :class:`RecordSyntaxError` and reading resumes at the next game.
:func:`read_games` does the same for a text in memory, :func:`parse_games`
(from :mod:`arbiter.pgn_parse`) stops at the first error.

This module is also the one import path of the record syntax: it
re-exports the parser's names (:mod:`arbiter.pgn_parse`: bounds, errors,
:class:`ParsedGame`) and the small formats (:mod:`arbiter.pgn_formats`: tag
escaping, move comments, scores, clocks), so ``from arbiter.pgn import X``
works for all of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from arbiter.pgn_formats import (
    BOOK_COMMENT,
    CLOCK_COMMAND,
    ELAPSED_COMMAND,
    MoveData,
    comment_text,
    escape_tag_value,
    format_clock,
    format_move_comment,
    format_score,
    format_seconds,
    is_number,
    parse_clock,
    parse_move_comment,
    parse_score,
    split_commands,
    unescape_tag_value,
)
from arbiter.pgn_parse import (
    MAX_COMMENT_CHARS,
    MAX_RECORD_GAMES,
    MAX_RECORD_LINE_CHARS,
    MAX_RECORD_MOVES,
    MAX_TAGS,
    UNFINISHED,
    ParsedGame,
    ParsedMove,
    RecordSyntaxError,
    _long_line_error,
    _normalize,
    _Parser,
    parse_games,
)

__all__ = [
    # reading files (this module)
    "LongLine", "Line", "text_lines", "read_games", "iter_games",
    # the parser (arbiter.pgn_parse), re-exported
    "MAX_RECORD_LINE_CHARS", "MAX_TAGS", "MAX_COMMENT_CHARS", "MAX_RECORD_MOVES",
    "MAX_RECORD_GAMES", "UNFINISHED", "RecordSyntaxError", "ParsedMove", "ParsedGame",
    "parse_games",
    # the small formats (arbiter.pgn_formats), re-exported
    "BOOK_COMMENT", "CLOCK_COMMAND", "ELAPSED_COMMAND", "MoveData", "comment_text",
    "escape_tag_value", "format_clock", "format_move_comment", "format_score",
    "format_seconds", "is_number", "parse_clock", "parse_move_comment", "parse_score",
    "split_commands", "unescape_tag_value",
]


@dataclass(frozen=True)
class LongLine:
    """A line over the length limit, in place of its text: its number
    (1-based) and length in characters."""

    number: int
    length: int


#: A line of a record file as the readers take it: its text (without the
#: line break), or a :class:`LongLine`.
Line = str | LongLine

#: what ends a tag (a line holding one may end in a tag section)
_TAG_END = re.compile(r'"[ \t]*\]')

#: the first line of a game's tags, after a blank line (as :data:`arbiter.pgn_parse._NEXT_GAME`)
_GAME_START = re.compile(r'[ \t]*\[[A-Za-z0-9_]+[ \t]+"')


def text_lines(text: str, limit: int = MAX_RECORD_LINE_CHARS) -> Iterator[Line]:
    """The lines of ``text`` (CRLF, CR and LF breaks), the first one over
    ``limit`` characters as a :class:`LongLine`, and none after it."""
    for number, line in enumerate(_normalize(text).split("\n"), start=1):
        if len(line) > limit:
            yield LongLine(number, len(line))
            return
        yield line


def read_games(text: str, filename: str = "<text>") -> list[ParsedGame | RecordSyntaxError]:
    """Like :func:`parse_games`, but a broken game becomes its error and
    reading resumes at the next game (:func:`iter_games`)."""
    return list(iter_games(text_lines(text), filename))


def iter_games(lines: Iterable[Line], filename: str = "<text>"
               ) -> Iterator[ParsedGame | RecordSyntaxError]:
    """Every game of a record file given line by line, a broken game as its
    error, holding one game's lines at a time (a file of any size reads in
    bounded memory).  Reading resumes after an error where the error says
    the next game starts, else at the next tag line after a blank line; a
    :class:`LongLine` ends the file with its error.

    The file is read in parts, each ending before a tag line that follows a
    blank line and some movetext: no game can go on past such a line (a
    comment, variation or movetext reaching it is an error in the whole-file
    parser too), so the games and errors are those of the whole file."""
    reader = _PartReader(filename)
    for line in lines:
        yield from reader.add(line)
        if isinstance(line, LongLine):
            return
    yield from reader.finish()


class _PartReader:
    """The state of :func:`iter_games` between two lines."""

    def __init__(self, filename: str):
        self.filename = filename
        self.part: list[str] = []
        self.first = 1  # the number of part[0]
        self.number = 0  # of the last game begun
        self.body = False  # movetext since the part's last tag line
        self.blank_before = True  # the line before is blank (spaces and tabs)
        self.empty_before = True  # ... or whitespace only (the resume rule's blank)
        self.skip_after: int | None = None  # an error's resume: no part before a game after it
        self.line = 0  # the number of the last line added
        self.pending: ParsedGame | RecordSyntaxError | None = None  # a cut may replace it

    def _emit(self, items: Iterable[ParsedGame | RecordSyntaxError]
              ) -> Iterator[ParsedGame | RecordSyntaxError]:
        for item in items:
            if self.pending is not None:
                yield self.pending
            self.pending = item
            self.number = item.number if isinstance(item, ParsedGame) else item.game_number

    def add(self, line: Line) -> Iterator[ParsedGame | RecordSyntaxError]:
        self.line += 1
        if isinstance(line, LongLine):
            yield from self._emit(self._part_games(None))
            game_number, self.pending = _games_begun(self.pending)
            if self.pending is not None:
                yield self.pending
            yield _long_line_error(self.filename, line.number, game_number, line.length)
            return
        if self.skip_after is not None:
            if self.line > self.skip_after and self.empty_before and line.lstrip().startswith("["):
                self.skip_after, self.part, self.first, self.body = None, [], self.line, False
        elif self.body and self.blank_before and _GAME_START.match(line):
            yield from self._emit(self._part_games(line))
            self.part, self.first, self.body = [], self.line, False
        if self.skip_after is None:
            self.part.append(line)
        stripped = line.strip(" \t")
        self.blank_before, self.empty_before = not stripped, not line.strip()
        if (stripped.startswith("[") and not stripped.startswith("[%")) or _TAG_END.search(stripped):
            self.body = False  # perhaps in a tag section: the next tag may be this game's
        elif stripped and stripped[0] not in ";%":
            self.body = True

    def finish(self) -> Iterator[ParsedGame | RecordSyntaxError]:
        if self.skip_after is None:
            yield from self._emit(self._part_games(None))
        if self.pending is not None:
            yield self.pending

    def _part_games(self, next_line: str | None) -> Iterator[ParsedGame | RecordSyntaxError]:
        """The games of the part, numbered on.  ``next_line``, the next
        part's first line, is read after it: a game running into it is
        reported as in the whole file; no game starts on it."""
        part, first = self.part, self.first
        stop = first + len(part) if next_line is not None else None
        text_lines = part if next_line is None else part + [next_line]
        start = 0  # index into part of the first line still to read
        number = self.number
        while start < len(part):
            parser = _Parser("\n".join(text_lines[start:]), self.filename,
                             first_line=first + start, number=number, stop_line=stop)
            try:
                yield from parser.games()
                return
            except RecordSyntaxError as exc:
                yield exc
                number = parser.number
                if exc.resume_line is not None and exc.resume_line - first > start:
                    start = exc.resume_line - first
                    continue
                after = max(exc.line, first + start)  # the next game starts after this line
                start = _next_game_start(part, after - first + 1)
                if start == len(part) and stop is not None and after >= stop:
                    self.skip_after = after  # not at the next part's first line either


def _games_begun(last: ParsedGame | RecordSyntaxError | None
                 ) -> tuple[int, ParsedGame | RecordSyntaxError | None]:
    """The number of the game a cut-off file was in, and what of ``last``
    (the item read before the cut) to keep: when the cut made that game end
    early, its error is dropped (the cut explains it) and the number is its;
    else the next one."""
    if last is None:
        return 1, None
    if isinstance(last, RecordSyntaxError):
        if "file ends" in last.message:
            return last.game_number, None
        return last.game_number + 1, last
    return last.number + 1, last


def _next_game_start(lines: list[str], after_line: int) -> int:
    """Index of the first line after ``after_line`` (1-based) that opens a
    tag section following a blank line; len(lines) if none."""
    for index in range(after_line, len(lines)):
        if lines[index].lstrip().startswith("[") and (index == 0 or not lines[index - 1].strip()):
            return index
    return len(lines)
