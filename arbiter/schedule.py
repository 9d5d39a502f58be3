"""Tournament schedules: who plays whom, with which colour, from which opening.

Pure code (no I/O, no clock, no engine): the same arguments always give the
same list of :class:`ScheduledGame`, in the same order, with the same keys.
That is what makes resume possible -- a restarted run rebuilds the schedule and
skips every key the store already holds (``specs/tournament.md`` §Resume).

The rules, each one in ``specs/tournament.md`` §Schedule:

* pairings: ``round-robin`` plays every pair of engines (in the order given),
  ``gauntlet`` the first engine against each of the others;
* each round, each pairing plays ``games`` games; counting a pairing's games
  over the whole tournament (0, 1, 2, ...), game ``c`` belongs to game pair
  ``c // 2``; the pairing's first engine has White in even games, the second
  in odd ones, so colours alternate within each game pair;
* both games of a game pair start from the same opening (each opening is
  played twice, colours swapped); game pair ``p`` of every pairing gets the
  same opening, so all pairings meet the same openings;
* openings come from a list (sequential, or shuffled with a seed, cycling
  when the list runs out), from ``random_plies`` random legal plies chosen
  with a seeded RNG through the referee, or are the start position.  The
  list is an openings file: one opening a line (:func:`parse_openings`), or
  a PGN file of games (:func:`pgn_openings`), each cut to ``plies`` plies
  when given (``--opening-plies``).  Reading and choosing openings is
  :mod:`arbiter.openings`, whose names this module re-exports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arbiter.games import Game
from arbiter.openings import (
    MAX_OPENING_LINE_CHARS,
    MAX_OPENINGS,
    MAX_OPENINGS_BYTES,
    MAX_RANDOM_PLIES,
    ORDERS,
    START,
    Opening,
    OpeningError,
    OpeningSource,
    ScheduleError,
    is_pgn_openings,
    parse_opening_line,
    parse_openings,
    pgn_openings,
    random_opening,
)

__all__ = [
    "SCHEDULED_FORMATS", "ROUND_FORMATS", "FORMATS", "MAX_SCHEDULE_GAMES", "Pairing", "make_pairings",
    "schedule_size", "check_size", "ScheduledGame", "RoundPair", "Schedule", "build_schedule", "remaining",
    # re-exported from arbiter.openings, their home
    "ORDERS", "MAX_RANDOM_PLIES", "MAX_OPENINGS_BYTES", "MAX_OPENINGS", "MAX_OPENING_LINE_CHARS",
    "ScheduleError", "OpeningError", "Opening", "START", "parse_opening_line", "parse_openings",
    "is_pgn_openings", "pgn_openings", "random_opening", "OpeningSource",
]

#: formats whose whole schedule is known before the first game
SCHEDULED_FORMATS = ("round-robin", "gauntlet")
#: formats paired round by round from the results (arbiter/rounds.py)
ROUND_FORMATS = ("swiss", "knockout")
FORMATS = SCHEDULED_FORMATS + ROUND_FORMATS

#: Most games one tournament may schedule.  The schedule is built whole (every
#: game with its key and opening, a few hundred bytes each) and the store holds
#: a row per game, so this bounds both: a million games is a few hundred MB at
#: most, and more than any engine test plays (an SPRT rarely needs 100,000).
#: ``--games 1000000000`` is refused at once instead of filling the memory.
MAX_SCHEDULE_GAMES = 1_000_000


@dataclass(frozen=True)
class Pairing:
    """Two engines that meet; ``number`` is 1-based in the schedule's order."""

    number: int
    first: str
    second: str


def make_pairings(engines: Sequence[str], format: str) -> list[Pairing]:
    """The pairings of a ``round-robin`` or a ``gauntlet`` (first vs the rest)."""
    if format in ROUND_FORMATS:
        raise ScheduleError(f"a {format} tournament is paired round by round from its results: "
                            "it has no schedule made in advance (arbiter/rounds.py)")
    if format not in FORMATS:
        raise ScheduleError(f"unknown format {format!r}; choose one of: {', '.join(FORMATS)}")
    if len(engines) < 2:
        raise ScheduleError("a tournament needs at least two engines")
    duplicates = sorted(name for name, count in Counter(engines).items() if count > 1)
    if duplicates:
        raise ScheduleError(f"engine names must be unique; repeated: {', '.join(duplicates)}")
    if format == "gauntlet":
        pairs = [(engines[0], other) for other in engines[1:]]
    else:
        pairs = [(a, b) for i, a in enumerate(engines) for b in engines[i + 1:]]
    return [Pairing(number, a, b) for number, (a, b) in enumerate(pairs, start=1)]


def schedule_size(engines: int, format: str, games: int, rounds: int) -> int:
    """How many games a schedule holds, computed without building it: its
    pairings times ``games`` per pairing and round times ``rounds``.  A Swiss
    round has ``engines // 2`` pairings; a knockout is ``engines - 1``
    matches in one count (``rounds`` 1, ``games`` the most a match may need)."""
    if format == "gauntlet" or format == "knockout":
        pairings = engines - 1
    elif format == "swiss":
        pairings = engines // 2
    else:
        pairings = engines * (engines - 1) // 2
    return max(pairings, 0) * games * rounds


def check_size(engines: int, format: str, games: int, rounds: int) -> None:
    """:class:`ScheduleError` when the schedule would exceed
    :data:`MAX_SCHEDULE_GAMES`: checked before anything is built."""
    size = schedule_size(engines, format, games, rounds)
    if size > MAX_SCHEDULE_GAMES:
        raise ScheduleError(
            f"{engines} engines, --games {games} and --rounds {rounds} make {size} games, over the "
            f"limit of {MAX_SCHEDULE_GAMES} per tournament")


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the schedule.

    ``round`` and ``pairing`` are 1-based, ``index`` is the game's number
    (1-based) within its pairing in that round; together they are the stable
    :attr:`key`.  ``pair`` is the game pair (1-based, per pairing, over the
    whole tournament); ``seq`` the game's place in the schedule (0-based).
    """

    round: int
    pairing: int
    index: int
    pair: int
    seq: int
    white: str
    black: str
    opening: Opening = field(default=START)

    @property
    def key(self) -> str:
        return f"r{self.round}-p{self.pairing}-g{self.index}"

    @property
    def players(self) -> frozenset[str]:
        return frozenset((self.white, self.black))

    def to_dict(self) -> dict[str, Any]:
        """The game as plain values (a worker's request carries it so)."""
        return {"round": self.round, "pairing": self.pairing, "index": self.index, "pair": self.pair,
                "seq": self.seq, "white": self.white, "black": self.black,
                "opening": self.opening.to_dict()}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> ScheduledGame:
        return cls(round=values["round"], pairing=values["pairing"], index=values["index"],
                   pair=values["pair"], seq=values["seq"], white=values["white"],
                   black=values["black"], opening=Opening.from_dict(values["opening"]))


@dataclass(frozen=True)
class RoundPair:
    """One game pair of a Swiss or knockout round as it is stored before its
    first game (``specs/storage.md`` §pairings), or a Swiss bye.

    ``pairing`` is the pairing's number in the whole tournament (a Swiss
    board, a knockout match: ``specs/tournament.md`` §Swiss, §Knockout) and
    ``pair`` the game pair within it (1-based); ``first`` has White in the
    pair's first game, ``second`` in its second (None: ``first`` has a bye,
    and there are no games).  ``seq`` is the first game's place in the
    schedule and ``opening`` the number of the opening both games play (for
    :class:`OpeningSource`), both None for a bye."""

    round: int
    pairing: int
    pair: int
    first: str
    second: str | None
    seq: int | None = None
    opening: int | None = None

    @property
    def bye(self) -> bool:
        return self.second is None

    def games(self, opening_for: OpeningSource) -> tuple[ScheduledGame, ...]:
        """The pair's two games (none for a bye): keys
        ``r<round>-p<pairing>-g<index>`` with index ``2 * pair - 1`` and
        ``2 * pair``, seq ``seq`` and ``seq + 1``, colours swapped, one opening."""
        if self.second is None:
            return ()
        assert self.seq is not None and self.opening is not None, self
        opening = opening_for(self.opening)
        first, second = self.first, self.second
        return tuple(
            ScheduledGame(round=self.round, pairing=self.pairing, index=2 * self.pair - 1 + i,
                          pair=self.pair, seq=self.seq + i, white=white, black=black, opening=opening)
            for i, (white, black) in enumerate(((first, second), (second, first))))

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "pairing": self.pairing, "pair": self.pair, "first": self.first,
                "second": self.second, "seq": self.seq, "opening": self.opening}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoundPair:
        return cls(round=data["round"], pairing=data["pairing"], pair=data["pair"],
                   first=data["first"], second=data.get("second"), seq=data.get("seq"),
                   opening=data.get("opening"))


@dataclass(frozen=True)
class Schedule:
    """The games of a tournament in playing order, and what made them."""

    pairings: tuple[Pairing, ...]
    games: tuple[ScheduledGame, ...]

    def __len__(self) -> int:
        return len(self.games)

    def __iter__(self):
        return iter(self.games)

    def by_key(self) -> dict[str, ScheduledGame]:
        return {game.key: game for game in self.games}


def build_schedule(
    engines: Sequence[str],
    *,
    format: str = "round-robin",
    games: int = 2,
    rounds: int = 1,
    openings: Sequence[Opening] | None = None,
    order: str = "sequential",
    seed: int = 0,
    random_plies: int = 0,
    game: Game | None = None,
) -> Schedule:
    """The full schedule of a tournament (see the module docstring).

    Games are ordered round by round; within a round, game pair by game pair
    and, for each, pairing by pairing -- so every pairing progresses at the
    same pace and both games of a pair are scheduled next to each other.
    """
    if games < 1:
        raise ScheduleError("--games must be at least 1")
    if rounds < 1:
        raise ScheduleError("--rounds must be at least 1")
    if format in SCHEDULED_FORMATS:
        check_size(len(engines), format, games, rounds)
    pairings = make_pairings(list(engines), format)
    opening_for = OpeningSource(game, openings, order, seed, random_plies)
    slots = []
    for pairing in pairings:
        for round_number in range(1, rounds + 1):
            for index in range(1, games + 1):
                count = (round_number - 1) * games + (index - 1)
                white, black = ((pairing.first, pairing.second) if count % 2 == 0
                                else (pairing.second, pairing.first))
                slots.append((round_number, count // 2, pairing.number, index, white, black))
    slots.sort(key=lambda s: (s[0], s[1], s[2], s[3]))
    scheduled = tuple(
        ScheduledGame(round=r, pairing=p, index=i, pair=pair + 1, seq=seq, white=w, black=b,
                      opening=opening_for(pair))
        for seq, (r, pair, p, i, w, b) in enumerate(slots)
    )
    return Schedule(pairings=tuple(pairings), games=scheduled)


def remaining(schedule: Iterable[ScheduledGame], finished_keys: set[str]) -> list[ScheduledGame]:
    """The scheduled games whose key is not among ``finished_keys``, in order."""
    return [game for game in schedule if game.key not in finished_keys]
