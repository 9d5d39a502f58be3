"""The game loop every player runs (``specs/tournament.md`` §Coordinator and
players): engines kept from game to game, a batch of game pairs played on one
slot, each game reported the moment it ends.

:class:`GameLoop` holds a run's engines in one trio run: in the run's own
process (:class:`arbiter.run.inprocess.InProcessPlayer`), in a worker process
(:mod:`arbiter.run.worker`) or in a Dask worker (:mod:`arbiter.cluster.loop`).
Its slots share one pool of idle engines: an engine asked for with the
configuration of an idle one is that one, told ``uginewgame`` as before each
game.  Where engines come from is an :class:`EngineSource`: child processes
(:data:`LOCAL`), or connections of remote engines (``remote:NAME``,
:mod:`arbiter.server.remote_run`).

The rules of a batch, as a local run always had them: an engine that
crashed, stalled or is otherwise unfit after a game is ended and started
afresh for the next (an event says so; ``restart`` ends every engine after
every game); a game whose engine fails its handshake is not recorded and is
tried once more with fresh processes; a second failure ends the batch with a
failure that aborts the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import trio

from arbiter.clock import TimeControl
from arbiter.engine import Engine, EngineConfig, EngineStartError, EngineTimeouts, open_engine
from arbiter.games import get_game
from arbiter.live import ply_entry
from arbiter.match import play_game
from arbiter.match.adjudication import Adjudication
from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame

from .player import LivePly

__all__ = ["GameLoop", "Match", "EngineSource", "LocalProcesses", "LOCAL", "MatchSettings", "SlotReport",
           "ENGINE_IDLE", "IDLE_PER_SLOT", "startup_limit", "STARTUPS_PER_CORE"]

#: Seconds an idle engine is kept for a later batch: a pairing's next pair
#: comes within a pair's time while its run goes on, so an engine unused for
#: this long belongs to a pairing (or run) that is over, and holds memory
#: (and maybe a network's weights) for nothing.
ENGINE_IDLE = 30.0
#: Idle engines kept per slot, at most: a slot plays two engines at a time,
#: so two per slot keep one pairing's engines per slot ready, and a round
#: robin's many engines cannot fill the machine with idle processes.
IDLE_PER_SLOT = 2
#: Seconds between two looks at the idle engines (for :data:`ENGINE_IDLE`).
SWEEP = 5.0
#: Engine start-ups (process, handshake, options) at once, per core.  A
#: start-up is mostly CPU (an interpreter and its imports, a network's
#: weights): n of them at once on c cores each take about n/c times as long,
#: so starting every engine of a high concurrency at once only makes every
#: handshake late (some past their timeout, counted from the spawn) and starves
#: the games already playing.  Two per core keep the cores busy while some
#: start-ups wait on the disk.
STARTUPS_PER_CORE = 2


def cores() -> int:
    """The cores this process may run on."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def startup_limit() -> int:
    """How many engines a process starts at once: :data:`STARTUPS_PER_CORE`
    for each core it may run on."""
    return STARTUPS_PER_CORE * cores()


@dataclass(frozen=True)
class MatchSettings:
    """What every game of a run shares (a tournament's match settings), as
    they travel to a worker: plain values."""

    game: str
    tc: str
    timemargin_ms: int = 0
    maxplies: int | None = None
    stall_ms: int = 0
    restart: bool = False
    resign: str | None = None
    draw: str | None = None

    @classmethod
    def of(cls, config: Any) -> MatchSettings:
        """The settings of a :class:`~arbiter.config.TournamentConfig`."""
        return cls(game=config.game, tc=config.tc, timemargin_ms=config.timemargin_ms,
                   maxplies=config.maxplies, stall_ms=config.stall_ms, restart=config.restart,
                   resign=config.resign, draw=config.draw)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchSettings:
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})


class EngineSource(Protocol):
    """Where a run's engines come from.

    :meth:`open` yields a ready engine (handshake and options done) for as
    long as the context lasts; :meth:`exclusive` says whether a configuration
    has one instance only (a remote engine's connection: a second game waits
    for it).  What a game needs of an engine's connection beyond lines (a
    remote engine's lag allowance, its disconnects) is its transport's
    (:class:`arbiter.engine.transport.Transport`), which the match reads."""

    def open(self, config: EngineConfig, *, timeouts: EngineTimeouts | None = None,
             log_dir: str | None = None) -> AbstractAsyncContextManager[Engine]: ...

    def exclusive(self, config: EngineConfig) -> bool: ...


class LocalProcesses:
    """Engines as child processes of this process (:func:`open_engine`)."""

    def open(self, config: EngineConfig, *, timeouts: EngineTimeouts | None = None,
             log_dir: str | None = None) -> AbstractAsyncContextManager[Engine]:
        return open_engine(config, timeouts=timeouts, log_dir=log_dir)

    def exclusive(self, config: EngineConfig) -> bool:
        return False


LOCAL = LocalProcesses()


class Match:
    """What the games of a batch share: the match settings, and the engines
    by name (their configurations as the process playing them runs them)."""

    def __init__(self, settings: MatchSettings, engines: Mapping[str, EngineConfig]):
        self.settings = settings
        self.engines = dict(engines)
        self.game = get_game(settings.game)
        self.tc = TimeControl.parse(settings.tc)
        self.adjudication = Adjudication.parse(settings.resign, settings.draw)


class SlotReport(Protocol):
    """What a slot tells whoever runs the loop, game by game."""

    async def started(self, game: ScheduledGame) -> Callable[[LivePly], None] | None:
        """``game`` begins; returns where its plies go (None: nowhere)."""

    async def finished(self, game: ScheduledGame, record: GameRecord) -> None:
        """``game`` ended with ``record``."""

    async def event(self, kind: str, detail: str, engine: str | None, key: str | None) -> None:
        """A restart, a failed handshake."""

    async def build(self, name: str, engine: Engine) -> None:
        """Engine ``name`` was started afresh."""


class _Held:
    """An engine kept by the loop; it lives in a task of its own
    (:meth:`GameLoop._hold`), so engines end in any order."""

    def __init__(self, engine: Engine, name: str, key: str, release: trio.Event, gone: trio.Event):
        self.engine = engine
        self.name = name
        self.key = key
        self.release = release
        self.gone = gone
        self.since = 0.0  # when it became idle

    async def close(self) -> None:
        self.release.set()
        with trio.CancelScope(shield=True):
            await self.gone.wait()


class GameLoop:
    """Engines and games in this trio run.

    ``slots``: the batches played at once (bounds the idle engines kept);
    ``source``: where engines come from.  Use it inside :meth:`running`, then
    :meth:`play` batches (each of a :class:`Match`) from as many tasks as
    there are slots."""

    def __init__(self, *, slots: int, source: EngineSource = LOCAL,
                 timeouts: EngineTimeouts | None = None, log_dir: str | None = None,
                 startups: int | None = None, where: str = ""):
        self.slots = max(1, slots)
        self.source = source
        self.timeouts = timeouts
        self.log_dir = log_dir
        self.where = where  # " (on worker X)" in events, or ""
        self._startups = trio.CapacityLimiter(startups or startup_limit())
        self._idle: list[_Held] = []
        self._out: dict[str, int] = {}  # engines of an exclusive configuration in use, by key
        self._returned = trio.Event()  # set when an engine comes back to the pool
        self._nursery: trio.Nursery | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[GameLoop]:
        """The loop, with every engine it started ended on the way out."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._sweep)
            try:
                yield self
            finally:
                with trio.CancelScope(shield=True):
                    idle, self._idle = self._idle, []
                    for item in idle:
                        await item.close()
                nursery.cancel_scope.cancel()
                self._nursery = None

    # -- engines ---------------------------------------------------------------------

    def _key(self, config: EngineConfig) -> str:
        return json.dumps(config.to_dict(), sort_keys=True, default=str)

    async def _hold(self, name: str, config: EngineConfig, key: str, *,
                    task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        release, gone = trio.Event(), trio.Event()
        try:
            async with self.source.open(config, timeouts=self.timeouts, log_dir=self.log_dir) as engine:
                task_status.started(_Held(engine, name, key, release, gone))
                await release.wait()
        finally:
            gone.set()

    async def acquire(self, name: str, config: EngineConfig, report: SlotReport) -> _Held:
        """An idle engine of ``config``, or a new one named ``name``
        (:class:`EngineStartError`).  An exclusive configuration in use
        elsewhere is waited for."""
        key = self._key(config)
        exclusive = self.source.exclusive(config)
        while True:
            for item in self._idle:
                if item.key == key and item.engine.healthy:
                    self._idle.remove(item)
                    self._out[key] = self._out.get(key, 0) + 1
                    return item
            if not exclusive or not self._out.get(key):
                break
            await self._returned.wait()
        assert self._nursery is not None, "acquire outside running()"
        self._out[key] = self._out.get(key, 0) + 1
        try:
            if exclusive:  # waited for, costs no CPU here: outside the start-up wave
                held: _Held = await self._nursery.start(self._hold, name, config, key)
            else:
                async with self._startups:
                    held = await self._nursery.start(self._hold, name, config, key)
        except BaseException:
            self._put_back(key)
            raise
        await report.build(name, held.engine)
        return held

    def _put_back(self, key: str) -> None:
        self._out[key] -= 1
        self._returned.set()
        self._returned = trio.Event()

    async def release(self, item: _Held, keep: bool) -> None:
        """``item`` back to the idle engines (if ``keep`` and fit), else ended."""
        with trio.CancelScope(shield=True):
            self._put_back(item.key)
            if not keep or not item.engine.healthy:
                await item.close()
                return
            item.since = trio.current_time()
            self._idle.append(item)
            while len(self._idle) > IDLE_PER_SLOT * self.slots:
                await self._idle.pop(0).close()

    async def _sweep(self) -> None:
        while True:
            await trio.sleep(SWEEP)
            now = trio.current_time()
            for item in [i for i in self._idle if now - i.since > ENGINE_IDLE]:
                self._idle.remove(item)
                await item.close()

    # -- batches -------------------------------------------------------------------

    async def play(self, match: Match, pairs: Sequence[Sequence[ScheduledGame]], report: SlotReport,
                   drained: Callable[[], Awaitable[bool]] | None = None,
                   stopping: Callable[[], bool] | None = None
                   ) -> tuple[str | None, list[ScheduledGame]]:
        """Play ``pairs`` in order on one slot; (the failure that ended the
        batch or None, the games not begun because the run was drained:
        ``drained()`` is asked before each pair after the first (an SPRT
        decision: pairs begun are completed), ``stopping()`` before every game
        (a graceful stop: the game in progress is completed, no other begins))."""
        for number, games in enumerate(pairs):
            if number and drained is not None and await drained():
                return None, [g for pair in pairs[number:] for g in pair]
            failure, left = await _Slot(self, match, report, list(games), stopping).play()
            if failure is not None or left:
                return failure, left + [g for pair in pairs[number + 1:] for g in pair]
        return None, []


class _Slot:
    """The games of one pair, in order, with engines of the loop's pool."""

    def __init__(self, loop: GameLoop, match: Match, report: SlotReport, games: list[ScheduledGame],
                 stopping: Callable[[], bool] | None = None):
        self.loop = loop
        self.match = match
        self.report = report
        self.pending = games
        self.stopping = stopping
        self.held: dict[str, _Held] = {}
        self.failed: set[str] = set()  # keys whose handshake failed once

    async def play(self) -> tuple[str | None, list[ScheduledGame]]:
        """(the failure that ended the pair or None, its games not begun
        because the run is stopping)."""
        try:
            while self.pending:
                if self.stopping is not None and self.stopping():
                    return None, list(self.pending)
                game = self.pending[0]
                try:
                    record = await self._next(game)
                except EngineStartError as exc:
                    await self._drop(list(self.held))
                    failure = await self._handshake_failed(game, exc)
                    if failure is not None:
                        return failure, []
                    continue
                self.pending.pop(0)
                await self.report.finished(game, record)
                await self._after(game, record)
            return None, []
        finally:
            for item in self.held.values():
                await self.loop.release(item, keep=not self.match.settings.restart)
            self.held.clear()

    async def _next(self, game: ScheduledGame) -> GameRecord:
        loop, match = self.loop, self.match
        for name in [n for n in self.held if n not in game.players]:
            await loop.release(self.held.pop(name), keep=True)
        on_ply = await self.report.started(game)
        for name in (game.white, game.black):
            if name not in self.held:
                self.held[name] = await loop.acquire(name, match.engines[name], self.report)
        white, black = self.held[game.white].engine, self.held[game.black].engine
        on_move = None
        if on_ply is not None:
            def on_move(ply: Any, position: Any, _to: Callable[[LivePly], None] = on_ply) -> None:
                _to({**ply_entry(ply), "at": round(time.time(), 3)})
        return await play_game(
            match.game, white, black, fen=game.opening.fen, opening_moves=game.opening.moves,
            tc=match.tc, timemargin_ms=match.settings.timemargin_ms, maxplies=match.settings.maxplies,
            adjudication=match.adjudication, stall_ms=match.settings.stall_ms, on_move=on_move)

    async def _after(self, game: ScheduledGame, record: GameRecord) -> None:
        """Keep the engines fit for another game; restart the others."""
        if self.match.settings.restart:
            await self._drop(list(self.held))
            return
        for name, item in list(self.held.items()):
            engine = item.engine
            if not engine.healthy and engine.fault is None:
                await engine.finish_search()  # searching when the game ended: stop it
            if not engine.healthy:
                reason = engine.fault.detail if engine.fault else "not ready for another game"
                await self.report.event("restart", f"engine {name!r} restarted after game "
                                        f"{game.key} ({record.termination}): {reason}{self.loop.where}",
                                        name, game.key)
                await self._drop([name])

    async def _drop(self, names: list[str]) -> None:
        for name in names:
            await self.loop.release(self.held.pop(name), keep=False)

    async def _handshake_failed(self, game: ScheduledGame, exc: EngineStartError) -> str | None:
        where = self.loop.where
        await self.report.event("handshake-failed", f"game {game.key} not played: {exc}{where}",
                                exc.engine, game.key)
        if game.key in self.failed:
            return (f"handshake-failure: engine {exc.engine!r} failed twice: {exc.reason} "
                    f"(game {game.key} not played{where})")
        self.failed.add(game.key)
        return None
