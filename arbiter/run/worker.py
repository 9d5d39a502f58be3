"""A worker process of a run: ``python -m arbiter.run.worker``
(``specs/tournament.md`` §Worker processes).

Started by :class:`arbiter.run.processes.ProcessPlayer` with pipes for its
standard streams, in a session of its own (the terminal's Ctrl-C is the
run's to handle) and with the parent-death signal (it cannot outlive the
run).  It reads frames (:mod:`arbiter.run.frames`) from its input, plays the
batches it is given with a :class:`~arbiter.run.gameloop.GameLoop` (the same
game loop as a run playing in its own process) and writes each game, event
and engine build as it happens.  ``stop``, or the end of its input, ends its
games and engines and then the process.  It never opens the database.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import trio

from arbiter.cluster.task import result_game
from arbiter.engine import Engine, EngineConfig, EngineTimeouts
from arbiter.live import LIVE_INTERVAL
from arbiter.record import GameRecord
from arbiter.schedule import ScheduledGame

from . import frames
from .gameloop import GameLoop, Match, MatchSettings
from .player import LivePly

__all__ = ["main"]

#: Bytes read from the run's pipe at once.
READ_SIZE = 65536


class _Worker:
    def __init__(self, output: trio.lowlevel.FdStream, number: int):
        self.output = output
        self.number = number
        self.lock = trio.Lock()
        self.live: dict[str, list[LivePly]] = {}
        self.drained = False  # no further pair
        self.stopping = False  # no further game
        self.builds: set[str] = set()

    async def send(self, kind: str, **fields: Any) -> None:
        data = frames.encode(kind, **fields)
        with trio.CancelScope(shield=True):  # a frame is written whole or not begun
            async with self.lock:
                await self.output.send_all(data)

    async def flush_live(self) -> None:
        """The plies of games in progress, every :data:`LIVE_INTERVAL`."""
        while True:
            await trio.sleep(LIVE_INTERVAL)
            if self.live:
                plies, self.live = self.live, {}
                await self.send("live", plies=plies)


class _Report:
    """A batch's reports, written to the run as frames."""

    def __init__(self, worker: _Worker, batch: int):
        self.worker = worker
        self.batch = batch

    async def started(self, game: ScheduledGame) -> Callable[[LivePly], None]:
        key, live = game.key, self.worker.live
        live.pop(key, None)  # a game tried again after a failed handshake starts over
        await self.worker.send("started", batch=self.batch, key=key)
        return lambda ply: live.setdefault(key, []).append(ply)

    async def finished(self, game: ScheduledGame, record: GameRecord) -> None:
        self.worker.live.pop(game.key, None)
        await self.worker.send("game", batch=self.batch, **result_game(game.key, record))

    async def event(self, kind: str, detail: str, engine: str | None, key: str | None) -> None:
        await self.worker.send("event", batch=self.batch, event=kind, detail=detail, engine=engine,
                               key=key)

    async def build(self, name: str, engine: Engine) -> None:
        if name not in self.worker.builds:
            self.worker.builds.add(name)
            await self.worker.send("build", name=name, id_name=engine.id_name, author=engine.author)


async def _play(worker: _Worker, loop: GameLoop, match: Match, number: int,
                pairs: list[list[ScheduledGame]]) -> None:
    async def drained() -> bool:
        return worker.drained

    failure, skipped = await loop.play(match, pairs, _Report(worker, number), drained,
                                       lambda: worker.stopping)
    await worker.send("done", batch=number, failure=failure, skipped=[g.key for g in skipped])


async def _main() -> None:
    output = trio.lowlevel.FdStream(os.dup(1))
    source = trio.lowlevel.FdStream(os.dup(0))
    os.dup2(2, 1)  # whatever else writes to stdout (a library's print) goes to stderr, not into a frame
    reader = frames.FrameReader(frames.KINDS_TO_WORKER)
    queued: list[dict[str, Any]] = []  # frames read and not handled yet
    hello = await _next(source, reader, queued)
    if hello is None or hello["kind"] != "hello":
        return
    worker = _Worker(output, int(hello.get("number", 0)))
    timeouts = EngineTimeouts(**hello["timeouts"]) if hello.get("timeouts") else None
    match = Match(MatchSettings.from_dict(hello["settings"]),
                  {name: EngineConfig(**values) for name, values in hello["engines"].items()})
    loop = GameLoop(slots=int(hello["slots"]), timeouts=timeouts, log_dir=hello.get("log_dir"),
                    where=f" (on worker {worker.number})")
    async with loop.running(), trio.open_nursery() as nursery:
        nursery.start_soon(worker.flush_live)
        await worker.send("ready", pid=os.getpid())
        while (frame := await _next(source, reader, queued)) is not None and frame["kind"] != "stop":
            if frame["kind"] == "play":
                pairs = [[ScheduledGame.from_dict(g) for g in pair] for pair in frame["pairs"]]
                nursery.start_soon(_play, worker, loop, match, int(frame["batch"]), pairs)
            elif frame["kind"] == "drain":
                worker.drained = True
                worker.stopping = worker.stopping or bool(frame.get("games"))
        nursery.cancel_scope.cancel()


async def _next(source: trio.lowlevel.FdStream, reader: frames.FrameReader,
                queued: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The next frame from the run; None at the end of the input."""
    while not queued:
        data = await source.receive_some(READ_SIZE)
        if not data:
            return None
        queued.extend(reader.feed(data))
    return queued.pop(0)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run's to handle: it sends stop
    try:
        trio.run(_main)
    except frames.FrameError as exc:
        print(f"arbiter worker: a broken pipe from the run: {exc}", file=sys.stderr)
        sys.exit(2)
    except (BrokenPipeError, trio.BrokenResourceError, trio.ClosedResourceError):
        sys.exit(0)  # the run is gone: nothing to tell


if __name__ == "__main__":
    main()
