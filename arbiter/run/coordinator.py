"""A run's coordinator: what is left of a stored tournament's schedule,
handed to a player, each game stored the moment it arrives
(``specs/tournament.md`` §Coordinator and players).

:class:`Coordinator` never plays a game and never blocks on a player: it
takes game pairs (:class:`~arbiter.run.pending.PendingGames`) for the
player's slots, stores what the player reports (in a worker thread, so a slow
disk never delays the event loop that times engines playing here), keeps the
standings and the SPRT, tells the observer (the live display) and stops:

* SPRT (two engines): once a bound is crossed no new game pair starts, the
  game pairs already begun are completed, and the run ends ``finished``;
* :meth:`Coordinator.drain` (``arbiter stop``): no new game starts, the games
  in progress are completed, the run ends ``stopped`` (resumable);
* :meth:`Coordinator.stop` (Ctrl-C, SIGTERM, SIGHUP, a closed output, ``arbiter
  stop --now``; the library installs no signal handler): games in progress
  are abandoned (replayed on resume), engines are ended, the run ends
  ``interrupted``;
* a player's failure (an engine failing its handshake twice, a cluster gone)
  or a failing database *aborts* the run: games in progress are abandoned,
  finished games stay.

A game handed back by its player (a worker process lost) is taken again; one
that :data:`LOSSES_ALLOWED` workers were lost with aborts the run (it is the
likely cause).  How games and events are written to the database (in which
thread, ``--strict``'s checks, the PGN file, a failing database turned into
an abort) is :class:`~arbiter.run.writer.GameWriter`'s.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from typing import Any

import trio

from arbiter.config import TournamentConfig
from arbiter.engine import EngineTimeouts
from arbiter.live import LiveGames
from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame
from arbiter.standings import Standings, Tally
from arbiter.store import RunStatus, Store, StoreError

from .observer import Observer, RunResult
from .pending import PendingGames
from .plan import plan_for
from .player import BatchEnd, LivePly, Player, PlayerError
from .writer import GameWriter

__all__ = ["Coordinator", "STANDINGS_INTERVAL", "STORE_WINDOW", "LOSSES_ALLOWED"]

#: Seconds between two computations of the standings (and the SPRT) while
#: games arrive: with many games a second they are the coordinator's largest
#: cost per game; the display's lines show the standings of the latest
#: computation, and the run's end makes them anew.  A run with an SPRT makes
#: them at every game (two engines: cheap), so that a decision stops the run
#: at once.
STANDINGS_INTERVAL = 0.2
#: Seconds games reported by a player that plays elsewhere (worker processes,
#: a cluster) wait to be stored with those that come after them, in one
#: transaction: a commit costs the coordinator as much as a few games'
#: inserts, so at a hundred games a second a transaction per game would be
#: most of its work (bench/README.md §Worker processes).  A viewer sees a
#: game 50 ms later at most; a coordinator killed meanwhile loses at most
#: these games, which a resume plays again (each game is stored once still).
#: Games played on the run's own loop are stored at once (in a thread).
STORE_WINDOW = 0.05
#: Workers a game may be lost with (handed back unplayed) before the run
#: aborts: one lost worker is bad luck (the machine's memory, a kill), three
#: in a row on the same game point at the game's own engines.
LOSSES_ALLOWED = 3


class Coordinator:
    """Plays the unfinished games of stored tournament ``tournament_id`` with
    ``player`` (by default in this process: :class:`InProcessPlayer`).

    ``config`` must be the tournament's configuration (run settings may
    differ from the stored ones).  ``observer`` is told what happens;
    ``timeouts`` and ``startups`` are the default player's (engine timeouts,
    start-ups at once).  Nothing here handles signals: whoever runs the
    tournament calls :meth:`stop` or :meth:`drain` to end it early."""

    def __init__(self, config: TournamentConfig, store: Store, tournament_id: int, *,
                 observer: Observer | None = None, player: Player | None = None,
                 timeouts: EngineTimeouts | None = None, startups: int | None = None):
        if player is None:
            from .inprocess import InProcessPlayer

            player = InProcessPlayer(config, timeouts=timeouts, startups=startups)
        self.config = config
        self.player = player
        self.store = store
        self.tournament_id = tournament_id
        self.observer = observer or Observer()
        self.sprt = config.sprt_test()
        #: what the run has to play (a schedule, or rounds paired from results)
        self.plan = plan_for(config, store, tournament_id)
        self._rows: list[dict[str, Any]] = []
        self.pending = PendingGames(())
        self.running: dict[str, ScheduledGame] = {}
        self.played = 0
        self.stopping_note = ""  # set once SPRT decided or drained: no new game pair
        self._abort: str | None = None
        self._interrupted = False
        self._drained = False
        self._stop_reason = ""  # why the run was stopped early (stop(), drain())
        self._busy = 0  # takers with a batch in play
        self._more = trio.Event()  # set when a batch ends: waiting takers look again
        self._queued: list[tuple[ScheduledGame, GameRecord]] = []  # reported, to store (STORE_WINDOW)
        self._flush_soon = False  # a flush of them is scheduled
        self._nursery: trio.Nursery | None = None
        self._losses: dict[str, int] = {}  # key -> workers lost while playing it
        self._failed_once: set[str] = set()  # keys whose handshake failed once
        #: how games and events reach the database (arbiter/run/writer.py)
        self.writer = GameWriter(config, store, tournament_id, in_thread=player.plays_here,
                                 fail=self._fatal, total=lambda: self.total)
        self._builds: set[str] = set()  # engines whose build this run has stored
        self._scope: trio.CancelScope | None = None
        self.started_at = 0.0
        #: the stored games' counts, one game added at a time (see Tally)
        self._tally = Tally(config.engine_names, game=config.game, scheduled=self.total)
        self.standings: Standings = self._tally.standings(self.sprt)
        self._standings_at = 0.0
        #: the games in progress as readers of the database see them (arbiter/live.py)
        self.live = LiveGames(store, tournament_id, config.game)

    # -- state ---------------------------------------------------------------

    @property
    def strict_warnings(self) -> int:
        """``--strict``: the warnings of the games this run stored."""
        return self.writer.strict_warnings

    @property
    def strict_games(self) -> int:
        """``--strict``: the games this run stored with a warning."""
        return self.writer.strict_games

    @property
    def done(self) -> int:
        return len(self._rows)

    @property
    def total(self) -> int:
        """The games of the run, as far as known (a Swiss or knockout run's
        grows as its rounds are paired)."""
        return self.plan.total

    def _load(self) -> None:
        rows = self.store.games(self.tournament_id, with_record=False)
        self._rows = rows
        begun = {(row["pairing"], row["pair"]) for row in rows}
        self.pending = PendingGames(self.plan.start(rows), begun)
        self._tally = Tally(self.config.engine_names, game=self.config.game, scheduled=self.total)
        for row in rows:
            self._tally.add(row)
        self.standings = self._tally.standings(self.sprt)
        self._check_sprt()

    def _check_sprt(self) -> None:
        status = self.standings.sprt_status
        if status is not None and status.decision and not self.stopping_note:
            self._begin_no_pair(self.standings.sprt_note())

    def _begin_no_pair(self, note: str) -> None:
        self.stopping_note = note
        self.pending.drained = True
        self.player.drain()

    # -- the run -------------------------------------------------------------

    async def run(self) -> RunResult:
        """Play every pending game; returns how the run ended.
        :class:`~arbiter.store.TournamentBusyError`, before anything is
        played or changed, when another run holds the tournament."""
        with self.store.claim_run(self.tournament_id):
            return await self._run()

    async def _run(self) -> RunResult:
        await trio.to_thread.run_sync(self._load)
        self.started_at = trio.current_time()
        self.store.set_status(self.tournament_id, RunStatus.RUNNING)
        kind = "resume" if self._rows else "start"
        self.store.add_event(self.tournament_id, kind,
                             f"{len(self.pending)} of {self.total} games to play, "
                             f"concurrency {self.config.concurrency}, {self.player.describe()}")
        self.observer.started(self)
        try:
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                self._nursery = nursery
                nursery.start_soon(self._tick)
                nursery.start_soon(functools.partial(self.live.keep_written, in_thread=self.player.plays_here))
                await self._play_all()
                await self._flush()
                nursery.cancel_scope.cancel()
        except BaseException as exc:  # cancelled from outside (a second Ctrl-C), or a bug: the
            # stored status says how the run ended all the same, never `running`
            cancelled = isinstance(exc, trio.Cancelled) or (
                isinstance(exc, BaseExceptionGroup) and exc.split(trio.Cancelled)[1] is None)
            if cancelled:
                self._interrupted = True
            elif self._abort is None:
                self._abort = f"an unexpected error ({type(exc).__name__}: {exc})"
            with trio.CancelScope(shield=True):
                await self._finish()
            raise
        with trio.CancelScope(shield=True):
            result = await self._finish()
        return result

    async def _finish(self) -> RunResult:
        self._nursery = None
        await self._flush()  # games reported and not stored yet (a stop, an abort) are kept
        self.standings = self._tally.standings(self.sprt)  # the last batch's may be a moment old
        self._check_sprt()
        abandoned = sorted(self.running, key=lambda k: self.running[k].seq)
        if self._abort:
            status, note = RunStatus.ABORTED, self._abort
        elif self._interrupted:
            status, note = RunStatus.INTERRUPTED, (f"interrupted with {len(abandoned)} game(s) in progress"
                                         + (f" ({self._stop_reason})" if self._stop_reason else ""))
        elif self.done >= self.total or (self.stopping_note and not self._drained):
            status, note = RunStatus.FINISHED, self.stopping_note or self.standings.sprt_note()  # an SPRT at the cap says so
        elif self._drained:
            status, note = RunStatus.STOPPED, f"stopped ({self._stop_reason}); {self.done} of {self.total} games"
        else:  # the run was cancelled from outside (its caller's scope)
            status, note = RunStatus.INTERRUPTED, "stopped early"
        await trio.to_thread.run_sync(self.live.clear)
        try:  # status and event in one transaction: stored both, or neither
            await trio.to_thread.run_sync(
                self.store.end_run, self.tournament_id, status, note,
                note or f"{self.done} of {self.total} games")
        except (sqlite3.Error, StoreError) as exc:  # the database that made the run stop, often
            note += f" (and this status could not be stored: {exc})"
        result = RunResult(self.tournament_id, status, note, self.played, self.done, self.total,
                           self.standings, abandoned, self.strict_warnings, self.strict_games)
        self.observer.stopped(result)
        return result

    def stop(self, reason: str) -> None:
        """Stop the run now, as Ctrl-C does: games in progress are abandoned
        (replayed on resume), engines are closed, the status becomes
        ``interrupted`` with ``reason`` in its note.  Called from the event
        loop's thread (a signal watcher, an observer), before or during
        :meth:`run`; a second call does nothing."""
        if self._interrupted:
            return
        self._interrupted = True
        self._stop_reason = reason
        self.observer.message(f"{reason}: stopping; games in progress are abandoned and will be "
                              "replayed on resume")
        if self._scope is not None:
            self._scope.cancel()

    def drain(self, reason: str) -> None:
        """Stop gracefully (``arbiter stop``): no new game starts, the games
        in progress are completed and stored, then the run ends ``stopped``
        (resumable).  A second call, or one after :meth:`stop`, does nothing."""
        if self._drained or self._interrupted:
            return
        self._drained = True
        self._stop_reason = reason
        self.observer.message(f"{reason}: finishing the {len(self.running)} game(s) in progress; "
                              "no new game starts")
        self.pending = PendingGames(())  # nothing more is taken, not even a pair's second game
        self.player.drain(games=True)

    async def _tick(self) -> None:
        while True:
            self.observer.tick()
            await trio.sleep(1)

    def _fatal(self, message: str) -> None:
        """Abort the whole run (a second handshake failure, a failing database)."""
        if self._abort is None:
            self._abort = message
            self.observer.message(f"aborting: {message}")
            assert self._scope is not None
            self._scope.cancel()

    async def _play_all(self) -> None:
        """The player's slots take batches until none is left (or the run stops)."""
        takers = max(1, min(self.player.slots, len(self.pending)))
        try:
            async with self.player.session(self):
                async with trio.open_nursery() as pool:
                    for _ in range(takers):
                        pool.start_soon(self._taker, takers)
        except PlayerError as exc:
            self._fatal(str(exc))

    async def _taker(self, takers: int) -> None:
        """Take batches of game pairs and have the player play them."""
        while not (self._abort or self._interrupted):
            pairs = self.pending.take(self.player.max_batch, takers, takers - self._busy)
            if not pairs:
                if not (self.plan.growing and (self.running or self._queued) and not self._drained):
                    return
                await self._more.wait()  # a round in progress: its results pair the next
                continue
            for scheduled in (g for games in pairs for g in games):
                self.running[scheduled.key] = scheduled
            self._busy += 1
            try:
                end = await self.player.play(pairs, self)
            except PlayerError as exc:
                self._fatal(str(exc))
                return
            finally:
                self._busy -= 1
            await self._ended(end)
            self._wake_takers()

    async def _ended(self, end: BatchEnd) -> None:
        for game in end.skipped:
            self._forget_running(game.key)
        if end.returned:
            for game in end.returned:
                self._forget_running(game.key)
                self._losses[game.key] = lost = self._losses.get(game.key, 0) + 1
                if lost >= LOSSES_ALLOWED:
                    self._fatal(f"game {game.key} was being played by {lost} workers that were lost "
                                "(its engines may be what kills them); the games stored are kept")
                    return
            self.observer.message(f"{len(end.returned)} game(s) of a lost worker are played again: "
                                  + ", ".join(g.key for g in end.returned))
            self.pending.give_back(end.returned)
        if end.failure is not None:
            self._fatal(end.failure)

    def _forget_running(self, key: str) -> None:
        self.running.pop(key, None)
        self.live.ended(key)

    # -- what the player reports (arbiter.run.player.Reporter) -------------------

    def message(self, text: str) -> None:
        self.observer.message(text)

    def started(self, game: ScheduledGame) -> None:
        self.running[game.key] = game
        self.live.started(game)
        self.observer.game_started(game)

    def moved(self, key: str, plies: Sequence[LivePly]) -> None:
        self.live.moved(key, plies)

    async def finished(self, played: Sequence[tuple[ScheduledGame, GameRecord]]) -> None:
        """Store games: at once when engines are timed on this loop (in a
        worker thread), else with those that arrive within
        :data:`STORE_WINDOW` (one transaction for them all); every game
        reported is stored before the run ends (:meth:`_flush`)."""
        if not played:
            return
        if self.player.plays_here:
            await self._keep(played)
            return
        self._queued.extend(played)
        if not self._flush_soon and self._nursery is not None:
            self._flush_soon = True
            self._nursery.start_soon(self._flush_after, STORE_WINDOW)

    async def _flush_after(self, seconds: float) -> None:
        await trio.sleep(seconds)
        await self._flush()

    async def _flush(self) -> None:
        """Store the games queued by :meth:`finished`, whatever happens
        meanwhile (shielded)."""
        with trio.CancelScope(shield=True):
            self._flush_soon = False
            played, self._queued = self._queued, []
            if played:
                await self._keep(played)
            self._wake_takers()

    def _wake_takers(self) -> None:
        self._more.set()  # an idle taker looks again (a new round, or the end)
        self._more = trio.Event()

    async def _keep(self, played: Sequence[tuple[ScheduledGame, GameRecord]]) -> None:
        """Store games in one transaction (a key already stored is skipped and
        said), whatever happens meanwhile (shielded); then the standings (at
        most every :data:`STANDINGS_INTERVAL` without an SPRT) and the
        display.  A database that failed aborts the run."""
        with trio.CancelScope(shield=True):
            what = f"storing game {played[0][0].key}" if len(played) == 1 else f"storing {len(played)} games"
            stored = await self.writer.write(what, self.writer.store_games, played)
            if stored is None:
                return
            for (scheduled, record), new in zip(played, stored, strict=True):
                self._forget_running(scheduled.key)
                if new:
                    self._count(scheduled, record)
            now = trio.current_time()
            if self.sprt is not None or now - self._standings_at >= STANDINGS_INTERVAL:
                self._standings_at = now
                self.standings = self._tally.standings(self.sprt)
                self._check_sprt()
            for (scheduled, record), new in zip(played, stored, strict=True):
                if new:
                    self.observer.game_finished(scheduled, record, self.standings)
                else:
                    self.observer.message(f"game {scheduled.key} was already stored (another run "
                                          "on this database?); the stored game is kept")
            for text in self.writer.take_messages():  # strict warnings, the PGN file's failure
                self.observer.message(text)
            if self.plan.growing and not (self._drained or self._abort or self._interrupted):
                await self._pair_more()

    async def _pair_more(self) -> None:
        """A round plan's next games, once the results allow them (stored
        before they are handed out)."""
        games = await self.writer.write("pairing the next round", self.plan.more, list(self._rows))
        if games:
            self.pending.add(games)
            self.observer.message(f"round {games[0].round} paired: {len(games)} game(s)")

    async def event(self, kind: str, detail: str, engine: str | None, key: str | None) -> None:
        if kind == "handshake-failed" and key is not None and key not in self._failed_once:
            self._failed_once.add(key)
            self.observer.message(f"handshake-failure: {detail}; retrying with a fresh process")
        else:
            self.observer.message(detail)
        await self.writer.write(f"recording a {kind} event", functools.partial(
            self.store.add_event, self.tournament_id, kind, detail, engine=engine, key=key))

    async def build(self, name: str, id_name: str | None, author: str | None) -> None:
        """The build ``name`` runs (its id lines, command, executable's hash),
        stored once per run: specs/storage.md §Engines."""
        if name in self._builds:
            return
        self._builds.add(name)
        config = self.config.engine(name)
        await self.writer.write("storing an engine's build", functools.partial(
            self.store.record_build, self.tournament_id, name, argv=config.argv(),
            cwd=config.dir, id_name=id_name, id_author=author))

    # -- the run's counts -----------------------------------------------------

    def _count(self, scheduled: ScheduledGame, record: GameRecord) -> None:
        """A newly stored game into the run's rows and tally (the standings
        are made from them when the caller says)."""
        self.played += 1
        row = {"white": record.white, "black": record.black, "result": record.result,
               "termination": record.termination, "pairing": scheduled.pairing,
               "pair": scheduled.pair, "key": scheduled.key, "seq": scheduled.seq}
        self._rows.append(row)
        self._tally.add(row)
