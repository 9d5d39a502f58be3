"""The seam between a run's coordinator and whatever plays its games
(``specs/tournament.md`` §Coordinator and players).

A run is a *coordinator* (:class:`arbiter.run.coordinator.Coordinator`: the
schedule, taking game pairs, storing every game once the moment it arrives,
standings, SPRT, stopping, observers) and a *player* that plays the pairs it
is handed: in this process (:class:`arbiter.run.inprocess.InProcessPlayer`),
in local worker processes (:class:`arbiter.run.processes.ProcessPlayer`) or
on a Dask cluster (:class:`arbiter.cluster.ClusterPlayer`).  The coordinator
knows only :class:`Player`; a player knows only :class:`Reporter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame

__all__ = ["Player", "Reporter", "BatchEnd", "PlayerError", "LivePly"]

#: One ply of a game in progress as a viewer is shown it
#: (:func:`arbiter.live.ply_entry` and the wall-clock time it was seen, ``at``).
LivePly = dict[str, Any]


class PlayerError(Exception):
    """A player that cannot go on (its cluster unreachable, worker processes
    that keep dying, a pair failing on worker after worker): the run aborts
    with this message, keeping every stored game."""


@dataclass
class BatchEnd:
    """How a batch handed to :meth:`Player.play` ended.

    ``failure``: a reason that aborts the run (an engine's handshake failing
    twice), once the games reported are stored; None if none.
    ``returned``: games of the batch that were not played and must be played
    again elsewhere (their worker was lost): the coordinator takes them back.
    ``skipped``: games not begun because the run was drained (an SPRT
    decision, a graceful stop); they are not played by this run.
    Every other game of the batch was reported through
    :meth:`Reporter.finished`."""

    failure: str | None = None
    returned: list[ScheduledGame] = field(default_factory=list)
    skipped: list[ScheduledGame] = field(default_factory=list)


class Reporter(Protocol):
    """What a player tells the coordinator while it plays a batch.

    Called from the run's event loop (a player whose games run elsewhere
    hands them over to it first).  :meth:`finished` stores the games before
    it returns, whatever happens meanwhile."""

    def message(self, text: str) -> None:
        """A line for the run's display (a worker lost, a cluster joined)."""

    def started(self, game: ScheduledGame) -> None:
        """``game`` begins (its engines are ready or being started)."""

    def moved(self, key: str, plies: Sequence[LivePly]) -> None:
        """Plies of game ``key`` in progress, for its viewers."""

    async def finished(self, played: Sequence[tuple[ScheduledGame, GameRecord]]) -> None:
        """Games played: stored at once (several in one transaction)."""

    async def event(self, kind: str, detail: str, engine: str | None, key: str | None) -> None:
        """Something worth an ``events`` row (a restart, a failed handshake)."""

    async def build(self, name: str, id_name: str | None, author: str | None) -> None:
        """Engine ``name`` was started and said who it is (stored once per run)."""


class Player(Protocol):
    """Plays the game pairs a coordinator hands it.

    :attr:`slots`: how many batches it plays at once (the run's concurrency).
    :attr:`plays_here`: whether engines are timed on the run's own event loop
    (then the coordinator writes the database from a worker thread, so that a
    slow disk never delays an engine's clock; else it writes at once: a
    thread's hop costs more than a game's write, bench/README.md §Worker processes).
    :attr:`max_batch`: the most game pairs one batch may hold now (read at
    each take; more than one only where a batch's fixed cost matters).
    :meth:`session` is entered once around the whole run (starting worker
    processes, connecting to a cluster) and, on the way out by any path,
    ends every game in flight and every process it started.
    :meth:`play` plays the games of ``pairs`` (each a game pair, or the game
    left of one, or a single game), reporting each as it ends, and says how
    the batch ended; cancelled, it ends its games (abandoned: replayed on
    resume).  :meth:`drain` asks that no further pair be begun (batches in
    flight finish the pair they play: an SPRT decision), or with ``games``
    no further game (the games in progress finish: a graceful stop)."""

    slots: int
    max_batch: int
    plays_here: bool

    def session(self, reporter: Reporter) -> AbstractAsyncContextManager[None]: ...

    async def play(self, pairs: list[list[ScheduledGame]], reporter: Reporter) -> BatchEnd: ...

    def drain(self, games: bool = False) -> None: ...

    def describe(self) -> str:
        """Where the games are played, for the run's first line."""
        ...
