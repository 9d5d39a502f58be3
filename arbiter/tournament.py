"""A whole run: a tournament's schedule played by engine processes (trio).

:class:`Tournament` plays what is left of a stored tournament's schedule and
stores each game the moment it ends; what to play is a
:class:`~arbiter.config.TournamentConfig` (``arbiter/config.py``).  The rules
are in ``specs/tournament.md``:

* ``concurrency`` worker tasks in one nursery each take the next pending game
  of the schedule (preferring, within a short look-ahead, a game of the
  engines they already hold), play it with :func:`arbiter.match.play_game`
  and commit it in one transaction (in a worker thread, so a slow disk never
  delays the event loop that times the engines);
* engines start in a bounded wave (:func:`startup_limit` start-ups at once),
  and a game's clock starts only once both of its engines have answered
  ``readyok`` to the new game (``play_game`` asks both before the first ``go``);
* a worker keeps its engine processes from game to game (``uginewgame``)
  unless ``restart`` is set; an engine that crashed, stalled or is otherwise
  unfit is closed and started afresh for its next game (an ``events`` row
  says so);
* an engine that fails its handshake: the game is not recorded; it is tried
  once more with a fresh process, and if that fails too the tournament is
  *aborted* (games in progress are abandoned, finished games stay);
* SPRT (two engines): once a bound is crossed no new game pair starts, the
  game pairs already started are completed, and the run ends ``finished``;
* a :class:`PairPlayer` given (``--cluster``: :mod:`arbiter.cluster`) plays
  whole game pairs elsewhere instead of the workers' own engines, several
  pairs at a time when many are pending, each batch's games then stored in
  one transaction; taking, storing, standings, SPRT and stopping stay those
  above (``specs/cluster.md``);
* :meth:`Tournament.stop` (the command line calls it on Ctrl-C, SIGTERM,
  SIGHUP or a closed output; the library installs no signal handler): games
  in progress are abandoned (replayed on resume), engines are ended, the run
  ends ``interrupted``.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import trio

from arbiter import records
from arbiter.clock import TimeControl
from arbiter.config import TournamentConfig
from arbiter.engine import Engine, EngineConfig, EngineStartError, EngineTimeouts, open_engine
from arbiter.enginespec import REMOTE_PREFIX
from arbiter.games import Game, get_game
from arbiter.live import LiveGames
from arbiter.match import play_game
from arbiter.rating import SPRT, SPRTConfigError
from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame
from arbiter.standings import Standings, Tally, compute_standings
from arbiter.store import (
    ABORTED,
    FINISHED,
    INTERRUPTED,
    RUNNING,
    DatabaseGoneError,
    DuplicateGameError,
    Store,
    StoreError,
    explain,
)

__all__ = [
    "Observer", "RunResult", "Tournament", "open_tournament", "tournament_standings",
    "startup_limit", "STARTUPS_PER_CORE", "check_engines", "delete_tournament",
    "PairPlayer", "PairResult", "PlayerError",
]

_T = TypeVar("_T")

#: Seconds between two computations of the standings (and the SPRT) by the
#: batches of a :class:`PairPlayer`: they are the coordinator's largest cost
#: per game with many games in flight; the display's lines of a batch show
#: the standings of the latest computation, and the run's end makes them anew.
BATCH_STANDINGS_INTERVAL = 0.2

#: Engine start-ups (process, handshake, options) at once, per core.  A
#: start-up is mostly CPU (an interpreter and its imports, a network's
#: weights): n of them at once on c cores each take about n/c times as long,
#: so starting every engine of a high concurrency at once only makes every
#: handshake late (some past their timeout, counted from the spawn) and starves
#: the games already playing.  Two per core keep the cores busy while some
#: start-ups wait on the disk.
STARTUPS_PER_CORE = 2


def startup_limit() -> int:
    """How many engines a run starts at once: :data:`STARTUPS_PER_CORE` for
    each core this process may run on."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return STARTUPS_PER_CORE * max(1, cores)


# --------------------------------------------------------------------------
# Opening or finding the tournament in the store
# --------------------------------------------------------------------------


def open_tournament(store: Store, config: TournamentConfig, *, new: bool = False
                    ) -> tuple[int, str]:
    """The tournament for ``config``: an existing one with the same identity
    (unless ``new``), or a new one.  Returns (id, how): ``how`` is ``new``,
    ``resume`` or ``finished`` (nothing left to play)."""
    identity = config.identity()
    existing = None if new else store.find_tournament(identity)
    if existing is not None:
        return existing["id"], "finished" if existing["status"] == FINISHED else "resume"
    tournament_id = store.create_tournament(
        name=config.name, game=config.game, format=config.format, identity=identity,
        config=config.to_dict(),
        engines=[{**e.to_dict(), "name": e.name} for e in config.engines],
        total_games=len(config.schedule()))
    return tournament_id, "new"


#: tries each engine gets in :func:`check_engines`: a failed start is tried
#: once more with a fresh process, as during a run (§Engine faults)
CHECK_ATTEMPTS = 2


async def check_engines(config: TournamentConfig, *, timeouts: EngineTimeouts | None = None,
                        on_retry: Callable[[EngineStartError], None] | None = None) -> None:
    """Start each engine of ``config`` once, before anything is stored: its
    process, handshake and options, and the game (:meth:`Engine.new_game`),
    then end it.  A command that is not found, an option the engine does
    not declare or a game it does not play is then found before a
    tournament is created (``specs/tournament.md`` §Engine faults).

    An engine that fails is tried once more with a fresh process
    (``on_retry`` is told of the first failure); the first engine, in the
    order of ``config``, that fails twice raises its
    :class:`EngineStartError`.  The engines start at once, at most
    :func:`startup_limit` together, without I/O logs (a log of ``--log DIR``
    is a game's); every process is gone on return."""
    failed: dict[str, EngineStartError] = {}
    limiter = trio.CapacityLimiter(startup_limit())

    async def one(engine_config: EngineConfig) -> None:
        for attempt in range(1, CHECK_ATTEMPTS + 1):
            try:
                async with limiter, open_engine(engine_config, timeouts=timeouts) as engine:
                    await engine.new_game(config.game)
                return
            except EngineStartError as exc:
                if attempt == CHECK_ATTEMPTS:
                    failed[engine_config.label] = exc
                elif on_retry is not None:
                    on_retry(exc)

    async with trio.open_nursery() as nursery:
        for engine_config in config.engines:
            if not engine_config.cmd.startswith(REMOTE_PREFIX):  # a remote engine is waited for in the run
                nursery.start_soon(one, engine_config)
    for engine_config in config.engines:
        if engine_config.label in failed:
            raise failed[engine_config.label]


def delete_tournament(store: Store, tournament_id: int) -> int:
    """Remove tournament ``tournament_id`` and every row that belongs to it
    (its games, entrants, events: each table with a ``tournament`` column,
    and the engines no other tournament names), in one transaction; returns how many games went with it.  A tournament a
    run holds now is refused (:class:`~arbiter.store.TournamentBusyError`)."""
    with store.claim_run(tournament_id), store.transaction():
        games = store.count_games(tournament_id)
        tables = [name for name in store.db.table_names()
                  if name != "tournaments" and "tournament" in store.db.table(name).columns_dict]
        for table in tables:
            store.db.execute(f"delete from [{table}] where tournament = ?", [tournament_id])
        store.db.execute("delete from tournaments where id = ?", [tournament_id])
        # an engine is kept across tournaments (specs/storage.md): only one
        # that no other tournament's entrant or game names goes with it
        store.db.execute("""delete from engines where id not in (select engine from entrants)
                            and id not in (select white_engine from games where white_engine is not null)
                            and id not in (select black_engine from games where black_engine is not null)""")
    return games


def tournament_standings(store: Store, tournament: Mapping[str, Any]) -> Standings:
    """The standings of a stored tournament (also one still running)."""
    engines = tournament.get("engines") or [e["name"] for e in store.engines(tournament["id"])]
    return compute_standings(engines, store.games(tournament["id"], with_record=False),
                             tournament_sprt(tournament))


def tournament_sprt(tournament: Mapping[str, Any]) -> SPRT | None:
    """The SPRT of a stored tournament (None without one, or with one that
    no longer parses)."""
    config = tournament.get("config") or {}
    if not config.get("sprt"):
        return None
    try:
        return SPRT.parse(config["sprt"])
    except SPRTConfigError:
        return None


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


class Observer:
    """What a live display is told (all no-ops here; see :mod:`arbiter.progress`)."""

    def started(self, run: Tournament) -> None: ...
    def game_started(self, game: ScheduledGame) -> None: ...
    def game_finished(self, game: ScheduledGame, record: GameRecord, standings: Standings) -> None: ...
    def message(self, text: str) -> None: ...
    def tick(self) -> None: ...
    def stopped(self, result: RunResult) -> None: ...


@dataclass
class RunResult:
    """How a run ended: ``status`` is ``finished``, ``interrupted`` or ``aborted``."""

    tournament_id: int
    status: str
    note: str
    played: int  # games stored by this run
    done: int  # games stored in all
    total: int
    standings: Standings
    abandoned: list[str] = field(default_factory=list)  # keys in progress when stopped


class PlayerError(Exception):
    """A :class:`PairPlayer` that cannot go on (its cluster unreachable, a
    pair failing on worker after worker): the run aborts with this message,
    keeping every stored game."""


@dataclass
class PairResult:
    """What a :class:`PairPlayer` gives back for a batch of game pairs: the games
    played (each of those asked at most once, with its record), events to
    store as ``(kind, detail, engine, key)``, and a failure that aborts the
    run once the games played are stored (None: none)."""

    played: list[tuple[ScheduledGame, GameRecord]] = field(default_factory=list)
    events: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    failure: str | None = None


class PairPlayer(Protocol):
    """Where game pairs are played when not by the run's own engines (the
    seam of ``--cluster``: :class:`arbiter.cluster.ClusterPlayer`).

    :meth:`session` is entered once around the run's workers (connecting,
    then ending every game in flight on the way out, also when cancelled);
    :meth:`play_pairs` plays the given game pairs (each both games, or the one
    left of it on resume), one game at a time, and returns what was played;
    cancelled, it leaves the games in flight to the session's end.  A pair
    worker hands it at most :attr:`max_batch` pairs at once, more than one
    only while every pair worker can have as many.  :meth:`drain` is called
    once an SPRT decision is reached: pairs handed over but not begun are
    then not played (their games are left out of the result)."""

    max_batch: int

    def session(self, observer: Observer) -> AbstractAsyncContextManager[None]: ...

    async def play_pairs(self, pairs: list[list[ScheduledGame]]) -> PairResult: ...

    def drain(self) -> None: ...


class _Held:
    """An engine process a worker keeps between games.

    The process lives in its own task (:meth:`Tournament._hold`), not in the
    worker's task: a worker closes engines in any order, which would break
    trio's nesting of cancel scopes if the worker had opened them itself."""

    def __init__(self, engine: Engine, release: trio.Event, gone: trio.Event):
        self.engine = engine
        self.release = release
        self.gone = gone

    async def close(self) -> None:
        """End the process (quit, grace, kill: see :mod:`arbiter.engine`)."""
        self.release.set()
        with trio.CancelScope(shield=True):
            await self.gone.wait()


class Tournament:
    """Plays the unfinished games of stored tournament ``tournament_id``.

    ``config`` must be the tournament's configuration (run settings may
    differ from the stored ones).  ``observer`` is told what happens.
    ``startups`` bounds the engine start-ups at once (default
    :func:`startup_limit`).  Nothing here handles signals: whoever runs the
    tournament calls :meth:`stop` to end it early (``arbiter.cli.app``).
    ``player`` plays whole game pairs instead of the run's own engines
    (:class:`PairPlayer`; ``--cluster``).
    """

    def __init__(self, config: TournamentConfig, store: Store, tournament_id: int, *,
                 observer: Observer | None = None, timeouts: EngineTimeouts | None = None,
                 startups: int | None = None, player: PairPlayer | None = None):
        self.config = config
        self.player = player
        self.store = store
        self.tournament_id = tournament_id
        self.observer = observer or Observer()
        self.timeouts = timeouts
        #: where engines come from (a run with remote engines sets another source)
        self.open_engine: Callable[..., AbstractAsyncContextManager[Engine]] = open_engine
        #: what completes a game's record from its engines (remote engines' lag), if set
        self.settle: Callable[[GameRecord, Engine, Engine], GameRecord] | None = None
        #: what tells a game's engines their seats before it (remote engines), if set
        self.seat: Callable[[Game, Engine, Engine], None] | None = None
        self.game = get_game(config.game)
        self.time_control = TimeControl.parse(config.tc)
        self.sprt = config.sprt_test()
        self.schedule = config.schedule()
        self.total = len(self.schedule)
        self._rows: list[dict[str, Any]] = []
        #: the games to play, in schedule order (a deque: taken from its front)
        self._pending: deque[ScheduledGame] = deque()
        #: the pending games of each game pair (pairing, pair), in schedule
        #: order: a pair taken whole without a scan of every pending game
        self._pending_of_pair: dict[tuple[int, int], list[ScheduledGame]] = {}
        self._started_pairs: set[tuple[int, int]] = set()
        self.running: dict[str, ScheduledGame] = {}
        self.played = 0
        self.stopping_note = ""  # set once SPRT decided: no new game pair
        self._abort: str | None = None
        self._interrupted = False
        self._stop_reason = ""  # why the run was stopped early (stop())
        #: the PGN file could not be appended to: it is left alone from then on
        self._pgn_error: str | None = None
        self._pgn_error_told = False
        self._builds: set[str] = set()  # engines whose build this run has stored
        self._scope: trio.CancelScope | None = None
        #: the bounded wave of engine start-ups (see STARTUPS_PER_CORE)
        self._startups = trio.CapacityLimiter(startups or startup_limit())
        self.started_at = 0.0
        #: the stored games' counts, one game added at a time (see Tally)
        self._tally = Tally(config.engine_names)
        self.standings: Standings = self._tally.standings(self.sprt)
        self._standings_at = 0.0  # when a pair worker's batch last computed them
        #: the games in progress as readers of the database see them (arbiter/live.py)
        self.live = LiveGames(store, tournament_id, config.game)

    # -- state ---------------------------------------------------------------

    @property
    def done(self) -> int:
        return len(self._rows)

    def _load(self) -> None:
        rows = self.store.games(self.tournament_id, with_record=False)
        keys = {row["key"] for row in rows}
        self._rows = rows
        self._pending = deque(g for g in self.schedule if g.key not in keys)
        self._pending_of_pair = {}
        for game in self._pending:
            self._pending_of_pair.setdefault((game.pairing, game.pair), []).append(game)
        by_key = self.schedule.by_key()
        self._started_pairs = {(by_key[k].pairing, by_key[k].pair) for k in keys if k in by_key}
        self._tally = Tally(self.config.engine_names)
        for row in rows:
            self._tally.add(row)
        self.standings = self._tally.standings(self.sprt)
        self._check_sprt()

    def _check_sprt(self) -> None:
        status = self.standings.sprt_status
        if status is not None and status.decision and not self.stopping_note:
            bound = (f">= {status.upper:.2f}" if status.decision == "H1"
                     else f"<= {status.lower:.2f}")
            self.stopping_note = (f"SPRT: {status.decision} accepted "
                                  f"(LLR {status.llr:.2f} {bound}, {self.sprt})")
            if self.player is not None:
                self.player.drain()

    def _take(self, holding: frozenset[str]) -> ScheduledGame | None:
        """The next game for a worker holding ``holding``'s engines, or None."""
        if self._abort or self._interrupted:
            return None
        candidates: Iterable[ScheduledGame] = self._pending
        if self.stopping_note:  # SPRT decided: only complete the pairs begun
            candidates = [g for g in candidates if (g.pairing, g.pair) in self._started_pairs]
        first = next(iter(candidates), None)
        if first is None:
            return None
        choice = first
        if holding:  # a game of the engines held, if one is near the front
            window = itertools.islice(candidates, 2 * self.config.concurrency + 2)
            choice = next((g for g in window if g.players == holding), first)
        self._forget(choice)
        self._started_pairs.add((choice.pairing, choice.pair))
        return choice

    def _forget(self, game: ScheduledGame) -> None:
        """``game`` is no longer pending (taken): out of the pending games and
        of its pair's (a taken game is usually at the front, so each
        ``remove`` stops at once)."""
        self._pending.remove(game)
        self._pending_of_pair[game.pairing, game.pair].remove(game)

    def _take_pair(self) -> list[ScheduledGame] | None:
        """The pending games of the next game pair (:meth:`_take`'s choice
        and the rest of its pair), in schedule order, or None."""
        first = self._take(frozenset())
        if first is None:
            return None
        rest = list(self._pending_of_pair[first.pairing, first.pair])  # in schedule order
        for game in rest:
            self._forget(game)
        return [first, *rest]

    def _take_pairs(self, most: int, takers: int) -> list[list[ScheduledGame]]:
        """Up to ``most`` game pairs for one of ``takers`` pair workers: more
        than one only while the pending games leave as many to every other
        (so the last pairs are spread, not queued behind one slot)."""
        count = max(1, min(most, len(self._pending) // (2 * max(1, takers))))
        pairs: list[list[ScheduledGame]] = []
        while len(pairs) < count and (games := self._take_pair()) is not None:
            pairs.append(games)
        return pairs

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
        self.store.set_status(self.tournament_id, RUNNING)
        try:
            kind = "resume" if self._rows else "start"
            self.store.add_event(self.tournament_id, kind,
                                 f"{len(self._pending)} of {self.total} games to play, "
                                 f"concurrency {self.config.concurrency}")
            self.observer.started(self)
            workers = min(self.config.concurrency, max(1, len(self._pending)))
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                nursery.start_soon(self._tick)
                nursery.start_soon(self.live.keep_written)
                await self._play_all(workers)
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
        return await self._finish()

    async def _finish(self) -> RunResult:
        if self.player is not None:  # a batch may have left them a moment old
            self.standings = self._tally.standings(self.sprt)
            self._check_sprt()
        abandoned = sorted(self.running, key=lambda k: self.schedule.by_key()[k].seq)
        if self._abort:
            status, note = ABORTED, self._abort
        elif self._interrupted:
            status, note = INTERRUPTED, (f"interrupted with {len(abandoned)} game(s) in progress"
                                         + (f" ({self._stop_reason})" if self._stop_reason else ""))
        elif self.done >= self.total or self.stopping_note:
            status, note = FINISHED, self.stopping_note
        else:  # nothing left to hand out, yet games missing: cannot happen
            status, note = INTERRUPTED, "stopped early"
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self.live.clear)
            try:  # status and event in one transaction: stored both, or neither
                await trio.to_thread.run_sync(
                    self.store.end_run, self.tournament_id, status, note,
                    note or f"{self.done} of {self.total} games")
            except (sqlite3.Error, StoreError) as exc:  # the database that made the run stop, often
                note += f" (and this status could not be stored: {exc})"
        result = RunResult(self.tournament_id, status, note, self.played, self.done, self.total,
                           self.standings, abandoned)
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

    async def _play_all(self, workers: int) -> None:
        """``workers`` worker tasks until none has a game left: the run's own
        (:meth:`_worker`), or pair workers within the player's session."""
        if self.player is None:
            async with trio.open_nursery() as pool:
                for number in range(workers):
                    pool.start_soon(self._worker, number)
            return
        try:
            async with self.player.session(self.observer):
                async with trio.open_nursery() as pool:
                    for _ in range(workers):
                        pool.start_soon(self._pair_worker, self.player, workers)
        except PlayerError as exc:
            self._fatal(str(exc))

    # -- a worker --------------------------------------------------------------

    async def _pair_worker(self, player: PairPlayer, takers: int) -> None:
        """Take game pairs (a batch of them while many are pending, see
        :meth:`_take_pairs`) and have ``player`` play them; store the games
        played (:meth:`_keep_batch`; games not played stay in
        :attr:`running`: abandoned, replayed on resume)."""
        while pairs := self._take_pairs(player.max_batch, takers):
            for scheduled in (g for games in pairs for g in games):
                self.running[scheduled.key] = scheduled
                self.observer.game_started(scheduled)
            try:
                result = await player.play_pairs(pairs)
            except PlayerError as exc:
                self._fatal(str(exc))
                return
            for kind, detail, engine, key in result.events:
                self.observer.message(detail)
                await self._write(f"recording a {kind} event", functools.partial(
                    self.store.add_event, self.tournament_id, kind, detail, engine=engine, key=key))
            if not await self._keep_batch(result.played):
                return
            if result.failure is not None:
                self._fatal(result.failure)
                return

    async def _keep_batch(self, played: list[tuple[ScheduledGame, GameRecord]]) -> bool:
        """Store a batch's games in one transaction (a key already stored is
        skipped and said), whatever happens meanwhile (shielded); standings
        once for the batch, at most every :data:`BATCH_STANDINGS_INTERVAL`
        (the last batch's are made at the end).  False if the database
        failed: the run aborts."""
        with trio.CancelScope(shield=True):
            stored = await self._write(f"storing {len(played)} game(s)", self._store_games, played)
            if stored is None:
                return False
            for (scheduled, record), new in zip(played, stored, strict=True):
                del self.running[scheduled.key]
                if new:
                    self._count(scheduled, record)
            now = trio.current_time()
            if now - self._standings_at >= BATCH_STANDINGS_INTERVAL:
                self._standings_at = now
                self.standings = self._tally.standings(self.sprt)
                self._check_sprt()
            for (scheduled, record), new in zip(played, stored, strict=True):
                if new:
                    self.observer.game_finished(scheduled, record, self.standings)
                else:
                    self.observer.message(f"game {scheduled.key} was already stored (another run "
                                          "on this database?); the stored game is kept")
            self._tell_pgn_error()
        return True

    def _store_games(self, played: list[tuple[ScheduledGame, GameRecord]]) -> list[bool]:
        """In a worker thread: :meth:`_store_game` for each, in one transaction."""
        with self.store.transaction():
            stored = [self._store_game(scheduled, record) for scheduled, record in played]
            for (scheduled, _), new in zip(played, stored, strict=True):
                if not new:
                    self.store.add_event(self.tournament_id, "dropped-result",
                                         f"a second result for game {scheduled.key} was dropped: "
                                         "the stored game is kept", key=scheduled.key)
            return stored

    async def _worker(self, number: int) -> None:
        """Take games and play them until none is left (or the run stops)."""
        held: dict[str, _Held] = {}
        async with trio.open_nursery() as engines:
            try:
                while (scheduled := self._take(frozenset(held))) is not None:
                    self.running[scheduled.key] = scheduled
                    self.live.started(scheduled)
                    self.observer.game_started(scheduled)
                    record = await self._play_with_retry(scheduled, held, engines)
                    if record is None or not await self._keep(scheduled, record):
                        return  # aborted; the game is replayed on resume
                    await self._after_game(scheduled, record, held)
            finally:
                for item in held.values():
                    await item.close()

    async def _keep(self, scheduled: ScheduledGame, record: GameRecord) -> bool:
        """Store a finished game, whatever happens meanwhile (shielded), and
        tell the display.  False if the database failed: the run aborts."""
        with trio.CancelScope(shield=True):
            stored = await self._write(f"storing game {scheduled.key}",
                                       self._store_game, scheduled, record)
            if stored is not None:
                del self.running[scheduled.key]
                self.live.ended(scheduled.key)
                if stored:
                    self._game_stored(scheduled, record)
                else:
                    self.observer.message(f"game {scheduled.key} was already stored (another run "
                                          "on this database?); the stored game is kept")
        return stored is not None

    async def _play_with_retry(self, scheduled: ScheduledGame, held: dict[str, _Held],
                               engines: trio.Nursery) -> GameRecord | None:
        """The game's record; a failed handshake is tried once more with fresh
        processes, a second one aborts the run (None)."""
        for attempt in (1, 2):
            try:
                return await self._play(scheduled, held, engines)
            except EngineStartError as exc:
                for item in held.values():
                    await item.close()
                held.clear()
                detail = f"game {scheduled.key} not played: {exc}"
                await self._event("recording a failed handshake", "handshake-failed", detail,
                                  engine=exc.engine, key=scheduled.key)
                if self._abort:
                    return None
                if attempt == 1:
                    self.observer.message(f"handshake-failure: {detail}; retrying with a fresh process")
                else:
                    self._fatal(f"handshake-failure: engine {exc.engine!r} failed twice: {exc.reason} "
                                f"(game {scheduled.key} not played)")
        return None

    async def _hold(self, name: str, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        """Run engine ``name`` until released (its own task; see :class:`_Held`)."""
        release, gone = trio.Event(), trio.Event()
        try:
            async with self.open_engine(self.config.engine(name), timeouts=self.timeouts,
                                        log_dir=self.config.log_dir) as engine:
                await self._store_build(name, engine)
                task_status.started(_Held(engine, release, gone))
                await release.wait()
        finally:
            gone.set()

    async def _store_build(self, name: str, engine: Engine) -> None:
        """The build ``name`` runs (its id lines, command, executable's
        hash), stored once per run: specs/storage.md §Engines."""
        if name not in self._builds:
            self._builds.add(name)
            config = self.config.engine(name)
            await self._write("storing an engine's build", functools.partial(
                self.store.record_build, self.tournament_id, name, argv=config.argv(),
                cwd=config.dir, id_name=engine.id_name, id_author=engine.author))

    async def _play(self, scheduled: ScheduledGame, held: dict[str, _Held],
                    engines: trio.Nursery) -> GameRecord:
        """Play one game with the worker's engines, starting those it lacks.

        Local engines start in a bounded wave (:attr:`_startups`, see
        :data:`STARTUPS_PER_CORE`; a remote one is only waited for, outside
        it: it costs no CPU here and must not hold a slot), so that a high concurrency neither makes
        handshakes late nor starves the games already playing.  The clock of
        the game starts in :func:`play_game`, once both engines have answered
        ``readyok`` to the new game: never while one of them is loading."""
        for name in [n for n in held if n not in scheduled.players]:
            await held.pop(name).close()
        missing = [n for n in (scheduled.white, scheduled.black) if n not in held]
        remote = [n for n in missing if self.config.engine(n).cmd.startswith(REMOTE_PREFIX)]
        for name in remote:  # waited for, costs no CPU here: outside the start-up wave
            held[name] = await engines.start(self._hold, name)
        if local := [n for n in missing if n not in remote]:
            async with self._startups:
                for name in local:
                    held[name] = await engines.start(self._hold, name)
        opening = scheduled.opening
        white, black = held[scheduled.white].engine, held[scheduled.black].engine
        if self.seat is not None:
            self.seat(self.game, white, black)
        record = await play_game(
            self.game, white, black,
            fen=opening.fen, opening_moves=opening.moves,
            tc=self.time_control, timemargin_ms=self.config.timemargin_ms,
            maxplies=self.config.maxplies, adjudication=self.config.adjudication(),
            stall_ms=self.config.stall_ms, on_move=self.live.mover(scheduled.key))
        return record if self.settle is None else self.settle(record, white, black)

    async def _after_game(self, scheduled: ScheduledGame, record: GameRecord,
                          held: dict[str, _Held]) -> None:
        """Keep healthy engines for the next game; restart the others."""
        if self._interrupted or self._abort:
            return  # the run is stopping: the engines are being closed anyway
        for name in (scheduled.white, scheduled.black):
            item = held.get(name)
            if item is None:
                continue
            engine = item.engine
            if not self.config.restart and not engine.healthy and engine.fault is None:
                await engine.finish_search()  # searching when the game ended: stop it
            if self.config.restart or not engine.healthy:
                if not self.config.restart:
                    reason = engine.fault.detail if engine.fault else "not ready for another game"
                    detail = (f"engine {name!r} restarted after game {scheduled.key} "
                              f"({record.termination}): {reason}")
                    self.observer.message(detail)
                    await self._event("recording a restart", "restart", detail, engine=name,
                                      key=scheduled.key)
                await held.pop(name).close()

    # -- the database ------------------------------------------------------------

    async def _write(self, what: str, write: Callable[..., _T], *args: Any) -> _T | None:
        """``write(*args)``, a write to the database from a worker, in a
        thread.  A database that fails (locked beyond the busy timeout, a full
        disk, an I/O error) aborts the run cleanly instead of crashing it: the
        games stored before stay, and a resume plays the rest.  A database
        deleted or replaced since the run opened it aborts it too (nothing is
        written into a file nobody can read).  None if it failed."""
        try:
            return await trio.to_thread.run_sync(write, *args)
        except DatabaseGoneError as exc:
            self._fatal(f"{exc} (noticed while {what}): nothing more is written to it (it would "
                        "go to a file nobody reads) and the run stops; the games it stored went "
                        "with that file (a copy or backup of it keeps them)")
            return None
        except sqlite3.Error as exc:
            hint = explain(exc, self.store.busy_timeout)
            self._fatal(f"the database failed while {what}: {hint} (SQLite: {exc}); the games "
                        "stored before are kept, and running the same command again plays the rest")
            return None

    async def _event(self, what: str, kind: str, detail: str, *, engine: str, key: str) -> None:
        """An ``events`` row, through :meth:`_write`."""
        await self._write(what, functools.partial(self.store.add_event, self.tournament_id, kind,
                                                  detail, engine=engine, key=key))

    def _store_game(self, scheduled: ScheduledGame, record: GameRecord) -> bool:
        """In a worker thread: the game in one transaction, then the PGN file.
        False if the key was already stored (the stored game wins)."""
        try:
            self.store.save_game(
                self.tournament_id, key=scheduled.key, seq=scheduled.seq, round=scheduled.round,
                pairing=scheduled.pairing, index=scheduled.index, pair=scheduled.pair,
                opening=scheduled.opening.to_dict(), record=record.to_dict(),
                move_data=record.encoded_moves())
        except DuplicateGameError:
            return False
        if self.config.pgn and self._pgn_error is None:
            try:
                self._append_pgn(self.config.pgn, scheduled, record)
            except OSError as exc:  # a full disk, a file made read-only meanwhile ...
                self._pgn_error = (f"cannot append to {self.config.pgn} ({exc.strerror}); no more "
                                   "games are written to it, all are in the database "
                                   "(arbiter export)")
                self.store.add_event(self.tournament_id, "pgn-error", self._pgn_error,
                                     key=scheduled.key)
        return True

    def _game_stored(self, scheduled: ScheduledGame, record: GameRecord) -> None:
        """Back on the event loop: standings, SPRT, the display."""
        self._count(scheduled, record)
        self.standings = self._tally.standings(self.sprt)
        self._check_sprt()
        self.observer.game_finished(scheduled, record, self.standings)
        self._tell_pgn_error()

    def _count(self, scheduled: ScheduledGame, record: GameRecord) -> None:
        """A newly stored game into the run's rows and tally (the standings
        are made from them when the caller says)."""
        self.played += 1
        row = {"white": record.white, "black": record.black, "result": record.result,
               "termination": record.termination, "pairing": scheduled.pairing,
               "pair": scheduled.pair, "key": scheduled.key, "seq": scheduled.seq}
        self._rows.append(row)
        self._tally.add(row)

    def _tell_pgn_error(self) -> None:
        """The record file's failure, said once."""
        if self._pgn_error is not None and not self._pgn_error_told:
            self._pgn_error_told = True
            self.observer.message(self._pgn_error)

    def _append_pgn(self, path: str, scheduled: ScheduledGame, record: GameRecord) -> None:
        per_round = self.total // self.config.rounds
        records.append_game(path, record, {
            "Event": self.config.name, "Site": "?",
            "Round": records.round_label(scheduled.round, scheduled.seq, per_round)})


def format_duration(seconds: float) -> str:
    """``1:02:03`` / ``2:03``."""
    if not math.isfinite(seconds) or seconds < 0:
        return "-"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
