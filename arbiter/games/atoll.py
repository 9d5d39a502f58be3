"""Atoll (Mark Steere, 2008): join two opposite islands (rules: ``specs/games/atoll.md``).

Hex cells in columns a-m; each player owns four islands on the rim and wins
by linking one opposite pair (North-South or East-West) with his stones.
Black moves first; White may answer the first stone with ``swap`` (pie rule).

Cells are numbered 0..139 in board order (a3..a10, b1..b11, ..., m3..m10) and
sets of cells are integer bitmasks.  A position keeps, besides the two
bitmasks, each side's groups (connected sets of his stones and islands): a
placement merges the groups that touch the new stone, and the win test is two
mask checks on the merged group.  No flood fill in the hot path.
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

COLUMNS = "abcdefghijklm"
# The rows of each column (counted from the bottom, specs/games/atoll.md §1).
ROWS: dict[str, range] = {
    "a": range(3, 11), "m": range(3, 11), "g": range(2, 12),
    **{c: range(1, 13) for c in "ceik"},
    **{c: range(1, 12) for c in "bdfhjl"},
}
CELLS: tuple[str, ...] = tuple(f"{c}{r}" for c in COLUMNS for r in ROWS[c])
INDEX: dict[str, int] = {name: i for i, name in enumerate(CELLS)}
BIT: tuple[int, ...] = tuple(1 << i for i in range(len(CELLS)))
ALL = (1 << len(CELLS)) - 1

# Everything per side is indexed by the side index (0 White, 1 Black: base.COLORS).


def _cells(*names: str) -> int:
    return sum(BIT[INDEX[n]] for n in names)


def _column(col: str, first: int, last: int) -> tuple[str, ...]:
    return tuple(f"{col}{r}" for r in range(first, last + 1))


# ISLANDS[side][part] for part in north, south, east, west (§2).
ISLAND_CELLS: dict[tuple[int, str], tuple[str, ...]] = {
    (1, "north"): ("b11", "c12", "d11", "e12", "f11"),
    (1, "south"): ("h1", "i1", "j1", "k1", "l1"),
    (1, "east"): _column("m", 7, 10),
    (1, "west"): _column("a", 3, 6),
    (0, "north"): ("h11", "i12", "j11", "k12", "l11"),
    (0, "south"): ("b1", "c1", "d1", "e1", "f1"),
    (0, "east"): _column("m", 3, 6),
    (0, "west"): _column("a", 7, 10),
}
ISLANDS = {key: _cells(*names) for key, names in ISLAND_CELLS.items()}
ISLAND_OF = {name: key for key, names in ISLAND_CELLS.items() for name in names}
ISLAND_STONES = tuple(  # all island cells of White (0) and Black (1)
    sum(mask for (side, _), mask in ISLANDS.items() if side == s) for s in (0, 1))
PLAYABLE = ALL & ~(ISLAND_STONES[0] | ISLAND_STONES[1])
PLAYABLE_CELLS: tuple[str, ...] = tuple(n for i, n in enumerate(CELLS) if PLAYABLE & BIT[i])
PAIRS = tuple(
    ((ISLANDS[s, "north"], ISLANDS[s, "south"]), (ISLANDS[s, "east"], ISLANDS[s, "west"]))
    for s in (0, 1))


def _neighbours(name: str) -> int:
    """(X,n±1); low columns (a c e g i k m) touch the adjacent columns at rows
    n-1 and n, high columns (b d f h j l) at rows n and n+1 (§1)."""
    col, row = COLUMNS.index(name[0]), int(name[1:])
    low = col % 2 == 0
    candidates = [(col, row - 1), (col, row + 1)]
    for dc in (-1, 1):
        for dr in ((-1, 0) if low else (0, 1)):
            candidates.append((col + dc, row + dr))
    mask = 0
    for c, r in candidates:
        if 0 <= c < 13:
            other = f"{COLUMNS[c]}{r}"
            if other in INDEX:
                mask |= BIT[INDEX[other]]
    return mask


NEIGHBOURS: tuple[int, ...] = tuple(_neighbours(n) for n in CELLS)
MIRROR: dict[str, str] = {n: f"{COLUMNS[12 - COLUMNS.index(n[0])]}{n[1:]}" for n in CELLS}

_CELL_RE = re.compile(r"^([a-z])(\d{1,2})$")


# _BYTE_NAMES[k][b]: the playable cells among bits 8k..8k+7 set in byte b,
# so a mask of empty cells becomes names in board order with 18 lookups.
_BYTE_NAMES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(tuple(CELLS[8 * k + f] for f in range(8)
                if b >> f & 1 and 8 * k + f < len(CELLS) and PLAYABLE & BIT[8 * k + f])
          for b in range(256))
    for k in range((len(CELLS) + 7) // 8))


def open_cells(white: int, black: int) -> int:
    """The cells a stone may go on (§3): the playable ones that are empty.
    With ``swap`` on ply 2, the whole move generator."""
    return PLAYABLE & ~(white | black)


def cell_names(cells: int) -> tuple[str, ...]:
    """The names of the playable cells in ``cells``, in board order."""
    free = cells & PLAYABLE
    names: list[str] = []
    for table in _BYTE_NAMES:
        names += table[free & 255]
        free >>= 8
    return tuple(names)


def groups_of(stones: int) -> tuple[int, ...]:
    """The connected groups of a set of cells (bitmasks)."""
    groups = []
    todo = stones
    while todo:
        group = frontier = todo & -todo
        while frontier:
            low = frontier & -frontier
            frontier ^= low
            fresh = NEIGHBOURS[low.bit_length() - 1] & stones & ~group
            group |= fresh
            frontier |= fresh
        groups.append(group)
        todo &= ~group
    return tuple(groups)


def joins(group: int, side: int) -> bool:
    """Whether a group links one of ``side``'s opposite island pairs."""
    (north, south), (east, west) = PAIRS[side]
    return bool(group & north and group & south) or bool(group & east and group & west)


def _winner_of(white: int, black: int) -> tuple[bool, bool]:
    return (any(joins(g, 0) for g in groups_of(white)),
            any(joins(g, 1) for g in groups_of(black)))


class AtollPosition(Position):
    """An immutable Atoll position.

    ``_stones`` and ``_groups`` are (White, Black) pairs; islands count as
    stones.  ``_empty`` is the tuple of empty playable cells in board order,
    made on the first call of legal_moves (a match never needs it).  ``_side``
    is the side index of the side to move, ``_winner`` that of the side whose
    stone joined two islands."""

    __slots__ = ("_stones", "_groups", "_side", "_ply", "_winner", "_empty")

    def __init__(self, stones: tuple[int, int], groups: tuple[tuple[int, ...], tuple[int, ...]],
                 side: int, ply: int, winner: int | None, empty: tuple[str, ...] | None = None):
        self._stones = stones
        self._groups = groups
        self._side = side
        self._ply = ply
        self._winner = winner
        self._empty = empty

    @classmethod
    def from_board(cls, white: int, black: int, side: int, ply: int,
                   winner: int | None = None) -> AtollPosition:
        return cls((white, black), (groups_of(white), groups_of(black)), side, ply, winner)

    # -- the interface -------------------------------------------------------
    @property
    def ply(self) -> int:
        return self._ply

    @property
    def white(self) -> int:
        """White's stones and islands as a bitmask over CELLS."""
        return self._stones[0]

    @property
    def black(self) -> int:
        """Black's stones and islands as a bitmask over CELLS."""
        return self._stones[1]

    @property
    def swap_available(self) -> bool:
        return self._ply == 1 and self._winner is None

    def legal_moves(self) -> list[str]:
        if self._winner is not None:
            return []
        empty = self._empty
        if empty is None:
            self._empty = empty = cell_names(open_cells(*self._stones))
        if self._ply == 1:
            return [*empty, "swap"]
        return list(empty)

    def outcome(self) -> Outcome | None:
        if self._winner is None:
            return None
        return Outcome(Termination.CONNECTION, COLORS[self._winner])

    def play(self, move: str) -> AtollPosition:
        index = INDEX.get(move)
        white, black = self._stones
        if (index is None or self._winner is not None
                or not BIT[index] & open_cells(white, black)):  # swap, another spelling, or illegal
            move = self.parse_move(move)  # raises with the reason
            if move == "swap":
                return self._swapped()
            index = INDEX[move]
        # The stone merges with the groups it touches; only that group can
        # join two islands (§5).
        bit, side = BIT[index], self._side
        touching = NEIGHBOURS[index]
        groups = self._groups[side]
        if touching & self._stones[side]:
            merged = bit
            kept = []
            for group in groups:
                if group & touching:
                    merged |= group
                else:
                    kept.append(group)
            kept.append(merged)
            won = side if joins(merged, side) else None
            groups = tuple(kept)
        else:  # a stone on its own: a new group, which joins nothing
            groups += (bit,)
            won = None
        if side == 0:
            return AtollPosition((white | bit, black), (groups, self._groups[1]),
                                 1, self._ply + 1, won)
        return AtollPosition((white, black | bit), (self._groups[0], groups),
                             0, self._ply + 1, won)

    def _swapped(self) -> AtollPosition:
        """Pie rule (§4): Black's one stone becomes a White stone on the mirror cell."""
        white, black = self._stones
        first = black & ~ISLAND_STONES[1]
        mirror = BIT[INDEX[MIRROR[CELLS[first.bit_length() - 1]]]]
        return AtollPosition.from_board(white | mirror, black & ~first, 1, self._ply + 1)

    def parse_move(self, text: str) -> str:
        move = text.strip().lower() if isinstance(text, str) else ""
        if move != "swap":
            match = _CELL_RE.match(move)
            if not match or match.group(1) not in COLUMNS:
                raise IllegalMoveError(
                    text, f"malformed move {text!r}: expected a cell such as e5 "
                    "(column a-m, then the row counted from the bottom) or 'swap'")
        if self._winner is not None:
            raise IllegalMoveError(
                text, f"the game is already over ({COLORS[self._winner].value} connected two islands)")
        if move == "swap":
            if self._ply != 1:
                raise IllegalMoveError(
                    text, f"swap is only allowed on ply 2 (White's first move); this would be ply {self._ply + 1}")
            return move
        if move not in INDEX:
            col = move[0]
            rows = ROWS[col]
            raise IllegalMoveError(
                text, f"there is no cell {move}: column {col} has rows {rows.start}-{rows.stop - 1}")
        if BIT[INDEX[move]] & open_cells(*self._stones):  # (the game is not over: checked above)
            return move
        # Illegal: say why.
        if move in ISLAND_OF:
            side, part = ISLAND_OF[move]
            raise IllegalMoveError(
                text, f"cell {move} is part of {COLORS[side].value}'s {part} island")
        raise IllegalMoveError(text, f"cell {move} is occupied")

    def fen(self) -> str:
        white, black = self._stones
        board = "/".join(
            run_lengths("".join("W" if white & BIT[INDEX[name]] else "B" if black & BIT[INDEX[name]]
                                else "." for name in _column_cells(column)))
            for column in COLUMNS)
        return f"{board} {SIDE_LETTERS[self._side]} {self._ply}"

    def pieces(self) -> dict[str, Color]:
        white, black = self._stones
        out = {}
        for i, name in enumerate(CELLS):
            if white & BIT[i]:
                out[name] = Color.WHITE
            elif black & BIT[i]:
                out[name] = Color.BLACK
        return out

    def diagram(self) -> str:
        """Hex columns side by side; b d f h j l drawn half a cell (one text
        line) higher.  Row numbers: left margin for a c e g i k m, right margin
        for b d f h j l.  B/W placed stones, b/w island stones, '.' empty."""
        white, black = self._stones
        height = 24  # text lines 0..23; row n of a low column sits on line 2*(12-n)+1
        grid = [[" "] * 13 for _ in range(height)]
        for col_index, col in enumerate(COLUMNS):
            low = col_index % 2 == 0
            for row in ROWS[col]:
                name = f"{col}{row}"
                bit = BIT[INDEX[name]]
                if white & bit:
                    char = "w" if name in ISLAND_OF else "W"
                elif black & bit:
                    char = "b" if name in ISLAND_OF else "B"
                else:
                    char = "."
                grid[2 * (12 - row) + (1 if low else 0)][col_index] = char
        lines = ["     " + "  ".join(COLUMNS)]
        for t in range(1, height):
            left = f"{12 - (t - 1) // 2:>2}" if t % 2 == 1 else "  "
            right = f"{12 - t // 2:>2}" if t % 2 == 0 else ""
            body = "  ".join(grid[t])
            lines.append(f"{left}   {body}  {right}".rstrip())
        lines.append("     " + "  ".join(COLUMNS))
        if self._winner is not None:
            lines.append(f"game over: {COLORS[self._winner].value} connected two islands, ply {self._ply}")
        else:
            extra = " (white may swap)" if self._ply == 1 else ""
            lines.append(f"{self.to_move.value} to move, ply {self._ply}{extra}")
        lines.append("B/W placed stones, b/w island stones; rows: left a c e g i k m, right b d f h j l")
        return "\n".join(lines)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AtollPosition):
            return NotImplemented
        return (self._stones, self._side, self._ply) == (other._stones, other._side, other._ply)

    def __hash__(self) -> int:
        return hash((self._stones, self._side, self._ply))


def _column_cells(column: str) -> list[str]:
    """The cells of a column, bottom row first (the order of §7)."""
    return [f"{column}{row}" for row in ROWS[column]]


START_WHITE = ISLAND_STONES[0]
START_BLACK = ISLAND_STONES[1]


class AtollGame(Game):
    name = "atoll"
    description = "Atoll (M. Steere): hex board, link two opposite islands of yours; pie rule"
    first = Color.BLACK

    def start(self) -> AtollPosition:
        return AtollPosition.from_board(START_WHITE, START_BLACK, self.first.side, 0)

    def from_fen(self, fen: str) -> AtollPosition:
        """Parse ``<columns a..m> <b|w> [<ply>]`` (specs/games/atoll.md §7)."""
        if not isinstance(fen, str):
            raise InvalidFenError(str(fen), "a position string must be text")
        fields = fen.split()
        if len(fields) not in (2, 3):
            raise InvalidFenError(
                fen, f"expected 2 or 3 fields '<board> <b|w> [<ply>]', got {len(fields)}")
        columns = fields[0].split("/")
        if len(columns) != 13:
            raise InvalidFenError(
                fen, f"the board needs 13 columns a-m separated by '/', got {len(columns)}")
        white = black = 0
        for col, text in zip(COLUMNS, columns, strict=False):
            rows = ROWS[col]
            cells = _column_cells(col)
            count = 0
            for token in re.findall(r"\d+|.", text):
                if token.isdigit():
                    if token.startswith("0"):
                        raise InvalidFenError(fen, f"bad run length {token!r} in column {col}")
                    count += int(token)
                    continue
                if token not in "WB":
                    raise InvalidFenError(
                        fen, f"bad character {token!r} in column {col}: use W, B or a number of empty cells")
                if count < len(cells):
                    if token == "W":
                        white |= BIT[INDEX[cells[count]]]
                    else:
                        black |= BIT[INDEX[cells[count]]]
                count += 1
            if count != len(cells):
                raise InvalidFenError(
                    fen, f"column {col} ({text!r}) describes {count} cells; it has {len(cells)} "
                    f"(rows {rows.start}-{rows.stop - 1})")
        for (side, part), names in ISLAND_CELLS.items():
            mine = (white, black)[side]
            for name in names:
                if not mine & BIT[INDEX[name]]:
                    raise InvalidFenError(
                        fen, f"cell {name} is on {COLORS[side].value}'s {part} island and must hold "
                        f"'{'WB'[side]}'")
        side_text = fields[1]
        if side_text not in SIDE_LETTERS:
            raise InvalidFenError(fen, f"side to move must be 'b' or 'w', got {side_text!r}")
        side = SIDE_LETTERS.index(side_text)
        placed_white = (white & PLAYABLE).bit_count()
        placed_black = (black & PLAYABLE).bit_count()
        # Black places on even plies, White on odd ones; a swap (ply 2 only)
        # turns Black's first stone into White's (§4, §7).
        ply = 2 * placed_white + (1 - side)
        if side == 1:
            allowed = (placed_white,) + ((placed_white - 1,) if placed_white >= 1 else ())
        else:
            allowed = (placed_white + 1,) + ((placed_white,) if placed_white >= 1 else ())
        if placed_black not in allowed:
            raise InvalidFenError(
                fen, f"{placed_black} black and {placed_white} white stones cannot occur with "
                f"{COLORS[side].value} to move: Black needs {' or '.join(map(str, allowed))} "
                "(one fewer than usual after a swap)")
        if len(fields) == 3:
            if not fields[2].isdigit():
                raise InvalidFenError(fen, f"ply must be a non-negative integer, got {fields[2]!r}")
            if int(fields[2]) != ply:
                raise InvalidFenError(
                    fen, f"ply {fields[2]} does not match the board: {placed_white} white stones "
                    f"with {COLORS[side].value} to move is ply {ply}")
        # At most one side can be connected on any board (§5).
        white_joined, black_joined = _winner_of(white, black)
        if (white_joined, black_joined)[side]:
            raise InvalidFenError(
                fen, f"the side to move ({COLORS[side].value}) already connects its islands; "
                "only the side that just moved can have a connection")
        winner = 1 - side if (white_joined or black_joined) else None
        return AtollPosition.from_board(white, black, side, ply, winner)


GAME = AtollGame()
AtollPosition.game = GAME
