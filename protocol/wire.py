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

The module is the connection's state machine: :data:`TRANSITIONS` and
:class:`WireConnection`.  The frames and their encoding are
:mod:`protocol.frames` (with the named limits), the reasons a connection
ends :mod:`protocol.reasons`, the lag quota, frame budget and per-source
accounting :mod:`protocol.budgets`; their names are re-exported here, the
import path the callers have always used.
"""

from __future__ import annotations

import enum
from typing import NoReturn

from .budgets import (
    ESTIMATE_MOVES,
    QUOTA_GAIN_MAX,
    QUOTA_GAIN_MIN,
    QUOTA_GAIN_SHARE,
    QUOTA_MAX_GAINS,
    QUOTA_START_GAINS,
    FrameRate,
    LagQuota,
    source_key,
)
from .frames import (
    AUTH_FAILURE_DELAY,
    AUTH_FAILURE_WINDOW,
    AUTH_FAILURES_FREE,
    AUTH_WAIT_LIMIT,
    FRAME_BURST,
    FRAME_OVERHEAD,
    HANDSHAKE_TIMEOUT,
    HEARTBEAT_INTERVAL,
    IDLE_TIMEOUT,
    KINDS,
    LENGTH_PREFIX,
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_TOKEN,
    MAX_FRAME_BYTES,
    MAX_FRAMES_PER_SECOND,
    MAX_ID_CHARS,
    MAX_LINES_PER_FRAME,
    MAX_NAME_CHARS,
    MAX_RECEIVE_BUFFER,
    MAX_SEND_BUFFER,
    MAX_TEXT_CHARS,
    MAX_TOKEN_CHARS,
    MAX_UNANSWERED_PER_SOURCE,
    PREFIX_BYTES,
    READ_CHUNK,
    SOURCE_PREFIX_V6,
    SYNC_INTERVAL,
    TURN_AWAY_DELAY,
    WIRE_VERSION,
    Close,
    Eof,
    Frame,
    GameOver,
    Heartbeat,
    Hello,
    Lines,
    LocalWireError,
    Refusal,
    Resume,
    Sync,
    Welcome,
    WireError,
    decode_body,
    encode_frame,
    frame_from_map,
    lines_frames,
)
from .reasons import (
    BROKEN,
    FAULT,
    NAME,
    NAME_TAKEN,
    NO_HELLO,
    REASONS,
    RELEASED,
    SERVER_FULL,
    SOURCE_FULL,
    STOP,
    THROTTLED,
    TOKEN,
    TOKEN_FULL,
    VERSION,
    Reason,
    is_final,
    reason_of,
)

__all__ = [
    "WIRE_VERSION", "MAX_FRAME_BYTES", "WireError", "LocalWireError", "Role", "CLIENT",
    "SERVER", "WireState", "NEED_DATA", "TRANSITIONS", "next_state", "hello_problem", "Reason",
    "REASONS", "reason_of", "is_final", "source_key", "Frame", "Hello", "Welcome", "Refusal",
    "Lines", "Eof", "Heartbeat", "Sync", "GameOver", "Resume", "Close", "WireConnection",
    "encode_frame", "decode_body", "lines_frames", "LagQuota", "FrameRate",
    # the frames, limits, reasons and budgets, re-exported from their modules
    "FRAME_OVERHEAD", "MAX_LINES_PER_FRAME", "PREFIX_BYTES", "HANDSHAKE_TIMEOUT",
    "HEARTBEAT_INTERVAL", "IDLE_TIMEOUT", "SYNC_INTERVAL", "MAX_CONNECTIONS",
    "MAX_CONNECTIONS_PER_TOKEN", "MAX_UNANSWERED_PER_SOURCE", "SOURCE_PREFIX_V6", "READ_CHUNK",
    "MAX_RECEIVE_BUFFER", "MAX_SEND_BUFFER", "MAX_FRAMES_PER_SECOND", "FRAME_BURST",
    "MAX_NAME_CHARS", "MAX_TOKEN_CHARS", "MAX_ID_CHARS", "MAX_TEXT_CHARS", "AUTH_FAILURES_FREE",
    "AUTH_FAILURE_WINDOW", "AUTH_FAILURE_DELAY", "AUTH_WAIT_LIMIT", "TURN_AWAY_DELAY",
    "LENGTH_PREFIX", "KINDS", "frame_from_map", "VERSION", "TOKEN", "NAME", "BROKEN", "STOP",
    "NAME_TAKEN", "TOKEN_FULL", "SERVER_FULL", "SOURCE_FULL", "THROTTLED", "NO_HELLO", "FAULT",
    "RELEASED", "ESTIMATE_MOVES", "QUOTA_GAIN_SHARE", "QUOTA_GAIN_MIN", "QUOTA_GAIN_MAX",
    "QUOTA_START_GAINS", "QUOTA_MAX_GAINS",
]



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
        (size,) = LENGTH_PREFIX.unpack_from(buffer)
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
