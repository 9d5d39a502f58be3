"""Troll: Hex meets Othello on an 8x8 board (rules: ``specs/games/troll.md``).

White owns ranks 1 and 8, Black owns files a and h, the corners belong to both.
A move drops a stone on an empty cell and flips every bracketed line of enemy
stones, Othello style.  The mover wins as soon as an orthogonal chain of his
stones joins his two edges.

The board is two 64-bit integers (one per colour); cell ``a1`` is bit 0,
``h1`` bit 7, ``a8`` bit 56 (index = 8 * (rank - 1) + file).  Everything that
depends only on a cell (rays, neighbour masks, edge masks) is computed once at
import.  Legal drops are generated for the whole board at once, Othello
style, with shifts of the bitboards; a drop walks at most 8 precomputed rays;
the win test is a bitboard flood fill from the stones the move changed.
"""

from __future__ import annotations

import re

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

FILES = "abcdefgh"
CELLS: tuple[str, ...] = tuple(f"{f}{r}" for r in range(1, 9) for f in FILES)
INDEX: dict[str, int] = {name: i for i, name in enumerate(CELLS)}
BIT: tuple[int, ...] = tuple(1 << i for i in range(64))
FULL = (1 << 64) - 1

RANK_1 = 0xFF
RANK_8 = 0xFF << 56
FILE_A = sum(BIT[8 * r] for r in range(8))
FILE_H = FILE_A << 7
CORNERS = BIT[0] | BIT[7] | BIT[56] | BIT[63]
NOT_FILE_A = FULL & ~FILE_A
NOT_FILE_H = FULL & ~FILE_H

# Everything per side is indexed by the side index (0 White, 1 Black: base.COLORS).
# The two edges each side must join (specs/games/troll.md §2).
EDGES = ((RANK_1, RANK_8), (FILE_A, FILE_H))
# Cells where a drop must flip (corners and the opponent's edges, §3); the
# rest (interior and own non-corner edge cells) are always open to a drop.
RESTRICTED = (CORNERS | FILE_A | FILE_H, CORNERS | RANK_1 | RANK_8)
FREE = (FULL & ~RESTRICTED[0], FULL & ~RESTRICTED[1])
EDGE_NAMES = (("rank 1", "rank 8"), ("file a", "file h"))

_DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))


def _rays(index: int) -> tuple[tuple[int, ...], ...]:
    """The lines from a cell to the board's edge, nearest cell first, as bits.
    Only lines of two or more cells can bracket anything."""
    file, rank = index % 8, index // 8
    rays = []
    for df, dr in _DIRECTIONS:
        ray = []
        f, r = file + df, rank + dr
        while 0 <= f < 8 and 0 <= r < 8:
            ray.append(BIT[8 * r + f])
            f, r = f + df, r + dr
        if len(ray) >= 2:
            rays.append(tuple(ray))
    return tuple(rays)


RAYS = tuple(_rays(i) for i in range(64))
# The first cell of every ray (a neighbour with room behind it): no enemy
# stone there means a drop cannot flip anything.
NEIGHBOURS8 = tuple(sum(ray[0] for ray in rays) for rays in RAYS)

_CELL_RE = re.compile(r"^[a-h][1-8]$")


# (rays going up the bits, rays going down), each ray one mask
RaySplit = tuple[tuple[int, ...], tuple[int, ...]]


def _bracket_rays(index: int) -> dict[int, RaySplit]:
    """For each set of enemy stones among a cell's ray-starting neighbours
    (a subset of NEIGHBOURS8[index]), the rays that start on one of them, as
    masks: (rays going up the bits, rays going down), each ray whole."""
    rays = [(ray[0], sum(ray), ray[0] > BIT[index]) for ray in RAYS[index]]
    around = NEIGHBOURS8[index]
    table: dict[int, RaySplit] = {}
    subset = around
    while True:  # every subset of `around`
        table[subset] = (tuple(r for near, r, up in rays if near & subset and up),
                         tuple(r for near, r, up in rays if near & subset and not up))
        if not subset:
            return table
        subset = (subset - 1) & around


# BRACKET_RAYS[index][enemy neighbours]: the rays flips() must walk.
BRACKET_RAYS = tuple(_bracket_rays(i) for i in range(64))


def flips(index: int, mine: int, theirs: int) -> int:
    """The enemy stones a drop on ``index`` flips (a bitmask, maybe 0).

    Only rays starting on an enemy stone can flip.  Along one, the first cell
    that is not the enemy's is the nearest set bit of ``ray & ~theirs`` (the
    lowest on a ray going up the bits, the highest going down); when it is the
    mover's, the ray's cells before it are a bracketed run."""
    enemy = NEIGHBOURS8[index] & theirs
    if not enemy:
        return 0
    flipped = 0
    up, down = BRACKET_RAYS[index][enemy]
    for ray in up:
        rest = ray & ~theirs
        stop = rest & -rest
        if stop & mine:
            flipped |= ray & (stop - 1)
    for ray in down:
        rest = ray & ~theirs
        if rest:
            stop = 1 << (rest.bit_length() - 1)
            if stop & mine:
                flipped |= ray & -(stop << 1)
    return flipped


def component(seed: int, stones: int) -> int:
    """The orthogonally connected part of ``stones`` that contains ``seed``."""
    group = seed
    while True:
        grown = (group | (group << 8) | (group >> 8)
                 | ((group & NOT_FILE_H) << 1) | ((group & NOT_FILE_A) >> 1)) & stones
        if grown == group:
            return group
        group = grown


def connects(stones: int, side: int, changed: int | None = None) -> bool:
    """Whether ``stones`` hold a chain joining ``side``'s two edges.

    With ``changed`` given, only chains through those stones are examined: a
    drop can only create a connection that runs through a stone it added or
    flipped (specs/games/troll.md §4)."""
    # A chain needs a stone on every rank (White) or every file (Black):
    # fold the board onto rank 1 or file a and look for a gap first.
    if side == 0:
        folded = stones | stones >> 4
        folded |= folded >> 2
        if (folded | folded >> 1) & FILE_A != FILE_A:
            return False
    else:
        folded = stones | stones >> 32
        folded |= folded >> 16
        if (folded | folded >> 8) & RANK_1 != RANK_1:
            return False
    edge_a, edge_b = EDGES[side]
    todo = stones if changed is None else changed
    while todo:
        group = component(todo & -todo, stones)
        if group & edge_a and group & edge_b:
            return True
        todo &= ~group
    return False


def _touching(stones: int) -> int:
    """Every cell next to (one of the 8 directions) a cell of ``stones``."""
    east = stones & NOT_FILE_H
    west = stones & NOT_FILE_A
    return FULL & (
        (stones << 8) | (stones >> 8) | (east << 1) | (west >> 1)
        | (east << 9) | (west << 7) | (east >> 7) | (west >> 9))


# Shifts that move a bitboard one step in each direction, with the mask a
# stone must lie in to move that way without wrapping around a rank.
_UP_SHIFTS = ((8, FULL), (1, NOT_FILE_H), (9, NOT_FILE_H), (7, NOT_FILE_A))  # << k
_DOWN_SHIFTS = ((8, FULL), (1, NOT_FILE_A), (9, NOT_FILE_A), (7, NOT_FILE_H))  # >> k


def bracketing(mine: int, theirs: int, targets: int) -> int:
    """The cells of ``targets`` where a drop would flip at least one stone.

    Othello-style move generation on whole bitboards: from every own stone,
    walk over runs of enemy stones in each direction; the cell just past a run
    brackets it."""
    found = 0
    for k, inside in _UP_SHIFTS:
        enemy = theirs & inside
        run = ((mine & inside) << k) & enemy
        if run:
            while True:
                longer = run | ((run << k) & enemy)
                if longer == run:
                    break
                run = longer
            found |= (run << k) & targets
    for k, inside in _DOWN_SHIFTS:
        enemy = theirs & inside
        run = ((mine & inside) >> k) & enemy
        if run:
            while True:
                longer = run | ((run >> k) & enemy)
                if longer == run:
                    break
                run = longer
            found |= (run >> k) & targets
    return found


def free_drops(side: int, white: int, black: int) -> int:
    """The empty cells open to ``side`` whatever they flip (§3): interior cells
    and its own edges' non-corner cells.  Part of drop_mask, and enough to
    tell that a drop exists."""
    return FREE[side] & ~(white | black)


def drop_mask(side: int, white: int, black: int) -> int:
    """The cells where ``side`` may drop, as a bitmask (specs/games/troll.md §3):
    every empty free cell, and the empty restricted cells where a drop flips.
    The move generator: legal_moves() lists it."""
    mine, theirs = (white, black) if side == 0 else (black, white)
    legal = free_drops(side, white, black)
    restricted = RESTRICTED[side] & ~(white | black)
    if restricted & _touching(theirs):
        legal |= bracketing(mine, theirs, restricted)
    return legal


def drop_flips(side: int, index: int, white: int, black: int) -> int | None:
    """The stones that ``side``'s drop on cell ``index`` flips (maybe 0), or
    None when the drop is illegal: drop_mask decided for one cell.

    This is the one check beside the move generator: play() and parse_move()
    use it on positions that never listed their moves (a match), where
    drop_mask() would cost several microseconds a ply more than this walk
    of one cell's rays (bench/README.md, "Legality").  test_games_properties
    pins it to drop_mask: play() accepts exactly the listed moves."""
    bit = BIT[index]
    if (white | black) & bit:
        return None
    mine, theirs = (white, black) if side == 0 else (black, white)
    flipped = flips(index, mine, theirs)
    if flipped or FREE[side] & bit:
        return flipped
    return None


# _BYTE_NAMES[rank][b]: the cells of that rank whose bits are set in byte b,
# so a mask becomes names in board order with eight lookups.
_BYTE_NAMES = tuple(
    tuple(tuple(CELLS[8 * rank + f] for f in range(8) if b >> f & 1) for b in range(256))
    for rank in range(8))


def cell_names(mask: int) -> list[str]:
    """The names of the cells in ``mask``, in board order (a1, b1, ..., h8)."""
    out: list[str] = []
    for rank in range(8):
        byte = (mask >> (8 * rank)) & 0xFF
        if byte:
            out += _BYTE_NAMES[rank][byte]
    return out


_CONNECTED = (Outcome(Termination.CONNECTION, Color.WHITE),
              Outcome(Termination.CONNECTION, Color.BLACK))  # by the winner's side index
_NO_MOVES = Outcome(Termination.NO_MOVES, None)


class TrollPosition(Position):
    """An immutable Troll position: both bitboards, the side to move, the ply.

    ``winner`` is the side index of the side whose drop made this position
    and joined its edges; legal moves are listed on first use and cached."""

    __slots__ = ("_white", "_black", "_side", "_ply", "_winner", "_legal")

    def __init__(self, white: int, black: int, side: int, ply: int, winner: int | None = None):
        self._white = white
        self._black = black
        self._side = side
        self._ply = ply
        self._winner = winner
        self._legal: list[str] | None = None

    # -- the interface -------------------------------------------------------
    @property
    def ply(self) -> int:
        return self._ply

    @property
    def white(self) -> int:
        """White's stones as a bitmask (bit 0 = a1, bit 63 = h8)."""
        return self._white

    @property
    def black(self) -> int:
        """Black's stones as a bitmask (bit 0 = a1, bit 63 = h8)."""
        return self._black

    def _legal_list(self) -> list[str]:
        legal = self._legal
        if legal is None:
            if self._winner is not None:
                legal = []
            else:
                legal = cell_names(drop_mask(self._side, self._white, self._black))
                if not legal and drop_mask(1 - self._side, self._white, self._black):
                    legal = ["pass"]
            self._legal = legal
        return legal

    def legal_moves(self) -> list[str]:
        return list(self._legal_list())

    def outcome(self) -> Outcome | None:
        if self._winner is not None:
            return _CONNECTED[self._winner]
        if self._legal is None and free_drops(self._side, self._white, self._black):
            return None  # a drop exists: no need to list them
        return None if self._legal_list() else _NO_MOVES

    def _flips(self, index: int) -> int | None:
        """What a drop on ``index`` flips, None when it is illegal here."""
        if self._winner is not None:
            return None
        return drop_flips(self._side, index, self._white, self._black)

    def play(self, move: str) -> TrollPosition:
        index = INDEX.get(move)
        flipped = None if index is None else self._flips(index)
        if index is None or flipped is None:  # pass, another spelling, or illegal
            move = self.parse_move(move)  # raises with the reason
            if move == "pass":
                return TrollPosition(self._white, self._black, 1 - self._side, self._ply + 1)
            index = INDEX[move]
            flipped = self._flips(index)
            assert flipped is not None, move  # parse_move accepts what _flips accepts
        side, changed = self._side, BIT[index] | flipped
        mine, theirs = (self._white, self._black) if side == 0 else (self._black, self._white)
        mine |= changed
        theirs &= ~flipped
        won = side if connects(mine, side, changed) else None
        if side == 0:
            return TrollPosition(mine, theirs, 1, self._ply + 1, won)
        return TrollPosition(theirs, mine, 0, self._ply + 1, won)

    def parse_move(self, text: str) -> str:
        move = text.strip().lower() if isinstance(text, str) else ""
        if move != "pass" and not _CELL_RE.match(move):
            raise IllegalMoveError(
                text, f"malformed move {text!r}: expected a cell a1-h8 (file a-h, rank 1-8) or 'pass'")
        outcome = self.outcome()
        if outcome is not None:
            raise IllegalMoveError(text, f"the game is already over ({_describe(outcome)})")
        legal = self._legal_list()
        if move == "pass":
            if legal == ["pass"]:
                return move
            raise IllegalMoveError(
                text, f"pass is only legal when no drop is ({self.to_move.value} has "
                f"{len(legal)} legal drop{'s' if len(legal) != 1 else ''})")
        index = INDEX[move]
        if self._flips(index) is not None:
            return move
        # Illegal: say why.
        bit, side = BIT[index], self._side
        if (self._white | self._black) & bit:
            raise IllegalMoveError(text, f"cell {move} is occupied")
        hint = (f"; {self.to_move.value} has no legal drop and must play 'pass'"
                if legal == ["pass"] else "")
        if CORNERS & bit:
            raise IllegalMoveError(
                text, f"a drop on the corner {move} must flip at least one stone{hint}")
        edge = EDGE_NAMES[1 - side][0 if EDGES[1 - side][0] & bit else 1]
        raise IllegalMoveError(
            text, f"a drop on the opponent's edge must flip at least one stone "
            f"({move} is on {edge}, which {COLORS[1 - side].value} owns, and flips nothing){hint}")

    def _char(self, index: int) -> str:
        """``W``, ``B`` or ``.`` for the cell ``index``."""
        bit = BIT[index]
        return "W" if self._white & bit else "B" if self._black & bit else "."

    def fen(self) -> str:
        board = "/".join(run_lengths("".join(self._char(8 * rank + file) for file in range(8)))
                         for rank in range(7, -1, -1))
        return f"{board} {SIDE_LETTERS[self._side]} {self._ply}"

    def pieces(self) -> dict[str, Color]:
        out = {}
        for i, name in enumerate(CELLS):
            if self._white & BIT[i]:
                out[name] = Color.WHITE
            elif self._black & BIT[i]:
                out[name] = Color.BLACK
        return out

    def diagram(self) -> str:
        """The grid with rank 8 on top, as in chess; W/B stones, '.' empty."""
        header = "    " + " ".join(FILES)
        lines = [header]
        for rank in range(7, -1, -1):
            cells = " ".join(self._char(8 * rank + file) for file in range(8))
            lines.append(f"{rank + 1:>2}  {cells}  {rank + 1}")
        lines.append(header)
        outcome = self.outcome()
        if outcome is None:
            lines.append(f"{self.to_move.value} to move, ply {self._ply}")
        else:
            lines.append(f"game over: {outcome.result} ({_describe(outcome)}), ply {self._ply}")
        lines.append("white joins ranks 1 and 8, black joins files a and h")
        return "\n".join(lines)

    # -- value semantics -----------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TrollPosition):
            return NotImplemented
        return (self._white, self._black, self._side, self._ply) == (
            other._white, other._black, other._side, other._ply)

    def __hash__(self) -> int:
        return hash((self._white, self._black, self._side, self._ply))


def _describe(outcome: Outcome) -> str:
    if outcome.winner is not None:  # the only ending with a winner is a connection
        return f"{outcome.winner.value} connected its edges"
    return "neither side has a legal drop: draw"


class TrollGame(Game):
    name = "troll"
    description = "Troll (J.-C. Rosa): 8x8, Othello flips, join your two edges orthogonally"
    first = Color.WHITE

    def start(self) -> TrollPosition:
        return TrollPosition(0, 0, self.first.side, 0)

    def from_fen(self, fen: str) -> TrollPosition:
        """Parse ``<ranks 8..1> <w|b> [<ply>]`` (specs/games/troll.md §7)."""
        if not isinstance(fen, str):
            raise InvalidFenError(str(fen), "a position string must be text")
        fields = fen.split()
        if len(fields) not in (2, 3):
            raise InvalidFenError(
                fen, f"expected 2 or 3 fields '<board> <w|b> [<ply>]', got {len(fields)}")
        board, side_text = fields[0], fields[1]
        rows = board.split("/")
        if len(rows) != 8:
            raise InvalidFenError(fen, f"the board needs 8 ranks separated by '/', got {len(rows)}")
        white = black = 0
        for row_number, row in enumerate(rows):
            rank = 8 - row_number
            file = 0
            for char in row:
                if char in "12345678":
                    file += int(char)
                elif char in "WB":
                    if file < 8:
                        if char == "W":
                            white |= BIT[8 * (rank - 1) + file]
                        else:
                            black |= BIT[8 * (rank - 1) + file]
                    file += 1
                else:
                    raise InvalidFenError(
                        fen, f"bad character {char!r} in rank {rank}: use W, B or a digit 1-8")
            if file != 8:
                raise InvalidFenError(fen, f"rank {rank} ({row!r}) describes {file} cells instead of 8")
        if side_text not in SIDE_LETTERS:
            raise InvalidFenError(fen, f"side to move must be 'w' or 'b', got {side_text!r}")
        side = SIDE_LETTERS.index(side_text)
        stones = (white | black).bit_count()
        if len(fields) == 3:
            if not fields[2].isdigit():
                raise InvalidFenError(fen, f"ply must be a non-negative integer, got {fields[2]!r}")
            ply = int(fields[2])
            if ply < stones:
                raise InvalidFenError(
                    fen, f"ply {ply} is less than the {stones} stones on the board "
                    "(every stone took a ply to drop)")
        else:
            ply = stones
        # At most one side can be connected on any board (§5), so only the
        # side to move needs checking before the side that just moved.
        if connects((white, black)[side], side):
            raise InvalidFenError(
                fen, f"the side to move ({COLORS[side].value}) already connects its edges; "
                "only the side that just moved can have a connection")
        winner = 1 - side if connects((white, black)[1 - side], 1 - side) else None
        return TrollPosition(white, black, side, ply, winner)


GAME = TrollGame()
TrollPosition.game = GAME
