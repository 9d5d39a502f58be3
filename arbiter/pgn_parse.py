"""Parsing record-file text (``specs/records.md``) into :class:`ParsedGame` objects.

Contract: :func:`parse_games` turns a whole file's text into its games, tags
and movetext as written with their line numbers, or raises
:class:`RecordSyntaxError` (``file:line: game N: what``) at the first
problem; :class:`_Parser` reads games from a piece of text that starts at a
given line and game number (:mod:`arbiter.pgn` feeds it one part of a file
at a time).  The bounds (``MAX_*``) every reader enforces are defined here.
Nothing here knows the rules of a game: :mod:`arbiter.records` replays what
is read, and move comments are decoded by :mod:`arbiter.pgn_formats`.

Reading is lenient where PGN is (hand-written files): move numbers optional
and unchecked, ``;`` and ``%`` lines, NAGs and ``!?`` marks ignored,
variations skipped; it is strict where a mistake would change the game:
tags, comments and variations must be closed, and every game must end with
a result token (a file cut short is reported, not read as a shorter game).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from arbiter.games import RESULTS
from arbiter.pgn_formats import BOOK_COMMENT, MoveData, parse_move_comment, unescape_tag_value

# Bounds of what a record file may hold, so that reading one costs bounded
# time and memory whatever it holds (a single 50 MB line once took over a
# minute and 4.7 GB to replay).  Each is far beyond what an honest file has;
# passing one is an error naming the file and line.

#: Longest line of a PGN-like file, in characters: our writer wraps at 80,
#: and a hand-made file with a whole game on one line (with clock comments)
#: stays within some tens of KB.
MAX_RECORD_LINE_CHARS = 1 << 20

#: Most tags of one game: the Seven Tag Roster and our dozen others, and
#: room for any other program's.
MAX_TAGS = 256

#: Longest comment, in characters (a comment may span lines, so the line
#: bound alone does not bound it): move comments are a few words.
MAX_COMMENT_CHARS = 1 << 16

#: Most moves in one game's movetext: honest games are hundreds of plies;
#: each move is replayed by the referee.
MAX_RECORD_MOVES = 100_000

#: Most games in one record file: the games of the largest tournament
#: (``arbiter.schedule.MAX_SCHEDULE_GAMES``), which an import turns into one.
MAX_RECORD_GAMES = 1_000_000

#: The result token of a game that has not ended (accepted when reading only).
UNFINISHED = "*"

# --------------------------------------------------------------------------
# Errors and parsed games
# --------------------------------------------------------------------------


class RecordSyntaxError(ValueError):
    """A record file that is not well-formed: ``file:line: game N: what``.

    ``resume_line`` (1-based), when set, is where the next game starts for
    certain (reading goes on there after this error)."""

    def __init__(self, filename: str, line: int, game_number: int, message: str,
                 resume_line: int | None = None):
        self.filename = filename
        self.line = line
        self.game_number = game_number
        self.message = message
        self.resume_line = resume_line
        game = f" game {game_number}:" if game_number else ""  # 0: before any game
        super().__init__(f"{filename}:{line}:{game} {message}")


@dataclass
class ParsedMove:
    """One move of the movetext as written, before the referee has seen it."""

    text: str  # the move token (annotation marks ``!``/``?`` removed)
    line: int
    book: bool = False  # followed by ``{book}``: part of the opening
    data: MoveData | None = None  # eval/depth/time from our comment format
    comments: list[str] = field(default_factory=list)  # free-text comments


@dataclass
class ParsedGame:
    """One game of a record file: its tags and movetext, not yet replayed."""

    filename: str
    number: int  # 1-based position in the file
    line: int  # where the game starts
    tags: dict[str, str]
    tag_lines: dict[str, int]
    moves: list[ParsedMove]
    result: str  # the result token ending the movetext
    result_line: int
    closing_comment: str | None = None  # e.g. why a non-rule ending happened
    skipped_variations: int = 0
    #: the record a JSONL line held (kept whole: it has more than the text)
    source_record: Any = None
    #: (id, name) of the tournament a JSONL line says the game was stored in
    source_tournament: tuple[int, str] | None = None

    def where(self, line: int | None = None) -> str:
        return f"{self.filename}:{line or self.line}: game {self.number}"


# --------------------------------------------------------------------------
# Reading: lexer and parser
# --------------------------------------------------------------------------

_TAG = re.compile(r'\[[ \t]*([A-Za-z0-9_]+)[ \t]+"((?:[^"\\\n]|\\.)*)"[ \t]*\]')
_NUMBER = re.compile(r"^([0-9]+)(\.+)(.*)$")
_NAG = re.compile(r"^\$[0-9]+$")
#: a blank line then a tag: inside a comment, the sign of a missing '}'
_NEXT_GAME = re.compile(r'\n[ \t]*\n[ \t]*\[[A-Za-z0-9_]+[ \t]+"')
#: what most of a file is made of: symbols (moves, numbers, results, NAGs)
#: and blanks; every other character is dealt with one by one
_LEXEME = re.compile(r'(?P<symbol>[^\s{}\[\]();"%]+)|(?P<blank>[^\S\n]+)|(?P<newline>\n)')


@dataclass
class _Token:
    kind: str  # tag, comment, symbol, number, nag, open, close, result
    text: str
    line: int
    value: str = ""  # tag value


class _Lexer:
    """PGN tokens with line numbers.  Raises RecordSyntaxError (without the
    game number, filled in by the parser) on text no PGN can contain."""

    def __init__(self, text: str, filename: str, first_line: int = 1):
        self.text = text
        self.filename = filename
        self.pos = 0
        self.line = first_line

    def error(self, message: str, line: int | None = None,
              resume_line: int | None = None) -> RecordSyntaxError:
        return RecordSyntaxError(self.filename, line or self.line, 0, message, resume_line)

    def tokens(self) -> Iterator[_Token]:
        text = self.text
        n = len(text)
        while self.pos < n:
            m = _LEXEME.match(text, self.pos)
            if m is not None:
                self.pos = m.end()
                if m.lastgroup == "symbol":
                    yield self._symbol(m.group(), self.line)
                elif m.lastgroup == "newline":
                    self.line += 1
                continue
            ch = text[self.pos]
            if ch == "%":
                if self.pos and text[self.pos - 1] != "\n":
                    raise self.error("'%' outside the start of a line (it starts an escape line)")
                self._skip_line()  # escape line: for other programs, ignored
            elif ch == ";":
                self._skip_line()  # rest-of-line comment: ignored
            elif ch == "{":
                yield self._comment()
            elif ch == "[":
                yield self._tag()
            elif ch in "()":
                self.pos += 1
                yield _Token("open" if ch == "(" else "close", ch, self.line)
            elif ch == "}":
                raise self.error("'}' without an opening '{'")
            elif ch == "]":
                raise self.error("']' outside a tag")
            else:
                raise self.error("a quoted string outside a tag")

    def _skip_line(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end

    def _comment(self) -> _Token:
        start_line = self.line
        end = self.text.find("}", self.pos + 1)
        body = self.text[self.pos + 1 : end if end >= 0 else len(self.text)]
        swallowed = _NEXT_GAME.search(body)
        if swallowed:
            next_line = start_line + body.count("\n", 0, swallowed.start()) + 2
            raise self.error(f"comment '{{' not closed before the next game's tags (line "
                             f"{next_line})", start_line, resume_line=next_line)
        if end < 0:
            raise self.error(
                "comment '{' never closed before the end of the file (truncated file?)", start_line
            )
        if len(body) > MAX_COMMENT_CHARS:
            raise self.error(f"a comment of {len(body)} characters, over the limit of "
                             f"{MAX_COMMENT_CHARS}", start_line)
        self.line += body.count("\n")
        self.pos = end + 1
        return _Token("comment", " ".join(body.split()), start_line)

    def _tag(self) -> _Token:
        m = _TAG.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return _Token("tag", m[1], self.line, unescape_tag_value(m[2]))
        raise self.error(self._bad_tag_reason())

    def _bad_tag_reason(self) -> str:
        end = self.text.find("\n", self.pos)
        line = self.text[self.pos : len(self.text) if end < 0 else end]
        shown = line if len(line) <= 60 else line[:57] + "..."
        name = re.match(r"\[[ \t]*([A-Za-z0-9_]*)", line)
        if not name or not name[1]:
            why = "a tag needs a name of letters, digits and _ after '['"
        elif not re.match(r'\[[ \t]*[A-Za-z0-9_]+[ \t]+"', line):
            why = f"tag {name[1]}: the value must be a quoted string"
        elif not re.match(r'\[[ \t]*[A-Za-z0-9_]+[ \t]+"(?:[^"\\]|\\.)*"', line):
            why = f"tag {name[1]}: the value's closing quote is missing"
        else:
            why = f"tag {name[1]}: ']' expected after the value"
        return f"bad tag {shown!r}: {why}"

    def _symbol(self, word: str, line: int) -> _Token:
        if word in RESULTS or word == UNFINISHED:
            return _Token("result", word, line)
        if _NAG.match(word):
            return _Token("nag", word, line)
        if word.startswith("$"):
            raise self.error(f"bad annotation glyph {word!r} (expected $ and digits)", line)
        if set(word) <= {"."}:
            return _Token("number", word, line)
        m = _NUMBER.match(word)
        if m:
            return _Token("number", m[1] + m[2], line, value=m[3])  # value: a glued move
        return _Token("symbol", word, line)


def _strip_annotation(move: str) -> str:
    """``d5!?`` -> ``d5``: suffix annotations are not part of any notation."""
    return move.rstrip("!?")


class _Parser:
    """Games from ``text``; with ``stop_line``, no game starts on or after
    that line (it holds the next part's first tag, :func:`iter_games`)."""

    def __init__(self, text: str, filename: str, first_line: int = 1, number: int = 0,
                 stop_line: int | None = None):
        self.filename = filename
        self.stop_line = stop_line
        self.lexer = _Lexer(text, filename, first_line)
        self.last_line = first_line  # of the last token read
        self.stream = self.lexer.tokens()
        self.peeked: _Token | None = None
        self.number = number

    def next(self) -> _Token | None:
        if self.peeked is not None:
            peeked, self.peeked = self.peeked, None
            return peeked
        try:
            token = next(self.stream, None)
        except RecordSyntaxError as exc:
            raise self.error(exc.line, exc.message, exc.resume_line) from None
        if token is not None:
            self.last_line = token.line
        return token

    def peek(self) -> _Token | None:
        if self.peeked is None:
            self.peeked = self.next()
        return self.peeked

    def error(self, line: int, message: str, resume_line: int | None = None) -> RecordSyntaxError:
        return RecordSyntaxError(self.filename, line, self.number, message, resume_line)

    def games(self) -> Iterator[ParsedGame]:
        while True:
            self.number += 1  # errors while looking for the next game are that game's
            token = self.peek()
            if token is None or (self.stop_line is not None and token.line >= self.stop_line):
                self.number -= 1
                return
            if self.number > MAX_RECORD_GAMES:
                token = self.peek()
                raise self.error(token.line if token else self.last_line,
                                 f"more than {MAX_RECORD_GAMES} games in the file (the limit)")
            yield self.game()

    def game(self) -> ParsedGame:
        first = self.peek()
        assert first is not None
        tags: dict[str, str] = {}
        tag_lines: dict[str, int] = {}
        while (token := self.peek()) is not None and token.kind == "tag":
            self.next()
            if token.text in tags:
                raise self.error(
                    token.line,
                    f"tag {token.text} given twice (first on line {tag_lines[token.text]})",
                )
            if len(tags) == MAX_TAGS:
                raise self.error(token.line, f"more than {MAX_TAGS} tags in one game (the limit)")
            tags[token.text] = token.value
            tag_lines[token.text] = token.line
        moves: list[ParsedMove] = []
        loose_comments: list[str] = []  # before the first move
        variations = 0
        while True:
            token = self.next()
            if token is None:
                raise self.error(self.last_line,
                                 "the file ends before the game's result token (truncated file?)")
            if token.kind == "result":
                return self._finish(first.line, tags, tag_lines, moves, loose_comments, token,
                                    variations)
            if token.kind == "tag":
                raise self.error(
                    token.line,
                    f"tag {token.text} inside the movetext: the game has no result token "
                    "(1-0, 0-1, 1/2-1/2 or *) before the next game's tags",
                    resume_line=token.line)
            if len(moves) > MAX_RECORD_MOVES:
                raise self.error(token.line, f"more than {MAX_RECORD_MOVES} moves in one game "
                                 "(the limit)")
            if token.kind == "comment":
                target = moves[-1].comments if moves else loose_comments
                target.append(token.text)
            elif token.kind == "number":
                if token.value:
                    moves.append(ParsedMove(_strip_annotation(token.value), token.line))
            elif token.kind == "symbol":
                move = _strip_annotation(token.text)
                if not move:
                    raise self.error(token.line, f"{token.text!r} is not a move")
                moves.append(ParsedMove(move, token.line))
            elif token.kind == "open":
                self._skip_variation(token)
                variations += 1
            elif token.kind == "close":
                raise self.error(token.line, "')' without an opening '('")
            # NAGs ($n) are ignored

    def _skip_variation(self, opening: _Token) -> None:
        """Variations are skipped, not checked (``specs/records.md`` §Reading)."""
        depth = 1
        while depth:
            token = self.next()
            if token is None:
                raise self.error(
                    opening.line, "variation '(' never closed before the end of the file"
                )
            if token.kind == "tag":
                raise self.error(opening.line, "variation '(' never closed before the next "
                                 f"game's tags (line {token.line})", resume_line=token.line)
            depth += {"open": 1, "close": -1}.get(token.kind, 0)

    def _finish(self, line, tags, tag_lines, moves, loose_comments, result, variations) -> ParsedGame:
        for move in moves:
            _classify_comments(move)
        closing = None
        tail = moves[-1].comments if moves else loose_comments
        if tail:
            closing = tail.pop()
        return ParsedGame(
            filename=self.filename,
            number=self.number,
            line=line,
            tags=tags,
            tag_lines=tag_lines,
            moves=moves,
            result=result.text,
            result_line=result.line,
            closing_comment=closing,
            skipped_variations=variations,
        )


def _classify_comments(move: ParsedMove) -> None:
    """The first comment in our format (``{book}`` or ``{+0.35/12 0.52s}``)
    is the move's data; the others stay free text."""
    for index, text in enumerate(move.comments):
        if text == BOOK_COMMENT:
            move.book = True
        else:
            data = parse_move_comment(text)
            if data is None:
                continue
            move.data = data
        del move.comments[index]
        return


def parse_games(text: str, filename: str = "<text>") -> list[ParsedGame]:
    """Every game of a record file; RecordSyntaxError at the first problem
    (a line over :data:`MAX_RECORD_LINE_CHARS` is one, before any game is read)."""
    text = _normalize(text)
    long_line = _long_line(text.split("\n"), MAX_RECORD_LINE_CHARS)
    if long_line is not None:
        raise _long_line_error(filename, long_line, 0, len(text.split("\n")[long_line - 1]))
    return list(_Parser(text, filename).games())


def _long_line(lines: list[str], limit: int) -> int | None:
    """The number (1-based) of the first line longer than ``limit``, if any."""
    return next((n for n, line in enumerate(lines, start=1) if len(line) > limit), None)


def _long_line_error(filename: str, line: int, game_number: int, length: int) -> RecordSyntaxError:
    return RecordSyntaxError(filename, line, game_number,
                             f"line {line} is {length} characters long, over the limit of "
                             f"{MAX_RECORD_LINE_CHARS}: the file is not read from there on")


def _normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")
