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

An update is a set of *sections* (the parts of a page that change, each an
event of its own, encoded once for all viewers); only the sections that
changed since the topic's last update are handed over (between two stored
games, a tournament page's standings do not move, its games in progress
do).  A viewer (:class:`Viewer`, one per open event stream) holds at most
one pending event per section: a newer one replaces it, so a viewer that
is slow to read loses only states it would have overwritten, and still
gets every section's newest.  Handing an update over never waits: a slow
or gone viewer slows nobody, not the feed, not another viewer, not a run.
"""

from __future__ import annotations

import math
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

#: pending events one viewer holds per section: each is that section's
#: whole state, so only the newest matters; the older is dropped when a
#: viewer does not keep up (the buffer is bounded by the page's sections)
VIEWER_BUFFER = 1

#: seconds between two sends to one viewer at least: what changed meanwhile
#: waits in its buffer (newest per section), so a page of four fast games
#: costs each viewer at most two sends a second however fast the plies come
VIEWER_INTERVAL = 0.5

#: viewers at once, over all topics: each holds a connection and a buffer;
#: past it a new event stream is refused (503) rather than memory grown
MAX_VIEWERS = 1000

#: an update: each section's event text by the section's name
Update = dict[str, str]
Render = Callable[[Hashable], "Update | None"]


class Viewer:
    """One open event stream: its pending events (one per section) and a wake-up."""

    def __init__(self) -> None:
        self.pending: Update = {}
        self._wake = anyio.Event()
        self.dropped = 0

    def put(self, update: Update) -> None:
        """Hand over an update; never waits (a section's older pending event is dropped)."""
        for name, event in update.items():
            if name in self.pending:
                self.dropped += 1
            self.pending[name] = event
        if update:
            self._wake.set()

    async def next(self) -> str:
        """The pending events, as one piece of the stream, waiting for some."""
        while not self.pending:
            await self._wake.wait()
            self._wake = anyio.Event()
        text = "".join(self.pending.values())
        self.pending = {}
        return text


class Feed:
    """The one watcher of a database and its viewers, by topic.

    ``version()`` is the database's change counter (run in a thread),
    ``render(topic)`` the text of one update of ``topic`` (run in a thread;
    None: the topic is gone, its viewers get nothing more)."""

    def __init__(self, version: Callable[[], int], render: Render):
        self._version = version
        self._render = render
        self.topics: dict[Hashable, set[Viewer]] = {}
        #: the last full update of each topic with viewers (a new viewer starts with it)
        self._last: dict[Hashable, Update] = {}
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
            update = await anyio.to_thread.run_sync(self._render, topic)
            self.renders += 1
            viewers = self.topics.get(topic)
            if update is None or not viewers:
                continue
            last = self._last.get(topic, {})
            changed = {name: event for name, event in update.items() if last.get(name) != event}
            self._last[topic] = update
            for viewer in viewers:
                viewer.put(changed)

    def full(self) -> bool:
        return self.viewers >= MAX_VIEWERS

    async def current(self, topic: Hashable) -> Update | None:
        """``topic``'s state now: its last update while it has viewers, else
        rendered (in a worker thread); None when there is no such topic (an
        event stream of it is not found)."""
        first = self._last.get(topic)
        if first is None:
            first = await anyio.to_thread.run_sync(self._render, topic)
        return first

    async def watch(self, topic: Hashable, first: Update) -> AsyncGenerator[str, None]:
        """The updates of ``topic`` for one viewer, starting with ``first``
        (:meth:`current`)."""
        viewer = Viewer()
        self._last.setdefault(topic, first)
        self.topics.setdefault(topic, set()).add(viewer)
        try:
            viewer.put(first)
            while True:
                yield await viewer.next()
                await anyio.sleep(VIEWER_INTERVAL)
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


__all__ = ["HEARTBEAT", "MAX_VIEWERS", "POLL_INTERVAL", "VIEWER_BUFFER", "VIEWER_INTERVAL", "Feed",
           "Viewer", "event_text"]
