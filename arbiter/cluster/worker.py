"""The worker side: a Dask ``WorkerPlugin`` holding this worker's engines and
its game loop, and the task that plays a batch of game pairs
(``specs/cluster.md`` §Workers).

:func:`play_pairs` is the task the coordinator submits.  It runs in one of the
worker's task threads, checks the request (versions, engines of this worker's
own file) and hands the batch to the plugin's :class:`~arbiter.cluster.loop.DaskLoop`:
one long-lived trio run in a thread of its own, started with the plugin, that
plays the normal match (:func:`arbiter.match.play_game`, engines of
:func:`arbiter.engine.open_engine`, so process groups and the parent-death
signal are those of a local run) and keeps engines from pair to pair.  The
task thread blocks until the result is ready.  The result is plain data
(:mod:`arbiter.cluster.task`); the worker never touches the database.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable, Mapping
from typing import Any

from distributed import Event, Reschedule, WorkerPlugin, get_worker

from arbiter.engine import EngineConfig

from .loop import STOP_POLL, Batch, DaskLoop, LoopClosed
from .task import WorkerRefused, engine_for, version_problem, versions

__all__ = ["PLUGIN_NAME", "STOP_POLL", "ArbiterPlugin", "play_pairs", "serve_worker"]

#: The name the plugin is registered under on each worker.
PLUGIN_NAME = "arbiter"

#: Task states (on the worker) that mean nobody wants the batch any more.
_UNWANTED = frozenset({"cancelled", "released", "forgotten"})


class ArbiterPlugin(WorkerPlugin):
    """This worker's engines: the tables of its own engines file (``source``
    names it in messages), and where their I/O logs go (None: nowhere).
    The coordinator names engines; their commands come only from here.
    :meth:`setup` starts the worker's game loop, :meth:`teardown` ends it
    with every engine it holds.

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
        self.loop: DaskLoop | None = None

    def setup(self, worker: Any) -> None:
        versions()  # computed once, before the first game
        if self.ignore_interrupt and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.loop = DaskLoop(worker.state.nthreads, self.log_dir, where=f" (on worker {worker.address})")
        self.loop.start()

    async def teardown(self, worker: Any) -> None:
        """The loop ends its engines (in a thread: the worker's own loop runs on)."""
        loop, self.loop = self.loop, None
        if loop is not None:
            await asyncio.to_thread(loop.close)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "loop": None}  # a loop is a worker's own


def play_pairs(request: dict[str, Any]) -> dict[str, Any]:
    """The task: play the game pairs of ``request`` on this worker, in order;
    returns the result (``specs/cluster.md`` §Requests and results).  Raises
    :class:`~arbiter.cluster.task.WorkerRefused` (naming this worker) for
    other versions, a missing engine or a worker without the plugin, and
    Dask's ``Reschedule`` if the worker is closing (another plays it)."""
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
    key = worker.get_current_task()

    def wanted() -> bool:
        task = worker.state.tasks.get(key)
        return task is not None and task.state not in _UNWANTED

    loop = plugin.loop
    if loop is None:
        raise Reschedule()
    try:
        return loop.play(Batch(request, engines, address, Event(request["stop"]),
                               Event(request["drain"]), wanted))
    except LoopClosed:
        raise Reschedule() from None


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
