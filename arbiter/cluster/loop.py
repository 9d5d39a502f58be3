"""The worker's game loop: one long-lived trio run in a thread of its own,
playing the batches of game pairs its Dask tasks hand it and keeping engine
processes from pair to pair (``specs/cluster.md`` §Workers).

A Dask task runs in one of the worker's task threads; it gives its batch to
:meth:`GameLoop.play`, which runs it in the loop (``trio.from_thread.run``)
and blocks that thread until the batch's result is ready.  All the worker's
slots share the loop, and with it a pool of idle engines: an engine asked for
with the same configuration as an idle one (same name, command, options, time
control: the worker's table overridden by the request) is that one, told
``uginewgame`` as a local run tells the engines it keeps.  An idle engine ends
after :data:`ENGINE_IDLE` seconds unused, beyond :data:`IDLE_PER_SLOT` per
slot, when the plugin is torn down (the worker closing) and, as every engine
of the arbiter, when its worker process dies (parent-death signal).

Stopping: a batch's games are cancelled when the run's stop ``Event`` is set
(one watcher per run and worker, a long poll: :func:`_watch_stop`), or when
the task is no longer wanted on the worker (cancelled, released: looked at
every :data:`STOP_POLL`); its engines then end as on Ctrl-C in a local run.
Before each pair after the first, the run's drain ``Event`` is looked at: set
(an SPRT decision), the batch's remaining pairs are not begun (``skipped``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from arbiter.clock import TimeControl
from arbiter.cluster.task import result_game
from arbiter.engine import Engine, EngineConfig, EngineStartError, open_engine
from arbiter.games import get_game
from arbiter.match import play_game
from arbiter.match.adjudication import Adjudication
from arbiter.run.gameloop import startup_limit

__all__ = ["GameLoop", "Batch", "LoopClosed", "ENGINE_IDLE", "IDLE_PER_SLOT", "STOP_POLL"]

#: Seconds an idle engine is kept for a later pair: a pairing's next pair
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
#: Seconds a batch's wait on its stop event lasts before it looks at its
#: task's state and waits again.  The wait is answered by the scheduler the
#: moment the event is set (a long poll), so this bounds only how late a
#: cancel is noticed; each wait is one request to the scheduler (one per run
#: and worker, not per pair), so shorter would load it for nothing.
STOP_POLL = 2.0
#: Seconds :meth:`GameLoop.close` waits for the loop's engines to end
#: (each gets its ``quit``, then SIGTERM, then SIGKILL: a few seconds).
CLOSE_WAIT = 30.0


class LoopClosed(RuntimeError):
    """The worker's game loop has ended (the worker is closing)."""


@dataclass
class Batch:
    """A task's batch as the loop plays it: the request, its engines as this
    worker runs them, the worker's address, the run's stop and drain events
    (Dask ``Event``\\ s: ``wait(timeout)``, ``is_set()``) and whether the task
    is still wanted (False once cancelled or released)."""

    request: dict[str, Any]
    engines: dict[str, EngineConfig]
    worker: str
    stop: Any
    drain: Any
    wanted: Callable[[], bool]
    result: dict[str, Any] = field(default_factory=dict)


class _Held:
    """An engine process kept by the loop; it lives in a task of its own
    (:meth:`GameLoop._hold`), so engines end in any order."""

    def __init__(self, engine: Engine, key: str, release: trio.Event, gone: trio.Event):
        self.engine = engine
        self.key = key
        self.release = release
        self.gone = gone
        self.since = 0.0  # when it became idle

    async def close(self) -> None:
        self.release.set()
        with trio.CancelScope(shield=True):
            await self.gone.wait()


class _Stop:
    """A run's stop event as this loop watches it: the batches to cancel."""

    def __init__(self, event: Any):
        self.event = event
        self.scopes: set[trio.CancelScope] = set()
        self.set = False


class GameLoop:
    """The loop of a worker with ``slots`` slots; engine I/O logs go to
    ``log_dir`` (None: nowhere).  :meth:`start` it, :meth:`play` batches
    from task threads, :meth:`close` it."""

    def __init__(self, slots: int, log_dir: str | None):
        self.slots = max(1, slots)
        self.log_dir = log_dir
        self._idle: list[_Held] = []
        self._stops: dict[str, _Stop] = {}
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arbiter-game-loop", daemon=True)
        self._startups: trio.CapacityLimiter | None = None

    # -- from other threads ------------------------------------------------------

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()

    def play(self, batch: Batch) -> dict[str, Any]:
        """In a task thread: ``batch`` played in the loop; its result.
        :class:`LoopClosed` if the loop has ended or ends meanwhile."""
        if self._token is None:
            raise LoopClosed("the worker's game loop is not running")
        try:
            return trio.from_thread.run(self._batch, batch, trio_token=self._token)
        except (trio.RunFinishedError, trio.Cancelled):
            raise LoopClosed("the worker's game loop ended during the batch") from None

    def close(self) -> None:
        """End the loop and every engine it holds (within :data:`CLOSE_WAIT`)."""
        token, nursery = self._token, self._nursery
        if token is not None and nursery is not None:
            try:
                trio.from_thread.run_sync(nursery.cancel_scope.cancel, trio_token=token)
            except trio.RunFinishedError:
                pass
        self._thread.join(CLOSE_WAIT)

    def _run(self) -> None:
        try:
            trio.run(self._main)
        finally:
            self._token = None
            self._ready.set()

    async def _main(self) -> None:
        self._startups = trio.CapacityLimiter(startup_limit())
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            nursery.start_soon(self._sweep)
            self._ready.set()
            await trio.sleep_forever()

    # -- engines -------------------------------------------------------------------

    async def _hold(self, config: EngineConfig, key: str, *,
                    task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        release, gone = trio.Event(), trio.Event()
        try:
            async with open_engine(config, log_dir=self.log_dir) as engine:
                task_status.started(_Held(engine, key, release, gone))
                await release.wait()
        finally:
            gone.set()

    async def acquire(self, config: EngineConfig) -> _Held:
        """An idle engine of ``config``, or a new one (EngineStartError)."""
        key = json.dumps(config.to_dict(), sort_keys=True, default=str)
        for item in self._idle:
            if item.key == key and item.engine.healthy:
                self._idle.remove(item)
                return item
        assert self._nursery is not None and self._startups is not None
        async with self._startups:
            held: _Held = await self._nursery.start(self._hold, config, key)
        return held

    async def release(self, item: _Held, keep: bool) -> None:
        """``item`` back to the idle engines (if ``keep`` and fit), else ended."""
        with trio.CancelScope(shield=True):
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

    async def _batch(self, batch: Batch) -> dict[str, Any]:
        batch.result = {"worker": batch.worker, "games": [], "events": [], "failure": None,
                        "stopped": False, "skipped": []}
        stop = self._watched(batch)
        with trio.CancelScope() as scope:
            stop.scopes.add(scope)
            if stop.set:
                scope.cancel()
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._watch_task, batch, scope)
                    await self._pairs(batch)
                    nursery.cancel_scope.cancel()
            finally:
                stop.scopes.discard(scope)
        batch.result["stopped"] = scope.cancel_called
        batch.result["games"] = json.dumps(batch.result["games"])  # one text: cheap to send
        return batch.result

    def _watched(self, batch: Batch) -> _Stop:
        """The run's stop as watched here (a watcher started if none is)."""
        name = batch.request["stop"]
        stop = self._stops.get(name)
        if stop is None:
            stop = self._stops[name] = _Stop(batch.stop)
            assert self._nursery is not None
            self._nursery.start_soon(self._watch_stop, name, stop)
        return stop

    async def _watch_stop(self, name: str, stop: _Stop) -> None:
        """Wait on the run's stop event while batches of that run play here;
        once set, cancel them (and every later one: the entry stays)."""
        await trio.lowlevel.checkpoint()  # the first batch registers its scope first
        while stop.scopes and not stop.set:
            try:
                stop.set = bool(await trio.to_thread.run_sync(
                    stop.event.wait, STOP_POLL, abandon_on_cancel=True))
            except Exception:  # noqa: BLE001 - the scheduler unreachable: look again later
                await trio.sleep(STOP_POLL)
        if stop.set:
            for scope in stop.scopes:
                scope.cancel()
        elif self._stops.get(name) is stop:
            del self._stops[name]

    async def _watch_task(self, batch: Batch, scope: trio.CancelScope) -> None:
        """Cancel the batch once its task is cancelled or released."""
        while batch.wanted():  # noqa: ASYNC110 - Dask's task state has no trio event to wait on
            await trio.sleep(STOP_POLL)
        scope.cancel()

    async def _drained(self, batch: Batch) -> bool:
        try:
            return bool(await trio.to_thread.run_sync(batch.drain.is_set, abandon_on_cancel=True))
        except Exception:  # noqa: BLE001 - unknown: play on (the coordinator drops what it must)
            return False

    async def _pairs(self, batch: Batch) -> None:
        pairs = batch.request["pairs"]
        for number, games in enumerate(pairs):
            if batch.result["failure"] is not None:
                return
            if number and await self._drained(batch):
                batch.result["skipped"] = [g["key"] for pair in pairs[number:] for g in pair]
                return
            await _Pair(self, batch, games).play()


class _Pair:
    """The games of one pair, in order, with engines of the loop's pool
    (started afresh after a crash, a stall or with ``restart``).  A handshake
    that fails is tried once more with fresh processes; a second failure sets
    the batch's ``failure``, as it aborts a local run."""

    def __init__(self, loop: GameLoop, batch: Batch, games: list[dict[str, Any]]):
        self.loop = loop
        self.batch = batch
        self.request = batch.request
        self.result = batch.result
        self.game = get_game(self.request["game"])
        self.tc = TimeControl.parse(self.request["tc"])
        self.adjudication = Adjudication.parse(self.request.get("resign"), self.request.get("draw"))
        self.pending = list(games)
        self.held: dict[str, _Held] = {}
        self.failed: set[str] = set()  # keys whose handshake failed once

    async def play(self) -> None:
        try:
            while self.pending and self.result["failure"] is None:
                try:
                    record = await self._next()
                except EngineStartError as exc:
                    await self._drop(list(self.held))
                    self._handshake_failed(exc)
                    continue
                game = self.pending.pop(0)
                self.result["games"].append(result_game(game["key"], record))
                await self._after(game["key"], record.termination)
        finally:
            for item in self.held.values():
                await self.loop.release(item, keep=not self.request["restart"])
            self.held.clear()

    async def _next(self) -> Any:
        game = self.pending[0]
        for name in (game["white"], game["black"]):
            if name not in self.held:
                self.held[name] = await self.loop.acquire(self.batch.engines[name])
        return await play_game(
            self.game, self.held[game["white"]].engine, self.held[game["black"]].engine,
            fen=game["fen"], opening_moves=game["moves"], tc=self.tc,
            timemargin_ms=self.request["timemargin_ms"], maxplies=self.request["maxplies"],
            adjudication=self.adjudication, stall_ms=self.request["stall_ms"])

    async def _after(self, key: str, termination: str) -> None:
        """Keep the engines fit for another game (as in a local run)."""
        if self.request["restart"]:
            await self._drop(list(self.held))
            return
        for name, item in list(self.held.items()):
            engine = item.engine
            if not engine.healthy and engine.fault is None:
                await engine.finish_search()  # searching when the game ended: stop it
            if not engine.healthy:
                reason = engine.fault.detail if engine.fault else "not ready for another game"
                self._event("restart", f"engine {name!r} restarted after game {key} "
                                       f"({termination}): {reason}", name, key)
                await self._drop([name])

    async def _drop(self, names: list[str]) -> None:
        for name in names:
            await self.held.pop(name).close()

    def _handshake_failed(self, exc: EngineStartError) -> None:
        key = self.pending[0]["key"]
        self._event("handshake-failed", f"game {key} not played: {exc}", exc.engine, key)
        if key in self.failed:
            self.result["failure"] = (f"handshake-failure: engine {exc.engine!r} failed twice: "
                                      f"{exc.reason} (game {key} not played, on worker "
                                      f"{self.result['worker']})")
        self.failed.add(key)

    def _event(self, kind: str, detail: str, engine: str, key: str) -> None:
        where = f" (on worker {self.result['worker']})"
        self.result["events"].append({"kind": kind, "detail": detail + where, "engine": engine,
                                      "key": key})
