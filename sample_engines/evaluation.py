"""Static evaluations of a position for one side, one per game.

Used by ``greedy`` (one ply of these) and by ``mcts`` (to score playouts cut
short).  They read only the :class:`~arbiter.games.Position` interface
(``pieces``, ``scores``, ``legal_moves``, ``outcome``) plus the geometry in
:mod:`sample_engines.geometry`.  Larger is better for ``color``; a won
position is :data:`WIN`, a lost one ``-WIN``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable

from arbiter.games import Color, Outcome, Position

from .geometry import (
    ATOLL_ISLAND_PAIRS,
    MORRIS_MILLS,
    atoll_board,
    talisman_board,
    talisman_triangles,
    troll_board,
    troll_edges,
)

WIN = 1_000_000.0

#: Connection distance when no path exists at all.
NO_PATH = 99


def outcome_value(outcome: Outcome, color: Color) -> float:
    if outcome.winner is None:
        return 0.0
    return WIN if outcome.winner is color else -WIN


def evaluate(position: Position, color: Color) -> float:
    """The value of ``position`` for ``color`` (terminal positions included)."""
    outcome = position.outcome()
    if outcome is not None:
        return outcome_value(outcome, color)
    return EVALUATORS[position.game.name](position, color)


class Graph:
    """A board as integer-indexed adjacency lists (fast searches)."""

    def __init__(self, neighbours: dict[str, tuple[str, ...]]):
        self.cells = tuple(neighbours)
        self.index = {cell: i for i, cell in enumerate(self.cells)}
        self.adjacent = tuple(tuple(self.index[n] for n in neighbours[c]) for c in self.cells)

    def ids(self, cells: Iterable[str]) -> tuple[int, ...]:
        return tuple(self.index[c] for c in cells)


_GRAPHS: dict[int, Graph] = {}


def graph_of(neighbours: dict[str, tuple[str, ...]]) -> Graph:
    graph = _GRAPHS.get(id(neighbours))
    if graph is None:
        graph = _GRAPHS[id(neighbours)] = Graph(neighbours)
    return graph


#: Evaluation units worth one "logit" of winning chance, per game: about one
#: step of connection distance, one Morris piece, a unit triangle.
WIN_SCALE = {"troll": 12.0, "atoll": 12.0, "morris": 120.0, "talisman": 40.0}


def win_probability(position: Position, color: Color) -> float:
    """The evaluation squashed into [0, 1] (exact for finished games)."""
    outcome = position.outcome()
    if outcome is not None:
        return 0.5 if outcome.winner is None else float(outcome.winner is color)
    value = EVALUATORS[position.game.name](position, color) / WIN_SCALE[position.game.name]
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, value))))


def connection_distance(
    neighbours: dict[str, tuple[str, ...]],
    own: set[str],
    blocked: set[str],
    sources: Iterable[str],
    targets: frozenset[str],
) -> int:
    """Fewest empty cells to fill to join ``sources`` to ``targets`` through
    ``own`` cells (0-1 breadth-first search; ``blocked`` cells are walls)."""
    graph = graph_of(neighbours)
    index = graph.index
    cost = bytearray(b"\x01") * len(graph.cells)  # 1: empty, 0: own, 2: wall
    for cell in own:
        cost[index[cell]] = 0
    for cell in blocked:
        cost[index[cell]] = 2
    goal = bytearray(len(graph.cells))
    for cell in targets:
        goal[index[cell]] = 1
    return _distance(graph.adjacent, cost, [index[c] for c in sources], goal)


def _distance(adjacent: tuple[tuple[int, ...], ...], cost: bytearray, sources: list[int],
              goal: bytearray) -> int:
    best = [NO_PATH] * len(cost)
    queue: deque[int] = deque()
    for cell in sources:
        c = cost[cell]
        if c < 2 and c < best[cell]:
            best[cell] = c
            if c == 0:
                queue.appendleft(cell)
            else:
                queue.append(cell)
    while queue:
        cell = queue.popleft()
        d = best[cell]
        if goal[cell]:
            return d
        for nxt in adjacent[cell]:
            c = cost[nxt]
            if c < 2:
                nd = d + c
                if nd < best[nxt]:
                    best[nxt] = nd
                    if c == 0:
                        queue.appendleft(nxt)
                    else:
                        queue.append(nxt)
    return NO_PATH


def _split(position: Position, color: Color) -> tuple[set[str], set[str]]:
    mine: set[str] = set()
    theirs: set[str] = set()
    for cell, owner in position.pieces().items():
        (mine if owner is color else theirs).add(cell)
    return mine, theirs


# --- Troll: connection distance and stones -------------------------------------------


def troll_distance(position: Position, color: Color) -> int:
    mine, theirs = _split(position, color)
    start, goal = troll_edges(color is Color.WHITE)
    return connection_distance(troll_board().neighbours, mine, theirs, start, goal)


def evaluate_troll(position: Position, color: Color) -> float:
    """Ten per step of connection distance ahead; stones (flips) as tie-break."""
    mine, theirs = _split(position, color)
    neighbours = troll_board().neighbours
    mine_start, mine_goal = troll_edges(color is Color.WHITE)
    their_start, their_goal = troll_edges(color is not Color.WHITE)
    d_mine = connection_distance(neighbours, mine, theirs, mine_start, mine_goal)
    d_theirs = connection_distance(neighbours, theirs, mine, their_start, their_goal)
    return 10.0 * (d_theirs - d_mine) + 0.5 * (len(mine) - len(theirs))


# --- Atoll: connection distance between opposite islands --------------------------------


def atoll_distance(position: Position, color: Color, mine: set[str], theirs: set[str]) -> int:
    neighbours = atoll_board().neighbours
    return min(
        connection_distance(neighbours, mine, theirs, a, b)
        for a, b in ATOLL_ISLAND_PAIRS[color.value]
    )


def evaluate_atoll(position: Position, color: Color) -> float:
    mine, theirs = _split(position, color)
    d_mine = atoll_distance(position, color, mine, theirs)
    d_theirs = atoll_distance(position, color.other, theirs, mine)
    return 10.0 * (d_theirs - d_mine)


# --- Nine Men's Morris: material, mills, threats, mobility --------------------------------


def _open_twos(mine: set[str], empty: set[str]) -> int:
    """Mill lines with two of ``mine`` and the third point empty."""
    count = 0
    for mill in MORRIS_MILLS:
        own = sum(p in mine for p in mill)
        if own == 2 and any(p in empty for p in mill):
            count += 1
    return count


def evaluate_morris(position: Position, color: Color) -> float:
    """Pieces on the board (100 each), closed mills, open twos; the
    opponent's immediate removal threats and mobility when it is his move."""
    mine, theirs = _split(position, color)
    points = {p for mill in MORRIS_MILLS for p in mill}
    empty = points - mine - theirs
    value = 100.0 * (len(mine) - len(theirs))
    value += 8.0 * (sum(all(p in mine for p in m) for m in MORRIS_MILLS)
                    - sum(all(p in theirs for p in m) for m in MORRIS_MILLS))
    value += 6.0 * (_open_twos(mine, empty) - _open_twos(theirs, empty))
    moves = position.legal_moves()
    threats = len({move.split("x")[0] for move in moves if "x" in move})
    mobility = len(moves)
    if position.to_move is color:
        value += 40.0 * threats + 1.0 * mobility
    else:
        value -= 40.0 * threats + 1.0 * mobility
    return value


# --- Talisman: score and triangle threats -------------------------------------------------


def _triangle_threats(mine: set[str], empty: set[str]) -> int:
    count = 0
    for triangle in talisman_triangles():
        own = len(triangle & mine)
        if own == 2 and len(triangle & empty) == 1:
            count += 1
    return count


def evaluate_talisman(position: Position, color: Color) -> float:
    """Ten per point of score lead, three per unit triangle one piece short."""
    mine, theirs = _split(position, color)
    empty = set(talisman_board().cells) - mine - theirs
    white, black = position.scores() or (0, 0)
    lead = white - black if color is Color.WHITE else black - white
    return 10.0 * lead + 3.0 * (_triangle_threats(mine, empty) - _triangle_threats(theirs, empty)) \
        + 1.0 * (len(mine) - len(theirs))


EVALUATORS: dict[str, Callable[[Position, Color], float]] = {
    "troll": evaluate_troll,
    "atoll": evaluate_atoll,
    "morris": evaluate_morris,
    "talisman": evaluate_talisman,
}
