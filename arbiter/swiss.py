"""Swiss pairings and tie-breaks: pure code, no I/O (``specs/tournament.md`` §Swiss).

A Swiss tournament is paired round by round from the results so far: each
round every engine meets one with an equal or the nearest score, never the
same engine twice while another pairing exists, and when the count is odd
one engine gets a *bye* (a game pair won, as FIDE scores a pairing-allocated
bye), at most one per engine while possible.  Each pairing is one game pair
(both colours, the same opening), as in every format.

The pairing is one maximum-weight perfect matching on the complete graph of
the engines (plus a *bye* node when the count is odd), from networkx
(``networkx.max_weight_matching``, Edmonds' blossom algorithm, exact with
integer weights).  Each possible pairing costs a number made of four levels,
each worth more than any sum of the levels below it, so the matching that
minimises the total minimises them in order:

1. meetings already played by these two (a bye: byes already had);
2. for the bye, the receiver's place from the bottom of the ranking (the
   lowest-ranked engine that can take it does);
3. the square of the two engines' score difference (equal scores first,
   then the nearest);
4. within a score group, the top half against the bottom half (the Dutch
   system's rule: ``(|place a - place b| - half the group)^2``); across
   groups, the lowest of the higher group and the highest of the lower.

Why a matching rather than a FIDE Dutch library: our pairings carry no
colour (each is a game pair, both colours), and a round is worth 0 to 2
points in half points, while the Dutch rules' absolute criteria are about
colours and single games; the matching states our rules directly.  networkx
(BSD-3-Clause, maintained since 2004, pure Python) is imported only when a
round is paired: about 0.1 s of CPU, which no other command pays.

Scores here are in *half points* (ints): a game won is 2, drawn 1.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Meeting", "SwissRound", "SwissLine", "BYE_HALF_POINTS", "pair_round", "scores",
           "swiss_table", "MAX_SWISS_ENGINES"]

#: A bye is scored as a game pair won (FIDE: a pairing-allocated bye scores
#: as a win), in half points: two games of one point each.
BYE_HALF_POINTS = 4

#: Most engines a Swiss round pairs: the matching is O(n^3) in pure Python,
#: paid between two rounds while no game is played; on the 2-core test
#: machine a round of 256 engines took 0.1 to 2 s of CPU, one of 512 up to 9 s
#: (nine rounds of random results each), past what a wait between rounds may cost.
MAX_SWISS_ENGINES = 256

#: the node that stands for the bye in the matching (no engine has this name:
#: names are strings)
_BYE = 0


@dataclass(frozen=True)
class Meeting:
    """One pairing of an earlier round, with its points in half points:
    ``first`` and ``second`` (None: a bye, ``first`` scored
    :data:`BYE_HALF_POINTS`) and what each scored in the pairing's games."""

    round: int
    first: str
    second: str | None
    first_points: int
    second_points: int = 0

    @property
    def bye(self) -> bool:
        return self.second is None


@dataclass(frozen=True)
class SwissRound:
    """A round's pairings: ``boards`` in board order (the best-ranked first),
    each ``(first, second)`` with ``first`` the better-ranked engine, and the
    engine with the bye, if any."""

    boards: tuple[tuple[str, str], ...]
    bye: str | None


def scores(engines: Sequence[str], history: Iterable[Meeting]) -> dict[str, int]:
    """Each engine's score in half points: its games' points and its byes."""
    total = {name: 0 for name in engines}
    for meeting in history:
        total[meeting.first] += meeting.first_points
        if meeting.second is not None:
            total[meeting.second] += meeting.second_points
    return total


def pair_round(engines: Sequence[str], history: Sequence[Meeting]) -> SwissRound:
    """The next round's pairings of ``engines`` (in seed order: the first is
    seed 1) after the meetings of ``history`` (see the module docstring).

    Deterministic: the same arguments give the same round.  ValueError for
    fewer than two engines, repeated names or more than
    :data:`MAX_SWISS_ENGINES`."""
    if len(engines) < 2:
        raise ValueError("a Swiss round needs at least two engines")
    if len(set(engines)) != len(engines):
        raise ValueError("engine names must be unique")
    if len(engines) > MAX_SWISS_ENGINES:
        raise ValueError(f"a Swiss tournament pairs at most {MAX_SWISS_ENGINES} engines, "
                         f"not {len(engines)}")
    seed = {name: i for i, name in enumerate(engines)}
    score = scores(engines, history)
    ranked = sorted(engines, key=lambda e: (-score[e], seed[e]))
    rank = {name: i for i, name in enumerate(ranked)}
    group: dict[int, list[str]] = defaultdict(list)
    for name in ranked:
        group[score[name]].append(name)
    place = {name: i for members in group.values() for i, name in enumerate(members)}
    met: Counter[frozenset[str]] = Counter()
    byes: Counter[str] = Counter()
    for meeting in history:
        if meeting.second is None:
            byes[meeting.first] += 1
        else:
            met[frozenset((meeting.first, meeting.second))] += 1

    def levels(a: str, b: str | None) -> tuple[int, int, int, int]:
        if b is None:
            return byes[a], len(engines) - 1 - rank[a], 0, 0
        if rank[b] < rank[a]:
            a, b = b, a
        diff = score[a] - score[b]
        if diff == 0:
            size = len(group[score[a]])
            fold = (abs(place[a] - place[b]) - size // 2) ** 2
        else:  # a floats down from its group, b up from its own
            fold = (len(group[score[a]]) - 1 - place[a]) + place[b]
        return met[frozenset((a, b))], 0, diff * diff, fold

    nodes: list[Any] = list(ranked) + ([_BYE] if len(engines) % 2 else [])
    edges = [(a, b, levels(a, None if b == _BYE else b))
             for i, a in enumerate(nodes) for b in nodes[i + 1:]]
    chosen = _min_cost_perfect_matching(edges, pairs=len(nodes) // 2)
    boards: list[tuple[str, str]] = []
    bye = None
    for a, b in chosen:
        if b == _BYE or a == _BYE:
            bye = b if a == _BYE else a
        else:
            boards.append((a, b) if rank[a] < rank[b] else (b, a))
    boards.sort(key=lambda board: rank[board[0]])
    return SwissRound(tuple(boards), bye)


def _min_cost_perfect_matching(edges: Sequence[tuple[Any, Any, tuple[int, ...]]], pairs: int
                               ) -> list[tuple[Any, Any]]:
    """The perfect matching of the complete graph ``edges`` whose summed cost
    levels are least in lexicographic order: each level is scaled above the
    largest sum the levels below it can reach in ``pairs`` edges, so one
    integer weight per edge orders them exactly."""
    # here: only a Swiss round pays its import (see the module docstring); networkx ships no types
    import networkx  # type: ignore[import-untyped]

    depth = len(edges[0][2])
    scales = []
    for level in range(depth):
        scales.append(pairs * max(cost[level] for _, _, cost in edges) + 1)
    weights = []
    for a, b, cost in edges:
        total = 0
        for level in range(depth):
            total = total * scales[level] + cost[level]
        weights.append((a, b, total))
    top = max(w for _, _, w in weights) + 1
    graph = networkx.Graph()
    for a, b, total in weights:
        graph.add_edge(a, b, weight=top - total)  # positive: the most weight is the least cost
    matching = networkx.max_weight_matching(graph, maxcardinality=True)
    if len(matching) != pairs:  # a complete graph of an even order always has one
        raise AssertionError(f"no perfect matching ({len(matching)} of {pairs} pairs)")
    return sorted(matching, key=lambda edge: str(edge))


@dataclass(frozen=True)
class SwissLine:
    """One engine's Swiss standing, every figure in points (not half points):
    ``score`` (games and byes), ``games`` played, ``byes`` had, and the
    tie-breaks of ``specs/tournament.md`` §Swiss."""

    name: str
    score: float
    games: int
    byes: int
    buchholz: float
    buchholz_cut1: float
    sonneborn_berger: float

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "score": self.score, "games": self.games, "byes": self.byes,
                "buchholz": self.buchholz, "buchholz_cut1": self.buchholz_cut1,
                "sonneborn_berger": self.sonneborn_berger}


def swiss_table(engines: Sequence[str], history: Iterable[Meeting],
                games: Mapping[str, int] | None = None) -> list[SwissLine]:
    """The Swiss standings after ``history``: every engine ranked by score,
    then Buchholz, then Sonneborn-Berger, then seed (the order of
    ``engines``).  ``games``: games played per engine (for the display; 0
    when not given).

    * Buchholz: the sum of the final scores of the engine's opponents, one
      per pairing; a bye counts as an opponent with the engine's own score
      (the FIDE tie-break regulations' virtual opponent), so a bye neither
      lifts nor sinks it;
    * Buchholz cut-1: the same less its smallest term;
    * Sonneborn-Berger: the sum, over the engine's pairings, of its points in
      the pairing times the opponent's final score; a bye adds nothing (no
      opponent's strength to weigh the win by).
    """
    history = list(history)
    seed = {name: i for i, name in enumerate(engines)}
    score = scores(engines, history)
    terms: dict[str, list[int]] = {name: [] for name in engines}
    sb = {name: 0 for name in engines}
    byes: Counter[str] = Counter()
    for meeting in history:
        if meeting.second is None:
            byes[meeting.first] += 1
            terms[meeting.first].append(score[meeting.first])
            continue
        a, b = meeting.first, meeting.second
        terms[a].append(score[b])
        terms[b].append(score[a])
        sb[a] += meeting.first_points * score[b]
        sb[b] += meeting.second_points * score[a]
    lines = []
    for name in engines:
        buchholz = sum(terms[name])
        cut = buchholz - min(terms[name]) if terms[name] else 0
        lines.append(SwissLine(name=name, score=score[name] / 2, games=(games or {}).get(name, 0),
                               byes=byes[name], buchholz=buchholz / 2, buchholz_cut1=cut / 2,
                               sonneborn_berger=sb[name] / 4))
    lines.sort(key=lambda line: (-line.score, -line.buchholz, -line.sonneborn_berger, seed[line.name]))
    return lines
