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

**Losses** (``specs/cluster.md`` §Exactly once): a lost worker's batches are
given to another worker by the scheduler and simply waited for longer; a
``local:N`` start that loses a worker is made again (:data:`LOCAL_STARTS`);
whatever else fails in connecting or closing becomes a :class:`ClusterError`
or nothing, never a traceback.  A batch that waits :data:`WORKER_LOOK` has the
workers looked at, so one that can never play (no ``slots``: a plain ``dask
worker``) is named (:data:`NO_SLOTS`), and a cluster where none can play
says so (:data:`NO_WORKER`), instead of waiting in silence.

**Stopping**: an SPRT decision sets the run's drain :class:`distributed.Event`
(the batches in flight begin no further pair).  The session's end (a finished
run, Ctrl-C, an abort) sets the run's stop event, which every batch in flight
watches on its worker (:mod:`arbiter.cluster.loop`), waits up to
:data:`STOP_WAIT` for those a worker holds to end their engines, cancels what
is left and closes the client (and the local cluster it started).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import math
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
           "MAX_BATCH", "BATCH_PLAY", "LOCAL_STARTS", "WORKER_LOOK", "NO_SLOTS", "NO_WORKER"]

#: Seconds to reach a scheduler before giving up (Dask's client timeout).
CONNECT_TIMEOUT = 30
#: Starts of a ``local:N`` cluster tried before the run aborts.  A worker
#: process that dies while Dask starts it (killed, out of memory) fails the
#: whole start (Dask's "Nanny failed to start"; once started, Dask's nanny
#: replaces a lost worker itself), so the start is made again from nothing,
#: a second or two; three starts that each lose a worker say that this
#: machine cannot keep N worker processes alive, and trying on would hang.
LOCAL_STARTS = 3
#: Seconds a batch waits for its result before the coordinator looks at the
#: cluster's workers (at most once per this many seconds, whatever the
#: batches in flight): a worker without the ``slots`` resource (a plain
#: ``dask worker``) is never given a batch, so a run whose only workers are
#: such would wait in silence.  Each look is one request to the scheduler;
#: a batch of fast games never waits this long, so the look costs them nothing.
WORKER_LOOK = 5.0
#: What the coordinator says, once per worker, of a worker that offers no
#: ``slots`` (``specs/cluster.md`` §Workers).
NO_SLOTS = ("cluster: worker {worker} offers no 'slots' resource, so it is given no game (a "
            "plain `dask worker`?); start workers with `arbiter worker SCHEDULER --engines FILE`")
#: What it says when no worker that can play is connected (at the start, or
#: once all are gone), once each time that becomes so.
NO_WORKER = "cluster: no worker offers 'slots' (an `arbiter worker`); the games wait for one to join"
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
        self.plays_here = False  # engines are timed on the workers
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
        self._observer: Reporter | None = None
        self._told: set[str] = set()  # workers said to offer no slots (NO_SLOTS)
        self._none_told = False  # NO_WORKER said, and no worker with slots seen since
        self._looked = -math.inf  # when the workers were last looked at (_look)
        self.submitted = 0

    # -- the session -----------------------------------------------------------

    def describe(self) -> str:
        return f"on the cluster {self.target}"

    @asynccontextmanager
    async def session(self, observer: Reporter) -> AsyncIterator[None]:
        """Connected to the cluster (a ``local:N`` one started) inside; on the
        way out, by any path, the pairs in flight are stopped and the client
        closed (shielded from cancellation)."""
        self._observer = observer
        try:
            workers = await trio.to_thread.run_sync(self._connect)
            assert self._client is not None
            self._results = _Results(self._client, trio.lowlevel.current_trio_token())
            observer.message(f"cluster {self.target}: {len(workers)} worker(s)")
            self._tell(workers)
            yield
        finally:
            with trio.CancelScope(shield=True):
                late = await trio.to_thread.run_sync(self._close)
            if late:
                observer.message(f"cluster: {late} game(s) of pairs stopped in flight had ended; "
                                 "they were dropped and are played again on resume")

    def _connect(self) -> dict[str, Any]:
        """In a thread: the client (and the local cluster); the workers (the
        scheduler's view: address -> its information)."""
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
            return self._workers()
        except ClusterError:
            raise
        except (OSError, TimeoutError, ValueError) as exc:
            self._close()
            raise ClusterError(f"cannot reach the cluster at {self.target}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - whatever else Dask raises: a message, not a traceback
            self._close()
            raise ClusterError(f"cannot use the cluster at {self.target}: "
                               f"{type(exc).__name__}: {exc}") from None

    def _start_local(self) -> Client:
        """``local:N``, started afresh up to :data:`LOCAL_STARTS` times when
        a worker process is lost while it starts (each retry said)."""
        start = 1
        while True:
            try:
                return self._start_local_once()
            except Exception as exc:  # noqa: BLE001 - Dask's error for a worker lost at start varies
                self._close()
                why = f"{type(exc).__name__}: {exc}"
                if start == LOCAL_STARTS:
                    raise ClusterError(f"the local cluster {self.target} failed to start "
                                       f"{LOCAL_STARTS} times (a worker process lost while it "
                                       f"started?); the last: {why}") from None
            start += 1
            trio.from_thread.run_sync(self._say, (
                f"cluster {self.target}: a worker was lost while the cluster started ({why}); "
                f"starting it again ({start} of {LOCAL_STARTS})"))

    def _start_local_once(self) -> Client:
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
        self._client = Client(self._cluster, set_as_default=False)
        self._client.register_plugin(ArbiterPlugin(
            {e.name: e for e in self.config.engines if e.name},
            "the coordinator's engines (local cluster)", self.config.log_dir, ignore_interrupt=True))
        return self._client

    def _close(self) -> int:
        """In a thread: stop the pairs in flight, close; how many games the
        stopped pairs had finished (dropped: the pair was abandoned).  Raises
        nothing: a cluster that fails while closing has nothing left to stop."""
        client, futures = self._client, list(self._in_flight)
        late = 0
        try:
            if client is not None:
                Event(self.stop_name, client=client).set()
                if futures:
                    # waited for: the batches a worker holds (a batch no worker took,
                    # e.g. for want of slots, has no engine to end)
                    placed = {key for keys in client.processing().values() for key in keys}
                    held = [f for f in futures if f.key in placed]
                    deadline = time.monotonic() + STOP_WAIT
                    while not all(f.done() for f in held) and time.monotonic() < deadline:
                        time.sleep(STOP_LOOK)
                    late = sum(_games_in(future) for future in futures if future.status == "finished")
                    client.cancel(futures)  # a local cluster's workers end below, with theirs
        except Exception:  # noqa: BLE001 - the scheduler gone or failing: nothing to stop there
            pass
        finally:
            if self._results is not None:
                self._results.close()
                self._results = None
            self._in_flight.clear()
            self._client, cluster, self._cluster = None, self._cluster, None
            for closing in (client, cluster):
                if closing is not None:
                    with contextlib.suppress(Exception):  # each closed whatever the other did
                        closing.close()
        return late

    # -- the workers -------------------------------------------------------------

    def _workers(self) -> dict[str, Any]:
        """In a thread: the scheduler's workers (address -> information)."""
        client = self._client
        return dict(client.scheduler_info().get("workers", {})) if client is not None else {}

    def _say(self, text: str) -> None:
        if self._observer is not None:
            self._observer.message(text)

    def _tell(self, workers: dict[str, Any]) -> None:
        """Say :data:`NO_SLOTS` of each worker of ``workers`` not yet told,
        and :data:`NO_WORKER` if none of them can play (once until one can)."""
        able = False
        for address, info in workers.items():
            resources = info.get("resources") if isinstance(info, dict) else None
            if (resources or {}).get(SLOTS):
                able = True
            elif address not in self._told:
                self._told.add(address)
                self._say(NO_SLOTS.format(worker=address))
        if not able and not self._none_told:
            self._say(NO_WORKER)
        self._none_told = not able

    async def _look(self) -> None:
        """A batch has waited :data:`WORKER_LOOK`: the workers looked at
        (at most once per that time) for any that can play no game."""
        now = trio.current_time()
        if now - self._looked < WORKER_LOOK:
            return
        self._looked = now
        try:
            workers = await trio.to_thread.run_sync(self._workers)
        except Exception:  # noqa: BLE001 - the scheduler unreachable now: looked at again later
            return
        self._tell(workers)

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
        while not done.event.is_set():
            with trio.move_on_after(WORKER_LOOK):
                await done.event.wait()
            if not done.event.is_set():
                await self._look()
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
