"""Talisman: pieces that change colour, and triangles to claim.

Rules, notation and the position string are in ``specs/games/talisman.md``;
section numbers (§) below refer to it.

The board is a hexagon of side 2: 19 points A-S on 15 straight lines, cut into
24 unit triangles.  Everything about the geometry (adjacency, capture rays,
triangles, size-2 triangles) is derived once, at import, from the list of
lines alone, checked against the counts in the spec, and turned into integer
bitmasks so that the hot path (``legal_moves``/``play``) is a few dictionary
look-ups and bit operations:

* points: bit ``i`` is point ``POINTS[i]`` (A = bit 0 ... S = bit 18);
* unit triangles: bit ``t`` is ``UNIT_TRIANGLES[t]`` in position-string order;
* the moves of one piece come from a table by its empty and opponent-held
  neighbours (:func:`movements`);
* every from-to pair on a common line is one entry of a move table holding
  the from/to bits, the mask of the points jumped over and the unit triangles
  that move could complete: what ``play`` needs to check and apply a move.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import combinations
from typing import Final, NamedTuple

from .base import (
    SIDE_LETTERS,
    Color,
    Game,
    IllegalMoveError,
    InvalidFenError,
    Outcome,
    Position,
    Termination,
)

# ---------------------------------------------------------------------------
# Geometry (§2), derived from the lines
# ---------------------------------------------------------------------------

ROWS: Final = ("ABC", "DEFG", "HIJKL", "MNOP", "QRS")
POINTS: Final = "".join(ROWS)
LINES: Final = (
    "ABC", "DEFG", "HIJKL", "MNOP", "QRS",  # across
    "ADH", "BEIM", "CFJNQ", "GKOR", "LPS",  # down to the left
    "CGL", "BFKP", "AEJOS", "DINR", "HMQ",  # down to the right
)
EDGE_POINTS: Final = "ABCDGHLMPQRS"
INDEX: Final = {point: i for i, point in enumerate(POINTS)}

ROW_OF: Final = {p: r for r, row in enumerate(ROWS) for p in row}
# Doubled horizontal coordinate: neighbours across are 2 apart, diagonal 1.
X_OF: Final = {p: 2 * c + abs(r - 2) for r, row in enumerate(ROWS) for c, p in enumerate(row)}

ADJACENT: Final = frozenset(
    frozenset(line[i:i + 2]) for line in LINES for i in range(len(line) - 1)
)
NEIGHBOURS: Final = {
    p: "".join(q for q in POINTS if frozenset(p + q) in ADJACENT) for p in POINTS
}


def _triangle_order(corners: str) -> tuple[int, int]:
    """Position-string order: by band of rows (top to bottom), then left to right."""
    return min(ROW_OF[p] for p in corners), sum(X_OF[p] for p in corners)


UNIT_TRIANGLES: Final = tuple(sorted(
    ("".join(t) for t in combinations(POINTS, 3)
     if all(frozenset(pair) in ADJACENT for pair in combinations(t, 2))),
    key=_triangle_order,
))
TRIANGLE_INDEX: Final = {t: i for i, t in enumerate(UNIT_TRIANGLES)}
# The points two steps apart on a line, and the point between them.
_MIDPOINT: Final = {
    frozenset((line[i], line[i + 2])): line[i + 1] for line in LINES for i in range(len(line) - 2)
}


def _size2_units(a: str, b: str, c: str) -> tuple[str, ...] | None:
    """The 4 unit triangles of the size-2 triangle with corners a, b, c, or
    None if a, b, c are not such corners (each pair two steps apart on a line)."""
    try:
        ab, bc, ac = (_MIDPOINT[frozenset(pair)] for pair in ((a, b), (b, c), (a, c)))
    except KeyError:
        return None
    units = tuple("".join(sorted(t)) for t in (a + ab + ac, b + ab + bc, c + ac + bc, ab + bc + ac))
    assert all(u in TRIANGLE_INDEX for u in units), (a, b, c, units)
    return units


BIG_TRIANGLES: Final = {
    "".join(t): units for t in combinations(POINTS, 3) if (units := _size2_units(*t)) is not None
}

assert len(POINTS) == 19
assert len(ADJACENT) == 42
assert len(UNIT_TRIANGLES) == 24
assert len(BIG_TRIANGLES) == 12
assert EDGE_POINTS == "".join(p for p in POINTS if len(NEIGHBOURS[p]) < 6)

# ---------------------------------------------------------------------------
# Bitmask tables for the hot path
# ---------------------------------------------------------------------------

ALL_POINTS: Final = (1 << 19) - 1
ALL_TRIANGLES: Final = (1 << 24) - 1
EDGE_MASK: Final = sum(1 << INDEX[p] for p in EDGE_POINTS)
PLACEMENT_PLIES: Final = 12
NO_PROGRESS_PLIES: Final = 50
TRIANGLE_POINTS: Final = 5
BIG_TRIANGLE_POINTS: Final = 20


def _point_mask(points: str) -> int:
    return sum(1 << INDEX[p] for p in points)


TRIANGLE_MASKS: Final = tuple(_point_mask(t) for t in UNIT_TRIANGLES)  # corners of triangle t
BIG_MASKS: Final = tuple(
    sum(1 << TRIANGLE_INDEX[u] for u in units) for units in BIG_TRIANGLES.values()
)  # unit-triangle bits of each size-2 triangle
Ray = tuple[tuple[int, str], ...]  # points beyond a point along a line: (bit, "P-Q"), nearest first


def _rays_from(point: str) -> tuple[Ray, ...]:
    """The rays from ``point`` along each of its lines, both ways."""
    rays = []
    for line in LINES:
        if point in line:
            i = line.index(point)
            for beyond in (line[i + 1:], line[:i][::-1]):
                if beyond:
                    rays.append(tuple((1 << INDEX[q], f"{point}-{q}") for q in beyond))
    return tuple(rays)


RAYS: Final = tuple(_rays_from(p) for p in POINTS)


def _subsets(mask: int) -> list[int]:
    result, subset = [], mask
    while True:
        result.append(subset)
        if not subset:
            return result
        subset = (subset - 1) & mask


Steps = tuple[int, dict[int, tuple[str, ...]], dict[int, tuple[Ray, ...]]]


def _steps(rays: tuple[Ray, ...]) -> Steps:
    """For one point: the mask of its neighbours; the quiet moves for each set
    of empty neighbours; the rays beyond each set of opponent-held neighbours."""
    around = sum(ray[0][0] for ray in rays)
    quiet = {s: tuple(r[0][1] for r in rays if r[0][0] & s) for s in _subsets(around)}
    jumps = {s: tuple(r[1:] for r in rays if r[0][0] & s) for s in _subsets(around)}
    return around, quiet, jumps


# Per point bit: (neighbour mask, {empty neighbours: quiet moves}, {opponent neighbours: rays}).
STEPS_OF_BIT: Final = {1 << i: _steps(rays) for i, rays in enumerate(RAYS)}
assert sum(len(r) for r in RAYS) == 2 * len(ADJACENT)


def placements(occupied: int) -> int:
    """The points a piece may be placed on during placement (§4): the empty
    edge points."""
    return EDGE_MASK & ~occupied


def movements(mine: int, theirs: int, empty: int) -> list[str]:
    """The moves of the pieces ``mine`` in the movement phase (§5): a step to
    an empty neighbour, or a jump along a line over a run of opponent pieces
    to the empty point just after it.  The move generator's statement of
    movement."""
    moves: list[str] = []
    rest = mine
    while rest:
        low = rest & -rest
        rest ^= low
        around, quiet_moves, jump_rays = STEPS_OF_BIT[low]
        moves += quiet_moves[empty & around]  # steps
        opponents = theirs & around
        if opponents:
            for ray in jump_rays[opponents]:  # jumps: a run of theirs, then empty
                for point, name in ray:
                    if point & theirs:
                        continue
                    if point & empty:
                        moves.append(name)
                    break
    return moves


class _MoveEntry(NamedTuple):
    """Everything ``play`` needs to know about one move string."""

    source: int  # bit of the FROM point (0 for a placement)
    target: int  # bit of the TO point
    jumped: int  # mask of the points jumped over (0 for a quiet move or a placement)
    captured: int  # number of points jumped over (each a captured piece)
    claimable: tuple[tuple[int, int], ...]  # (triangle bit, corner mask) the move may complete


def _claimable(changed: str) -> tuple[tuple[int, int], ...]:
    """Unit triangles with a corner among ``changed``: only they can become
    all-mover by a move that changes exactly those points to the mover's."""
    return tuple(
        (1 << t, TRIANGLE_MASKS[t]) for t, corners in enumerate(UNIT_TRIANGLES)
        if any(p in corners for p in changed)
    )


def _move_table() -> dict[str, _MoveEntry]:
    """Every move string that could ever be legal: a point (placement), or two
    points of a common line (quiet move when adjacent, else a capture)."""
    table = {p: _MoveEntry(0, 1 << INDEX[p], 0, 0, ()) for p in POINTS}
    for line in LINES:
        for i, j in combinations(range(len(line)), 2):
            for a, b in ((i, j), (j, i)):
                between = line[i + 1:j]
                table[f"{line[a]}-{line[b]}"] = _MoveEntry(
                    1 << INDEX[line[a]], 1 << INDEX[line[b]], _point_mask(between),
                    len(between), _claimable(line[b] + between),
                )
    return table


MOVE_TABLE: Final = _move_table()
PLACEMENTS: Final = tuple((1 << INDEX[p], p) for p in EDGE_POINTS)
_MOVE_RE: Final = re.compile(r"[A-S](?:-[A-S])?")

# ---------------------------------------------------------------------------
# Positions
# ---------------------------------------------------------------------------

# Indexed by the side index of the side to move, who is the one losing.
_BLOCKED: Final = (Outcome(Termination.BLOCKED, Color.BLACK),
                   Outcome(Termination.BLOCKED, Color.WHITE))

def _repetition_key(white: int, black: int, side: int) -> int:
    """Points and side to move (its side index).  Triangle owners need no
    bits: the history is cleared whenever a triangle is claimed (§7), so they
    are equal within it."""
    return white | black << 19 | side << 38


@lru_cache(maxsize=1 << 14)
def _complete_bigs(owned: int) -> int:
    """How many size-2 triangles have all 4 unit triangles in ``owned``."""
    return sum(1 for big in BIG_MASKS if owned & big == big)


@lru_cache(maxsize=1 << 14)
def _untouched_bigs(owned: int) -> int:
    """How many size-2 triangles have none of their unit triangles in ``owned``."""
    return sum(1 for big in BIG_MASKS if not owned & big)


def _score(captured: int, owned: int) -> int:
    """§6: 1 per captured piece, 5 per unit triangle, 20 per complete size-2 triangle."""
    return (
        captured + TRIANGLE_POINTS * owned.bit_count()
        + BIG_TRIANGLE_POINTS * _complete_bigs(owned)
    )


class TalismanPosition(Position):
    """An immutable Talisman position (see the module docstring for the bits)."""

    __slots__ = (
        "_white", "_black", "_owned_white", "_owned_black", "_captured_white",
        "_captured_black", "_side", "_ply", "_no_claim", "_history",
        "_scores", "_moves", "_ending",
    )

    def __init__(
        self, white: int, black: int, owned_white: int, owned_black: int,
        captured_white: int, captured_black: int, side: int, ply: int,
        no_claim: int, history: tuple[int, ...], scores: tuple[int, int] | None = None,
    ):
        self._white = white
        self._black = black
        self._owned_white = owned_white
        self._owned_black = owned_black
        self._captured_white = captured_white
        self._captured_black = captured_black
        self._side = side  # the side index of the side to move (0 White, 1 Black)
        self._ply = ply
        self._no_claim = no_claim
        # Repetition keys since the last triangle claim (or the position
        # string), the current position's key last.
        self._history = history
        # ``scores``: the caller's, when it knows them (play passes its own on
        # when the move neither captured nor claimed)
        self._scores = scores or (
            _score(captured_white, owned_white), _score(captured_black, owned_black))
        self._moves: tuple[str, ...] | None = None
        # The endings of §8 that come before "blocked": every position is
        # asked for its verdict, so it is worked out once, here.
        self._ending = self._rule_ending()

    # -- the interface -----------------------------------------------------

    @property
    def ply(self) -> int:
        return self._ply

    @property
    def in_placement(self) -> bool:
        """True during the first 12 plies (§4)."""
        return self._ply < PLACEMENT_PLIES

    @property
    def no_claim_plies(self) -> int:
        """Consecutive movement plies without a triangle claimed (§8)."""
        return self._no_claim

    def _mine_theirs(self) -> tuple[int, int]:
        """(the side to move's pieces, the other side's)."""
        if self._side:
            return self._black, self._white
        return self._white, self._black

    def legal_moves(self) -> list[str]:
        if self._moves is None:
            self._moves = () if self._ending is not None else self._generate()
        return list(self._moves)

    def _generate(self) -> tuple[str, ...]:
        """The move generator (§4, §5), whether or not the game is over."""
        occupied = self._white | self._black
        if self._ply < PLACEMENT_PLIES:
            open_points = placements(occupied)
            return tuple(name for bit, name in PLACEMENTS if bit & open_points)
        mine, theirs = (self._black, self._white) if self._side else (self._white, self._black)
        return tuple(movements(mine, theirs, ALL_POINTS & ~occupied))

    # -- the check beside the generator --
    #
    # A match plays the engines' moves on positions that never list theirs,
    # and asks every position for its verdict.  Listing the moves there
    # (_generate) would cost about as much again as the rest of a ply
    # (bench/README.md, "Legality"), so these two checks stay, here and
    # nowhere else: _has_move says whether any move exists, _allows decides
    # one move from its table entry.  test_games_properties pins both to the
    # generator on positions that never listed their moves.

    def _has_move(self) -> bool:
        """Whether _generate() is not empty: a placement needs an empty edge
        point, a piece an empty neighbour or a run of opponent pieces with an
        empty point just after it (§4, §5)."""
        if self._moves is not None:
            return bool(self._moves)
        occupied = self._white | self._black
        if self._ply < PLACEMENT_PLIES:
            return bool(placements(occupied))
        mine, theirs = (self._black, self._white) if self._side else (self._white, self._black)
        empty = ALL_POINTS & ~occupied
        rest = mine
        while rest:
            low = rest & -rest
            rest ^= low
            around, _, jump_rays = STEPS_OF_BIT[low]
            if empty & around:  # a step
                return True
            opponents = theirs & around
            if opponents:
                for ray in jump_rays[opponents]:  # a jump: a run of theirs, then empty
                    for point, _name in ray:
                        if point & theirs:
                            continue
                        if point & empty:
                            return True
                        break
        return False

    def _allows(self, move: str, entry: _MoveEntry) -> bool:
        """Whether ``move`` (canonical, with its table entry) is in
        _generate(): in the listed moves when they are listed, else from the
        entry (the moving piece is the mover's, the target empty, every point
        jumped over the opponent's)."""
        if self._moves is not None:
            return move in self._moves
        if self._ending is not None:
            return False
        white, black = self._white, self._black
        if self._ply < PLACEMENT_PLIES:
            return not entry.source and bool(entry.target & placements(white | black))
        mine, theirs = (black, white) if self._side else (white, black)
        source, target, jumped = entry.source, entry.target, entry.jumped
        return bool(source & mine and target & ALL_POINTS & ~(white | black)
                    and jumped & theirs == jumped)

    def play(self, move: str) -> TalismanPosition:
        entry = MOVE_TABLE.get(move)
        moves = self._moves
        # (self._allows(move, entry), with its first case written out:
        # playouts and perft list the moves of every position they play from)
        if entry is None or not (move in moves if moves is not None else self._allows(move, entry)):
            move = self.parse_move(move)  # another spelling, or raises with the reason
            entry = MOVE_TABLE[move]
        side = self._side
        white, black = self._white, self._black
        mine, theirs = (black, white) if side else (white, black)
        source, target, jumped, captured, claimable = entry
        if self._ply < PLACEMENT_PLIES:
            mine |= target
            if side:
                black = mine
            else:
                white = mine
            key = _repetition_key(white, black, 1 - side)
            return TalismanPosition(
                white, black, self._owned_white, self._owned_black, 0, 0,
                1 - side, self._ply + 1, 0, (key,), self._scores,
            )
        mine = (mine ^ source) | target | jumped
        theirs &= ~jumped
        owned_white, owned_black = self._owned_white, self._owned_black
        owned = owned_white | owned_black
        claimed = 0
        for bit, corners in claimable:  # §6: claim every completed neutral triangle
            if mine & corners == corners and not bit & owned:
                claimed |= bit
        captured_white, captured_black = self._captured_white, self._captured_black
        if side:
            white, black = theirs, mine
            owned_black |= claimed
            captured_black += captured
        else:
            white, black = mine, theirs
            owned_white |= claimed
            captured_white += captured
        key = _repetition_key(white, black, 1 - side)
        history: tuple[int, ...]
        if claimed:
            no_claim, history = 0, (key,)
        else:
            no_claim, history = self._no_claim + 1, self._history + (key,)
        return TalismanPosition(
            white, black, owned_white, owned_black, captured_white, captured_black,
            1 - side, self._ply + 1, no_claim, history,
            None if claimed or captured else self._scores,
        )

    def outcome(self) -> Outcome | None:
        if self._ending is not None:
            return self._ending
        if not self._has_move():  # §8: blocked, checked last
            return _BLOCKED[self._side]
        return None

    def _rule_ending(self) -> Outcome | None:
        """The endings of §8 that come before "blocked", in their order."""
        white_score, black_score = self._scores
        owned = self._owned_white | self._owned_black
        if white_score == black_score:
            winner = None
        elif white_score > black_score:
            winner = Color.WHITE
            lead, trail = white_score, black_score
            lead_owned, lead_pieces = self._owned_white, self._white
        else:
            winner = Color.BLACK
            lead, trail = black_score, white_score
            lead_owned, lead_pieces = self._owned_black, self._black
        if owned == ALL_TRIANGLES:
            return Outcome(Termination.ALL_TRIANGLES, winner)
        if winner is not None:
            reachable = (
                trail
                + TRIANGLE_POINTS * (24 - owned.bit_count())
                + lead_pieces.bit_count()
            )
            # the size-2 triangles' share is looked up only when the rest falls short
            if reachable < lead and (
                reachable + BIG_TRIANGLE_POINTS * _untouched_bigs(lead_owned) < lead
            ):
                return Outcome(Termination.CANNOT_CATCH_UP, winner)
        if self._history.count(self._history[-1]) >= 3:
            return Outcome(Termination.REPETITION, winner)
        if self._no_claim >= NO_PROGRESS_PLIES:
            return Outcome(Termination.NO_PROGRESS, winner)
        return None

    def scores(self) -> tuple[int, int]:
        return self._scores

    def parse_move(self, text: str) -> str:
        """The canonical move for ``text`` (case and spaces around ``-`` are
        forgiven) if it is legal here, or IllegalMoveError saying exactly why
        not (§9)."""
        move = re.sub(r"\s*-\s*", "-", text.strip()).upper()
        if self.outcome() is not None:
            raise IllegalMoveError(text, "the game is already over")
        if not _MOVE_RE.fullmatch(move):
            raise IllegalMoveError(
                text, "malformed move: expected a point A-S (placement) or FROM-TO such as E-B"
            )
        entry = MOVE_TABLE.get(move)
        if entry is not None and self._allows(move, entry):
            return move
        raise IllegalMoveError(text, self._refusal(move))

    def _refusal(self, move: str) -> str:
        """Why ``move`` (well formed) is illegal here: the first rule it breaks."""
        occupied = self._white | self._black
        if self._ply < PLACEMENT_PLIES:
            if "-" in move:
                return (f"placement phase (ply {self._ply + 1} of {PLACEMENT_PLIES}): "
                        "place a piece on an empty edge point, e.g. 'A'")
            if move not in EDGE_POINTS:
                return f"{move} is not an edge point; pieces are placed on {' '.join(EDGE_POINTS)}"
            return f"point {move} is occupied"
        if "-" not in move:
            return (f"placement is over (it lasts {PLACEMENT_PLIES} plies); "
                    "move a piece FROM-TO, e.g. 'E-B'")
        source, target = move.split("-")
        if source == target:
            return "FROM and TO are the same point"
        mine, theirs = self._mine_theirs()
        if not mine >> INDEX[source] & 1:
            whose = f"{self.to_move.other.value}'s piece" if theirs >> INDEX[source] & 1 else "no piece"
            return f"{source} holds {whose}, not a {self.to_move.value} piece"
        if occupied >> INDEX[target] & 1:
            return f"point {target} is occupied"
        if move not in MOVE_TABLE:
            return f"{source} and {target} are neither adjacent nor on a common line"
        for point in _between(source, target):
            bit = 1 << INDEX[point]
            if bit & mine:
                return f"cannot jump over own piece on {point}"
            if not bit & theirs:
                return f"cannot jump over empty point {point}"
        return "not a legal move in this position"  # pragma: no cover - the rules agree

    def fen(self) -> str:
        """§10: ``points triangles side captures no-claim ply``."""
        points = "/".join(
            "".join(self._point_char(INDEX[p]) for p in row) for row in ROWS
        )
        triangles = "/".join(
            "".join(self._triangle_char(t) for t in band) for band in _TRIANGLE_BANDS
        )
        side = SIDE_LETTERS[self._side]
        return (
            f"{points} {triangles} {side} {self._captured_white}/{self._captured_black}"
            f" {self._no_claim} {self._ply}"
        )

    def _point_char(self, index: int) -> str:
        if self._white >> index & 1:
            return "w"
        if self._black >> index & 1:
            return "b"
        return "."

    def _triangle_char(self, index: int) -> str:
        if self._owned_white >> index & 1:
            return "w"
        if self._owned_black >> index & 1:
            return "b"
        return "."

    def pieces(self) -> dict[str, Color]:
        result = {}
        for i, point in enumerate(POINTS):
            if self._white >> i & 1:
                result[point] = Color.WHITE
            elif self._black >> i & 1:
                result[point] = Color.BLACK
        return result

    def triangle_owners(self) -> dict[str, Color]:
        """Owned unit triangles by name (corners in alphabetical order, e.g. ``EFJ``)."""
        result = {}
        for t, name in enumerate(UNIT_TRIANGLES):
            if self._owned_white >> t & 1:
                result[name] = Color.WHITE
            elif self._owned_black >> t & 1:
                result[name] = Color.BLACK
        return result

    def diagram(self) -> str:
        """The hexagon: ``W``/``B`` pieces, ``.`` empty points, ``w``/``b``
        inside owned triangles; the point names alongside; then the scores."""
        width = 2 * max(X_OF.values()) + 1
        board = [[" "] * width for _ in range(2 * len(ROWS) - 1)]
        names = [[" "] * width for _ in range(2 * len(ROWS) - 1)]
        for point in POINTS:
            row, col = 2 * ROW_OF[point], 2 * X_OF[point]
            board[row][col] = self._point_char(INDEX[point]).upper()
            names[row][col] = point
        for a, b in ADJACENT:
            a, b = sorted((a, b), key=lambda p: (ROW_OF[p], X_OF[p]))
            if ROW_OF[a] == ROW_OF[b]:
                cells = range(2 * X_OF[a] + 1, 2 * X_OF[b])
                row = 2 * ROW_OF[a]
                for grid in (board, names):
                    for col in cells:
                        grid[row][col] = "-"
            else:
                mark = "/" if X_OF[b] < X_OF[a] else "\\"
                for grid in (board, names):
                    grid[2 * ROW_OF[a] + 1][X_OF[a] + X_OF[b]] = mark
        for t, corners in enumerate(UNIT_TRIANGLES):
            row = 2 * min(ROW_OF[p] for p in corners) + 1
            col = 2 * sum(X_OF[p] for p in corners) // 3
            board[row][col] = self._triangle_char(t).replace(".", " ")
        lines = [
            ("".join(b).ljust(width + 6) + "".join(n)).rstrip()
            for b, n in zip(board, names, strict=False)
        ]
        white_score, black_score = self.scores()
        phase = "placement" if self.in_placement else "movement"
        lines.append("")
        lines.append(
            f"{self.to_move.value} to move, ply {self._ply} ({phase}), "
            f"no claim for {self._no_claim} plies"
        )
        lines.append(
            f"score: white {white_score} ({self._captured_white} captured), "
            f"black {black_score} ({self._captured_black} captured)"
        )
        return "\n".join(lines)


def _between(source: str, target: str) -> str:
    """The points strictly between two points of a common line."""
    for line in LINES:
        if source in line and target in line:
            i, j = line.index(source), line.index(target)
            return line[i + 1:j] if i < j else line[j + 1:i][::-1]
    return ""


_TRIANGLE_BANDS: Final = tuple(
    tuple(t for t, corners in enumerate(UNIT_TRIANGLES) if min(ROW_OF[p] for p in corners) == band)
    for band in range(len(ROWS) - 1)
)

# ---------------------------------------------------------------------------
# The game and its position strings
# ---------------------------------------------------------------------------


class TalismanGame(Game):
    name = "talisman"
    description = "hexagon of 19 points: jump to turn pieces over, claim triangles for points"
    first = Color.WHITE
    has_scores = True

    def start(self) -> TalismanPosition:
        return _START

    def from_fen(self, fen: str) -> TalismanPosition:
        """Parse ``points triangles side captures no-claim ply`` (§10)."""
        fields = fen.split()

        def bad(reason: str) -> InvalidFenError:
            return InvalidFenError(fen, reason)

        if len(fields) != 6:
            raise bad(
                "expected 6 fields (points triangles side captures no-claim ply), "
                f"got {len(fields)}"
            )
        points, triangles, side, captures, no_claim_text, ply_text = fields
        white, black = self._parse_points(points, bad)
        owned_white, owned_black = self._parse_triangles(triangles, bad)
        if side not in ("w", "b"):
            raise bad(f"side to move must be 'w' or 'b', not {side!r}")
        to_move = SIDE_LETTERS.index(side)
        match = re.fullmatch(r"(\d{1,4})/(\d{1,4})", captures)
        if not match:
            raise bad(f"captures must be WHITE/BLACK counts such as 0/0, not {captures!r}")
        captured_white, captured_black = int(match[1]), int(match[2])
        no_claim = self._parse_count(no_claim_text, "no-claim counter", bad)
        ply = self._parse_count(ply_text, "ply", bad)
        if to_move != ply % 2:
            raise bad(
                f"at ply {ply} {'white' if ply % 2 == 0 else 'black'} is to move "
                "(white moves on even plies)"
            )
        n_white, n_black = white.bit_count(), black.bit_count()
        if ply <= PLACEMENT_PLIES:
            stage = f"ply {ply} (placement not over before ply {PLACEMENT_PLIES})"
            if ply == PLACEMENT_PLIES:
                stage = f"ply {ply} (no movement ply played yet)"
            interior = (white | black) & ~EDGE_MASK
            if interior:
                first = POINTS[(interior & -interior).bit_length() - 1]
                raise bad(f"at {stage} only edge points hold pieces, but {first} does")
            if (n_white, n_black) != ((ply + 1) // 2, ply // 2):
                raise bad(
                    f"at {stage} white has placed {(ply + 1) // 2} and black {ply // 2} pieces, "
                    f"but the board has {n_white} white and {n_black} black"
                )
            if captured_white or captured_black:
                raise bad(f"at {stage} nothing can have been captured, captures are {captures}")
            if owned_white | owned_black:
                raise bad(f"at {stage} no triangle can be owned")
        else:
            if n_white + n_black != 2 * 6:
                raise bad(
                    f"the movement phase always has 12 pieces on the board, not {n_white + n_black}"
                )
            if captured_white - captured_black != n_white - 6:
                raise bad(
                    f"captures {captures} do not match the board: white has {n_white} pieces, "
                    f"so white's captures minus black's must be {n_white - 6}"
                )
        movement_plies = max(0, ply - PLACEMENT_PLIES)
        if no_claim > min(movement_plies, NO_PROGRESS_PLIES):
            limit = (
                f"the {movement_plies} movement plies played"
                if movement_plies < NO_PROGRESS_PLIES
                else f"{NO_PROGRESS_PLIES}, where the game ends"
            )
            raise bad(f"no-claim counter {no_claim} exceeds {limit}")
        owned = owned_white | owned_black
        for t, corners in enumerate(TRIANGLE_MASKS):
            if owned >> t & 1:
                continue
            for colour, mask in (("white", white), ("black", black)):
                if mask & corners == corners:
                    raise bad(
                        f"neutral triangle {UNIT_TRIANGLES[t]} has {colour} pieces on all three "
                        "corners; it would have been claimed"
                    )
        key = _repetition_key(white, black, to_move)
        return TalismanPosition(
            white, black, owned_white, owned_black, captured_white, captured_black,
            to_move, ply, no_claim, (key,),
        )

    @staticmethod
    def _parse_points(text: str, bad) -> tuple[int, int]:
        rows = text.split("/")
        if len(rows) != len(ROWS):
            raise bad(
                f"points: expected 5 rows separated by '/' (3/4/5/4/3 points), got {len(rows)}"
            )
        white = black = 0
        for number, (row, names) in enumerate(zip(rows, ROWS, strict=False), start=1):
            if len(row) != len(names):
                raise bad(
                    f"points: row {number} ({names[0]}-{names[-1]}) needs {len(names)} "
                    f"characters, got {row!r}"
                )
            for char, point in zip(row, names, strict=False):
                if char == "w":
                    white |= 1 << INDEX[point]
                elif char == "b":
                    black |= 1 << INDEX[point]
                elif char != ".":
                    raise bad(f"points: {char!r} on point {point}; use 'w', 'b' or '.'")
        return white, black

    @staticmethod
    def _parse_triangles(text: str, bad) -> tuple[int, int]:
        bands = text.split("/")
        sizes = "/".join(str(len(band)) for band in _TRIANGLE_BANDS)
        if len(bands) != len(_TRIANGLE_BANDS):
            raise bad(
                f"triangles: expected 4 bands separated by '/' ({sizes} triangles), "
                f"got {len(bands)}"
            )
        owned_white = owned_black = 0
        for number, (band, indices) in enumerate(zip(bands, _TRIANGLE_BANDS, strict=False), start=1):
            if len(band) != len(indices):
                raise bad(
                    f"triangles: band {number} needs {len(indices)} characters, got {band!r}"
                )
            for char, t in zip(band, indices, strict=False):
                if char == "w":
                    owned_white |= 1 << t
                elif char == "b":
                    owned_black |= 1 << t
                elif char != ".":
                    raise bad(
                        f"triangles: {char!r} on triangle {UNIT_TRIANGLES[t]}; use 'w', 'b' or '.'"
                    )
        return owned_white, owned_black

    @staticmethod
    def _parse_count(text: str, what: str, bad) -> int:
        if not re.fullmatch(r"\d{1,6}", text):
            raise bad(f"{what} must be a non-negative integer, not {text!r}")
        return int(text)


GAME: Final = TalismanGame()
TalismanPosition.game = GAME
_START: Final = TalismanPosition(0, 0, 0, 0, 0, 0, GAME.first.side, 0, 0,
                                 (_repetition_key(0, 0, GAME.first.side),))
