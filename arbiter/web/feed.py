"""Live updates: one watcher per database, fanned out to every viewer
(``specs/web.md`` §Live updates).

:class:`Feed` runs one task for the whole application (started by the
application's lifespan): every :data:`POLL_INTERVAL` seconds it asks the
database whether anything was committed since (``PRAGMA data_version``, in
a worker thread: a query never runs on the event loop, which may be the one
timing a server's engines).  When something was, or every
:data:`HEARTBEAT` seconds anyway (a killed run, the ETA), it renders each
*topic* that has viewers (a tournament page, a game in progress) ONCE, in a
worker thread, and hands the text to each of the topic's viewers.

A viewer (:class:`Viewer`, one per open event stream) holds at most
:data:`VIEWER_BUFFER` updates: every update is the whole state of its
sections, so a viewer that is slow to read loses only updates it would
have overwritten.  Handing an update over never waits: a slow or gone
viewer slows nobody, not the feed, not another viewer, not a run.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncGenerator, Callable, Hashable
from typing import Any

import anyio
import anyio.to_thread

#: seconds between two looks at the database: a viewer sees a change about
#: this late (the run writes games in progress every LIVE_INTERVAL, 0.25 s)
POLL_INTERVAL = 0.25

#: seconds after which each topic is rendered again even if nothing was
#: committed (a run killed meanwhile shows as killed, the ETA moves); also
#: the event stream's keep-alive
HEARTBEAT = 5.0

#: updates one viewer holds: each is the full state, so only the newest
#: matters; the older is dropped when a viewer does not keep up
VIEWER_BUFFER = 1

#: viewers at once, over all topics: each holds a connection and a buffer;
#: past it a new event stream is refused (503) rather than memory grown
MAX_VIEWERS = 1000

Render = Callable[[Hashable], "str | None"]


class Viewer:
    """One open event stream: a bounded buffer and a wake-up."""

    def __init__(self) -> None:
        self.buffer: deque[str] = deque(maxlen=VIEWER_BUFFER)
        self._wake = anyio.Event()
        self.dropped = 0

    def put(self, event: str) -> None:
        """Hand over an update; never waits (the oldest is dropped when full)."""
        if len(self.buffer) == self.buffer.maxlen:
            self.dropped += 1
        self.buffer.append(event)
        self._wake.set()

    async def next(self) -> str:
        """The next update, waiting for one."""
        while not self.buffer:
            await self._wake.wait()
            self._wake = anyio.Event()
        return self.buffer.popleft()


class Feed:
    """The one watcher of a database and its viewers, by topic.

    ``version()`` is the database's change counter (run in a thread),
    ``render(topic)`` the text of one update of ``topic`` (run in a thread;
    None: the topic is gone, its viewers get nothing more)."""

    def __init__(self, version: Callable[[], int], render: Render):
        self._version = version
        self._render = render
        self.topics: dict[Hashable, set[Viewer]] = {}
        #: the last update of each topic with viewers (a new viewer starts with it)
        self._last: dict[Hashable, str] = {}
        self.renders = 0  # topics rendered (for the benchmark)

    @property
    def viewers(self) -> int:
        return sum(len(v) for v in self.topics.values())

    async def run(self) -> None:
        """Watch until cancelled."""
        seen: int | None = None
        rendered_at = -math.inf
        while True:
            await anyio.sleep(POLL_INTERVAL)
            if not self.topics:
                continue
            version = await anyio.to_thread.run_sync(self._version)
            now = anyio.current_time()
            if version != seen or now - rendered_at >= HEARTBEAT:
                seen, rendered_at = version, now
                await self._publish()

    async def _publish(self) -> None:
        for topic in list(self.topics):
            event = await anyio.to_thread.run_sync(self._render, topic)
            self.renders += 1
            viewers = self.topics.get(topic)
            if event is None or not viewers:
                continue
            self._last[topic] = event
            for viewer in viewers:
                viewer.put(event)

    def full(self) -> bool:
        return self.viewers >= MAX_VIEWERS

    async def watch(self, topic: Hashable) -> AsyncGenerator[str, None]:
        """The updates of ``topic`` for one viewer, the current state first."""
        viewer = Viewer()
        first = self._last.get(topic)
        if first is None:
            first = await anyio.to_thread.run_sync(self._render, topic)
        self.topics.setdefault(topic, set()).add(viewer)
        try:
            if first is not None:
                viewer.put(first)
            while True:
                yield await viewer.next()
        finally:
            viewers = self.topics.get(topic)
            if viewers is not None:
                viewers.discard(viewer)
                if not viewers:
                    del self.topics[topic]
                    self._last.pop(topic, None)


def event_text(name: str, data: Any) -> str:
    """One server-sent event: ``event: NAME`` and its JSON ``data`` line
    (JSON has no newline of its own, so one line holds it)."""
    import json

    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


__all__ = ["HEARTBEAT", "MAX_VIEWERS", "POLL_INTERVAL", "VIEWER_BUFFER", "Feed", "Viewer", "event_text"]
