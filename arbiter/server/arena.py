"""A CGOS-like arena: one game and time control, the idle connected engines
paired continuously, both colours per pair, every game stored.

An arena is a tournament of the results database with format
:data:`ARENA_FORMAT` and no schedule: its engines are whoever connects, its
games are keyed by their sequence number.  A game is played by the normal
match (:func:`arbiter.match.play_game`: the referee, the clock, the record)
and stored like a tournament's (:meth:`arbiter.store.Store.save_game`).  A
game cut short by the server's stop is not stored.

A fault is charged to the engine that made it and to nobody else
(``specs/wire.md`` §The server and the client): an engine that cannot start a
game (the start error names it) or cannot play on after one (deaf to
``stop``, faulted) is disconnected with a ``fault`` reason and rests
(:data:`REST_FIRST`, doubling up to :data:`REST_MAX`, keyed by its token and
name so that a reconnect does not end it); its opponent is asked ``isready``
and, when it answers, waits for its next pairing.  An engine is never paired
with itself (the same name on both sides).
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable
from dataclasses import dataclass

import trio

from arbiter.clock import TimeControl, TimeControlError
from arbiter.engine import EngineError, EngineStartError
from arbiter.games import get_game
from arbiter.live import LiveGames
from arbiter.match import play_game
from arbiter.match.driver import DEFAULT_TC, OnMove
from arbiter.record import GameRecord
from arbiter.store import Store

from .listener import Registry, Remote, fault_reason

__all__ = ["ARENA_FORMAT", "Arena", "ArenaSpec", "ArenaSpecError", "open_arena"]

#: the ``format`` of an arena's row in the ``tournaments`` table
ARENA_FORMAT = "arena"

#: where an arena's games start (an arena has no opening book yet)
START_OPENING: dict[str, object] = {"fen": None, "moves": [], "source": "start"}

_KEYS = ("game", "tc", "maxplies", "name")

#: how long an engine charged with a fault is not paired (seconds), doubled at
#: each fault in a row up to :data:`REST_MAX`; a game it plays through ends its
#: rest count.  Each failed start costs an honest opponent up to the remote
#: ready timeout (23 s): an engine that keeps failing may cost others a few of
#: those an hour, not one a minute.  The first rest is short enough for a
#: transient fault (a slow start, a machine briefly overloaded).
REST_FIRST = 30.0
REST_MAX = 960.0

Log = Callable[[str], None]


class ArenaSpecError(ValueError):
    """An ``--arena`` text that does not name a game and a time control."""


@dataclass(frozen=True)
class ArenaSpec:
    """What one arena plays: ``game=troll tc=10+0.1 [maxplies=N] [name=...]``."""

    game: str
    tc: str = DEFAULT_TC
    maxplies: int | None = None
    name: str | None = None

    @classmethod
    def parse(cls, text: str) -> ArenaSpec:
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise ArenaSpecError(f"arena {text!r}: {exc}") from None
        values: dict[str, str] = {}
        for word in words:
            key, eq, value = word.partition("=")
            if not eq or key not in _KEYS:
                raise ArenaSpecError(f"arena {text!r}: {word!r} is not one of "
                                     f"{', '.join(k + '=...' for k in _KEYS)}")
            values[key] = value
        if "game" not in values:
            raise ArenaSpecError(f"arena {text!r}: no game=...")
        try:
            get_game(values["game"])
            TimeControl.parse(values.get("tc", DEFAULT_TC))
            maxplies = int(values["maxplies"]) if "maxplies" in values else None
        except (TimeControlError, ValueError, KeyError) as exc:
            raise ArenaSpecError(f"arena {text!r}: {exc}") from None
        return cls(values["game"], values.get("tc", DEFAULT_TC), maxplies, values.get("name"))

    @property
    def title(self) -> str:
        return self.name or f"{self.game} arena"

    def to_dict(self) -> dict[str, object]:
        return {"format": ARENA_FORMAT, "game": self.game, "tc": self.tc,
                "maxplies": self.maxplies, "name": self.title}

    def identity(self) -> str:
        """The key that finds this arena's tournament again after a restart."""
        return f"{ARENA_FORMAT} {self.title} {self.game} {self.tc} {self.maxplies}"


def open_arena(store: Store, spec: ArenaSpec) -> int:
    """The arena's tournament id: the one of an earlier server with the same
    arena (its games go on), or a new one."""
    existing = store.find_tournament(spec.identity())
    if existing is not None:
        return int(existing["id"])
    return store.create_tournament(name=spec.title, game=spec.game, format=ARENA_FORMAT,
                                   identity=spec.identity(), config=spec.to_dict(),
                                   engines=[], total_games=0)


class Arena:
    """Pairs the registry's idle engines that play its game (:func:`_pair`:
    the longest waiting first, not twice in a row against the same one when
    another is free) and plays :attr:`spec`'s games into tournament
    ``tournament_id`` of ``store`` until cancelled.  An engine whose game
    option does not list the game is left for another arena (paired, it
    would fail the game's start and be disconnected, and its opponent with it)."""

    def __init__(self, spec: ArenaSpec, registry: Registry, store: Store, tournament_id: int,
                 *, log: Log):
        #: (token, engine name) -> (faults in a row, the time its rest ends)
        self.rests: dict[tuple[str, str], tuple[int, float]] = {}
        self.spec = spec
        self.registry = registry
        self.store = store
        self.tournament_id = tournament_id
        self.log = log
        self._seq = store.count_games(tournament_id)
        self._pairs = 0
        self.draining = False  # arbiter stop: pair no new game
        #: the games in progress as readers of the database see them (arbiter/live.py)
        self.live = LiveGames(store, tournament_id, spec.game)

    def drain(self) -> None:
        """Pair no new game (``arbiter stop``): :meth:`run` returns once the
        games in progress have ended and are stored."""
        self.draining = True
        self.registry.changed()  # the pairing loop looks again

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.live.keep_written)
            async with trio.open_nursery() as pairs:
                await self._pair_until_drained(pairs)
            nursery.cancel_scope.cancel()  # drained, its games over: the live rows' writer goes

    async def _pair_until_drained(self, pairs: trio.Nursery) -> None:
        while not self.draining:
            now = trio.current_time()
            idle = [remote for remote in self.registry.idle()  # (None: no game option)
                    if remote.engine.session.plays(self.spec.game) is not False
                    and self._rest_end(remote) <= now]
            pair = _pair(idle)
            if pair is None:
                with trio.move_on_at(self._next_rest_end(now)):
                    await self.registry.wait_change()
                continue
            first, second = pair
            first.busy = second.busy = True
            self._pairs += 1
            pairs.start_soon(self._play_pair, self._pairs, first, second)

    def _rest_end(self, remote: Remote) -> float:
        return self.rests.get((remote.token, remote.name), (0, -math.inf))[1]

    def _next_rest_end(self, now: float) -> float:
        """When the next rest ends (inf: none goes on): the arena looks again then."""
        return min((until for _, until in self.rests.values() if until > now), default=math.inf)

    def _charge(self, remote: Remote, reason: str) -> None:
        """``remote`` made a fault: disconnected with ``reason``, and rested."""
        now = trio.current_time()
        key = (remote.token, remote.name)
        faults = self.rests.get(key, (0, 0.0))[0] + 1
        rest = min(REST_FIRST * 2 ** (faults - 1), REST_MAX)
        self.rests = {other: value for other, value in self.rests.items()  # (rests long over go)
                      if value[1] > now - REST_MAX}
        self.rests[key] = (faults, now + rest)
        self.log(f"{self.spec.title}: {remote.name} disconnected and rested {rest:g} s: {reason}")
        remote.release(reason)

    async def _play_pair(self, pair: int, first: Remote, second: Remote) -> None:
        """Two games, each engine White once, unless one of them fails."""
        try:
            for index, (white, black) in enumerate(((first, second), (second, first))):
                key = f"pair{pair}-{index + 1}"  # live only: stored, it is keyed by its seq
                self.live.begin(key, 2 * pair + index, white.name, black.name)
                record, stored = await self._play(white, black, self.live.mover(key)), None
                if record is not None:
                    stored = await self._store(pair, index, record, white, black)
                self.live.ended(key, stored)
                if record is None or self.draining:  # not played (the one at fault is
                    break  # charged, the other free), or the server stops: no new game
                fit = [await self._fit(white), await self._fit(black)]  # both checked
                if not all(fit):
                    break
        finally:
            now = trio.current_time()
            for remote, opponent in ((first, second), (second, first)):
                remote.busy, remote.idle_since, remote.last_opponent = False, now, opponent
            self.registry.changed()

    async def _play(self, white: Remote, black: Remote, on_move: OnMove | None = None) -> GameRecord | None:
        self.log(f"{self.spec.title}: {white.name} - {black.name} started")
        try:
            return await play_game(self.spec.game, white.engine, black.engine, tc=self.spec.tc,
                                   maxplies=self.spec.maxplies, on_move=on_move)
        except EngineStartError as exc:
            self.log(f"{self.spec.title}: {white.name} - {black.name} not played: {exc}")
            await self._not_started(exc, white, black)
            return None

    async def _not_started(self, exc: EngineStartError, white: Remote, black: Remote) -> None:
        """A game that could not start: the engine the error names (else one
        unfit or gone) is charged, or released when its client is gone
        (detached: a drop, not a fault; it rests not); the other is asked
        ``isready`` (a start cut short may have left it out of step) and is
        free again when it answers."""
        named = [r for r in (white, black) if r.name == exc.engine] or \
            [r for r in (white, black) if not r.engine.healthy or r.transport.detached]
        for remote in named:
            if remote.transport.detached:
                remote.release()
            else:
                self._charge(remote, fault_reason(remote.engine, exc.reason))
        for remote in (white, black):
            if remote not in named and not remote.done.is_set():
                try:
                    await remote.engine.ping()
                except EngineError as other:
                    self._charge(remote, fault_reason(remote.engine, other.reason))

    async def _store(self, pair: int, index: int, record: GameRecord, white: Remote,
                     black: Remote) -> str:
        self._seq += 1
        seq = self._seq
        await trio.to_thread.run_sync(lambda: self.store.save_game(
            self.tournament_id, key=str(seq), seq=seq, round=pair, pairing=pair, index=index,
            pair=pair, opening=START_OPENING, record=record.to_dict()))
        for remote in (white, black):
            remote.transport.game_over(f"{self.tournament_id}-{seq}", record.result,
                                       record.termination, record.termination_detail)
        self.log(f"{self.spec.title} game {seq}: {record.white} - {record.black} "
                 f"{record.result} ({record.termination})")
        return str(seq)

    async def _fit(self, remote: Remote) -> bool:
        """Whether ``remote`` can play on after a game; one whose client is
        gone (still detached) is released, one that cannot (searching and
        deaf to ``stop``, faulted) is charged.  One that can ends its rest count."""
        if remote.transport.detached:
            remote.release()
            return False
        if remote.engine.searching:
            await remote.engine.finish_search()
        if remote.engine.healthy:
            self.rests.pop((remote.token, remote.name), None)
            return True
        self._charge(remote, fault_reason(remote.engine))
        return False


def _pair(idle: list[Remote]) -> tuple[Remote, Remote] | None:
    """Who plays next among ``idle`` (the longest waiting first), None when
    no two can: the longest waiting that has an opponent, against the longest
    waiting of the others that is not its last opponent (that one only when
    there is no other).  An engine never plays itself: two connections under
    one name are one engine."""
    for first in idle:
        others = [remote for remote in idle if remote.name != first.name]
        if others:
            fresh = [remote for remote in others if remote is not first.last_opponent]
            return first, (fresh or others)[0]
    return None
