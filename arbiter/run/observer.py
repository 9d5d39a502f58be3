"""What a run tells its display, and how it ended."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame
from arbiter.standings import Standings
from arbiter.store import RunStatus

if TYPE_CHECKING:
    from .coordinator import Coordinator

__all__ = ["Observer", "RunResult"]


class Observer:
    """What a live display is told (all no-ops here; see :mod:`arbiter.progress`)."""

    def started(self, run: Coordinator) -> None: ...
    def game_started(self, game: ScheduledGame) -> None: ...
    def game_finished(self, game: ScheduledGame, record: GameRecord, standings: Standings) -> None: ...
    def message(self, text: str) -> None: ...
    def tick(self) -> None: ...
    def stopped(self, result: RunResult) -> None: ...


@dataclass
class RunResult:
    """How a run ended: ``status`` is ``finished``, ``interrupted``, ``stopped`` or ``aborted``."""

    tournament_id: int
    status: RunStatus
    note: str
    played: int  # games stored by this run
    done: int  # games stored in all
    total: int
    standings: Standings
    abandoned: list[str] = field(default_factory=list)  # keys in progress when stopped
    strict_warnings: int = 0  # --strict: warnings raised by the games this run stored
    strict_games: int = 0  # ... in this many games
