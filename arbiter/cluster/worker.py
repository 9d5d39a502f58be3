"""The worker side: a Dask ``WorkerPlugin`` holding this worker's engines, and
the task that plays one game pair (``specs/cluster.md`` §Workers).

:func:`play_pair` is the task the coordinator submits.  It runs in one of the
worker's task threads and plays the pair there with :func:`trio.run`: the
normal match (:func:`arbiter.match.play_game`, engines of
:func:`arbiter.engine.open_engine`, so process groups and the parent-death
signal are those of a local run).  Its result is plain data
(:mod:`arbiter.cluster.task`); it never touches the database.

Beside the games, a trio task watches the run's stop primitive (a Dask
``Event``, set by the coordinator) and the task's own state on the worker
(cancelled by the coordinator, or released because the coordinator went
away); either cancels the games, whose engines then end as they end on Ctrl-C
in a local run.  The games finished by then are returned.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import threading
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any

import trio
from distributed import Event, WorkerPlugin, get_worker

from arbiter.clock import TimeControl
from arbiter.engine import Engine, EngineConfig, EngineStartError, open_engine
from arbiter.games import get_game
from arbiter.match import play_game

from .task import WorkerRefused, engine_for, version_problem, versions

__all__ = ["PLUGIN_NAME", "STOP_POLL", "ArbiterPlugin", "play_pair", "serve_worker"]

#: The name the plugin is registered under on each worker.
PLUGIN_NAME = "arbiter"

#: Seconds a pair's wait on its stop event lasts before it looks at its
#: task's state (cancelled, or released because the coordinator went away)
#: and waits again.  The wait is answered by the scheduler the moment the
#: event is set (a long poll), so this bounds only how late a cancel is
#: noticed, and each wait is one request to the scheduler: with thousands of
#: pairs in flight, shorter would load it for nothing.
STOP_POLL = 2.0

#: Task states (on the worker) that mean nobody wants the pair any more.
_UNWANTED = frozenset({"cancelled", "released", "forgotten"})


class ArbiterPlugin(WorkerPlugin):
    """This worker's engines: the tables of its own engines file (``source``
    names it in messages), and where their I/O logs go (None: nowhere).
    The coordinator names engines; their commands come only from here.

    ``ignore_interrupt``: the worker process ignores SIGINT (the workers of
    ``local:N`` share the coordinator's terminal, whose Ctrl-C is the
    coordinator's to handle: it stops their games through the stop primitive)."""

    name = PLUGIN_NAME

    def __init__(self, tables: Mapping[str, EngineConfig], source: str,
                 log_dir: str | None = None, *, ignore_interrupt: bool = False):
        self.tables = {name: EngineConfig(**engine.to_dict()) for name, engine in tables.items()}
        self.source = source
        self.log_dir = log_dir
        self.ignore_interrupt = ignore_interrupt

    def setup(self, worker: Any) -> None:
        versions()  # computed once, before the first game
        if self.ignore_interrupt and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def play_pair(request: dict[str, Any]) -> dict[str, Any]:
    """The task: play the games of ``request`` on this worker; returns the
    result (``specs/cluster.md`` §Requests and results).  Raises
    :class:`~arbiter.cluster.task.WorkerRefused` (naming this worker) for
    other versions, a missing engine or a worker without the plugin."""
    worker = get_worker()
    address = worker.address
    plugin = worker.plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, ArbiterPlugin):
        raise WorkerRefused(f"worker {address} has no arbiter plugin: start it with "
                            "`arbiter worker SCHEDULER --engines FILE`, not `dask worker`")
    problem = version_problem(address, versions(), request.get("versions") or {})
    if problem is not None:
        raise WorkerRefused(problem)
    engines = {name: engine_for(name, wanted, plugin.tables, address, plugin.source)
               for name, wanted in request["engines"].items()}
    stop = Event(request["stop"])
    key = worker.get_current_task()

    def stopped() -> bool:
        """Blocks up to STOP_POLL: whether the pair is to stop."""
        if stop.wait(STOP_POLL):
            return True
        task = worker.state.tasks.get(key)
        return task is None or task.state in _UNWANTED

    return trio.run(_play, request, engines, plugin.log_dir, address, stopped)


async def _play(request: dict[str, Any], engines: dict[str, EngineConfig], log_dir: str | None,
                address: str, stopped: Callable[[], bool]) -> dict[str, Any]:
    result: dict[str, Any] = {"worker": address, "games": [], "events": [], "failure": None,
                              "stopped": False}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_watch, stopped, nursery.cancel_scope, result)
        await _Pair(request, engines, log_dir, result).play()
        nursery.cancel_scope.cancel()
    result["games"] = json.dumps(result["games"])  # one text: a fraction of the cost to send
    return result


async def _watch(stopped: Callable[[], bool], scope: trio.CancelScope, result: dict[str, Any]) -> None:
    """Cancel the pair's games once the stop primitive is set or the task unwanted."""
    while not await trio.to_thread.run_sync(stopped, abandon_on_cancel=True):
        pass
    result["stopped"] = True
    scope.cancel()


class _Pair:
    """The games of one request, played in order by the same two engines
    (kept from game to game as a local run keeps them; started afresh after a
    crash or with ``restart``).  A handshake that fails is tried once more with
    fresh processes; a second failure ends the pair with ``failure`` set, as
    it aborts a local run."""

    def __init__(self, request: dict[str, Any], engines: dict[str, EngineConfig],
                 log_dir: str | None, result: dict[str, Any]):
        self.request = request
        self.engines = engines
        self.log_dir = log_dir
        self.result = result
        self.game = get_game(request["game"])
        self.tc = TimeControl.parse(request["tc"])
        self.pending = list(request["games"])
        self.failed: set[str] = set()  # keys whose handshake failed once

    async def play(self) -> None:
        while self.pending and self.result["failure"] is None:
            async with AsyncExitStack() as stack:
                try:
                    held = {name: await stack.enter_async_context(
                        open_engine(config, log_dir=self.log_dir))
                        for name, config in self.engines.items()}
                    await self._games(held)
                except EngineStartError as exc:
                    self._handshake_failed(exc)

    async def _games(self, held: dict[str, Engine]) -> None:
        """Play pending games with ``held`` until one leaves an engine unfit."""
        while self.pending:
            game = self.pending[0]
            record = await play_game(
                self.game, held[game["white"]], held[game["black"]], fen=game["fen"],
                opening_moves=game["moves"], tc=self.tc,
                timemargin_ms=self.request["timemargin_ms"], maxplies=self.request["maxplies"],
                stall_ms=self.request["stall_ms"])
            self.pending.pop(0)
            self.result["games"].append({"key": game["key"], "record": record.to_dict()})
            if self.pending and not await self._fit(held, game["key"], record.termination):
                return

    async def _fit(self, held: dict[str, Engine], key: str, termination: str) -> bool:
        """Whether both engines may play the next game (as in a local run)."""
        if self.request["restart"]:
            return False
        fit = True
        for name, engine in held.items():
            if not engine.healthy and engine.fault is None:
                await engine.finish_search()  # searching when the game ended: stop it
            if not engine.healthy:
                reason = engine.fault.detail if engine.fault else "not ready for another game"
                self._event("restart", f"engine {name!r} restarted after game {key} "
                                       f"({termination}): {reason}", name, key)
                fit = False
        return fit

    def _handshake_failed(self, exc: EngineStartError) -> None:
        key = self.pending[0]["key"]
        detail = f"game {key} not played: {exc}"
        self._event("handshake-failed", detail, exc.engine, key)
        if key in self.failed:
            self.result["failure"] = (f"handshake-failure: engine {exc.engine!r} failed twice: "
                                      f"{exc.reason} (game {key} not played, on worker "
                                      f"{self.result['worker']})")
        self.failed.add(key)

    def _event(self, kind: str, detail: str, engine: str, key: str) -> None:
        where = f" (on worker {self.result['worker']})"
        self.result["events"].append({"kind": kind, "detail": detail + where, "engine": engine,
                                      "key": key})


# --------------------------------------------------------------------------
# `arbiter worker`: a Dask worker with the plugin, until a stop signal
# --------------------------------------------------------------------------

#: Seconds a starting worker keeps trying to reach its scheduler.
JOIN_TIMEOUT = 60

#: Signals that end ``arbiter worker`` cleanly: it leaves the scheduler
#: (whose pairs are then played elsewhere) and its engines end with it.
WORKER_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def serve_worker(address: str, tls: Any, plugin: ArbiterPlugin, slots: int,
                 name: str | None = None, announce: Callable[[str], None] = print) -> None:
    """Run a Dask worker joined to scheduler ``address`` (``tls``: an
    :class:`~arbiter.cluster.address.TLSFiles` or None), offering ``slots``
    games at once, until one of :data:`WORKER_STOP_SIGNALS`.  ``announce``
    is told when it has joined.  OSError/TimeoutError if it cannot join."""
    asyncio.run(_serve(address, tls, plugin, slots, name, announce))


async def _serve(address: str, tls: Any, plugin: ArbiterPlugin, slots: int, name: str | None,
                 announce: Callable[[str], None]) -> None:
    from distributed import Security, Worker

    logging.getLogger("distributed").setLevel(logging.WARNING)  # its INFO lines: a page per join
    security = None
    if tls is not None:
        security = Security(tls_ca_file=tls.ca, tls_worker_cert=tls.cert, tls_worker_key=tls.key,
                            require_encryption=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in WORKER_STOP_SIGNALS:
        loop.add_signal_handler(number, stop.set)
    worker = Worker(address, nthreads=slots, resources={"slots": slots}, plugins=(plugin,),
                    security=security, name=name, death_timeout=JOIN_TIMEOUT, dashboard=False)
    async with worker:
        announce(f"worker {worker.address} joined {address}: {slots} slot(s), engines "
                 f"{', '.join(sorted(plugin.tables)) or 'none'} from {plugin.source}")
        ended = asyncio.ensure_future(worker.finished())
        stopped = asyncio.ensure_future(stop.wait())
        await asyncio.wait([ended, stopped], return_when=asyncio.FIRST_COMPLETED)
        for task in (ended, stopped):
            task.cancel()
