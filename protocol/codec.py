"""Lines to messages and bytes to lines, with no I/O (in the manner of h11).

* :class:`LineSplitter` turns the bytes read from a pipe into text lines,
  enforcing :data:`~protocol.limits.MAX_LINE_BYTES`.
* :func:`parse_engine_line` / :func:`parse_arbiter_line` turn one line into a
  typed message from :mod:`protocol.messages`, or None for a blank line or an
  unknown command (which the protocol says to ignore).
* Formatting is ``message.to_line()``.

:class:`ProtocolError` is the only exception raised here, whatever the input.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import messages as m
from .errors import ProtocolError
from .limits import MAX_LINE_BYTES
from .messages import ArbiterMessage, EngineMessage, parse_float, parse_int

__all__ = ["ProtocolError", "LineSplitter", "parse_engine_line", "parse_arbiter_line",
           "tokenize", "is_info_line"]

_TOKEN_RE = re.compile(r"[^ \t\r]+")


class _Tokens:
    """The tokens of a line with their positions, so that free-text fields
    (``id name``, ``info string``, ``setoption ... value``) keep their text."""

    def __init__(self, line: str):
        self.line = line
        matches = list(_TOKEN_RE.finditer(line))
        self.words = [match.group() for match in matches]
        self.ends = [match.end() for match in matches]

    def rest_after(self, index: int) -> str:
        """The raw text after token ``index``, without surrounding whitespace."""
        return self.line[self.ends[index]:].strip(m.WHITESPACE)


def tokenize(line: str) -> list[str]:
    """The whitespace-separated tokens of a line (spaces, tabs and CR separate)."""
    return _TOKEN_RE.findall(line)


def is_info_line(line: str) -> bool:
    """Whether ``line`` starts with the ``info`` command, known without
    parsing it (a line with leading blanks is not recognised here; the
    parser still reads it as ``info``)."""
    return line.startswith("info") and (len(line) == 4 or line[4] in m.WHITESPACE)


def _clip(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _no_args(cls: type) -> Callable[[_Tokens], object]:
    def parse(tokens: _Tokens) -> object:
        if len(tokens.words) > 1:
            raise ProtocolError(f"{tokens.words[0]} takes no arguments, got {_clip(tokens.words[1])!r}")
        return cls()
    return parse


# --- arbiter -> engine ------------------------------------------------------


def _parse_setoption(tokens: _Tokens) -> m.SetOption:
    words = tokens.words
    if len(words) < 3 or words[1] != "name":
        raise ProtocolError("setoption needs 'name <option name>'")
    try:
        value_at = words.index("value", 2)
    except ValueError:
        value_at = len(words)
    if value_at == 2:
        raise ProtocolError("setoption: the option name is missing before 'value'")
    name = " ".join(words[2:value_at])
    value = tokens.rest_after(value_at) if value_at < len(words) else None
    return m.SetOption(name, value)


def _parse_position(tokens: _Tokens) -> m.SetPosition:
    words = tokens.words
    if len(words) < 2:
        raise ProtocolError("position needs 'startpos' or 'fen <position string>'")
    try:
        moves_at = words.index("moves", 1)
    except ValueError:
        moves_at = len(words)
    moves = tuple(words[moves_at + 1:])
    if words[1] == "startpos":
        if moves_at != 2:
            raise ProtocolError(f"position startpos: unexpected {_clip(words[2])!r} (expected 'moves')")
        return m.SetPosition(None, moves)
    if words[1] == "fen":
        if moves_at == 2:
            raise ProtocolError("position fen: the position string is missing")
        return m.SetPosition(" ".join(words[2:moves_at]), moves)
    raise ProtocolError(f"position: expected 'startpos' or 'fen', got {_clip(words[1])!r}")


def _parse_go(tokens: _Tokens) -> m.Go:
    words = tokens.words
    values: dict[str, object] = {}
    index = 1
    while index < len(words):
        word = words[index]
        if word in values:
            raise ProtocolError(f"go: {word!r} given twice")
        if word == "infinite":
            values[word] = True
            index += 1
        elif word in m.GO_INT_FIELDS:
            if index + 1 >= len(words):
                raise ProtocolError(f"go {word}: the value is missing")
            values[word] = parse_int(words[index + 1], f"go {word}", m._GO_MINIMUM[word])
            index += 2
        else:
            raise ProtocolError(f"go: unknown parameter {_clip(word)!r}")
    return m.Go(**values)  # type: ignore[arg-type]


def _parse_query(tokens: _Tokens) -> m.Query:
    if len(tokens.words) != 2:
        raise ProtocolError(f"query takes one of {', '.join(m.QUERY_WORDS)}")
    return m.Query(tokens.words[1])


_ARBITER_PARSERS: dict[str, Callable[[_Tokens], object]] = {
    "ugi": _no_args(m.Ugi),
    "isready": _no_args(m.IsReady),
    "setoption": _parse_setoption,
    "uginewgame": _no_args(m.UgiNewGame),
    "position": _parse_position,
    "go": _parse_go,
    "stop": _no_args(m.Stop),
    "quit": _no_args(m.Quit),
    "query": _parse_query,
}


# --- engine -> arbiter ------------------------------------------------------


def _parse_id(tokens: _Tokens) -> m.IdName | m.IdAuthor | None:
    words = tokens.words
    if len(words) < 2:
        raise ProtocolError("id needs 'name <text>' or 'author <text>'")
    if words[1] == "name":
        return m.IdName(tokens.rest_after(1))
    if words[1] == "author":
        return m.IdAuthor(tokens.rest_after(1))
    return None  # another id field: ignored, like an unknown command


def _parse_option(tokens: _Tokens) -> m.OptionDecl:
    words = tokens.words
    if len(words) < 2 or words[1] != "name":
        raise ProtocolError("option needs 'name <option name> type <type>'")
    try:
        type_at = words.index("type", 2)
    except ValueError:
        raise ProtocolError("option: 'type' is missing") from None
    if type_at == 2:
        raise ProtocolError("option: the option name is missing")
    if type_at + 1 >= len(words):
        raise ProtocolError("option: the type after 'type' is missing")
    name = " ".join(words[2:type_at])
    kind = words[type_at + 1]
    default: str | None = None
    bounds: dict[str, int] = {}
    vars_: list[str] = []
    index = type_at + 2
    keywords = ("default", "min", "max", "var")
    while index < len(words):
        key = words[index]
        if key not in keywords:
            raise ProtocolError(f"option {name!r}: unexpected {_clip(key)!r}")
        end = index + 1
        while end < len(words) and words[end] not in m.OPTION_KEYWORDS:
            end += 1
        value = " ".join(words[index + 1:end])
        if key == "default":
            if default is not None:
                raise ProtocolError(f"option {name!r}: default given twice")
            default = "" if value == m.EMPTY_DEFAULT else value
        elif key == "var":
            if not value:
                raise ProtocolError(f"option {name!r}: var without a value")
            vars_.append(value)
        else:
            if key in bounds:
                raise ProtocolError(f"option {name!r}: {key} given twice")
            bounds[key] = parse_int(value, f"option {name!r}: {key}")
        index = end
    return m.OptionDecl(name, kind, default, bounds.get("min"), bounds.get("max"), tuple(vars_))


_INFO_INT_FIELDS = ("depth", "seldepth", "nodes", "nps", "time")


def _parse_info(tokens: _Tokens) -> m.Info:
    """Known fields are parsed strictly; unknown tokens (``multipv 1``,
    ``currmove e4``, ``lowerbound``) are skipped one at a time, as UCI GUIs do."""
    words = tokens.words
    values: dict[str, object] = {}
    index = 1
    while index < len(words):
        word = words[index]
        if word in _INFO_INT_FIELDS:
            if index + 1 >= len(words):
                raise ProtocolError(f"info {word}: the value is missing")
            values[word] = parse_int(words[index + 1], f"info {word}", 0)
            index += 2
        elif word == "score":
            if index + 2 >= len(words):
                raise ProtocolError("info score needs 'cp <n>', 'mate <n>' or 'winprob <p>'")
            kind, text = words[index + 1], words[index + 2]
            if kind == "cp":
                values["score_cp"] = parse_int(text, "info score cp")
            elif kind == "mate":
                values["score_mate"] = parse_int(text, "info score mate")
            elif kind == "winprob":
                values["score_winprob"] = parse_float(text, "info score winprob")
            else:
                raise ProtocolError(f"info score: unknown kind {_clip(kind)!r} (cp, mate or winprob)")
            index += 3
        elif word == "pv":
            end = index + 1
            while end < len(words) and words[end] not in m.INFO_KEYWORDS:
                end += 1
            values["pv"] = tuple(words[index + 1:end])
            index = end
        elif word == "string":
            values["string"] = tokens.rest_after(index)
            break
        else:
            index += 1
    return m.Info(**values)  # type: ignore[arg-type]


def _parse_bestmove(tokens: _Tokens) -> m.BestMove:
    words = tokens.words
    if len(words) == 2:
        return m.BestMove(words[1])
    if len(words) == 4 and words[2] == "ponder":
        return m.BestMove(words[1], words[3])
    if len(words) == 1:
        raise ProtocolError("bestmove: the move is missing")
    raise ProtocolError(f"bestmove takes exactly one move, got {len(words) - 1} tokens")


def _parse_response(tokens: _Tokens) -> m.Response:
    if len(tokens.words) != 2:
        raise ProtocolError(f"response takes exactly one of {', '.join(m.RESPONSE_WORDS)}")
    return m.Response(tokens.words[1])


_ENGINE_PARSERS: dict[str, Callable[[_Tokens], object]] = {
    "id": _parse_id,
    "option": _parse_option,
    "ugiok": _no_args(m.UgiOk),
    "readyok": _no_args(m.ReadyOk),
    "info": _parse_info,
    "bestmove": _parse_bestmove,
    "response": _parse_response,
}


def _parse(line: str, parsers: dict[str, Callable[[_Tokens], object]]) -> object | None:
    if not isinstance(line, str):
        raise ProtocolError(f"a line must be text, not {type(line).__name__}")
    if "\n" in line:
        raise ProtocolError("a line must not contain a line feed")
    if len(line) > MAX_LINE_BYTES:  # characters <= bytes, so this is a cheap first check
        raise ProtocolError(f"line longer than {MAX_LINE_BYTES} bytes")
    tokens = _Tokens(line)
    if not tokens.words:
        return None
    command = tokens.words[0]
    parser = parsers.get(command)
    if parser is None:
        return None
    try:
        return parser(tokens)
    except ProtocolError as exc:
        message = str(exc)
        if not message.startswith(command):
            message = f"{command}: {message}"
        raise ProtocolError(message, command=command, line=_clip(line, 200)) from None


def parse_engine_line(line: str) -> EngineMessage | None:
    """The message of a line an engine wrote; None for blank/unknown lines.

    A known command with bad arguments raises :class:`ProtocolError`."""
    return _parse(line, _ENGINE_PARSERS)  # type: ignore[return-value]


def parse_arbiter_line(line: str) -> ArbiterMessage | None:
    """The message of a line an arbiter wrote (what engines and the SDK read)."""
    return _parse(line, _ARBITER_PARSERS)  # type: ignore[return-value]


class LineSplitter:
    """Bytes in, complete text lines out.

    Lines end in LF; a CR before the LF is dropped.  Invalid UTF-8 becomes
    U+FFFD (never an exception).  A line longer than
    :data:`~protocol.limits.MAX_LINE_BYTES` raises :class:`ProtocolError` as
    soon as the limit is passed; the rest of that line, up to its LF, is then
    discarded and the splitter carries on with the next line.  When a
    :meth:`feed` raises, the complete lines that chunk held (before and after
    the overlong one) are on the exception as ``lines``, so none is lost.
    """

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES):
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data: bytes | bytearray) -> list[str]:
        size = len(data)
        if (size and not self._buffer and not self._discarding and size <= self.max_line_bytes
                and data.find(b"\n") == size - 1):  # the usual chunk, one whole line: no loop
            raw = data[:-2] if data.endswith(b"\r\n") else data[:-1]
            return [raw.decode("utf-8", errors="replace")]
        lines: list[str] = []
        overflow = False
        start = 0
        while start < size:
            newline = data.find(b"\n", start)
            end = size if newline < 0 else newline
            if self._discarding:
                if newline >= 0:
                    self._discarding = False
            elif newline >= 0:
                if len(self._buffer) + (end - start) > self.max_line_bytes + 1:  # +1: the CR
                    self._buffer.clear()
                    overflow = True
                else:
                    self._buffer += data[start:end]
                    raw = bytes(self._buffer)
                    self._buffer.clear()
                    if raw.endswith(b"\r"):
                        raw = raw[:-1]
                    if len(raw) > self.max_line_bytes:
                        overflow = True
                    else:
                        lines.append(raw.decode("utf-8", errors="replace"))
            elif len(self._buffer) + (end - start) > self.max_line_bytes + 1:
                self._buffer.clear()  # never hold more than one line's worth
                self._discarding = True
                overflow = True
            else:
                self._buffer += data[start:end]
            if newline < 0:
                break
            start = newline + 1
        if overflow:
            raise ProtocolError(
                f"line longer than {self.max_line_bytes} bytes (the rest of it is discarded)",
                lines=lines,
            )
        return lines

    def close(self) -> str | None:
        """The unterminated last line at EOF, if there is one; resets the splitter."""
        raw = bytes(self._buffer)
        discarding = self._discarding
        self._buffer.clear()
        self._discarding = False
        if discarding or not raw:
            return None
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if len(raw) > self.max_line_bytes:
            raise ProtocolError(f"line longer than {self.max_line_bytes} bytes")
        return raw.decode("utf-8", errors="replace")

    @property
    def buffered(self) -> int:
        """Bytes of the incomplete line held so far."""
        return len(self._buffer)
