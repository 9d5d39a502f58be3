"""The wire between a remote engine's client and the server (h11 style, no I/O).

``specs/wire.md`` is the contract; this module is its code.  A frame is a
4-byte big-endian length and a msgpack map (``kind`` and the kind's fields);
:class:`WireConnection` is one side of one connection::

    conn = WireConnection(SERVER)
    conn.receive_data(chunk)            # bytes read from the socket (b"": it ended)
    event = conn.next_event()           # a frame, or NEED_DATA
    data = conn.send(Welcome(...))      # bytes to write

The connection checks every frame it receives (size, encoding, fields, order
for its role and state) and raises :class:`WireError` with the reason at the
first fault; from then on it is in the ``ERROR`` state and raises the same
error again.  A frame the local side may not send raises
:class:`LocalWireError` (a bug of the caller).  Sockets, clocks, tasks and
timeouts are the caller's business; the limits they enforce are here, named.

:class:`LagQuota` is the clock-fairness rule of the spec (pure arithmetic);
:class:`FrameRate` the per-connection frame budget.
"""

from __future__ import annotations

import enum
import ipaddress
import struct
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, NoReturn

import msgpack  # type: ignore[import-untyped]  # msgpack ships no type hints

from .limits import MAX_LINE_BYTES

__all__ = [
    "WIRE_VERSION", "MAX_FRAME_BYTES", "WireError", "LocalWireError", "Role", "CLIENT", "SERVER",
    "WireState", "NEED_DATA", "TRANSITIONS", "next_state", "hello_problem", "Reason", "REASONS",
    "reason_of", "is_final", "source_key", "Frame", "Hello", "Welcome", "Refusal", "Lines", "Eof",
    "Heartbeat", "Sync", "GameOver", "Resume", "Close", "WireConnection", "encode_frame",
    "decode_body", "lines_frames", "LagQuota", "FrameRate",
]

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

_PREFIX = struct.Struct(">I")


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
    return _PREFIX.pack(len(body)) + body


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


# --------------------------------------------------------------------------
# The connection's states, as data
# --------------------------------------------------------------------------


class Role(enum.Enum):
    CLIENT = "client"
    SERVER = "server"


CLIENT, SERVER = Role.CLIENT, Role.SERVER


class WireState(enum.Enum):
    HELLO = "hello"  # the start: no hello yet
    AUTHENTICATING = "authenticating"  # the hello went; its answer has not
    OPEN = "open"  # welcomed: lines both ways
    CLOSED = "closed"  # a close or a refusal went either way
    ERROR = "error"  # the peer broke the wire (seen by the receiving side)


class _NeedData(enum.Enum):
    NEED_DATA = "need data"


#: what :meth:`WireConnection.next_event` returns when no whole frame is buffered
NEED_DATA = _NeedData.NEED_DATA

_S = WireState

#: (role that sends, state) -> {kind: next state}: the table of
#: ``specs/wire.md`` §States, the same on both sides of a connection (each
#: side moves on what it sends and on what it receives).  ``close`` is
#: allowed in every state but CLOSED and is not in the table (from ERROR:
#: the side that found the peer's fault says why).
TRANSITIONS: dict[tuple[Role, WireState], dict[str, WireState]] = {
    (CLIENT, _S.HELLO): {"hello": _S.AUTHENTICATING},
    (SERVER, _S.AUTHENTICATING): {"welcome": _S.OPEN, "refusal": _S.CLOSED},
    (CLIENT, _S.OPEN): {"lines": _S.OPEN, "eof": _S.OPEN, "heartbeat": _S.OPEN,
                        "sync": _S.OPEN},
    (SERVER, _S.OPEN): {"lines": _S.OPEN, "heartbeat": _S.OPEN, "sync": _S.OPEN,
                        "game_over": _S.OPEN, "resume": _S.OPEN},
}


def next_state(sender: Role, state: WireState, kind: str) -> WireState | None:
    """The state after ``sender`` sends ``kind`` in ``state``; None: not allowed."""
    if kind == "close":
        return _S.CLOSED if state is not _S.CLOSED else None
    return TRANSITIONS.get((sender, state), {}).get(kind)


def hello_problem(hello: Hello) -> str | None:
    """Why a server refuses ``hello`` before looking at its token (None: it
    does not): a version this code does not speak."""
    if hello.version != WIRE_VERSION:
        return VERSION.text(f"{hello.version} is not supported; this server speaks {WIRE_VERSION}")
    return None


# --------------------------------------------------------------------------
# Why a connection ends: the reasons, as data (specs/wire.md §Reasons)
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason a server gives in a ``refusal`` or a ``close``: its name
    (for logs and the spec), the words its text begins with, and whether it
    is **final** (the client ends: trying again cannot help) or not (the
    client tries again with its backoff).  The reason travels as its text
    (the frames are those of version 1): :func:`reason_of` reads it back."""

    name: str
    opening: str
    final: bool

    def text(self, detail: str = "") -> str:
        """The reason's text: its opening, then ``detail`` (within the field's limit)."""
        return (self.opening + detail)[:MAX_TEXT_CHARS]

    def says(self, text: str) -> bool:
        return text.startswith(self.opening)


#: final: the client's own setting is wrong; it would be refused again
VERSION = Reason("version", "wire version ", True)
TOKEN = Reason("token", "unknown or revoked token", True)
NAME = Reason("name", "engine name ", True)
BROKEN = Reason("broken", "broke the wire: ", True)
STOP = Reason("stop", "the server stops", True)
#: not final: a limit full now, a timeout, the engine's fault, the server's choice
NAME_TAKEN = Reason("name-taken", "an engine named ", False)
TOKEN_FULL = Reason("token-full", "the token ", False)
SERVER_FULL = Reason("server-full", "the server holds ", False)
SOURCE_FULL = Reason("source-full", "too many unanswered connections from ", False)
THROTTLED = Reason("throttled", "too many failed hellos from ", False)
NO_HELLO = Reason("no-hello", "no hello in time", False)
FAULT = Reason("fault", "engine fault: ", False)
RELEASED = Reason("released", "the server closed the connection", False)

#: every reason a server gives; no opening begins another, so a text has one reason
REASONS: tuple[Reason, ...] = (VERSION, TOKEN, NAME, BROKEN, STOP, NAME_TAKEN, TOKEN_FULL,
                               SERVER_FULL, SOURCE_FULL, THROTTLED, NO_HELLO, FAULT, RELEASED)


def reason_of(text: str) -> Reason | None:
    """The reason a ``refusal``'s or ``close``'s text gives (None: none of
    :data:`REASONS`: an older or newer server's, or a client's)."""
    for reason in REASONS:
        if reason.says(text):
            return reason
    return None


def is_final(text: str) -> bool:
    """Whether a client ends for a server's ``refusal`` or ``close`` with
    this text: a final reason, or one it does not know (as every reason was
    before the set was stated; trying again is the exception)."""
    reason = reason_of(text)
    return reason is None or reason.final


def source_key(address: str) -> str:
    """The source an address counts under for the per-source limits: an IPv4
    address itself, an IPv6 address its /:data:`SOURCE_PREFIX_V6` network
    (an IPv4-mapped one its IPv4 address); anything else as it is."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/{SOURCE_PREFIX_V6}", strict=False))
    return str(parsed)


class WireConnection:
    """One side (``role``) of one connection: frames out as bytes, bytes in
    as frames, every frame checked against the state (specs/wire.md)."""

    def __init__(self, role: Role):
        self.role = role
        self.peer = SERVER if role is CLIENT else CLIENT
        self.state = _S.HELLO
        #: the reason of the peer's fault once in ERROR
        self.error: str | None = None
        #: the welcome said the session was taken back
        self.resumed = False
        #: the client's engine output has ended (an eof went)
        self.eof = False
        self._sync: int | None = None  # the sync sent (server) or to answer (client)
        self._buffer = bytearray()
        self._ended = False  # receive_data(b"") came
        # TRANSITIONS' rows for the current state, by sender (looked up again
        # when the state changes: a lookup keyed by enums costs two Python calls)
        self._rows_state: WireState | None = None
        self._rows: dict[Role, dict[str, WireState]] = {}

    def _next(self, sender: Role, kind: str) -> WireState | None:
        """:func:`next_state` for this connection's state."""
        state = self.state
        if kind == "close":
            return _S.CLOSED if state is not _S.CLOSED else None
        if state is not self._rows_state:
            self._rows_state = state
            self._rows = {role: TRANSITIONS.get((role, state), {}) for role in (CLIENT, SERVER)}
        return self._rows[sender].get(kind)

    # -- sending -------------------------------------------------------------

    def send(self, frame: Frame) -> bytes:
        """The bytes of ``frame``, which this side may send now; the state
        moves on.  Raises :class:`LocalWireError` if it may not."""
        if type(frame) is Lines and self.state is _S.OPEN and (
                not self.eof if self.role is CLIENT else frame.think is None):
            return encode_frame(frame)  # the usual frame: OPEN to OPEN, no order rule broken
        after = self._next(self.role, frame.KIND)
        if after is None:
            raise LocalWireError(f"{self.role.value} may not send {frame.KIND} "
                                 f"in state {self.state.value}")
        problem = self._order_problem(self.role, frame)
        if problem is not None:
            raise LocalWireError(problem)
        data = encode_frame(frame)
        self._moved(self.role, frame, after)
        return data

    # -- receiving -----------------------------------------------------------

    def receive_data(self, data: bytes | bytearray) -> None:
        """Bytes read from the peer; ``b""``: its stream ended."""
        if not data:
            self._ended = True
            return
        if len(self._buffer) + len(data) > MAX_RECEIVE_BUFFER:
            self._fail(f"over {MAX_RECEIVE_BUFFER} bytes buffered")
        self._buffer += data

    def next_event(self) -> Frame | _NeedData:
        """The next frame received, checked, or :data:`NEED_DATA`.  Raises
        :class:`WireError` at the peer's first fault (and again after it);
        a stream that ends outside CLOSED, or inside a frame, is one."""
        if self.error is not None:
            raise WireError(self.error)
        buffer = self._buffer
        if len(buffer) < PREFIX_BYTES:
            return self._need(bool(buffer))
        (size,) = _PREFIX.unpack_from(buffer)
        if size == 0:
            self._fail("an empty frame")
        if size > MAX_FRAME_BYTES:  # before a byte of the body is kept
            self._fail(f"a frame of {size} bytes is over the limit of {MAX_FRAME_BYTES}")
        if len(buffer) < PREFIX_BYTES + size:
            return self._need(True)
        body = bytes(buffer[PREFIX_BYTES:PREFIX_BYTES + size])
        del buffer[:PREFIX_BYTES + size]
        try:
            frame = decode_body(body)
        except WireError as exc:
            self._fail(exc.reason)
        if type(frame) is Lines and self.state is _S.OPEN and (
                not self.eof if self.peer is CLIENT else frame.think is None):
            return frame  # the usual frame: OPEN to OPEN, no order rule broken
        self._receive(frame)
        return frame

    def _need(self, partial: bool) -> _NeedData:
        if self._ended and self.state is not _S.CLOSED:
            self._fail("the connection ended inside a frame" if partial
                       else "the connection ended without a close")
        return NEED_DATA

    def _receive(self, frame: Frame) -> None:
        after = self._next(self.peer, frame.KIND)
        if after is None:
            self._fail(f"{frame.KIND} from the {self.peer.value} is out of order "
                       f"in state {self.state.value}")
        problem = self._order_problem(self.peer, frame)
        if problem is not None:
            self._fail(problem)
        if isinstance(frame, Welcome) and frame.version != WIRE_VERSION:
            self._fail(f"the server speaks wire version {frame.version}, "
                       f"this client {WIRE_VERSION}")
        self._moved(self.peer, frame, after)

    def _fail(self, reason: str) -> NoReturn:
        self.state = _S.ERROR
        self.error = reason
        self._buffer.clear()
        raise WireError(reason)

    # -- the order rules beyond the table ------------------------------------

    def _order_problem(self, sender: Role, frame: Frame) -> str | None:
        """Why ``frame`` from ``sender`` breaks an order rule of the open
        state (sync, eof, resume), or None."""
        if type(frame) is Lines:  # the usual frame first
            if sender is CLIENT:
                return "lines after the engine's eof" if self.eof else None
            return "think is the client's field" if frame.think is not None else None
        if isinstance(frame, Sync):
            if sender is SERVER and self._sync is not None:
                return "a sync while another is outstanding"
            if sender is CLIENT and self._sync != frame.seq:
                return f"a sync answer {frame.seq} to no sync sent"
        elif isinstance(frame, Lines | Eof) and sender is CLIENT and self.eof:
            return f"{frame.KIND} after the engine's eof"
        elif isinstance(frame, Lines) and sender is SERVER and frame.think is not None:
            return "think is the client's field"
        elif isinstance(frame, Resume) and not self.resumed:
            return "resume on a session that was not resumed"
        return None

    def _moved(self, sender: Role, frame: Frame, after: WireState) -> None:
        self.state = after
        if type(frame) is Lines:
            return
        if isinstance(frame, Sync):
            self._sync = frame.seq if sender is SERVER else None
        elif isinstance(frame, Eof):
            self.eof = True
        elif isinstance(frame, Welcome):
            self.resumed = frame.resumed


# --------------------------------------------------------------------------
# Clock fairness and the frame budget (specs/wire.md)
# --------------------------------------------------------------------------

#: Estimated moves of a game, to turn a time control into a game length.
ESTIMATE_MOVES = 40
#: The quota's gain per move: this share of the estimated game length ...
QUOTA_GAIN_SHARE = 1 / 200
#: ... bounded by a LAN round trip below and a continental one above (seconds).
QUOTA_GAIN_MIN = 0.020
QUOTA_GAIN_MAX = 0.100
#: The quota at the start (connection warm-up) and its cap, in gains.
QUOTA_START_GAINS = 3
QUOTA_MAX_GAINS = 7


class LagQuota:
    """One player's lag quota in one game (seconds), the Lichess model:
    each move is compensated for its lag at most by the quota, which each
    move refills by ``gain`` up to ``quota_max``."""

    def __init__(self, base: float, increment: float):
        estimate = base + ESTIMATE_MOVES * increment
        self.gain = min(max(estimate * QUOTA_GAIN_SHARE, QUOTA_GAIN_MIN), QUOTA_GAIN_MAX)
        self.quota_max = QUOTA_MAX_GAINS * self.gain
        self.quota = QUOTA_START_GAINS * self.gain

    def charge(self, elapsed: float, think: float | None) -> tuple[float, float]:
        """``(charged, compensation)`` of a move the server measured as
        ``elapsed`` and the client reported as ``think`` (None: no report,
        no lag); the quota moves on."""
        reported = elapsed if think is None else min(max(think, 0.0), elapsed)
        comp = min(elapsed - reported, self.quota)
        self.quota = min(self.quota - comp + self.gain, self.quota_max)
        return elapsed - comp, comp


class FrameRate:
    """A token bucket of frames for one connection: :meth:`wait` says how
    long to wait before reading the next frame (0: at once)."""

    def __init__(self, rate: float = MAX_FRAMES_PER_SECOND, burst: float = FRAME_BURST):
        self.rate = rate
        self.burst = burst
        self._tokens = burst
        self._time: float | None = None

    def wait(self, now: float) -> float:
        """Take a frame at ``now`` (seconds, any monotonic clock); the
        seconds to wait before reading it."""
        if self._time is not None:
            self._tokens = min(self.burst, self._tokens + (now - self._time) * self.rate)
        self._time = now
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate
