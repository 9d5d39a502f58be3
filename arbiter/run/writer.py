"""How a run writes to its database: each reported game stored once, with
its ``--strict`` warnings and its line in the PGN file, and every write's
failure turned into an aborted run rather than a crash
(``specs/tournament.md`` §Coordinator and players, ``specs/storage.md``).

:class:`GameWriter` is the coordinator's hand on the store
(:class:`~arbiter.run.coordinator.Coordinator` decides when to write and
what the results mean; this module only writes):

* :meth:`GameWriter.write` runs a write in a worker thread when engines are
  timed on the run's loop (a slow disk never delays them), else inline; a
  database that fails or is gone calls ``fail`` with the reason and gives
  None, so the games stored before stay and a resume plays the rest;
* :meth:`GameWriter.store_games` (in that thread) stores games in one
  transaction, False for a key already stored (the stored game wins, a
  ``dropped-result`` event says so), checks them under ``--strict`` (one
  ``strict`` event per warning, in the game's transaction), then appends
  the new ones to the PGN file, which is left alone after its first failure;
* :meth:`GameWriter.take_messages`: what the storing thread has to tell the
  display (strict warnings, the PGN file's failure once), taken on the loop.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import trio

from arbiter import records
from arbiter.config import TournamentConfig
from arbiter.games import get_game
from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame
from arbiter.store import DatabaseGoneError, DuplicateGameError, Store, explain
from arbiter.strict import check_game

__all__ = ["GameWriter"]

_T = TypeVar("_T")


class GameWriter:
    """Writes one run's games and events to ``store`` for tournament
    ``tournament_id``.  ``in_thread``: engines are timed on this loop
    (:attr:`~arbiter.run.player.Player.plays_here`), so writes go to a worker
    thread; ``fail(message)`` aborts the run; ``total()`` is the run's game
    count as far as known (the PGN file's Round tags use it)."""

    def __init__(self, config: TournamentConfig, store: Store, tournament_id: int, *,
                 in_thread: bool, fail: Callable[[str], None], total: Callable[[], int]):
        self.config = config
        self.store = store
        self.tournament_id = tournament_id
        self._in_thread = in_thread
        self._fail = fail
        self._total = total
        self._game = get_game(config.game)
        self.strict_warnings = 0  # --strict: warnings of the games this run stored
        self.strict_games = 0
        self._strict_said: list[str] = []  # warnings to tell the display, from the storing thread
        #: the PGN file could not be appended to: it is left alone from then on
        self._pgn_error: str | None = None
        self._pgn_error_told = False

    async def write(self, what: str, write: Callable[..., _T], *args: Any) -> _T | None:
        """``write(*args)``, in a thread when engines are timed on this loop
        (:attr:`Player.plays_here`).  A database that fails (locked beyond
        the busy timeout, a full disk, an I/O error) aborts the run cleanly
        instead of crashing it: the games stored before stay, and a resume
        plays the rest.  A database deleted or replaced since the run opened
        it aborts it too (nothing is written into a file nobody can read).
        None if it failed."""
        try:
            if self._in_thread:
                return await trio.to_thread.run_sync(write, *args)
            await trio.lowlevel.checkpoint()
            return write(*args)
        except DatabaseGoneError as exc:
            self._fail(f"{exc} (noticed while {what}): nothing more is written to it (it would "
                       "go to a file nobody reads) and the run stops; the games it stored went "
                       "with that file (a copy or backup of it keeps them)")
            return None
        except sqlite3.Error as exc:
            hint = explain(exc, self.store.busy_timeout)
            self._fail(f"the database failed while {what}: {hint} (SQLite: {exc}); the games "
                       "stored before are kept, and running the same command again plays the rest")
            return None

    def take_messages(self) -> list[str]:
        """What the storing thread has to say since last asked: the strict
        warnings, then the PGN file's failure (said once)."""
        said, self._strict_said = self._strict_said, []
        if self._pgn_error is not None and not self._pgn_error_told:
            self._pgn_error_told = True
            said.append(self._pgn_error)
        return said

    def store_games(self, played: Sequence[tuple[ScheduledGame, GameRecord]]) -> list[bool]:
        """In a worker thread: each game in one transaction, then the PGN
        file; False for a key already stored (the stored game wins)."""
        with self.store.transaction():
            stored = [self._store_game(scheduled, record) for scheduled, record in played]
            for (scheduled, record), new in zip(played, stored, strict=True):
                if not new:
                    self.store.add_event(self.tournament_id, "dropped-result",
                                         f"a second result for game {scheduled.key} was dropped: "
                                         "the stored game is kept", key=scheduled.key)
                elif self.config.strict:
                    self._check_strict(scheduled, record)
        if self.config.pgn:
            for (scheduled, record), new in zip(played, stored, strict=True):
                if new and self._pgn_error is None:
                    self._append_pgn(self.config.pgn, scheduled, record)
        return stored

    def _check_strict(self, scheduled: ScheduledGame, record: GameRecord) -> None:
        """In the storing thread, inside the game's transaction: ``--strict``'s
        warnings for the game (``specs/match.md`` §Strict mode), one ``strict``
        event each, stored with it."""
        try:
            warnings = check_game(record, self._game)
        except ValueError as exc:  # a record the match made is always a game
            warnings = []
            self._strict_said.append(f"strict: game {scheduled.key} could not be checked: {exc}")
        for warning in warnings:
            self.store.add_event(self.tournament_id, "strict", str(warning), engine=warning.engine,
                                 key=scheduled.key)
            self._strict_said.append(f"strict: game {scheduled.key}: {warning}")
        if warnings:
            self.strict_warnings += len(warnings)
            self.strict_games += 1

    def _store_game(self, scheduled: ScheduledGame, record: GameRecord) -> bool:
        try:
            self.store.save_game(
                self.tournament_id, key=scheduled.key, seq=scheduled.seq, round=scheduled.round,
                pairing=scheduled.pairing, index=scheduled.index, pair=scheduled.pair,
                opening=scheduled.opening.to_dict(), record=record.values_to_store(),
                move_data=record.encoded_moves())
        except DuplicateGameError:
            return False
        return True

    def _append_pgn(self, path: str, scheduled: ScheduledGame, record: GameRecord) -> None:
        per_round = self._total() // self.config.rounds
        try:
            records.append_game(path, record, {
                "Event": self.config.name, "Site": "?",
                "Round": records.round_label(scheduled.round, scheduled.seq, per_round)})
        except OSError as exc:  # a full disk, a file made read-only meanwhile ...
            self._pgn_error = (f"cannot append to {path} ({exc.strerror}); no more "
                               "games are written to it, all are in the database "
                               "(arbiter export)")
            self.store.add_event(self.tournament_id, "pgn-error", self._pgn_error,
                                 key=scheduled.key)
