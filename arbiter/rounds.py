"""What a Swiss or knockout run plays next: pure code between the store and
the pairing rules (``specs/tournament.md`` §Swiss, §Knockout, §Rounds and resume).

A round-robin's schedule is known before the first game; a Swiss round is
paired from the results of the rounds before it, and a knockout match from
the winners of the two before it.  So such a run is a loop around
:class:`RoundPlanner`:

1. read the stored game pairs (``Store.pairings``, as :class:`RoundPair`)
   and the stored games;
2. ``planner.next_pairs(pairs, games)``: the game pairs to add now (empty
   while the round, or the matches that feed the next, are not over);
3. store them (``Store.add_pairings``, one transaction) **before** any of
   their games starts, then play ``pair.games(opening_for)`` for each;
4. after each stored game, step 2 again; the run is over once
   ``planner.finished(pairs, games)``.

Every number of a new pair (its pairing, pair, seq and opening) is computed
from what is stored, so a run stopped at any moment and resumed plays the
stored pairs' missing games and pairs the next round exactly as the first
run would have: a stored round is never paired again, and the store's
``UNIQUE(tournament, pairing, pair)`` refuses a second copy.

``games`` are game rows as the store and the run's tally hold them (any
mapping with ``pairing``, ``pair``, ``white``, ``black``, ``result``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arbiter.games import Result
from arbiter.knockout import MAX_TIEBREAK_PAIRS, Bracket, Knockout, NewPair
from arbiter.schedule import (
    MAX_SCHEDULE_GAMES,
    ROUND_FORMATS,
    RoundPair,
    ScheduleError,
    check_size,
    schedule_size,
)
from arbiter.swiss import BYE_HALF_POINTS, MAX_SWISS_ENGINES, Meeting, SwissLine, pair_round, swiss_table

__all__ = ["RoundPlanner", "pair_points", "check_format_options", "seeded", "default_rounds",
           "DEFAULT_PAIRS", "DEFAULT_TIEBREAK_PAIRS"]

#: game pairs of a knockout match (``--pairs``): one pair, both colours, as a
#: Swiss pairing and cutechess's knockout default of one encounter
DEFAULT_PAIRS = 1
#: extra game pairs a level knockout match may get (``--tiebreak-pairs``)
#: before the better seed goes on: two give a level match two more chances
#: to part, at most four more games
DEFAULT_TIEBREAK_PAIRS = 2

#: a game's half points for White and for Black
_HALF_POINTS = {Result.WHITE_WINS: (2, 0), Result.BLACK_WINS: (0, 2), Result.DRAW: (1, 1)}


def pair_points(pairs: Iterable[RoundPair], games: Iterable[Mapping[str, Any]]
                ) -> dict[tuple[int, int], tuple[int, int]]:
    """(pairing, pair) -> the half points of the pair's ``first`` and
    ``second``, for each game pair both of whose games are stored."""
    firsts = {(p.pairing, p.pair): p.first for p in pairs if p.second is not None}
    points: dict[tuple[int, int], list[int]] = {}
    for row in games:
        key = (row["pairing"], row["pair"])
        first = firsts.get(key)
        half = _HALF_POINTS.get(row["result"])
        if first is None or half is None:
            continue
        white, black = half
        entry = points.setdefault(key, [0, 0, 0])
        mine, theirs = (white, black) if row["white"] == first else (black, white)
        entry[0] += mine
        entry[1] += theirs
        entry[2] += 1
    return {key: (a, b) for key, (a, b, count) in points.items() if count == 2}


def seeded(engines: Sequence[str], seeds: Sequence[str]) -> list[str]:
    """The engines in seed order: those ``seeds`` names first, in its order,
    then the others in the order given."""
    rest = [name for name in engines if name not in seeds]
    return [*seeds, *rest]


def default_rounds(format: str, engines: int) -> int:
    """Rounds when none are given: a Swiss tournament plays ``ceil(log2(E))``
    (enough for one engine to win every round alone); other formats 1."""
    if format != "swiss":
        return 1
    return max(1, (engines - 1).bit_length())


def check_format_options(format: str, engines: Sequence[str], *, games: int, rounds: int,
                         seeds: Sequence[str], pairs: int, tiebreak_pairs: int) -> None:
    """:class:`ScheduleError` naming the option when a format's options do
    not fit it (``specs/tournament.md`` §Swiss, §Knockout): ``seeds`` are
    engines, each once, and only for ``swiss`` or ``knockout``; a Swiss
    round is one game pair per pairing (``games`` 2) for at most
    :data:`~arbiter.swiss.MAX_SWISS_ENGINES` engines; a knockout has the
    rounds its bracket needs (``rounds`` 1) and ``pairs`` game pairs a
    match, up to ``tiebreak_pairs`` more."""
    if format not in ROUND_FORMATS:
        for what, given in (("seeds", bool(seeds)), ("pairs", pairs != DEFAULT_PAIRS),
                            ("tiebreak_pairs", tiebreak_pairs != DEFAULT_TIEBREAK_PAIRS)):
            if given:
                raise ScheduleError(f"{_flag(what)} is for --format knockout"
                                    + (" or swiss" if what == "seeds" else "") + f", not {format}")
        return
    unknown = [name for name in seeds if name not in engines]
    if unknown:
        raise ScheduleError(f"--seeds names {unknown[0]!r}, which is not an engine of this tournament "
                            f"({', '.join(engines)})")
    repeated = sorted({name for name in seeds if list(seeds).count(name) > 1})
    if repeated:
        raise ScheduleError(f"--seeds names {repeated[0]!r} twice")
    if games != 2:
        raise ScheduleError(f"a {format} pairing plays one game pair (2 games) "
                            + ("per round" if format == "swiss" else "at a time: give --pairs K")
                            + f"; --games must be 2, not {games}")
    if format == "swiss":
        if len(engines) > MAX_SWISS_ENGINES:
            raise ScheduleError(f"a swiss tournament pairs at most {MAX_SWISS_ENGINES} engines, "
                                f"not {len(engines)}")
        for what, value, default in (("pairs", pairs, DEFAULT_PAIRS),
                                     ("tiebreak_pairs", tiebreak_pairs, DEFAULT_TIEBREAK_PAIRS)):
            if value != default:
                raise ScheduleError(f"{_flag(what)} is for --format knockout, not swiss")
        check_size(len(engines), format, 2, rounds)
        return
    if rounds != 1:
        raise ScheduleError(f"a knockout of {len(engines)} engines plays the "
                            f"{(len(engines) - 1).bit_length()} round(s) its bracket needs; "
                            f"drop --rounds ({rounds})")
    if pairs < 1:
        raise ScheduleError(f"--pairs must be at least 1, not {pairs}")
    if not 0 <= tiebreak_pairs <= MAX_TIEBREAK_PAIRS:
        raise ScheduleError(f"--tiebreak-pairs must be from 0 to {MAX_TIEBREAK_PAIRS}, not {tiebreak_pairs}")
    most = schedule_size(len(engines), format, 2 * (pairs + tiebreak_pairs), 1)
    if most > MAX_SCHEDULE_GAMES:
        raise ScheduleError(f"{len(engines)} engines, --pairs {pairs} and --tiebreak-pairs "
                            f"{tiebreak_pairs} may make {most} games, over the limit of "
                            f"{MAX_SCHEDULE_GAMES} per tournament")


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


class RoundPlanner:
    """The next game pairs of a ``swiss`` or ``knockout`` tournament of
    ``engines`` (in seed order): ``rounds`` Swiss rounds, or knockout matches
    of ``pairs`` game pairs and up to ``tiebreak_pairs`` more while level."""

    def __init__(self, format: str, engines: Sequence[str], *, rounds: int = 1, pairs: int = 1,
                 tiebreak_pairs: int = 0):
        if format not in ("swiss", "knockout"):
            raise ScheduleError(f"{format!r} is not paired round by round")
        self.format = format
        self.engines = list(engines)
        self.rounds = rounds
        self.pairs = pairs
        self.tiebreak_pairs = tiebreak_pairs
        self.knockout = (Knockout(self.engines, pairs, tiebreak_pairs) if format == "knockout"
                         else None)

    # -- what the run asks --------------------------------------------------

    def next_pairs(self, stored: Sequence[RoundPair], games: Iterable[Mapping[str, Any]]
                   ) -> list[RoundPair]:
        """The game pairs (and Swiss byes) to store and play now, numbered
        after ``stored``; empty while nothing new can start."""
        points = pair_points(stored, games)
        if self.knockout is None:
            new = self._swiss_next(stored, points)
        else:
            new = self.knockout.new_pairs(self.knockout.bracket(_as_new(stored), points))
        return self._numbered(stored, new)

    def finished(self, stored: Sequence[RoundPair], games: Iterable[Mapping[str, Any]]) -> bool:
        """Whether the tournament is over: the last Swiss round complete, or
        the knockout's final decided."""
        points = pair_points(stored, games)
        if self.knockout is not None:
            return self.knockout.bracket(_as_new(stored), points).finished
        last = max((p.round for p in stored), default=0)
        return last >= self.rounds and _round_complete(stored, last, points)

    def total_games(self, stored: Sequence[RoundPair] = ()) -> int:
        """The games the tournament will have as far as is known: a Swiss
        tournament's exactly; a knockout's scheduled so far, plus ``2 *
        pairs`` for each match not yet begun (a tie-break pair adds two)."""
        if self.knockout is None:
            return self.rounds * (len(self.engines) // 2) * 2
        begun = {p.pairing for p in stored if p.second is not None}
        scheduled = 2 * sum(1 for p in stored if p.second is not None)
        return scheduled + 2 * self.pairs * (len(self.engines) - 1 - len(begun))

    def bracket(self, stored: Sequence[RoundPair], games: Iterable[Mapping[str, Any]]) -> Bracket:
        """A knockout's bracket now (for the standings, their JSON and text)."""
        if self.knockout is None:
            raise ScheduleError("a Swiss tournament has no bracket")
        return self.knockout.bracket(_as_new(stored), pair_points(stored, games))

    def swiss_table(self, stored: Sequence[RoundPair], games: Iterable[Mapping[str, Any]]
                    ) -> list[SwissLine]:
        """A Swiss tournament's standings with byes and tie-breaks, from the
        complete game pairs and the byes stored."""
        games = list(games)
        played: Counter[str] = Counter()
        for row in games:
            if row["result"] in _HALF_POINTS:
                played[row["white"]] += 1
                played[row["black"]] += 1
        return swiss_table(self.engines, _meetings(stored, pair_points(stored, games)), played)

    def to_json(self, stored: Sequence[RoundPair], games: Iterable[Mapping[str, Any]]
                ) -> dict[str, Any]:
        """What the standings' JSON adds for this format: ``{"swiss": [each
        engine's SwissLine, ranked]}`` or ``{"bracket": Bracket.to_dict()}``
        (``specs/tournament.md`` §Swiss, §Knockout)."""
        if self.knockout is None:
            return {"swiss": [line.to_dict() for line in self.swiss_table(stored, games)]}
        return {"bracket": self.bracket(stored, games).to_dict()}

    # -- Swiss -----------------------------------------------------------------

    def _swiss_next(self, stored: Sequence[RoundPair], points: Mapping[tuple[int, int], tuple[int, int]]
                    ) -> list[NewPair]:
        last = max((p.round for p in stored), default=0)
        if last >= self.rounds or (last and not _round_complete(stored, last, points)):
            return []
        round = last + 1
        paired = pair_round(self.engines, _meetings(stored, points))
        boards = (len(self.engines) + 1) // 2  # pairings per round, the bye's included
        base = (round - 1) * boards
        new: list[NewPair] = [(round, base + number, 1, first, second)
                              for number, (first, second) in enumerate(paired.boards, start=1)]
        if paired.bye is not None:
            new.append((round, base + boards, 1, paired.bye, None))
        return new

    # -- numbering -------------------------------------------------------------

    def _numbered(self, stored: Sequence[RoundPair], new: Sequence[NewPair]) -> list[RoundPair]:
        """``new`` with its seq (after every stored game) and opening numbers."""
        seq = max((p.seq + 2 for p in stored if p.seq is not None), default=0)
        out = []
        for round, pairing, pair, first, second in sorted(new, key=lambda n: (n[0], n[1], n[2])):
            if second is None:
                out.append(RoundPair(round, pairing, pair, first, None))
                continue
            out.append(RoundPair(round, pairing, pair, first, second, seq=seq,
                                 opening=self._opening(round, pair)))
            seq += 2
        return out

    def _opening(self, round: int, pair: int) -> int:
        """The opening number of game pair ``pair`` of a pairing of round
        ``round``: each Swiss round its own opening, played on every board;
        each knockout round ``pairs + tiebreak_pairs`` of its own, pair by
        pair, the same in every match of the round."""
        if self.knockout is None:
            return round - 1
        return (round - 1) * (self.pairs + self.tiebreak_pairs) + pair - 1


def _as_new(stored: Iterable[RoundPair]) -> list[NewPair]:
    return [(p.round, p.pairing, p.pair, p.first, p.second) for p in stored]


def _round_complete(stored: Iterable[RoundPair], round: int,
                    points: Mapping[tuple[int, int], tuple[int, int]]) -> bool:
    return all((p.pairing, p.pair) in points for p in stored if p.round == round and p.second is not None)


def _meetings(stored: Iterable[RoundPair], points: Mapping[tuple[int, int], tuple[int, int]]
              ) -> list[Meeting]:
    """The Swiss history: each complete game pair and each bye."""
    meetings = []
    for p in stored:
        if p.second is None:
            meetings.append(Meeting(p.round, p.first, None, BYE_HALF_POINTS))
        elif (p.pairing, p.pair) in points:
            first, second = points[p.pairing, p.pair]
            meetings.append(Meeting(p.round, p.first, p.second, first, second))
    return meetings
