"""The player that plays in the run's own process and event loop
(``arbiter play``, small runs, runs with remote engines, the tests):
``--workers 1`` (``specs/tournament.md`` §Workers)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from arbiter.engine import Engine, EngineTimeouts
from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame

from .gameloop import LOCAL, EngineSource, GameLoop, Match, MatchSettings
from .player import BatchEnd, LivePly, Reporter

__all__ = ["InProcessPlayer"]


class InProcessPlayer:
    """Plays with a :class:`GameLoop` in this trio run, ``config.concurrency``
    batches at once; engines come from ``source`` (child processes unless
    remote engines take part)."""

    max_batch = 1
    plays_here = True

    def __init__(self, config: Any, *, source: EngineSource = LOCAL,
                 timeouts: EngineTimeouts | None = None, startups: int | None = None):
        self.slots = max(1, config.concurrency)
        self.match = Match(MatchSettings.of(config), {e.name: e for e in config.engines})
        self.loop = GameLoop(slots=self.slots, source=source, timeouts=timeouts,
                             log_dir=config.log_dir, startups=startups)
        self._drained = False
        self._stopping = False  # a graceful stop: no further game

    def describe(self) -> str:
        return "in this process"

    @asynccontextmanager
    async def session(self, reporter: Reporter) -> AsyncIterator[None]:
        async with self.loop.running():
            yield

    async def play(self, pairs: list[list[ScheduledGame]], reporter: Reporter) -> BatchEnd:
        failure, skipped = await self.loop.play(self.match, pairs, _Report(reporter), self._is_drained,
                                                lambda: self._stopping)
        return BatchEnd(failure=failure, skipped=skipped)

    async def _is_drained(self) -> bool:
        return self._drained

    def drain(self, games: bool = False) -> None:
        self._drained = True
        self._stopping = self._stopping or games


class _Report:
    """The slot's reports straight to the coordinator, on the same loop."""

    def __init__(self, reporter: Reporter):
        self.reporter = reporter

    async def started(self, game: ScheduledGame) -> Callable[[LivePly], None]:
        self.reporter.started(game)
        key, moved = game.key, self.reporter.moved
        return lambda ply: moved(key, (ply,))

    async def finished(self, game: ScheduledGame, record: GameRecord) -> None:
        await self.reporter.finished([(game, record)])

    async def event(self, kind: str, detail: str, engine: str | None, key: str | None) -> None:
        await self.reporter.event(kind, detail, engine, key)

    async def build(self, name: str, engine: Engine) -> None:
        await self.reporter.build(name, engine.id_name, engine.author)
