"""The games a run has still to play, and how they are taken
(``specs/tournament.md`` §Coordinator and players).

A taker gets *game pairs*: the games of one pair (both colours, one opening)
are played in order on one slot, so their engines stay loaded between them.
While fewer pairs are pending than there are idle takers, a pair is split and
its games are taken one by one, so that no slot idles while a pair's second
game waits for its first.  Games handed back (their worker was lost) are taken
again first.  Once the run is drained (an SPRT decision, a graceful stop) only
the games of pairs already begun are taken: a pair is completed, none begun.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from arbiter.schedule import ScheduledGame

__all__ = ["PendingGames"]

PairId = tuple[int, int]


class PendingGames:
    """The pending games of a schedule, in schedule order."""

    def __init__(self, games: Iterable[ScheduledGame], begun: Iterable[PairId] = ()):
        #: the games to play, in schedule order (a deque: taken from its front)
        self._games: deque[ScheduledGame] = deque(games)
        #: the pending games of each game pair, in schedule order: a pair is
        #: taken whole without a scan of every pending game
        self._of_pair: dict[PairId, list[ScheduledGame]] = {}
        for game in self._games:
            self._of_pair.setdefault(_pair(game), []).append(game)
        self._begun: set[PairId] = set(begun)
        self.drained = False

    def __len__(self) -> int:
        return len(self._games)

    def pairs_left(self) -> int:
        """Pairs with a game still to take."""
        return len(self._of_pair)

    def _first(self) -> ScheduledGame | None:
        if not self.drained:
            return self._games[0] if self._games else None
        return next((g for g in self._games if _pair(g) in self._begun), None)

    def _forget(self, game: ScheduledGame) -> None:
        """``game`` is taken: out of the pending games and of its pair's (a
        taken game is usually at the front, so each ``remove`` stops at once)."""
        self._games.remove(game)
        games = self._of_pair[_pair(game)]
        games.remove(game)
        if not games:
            del self._of_pair[_pair(game)]
        self._begun.add(_pair(game))

    def take(self, most: int, takers: int, idle: int) -> list[list[ScheduledGame]]:
        """Up to ``most`` game pairs for one of ``takers`` takers, ``idle``
        of them (this one included) without a batch: more than one pair only
        while the pending pairs leave as many to every taker (so the last
        pairs are spread, not queued behind one slot); a single game of a
        pair while fewer pairs are left than idle takers (so none idles while
        a pair's second game waits for its first); [] when none is left."""
        first = self._first()
        if first is None:
            return []
        if self.pairs_left() < idle:
            self._forget(first)
            return [[first]]
        count = max(1, min(most, self.pairs_left() // max(1, takers)))
        batch: list[list[ScheduledGame]] = []
        while len(batch) < count and (first := self._first()) is not None:
            games = list(self._of_pair[_pair(first)])  # in schedule order
            for game in games:
                self._forget(game)
            batch.append(games)
        return batch

    def add(self, games: Iterable[ScheduledGame]) -> None:
        """Games of a round just paired, after those pending."""
        for game in games:
            self._games.append(game)
            self._of_pair.setdefault(_pair(game), []).append(game)

    def give_back(self, games: Iterable[ScheduledGame]) -> None:
        """Games taken but not played (their worker was lost): taken again first."""
        for game in sorted(games, key=lambda g: g.seq, reverse=True):
            self._games.appendleft(game)
            self._of_pair.setdefault(_pair(game), []).insert(0, game)
        for games_of_pair in self._of_pair.values():
            games_of_pair.sort(key=lambda g: g.seq)


def _pair(game: ScheduledGame) -> PairId:
    return game.pairing, game.pair
