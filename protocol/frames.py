"""The frames of the wire (specs/wire.md §Frames) and their encoding, with the limits.

A frame is a 4-byte big-endian length (:data:`LENGTH_PREFIX`) and a msgpack map
(``kind`` and the kind's fields); each kind is a frozen :class:`Frame`
subclass whose dataclass fields are its fields.  :func:`decode_body` turns a
frame's body into a :class:`Frame`, checking every field (type, length,
range) and raising :class:`WireError` at the first fault; :func:`encode_frame`
turns a frame into bytes, raising :class:`LocalWireError` for one over
:data:`MAX_FRAME_BYTES`.  The named limits of ``specs/wire.md`` §Limits live
here, each with its reason; the order of frames is :mod:`protocol.wire`'s.
No I/O.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import msgpack  # type: ignore[import-untyped]  # msgpack ships no type hints

from .limits import MAX_LINE_BYTES

# --------------------------------------------------------------------------
# Limits (specs/wire.md §Limits: each with its reason)
# --------------------------------------------------------------------------

#: The wire version this code speaks, in the first frame of each side.
WIRE_VERSION = 1

#: Bytes of a frame beyond the engine line it carries: the map, its keys and
#: the string headers of up to :data:`MAX_LINES_PER_FRAME` lines (5 bytes each).
FRAME_OVERHEAD = 8 << 10
#: Largest frame body: one engine line at the protocol's limit and its frame.
MAX_FRAME_BYTES = MAX_LINE_BYTES + FRAME_OVERHEAD
#: Most lines in one ``lines`` frame (their headers fit in the overhead).
MAX_LINES_PER_FRAME = 1024
#: Size of the length prefix.
PREFIX_BYTES = 4

#: Seconds from accept to the ``hello`` (TLS handshake included).
HANDSHAKE_TIMEOUT = 10.0
#: Seconds without sending anything after which a side sends a heartbeat.
HEARTBEAT_INTERVAL = 5.0
#: Seconds without receiving anything after which the peer counts as gone.
IDLE_TIMEOUT = 20.0
#: Seconds between clock-sync round trips while a game is going on.
SYNC_INTERVAL = 2.0

#: Connections a server holds in all (below the default 1024 open files).
MAX_CONNECTIONS = 768
#: Connections one token may hold at once, counted from the hello.
MAX_CONNECTIONS_PER_TOKEN = 8
#: Connections one source (an IPv4 address, an IPv6 /64) may hold before their
#: hello is answered: a host starting four tokens' engines at once fits; silent
#: sockets from one source fill 32 slots of :data:`MAX_CONNECTIONS`, not all.
MAX_UNANSWERED_PER_SOURCE = 32
#: The IPv6 prefix that counts as one source: one subscriber's network is a
#: /64, and its owner has every address in it.
SOURCE_PREFIX_V6 = 64

#: Bytes the socket code reads at a time.
READ_CHUNK = 64 << 10
#: Most bytes a connection's decoder holds: one incomplete frame and one read.
MAX_RECEIVE_BUFFER = PREFIX_BYTES + MAX_FRAME_BYTES + READ_CHUNK
#: Most bytes queued for a peer that does not read before its connection closes.
MAX_SEND_BUFFER = 4 << 20

#: Sustained frames per second read from one connection, and the burst.
MAX_FRAMES_PER_SECOND = 1000
FRAME_BURST = 2000

#: Longest engine or token name (tables, PGN tags, file names).
MAX_NAME_CHARS = 64
#: Longest token (``NAME.SECRET``: 64 + 1 + 43, with room).
MAX_TOKEN_CHARS = 128
#: Longest session or game identifier (the server makes them).
MAX_ID_CHARS = 64
#: Longest free text: the engine's id, a reason, a detail, a result.
MAX_TEXT_CHARS = 1024

#: Failed hellos from one source within the window before the server slows down,
#: the window (seconds) and the time between two token checks of that source
#: from then on, across all its connections (a mistyped token is retried a few
#: times; a guesser gets one try per AUTH_FAILURE_DELAY).
AUTH_FAILURES_FREE = 5
AUTH_FAILURE_WINDOW = 60.0
AUTH_FAILURE_DELAY = 2.0
#: The longest a hello waits for its source's turn (seconds); one whose turn is
#: further off is refused at once, its token unchecked.  Half the client's
#: patience for an answer (:data:`HANDSHAKE_TIMEOUT`), so that a queued honest
#: hello is answered before its client gives up.
AUTH_WAIT_LIMIT = HANDSHAKE_TIMEOUT / 2
#: How long a connection turned away unchecked (its source's limits:
#: ``source-full``, ``throttled``) waits for its answer (seconds), unless the
#: server needs its slot first: a source that opens connections as fast as they
#: are answered gets one answer per connection per AUTH_FAILURE_DELAY, at the
#: cost of a sleeping task each, not of a refusal each at its own pace.
TURN_AWAY_DELAY = AUTH_FAILURE_DELAY

#: a frame's length, before its body
LENGTH_PREFIX = struct.Struct(">I")


class WireError(Exception):
    """The peer broke the wire (``reason``: why its connection closes)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class LocalWireError(Exception):
    """This side tried to send a frame the wire does not allow now (a bug)."""


# --------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------

#: what a field's value must be: its Python type and, for strings, the
#: longest value (None: any length up to the frame's)
_Str = tuple[type, int | None]


def _text(limit: int) -> _Str:
    return (str, limit)


_INT: _Str = (int, None)
_BOOL: _Str = (bool, None)
_LINES: _Str = (list, None)


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame; each kind is a subclass whose dataclass fields are its fields."""

    KIND: ClassVar[str] = ""
    #: the field rules of the kind, by name
    RULES: ClassVar[dict[str, _Str]] = {}
    #: fields that may be left out (their default stands)
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    def to_map(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.KIND}
        optional = self.OPTIONAL
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if not (value is None and name in optional):
                out[name] = value
        return out


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """The dataclass fields of a frame kind, looked up once."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


@dataclass(frozen=True, slots=True)
class Hello(Frame):
    KIND: ClassVar[str] = "hello"
    RULES: ClassVar[dict[str, _Str]] = {
        "version": _INT, "token": _text(MAX_TOKEN_CHARS), "name": _text(MAX_NAME_CHARS),
        "engine": _text(MAX_TEXT_CHARS), "session": _text(MAX_ID_CHARS)}
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"session"})
    version: int
    token: str = field(repr=False)  # never in a log line
    name: str
    engine: str
    session: str | None = None


@dataclass(frozen=True, slots=True)
class Welcome(Frame):
    KIND: ClassVar[str] = "welcome"
    RULES: ClassVar[dict[str, _Str]] = {"version": _INT, "session": _text(MAX_ID_CHARS),
                                        "heartbeat": _INT, "resumed": _BOOL}
    version: int
    session: str
    heartbeat: int  # ms
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class Refusal(Frame):
    KIND: ClassVar[str] = "refusal"
    RULES: ClassVar[dict[str, _Str]] = {"reason": _text(MAX_TEXT_CHARS)}
    reason: str


@dataclass(frozen=True, slots=True)
class Lines(Frame):
    KIND: ClassVar[str] = "lines"
    RULES: ClassVar[dict[str, _Str]] = {"lines": _LINES, "think": _INT}
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"think"})
    lines: list[str]
    think: int | None = None  # ms, client only


@dataclass(frozen=True, slots=True)
class Eof(Frame):
    KIND: ClassVar[str] = "eof"
    RULES: ClassVar[dict[str, _Str]] = {"reason": _text(16), "detail": _text(MAX_TEXT_CHARS)}
    REASONS: ClassVar[frozenset[str]] = frozenset({"closed", "overlong"})
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class Heartbeat(Frame):
    KIND: ClassVar[str] = "heartbeat"


@dataclass(frozen=True, slots=True)
class Sync(Frame):
    KIND: ClassVar[str] = "sync"
    RULES: ClassVar[dict[str, _Str]] = {"seq": _INT}
    seq: int


@dataclass(frozen=True, slots=True)
class GameOver(Frame):
    KIND: ClassVar[str] = "game_over"
    RULES: ClassVar[dict[str, _Str]] = {
        "game": _text(MAX_ID_CHARS), "result": _text(MAX_TEXT_CHARS),
        "termination": _text(MAX_TEXT_CHARS), "detail": _text(MAX_TEXT_CHARS)}
    game: str
    result: str
    termination: str
    detail: str


@dataclass(frozen=True, slots=True)
class Resume(Frame):
    KIND: ClassVar[str] = "resume"
    RULES: ClassVar[dict[str, _Str]] = {"game": _text(MAX_ID_CHARS), "ply": _INT}
    game: str
    ply: int


@dataclass(frozen=True, slots=True)
class Close(Frame):
    KIND: ClassVar[str] = "close"
    RULES: ClassVar[dict[str, _Str]] = {"reason": _text(MAX_TEXT_CHARS)}
    reason: str


KINDS: dict[str, type[Frame]] = {cls.KIND: cls for cls in (
    Hello, Welcome, Refusal, Lines, Eof, Heartbeat, Sync, GameOver, Resume, Close)}

#: largest integer a field takes (msgpack's signed 64-bit range, and a bound on
#: what a millisecond count or a sequence number can honestly be)
_MAX_INT = (1 << 63) - 1


def _check_value(kind: str, name: str, value: Any, rule: _Str) -> None:
    want, limit = rule
    if type(value) is not want:  # exact: a bool is no int, a str subclass no str
        raise WireError(f"{kind}: field {name!r} must be {want.__name__}, "
                        f"got {type(value).__name__}")
    if type(value) is int and not 0 <= value <= _MAX_INT:
        raise WireError(f"{kind}: field {name!r} out of range")
    if limit is not None and isinstance(value, str) and len(value) > limit:
        raise WireError(f"{kind}: field {name!r} over {limit} characters")


def _check_lines(lines: list[Any]) -> None:
    if not lines:
        raise WireError("lines: no line")
    if len(lines) > MAX_LINES_PER_FRAME:
        raise WireError(f"lines: over {MAX_LINES_PER_FRAME} lines in one frame")
    total = 0
    for line in lines:
        if type(line) is not str:
            raise WireError(f"lines: a line must be str, got {type(line).__name__}")
        if "\n" in line:
            raise WireError("lines: a line holds a line feed")
        total += len(line)  # characters <= bytes: a cheap first bound
    if total > MAX_LINE_BYTES and sum(len(line.encode()) for line in lines) > MAX_LINE_BYTES:
        raise WireError(f"lines: over {MAX_LINE_BYTES} bytes of lines in one frame")


def frame_from_map(value: Any) -> Frame:
    """The frame a decoded msgpack value stands for, every field checked."""
    if type(value) is not dict:
        raise WireError(f"a frame must be a map, got {type(value).__name__}")
    kind = value.get("kind")
    if kind == "lines" and type(lines := value.get("lines")) is list:
        # the usual frame, checked without the general loop (the same rules)
        think = value.get("think")
        if len(value) == 2 or (len(value) == 3 and type(think) is int
                               and 0 <= think <= _MAX_INT):
            _check_lines(lines)
            return Lines(lines, think)
    if type(kind) is not str:
        raise WireError("a frame without a kind")
    cls = KINDS.get(kind)
    if cls is None:
        raise WireError(f"unknown frame kind {kind[:MAX_NAME_CHARS]!r}")
    values = {name: item for name, item in value.items() if name != "kind"}
    for name, item in values.items():
        rule = cls.RULES.get(name)
        if rule is None:
            raise WireError(f"{kind}: unknown field {str(name)[:MAX_NAME_CHARS]!r}")
        _check_value(kind, name, item, rule)
    missing = set(cls.RULES) - set(values) - cls.OPTIONAL
    if missing:
        raise WireError(f"{kind}: missing field {sorted(missing)[0]!r}")
    if cls is Lines:
        _check_lines(values["lines"])
    elif cls is Eof and values["reason"] not in Eof.REASONS:
        raise WireError(f"eof: unknown reason {values['reason']!r}")
    return cls(**values)


def decode_body(body: bytes | bytearray | memoryview) -> Frame:
    """The frame of one body (the bytes after the length prefix)."""
    try:
        value = msgpack.unpackb(
            body, raw=False, strict_map_key=True, use_list=True,
            max_bin_len=0, max_ext_len=0, max_array_len=MAX_LINES_PER_FRAME,
            max_map_len=16, max_str_len=MAX_LINE_BYTES)
    except Exception as exc:  # msgpack raises many kinds (ExtraData, ValueError, ...)
        raise WireError(f"not one msgpack value ({type(exc).__name__})") from None
    return frame_from_map(value)


#: one packer for every frame (``packb`` would make one per call)
_PACKER = msgpack.Packer(use_bin_type=True)


def encode_frame(frame: Frame) -> bytes:
    """The bytes of ``frame``: length prefix and body."""
    if type(frame) is Lines and frame.think is None:
        body = _PACKER.pack({"kind": "lines", "lines": frame.lines})
    else:
        body = _PACKER.pack(frame.to_map())
    if len(body) > MAX_FRAME_BYTES:
        raise LocalWireError(f"{frame.KIND} frame of {len(body)} bytes over {MAX_FRAME_BYTES}")
    return LENGTH_PREFIX.pack(len(body)) + body


def lines_frames(lines: list[str], think: int | None = None) -> list[Lines]:
    """``lines`` cut into frames within the limits (``think`` on the last one).
    A line over :data:`~protocol.limits.MAX_LINE_BYTES` is the caller's to
    refuse before (``LineSplitter`` does)."""
    if len(lines) <= MAX_LINES_PER_FRAME and 4 * sum(map(len, lines)) <= MAX_LINE_BYTES:
        return [Lines(lines, think)]  # the usual case: a few short lines (4: UTF-8's widest)
    frames: list[Lines] = []
    chunk: list[str] = []
    size = 0
    for line in lines:
        length = len(line.encode())
        if chunk and (size + length > MAX_LINE_BYTES or len(chunk) == MAX_LINES_PER_FRAME):
            frames.append(Lines(chunk))
            chunk, size = [], 0
        chunk.append(line)
        size += length
    if chunk or not frames:
        frames.append(Lines(chunk, think))
    elif think is not None:
        frames[-1] = Lines(frames[-1].lines, think)
    return frames

