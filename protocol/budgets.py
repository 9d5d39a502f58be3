"""What one peer may use of the server: clock lag, frames, and the source it counts under.

:class:`LagQuota` is the clock-fairness rule of ``specs/wire.md`` (pure
arithmetic, the Lichess model); :class:`FrameRate` the per-connection frame
budget (a token bucket); :func:`source_key` the source an address counts
under for the per-source limits.  No I/O, no clock of its own: the caller
passes the times.
"""

from __future__ import annotations

import ipaddress

from .frames import FRAME_BURST, MAX_FRAMES_PER_SECOND, SOURCE_PREFIX_V6


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
