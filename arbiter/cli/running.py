"""A run from the command line: ``arbiter tournament``, ``match`` and ``demo``
once their configuration is built (``specs/tournament.md`` §Exit status,
§Remote engines).

:func:`run_config` finds or creates the tournament in the database (each
engine started once first, so a typo leaves no tournament behind; one that
another run holds refused at once, exit 3), plays what is left under the
interrupt policy (the first signal stops the run cleanly, ``arbiter stop``
drains it; with ``remote:NAME`` engines a signal during the wait for them
ends the wait and removes a tournament this run created), on a cluster, in
worker processes or in this process, then prints the standings and exits
with the run's status (``--strict``: 4 when there were warnings).  The
commands and their options are :mod:`arbiter.cli.tournament`'s.
"""

from __future__ import annotations

import math
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import typer
from rich.console import Console

from arbiter.cluster.address import ClusterTarget
from arbiter.config import TournamentConfig
from arbiter.engine import EngineStartError
from arbiter.progress import LineDisplay, RichDisplay, silence_stdout
from arbiter.run.coordinator import Coordinator
from arbiter.run.gameloop import EngineSource
from arbiter.run.observer import RunResult
from arbiter.run.player import Player
from arbiter.run.workers import choose_workers
from arbiter.store import RunStatus, Store, StoreError, TournamentBusyError
from arbiter.tournament import check_engines, delete_tournament, open_tournament, tournament_standings

from .app import (
    EXIT_ABORTED,
    EXIT_BUSY,
    EXIT_INTERRUPTED,
    EXIT_STRICT,
    Interrupted,
    checked_log_dir,
    checked_record_file,
    exit_interrupted,
    fail,
    remove_if_empty,
    run_interruptible,
)
from .server import Listening
from .standings import open_store, show_standings

__all__ = ["run_config", "NO_REMOTE", "MAX_WAIT_ENGINES"]

#: a run without remote engines
NO_REMOTE = Listening()


def _display(plain: bool, as_json: bool):
    """Live display: rich on a terminal, lines otherwise; on stderr with --json
    (stdout then holds only the JSON)."""
    if as_json:
        return LineDisplay(sys.stderr)
    if plain or not sys.stdout.isatty():
        return LineDisplay()
    return RichDisplay(Console())


def _run(store: Store, config: TournamentConfig, tournament_id: int, plain: bool,
         as_json: bool, remote: Listening = NO_REMOTE,
         cluster: ClusterTarget | None = None, *, created: bool = False) -> RunResult:
    """Play the tournament (its games on ``cluster`` if given, else in
    ``config.workers`` worker processes or in this one); the first signal
    stops it cleanly (:meth:`Coordinator.stop`).  ``remote``: ``--listen``,
    ``--wait-engines`` and TLS for ``remote:NAME`` engines, whose connections
    live in this process (so their games are played here); when they do not
    come, a tournament this run ``created`` is removed again."""
    from arbiter.server.remote_run import RemoteWaitError

    from .server import remote_runner

    observer = _display(plain, as_json)
    waiting = _Waiting()

    async def play_with(source: EngineSource) -> RunResult:
        from arbiter.run.inprocess import InProcessPlayer

        waiting.run = Coordinator(config, store, tournament_id, observer=observer,
                                  player=InProcessPlayer(config, source=source))
        return await waiting.run.run()

    try:
        remote_main = remote_runner(play_with, config, str(store.path), remote)
        if remote_main is None:
            run = Coordinator(config, store, tournament_id, observer=observer,
                              player=_player(config, cluster))
            return run_interruptible(run.run, stop=run.stop, drain=run.drain)
        waiting.main = remote_main
        result = run_interruptible(waiting.wait, stop=waiting.stop, drain=waiting.drain)
        if result is None:  # a signal while the run waited for its remote engines
            if created:
                delete_tournament(store, tournament_id)
            print(f"arbiter: interrupted ({waiting.reason}) while waiting for remote engines; "
                  "nothing was played", file=sys.stderr)
            raise typer.Exit(EXIT_INTERRUPTED)
        return result
    except RemoteWaitError as exc:
        if created:  # specs/tournament.md §Remote engines: no tournament left half-made
            delete_tournament(store, tournament_id)
        fail(f"{exc}; nothing was played", EXIT_ABORTED)
    except TournamentBusyError as exc:
        fail(f"{exc}; nothing was started", EXIT_BUSY)
    except (sqlite3.Error, StoreError) as exc:  # before the first game (a failure during the run aborts it)
        fail(f"{store.path}: the database failed ({exc}); nothing was played", EXIT_ABORTED)
    except Interrupted:  # a second signal during the clean stop
        print("arbiter: interrupted again; stopped", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _player(config: TournamentConfig, cluster: ClusterTarget | None) -> Player | None:
    """Where the games are played: on ``cluster``, in worker processes
    (``config.workers``, ``specs/tournament.md`` §Worker processes), or in
    this process (None: the coordinator's own)."""
    if cluster is not None:
        from arbiter.cluster.coordinator import ClusterPlayer  # Dask: only when asked for

        return ClusterPlayer(cluster, config)
    workers = choose_workers(config.workers, config.concurrency)
    if workers == 1:
        return None
    from arbiter.run.processes import ProcessPlayer

    return ProcessPlayer(config, workers)


class _Waiting:
    """A run with remote engines under the interrupt policy: the first signal
    ends the wait for the engines while the tournament has not started (exit
    130, nothing played: specs/tournament.md §Remote engines), and stops the
    tournament cleanly once it has."""

    def __init__(self) -> None:
        self.main: Callable[[], Awaitable[RunResult]] | None = None
        self.run: Coordinator | None = None  # once the engines are there
        self.reason: str | None = None  # the signal that ended the wait
        self._scope: Any = None  # the wait's trio.CancelScope, once main runs

    async def wait(self) -> RunResult | None:
        import trio

        assert self.main is not None
        with trio.CancelScope() as self._scope:
            if self.reason is None:  # else a signal came before the wait began
                return await self.main()
        return None

    def stop(self, reason: str) -> None:
        if self.run is not None and self.run.started_at:
            self.run.stop(reason)
            return
        self.reason = reason
        if self._scope is not None:
            self._scope.cancel()

    def drain(self, reason: str) -> None:
        """``arbiter stop``: the run's games in progress finish; while the
        engines are still awaited there are none, so the wait ends."""
        if self.run is not None and self.run.started_at:
            self.run.drain(reason)
        else:
            self.stop(reason)


def _summary(store: Store, tournament_id: int, as_json: bool) -> None:
    """The standings at the end of a run, on stdout (if anybody still reads it)."""
    try:
        tournament = store.tournament(tournament_id)
        assert tournament is not None
        tournament["running_now"] = store.run_active(tournament_id)
        standings = tournament_standings(store, tournament)
    except sqlite3.Error as exc:
        print(f"arbiter: error: {store.path}: cannot read the standings ({exc}); "
              "`arbiter standings` shows them once the database answers", file=sys.stderr)
        return
    try:
        show_standings(store, tournament, standings, as_json)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


def _strict_summary(result: RunResult) -> None:
    """``--strict``: the warnings' count on stderr; exit 4 when there were
    any (specs/tournament.md §Exit status)."""
    if not result.strict_warnings:
        print("arbiter: strict: no warnings", file=sys.stderr)
        return
    print(f"arbiter: strict: {result.strict_warnings} warning(s) in {result.strict_games} game(s) "
          "(stored as `strict` events with each game)", file=sys.stderr)
    raise typer.Exit(EXIT_STRICT)


def _exit_for(result: RunResult) -> None:
    if result.status == RunStatus.ABORTED:
        print(f"arbiter: error: tournament {result.tournament_id} aborted: {result.note}",
              file=sys.stderr)
        raise typer.Exit(EXIT_ABORTED)
    if result.status == RunStatus.STOPPED:
        print(f"arbiter: tournament {result.tournament_id} stopped after {result.done}/{result.total} "
              f"games (arbiter stop); run the same command (or --resume {result.tournament_id}) to "
              "continue", file=sys.stderr)
        return
    if result.status == RunStatus.INTERRUPTED:
        print(f"arbiter: tournament {result.tournament_id} interrupted after "
              f"{result.done}/{result.total} games; run the same command (or --resume "
              f"{result.tournament_id}) to continue", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED)


def run_config(config: TournamentConfig, db: str, *, new: bool, plain: bool, as_json: bool,
               resume_id: int | None = None,
               remote: Listening = NO_REMOTE,
               cluster: ClusterTarget | None = None) -> None:
    """Find or create the tournament, play what is left, print the standings.

    Before a tournament is created (or resumed) each engine is started once
    (:func:`_check_engines`), so a typo in a command or an option leaves
    no tournament behind; a tournament another run holds is refused before
    anything is said about resuming it.  ``remote``: ``--listen`` and
    ``--wait-engines`` for ``remote:NAME`` engines (they are waited for in the run);
    ``cluster``: play on a Dask cluster (its workers start their own engines:
    none is started here)."""
    log_existed = config.log_dir is not None and os.path.isdir(config.log_dir)
    checked_log_dir(config.log_dir)
    checked_record_file(config.pgn)
    _check_remote(config, db, remote)
    with open_store(db) as store:
        tournament_id, how = _find(store, config, new=new, resume_id=resume_id)
        if how == "finished" and tournament_id is not None:
            print(f"arbiter: tournament {tournament_id} ({config.name}) is already finished in "
                  f"{db}; nothing to play (add --new to play it again)", file=sys.stderr)
            _summary(store, tournament_id, as_json)
            return
        if tournament_id is not None:
            _not_busy(store, tournament_id)
        retried = [] if cluster is not None else _check_engines(config, log_existed,
                                                                created=tournament_id is None)
        created = tournament_id is None
        if tournament_id is None:
            tournament_id, how = open_tournament(store, config, new=True)
        for exc in retried:
            store.add_event(tournament_id, "handshake-failed",
                            f"before the first game: {exc}", engine=exc.engine)
        if how == "resume":
            print(f"arbiter: resuming tournament {tournament_id} ({config.name}) in {db}",
                  file=sys.stderr)
        result = _run(store, config, tournament_id, plain, as_json, remote, cluster,
                      created=created)
        if result.status in (RunStatus.ABORTED, RunStatus.INTERRUPTED, RunStatus.STOPPED):
            _summary(store, tournament_id, as_json)
            _exit_for(result)
            return
        _summary(store, tournament_id, as_json)
        if config.strict:
            _strict_summary(result)


#: the longest ``--wait-engines`` (seconds, a day): a run waiting longer for
#: its engines has been forgotten; a larger number is a typo
MAX_WAIT_ENGINES = 86400.0


def _check_remote(config: TournamentConfig, db: str, remote: Listening) -> None:
    """``--listen``, ``--wait-engines`` and TLS checked before anything is
    made (exit 2): :func:`~arbiter.cli.server.remote_runner` checks the
    options (and, given no tournament, does nothing else)."""
    wait = remote.wait
    if wait is not None and not (math.isfinite(wait) and 0 < wait <= MAX_WAIT_ENGINES):
        fail(f"--wait-engines must be a number of seconds more than 0 and at most "
             f"{MAX_WAIT_ENGINES:g}, not {wait}")
    from .server import remote_runner

    remote_runner(None, config, db, remote)


def _not_busy(store: Store, tournament_id: int) -> None:
    """Exit 3 at once when another run holds the tournament (the claim is
    taken and given back: the run takes it again for good)."""
    try:
        with store.claim_run(tournament_id):
            pass
    except TournamentBusyError as exc:
        fail(f"{exc}; nothing was started", EXIT_BUSY)
    except StoreError as exc:
        fail(str(exc))


def _find(store: Store, config: TournamentConfig, *, new: bool, resume_id: int | None
          ) -> tuple[int | None, str]:
    """The stored tournament this run plays and how (``resume`` or
    ``finished``), or (None, ``new``) when it is yet to be created."""
    if resume_id is not None:
        row = store.tournament(resume_id)
        assert row is not None
        return resume_id, "finished" if row["status"] == RunStatus.FINISHED else "resume"
    existing = None if new else store.find_tournament(config.identity())
    if existing is None:
        return None, "new"
    return existing["id"], "finished" if existing["status"] == RunStatus.FINISHED else "resume"


def _check_engines(config: TournamentConfig, log_existed: bool, *, created: bool
                   ) -> list[EngineStartError]:
    """Each engine started once (:func:`arbiter.tournament.check_engines`):
    the failures a second try overcame (said on stdout, as during a run),
    or exit 1 naming the engine that failed twice."""
    retried: list[EngineStartError] = []

    def on_retry(exc: EngineStartError) -> None:
        retried.append(exc)
        typer.echo(f"note: handshake-failure: {exc}; retrying with a fresh process")

    try:
        run_interruptible(lambda: check_engines(config, on_retry=on_retry))
    except EngineStartError as exc:
        remove_if_empty(config.log_dir, log_existed)
        what = "no tournament was created" if created else "nothing was played"
        fail(f"handshake-failure: {exc}; {what}", EXIT_ABORTED)
    except Interrupted as exc:
        exit_interrupted(exc, "engines stopped; nothing was played")
    return retried
