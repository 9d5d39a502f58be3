"""Nine Men's Morris, German rules (rules: ``specs/games/morris.md``).

Two players place nine pieces each on the 24 points of three nested squares,
then slide them along the lines (or fly anywhere, with exactly three left).
Closing a mill -- three own pieces on one of the 16 lines -- removes one
opposing piece, written into the same move: ``d2``, ``d2-d3``, ``d2xa1``,
``d2-d3xa1``.

Speed matters here (random playouts, perft, MCTS engines), so the board is two
24-bit integers, laid out ring by ring rather than in the notation's order:
bit ``8*r + k`` is point ``k`` (clockwise from the top-left corner) of ring
``r`` (0 outer, 1 middle, 2 inner).  In that layout each ring is one byte and
the four cross lines are bits ``k``, ``k+8``, ``k+16`` for odd ``k``, so:

* mills, pieces in mills and mill-completing points come from 256-entry tables
  of one ring byte plus a few shifts for the cross lines;
* the legal moves are concatenations of precomputed lists of move strings:
  placements and flights by byte of the empty points, slides along a ring by
  16 bits (that ring's own and empty points), slides along the cross lines by
  16 bits (own and empty mid-points of two rings).  Moves onto a point that
  can complete a mill (usually none or one) are looked up apart, by the few
  points around it, already split into those that close a mill and those that
  do not; only the closing ones take a second step, one entry per removable
  piece.  Generating moves never formats a string.

A position stores the board from the mover's side (``own``/``opp``) plus the
side index of the mover, and works out its verdict when it is made; its legal
moves are listed on first request.  A match only ever asks for the verdict
and plays the engines' moves, so those two questions have a board check
beside the generator (one seam, "The check beside the generator" below),
while playouts and perft list the moves.  History for
the repetition rule is the tuple of position keys since the last irreversible
ply (a placement or a removal: nothing before one can recur, since pieces in
hand or on the board only ever decrease).
"""

from __future__ import annotations

import re
from operator import itemgetter

from .base import (
    COLORS,
    SIDE_LETTERS,
    Color,
    Game,
    IllegalMoveError,
    InvalidFenError,
    Outcome,
    Position,
    Termination,
    run_lengths,
)

# --- The board (specs/games/morris.md §1) -----------------------------------

#: The 24 points in the order of the rules.
POINTS: tuple[str, ...] = (
    "a1", "d1", "g1", "b2", "d2", "f2", "c3", "d3", "e3", "a4", "b4", "c4",
    "e4", "f4", "g4", "c5", "d5", "e5", "b6", "d6", "f6", "a7", "d7", "g7",
)

#: The 16 mills: eight along the ranks, eight along the files.
MILLS: tuple[tuple[str, str, str], ...] = (
    ("a1", "d1", "g1"), ("b2", "d2", "f2"), ("c3", "d3", "e3"), ("a4", "b4", "c4"),
    ("e4", "f4", "g4"), ("c5", "d5", "e5"), ("b6", "d6", "f6"), ("a7", "d7", "g7"),
    ("a1", "a4", "a7"), ("b2", "b4", "b6"), ("c3", "c4", "c5"), ("d1", "d2", "d3"),
    ("d5", "d6", "d7"), ("e3", "e4", "e5"), ("f2", "f4", "f6"), ("g1", "g4", "g7"),
)

#: Two points are adjacent when they are next to each other on a mill line.
ADJACENT: dict[str, tuple[str, ...]] = {
    name: tuple(sorted(
        {m[i - 1] for m in MILLS for i in (1, 2) if m[i] == name}
        | {m[i + 1] for m in MILLS for i in (0, 1) if m[i] == name},
        key=POINTS.index,
    ))
    for name in POINTS
}

#: The position string's board field lists the points rank by rank, top first.
RANKS: tuple[tuple[str, ...], ...] = (
    ("a7", "d7", "g7"), ("b6", "d6", "f6"), ("c5", "d5", "e5"),
    ("a4", "b4", "c4", "e4", "f4", "g4"),
    ("c3", "d3", "e3"), ("b2", "d2", "f2"), ("a1", "d1", "g1"),
)

PIECES_PER_SIDE = 9
NO_PROGRESS_PLIES = 100

# The bit layout: ring by ring, clockwise from the top-left corner.
LAYOUT: tuple[str, ...] = (
    "a7", "d7", "g7", "g4", "g1", "d1", "a1", "a4",  # outer ring
    "b6", "d6", "f6", "f4", "f2", "d2", "b2", "b4",  # middle ring
    "c5", "d5", "e5", "e4", "e3", "d3", "c3", "c4",  # inner ring
)
INDEX: dict[str, int] = {name: i for i, name in enumerate(LAYOUT)}
BIT: dict[str, int] = {name: 1 << i for i, name in enumerate(LAYOUT)}
FULL = (1 << 24) - 1
_MIDS = 0xAA  # the odd points of a ring byte: where the cross lines meet it

MILL_MASKS: tuple[int, ...] = tuple(sum(BIT[p] for p in mill) for mill in MILLS)
MILLS_AT: tuple[tuple[int, ...], ...] = tuple(
    tuple(m for m in MILL_MASKS if m >> i & 1) for i in range(24))
ADJ_INDEX: tuple[tuple[int, ...], ...] = tuple(
    tuple(INDEX[n] for n in ADJACENT[LAYOUT[i]]) for i in range(24))


def _indices(mask: int) -> list[int]:
    return [i for i in range(24) if mask >> i & 1]


# --- Mill arithmetic on one side's bits -------------------------------------

#: A mill's mask -> the indices of its points.
_MILL_POINTS: dict[int, list[int]] = {m: _indices(m) for m in MILL_MASKS}


def _ring_table(ring: int, value_of) -> list[int]:
    mills = [m for m in MILL_MASKS if m & (0xFF << 8 * ring) == m]
    return [value_of(v << 8 * ring, mills) for v in range(256)]


def _ring_pairs(x: int, mills: list[int]) -> int:
    out = 0
    for m in mills:
        for i in _MILL_POINTS[m]:
            rest = m ^ (1 << i)
            if x & rest == rest:
                out |= 1 << i
    return out


def _ring_mills(x: int, mills: list[int]) -> int:
    out = 0
    for m in mills:
        if x & m == m:
            out |= m
    return out


_PAIRS0, _PAIRS1, _PAIRS2 = (_ring_table(r, _ring_pairs) for r in range(3))
_INMILL0, _INMILL1, _INMILL2 = (_ring_table(r, _ring_mills) for r in range(3))


def completion_points(x: int) -> int:
    """Points that would complete a mill of the pieces ``x`` (occupied or not):
    the other two points of one of their mills are in ``x``."""
    a = x & _MIDS
    b = x >> 8 & _MIDS
    c = x >> 16 & _MIDS
    return (_PAIRS0[x & 255] | _PAIRS1[x >> 8 & 255] | _PAIRS2[x >> 16]
            | b & c | (a & c) << 8 | (a & b) << 16)


def in_mills(x: int) -> int:
    """The pieces of ``x`` that stand in a complete mill."""
    t = x & x >> 8 & x >> 16 & _MIDS
    return _INMILL0[x & 255] | _INMILL1[x >> 8 & 255] | _INMILL2[x >> 16] | t * 0x010101


def removable(x: int) -> int:
    """The pieces of ``x`` a mill may remove (§4): those outside mills, or
    any of them when all stand in mills."""
    t = x & x >> 8 & x >> 16 & _MIDS
    free = x & ~(_INMILL0[x & 255] | _INMILL1[x >> 8 & 255] | _INMILL2[x >> 16] | t * 0x010101)
    return free or x


def closes_mill(after: int, index: int) -> bool:
    """Whether the piece on ``index`` stands in a mill of ``after``."""
    for m in MILLS_AT[index]:
        if after & m == m:
            return True
    return False


# --- Move strings, made once ---------------------------------------------------

_REMOVALS: dict[str, tuple[str, ...]] = {}  # plain move -> the move with "x<point>", by index
_DECODE: dict[str, tuple[int, int, int]] = {}  # move -> (from bit or 0, to bit, removed bit or 0)
_SLIDE: list[list[str]] = [[""] * 24 for _ in range(24)]  # [from][to] -> "from-to"


_REMOVAL_SUFFIXES = tuple(f"x{point}" for point in LAYOUT)  # by index
_REMOVED_BITS = tuple(1 << r for r in range(24))


def _register(plain: str, src: int, dst: int) -> None:
    _DECODE[plain] = (src, dst, 0)
    with_removal = tuple([plain + suffix for suffix in _REMOVAL_SUFFIXES])
    _DECODE.update(zip(with_removal, [(src, dst, bit) for bit in _REMOVED_BITS], strict=True))
    _REMOVALS[plain] = with_removal


for _q in range(24):
    _register(LAYOUT[_q], 0, 1 << _q)
for _p in range(24):
    for _q in range(24):
        if _p != _q:
            _SLIDE[_p][_q] = f"{LAYOUT[_p]}-{LAYOUT[_q]}"
            _register(_SLIDE[_p][_q], 1 << _p, 1 << _q)


def _byte_tables(item_for) -> tuple[list[list], ...]:
    """Three tables (one per ring byte) from a byte of point bits to the list
    of ``item_for(point)`` over those points (None items left out).  Entries
    may share list objects: they are only ever read or concatenated."""
    tables = []
    for ring in range(3):
        items = [item_for(8 * ring + k) for k in range(8)]
        table: list[list] = [[]]
        for v in range(1, 256):
            rest = table[v & v - 1]  # the byte without its lowest bit
            item = items[(v & -v).bit_length() - 1]
            table.append(rest if item is None else [item] + rest)
        tables.append(table)
    return tuple(tables)


_PLACE0, _PLACE1, _PLACE2 = _byte_tables(lambda q: LAYOUT[q])
_IDX0, _IDX1, _IDX2 = _byte_tables(lambda q: q)  # bit -> index lists


def _ring_neighbours(q: int) -> tuple[int, int]:
    ring = q - q % 8
    return ring + (q - 1) % 8, ring + (q + 1) % 8


def _slide_table(points: list[int], sources: dict[int, tuple[int, ...]], base: int,
                 index) -> list[list[str]]:
    """A 16-bit-indexed table of slide lists over a window of the board: for
    every (own, empty) state of ``points`` (window bits; the other points of
    the window are the opponent's), at ``index(own, empty)``, the slides into
    each empty point from its ``sources`` that are own.  ``base`` is the
    window's first board bit."""
    into: dict[tuple[int, int], list[str]] = {}
    for q in points:
        mask = own = sum(1 << p for p in sources[q])
        while True:  # every subset of mask
            into[q, own] = [_SLIDE[base + p][base + q] for p in sources[q] if own >> p & 1]
            if not own:
                break
            own = own - 1 & mask
    masks = {q: sum(1 << p for p in sources[q]) for q in points}
    table: list[list[str]] = [[]] * 65536  # (states that cannot occur share one empty list)
    # A state's slides are those of the state with its highest empty point q
    # made the opponent's, then the slides into q; that state has the same
    # own points and fewer empty ones, so it is made first when the empty
    # points are counted upwards: one concatenation per state.
    window = sum(1 << q for q in points)
    own = window
    while True:  # every own subset of the window
        free = window ^ own
        empty = 0
        while True:  # every empty subset of the rest, upwards
            at = index(own, empty)
            if empty:
                q = empty.bit_length() - 1
                table[at] = table[index(own, empty ^ 1 << q)] + into[q, own & masks[q]]
            else:
                table[at] = []
            if empty == free:
                break
            empty = empty - free & free
        if not own:
            break
        own = own - 1 & window
    return table


#: The slide tables (five of 65536 lists, tens of milliseconds to build),
#: made by the first generate() that needs slides (_slides): a process that
#: imports the game, or plays only placements, never builds them.
_SLIDES: tuple[list[list[str]], ...] | None = None


def _slides() -> tuple[list[list[str]], ...]:
    """The slide tables: along ring r (r = 0, 1, 2), by (own byte << 8 |
    empty byte) of that ring; then along the cross lines between rings r
    and r + 1 (r = 0, 1), by (own mids | empty mids >> 1) of the two rings,
    shifted down to bit 0."""
    global _SLIDES
    if _SLIDES is None:
        rings = [_slide_table(list(range(8)), {q: _ring_neighbours(q) for q in range(8)}, 8 * r,
                              lambda own, empty: own << 8 | empty)
                 for r in range(3)]
        radials = [_slide_table([k for k in range(16) if k % 2],
                                {k: tuple(p for p in (k - 8, k + 8) if 0 <= p < 16) for k in range(16) if k % 2},
                                8 * r, lambda own, empty: own | empty >> 1)
                   for r in range(2)]
        _SLIDES = (*rings, *radials)
    return _SLIDES


#: Per point p, the three byte tables of the flights from p (_byte_tables),
#: made on the first flight (with three pieces left): None until then.
_FLY: tuple[tuple[list[list], ...], ...] | None = None


def _flight_tables() -> tuple[tuple[list[list], ...], ...]:
    global _FLY
    if _FLY is None:
        _FLY = tuple(_byte_tables(lambda q, p=p: _SLIDE[p][q] if q != p else None) for p in range(24))
    return _FLY

# Slides into a completion point q (where a mill can close) are listed apart:
# whether one closes a mill depends only on the mover's pieces on the (at
# most four) other points of q's two mills and q's neighbours.  For every
# state of those points, _INTO[q] gives the slides into q that close no mill
# and the (plain) slides that close one -- a slide p -> q closes the mill
# through q that does not contain p (a slide never closes the mill it moves
# along), so the rest of the board never needs looking at.
def _into_table(q: int) -> tuple[int, dict[int, tuple[list[str], list[str]]]]:
    mills = MILLS_AT[q]
    relevant = 0
    for p in ADJ_INDEX[q]:
        relevant |= 1 << p
    for m in mills:
        relevant |= m ^ 1 << q
    table = {}
    subsets = [0]
    for i in _indices(relevant):
        subsets += [s | 1 << i for s in subsets]
    for own in subsets:
        quiet: list[str] = []
        closing: list[str] = []
        for p in ADJ_INDEX[q]:
            if own >> p & 1:
                partners = next(m for m in mills if not m >> p & 1) ^ 1 << q
                (closing if own & partners == partners else quiet).append(_SLIDE[p][q])
        table[own] = (quiet, closing)
    return relevant, table


_INTO: tuple[tuple[int, dict[int, tuple[list[str], list[str]]]], ...] = tuple(
    _into_table(q) for q in range(24))

assert all(set(ADJ_INDEX[q]) == set(_ring_neighbours(q)) | (
    {q - 8} if q >= 8 and q % 2 else set()) | ({q + 8} if q < 16 and q % 2 else set())
    for q in range(24)), "the bit layout does not match the mills"


def _with_removals(moves: list[str], closing: list[str], opp: int) -> list[str]:
    """Add to ``moves`` each mill-closing move once per removable piece (§4)."""
    if not opp:  # nothing on the board to remove: the moves stay plain
        moves += closing
        return moves
    targets = removable(opp)
    pick = itemgetter(*_point_indices(targets))
    if targets & targets - 1:
        for plain in closing:
            moves += pick(_REMOVALS[plain])
    else:  # one target: itemgetter gives the string itself, not a tuple
        for plain in closing:
            moves.append(pick(_REMOVALS[plain]))
    return moves


#: A point's bit -> (relevant, table) of ``_INTO``; a placement's move string.
_INTO_AT: dict[int, tuple[int, dict[int, tuple[list[str], list[str]]]]] = {
    1 << q: _INTO[q] for q in range(24)}
_PLACE_AT: dict[int, str] = {1 << q: LAYOUT[q] for q in range(24)}


def _point_indices(points: int) -> list[int]:
    """The indices of ``points``, lowest first."""
    return _IDX0[points & 255] + _IDX1[points >> 8 & 255] + _IDX2[points >> 16]


def _flights(own: int, empty: int, closes: int) -> tuple[list[str], list[str]]:
    """With exactly three pieces (§5): the flights of each into ``empty``,
    split into (those that close no mill, the plain ones that close one).
    A completion point q completes a mill of two of the pieces: the third
    flying there closes it."""
    moves: list[str] = []
    fly = _FLY if _FLY is not None else _flight_tables()
    for p in _point_indices(own):
        t0, t1, t2 = fly[p]
        moves += t0[empty & 255] + t1[empty >> 8 & 255] + t2[empty >> 16]
    closing = []
    for q in _point_indices(closes):
        for m in MILLS_AT[q]:
            partners = m ^ 1 << q
            if own & partners == partners:
                plain = _SLIDE[(own ^ partners).bit_length() - 1][q]
                moves.remove(plain)
                closing.append(plain)
    return moves, closing


def generate(own: int, opp: int, in_hand: int) -> list[str]:
    """Every legal move of the side owning ``own`` (a new list), ignoring
    whether the game is over (§3-§5).  The move generator: legal_moves()
    lists it."""
    empty = FULL ^ own ^ opp
    # Only a move onto a completion point can close a mill; with fewer than
    # two pieces there is none.
    closes = completion_points(own) & empty if own & own - 1 else 0
    if in_hand:  # placements, by ring byte
        to = empty ^ closes
        moves = [*_PLACE0[to & 255], *_PLACE1[to >> 8 & 255], *_PLACE2[to >> 16]]
        if not closes:
            return moves
        closing = []
        while closes:
            low = closes & -closes
            closing.append(_PLACE_AT[low])
            closes ^= low
    elif own.bit_count() == 3:
        moves, closing = _flights(own, empty, closes)
    else:
        # Slides along the rings and the cross lines, by window (the slides
        # into completion points come below).
        to = empty ^ closes
        ring0, ring1, ring2, radial01, radial12 = _SLIDES if _SLIDES is not None else _slides()
        moves = [*ring0[(own & 255) << 8 | to & 255], *ring1[own & 0xFF00 | to >> 8 & 255],
                 *ring2[own >> 8 & 0xFF00 | to >> 16],
                 *radial01[own & 0xAAAA | (to & 0xAAAA) >> 1],
                 *radial12[own >> 8 & 0xAAAA | to >> 9 & 0x5555]]
        if not closes:
            return moves
        closing = []
        while closes:
            low = closes & -closes
            relevant, table = _INTO_AT[low]
            quiet, closes_here = table[own & relevant]
            moves += quiet
            closing += closes_here
            closes ^= low
    return _with_removals(moves, closing, opp) if closing else moves


#: A point's bit -> the bits of the points next to it.
_ADJACENT_BITS: dict[int, int] = {1 << q: sum(1 << p for p in ADJ_INDEX[q]) for q in range(24)}


def _next_to(points: int) -> int:
    """The points adjacent to any of ``points``: one step either way around
    each ring (a rotation of its byte), and along the cross lines (the odd
    points of neighbouring rings)."""
    ring = (points << 1 & 0xFEFEFE | points >> 7 & 0x010101
            | points >> 1 & 0x7F7F7F | points << 7 & 0x808080)
    mids = points & 0xAAAAAA
    return ring | (mids << 8 | mids >> 8) & FULL


# --- The check beside the generator ----------------------------------------------
#
# A match plays the engines' moves on positions that never list theirs, and
# asks every position for its verdict.  Listing the moves there (generate)
# costs several microseconds a ply more than these two board checks
# (bench/README.md, "Legality"), so they stay, here and nowhere else:
# _allows decides one move, _verdict's "blocked" whether any exists.  Both
# state §3-§5 the way generate() applies them; test_games_properties pins them
# to it (play() accepts exactly the listed moves, the verdict is "blocked"
# exactly when none is listed) on positions that never listed their moves.

def _allows(own: int, opp: int, in_hand: int, src: int, dst: int, removed: int) -> bool:
    """Whether the move decoded as (from bit or 0, to bit, removed bit or 0)
    is in generate(own, opp, in_hand)."""
    if (own | opp) & dst:
        return False
    if src:  # a slide or a flight
        if in_hand or not own & src:
            return False
        if not _ADJACENT_BITS[dst] & src and own.bit_count() != 3:
            return False
        after = own ^ src | dst
    else:  # a placement
        if not in_hand:
            return False
        after = own | dst
    if not opp or not dst & in_mills(after):  # no mill closed, or nothing to remove
        return not removed
    return bool(removed & removable(opp))


assert all(_next_to(1 << q) == _ADJACENT_BITS[1 << q] for q in range(24))


# --- Positions -----------------------------------------------------------------

_MOVE_RE = re.compile(r"^([a-z]+[0-9]+)(?:-([a-z]+[0-9]+))?(?:x([a-z]+[0-9]+))?$")
_DRAW_REPETITION = Outcome(Termination.REPETITION, None)
_DRAW_NO_PROGRESS = Outcome(Termination.NO_PROGRESS, None)
# Indexed by the side index of the side to move, who is the one losing.
_FEWER_THAN_THREE = (Outcome(Termination.FEWER_THAN_THREE, Color.BLACK),
                     Outcome(Termination.FEWER_THAN_THREE, Color.WHITE))
_BLOCKED = (Outcome(Termination.BLOCKED, Color.BLACK), Outcome(Termination.BLOCKED, Color.WHITE))


def _verdict(own: int, opp: int, hand: int, side: int, quiet: int,
             repeated: bool) -> Outcome | None:
    """The outcome of a position whose side to move (side index ``side``)
    has ``own`` on the board and ``hand`` in hand, in the order of §7: below
    three pieces, blocked, repetition, 100 plies without removal."""
    count = own.bit_count()
    if count + hand < 3:
        return _FEWER_THAN_THREE[side]
    # Blocked when generate(own, opp, hand) is empty: a placement or a flight
    # needs an empty point, a slide an own piece next to one (a mill-closing
    # move always has a piece to remove, or needs none).
    empty = FULL ^ own ^ opp
    if not (empty if hand or count == 3 else own & _next_to(empty)):
        return _BLOCKED[side]
    if repeated:
        return _DRAW_REPETITION
    if quiet >= NO_PROGRESS_PLIES:
        return _DRAW_NO_PROGRESS
    return None


class MorrisPosition(Position):
    """An immutable Morris position (specs/games/morris.md).

    The board is kept from the mover's view (``own``/``opp``); the outcome is
    worked out when the position is made (it needs no move list), the legal
    moves are listed on first request."""

    __slots__ = ("_own", "_opp", "_own_hand", "_opp_hand", "_side", "_quiet", "_ply",
                 "_history", "_moves", "_outcome")

    _own: int  # the side to move's pieces on the board (layout bits)
    _opp: int  # the other side's
    _own_hand: int
    _opp_hand: int
    _side: int  # the side index of the side to move (0 White, 1 Black)
    _quiet: int  # plies without removal since placement ended (§6)
    _ply: int
    # Keys (board and side to move) of the positions since the last placement
    # or removal, this one last; None while this position is the first of them
    # (its key is made only if a later position needs it).
    _history: tuple[int, ...] | None
    _moves: list[str] | None  # the legal moves ([] when the game is over); None until listed
    _outcome: Outcome | None

    # -- the interface --

    @property
    def ply(self) -> int:
        return self._ply

    def legal_moves(self) -> list[str]:
        moves = self._moves
        if moves is None:
            if self._outcome is None:
                moves = generate(self._own, self._opp, self._own_hand)
            else:
                moves = []
            self._moves = moves
        return moves[:]

    def outcome(self) -> Outcome | None:
        return self._outcome

    def _allows(self, move: str) -> bool:
        """Whether ``move``, as written, is a legal move here: in the listed
        moves when they are listed, else by the board check."""
        moves = self._moves
        if moves is not None:
            return move in moves
        decoded = _DECODE.get(move)
        if decoded is None or self._outcome is not None:
            return False
        src, dst, removed = decoded
        return _allows(self._own, self._opp, self._own_hand, src, dst, removed)

    def play(self, move: str) -> MorrisPosition:
        moves = self._moves
        # (self._allows(move), with its first case written out: playouts and
        # perft list the moves of every position they play from)
        if not (move in moves if moves is not None else self._allows(move)):
            move = self.parse_move(move)  # another spelling, or raises with the reason
        src, dst, removed = _DECODE[move]
        # The child sees the board from the other side: its "own" is our "opp".
        child = _new(MorrisPosition)
        child._own = own = self._opp ^ removed
        child._own_hand = hand = self._opp_hand
        child._side = side = self._side ^ 1
        child._ply = self._ply + 1
        child._moves = None
        if src:
            child._opp = opp = self._own ^ src ^ dst
            child._opp_hand = 0
        else:
            child._opp = opp = self._own | dst
            child._opp_hand = self._own_hand - 1
        if removed or not src:  # irreversible: nothing before it can recur
            child._quiet = quiet = 0
            child._history = None
            repeated = False
        else:
            # Counted only once neither side has pieces in hand (§6).
            child._quiet = quiet = 0 if hand else self._quiet + 1
            key = own | opp << 24 | side << 48
            history = self._history
            if history is None:
                history = (self._key(), key)
            else:
                history += (key,)
            child._history = history
            repeated = len(history) > 8 and history.count(key) > 2
        child._outcome = _verdict(own, opp, hand, side, quiet, repeated)
        return child

    def _key(self) -> int:
        """This position's repetition key: the board and the side to move."""
        return self._own | self._opp << 24 | self._side << 48

    def fen(self) -> str:
        white, black = self._sides()
        ranks = "/".join(
            run_lengths("".join("W" if white & BIT[name] else "B" if black & BIT[name] else "."
                                for name in rank))
            for rank in RANKS)
        hw, hb = self.in_hand
        return f"{ranks} {SIDE_LETTERS[self._side]} {hw} {hb} {self._quiet} {self._ply}"

    def pieces(self) -> dict[str, Color]:
        white, black = self._sides()
        out = {}
        for name in POINTS:
            if white & BIT[name]:
                out[name] = Color.WHITE
            elif black & BIT[name]:
                out[name] = Color.BLACK
        return out

    def diagram(self) -> str:
        white, black = self._sides()
        lines = [row for row in _DIAGRAM]
        for name, (row, col) in _DIAGRAM_AT.items():
            mark = "W" if white & BIT[name] else "B" if black & BIT[name] else "."
            lines[row] = lines[row][:col] + mark + lines[row][col + 1:]
        hw, hb = self.in_hand
        outcome = self._outcome
        state = (f"{self.to_move.value} to move" if outcome is None
                 else f"game over: {outcome.result} ({outcome.termination.value})")
        lines.append(f"{state}; in hand: white {hw}, black {hb}; "
                     f"plies without removal {self._quiet}; ply {self._ply}")
        return "\n".join(lines)

    # -- Morris specifics --

    @property
    def in_hand(self) -> tuple[int, int]:
        """Pieces not yet placed, (white, black)."""
        if self._side:
            return self._opp_hand, self._own_hand
        return self._own_hand, self._opp_hand

    @property
    def plies_without_removal(self) -> int:
        """The counter of the 100-ply rule (§6)."""
        return self._quiet

    def piece_count(self, color: Color) -> int:
        """Pieces on the board plus in hand."""
        white, black = self._sides()
        hw, hb = self.in_hand
        if color is Color.WHITE:
            return white.bit_count() + hw
        return black.bit_count() + hb

    def is_mill_point(self, point: str) -> bool:
        """Whether the piece on ``point`` stands in a complete mill."""
        white, black = self._sides()
        return bool(BIT[point] & (in_mills(white) | in_mills(black)))

    def repetitions(self) -> int:
        """How often this position (board, side to move, pieces in hand) has
        occurred, counted from the position the game or the string started at."""
        history = self._history
        return 1 if history is None else history.count(history[-1])

    def parse_move(self, text: str) -> str:
        """The canonical move for ``text`` if it is legal here, else
        IllegalMoveError saying why (§3-§5)."""
        if self.outcome() is not None:
            raise IllegalMoveError(text, "the game is already over")
        match = _MOVE_RE.match(text.strip().lower())
        if not match:
            raise IllegalMoveError(
                text, "malformed: write a placement 'd2', a move 'd2-d3', and a removal "
                      "as 'x' and the point, e.g. 'd2xa1' or 'd2-d3xa1'")
        src: str | None = match.group(1)
        dst: str | None = match.group(2)
        removed: str | None = match.group(3)
        if dst is None:
            src, dst = None, src
        assert dst is not None  # the pattern's first group always matches
        for name in (src, dst, removed):
            if name is not None and name not in BIT:
                raise IllegalMoveError(text, f"{name} is not a point of the board")
        move = (dst if src is None else f"{src}-{dst}") + ("" if removed is None else f"x{removed}")
        if self._allows(move):
            return move
        raise IllegalMoveError(text, self._refusal(src, dst, removed))

    def _refusal(self, src: str | None, dst: str, removed: str | None) -> str:
        """Why the move from ``src`` (None: a placement) to ``dst``, removing
        ``removed`` (or nothing), is illegal here: the first rule it breaks."""
        me, them = self.to_move.value, self.to_move.other.value
        own, opp = self._own, self._opp
        if src is None:
            if not self._own_hand:
                return f"{me} has no pieces left in hand: move a piece, e.g. 'd2-d3'"
        else:
            if self._own_hand:
                return f"{me} still has {self._own_hand} piece(s) in hand and must place one"
            if not own & BIT[src]:
                holds = f"a {them} piece" if opp & BIT[src] else "nothing"
                return f"no {me} piece on {src} (it holds {holds})"
            if src == dst:
                return "a piece must move to another point"
        if (own | opp) & BIT[dst]:
            return f"{dst} is occupied (by a {me if own & BIT[dst] else them} piece)"
        if src is not None and dst not in ADJACENT[src] and own.bit_count() != 3:
            return (f"{src} and {dst} are not adjacent "
                    f"({me} has {own.bit_count()} pieces; only with exactly 3 may a piece fly)")
        after = own | BIT[dst]
        if src is not None:
            after ^= BIT[src]
        closes = closes_mill(after, INDEX[dst])
        plain = dst if src is None else f"{src}-{dst}"
        if removed is None:
            if closes and opp:
                return (f"the move closes a mill: name the {them} piece to remove, "
                        f"e.g. '{plain}x{LAYOUT[_lowest(removable(opp))]}'")
        elif not closes:
            return "the move closes no mill, so it may not remove a piece"
        elif not opp:
            return f"{them} has no piece on the board, so the mill removes nothing: write '{plain}'"
        elif not opp & BIT[removed]:
            holds = f"a {me} piece" if after & BIT[removed] else "nothing"
            return f"no {them} piece on {removed} to remove (it holds {holds})"
        elif not removable(opp) & BIT[removed]:
            return (f"the {them} piece on {removed} stands in a mill and {them} has "
                    "pieces outside mills")
        return "not a legal move in this position"  # pragma: no cover - _allows and the rules agree

    # -- internals --

    def _sides(self) -> tuple[int, int]:
        """(white bits, black bits)."""
        if self._side:
            return self._opp, self._own
        return self._own, self._opp


_new = object.__new__  # positions are made field by field (play is the hot path)


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _make(white: int, black: int, hand_white: int, hand_black: int, side: int,
          quiet: int, ply: int) -> MorrisPosition:
    """The position of a position string (or the start), side index ``side`` to move."""
    position = _new(MorrisPosition)
    if side:
        own, opp, own_hand, opp_hand = black, white, hand_black, hand_white
    else:
        own, opp, own_hand, opp_hand = white, black, hand_white, hand_black
    position._own, position._opp = own, opp
    position._own_hand, position._opp_hand = own_hand, opp_hand
    position._side = side
    position._quiet = quiet
    position._ply = ply
    position._history = None
    position._moves = None
    position._outcome = _verdict(own, opp, own_hand, side, quiet, False)
    return position


# --- The diagram -----------------------------------------------------------------

_DIAGRAM = (
    "7  .-----------.-----------.",
    "   |           |           |",
    "6  |   .-------.-------.   |",
    "   |   |       |       |   |",
    "5  |   |   .---.---.   |   |",
    "   |   |   |       |   |   |",
    "4  .---.---.       .---.---.",
    "   |   |   |       |   |   |",
    "3  |   |   .---.---.   |   |",
    "   |   |       |       |   |",
    "2  |   .-------.-------.   |",
    "   |           |           |",
    "1  .-----------.-----------.",
    "   a   b   c   d   e   f   g",
)
_DIAGRAM_AT = {name: (2 * (7 - int(name[1])), 3 + 4 * "abcdefg".index(name[0])) for name in POINTS}


# --- The game ----------------------------------------------------------------------

class MorrisGame(Game):
    """Nine Men's Morris: White first, nine pieces each (specs/games/morris.md)."""

    name = "morris"
    description = "Nine Men's Morris (German rules): place, slide, fly; mills remove pieces"
    first = Color.WHITE

    def prepare(self) -> None:
        """The slide and flight tables (built on first use: a process that
        only imports the game does not pay for them)."""
        _slides()
        _flight_tables()

    def start(self) -> MorrisPosition:
        return _make(0, 0, PIECES_PER_SIDE, PIECES_PER_SIDE, self.first.side, 0, 0)

    def from_fen(self, fen: str) -> MorrisPosition:
        """Parse ``<board> <w|b> <white in hand> <black in hand> <plies without
        removal> <ply>`` (§8); InvalidFenError says what is wrong."""
        def bad(reason: str) -> InvalidFenError:
            return InvalidFenError(fen, reason)

        fields = fen.split()
        if len(fields) != 6:
            raise bad("expected 6 fields (board, side to move, white in hand, black in hand, "
                      f"plies without removal, ply), got {len(fields)}")
        board, side, *numbers = fields
        ranks = board.split("/")
        if len(ranks) != len(RANKS):
            raise bad(f"the board needs 7 ranks separated by '/', got {len(ranks)}")
        white = black = 0
        for text, names in zip(ranks, RANKS, strict=False):
            rank_no = names[0][1]
            at = 0
            previous_digit = False
            for char in text:
                if char.isdigit():
                    if previous_digit:
                        raise bad(f"rank {rank_no}: two digits in a row in {text!r}; "
                                  "write one count of empty points")
                    if char == "0":
                        raise bad(f"rank {rank_no}: 0 is not a count of empty points")
                    at += int(char)
                    previous_digit = True
                elif char in "WB":
                    if at >= len(names):
                        raise bad(f"rank {rank_no} has {len(names)} points, {text!r} describes more")
                    if char == "W":
                        white |= BIT[names[at]]
                    else:
                        black |= BIT[names[at]]
                    at += 1
                    previous_digit = False
                else:
                    raise bad(f"rank {rank_no}: unexpected {char!r} in {text!r}; "
                              "use W, B and digits for empty points")
            if at != len(names):
                raise bad(f"rank {rank_no} has {len(names)} points ({' '.join(names)}), "
                          f"{text!r} describes {at}")
        if side not in SIDE_LETTERS:
            raise bad(f"side to move must be 'w' or 'b', got {side!r}")
        values = []
        for label, text, high in zip(
                ("white in hand", "black in hand", "plies without removal", "ply"),
                numbers, (PIECES_PER_SIDE, PIECES_PER_SIDE, NO_PROGRESS_PLIES, None), strict=False):
            if not text.isdigit() or not text.isascii():
                raise bad(f"{label} must be a non-negative integer, got {text!r}")
            value = int(text)
            if high is not None and value > high:
                raise bad(f"{label} must be at most {high}, got {value}")
            values.append(value)
        hand_white, hand_black, quiet, ply = values
        for color, bits, hand in (("white", white, hand_white), ("black", black, hand_black)):
            if bits.bit_count() + hand > PIECES_PER_SIDE:
                raise bad(f"{color} has {bits.bit_count()} on the board and {hand} in hand: "
                          f"more than {PIECES_PER_SIDE} pieces")
        if quiet and (hand_white or hand_black):
            raise bad("plies without removal must be 0 while pieces are in hand "
                      "(the count starts when placement is over)")
        to_move = SIDE_LETTERS.index(side)
        mover = COLORS[1 - to_move].value
        bits, hand = ((white, hand_white), (black, hand_black))[1 - to_move]
        if bits.bit_count() + hand < 3:
            raise bad(f"{mover}, who moved last, has fewer than three pieces: "
                      "the game would have ended before")
        return _make(white, black, hand_white, hand_black, to_move, quiet, ply)


GAME = MorrisGame()
MorrisPosition.game = GAME
