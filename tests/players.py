"""Players for coordinator tests (``specs/tournament.md`` §Coordinator and
players): they play nothing, so a test sees the coordinator alone."""

from __future__ import annotations

import contextlib

from arbiter.record import GameRecord
from arbiter.run.player import BatchEnd


class FixedRecords:
    """A player of ``slots`` slots, handed up to ``max_batch`` pairs at once,
    that gives every game the record "White wins" (a ``connection`` ending)
    and remembers the keys of each batch it was handed (:attr:`handed`)."""

    def __init__(self, slots: int = 1, max_batch: int = 3):
        self.slots = slots
        self.max_batch = max_batch
        self.plays_here = False
        self.handed: list[list[list[str]]] = []

    def describe(self) -> str:
        return "nowhere (a test's fixed records)"

    @contextlib.asynccontextmanager
    async def session(self, reporter):
        yield

    async def play(self, pairs, reporter) -> BatchEnd:
        self.handed.append([[g.key for g in pair] for pair in pairs])
        await reporter.finished([(g, GameRecord("troll", g.white, g.black, "1-0", "connection", "fixed"))
                                 for pair in pairs for g in pair])
        return BatchEnd()

    def drain(self, games: bool = False) -> None:
        pass
