"""A whole run: a tournament's schedule played by engine processes (trio).

:class:`TournamentConfig` says what to play (and hashes to the tournament's
*identity*, so running the same command twice finds the same tournament);
:class:`Tournament` plays what is left of its schedule and stores each game
the moment it ends.  The rules are in ``specs/tournament.md``:

* ``concurrency`` worker tasks in one nursery each take the next pending game
  of the schedule (preferring, within a short look-ahead, a game of the
  engines they already hold), play it with :func:`arbiter.match.play_game`
  and commit it in one transaction (in a worker thread, so a slow disk never
  delays the event loop that times the engines);
* a worker keeps its engine processes from game to game (``uginewgame``)
  unless ``restart`` is set; an engine that crashed, stalled or is otherwise
  unfit is closed and started afresh for its next game (an ``events`` row
  says so);
* an engine that fails its handshake: the game is not recorded; it is tried
  once more with a fresh process, and if that fails too the tournament is
  *aborted* (games in progress are abandoned, finished games stay);
* SPRT (two engines): once a bound is crossed no new game pair starts, the
  game pairs already started are completed, and the run ends ``finished``;
* Ctrl-C / SIGTERM: games in progress are abandoned (replayed on resume),
  engines are killed, the run ends ``interrupted``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import signal
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import trio

from arbiter import records
from arbiter.clock import DEFAULT_STALL_MS, TimeControl, TimeControlError
from arbiter.engine import Engine, EngineConfig, EngineStartError, EngineTimeouts, open_engine
from arbiter.enginespec import EngineSpecError, load_engines_file, parse_engine_spec, read_toml
from arbiter.games import GameError, get_game
from arbiter.match import DEFAULT_TC, GameRecord, play_game
from arbiter.rating import SPRT, SPRTConfigError
from arbiter.schedule import (
    FORMATS,
    ORDERS,
    Opening,
    Schedule,
    ScheduledGame,
    ScheduleError,
    build_schedule,
    parse_openings,
)
from arbiter.standings import Standings, Tally, compute_standings

_T = TypeVar("_T")
from arbiter.store import ABORTED, FINISHED, INTERRUPTED, RUNNING, DuplicateGameError, Store

__all__ = [
    "ConfigError", "TournamentConfig", "Observer", "RunResult", "Tournament",
    "load_config_file", "open_tournament", "tournament_standings", "CONFIG_KEYS",
]


class ConfigError(ValueError):
    """A tournament configuration that cannot be run; names the file/key at fault."""


# --------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------

#: keys of a tournament TOML file (``specs/tournament.md`` §Config file)
CONFIG_KEYS = (
    "name", "game", "engine", "format", "games", "rounds", "openings", "order", "seed",
    "random_plies", "tc", "timemargin", "maxplies", "stall", "sprt", "concurrency",
    "restart", "db", "pgn", "log", "engines_file",
)


@dataclass
class TournamentConfig:
    """Everything that defines a tournament, plus how to run it.

    The fields up to ``sprt`` define the tournament (they make its
    :meth:`identity`); ``concurrency``, ``restart``, ``pgn`` and ``log_dir``
    only say how this run goes, so a tournament may be resumed with others.
    """

    game: str
    engines: list[EngineConfig]
    name: str = ""
    format: str = "round-robin"
    games: int = 2
    rounds: int = 1
    openings: list[Opening] = field(default_factory=list)
    openings_file: str | None = None
    order: str = "sequential"
    seed: int = 0
    random_plies: int = 0
    tc: str = DEFAULT_TC
    timemargin_ms: int = 0
    maxplies: int | None = None
    stall_ms: int = DEFAULT_STALL_MS
    sprt: str | None = None
    # how this run goes (not part of the identity)
    concurrency: int = 1
    restart: bool = False
    pgn: str | None = None
    log_dir: str | None = None

    def __post_init__(self) -> None:
        self.engines = [copy.deepcopy(e) for e in self.engines]
        for engine in self.engines:
            if not engine.name:
                engine.name = engine.label  # names are fixed before any engine runs
        if not self.name:
            self.name = f"{self.game} {self.format}"

    # -- checks -------------------------------------------------------------

    def validate(self) -> None:
        """Raise :class:`ConfigError` on anything that cannot run."""
        try:
            get_game(self.game)
        except GameError as exc:
            raise ConfigError(str(exc)) from None
        if self.format not in FORMATS:
            raise ConfigError(f"unknown format {self.format!r}; choose one of: {', '.join(FORMATS)}")
        if self.order not in ORDERS:
            raise ConfigError(f"unknown opening order {self.order!r}; choose one of: {', '.join(ORDERS)}")
        for key, value, low in (("games", self.games, 1), ("rounds", self.rounds, 1),
                                ("concurrency", self.concurrency, 1),
                                ("random_plies", self.random_plies, 0),
                                ("timemargin", self.timemargin_ms, 0), ("stall", self.stall_ms, 1)):
            if value < low:
                raise ConfigError(f"{key} must be at least {low}, not {value}")
        if self.maxplies is not None and self.maxplies < 1:
            raise ConfigError(f"maxplies must be at least 1, not {self.maxplies}")
        try:
            TimeControl.parse(self.tc)
        except TimeControlError as exc:
            raise ConfigError(str(exc)) from None
        if self.sprt is not None:
            self.sprt_test()
            if len(self.engines) != 2:
                raise ConfigError(f"sprt needs exactly two engines, not {len(self.engines)}")
        try:
            self.schedule()
        except ScheduleError as exc:
            raise ConfigError(str(exc)) from None

    def sprt_test(self) -> SPRT | None:
        if self.sprt is None:
            return None
        try:
            return SPRT.parse(self.sprt)
        except SPRTConfigError as exc:
            raise ConfigError(str(exc)) from None

    @property
    def engine_names(self) -> list[str]:
        return [e.name for e in self.engines]  # type: ignore[misc]

    def engine(self, name: str) -> EngineConfig:
        for engine in self.engines:
            if engine.name == name:
                return engine
        raise KeyError(name)

    def schedule(self) -> Schedule:
        return build_schedule(
            self.engine_names, format=self.format, games=self.games, rounds=self.rounds,
            openings=self.openings or None, order=self.order, seed=self.seed,
            random_plies=self.random_plies, game=get_game(self.game))

    # -- identity and storage ------------------------------------------------

    def defining(self) -> dict[str, Any]:
        """The part of the configuration that defines the tournament."""
        return {
            "name": self.name, "game": self.game,
            "engines": [e.to_dict() for e in self.engines],
            "format": self.format, "games": self.games, "rounds": self.rounds,
            "openings": [o.to_dict() for o in self.openings], "order": self.order,
            "seed": self.seed, "random_plies": self.random_plies, "tc": self.tc,
            "timemargin_ms": self.timemargin_ms, "maxplies": self.maxplies,
            "stall_ms": self.stall_ms, "sprt": self.sprt,
        }

    def identity(self) -> str:
        """SHA-256 of :meth:`defining`: the same command finds the same tournament."""
        text = json.dumps(self.defining(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        data = self.defining()
        data.update(openings_file=self.openings_file, concurrency=self.concurrency,
                    restart=self.restart, pgn=self.pgn, log_dir=self.log_dir)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TournamentConfig:
        """Inverse of :meth:`to_dict` (a stored tournament's ``config``)."""
        engines = [EngineConfig(**e) for e in data["engines"]]
        known = set(cls.__dataclass_fields__) - {"engines", "openings"}
        values = {k: v for k, v in data.items() if k in known}
        return cls(engines=engines, openings=[Opening.from_dict(o) for o in data.get("openings") or []],
                   **values)


def load_config_file(path: str) -> dict[str, Any]:
    """The settings of a tournament TOML file, checked and with paths made
    relative to the current directory (``specs/tournament.md`` §Config file).

    Returns a dict of :data:`CONFIG_KEYS` (``engine`` already parsed into
    :class:`EngineConfig` objects, against the file's own ``[engines.NAME]``
    tables); :class:`ConfigError` names the file and key at fault."""
    data = read_toml(path, ConfigError)
    base = os.path.dirname(path)
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key == "engines":
            continue  # [engines.NAME] tables: read below
        if key not in CONFIG_KEYS:
            raise ConfigError(f"{path}: unknown key {key!r} (known: {', '.join(CONFIG_KEYS)}, "
                              "and [engines.NAME] tables)")
        values[key] = _check_key(path, key, value)
    for key in ("openings", "db", "pgn", "log", "engines_file"):
        if key in values and not os.path.isabs(values[key]):
            values[key] = os.path.join(base, values[key])
    tables = {}
    if isinstance(data.get("engines"), dict):
        try:
            tables = load_engines_file(path)
        except EngineSpecError as exc:
            raise ConfigError(str(exc)) from None
    elif "engines" in data:
        raise ConfigError(f"{path}: 'engines' must hold [engines.NAME] tables")
    if "engines_file" in values:
        try:
            tables = {**load_engines_file(values["engines_file"]), **tables}
        except EngineSpecError as exc:
            raise ConfigError(str(exc)) from None
    specs = values.pop("engine", None)
    if specs is None and tables:
        values["engine"] = list(tables.values())
    elif specs is not None:
        try:
            values["engine"] = [parse_engine_spec(spec, tables or None, path) for spec in specs]
        except EngineSpecError as exc:
            raise ConfigError(f"{path}: key 'engine': {exc}") from None
    return values


_KEY_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "name": (str, "a string"), "game": (str, "a string"), "format": (str, "a string"),
    "games": (int, "a whole number"), "rounds": (int, "a whole number"),
    "openings": (str, "a file path"), "order": (str, "a string"), "seed": (int, "a whole number"),
    "random_plies": (int, "a whole number"), "tc": (str, "a time-control string"),
    "timemargin": (int, "a whole number of ms"), "maxplies": (int, "a whole number"),
    "stall": ((int, float), "a number of seconds"), "sprt": ((str, dict), "a string or a table"),
    "concurrency": (int, "a whole number"), "restart": (bool, "true or false"),
    "db": (str, "a file path"), "pgn": (str, "a file path"), "log": (str, "a directory path"),
    "engines_file": (str, "a file path"), "engine": (list, "a list of engine SPEC strings"),
}


def _check_key(path: str, key: str, value: Any) -> Any:
    kind, what = _KEY_TYPES[key]
    if isinstance(value, bool) and kind is not bool:
        ok = False
    else:
        ok = isinstance(value, kind)
    if key == "engine" and ok:
        ok = all(isinstance(v, str) for v in value)
    if not ok:
        raise ConfigError(f"{path}: key {key!r} must be {what}, not {value!r}")
    if key == "sprt" and isinstance(value, dict):
        value = " ".join(f"{k}={v}" for k, v in value.items())
    return value


def read_openings(game: str, path: str) -> list[Opening]:
    """An openings file, each line checked by the referee (errors name file:line)."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read openings: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return parse_openings(get_game(game), text, path)
    except ScheduleError as exc:
        raise ConfigError(str(exc)) from None
    except GameError as exc:
        raise ConfigError(str(exc)) from None


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


def tournament_standings(store: Store, tournament: Mapping[str, Any]) -> Standings:
    """The standings of a stored tournament (also one still running)."""
    config = tournament.get("config") or {}
    sprt = None
    if config.get("sprt"):
        try:
            sprt = SPRT.parse(config["sprt"])
        except SPRTConfigError:
            sprt = None
    engines = tournament.get("engines") or [e["name"] for e in store.engines(tournament["id"])]
    return compute_standings(engines, store.games(tournament["id"], with_record=False), sprt)


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
    differ from the stored ones).  ``observer`` is told what happens;
    ``handle_signals`` turns SIGINT/SIGTERM into a clean stop (the CLI's
    choice; tests that run in a worker thread leave it off).
    """

    def __init__(self, config: TournamentConfig, store: Store, tournament_id: int, *,
                 observer: Observer | None = None, handle_signals: bool = False,
                 timeouts: EngineTimeouts | None = None):
        self.config = config
        self.store = store
        self.tournament_id = tournament_id
        self.observer = observer or Observer()
        self.handle_signals = handle_signals
        self.timeouts = timeouts
        self.game = get_game(config.game)
        self.time_control = TimeControl.parse(config.tc)
        self.sprt = config.sprt_test()
        self.schedule = config.schedule()
        self.total = len(self.schedule)
        self._rows: list[dict[str, Any]] = []
        self._pending: list[ScheduledGame] = []
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
        self._scope: trio.CancelScope | None = None
        self.started_at = 0.0
        #: the stored games' counts, one game added at a time (see Tally)
        self._tally = Tally(config.engine_names)
        self.standings: Standings = self._tally.standings(self.sprt)

    # -- state ---------------------------------------------------------------

    @property
    def done(self) -> int:
        return len(self._rows)

    def _load(self) -> None:
        rows = self.store.games(self.tournament_id, with_record=False)
        keys = {row["key"] for row in rows}
        self._rows = rows
        self._pending = [g for g in self.schedule if g.key not in keys]
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

    def _take(self, holding: frozenset[str]) -> ScheduledGame | None:
        """The next game for a worker holding ``holding``'s engines, or None."""
        if self._abort or self._interrupted:
            return None
        candidates = self._pending
        if self.stopping_note:  # SPRT decided: only complete the pairs begun
            candidates = [g for g in candidates if (g.pairing, g.pair) in self._started_pairs]
        if not candidates:
            return None
        window = candidates[: 2 * self.config.concurrency + 2]
        choice = next((g for g in window if g.players == holding), candidates[0])
        self._pending.remove(choice)
        self._started_pairs.add((choice.pairing, choice.pair))
        return choice

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
        kind = "resume" if self._rows else "start"
        self.store.add_event(self.tournament_id, kind,
                             f"{len(self._pending)} of {self.total} games to play, "
                             f"concurrency {self.config.concurrency}")
        self.observer.started(self)
        workers = min(self.config.concurrency, max(1, len(self._pending)))
        async with trio.open_nursery() as nursery:
            self._scope = nursery.cancel_scope
            if self.handle_signals:
                nursery.start_soon(self._watch_signals)
            nursery.start_soon(self._tick)
            async with trio.open_nursery() as pool:
                for number in range(workers):
                    pool.start_soon(self._worker, number)
            nursery.cancel_scope.cancel()
        return await self._finish()

    async def _finish(self) -> RunResult:
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
            try:
                await trio.to_thread.run_sync(self._record_end, status, note)
            except sqlite3.Error as exc:  # the database that made the run stop, often
                note += f" (and this status could not be stored: {exc})"
        result = RunResult(self.tournament_id, status, note, self.played, self.done, self.total,
                           self.standings, abandoned)
        self.observer.stopped(result)
        return result

    def _record_end(self, status: str, note: str) -> None:
        self.store.set_status(self.tournament_id, status, note)
        self.store.add_event(self.tournament_id, status, note or f"{self.done} of {self.total} games")

    def stop(self, reason: str) -> None:
        """Stop the run now, as Ctrl-C does: games in progress are abandoned
        (replayed on resume), engines are closed, the status becomes
        ``interrupted`` with ``reason`` in its note."""
        if self._interrupted:
            return
        self._interrupted = True
        self._stop_reason = reason
        self.observer.message(f"{reason}: stopping; games in progress are abandoned and will be "
                              "replayed on resume")
        if self._scope is not None:
            self._scope.cancel()

    async def _watch_signals(self) -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
            async for signum in signals:
                self.stop(signal.Signals(signum).name)
                return

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

    # -- a worker --------------------------------------------------------------

    async def _worker(self, number: int) -> None:
        held: dict[str, _Held] = {}
        async with trio.open_nursery() as engines:
            try:
                while True:
                    scheduled = self._take(frozenset(held))
                    if scheduled is None:
                        return
                    self.running[scheduled.key] = scheduled
                    self.observer.game_started(scheduled)
                    record = await self._play_with_retry(scheduled, held, engines)
                    if record is None:
                        return  # aborted
                    with trio.CancelScope(shield=True):  # a finished game is always stored
                        stored = await self._write(f"storing game {scheduled.key}",
                                                   lambda: self._store_game(scheduled, record))
                        if stored is None:
                            return  # the run is aborting; the game is replayed on resume
                        del self.running[scheduled.key]
                        if stored:
                            self._game_stored(scheduled, record)
                        else:
                            self.observer.message(
                                f"game {scheduled.key} was already stored (another run on this "
                                "database?); the stored game is kept")
                    await self._after_game(scheduled, record, held)
            finally:
                for item in held.values():
                    await item.close()

    async def _play_with_retry(self, scheduled: ScheduledGame, held: dict[str, _Held],
                               engines: trio.Nursery) -> GameRecord | None:
        for attempt in (1, 2):
            try:
                return await self._play(scheduled, held, engines)
            except EngineStartError as exc:
                for item in held.values():
                    await item.close()
                held.clear()
                detail = f"game {scheduled.key} not played: {exc}"
                failed = exc.engine
                await self._write("recording a failed handshake", lambda: self.store.add_event(
                    self.tournament_id, "handshake-failed", detail, engine=failed, key=scheduled.key))
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
            async with open_engine(self.config.engine(name), timeouts=self.timeouts,
                                   log_dir=self.config.log_dir) as engine:
                task_status.started(_Held(engine, release, gone))
                await release.wait()
        finally:
            gone.set()

    async def _play(self, scheduled: ScheduledGame, held: dict[str, _Held],
                    engines: trio.Nursery) -> GameRecord:
        for name in [n for n in held if n not in scheduled.players]:
            await held.pop(name).close()
        for name in (scheduled.white, scheduled.black):
            if name not in held:
                held[name] = await engines.start(self._hold, name)
        opening = scheduled.opening
        return await play_game(
            self.game, held[scheduled.white].engine, held[scheduled.black].engine,
            fen=opening.fen, opening_moves=opening.moves,
            tc=self.time_control, timemargin_ms=self.config.timemargin_ms,
            maxplies=self.config.maxplies, stall_ms=self.config.stall_ms)

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
                    await self._write("recording a restart", lambda: self.store.add_event(
                        self.tournament_id, "restart", detail, engine=name, key=scheduled.key))
                await held.pop(name).close()

    async def _write(self, what: str, write: Callable[[], _T]) -> _T | None:
        """A write to the database from a worker, in a thread.  A database
        that fails (locked beyond the busy timeout, a full disk, an I/O
        error) aborts the run cleanly instead of crashing it: the games
        stored before stay, and a resume plays the rest.  None if it failed."""
        try:
            return await trio.to_thread.run_sync(write)
        except sqlite3.Error as exc:
            self._fatal(f"the database failed while {what} ({exc}); the games stored before "
                        "are kept, and running the same command again plays the rest")
            return None

    def _store_game(self, scheduled: ScheduledGame, record: GameRecord) -> bool:
        """In a worker thread: the game in one transaction, then the PGN file.
        False if the key was already stored (the stored game wins)."""
        try:
            self.store.save_game(
                self.tournament_id, key=scheduled.key, seq=scheduled.seq, round=scheduled.round,
                pairing=scheduled.pairing, index=scheduled.index, pair=scheduled.pair,
                opening=scheduled.opening.to_dict(), record=record.to_dict())
        except DuplicateGameError:
            return False
        if self.config.pgn and self._pgn_error is None:
            try:
                self._append_pgn(scheduled, record)
            except OSError as exc:  # a full disk, a file made read-only meanwhile ...
                self._pgn_error = (f"cannot append to {self.config.pgn} ({exc.strerror}); no more "
                                   "games are written to it, all are in the database "
                                   "(arbiter export)")
                self.store.add_event(self.tournament_id, "pgn-error", self._pgn_error,
                                     key=scheduled.key)
        return True

    def _game_stored(self, scheduled: ScheduledGame, record: GameRecord) -> None:
        """Back on the event loop: standings, SPRT, the display."""
        self.played += 1
        row = {"white": record.white, "black": record.black, "result": record.result,
               "termination": record.termination, "pairing": scheduled.pairing,
               "pair": scheduled.pair, "key": scheduled.key, "seq": scheduled.seq}
        self._rows.append(row)
        self._tally.add(row)
        self.standings = self._tally.standings(self.sprt)
        self._check_sprt()
        self.observer.game_finished(scheduled, record, self.standings)
        if self._pgn_error is not None and not self._pgn_error_told:
            self._pgn_error_told = True
            self.observer.message(self._pgn_error)

    def _append_pgn(self, scheduled: ScheduledGame, record: GameRecord) -> None:
        per_round = self.total // self.config.rounds
        records.append_game(self.config.pgn, record, {
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


def merge_settings(file_values: Mapping[str, Any], flags: Mapping[str, Any]) -> dict[str, Any]:
    """Flags given on the command line (not None) override the file's values."""
    merged = dict(file_values)
    merged.update({k: v for k, v in flags.items() if v is not None})
    return merged


def config_from_settings(settings: Mapping[str, Any], engines: Iterable[EngineConfig]
                         ) -> TournamentConfig:
    """A checked :class:`TournamentConfig` from merged file+flag settings."""
    engines = list(engines)
    game = settings.get("game")
    if not game:
        raise ConfigError("no game: give --game GAME (troll, atoll, morris, talisman) "
                          "or game = \"...\" in the config file")
    if len(engines) < 2:
        raise ConfigError(f"a tournament needs at least two engines (got {len(engines)}): "
                          "give --engine SPEC for each, or engine = [...] in the config file")
    openings: list[Opening] = []
    if settings.get("openings"):
        openings = read_openings(game, settings["openings"])
    stall = settings.get("stall")
    config = TournamentConfig(
        game=str(game).strip().lower(), engines=engines, name=settings.get("name") or "",
        format=settings.get("format") or "round-robin",
        games=2 if settings.get("games") is None else settings["games"],
        rounds=1 if settings.get("rounds") is None else settings["rounds"],
        openings=openings, openings_file=settings.get("openings"),
        order=settings.get("order") or "sequential",
        seed=settings.get("seed") or 0,
        random_plies=settings.get("random_plies") or 0,
        tc=settings.get("tc") or DEFAULT_TC,
        timemargin_ms=settings.get("timemargin") or 0,
        maxplies=settings.get("maxplies"),
        stall_ms=DEFAULT_STALL_MS if stall is None else max(1, round(float(stall) * 1000)),
        sprt=settings.get("sprt"),
        concurrency=settings.get("concurrency") or 1,
        restart=bool(settings.get("restart")),
        pgn=settings.get("pgn"), log_dir=settings.get("log"),
    )
    names = [e.name for e in config.engines]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"two engines are called {repeated[0]!r}: give each a distinct name=")
    config.validate()
    return config
