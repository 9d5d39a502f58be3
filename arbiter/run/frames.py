"""The pipe between a run and its worker processes, as pure code
(``specs/tournament.md`` §Worker processes).

Each frame is a msgpack map with a ``kind``, preceded by its length (4 bytes,
big-endian).  The run writes to a worker's standard input, the worker to its
standard output; its standard error is the run's to read when it is lost.

The run sends ``hello`` (the match settings, the engines, the slots, where
I/O logs go), then ``play`` (a batch: its number and game pairs), ``drain``
(begin no further pair) and ``stop`` (end every game now, then exit; so does
the end of its input).  The worker sends ``ready``, then per game
``started``, ``game`` (the record: :func:`arbiter.cluster.task.result_game`),
``event`` and ``build``, per batch ``done``, and every
:data:`arbiter.live.LIVE_INTERVAL` the plies of its games in progress
(``live``).
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack  # type: ignore[import-untyped]  # msgpack ships no type hints

__all__ = ["FrameError", "FrameReader", "encode", "MAX_FRAME", "KINDS_TO_WORKER", "KINDS_FROM_WORKER"]

#: Most bytes in one frame.  The largest frames are a game's record (every
#: ply with its bounded info: some hundred kilobytes for a long game with
#: long principal variations) and a batch of 16 pairs with their openings;
#: a frame this large is a broken peer, and reading it would hold its bytes.
MAX_FRAME = 16 * 1024 * 1024

_LENGTH = struct.Struct(">I")

KINDS_TO_WORKER = frozenset({"hello", "play", "drain", "stop"})
KINDS_FROM_WORKER = frozenset({"ready", "started", "game", "event", "build", "done", "live", "failed"})


class FrameError(Exception):
    """Bytes that are not a frame (the message says where they went wrong)."""


def encode(kind: str, **fields: Any) -> bytes:
    """One frame of ``kind`` with ``fields``."""
    body = msgpack.packb({"kind": kind, **fields}, use_bin_type=True)
    if len(body) > MAX_FRAME:
        raise FrameError(f"a {kind} frame of {len(body)} bytes is over the limit of {MAX_FRAME}")
    return _LENGTH.pack(len(body)) + body


class FrameReader:
    """Frames out of a byte stream: :meth:`feed` what was read, get the
    whole frames it completed (each a dict with a ``kind`` of ``kinds``)."""

    def __init__(self, kinds: frozenset[str]):
        self.kinds = kinds
        self._buffer = bytearray()

    def feed(self, data: bytes | bytearray) -> list[dict[str, Any]]:
        self._buffer += data
        frames = []
        while len(self._buffer) >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(self._buffer)
            if length > MAX_FRAME:
                raise FrameError(f"a frame of {length} bytes announced, over the limit of {MAX_FRAME}")
            end = _LENGTH.size + length
            if len(self._buffer) < end:
                break
            body = bytes(self._buffer[_LENGTH.size:end])
            del self._buffer[:end]
            try:
                frame = msgpack.unpackb(body, raw=False, strict_map_key=True)
            except (ValueError, msgpack.UnpackException) as exc:
                raise FrameError(f"a frame that is not msgpack ({exc})") from None
            if not isinstance(frame, dict) or frame.get("kind") not in self.kinds:
                kind = frame.get("kind") if isinstance(frame, dict) else type(frame).__name__
                raise FrameError(f"an unknown frame ({kind!r})")
            frames.append(frame)
        return frames

    @property
    def pending(self) -> int:
        """Bytes of a frame begun and not complete."""
        return len(self._buffer)
