"""What a run has to play: a schedule known before the first game
(round-robin, gauntlet), or rounds paired from the results so far (Swiss,
knockout: ``specs/tournament.md`` §Rounds and resume).

The coordinator asks a plan for the games to play at the start of a run and
again after each batch of stored games (:meth:`Plan.more`); a round plan
stores a round's pairings before it hands out any of its games, so a resumed
run never pairs a stored round again.  Both are called in a worker thread
(a Swiss round over many engines takes a moment to pair).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from arbiter.config import TournamentConfig
from arbiter.schedule import ROUND_FORMATS, RoundPair, ScheduledGame
from arbiter.store import Store

__all__ = ["Plan", "FixedPlan", "RoundsPlan", "plan_for"]

Rows = Sequence[Mapping[str, Any]]


class Plan(Protocol):
    """The games of a run: :attr:`total` (as far as known), the games to play
    from the start (:meth:`start`) and those that results make possible
    (:meth:`more`), each at most once; :meth:`game` finds a game by key."""

    total: int
    #: whether results may add games (a later round)
    growing: bool

    def start(self, rows: Rows) -> list[ScheduledGame]: ...

    def more(self, rows: Rows) -> list[ScheduledGame]: ...

    def game(self, key: str) -> ScheduledGame | None: ...

    def to_json(self, rows: Rows) -> dict[str, Any]: ...


class FixedPlan:
    """A schedule made before the first game."""

    def __init__(self, config: TournamentConfig):
        self.schedule = config.schedule()
        self.total = len(self.schedule)
        self.growing = False
        self._by_key = self.schedule.by_key()

    def start(self, rows: Rows) -> list[ScheduledGame]:
        keys = {row["key"] for row in rows}
        return [g for g in self.schedule if g.key not in keys]

    def more(self, rows: Rows) -> list[ScheduledGame]:
        return []

    def game(self, key: str) -> ScheduledGame | None:
        return self._by_key.get(key)

    def to_json(self, rows: Rows) -> dict[str, Any]:
        return {}


class RoundsPlan:
    """Swiss or knockout: rounds paired from the results (``arbiter/rounds.py``),
    each round's pairings stored before its first game."""

    def __init__(self, config: TournamentConfig, store: Store, tournament_id: int):
        self.planner = config.round_planner()
        self.opening_for = config.opening_source()
        self.store = store
        self.tournament_id = tournament_id
        self.pairs: list[RoundPair] = []
        self._by_key: dict[str, ScheduledGame] = {}
        self.total = self.planner.total_games()
        self.growing = True

    def _games(self, pairs: Sequence[RoundPair]) -> list[ScheduledGame]:
        games = [g for pair in pairs for g in pair.games(self.opening_for)]
        self._by_key.update((g.key, g) for g in games)
        return games

    def start(self, rows: Rows) -> list[ScheduledGame]:
        self.pairs = [RoundPair.from_dict(row) for row in self.store.pairings(self.tournament_id)]
        keys = {row["key"] for row in rows}
        pending = [g for g in self._games(self.pairs) if g.key not in keys]
        return pending + self.more(rows)

    def more(self, rows: Rows) -> list[ScheduledGame]:
        new = self.planner.next_pairs(self.pairs, rows)
        if not new:
            return []
        self.store.add_pairings(self.tournament_id, [pair.to_dict() for pair in new])
        self.pairs.extend(new)
        self.total = self.planner.total_games(self.pairs)
        return self._games(new)

    def game(self, key: str) -> ScheduledGame | None:
        return self._by_key.get(key)

    def to_json(self, rows: Rows) -> dict[str, Any]:
        return self.planner.to_json(self.pairs, rows)


def plan_for(config: TournamentConfig, store: Store, tournament_id: int) -> Plan:
    """The plan of ``config``'s format."""
    if config.format in ROUND_FORMATS:
        return RoundsPlan(config, store, tournament_id)
    return FixedPlan(config)
