"""The player that plays in local worker processes (``--workers N``,
``specs/tournament.md`` §Worker processes).

One event loop carries a few thousand plies a second; past that its own
delay is charged to the engines' clocks.  :class:`ProcessPlayer` spreads a
run's slots over N worker processes (:mod:`arbiter.run.worker`), each one
running the same game loop as a run in its own process, so the run's process
(the coordinator) only takes, stores and counts.

Each worker gets at most ``ceil(concurrency / N)`` batches at once; a batch
goes to the live worker with the fewest in flight.  A worker that is lost
(killed, crashed) hands its unfinished games back to the coordinator, which
plays them again elsewhere, and a new worker takes its place (at most
:data:`RESPAWNS_PER_WORKER` times per worker the run asked for).  Ending the
session (the run's end, Ctrl-C, an abort) tells every worker to stop, waits
:data:`STOP_WAIT` for them to end their engines, then kills what is left.
"""

from __future__ import annotations

import math
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import trio

from arbiter.cluster.task import read_record
from arbiter.engine import EngineTimeouts
from arbiter.schedule import ScheduledGame

from . import frames
from .gameloop import MatchSettings
from .player import BatchEnd, PlayerError, Reporter
from .worker import READ_SIZE

__all__ = ["ProcessPlayer", "STOP_WAIT", "RESPAWNS_PER_WORKER", "START_TIMEOUT", "STDERR_TAIL"]

#: Seconds the session's end waits for the workers to end their engines
#: (each engine gets its quit, SIGTERM and SIGKILL graces: a few seconds)
#: before it kills them (their engines die with them: parent-death signal).
STOP_WAIT = 10.0
#: Seconds a new worker may take to say it is ready (an interpreter and the
#: arbiter's imports: under a second on an idle machine, several on a loaded
#: one); past this it is deemed broken.
START_TIMEOUT = 60.0
#: Workers that may be lost, per worker asked for, before the run aborts:
#: one lost worker is replaced at once; a machine that kills them again and
#: again (memory, a broken install) should stop the run, not loop.
RESPAWNS_PER_WORKER = 3
#: Bytes of a lost worker's standard error kept for its message (the end of
#: a Python traceback, a "Killed").
STDERR_TAIL = 4096


#: Where the ``arbiter`` package lives: first on a worker's ``PYTHONPATH``, so
#: that it runs this run's code (a source tree's, or the installed one).
_ROOT = str(Path(__file__).resolve().parent.parent.parent)


class _Batch:
    def __init__(self, number: int, pairs: list[list[ScheduledGame]]):
        self.number = number
        self.games = {g.key: g for pair in pairs for g in pair}
        self.done: set[str] = set()
        self.ended = trio.Event()
        self.end = BatchEnd()


class _Worker:
    """One worker process and the batches it plays."""

    def __init__(self, number: int, process: trio.Process):
        self.number = number
        self.process = process
        self.batches: dict[int, _Batch] = {}
        self.ready = trio.Event()
        self.lost = False
        self.stderr = bytearray()
        self._sending = trio.Lock()

    @property
    def label(self) -> str:
        return f"worker {self.number} (pid {self.process.pid})"

    async def send(self, data: bytes) -> None:
        """One frame, written whole (a frame cut by a cancel would break
        every frame after it) and one at a time."""
        assert self.process.stdin is not None
        with trio.CancelScope(shield=True):
            async with self._sending:
                await self.process.stdin.send_all(data)


class ProcessPlayer:
    """Plays a run's batches in ``workers`` local worker processes."""

    max_batch = 1
    plays_here = False

    def __init__(self, config: Any, workers: int, *, timeouts: EngineTimeouts | None = None):
        self.config = config
        self.slots = max(1, config.concurrency)
        self.workers = max(1, min(workers, self.slots))
        self.per_worker = math.ceil(self.slots / self.workers)
        self.timeouts = timeouts
        self._live: list[_Worker] = []
        self._numbers = iter(range(1, 1 << 30))
        self._batches = iter(range(1, 1 << 62))
        self._respawns = RESPAWNS_PER_WORKER * self.workers
        self._changed = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._reporter: Reporter | None = None
        self._closing = False
        self._drained = False
        self._stopping = False
        self._failure: str | None = None

    def describe(self) -> str:
        return f"{self.workers} worker process(es), {self.per_worker} game(s) at once each"

    # -- the session --------------------------------------------------------------

    @asynccontextmanager
    async def session(self, reporter: Reporter) -> AsyncIterator[None]:
        self._reporter = reporter
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            try:
                for _ in range(self.workers):
                    await self._spawn()
                yield
            finally:
                with trio.CancelScope(shield=True):
                    await self._stop_all()
                nursery.cancel_scope.cancel()

    def _hello(self, number: int) -> bytes:
        config = self.config
        return frames.encode(
            "hello", number=number, settings=MatchSettings.of(config).to_dict(),
            engines={e.name: e.to_dict() for e in config.engines}, slots=self.per_worker,
            log_dir=config.log_dir, timeouts=None if self.timeouts is None else asdict(self.timeouts))

    async def _spawn(self) -> _Worker:
        from arbiter.engine.spawner import Spawner

        assert self._nursery is not None
        number = next(self._numbers)
        env = dict(os.environ)
        env["PYTHONPATH"] = _ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        try:
            process = await Spawner.open([sys.executable, "-m", "arbiter.run.worker"], None, env)
        except OSError as exc:
            raise PlayerError(f"cannot start a worker process: {exc}") from None
        worker = _Worker(number, process)
        self._live.append(worker)
        await worker.send(self._hello(number))
        if self._drained:
            await worker.send(self._drain_frame())
        self._nursery.start_soon(self._read, worker)
        self._nursery.start_soon(self._read_stderr, worker)
        return worker

    async def _stop_all(self) -> None:
        self._closing = True
        for worker in list(self._live):
            try:
                await worker.send(frames.encode("stop"))
                assert worker.process.stdin is not None
                await worker.process.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
        with trio.move_on_after(STOP_WAIT):
            for worker in list(self._live):
                await worker.process.wait()
        for worker in list(self._live):
            if worker.process.returncode is None:
                worker.process.kill()
                await worker.process.wait()

    # -- batches ---------------------------------------------------------------------

    def drain(self, games: bool = False) -> None:
        if self._drained and (self._stopping or not games):
            return
        self._drained = True
        self._stopping = self._stopping or games
        if self._nursery is not None:
            for worker in self._live:
                self._nursery.start_soon(self._send_quietly, worker, self._drain_frame())

    def _drain_frame(self) -> bytes:
        return frames.encode("drain", games=self._stopping)

    async def _send_quietly(self, worker: _Worker, data: bytes) -> None:
        try:
            await worker.send(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass  # a lost worker: its reader hands its games back

    async def _free_worker(self) -> _Worker:
        while True:
            if self._failure is not None:
                raise PlayerError(self._failure)
            free = [w for w in self._live if not w.lost and len(w.batches) < self.per_worker]
            if free:
                return min(free, key=lambda w: len(w.batches))
            await self._changed.wait()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def play(self, pairs: list[list[ScheduledGame]], reporter: Reporter) -> BatchEnd:
        worker = await self._free_worker()
        batch = _Batch(next(self._batches), pairs)
        worker.batches[batch.number] = batch
        data = frames.encode("play", batch=batch.number,
                             pairs=[[g.to_dict() for g in pair] for pair in pairs])
        await self._send_quietly(worker, data)
        await batch.ended.wait()
        return batch.end

    # -- what a worker says -----------------------------------------------------------

    async def _read(self, worker: _Worker) -> None:
        """The worker's frames, until its output ends: then it is lost."""
        assert worker.process.stdout is not None and self._reporter is not None
        reader = frames.FrameReader(frames.KINDS_FROM_WORKER)
        problem = None
        try:
            with trio.move_on_after(START_TIMEOUT) as waiting:
                while not worker.ready.is_set():
                    if not await self._receive(worker, reader):
                        break
            if waiting.cancelled_caught:
                problem = f"not ready within {START_TIMEOUT:g} s"
            else:
                while await self._receive(worker, reader):
                    pass
        except frames.FrameError as exc:
            problem = f"it wrote something that is not a frame: {exc}"
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        await self._lost(worker, problem)

    async def _receive(self, worker: _Worker, reader: frames.FrameReader) -> bool:
        assert worker.process.stdout is not None and self._reporter is not None
        data = await worker.process.stdout.receive_some(READ_SIZE)
        if not data:
            return False
        games: list[tuple[ScheduledGame, Any]] = []
        for frame in reader.feed(data):
            if frame["kind"] == "game":
                found = self._game(worker, frame)
                if found is not None:
                    games.append(found)
                continue
            if games:  # games first, in the order they came
                await self._store(worker, games)
                games = []
            await self._frame(worker, frame)
        if games:
            await self._store(worker, games)
        return True

    def _game(self, worker: _Worker, frame: dict[str, Any]) -> tuple[ScheduledGame, Any] | None:
        batch = worker.batches.get(frame.get("batch"))  # type: ignore[arg-type]
        key = frame.get("key")
        game = None if batch is None else batch.games.get(key)  # type: ignore[arg-type]
        if batch is None or game is None or key in batch.done:
            raise frames.FrameError(f"a game {key!r} it was not asked for")
        try:
            record = read_record(frame["record"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise frames.FrameError(f"game {key}: not a game record ({exc!r})") from None
        if (record.white, record.black) != (game.white, game.black):
            raise frames.FrameError(f"game {key}: played by {record.white} and {record.black}, "
                                    f"scheduled for {game.white} and {game.black}")
        batch.done.add(game.key)
        return game, record

    async def _store(self, worker: _Worker, games: list[tuple[ScheduledGame, Any]]) -> None:
        assert self._reporter is not None
        await self._reporter.finished(games)

    async def _frame(self, worker: _Worker, frame: dict[str, Any]) -> None:
        reporter = self._reporter
        assert reporter is not None
        kind = frame["kind"]
        if kind == "ready":
            worker.ready.set()
            self._wake()
        elif kind == "live":
            for key, plies in (frame.get("plies") or {}).items():
                reporter.moved(str(key), plies)
        elif kind == "started":
            batch = worker.batches.get(frame.get("batch"))  # type: ignore[arg-type]
            game = None if batch is None else batch.games.get(frame.get("key"))  # type: ignore[arg-type]
            if game is not None:
                reporter.started(game)
        elif kind == "event":
            await reporter.event(str(frame["event"]), str(frame["detail"]), frame.get("engine"),
                                 frame.get("key"))
        elif kind == "build":
            await reporter.build(str(frame["name"]), frame.get("id_name"), frame.get("author"))
        elif kind == "done":
            batch = worker.batches.pop(frame.get("batch"), None)  # type: ignore[arg-type]
            if batch is not None:
                skipped = set(frame.get("skipped") or ())
                batch.end.failure = frame.get("failure")
                batch.end.skipped = [g for k, g in batch.games.items() if k in skipped]
                missing = [g for k, g in batch.games.items() if k not in batch.done and k not in skipped]
                if missing and batch.end.failure is None:
                    batch.end.returned = missing  # not played: played again elsewhere
                batch.ended.set()
                self._wake()

    async def _read_stderr(self, worker: _Worker) -> None:
        """The worker's standard error, its last :data:`STDERR_TAIL` bytes kept."""
        assert worker.process.stderr is not None
        try:
            while data := await worker.process.stderr.receive_some(READ_SIZE):
                worker.stderr += data
                del worker.stderr[:-STDERR_TAIL]
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass

    async def _lost(self, worker: _Worker, problem: str | None) -> None:
        """The worker's output ended: its batches' unfinished games go back
        to the coordinator, and (unless the session ends) another worker
        takes its place."""
        worker.lost = True
        if problem is not None and worker.process.returncode is None:
            worker.process.kill()
        with trio.move_on_after(STOP_WAIT):
            await worker.process.wait()
        if worker in self._live:
            self._live.remove(worker)
        returned = 0
        for batch in worker.batches.values():
            batch.end.returned = [g for k, g in batch.games.items() if k not in batch.done]
            returned += len(batch.end.returned)
            batch.ended.set()
        worker.batches.clear()
        self._wake()
        if self._closing:
            return
        why = problem or _exit_text(worker.process.returncode)
        tail = bytes(worker.stderr).decode("utf-8", "replace").strip().splitlines()[-3:]
        assert self._reporter is not None
        self._reporter.message(f"{worker.label} was lost ({why})"
                               + (f": {' / '.join(tail)}" if tail else "")
                               + (f"; its {returned} game(s) in progress are played again" if returned else ""))
        if self._respawns <= 0:
            self._failure = (f"worker processes keep being lost ({RESPAWNS_PER_WORKER * self.workers} "
                             f"lost, the last {why}); the games stored are kept")
            self._wake()
            return
        self._respawns -= 1
        try:
            await self._spawn()
        except PlayerError as exc:
            self._failure = str(exc)
            self._wake()


def _exit_text(status: int | None) -> str:
    if status is None:
        return "still running"
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"
