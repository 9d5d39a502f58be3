"""The PGN-like syntax of record files (``specs/records.md``), without games.

Lexing and parsing a record file into :class:`ParsedGame` objects (tags and
movetext as written, with line numbers), and the small formats both the
writer and the reader use: tag escaping, move comments like
``{+0.35/12 0.52s}``, scores and times.  Nothing here knows the rules of a
game: :mod:`arbiter.records` replays what this module reads.

:func:`iter_games` reads a file given line by line, one game's lines at a
time, so that a file of any size is read in bounded memory
(:mod:`arbiter.recordfile` gives it a file's lines).

Reading is lenient where PGN is (hand-written files): move numbers optional
and unchecked, ``;`` and ``%`` lines, NAGs and ``!?`` marks ignored,
variations skipped; it is strict where a mistake would change the game:
tags, comments and variations must be closed, and every game must end with
a result token (a file cut short is reported, not read as a shorter game).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from arbiter.games import RESULTS
from arbiter.record import Score

#: The comment that marks a move of the opening (not played by an engine).
BOOK_COMMENT = "book"

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


@dataclass(frozen=True)
class MoveData:
    """What a move comment like ``{+0.35/12 0.52s [%clk 0:00:09.48]}`` says."""

    score: str | None  # protocol form: "cp 35", "mate -3", "winprob 0.62"
    depth: int | None
    time_ms: int | None
    clock_ms: int | None = None  # the mover's clock after the move (``[%clk]``)


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

#: the first line of a game's tags, after a blank line (as :data:`_NEXT_GAME`)
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


def _long_line(lines: list[str], limit: int) -> int | None:
    """The number (1-based) of the first line longer than ``limit``, if any."""
    return next((n for n, line in enumerate(lines, start=1) if len(line) > limit), None)


def _long_line_error(filename: str, line: int, game_number: int, length: int) -> RecordSyntaxError:
    return RecordSyntaxError(filename, line, game_number,
                             f"line {line} is {length} characters long, over the limit of "
                             f"{MAX_RECORD_LINE_CHARS}: the file is not read from there on")


def _normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _next_game_start(lines: list[str], after_line: int) -> int:
    """Index of the first line after ``after_line`` (1-based) that opens a
    tag section following a blank line; len(lines) if none."""
    for index in range(after_line, len(lines)):
        if lines[index].lstrip().startswith("[") and (index == 0 or not lines[index - 1].strip()):
            return index
    return len(lines)


