"""A CGOS-like arena: one game and time control, the idle connected engines
paired continuously, both colours per pair, every game stored.

An arena is a tournament of the results database with format
:data:`ARENA_FORMAT` and no schedule: its engines are whoever connects, its
games are keyed by their sequence number.  A game is played by the normal
match (:func:`arbiter.match.play_game`: the referee, the clock, the record)
and stored like a tournament's (:meth:`arbiter.store.Store.save_game`).  A
game cut short by the server's stop is not stored.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

import trio

from arbiter.clock import TimeControl, TimeControlError
from arbiter.engine import EngineStartError
from arbiter.games import get_game
from arbiter.live import LiveGames
from arbiter.match import play_game
from arbiter.match.driver import DEFAULT_TC, OnMove
from arbiter.record import GameRecord
from arbiter.store import Store

from .listener import Registry, Remote
from .remote_record import seat_remote_engines, settle_remote_record, tell_game_over

__all__ = ["ARENA_FORMAT", "Arena", "ArenaSpec", "ArenaSpecError", "open_arena"]

#: the ``format`` of an arena's row in the ``tournaments`` table
ARENA_FORMAT = "arena"

#: where an arena's games start (an arena has no opening book yet)
START_OPENING: dict[str, object] = {"fen": None, "moves": [], "source": "start"}

_KEYS = ("game", "tc", "maxplies", "name")

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
        self.spec = spec
        self.registry = registry
        self.store = store
        self.tournament_id = tournament_id
        self.log = log
        self._seq = store.count_games(tournament_id)
        self._pairs = 0
        #: the games in progress as readers of the database see them (arbiter/live.py)
        self.live = LiveGames(store, tournament_id, spec.game)

    async def run(self) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.live.keep_written)
            while True:
                idle = [remote for remote in self.registry.idle()  # (None: no game option)
                        if remote.engine.session.plays(self.spec.game) is not False]
                if len(idle) < 2:
                    await self.registry.wait_change()
                    continue
                first, second = _pair(idle)
                first.busy = second.busy = True
                self._pairs += 1
                nursery.start_soon(self._play_pair, self._pairs, first, second)

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
                fit = [await _fit(white), await _fit(black)]  # both checked, both released if unfit
                if not all(fit):
                    break
        finally:
            now = trio.current_time()
            for remote, opponent in ((first, second), (second, first)):
                remote.busy, remote.idle_since, remote.last_opponent = False, now, opponent
            self.registry.changed()

    async def _play(self, white: Remote, black: Remote, on_move: OnMove | None = None) -> GameRecord | None:
        self.log(f"{self.spec.title}: {white.name} - {black.name} started")
        seat_remote_engines(get_game(self.spec.game), white.engine, black.engine)
        try:
            record = await play_game(self.spec.game, white.engine, black.engine, tc=self.spec.tc,
                                     maxplies=self.spec.maxplies, on_move=on_move)
            return settle_remote_record(record, white.engine, black.engine)
        except EngineStartError as exc:
            self.log(f"{self.spec.title}: {white.name} - {black.name} not played: {exc}")
            # the engine at fault: unfit, or its client gone (detached: its
            # conversation looks healthy); the other plays on
            failed = [r for r in (white, black)
                      if not r.engine.healthy or r.transport.detached] or [white, black]
            for remote in failed:
                remote.release()
            return None

    async def _store(self, pair: int, index: int, record: GameRecord, white: Remote,
                     black: Remote) -> str:
        self._seq += 1
        seq = self._seq
        await trio.to_thread.run_sync(lambda: self.store.save_game(
            self.tournament_id, key=str(seq), seq=seq, round=pair, pairing=pair, index=index,
            pair=pair, opening=START_OPENING, record=record.to_dict()))
        tell_game_over(f"{self.tournament_id}-{seq}", record, white.engine, black.engine)
        self.log(f"{self.spec.title} game {seq}: {record.white} - {record.black} "
                 f"{record.result} ({record.termination})")
        return str(seq)


def _pair(idle: list[Remote]) -> tuple[Remote, Remote]:
    """Who plays next among ``idle`` (two or more, the longest waiting first):
    the longest waiting, against the longest waiting of the others that is
    not its last opponent (that one only when there is no other)."""
    first = idle[0]
    others = [remote for remote in idle[1:] if remote is not first.last_opponent]
    return first, (others or idle[1:])[0]


async def _fit(remote: Remote) -> bool:
    """Whether ``remote`` can play on; one that cannot (searching and deaf
    to ``stop``, faulted, gone or still disconnected) is released."""
    if remote.transport.detached:
        remote.release()
        return False
    if remote.engine.searching:
        await remote.engine.finish_search()
    if remote.engine.healthy:
        return True
    remote.release()
    return False
