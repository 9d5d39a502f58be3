"""The coordinator side: game pairs submitted to a Dask cluster from a trio
run (``specs/cluster.md`` §The coordinator).

:class:`ClusterPlayer` is the :class:`arbiter.run.player.Player` of
``--cluster``: the coordinator takes, stores and tallies as in a local run, and
hands each batch of game pairs (one pair, or up to :data:`MAX_BATCH` while
many are pending and the games are fast: :data:`BATCH_PLAY`) to
:meth:`ClusterPlayer.play`, which submits it as one impure task
needing one ``slots`` resource and waits for its result.
The tournament runs at most ``--concurrency`` pair workers, so at most that
many batches (each playing one game at a time) are in flight.

**The bridge** (trio beside Dask's Tornado/asyncio): the client is Dask's
synchronous :class:`distributed.Client`, whose own event loop runs in a thread
of its own.  trio calls it through :func:`trio.to_thread.run_sync` for the
calls that wait (connecting, closing); ``submit`` only queues a message for
that loop, so it is called from trio directly.  Results come back through one
thread (:class:`_Results`): Dask's :class:`distributed.as_completed` fetches
each finished pair's result in the client's loop and hands them over in
batches, and the thread wakes their trio tasks through the run's
:class:`trio.lowlevel.TrioToken`.  So a thousand pairs in flight cost a
thousand futures and one thread, and no trio task blocks a thread.

**Stopping**: an SPRT decision sets the run's drain :class:`distributed.Event`
(the batches in flight begin no further pair).  The session's end (a finished
run, Ctrl-C, an abort) sets the run's stop event, which every batch in flight
watches on its worker (:mod:`arbiter.cluster.loop`), waits up to
:data:`STOP_WAIT` for them to end their engines, cancels what is left and
closes the client (and the local cluster it started).
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import dask
import trio
from distributed import Client, Event, Future, KilledWorker, LocalCluster, Security, as_completed

from arbiter.config import TournamentConfig
from arbiter.run.player import BatchEnd, PlayerError, Reporter
from arbiter.schedule import ScheduledGame

from .address import ClusterTarget
from .task import Outcome, WorkerRefused, make_request, read_result
from .worker import ArbiterPlugin, play_pairs

__all__ = ["ClusterPlayer", "ClusterError", "CONNECT_TIMEOUT", "STOP_WAIT", "FAILED_WORKERS",
           "MAX_BATCH", "BATCH_PLAY"]

#: Seconds to reach a scheduler before giving up (Dask's client timeout).
CONNECT_TIMEOUT = 30
#: Seconds a stop waits for the pairs in flight to end their engines
#: (a pair's wait on the stop event returns at once, then its engines get
#: their quit, SIGTERM and SIGKILL graces).
STOP_WAIT = 10.0
#: Seconds between two looks, during a stop, at the pairs still in flight.
STOP_LOOK = 0.05
#: Workers a pair may take down (lost while playing it) before it is deemed
#: the cause and the run aborts (Dask's ``KilledWorker``): the scheduler's
#: ``allowed-failures`` is one less.  Set for ``local:N``; a scheduler of
#: one's own is started with it (``specs/cluster.md`` §Exactly once).
FAILED_WORKERS = 3
#: The resource every batch needs one of: a worker's ``--slots``.
SLOTS = "slots"
#: Most game pairs in one task.  A task costs the coordinator a few ms of
#: CPU whatever its size (Dask's submit, the result's round trip, a thread
#: hop and a commit: ``bench/README.md`` §``cluster.py``), as much as a few
#: games' records, so a batch of 16 pairs (32 games) makes that a small part
#: of each game's cost; more would only hold more pairs on one slot while
#: others may be free near a run's end (the tournament batches only while
#: every pair worker can have as many) and gains little more.
MAX_BATCH = 16
#: Seconds of play a batch holds at most, at the pace of the last batch: a
#: batch's games are lost if the run is stopped while it plays (replayed on
#: resume), and an SPRT decision is seen only when a batch ends, so slow games
#: go one pair a task (their task's cost is nothing beside them) and only fast
#: ones, where the task's cost matters, fill a batch.  Until a batch has come
#: back, a batch is one pair.
BATCH_PLAY = 2.0


class ClusterError(PlayerError):
    """The cluster cannot play the run's games; the message says why."""


class ClusterPlayer:
    """Plays a tournament's game pairs on the cluster at ``target``."""

    def __init__(self, target: ClusterTarget, config: TournamentConfig):
        self.target = target
        self.config = config
        self.settings = {"game": config.game, "tc": config.tc,
                         "timemargin_ms": config.timemargin_ms, "maxplies": config.maxplies,
                         "stall_ms": config.stall_ms, "restart": config.restart,
                         "resign": config.resign, "draw": config.draw}
        self.slots = max(1, config.concurrency)
        self.tag = uuid.uuid4().hex[:12]
        #: the Dask Events every batch of this run watches: stop its games;
        #: begin no further pair (an SPRT decision)
        self.stop_name = f"arbiter-stop-{self.tag}"
        self.drain_name = f"arbiter-drain-{self.tag}"
        #: pairs the next batch may hold (the tournament reads it at each take):
        #: :data:`BATCH_PLAY` seconds of play at the last batch's pace
        self.max_batch = 1
        self.drained = False
        self._numbers = itertools.count(1)
        self._client: Client | None = None
        self._cluster: LocalCluster | None = None
        self._in_flight: set[Future] = set()
        self._results: _Results | None = None
        self.submitted = 0

    # -- the session -----------------------------------------------------------

    def describe(self) -> str:
        return f"on the cluster {self.target}"

    @asynccontextmanager
    async def session(self, observer: Reporter) -> AsyncIterator[None]:
        """Connected to the cluster (a ``local:N`` one started) inside; on the
        way out, by any path, the pairs in flight are stopped and the client
        closed (shielded from cancellation)."""
        try:
            workers = await trio.to_thread.run_sync(self._connect)
            assert self._client is not None
            self._results = _Results(self._client, trio.lowlevel.current_trio_token())
            observer.message(f"cluster {self.target}: {workers} worker(s)"
                             + ("" if workers else "; waiting for workers to join"))
            yield
        finally:
            with trio.CancelScope(shield=True):
                late = await trio.to_thread.run_sync(self._close)
            if late:
                observer.message(f"cluster: {late} game(s) of pairs stopped in flight had ended; "
                                 "they were dropped and are played again on resume")

    def _connect(self) -> int:
        """In a thread: the client (and the local cluster); the workers' count."""
        # Dask's own log lines (a local cluster's scheduler runs in this process)
        # would repeat, in its words, what the run says of each failure
        logging.getLogger("distributed").setLevel(logging.CRITICAL)
        try:
            if self.target.local:
                self._client = self._start_local()
            else:
                security = None
                if self.target.tls is not None:
                    tls = self.target.tls
                    security = Security(tls_ca_file=tls.ca, tls_client_cert=tls.cert,
                                        tls_client_key=tls.key, require_encryption=True)
                self._client = Client(self.target.address, security=security,
                                      timeout=CONNECT_TIMEOUT, set_as_default=False)
            return len(self._client.scheduler_info().get("workers", {}))
        except (OSError, TimeoutError, ValueError) as exc:
            self._close()
            raise ClusterError(f"cannot reach the cluster at {self.target}: {exc}") from None

    def _start_local(self) -> Client:
        """``local:N``: N worker processes on this machine, each with as many
        slots as needed for ``--concurrency`` games at once in all, and the
        plugin holding the coordinator's own engines."""
        workers = self.target.local
        slots = max(1, -(-self.config.concurrency // workers))
        with dask.config.set({"distributed.scheduler.allowed-failures": FAILED_WORKERS - 1}):
            self._cluster = LocalCluster(
                n_workers=workers, threads_per_worker=slots, processes=True,
                resources={SLOTS: slots}, host="127.0.0.1",
                dashboard_address="127.0.0.1:0",  # Dask's HTTP server: a free port, this machine only
                silence_logs=logging.ERROR)
        client = Client(self._cluster, set_as_default=False)
        client.register_plugin(ArbiterPlugin(
            {e.name: e for e in self.config.engines if e.name},
            "the coordinator's engines (local cluster)", self.config.log_dir, ignore_interrupt=True))
        return client

    def _close(self) -> int:
        """In a thread: stop the pairs in flight, close; how many games the
        stopped pairs had finished (dropped: the pair was abandoned)."""
        client, futures = self._client, list(self._in_flight)
        late = 0
        try:
            if client is not None:
                Event(self.stop_name, client=client).set()
                if futures:
                    deadline = time.monotonic() + STOP_WAIT
                    while not all(f.done() for f in futures) and time.monotonic() < deadline:
                        time.sleep(STOP_LOOK)
                    late = sum(_games_in(future) for future in futures if future.status == "finished")
                    client.cancel(futures)  # a local cluster's workers end below, with theirs
        except (OSError, TimeoutError):  # the scheduler is gone already: nothing to stop there
            pass
        finally:
            if self._results is not None:
                self._results.close()
                self._results = None
            self._in_flight.clear()
            self._client = None
            if client is not None:
                client.close()
            if self._cluster is not None:
                self._cluster.close()
                self._cluster = None
        return late

    # -- pairs -----------------------------------------------------------------

    def drain(self, games: bool = False) -> None:
        """An SPRT decision or a graceful stop: batches in flight begin no
        further pair (the pair in progress is completed either way; the event
        is set from a thread: it is a request to the scheduler)."""
        client = self._client
        if client is None or self.drained:
            return
        self.drained = True

        def set_drain() -> None:
            try:
                Event(self.drain_name, client=client).set()
            except (OSError, TimeoutError):
                pass  # the scheduler gone: the session's end stops the rest

        threading.Thread(target=set_drain, name="arbiter-cluster-drain", daemon=True).start()

    def _submit(self, request: dict[str, Any], key: str) -> Future:
        """The batch's task (``submit`` queues it for the client's loop: no wait)."""
        assert self._client is not None, "play_pairs outside the session"
        future = self._client.submit(play_pairs, request, key=key, pure=False,
                                     resources={SLOTS: 1})
        self._in_flight.add(future)
        self.submitted += 1
        return future

    def _paced(self, pairs: int, seconds: float) -> None:
        """A batch of ``pairs`` took ``seconds`` from its submission to its
        result: the next may hold :data:`BATCH_PLAY` seconds at that pace."""
        fit = int(BATCH_PLAY * pairs / max(seconds, 1e-6))
        self.max_batch = max(1, min(MAX_BATCH, fit))

    async def play(self, pairs: list[list[ScheduledGame]], reporter: Reporter) -> BatchEnd:
        """Play ``pairs`` on a worker, in order: its games and events are
        reported when its result comes; :class:`ClusterError` if the cluster
        failed the batch.  Cancelled, the batch stays in flight until the
        session stops it."""
        games = [g for pair in pairs for g in pair]
        for game in games:
            reporter.started(game)
        request = make_request(self.settings, self.config.engines, pairs, self.stop_name,
                               self.drain_name)
        key = f"arbiter-{self.tag}-{games[0].key}-{next(self._numbers)}"
        assert self._results is not None, "play_pairs outside the session"
        done = _Waiter()
        self._results.waiting[key] = done
        began = trio.current_time()
        future = self._submit(request, key)
        self._results.add(future)
        await done.event.wait()
        self._in_flight.discard(future)
        if future.status == "finished":
            self._paced(len(pairs), trio.current_time() - began)
            return await _report(read_result(done.result, games), games, self.drained, reporter)
        keys = ", ".join(g.key for g in games)
        try:  # the error itself, raised here (the rare path: a thread is fine)
            await trio.to_thread.run_sync(future.result)
            raise ClusterError(f"games {keys}: the cluster says {future.status}")
        except KilledWorker as exc:
            last = getattr(exc, "last_worker", None)
            raise ClusterError(
                f"games {keys} took down {FAILED_WORKERS} workers in a row (Dask's "
                f"KilledWorker; the last was {getattr(last, 'address', last) or '?'}): an engine "
                "that kills its worker, or a worker out of memory?; the games stored are kept"
            ) from None
        except (WorkerRefused, ClusterError) as exc:
            raise ClusterError(str(exc)) from None
        except Exception as exc:  # anything else the task raised travels back as itself
            raise ClusterError(f"games {keys} failed on the cluster: "
                               f"{type(exc).__name__}: {exc}") from None


class _Waiter:
    """A trio task waiting for one batch's result."""

    def __init__(self) -> None:
        self.event = trio.Event()
        self.result: Any = None


class _Results:
    """The one thread between Dask's results and trio: Dask's
    ``as_completed`` (with results, fetched in the client's loop) hands over
    finished pairs in batches; each batch wakes its trio waiters in one
    ``run_sync_soon``.  :attr:`waiting` maps a task's key to its waiter,
    registered before the task is submitted."""

    def __init__(self, client: Client, token: trio.lowlevel.TrioToken):
        self.completed = as_completed(loop=client.loop, with_results=True, raise_errors=False)
        self.token = token
        self.waiting: dict[str, _Waiter] = {}
        self._added = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="arbiter-cluster-results",
                                        daemon=True)
        self._thread.start()

    def add(self, future: Future) -> None:
        self.completed.add(future)
        self._added.set()

    def close(self) -> None:
        """The thread ends (at once if idle, else with the next batch)."""
        self._closed = True
        self._added.set()

    def _run(self) -> None:
        while not self._closed:
            self._added.wait()
            self._added.clear()
            for batch in self.completed.batches():  # blocks; ends once none is in flight
                try:
                    self.token.run_sync_soon(self._deliver, batch)
                except trio.RunFinishedError:
                    return  # the run ended meanwhile: nobody waits any more

    def _deliver(self, batch: list[tuple[Future, Any]]) -> None:
        """In trio's thread: wake the waiters of ``batch``."""
        for future, result in batch:
            waiter = self.waiting.pop(str(future.key), None)
            if waiter is not None:
                waiter.result = result
                waiter.event.set()


def _games_in(future: Future) -> int:
    """In a thread: the games a finished pair returned (a late result)."""
    try:
        result = future.result(timeout=STOP_WAIT)
    except Exception:  # noqa: BLE001 - a failed late pair has no games to count
        return 0
    games = result.get("games") if isinstance(result, dict) else None
    try:
        return len(json.loads(games)) if isinstance(games, str) else 0
    except ValueError:
        return 0


async def _report(outcome: Outcome, games: list[ScheduledGame], drained: bool,
                  reporter: Reporter) -> BatchEnd:
    """A worker's checked result to the coordinator: its events (dropped parts
    among them) and its games, stored; a requested game without a record is a
    failure (unless its pair was skipped after the run was drained)."""
    for event in outcome.events:
        await reporter.event(event["kind"], event["detail"], event["engine"] or None,
                             event["key"] or None)
    for why in outcome.dropped:
        await reporter.event("dropped-result", f"a result from worker {outcome.worker} was "
                             f"dropped: {why}", None, None)
    await reporter.finished(outcome.played)
    failure = outcome.failure
    played = {scheduled.key for scheduled, _ in outcome.played}
    skipped = set(outcome.skipped) if drained else set()
    missing = [g.key for g in games if g.key not in played and g.key not in skipped]
    if failure is None and missing:
        failure = (f"worker {outcome.worker} returned no record for game(s) {', '.join(missing)}; "
                   "stopping, the games stored are kept")
    return BatchEnd(failure=failure, skipped=[g for g in games if g.key in skipped])
