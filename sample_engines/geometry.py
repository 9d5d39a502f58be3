"""Board geometry of the four games, derived from their cell names and rules.

The referee (``arbiter.games``) keeps its tables private; the sample engines
need only a little geometry for their evaluations, so it is rebuilt here from
the rules in ``specs/games/*.md``: cell names encode coordinates.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple


class Board(NamedTuple):
    cells: tuple[str, ...]
    neighbours: dict[str, tuple[str, ...]]


# --- Troll (specs/games/troll.md): 8x8, files a-h, ranks 1-8 ----------------------

TROLL_FILES = "abcdefgh"


@cache
def troll_board() -> Board:
    """Orthogonal adjacency: the one that counts for connection."""
    cells = tuple(f"{f}{r}" for r in range(1, 9) for f in TROLL_FILES)
    neighbours: dict[str, tuple[str, ...]] = {}
    for cell in cells:
        fi, rank = TROLL_FILES.index(cell[0]), int(cell[1:])
        around = []
        for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            f, r = fi + df, rank + dr
            if 0 <= f < 8 and 1 <= r <= 8:
                around.append(f"{TROLL_FILES[f]}{r}")
        neighbours[cell] = tuple(around)
    return Board(cells, neighbours)


def troll_edges(white: bool) -> tuple[frozenset[str], frozenset[str]]:
    """White connects rank 1 to rank 8, Black file a to file h."""
    if white:
        return (frozenset(f"{f}1" for f in TROLL_FILES), frozenset(f"{f}8" for f in TROLL_FILES))
    return (frozenset(f"a{r}" for r in range(1, 9)), frozenset(f"h{r}" for r in range(1, 9)))


# --- Atoll (specs/games/atoll.md): hex columns a-m --------------------------------

ATOLL_COLUMNS = "abcdefghijklm"
_ATOLL_ROWS = {"a": (3, 10), "m": (3, 10), "g": (2, 11)}
for _c in "bdfhjl":
    _ATOLL_ROWS[_c] = (1, 11)
for _c in "ceik":
    _ATOLL_ROWS[_c] = (1, 12)


@cache
def atoll_board() -> Board:
    """Columns b d f h j l sit half a cell higher: their side neighbours are at
    rows n and n+1; those of a c e g i k m at rows n-1 and n."""
    cells = tuple(f"{c}{n}" for c in ATOLL_COLUMNS
                  for n in range(_ATOLL_ROWS[c][0], _ATOLL_ROWS[c][1] + 1))
    present = set(cells)
    neighbours: dict[str, tuple[str, ...]] = {}
    for cell in cells:
        ci, n = ATOLL_COLUMNS.index(cell[0]), int(cell[1:])
        side_rows = (n, n + 1) if ci % 2 == 1 else (n - 1, n)
        around = [f"{cell[0]}{n - 1}", f"{cell[0]}{n + 1}"]
        for dc in (-1, 1):
            if 0 <= ci + dc < len(ATOLL_COLUMNS):
                around += [f"{ATOLL_COLUMNS[ci + dc]}{row}" for row in side_rows]
        neighbours[cell] = tuple(c for c in around if c in present)
    return Board(cells, neighbours)


def _cells(spec: str) -> frozenset[str]:
    return frozenset(spec.split())


#: The islands by colour: two opposite pairs each (North-South, East-West).
ATOLL_ISLAND_PAIRS = {
    "black": (
        (_cells("b11 c12 d11 e12 f11"), _cells("h1 i1 j1 k1 l1")),
        (_cells("m7 m8 m9 m10"), _cells("a3 a4 a5 a6")),
    ),
    "white": (
        (_cells("h11 i12 j11 k12 l11"), _cells("b1 c1 d1 e1 f1")),
        (_cells("m3 m4 m5 m6"), _cells("a7 a8 a9 a10")),
    ),
}


# --- Nine Men's Morris (specs/games/morris.md) ------------------------------------

MORRIS_MILLS: tuple[tuple[str, str, str], ...] = tuple(
    tuple(line.split()) for line in (  # type: ignore[misc]
        "a1 d1 g1", "b2 d2 f2", "c3 d3 e3", "a4 b4 c4", "e4 f4 g4", "c5 d5 e5", "b6 d6 f6",
        "a7 d7 g7", "a1 a4 a7", "b2 b4 b6", "c3 c4 c5", "d1 d2 d3", "d5 d6 d7", "e3 e4 e5",
        "f2 f4 f6", "g1 g4 g7",
    )
)


@cache
def morris_board() -> Board:
    """Adjacent points are consecutive points of a mill line."""
    cells = sorted({p for mill in MORRIS_MILLS for p in mill})
    neighbours: dict[str, set[str]] = {p: set() for p in cells}
    for a, b, c in MORRIS_MILLS:
        neighbours[a].add(b)
        neighbours[b].update((a, c))
        neighbours[c].add(b)
    return Board(tuple(cells), {p: tuple(sorted(n)) for p, n in neighbours.items()})


# --- Talisman (specs/games/talisman.md): 19 points A-S ----------------------------

TALISMAN_ROWS = ("ABC", "DEFG", "HIJKL", "MNOP", "QRS")


@cache
def _talisman_coords() -> dict[str, tuple[int, int]]:
    """(row, x) with x in half-steps: rows of 3,4,5,4,3 centred."""
    coords = {}
    for row, letters in enumerate(TALISMAN_ROWS):
        offset = 5 - len(letters)
        for i, letter in enumerate(letters):
            coords[letter] = (row, offset + 2 * i)
    return coords


@cache
def talisman_board() -> Board:
    coords = _talisman_coords()
    at = {xy: p for p, xy in coords.items()}
    neighbours = {}
    for point, (row, x) in coords.items():
        around = [(row, x - 2), (row, x + 2), (row - 1, x - 1), (row - 1, x + 1),
                  (row + 1, x - 1), (row + 1, x + 1)]
        neighbours[point] = tuple(at[xy] for xy in around if xy in at)
    return Board(tuple(sorted(coords)), neighbours)


@cache
def talisman_triangles() -> tuple[frozenset[str], ...]:
    """The 24 unit triangles, each as its three corner points."""
    coords = _talisman_coords()
    at = {xy: p for p, xy in coords.items()}
    found = set()
    for point, (row, x) in coords.items():
        for corners in (((row + 1, x - 1), (row + 1, x + 1)), ((row, x + 2), (row + 1, x + 1))):
            if all(c in at for c in corners):
                found.add(frozenset((point, at[corners[0]], at[corners[1]])))
    return tuple(sorted(found, key=sorted))
