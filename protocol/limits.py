"""Numeric limits of the protocol, each with the reason for its value.

Both sides use them: the codec refuses what exceeds them, the arbiter
bounds its memory with them, and ``specs/protocol.md`` states them for
engine authors.
"""

from __future__ import annotations

#: Longest accepted line, in bytes, not counting the LF (or CRLF).  The longest
#: honest line is ``position ... moves ...`` of a long game: a few thousand
#: plies of at most ~10 bytes each is well under 100 KiB, and an honest
#: ``info pv`` is far shorter.  1 MiB leaves an order of magnitude of headroom
#: while bounding what a flooding engine (one that never writes a newline)
#: can make the arbiter buffer.
MAX_LINE_BYTES = 1 << 20

#: Largest integer accepted in any numeric field (times, depths, nodes, option
#: values): a signed 64-bit integer, what engines in C, C++, Rust or Go can
#: hold.  Also keeps Python's int() away from million-digit strings.
MAX_INT = (1 << 63) - 1

#: Smallest integer accepted (only clock fields and scores may be negative).
MIN_INT = -(1 << 63)

#: Most ``option`` declarations accepted in one handshake.  Real engines
#: declare a few dozen; the cap stops a misbehaving engine from growing the
#: arbiter's option table without bound.
MAX_OPTIONS = 256

#: Most ``var`` values of one combo option (a game list has four).
MAX_COMBO_VARS = 256

# What an arbiter keeps of a search's ``info`` lines.  Only the newest value
# of each field matters (the final eval, depth, nodes, time and pv go into the
# game's record), and the work of reading them must not depend on how much an
# engine writes: an engine's output is cut and dropped as it arrives, so that
# it costs bounded memory and bounded time, whoever's clock runs meanwhile.

#: How many ``info`` lines of one search an arbiter keeps (the newest ones).
MAX_INFO_LINES_KEPT = 64

#: How much of one ``info`` line an arbiter keeps, in characters: the line is
#: cut there as it is read, at a token boundary.  Room for every field and a
#: pv of :data:`MAX_PV_KEPT` moves; whatever lies beyond is not read (fields
#: go before the pv, as the protocol's order has them).
MAX_INFO_LINE_KEPT = 1024

#: How much ``info`` text of one search an arbiter keeps in all, in
#: characters: the newest lines that fit (at least the newest line).  Honest
#: engines write far less per search than this holds; a flooding engine's
#: output is reduced to this much before anything of it is parsed.
MAX_INFO_KEPT = 4096

#: Longest principal variation an arbiter records, in moves: longer than the
#: pv of an honest search at the depths engines reach in a game, while the
#: record of one ply stays small.
MAX_PV_KEPT = 64

# Recommended deadlines for the arbiter side (milliseconds).  The arbiter's
# own configuration decides; these are the defaults the spec promises engine
# authors, so engines can be written to meet them comfortably.

#: From ``ugi`` to ``ugiok``: engines load tables or networks at start-up.
HANDSHAKE_TIMEOUT_MS = 10_000

#: From ``isready`` to ``readyok`` (also after ``uginewgame``).
READY_TIMEOUT_MS = 5_000

#: From ``stop`` to ``bestmove`` during ``go infinite``, and grace beyond a
#: depth/nodes search's own deadline.
STOP_TIMEOUT_MS = 5_000

#: From ``quit`` until the process group is sent SIGTERM (then SIGKILL).
QUIT_GRACE_MS = 1_000
