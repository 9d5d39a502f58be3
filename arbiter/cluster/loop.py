"""A Dask worker's game loop: the run's one game loop
(:class:`arbiter.run.gameloop.GameLoop`) in a long-lived trio run in a thread
of its own, playing the batches of game pairs its Dask tasks hand it
(``specs/cluster.md`` §Workers).

A Dask task runs in one of the worker's task threads; it gives its batch to
:meth:`DaskLoop.play`, which runs it in the loop (``trio.from_thread.run``)
and blocks that thread until the batch's result is ready.  All the worker's
slots share the loop, and with it its pool of idle engines (an engine asked
for with the configuration of an idle one is that one: the worker's table
overridden by the request), as in a local run; idle engines end as the game
loop says, when the plugin is torn down (the worker closing) and, as every
engine of the arbiter, when its worker process dies (parent-death signal).

Stopping: a batch's games are cancelled when the run's stop ``Event`` is set
(one watcher per run and worker, a long poll: :meth:`DaskLoop._watch_stop`),
or when the task is no longer wanted on the worker (cancelled, released:
looked at every :data:`STOP_POLL`); its engines then end as on Ctrl-C in a
local run.  Before each pair after the first, the run's drain ``Event`` is
looked at: set (an SPRT decision, a graceful stop), the batch's remaining
pairs are not begun (``skipped``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from arbiter.cluster.task import result_game
from arbiter.engine import Engine, EngineConfig
from arbiter.record import GameRecord
from arbiter.run.gameloop import GameLoop, Match, MatchSettings
from arbiter.schedule import ScheduledGame

__all__ = ["DaskLoop", "Batch", "LoopClosed", "STOP_POLL"]

#: Seconds a batch's wait on its stop event lasts before it looks at its
#: task's state and waits again.  The wait is answered by the scheduler the
#: moment the event is set (a long poll), so this bounds only how late a
#: cancel is noticed; each wait is one request to the scheduler (one per run
#: and worker, not per pair), so shorter would load it for nothing.
STOP_POLL = 2.0
#: Seconds :meth:`DaskLoop.close` waits for the loop's engines to end
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


class _Stop:
    """A run's stop event as this loop watches it: the batches to cancel."""

    def __init__(self, event: Any):
        self.event = event
        self.scopes: set[trio.CancelScope] = set()
        self.set = False


class _Report:
    """A batch's games and events, into its result."""

    def __init__(self, result: dict[str, Any]):
        self.result = result

    async def started(self, game: ScheduledGame) -> None:
        return None  # a cluster's games in progress are not shown live

    async def finished(self, game: ScheduledGame, record: GameRecord) -> None:
        self.result["games"].append(result_game(game.key, record))

    async def event(self, kind: str, detail: str, engine: str | None, key: str | None) -> None:
        self.result["events"].append({"kind": kind, "detail": detail, "engine": engine or "",
                                      "key": key or ""})

    async def build(self, name: str, engine: Engine) -> None:
        return None


class DaskLoop:
    """The loop of a worker with ``slots`` slots; engine I/O logs go to
    ``log_dir`` (None: nowhere).  :meth:`start` it, :meth:`play` batches
    from task threads, :meth:`close` it."""

    def __init__(self, slots: int, log_dir: str | None, where: str = ""):
        self.loop = GameLoop(slots=slots, log_dir=log_dir, where=where)
        self._stops: dict[str, _Stop] = {}
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="arbiter-game-loop", daemon=True)

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
        async with self.loop.running(), trio.open_nursery() as nursery:
            self._nursery = nursery
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await trio.sleep_forever()

    # -- batches -------------------------------------------------------------------

    async def _batch(self, batch: Batch) -> dict[str, Any]:
        request = batch.request
        batch.result = {"worker": batch.worker, "games": [], "events": [], "failure": None,
                        "stopped": False, "skipped": []}
        match = Match(MatchSettings.from_dict(request), batch.engines)
        pairs = [[ScheduledGame.from_dict(g) for g in pair] for pair in request["pairs"]]
        stop = self._watched(batch)
        with trio.CancelScope() as scope:
            stop.scopes.add(scope)
            if stop.set:
                scope.cancel()
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._watch_task, batch, scope)
                    failure, skipped = await self.loop.play(
                        match, pairs, _Report(batch.result), lambda: self._drained(batch))
                    batch.result["failure"] = failure
                    batch.result["skipped"] = [g.key for g in skipped]
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
