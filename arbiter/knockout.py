"""Knockout brackets: pure code, no I/O (``specs/tournament.md`` §Knockout).

The engines in seed order (seed 1 first) fill a bracket of the next power of
two; the top seeds get the byes when the count is not one, and seeds are
placed so that seed 1 and seed 2 can meet only in the final (1-8, 4-5, 2-7,
3-6 for eight).  Each match is ``pairs`` game pairs (both colours, the same
opening); a match level after them gets one more game pair at a time, up to
``tiebreak_pairs`` more, and a match still level then goes to the better
seed.  A match of a later round starts as soon as both of its engines are
known, not when the whole round is over.

Matches are numbered through the bracket: round 1's ``1 .. size/2`` in
bracket order, round 2's next, the final last (``size - 1``).  That number is
the stored pairing of every game pair of the match (its games' keys
``r<round>-p<match>-g<index>``), so the keys do not depend on the order in
which matches end.

:class:`Knockout` turns the stored game pairs of a tournament and their
points into a :class:`Bracket` (what the standings, their JSON and the text
rendering show) and says which game pairs to add next (:meth:`Knockout.new_pairs`).
Points are in half points: a game won is 2, drawn 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Knockout", "Bracket", "Match", "NewPair", "bracket_order", "MAX_TIEBREAK_PAIRS"]

#: Most extra game pairs a level match may get (``--tiebreak-pairs``): a
#: match still level after a hundred is between engines no number of games
#: will part, and the better seed goes on.
MAX_TIEBREAK_PAIRS = 100

#: how a match was decided (``Match.decided_by``)
BYE, SCORE, TIEBREAK, BETTER_SEED = "bye", "score", "tiebreak pairs", "better seed"

#: A game pair to add: (round, match number, pair number 1.., first, second)
NewPair = tuple[int, int, int, str, str | None]


def bracket_order(size: int) -> list[int]:
    """The seeds (1-based) in bracket order for a bracket of ``size`` (a
    power of two): consecutive ones meet in round 1, and the two halves hold
    seeds 1 and 2 (``[1, 8, 4, 5, 2, 7, 3, 6]`` for 8)."""
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [seed for top in order for seed in (top, total - top)]
    return order


@dataclass
class Match:
    """One match of the bracket.  ``first`` is the better seed of the two
    (None while not yet known: the winner of an earlier match), ``second``
    None for a bye; ``points`` the half points of each over the game pairs
    complete; ``pairs`` the game pairs scheduled, ``complete`` those both of
    whose games are stored."""

    round: int
    number: int
    first: str | None = None
    second: str | None = None
    first_seed: int | None = None
    second_seed: int | None = None
    pairs: int = 0
    complete: int = 0
    points: tuple[int, int] = (0, 0)
    winner: str | None = None
    decided_by: str | None = None
    is_bye: bool = False

    @property
    def status(self) -> str:
        """``bye``, ``waiting`` (an engine not known yet), ``ready`` (both
        known, nothing scheduled), ``playing`` or ``decided``."""
        if self.is_bye:
            return "bye"
        if self.winner is not None:
            return "decided"
        if self.first is None or self.second is None:
            return "waiting"
        return "playing" if self.pairs else "ready"

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "match": self.number, "first": self.first,
                "second": self.second, "first_seed": self.first_seed,
                "second_seed": self.second_seed, "status": self.status,
                "pairs": self.pairs, "complete_pairs": self.complete,
                "points": [self.points[0] / 2, self.points[1] / 2],
                "winner": self.winner, "decided_by": self.decided_by}


@dataclass
class Bracket:
    """Every match of a knockout, round by round, and the champion once the
    final is decided."""

    engines: int
    pairs: int
    tiebreak_pairs: int
    rounds: list[list[Match]] = field(default_factory=list)

    @property
    def final(self) -> Match:
        return self.rounds[-1][0]

    @property
    def champion(self) -> str | None:
        return self.final.winner

    @property
    def finished(self) -> bool:
        return self.champion is not None

    def to_dict(self) -> dict[str, Any]:
        """The bracket as JSON values (``specs/tournament.md`` §Knockout)."""
        return {"engines": self.engines, "pairs": self.pairs, "tiebreak_pairs": self.tiebreak_pairs,
                "champion": self.champion,
                "rounds": [{"round": i, "name": round_name(i, len(self.rounds)),
                            "matches": [m.to_dict() for m in matches]}
                           for i, matches in enumerate(self.rounds, start=1)]}

    def render(self) -> str:
        """The bracket as text, a block per round, one line per match:
        ``M3   #2 mcts   1.5-0.5  #7 random  mcts wins (score)``."""
        width = max([len(m.first or "") for r in self.rounds for m in r]
                    + [len(m.second or "") for r in self.rounds for m in r] + [3])
        extra = (f", up to {self.tiebreak_pairs} more while level" if self.tiebreak_pairs else "")
        lines = [f"Knockout of {self.engines} engines: {self.pairs} game pair(s) a match{extra}, "
                 "then the better seed"]
        for number, matches in enumerate(self.rounds, start=1):
            lines.append(round_name(number, len(self.rounds)))
            for match in matches:
                lines.append("  " + _match_line(match, width))
        if self.champion is not None:
            lines.append(f"Champion: {self.champion}")
        return "\n".join(lines)


def round_name(number: int, rounds: int) -> str:
    """``Final``, ``Semi-finals``, ``Quarter-finals``, else ``Round N``."""
    left = rounds - number
    return {0: "Final", 1: "Semi-finals", 2: "Quarter-finals"}.get(left, f"Round {number}")


def _match_line(match: Match, width: int) -> str:
    def side(name: str | None, seed: int | None) -> str:
        if name is None:
            return "?".ljust(width + 4)
        return f"#{seed} {name}".ljust(width + 4)

    head = f"M{match.number:<3} {side(match.first, match.first_seed)}"
    if match.is_bye:
        return f"{head} bye"
    points = f"{_half(match.points[0])}-{_half(match.points[1])}" if match.pairs else "-"
    line = f"{head} {points:^9} {side(match.second, match.second_seed)}"
    if match.winner is not None:
        return f"{line} {match.winner} wins ({match.decided_by})"
    return f"{line} {match.status}".rstrip()


def _half(points: int) -> str:
    return f"{points // 2}" if points % 2 == 0 else f"{points / 2:g}"


class Knockout:
    """A knockout of ``seeds`` (engine names, seed 1 first) with ``pairs``
    game pairs a match and up to ``tiebreak_pairs`` more while level."""

    def __init__(self, seeds: Sequence[str], pairs: int, tiebreak_pairs: int):
        if len(seeds) < 2:
            raise ValueError("a knockout needs at least two engines")
        if len(set(seeds)) != len(seeds):
            raise ValueError("engine names must be unique")
        if pairs < 1 or not 0 <= tiebreak_pairs <= MAX_TIEBREAK_PAIRS:
            raise ValueError(f"pairs must be at least 1 and tiebreak pairs 0 to {MAX_TIEBREAK_PAIRS}")
        self.seeds = list(seeds)
        self.seed = {name: i for i, name in enumerate(self.seeds, start=1)}
        self.pairs = pairs
        self.tiebreak_pairs = tiebreak_pairs
        self.size = 1
        while self.size < len(seeds):
            self.size *= 2
        self.round_count = self.size.bit_length() - 1

    def first_number(self, round: int) -> int:
        """The number of round ``round``'s first match (1-based)."""
        return self.size - self.size // 2 ** (round - 1) + 1

    def matches_in(self, round: int) -> int:
        return self.size // 2 ** round

    def most_games(self) -> int:
        """Games if every match needs every tie-break pair."""
        return (len(self.seeds) - 1) * 2 * (self.pairs + self.tiebreak_pairs)

    def least_games(self) -> int:
        """Games if no match needs a tie-break pair (what the run announces)."""
        return (len(self.seeds) - 1) * 2 * self.pairs

    def bracket(self, stored: Sequence[NewPair],
                pair_points: Mapping[tuple[int, int], tuple[int, int]]) -> Bracket:
        """The bracket after the game pairs ``stored`` (every pair scheduled,
        as :data:`NewPair`) and ``pair_points``: (match, pair) -> half points
        of the pair's first and second, for each pair both of whose games are
        stored."""
        scheduled: dict[int, list[NewPair]] = {}
        for row in stored:
            scheduled.setdefault(row[1], []).append(row)
        bracket = Bracket(engines=len(self.seeds), pairs=self.pairs, tiebreak_pairs=self.tiebreak_pairs)
        order = bracket_order(self.size)
        previous: list[Match] = []
        for round in range(1, self.round_count + 1):
            matches = []
            for j in range(self.matches_in(round)):
                match = Match(round=round, number=self.first_number(round) + j)
                if round == 1:
                    names = [self._name(order[2 * j]), self._name(order[2 * j + 1])]
                else:
                    names = [previous[2 * j].winner, previous[2 * j + 1].winner]
                self._fill(match, names, round == 1, scheduled.get(match.number, []), pair_points)
                matches.append(match)
            bracket.rounds.append(matches)
            previous = matches
        return bracket

    def _name(self, seed: int) -> str | None:
        return self.seeds[seed - 1] if seed <= len(self.seeds) else None

    def _fill(self, match: Match, names: list[str | None], first_round: bool, rows: list[NewPair],
              pair_points: Mapping[tuple[int, int], tuple[int, int]]) -> None:
        known = sorted((n for n in names if n is not None), key=self.seed.__getitem__)
        if first_round and len(known) == 1:  # a top seed's bye
            match.first, match.first_seed = known[0], self.seed[known[0]]
            match.is_bye, match.winner, match.decided_by = True, known[0], BYE
            return
        if len(known) == 2:
            match.first, match.second = known
            match.first_seed, match.second_seed = self.seed[known[0]], self.seed[known[1]]
        elif known:  # one known: shown while the other match goes on
            name = known[0]
            if names[0] == name:
                match.first, match.first_seed = name, self.seed[name]
            else:
                match.second, match.second_seed = name, self.seed[name]
        match.pairs = len(rows)
        first_points = second_points = 0
        for _, number, pair, first, _second in sorted(rows, key=lambda r: r[2]):
            points = pair_points.get((number, pair))
            if points is None:
                continue
            match.complete += 1
            mine, theirs = points if first == match.first else points[::-1]
            first_points += mine
            second_points += theirs
        match.points = (first_points, second_points)
        if match.second is None or match.pairs == 0 or match.complete < match.pairs:
            return
        if first_points != second_points:
            match.winner = match.first if first_points > second_points else match.second
            match.decided_by = SCORE if match.pairs <= self.pairs else TIEBREAK
        elif match.pairs >= self.pairs + self.tiebreak_pairs:
            match.winner, match.decided_by = match.first, BETTER_SEED

    def new_pairs(self, bracket: Bracket) -> list[NewPair]:
        """The game pairs to schedule now, in (round, match, pair) order:
        ``pairs`` pairs for each match whose engines are both known and that
        has none yet, and one more pair for each level match whose scheduled
        pairs are all complete (below the cap).  A bye needs no row: the
        seeds alone say who has one."""
        added: list[NewPair] = []
        for matches in bracket.rounds:
            for match in matches:
                if match.first is None or match.second is None or match.winner is not None:
                    continue
                elif match.pairs == 0:
                    added.extend((match.round, match.number, pair, match.first, match.second)
                                 for pair in range(1, self.pairs + 1))
                elif match.complete == match.pairs:  # level, below the cap (else decided)
                    added.append((match.round, match.number, match.pairs + 1, match.first,
                                  match.second))
        return added
