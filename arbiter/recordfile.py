"""Record files on disk, read in bounded memory (``specs/records.md`` §5, §8).

A record file is read line by line from its bytes, one block at a time, so
that ``replay``, ``show`` and ``import`` hold one game's lines at a time,
whatever the file's size: :func:`check_file` says whether a path can be read
at all, :func:`file_lines` gives its lines (a line over the limit as a
:class:`~arbiter.pgn.LongLine`, never kept), :func:`file_games` its games
(PGN-like or JSONL, a broken one as its error).  Every problem of the file
itself is a :class:`RecordFileError` whose message names the file (and the
line, for text that is not UTF-8).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from typing import Any

from arbiter.pgn import MAX_RECORD_LINE_CHARS, Line, LongLine, ParsedGame, RecordSyntaxError
from arbiter.record_jsonl import MAX_JSONL_LINE_CHARS, iter_jsonl

__all__ = ["RecordFileError", "check_file", "file_lines", "is_jsonl", "file_games"]

#: Bytes read from the file at a time: large enough that reading costs
#: little per call, small next to one game's lines.
READ_BLOCK_BYTES = 1 << 16

#: UTF-8 takes at most 4 bytes a character: a line of more bytes than this
#: times its limit in characters is over the limit whatever it holds.
UTF8_MAX_BYTES = 4

_PGN_BREAK = re.compile(rb"\r\n?|\n")  # CRLF, CR and LF (specs/records.md §2)
_JSONL_BREAK = re.compile(rb"\n")  # LF only: the JSON text itself may hold other breaks


class RecordFileError(ValueError):
    """A record file that cannot be read: the message says which and why."""


def check_file(path: str) -> None:
    """RecordFileError unless ``path`` is a regular file one can open (a
    device or a pipe is refused: an import reads its file twice)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise RecordFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise RecordFileError(f"{path}: cannot read: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise RecordFileError(f"{path}: is a directory, not a record file")
    if not stat.S_ISREG(info.st_mode):
        raise RecordFileError(
            f"{path}: not a regular file (a device, pipe or socket cannot be a record file)")


def file_lines(path: str, limit: int, *, jsonl: bool = False, hasher: Any = None,
               block: int = READ_BLOCK_BYTES) -> Iterator[Line]:
    """The file's lines, decoded, without their breaks (LF only for JSONL,
    else CRLF, CR or LF); a line over ``limit`` characters as a
    :class:`LongLine`, after which reading goes on.  ``hasher`` (a hashlib
    object), when given, sees every byte of the file; ``block``: bytes read
    at a time.  RecordFileError for text that is not UTF-8, naming its line
    and byte."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise RecordFileError(f"{path}: cannot read: {exc.strerror}") from None
    with handle:
        yield from _lines(handle, path, limit, _JSONL_BREAK if jsonl else _PGN_BREAK, hasher,
                          block)


def _lines(handle: Any, path: str, limit: int, breaks: re.Pattern[bytes],
           hasher: Any, block_size: int) -> Iterator[Line]:
    max_bytes = limit * UTF8_MAX_BYTES
    number, offset = 1, 0  # the next line's number, and the file offset of buffer[0]
    buffer, pos, eof = b"", 0, False
    long_chars: int | None = None  # characters so far of a line over the limit, dropped
    while True:
        match = breaks.search(buffer, pos)
        if match is not None and not eof and match.end() == len(buffer) \
                and buffer.endswith(b"\r"):
            match = None  # a CR at the end of what was read: its LF may come next
        if match is None and not eof:
            rest = buffer[pos:]
            if long_chars is None and len(rest) > max_bytes:
                long_chars = 0
            if long_chars is not None:  # drop what is read of a long line, keep a last CR
                keep = 1 if rest.endswith(b"\r") else 0
                long_chars += _characters(rest[: len(rest) - keep])
                offset += len(rest) - keep
                rest = rest[len(rest) - keep:]
            offset += pos
            block = _read(handle, path, block_size)
            if hasher is not None:
                hasher.update(block)
            eof = not block
            buffer, pos = rest + block, 0
            continue
        if match is None and pos == len(buffer) and long_chars is None:
            return  # the end, after a line break (or an empty file)
        end, after = (match.start(), match.end()) if match else (len(buffer), len(buffer))
        raw = buffer[pos:end]
        if long_chars is not None:
            yield LongLine(number, long_chars + _characters(raw))
            long_chars = None
        else:
            text = _decode(raw, path, number, offset + pos)
            yield LongLine(number, len(text)) if len(text) > limit else text
        number += 1
        pos = after
        if match is None:
            return


def _read(handle: Any, path: str, size: int) -> bytes:
    try:
        return handle.read(size)
    except OSError as exc:
        raise RecordFileError(f"{path}: cannot read: {exc.strerror}") from None


_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


def _characters(raw: bytes) -> int:
    """UTF-8 characters in ``raw``: the bytes that do not continue one."""
    return len(raw.translate(None, _CONTINUATION_BYTES))


def _decode(raw: bytes, path: str, number: int, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordFileError(f"{path}:{number}: not UTF-8 text ({exc.reason} at byte "
                              f"{offset + exc.start})") from None


def is_jsonl(path: str) -> bool:
    """A ``.jsonl`` file, or one whose first line that is not blank is a
    JSON object (a PGN-like file may start with a ``{comment}``, not with one
    that parses as JSON)."""
    if path.lower().endswith(".jsonl"):
        return True
    for line in file_lines(path, MAX_JSONL_LINE_CHARS, jsonl=True):
        if isinstance(line, LongLine):
            return False
        if line.strip():
            first = line.strip()
            if not first.startswith("{"):
                return False
            try:
                return isinstance(json.loads(first), dict)
            except ValueError:
                return False
    return False


def file_games(path: str, *, hasher: Any = None) -> Iterator[ParsedGame | RecordSyntaxError]:
    """Every game of a PGN-like or JSONL file, a broken one as its error,
    read in bounded memory (RecordFileError: the file cannot be read)."""
    from arbiter.pgn import iter_games

    check_file(path)
    if is_jsonl(path):
        return iter_jsonl(file_lines(path, MAX_JSONL_LINE_CHARS, jsonl=True, hasher=hasher), path)
    return iter_games(_until_long(file_lines(path, MAX_RECORD_LINE_CHARS, hasher=hasher)), path)


def _until_long(lines: Iterator[Line]) -> Iterator[Line]:
    """A PGN-like file is not read past its first line over the limit."""
    for line in lines:
        yield line
        if isinstance(line, LongLine):
            return
