"""A reconnected client's engine restart (``specs/wire.md`` §Disconnect and
resume): what :class:`~arbiter.engine.socket_transport.SocketTransport`
says to the fresh engine behind a resumed connection before the match's
lines flow again.

The lines are the transport's, not the conversation's: ``resume``, then
``ugi`` answered, the options set and ``uginewgame`` told again (what
:class:`~arbiter.engine.remote_session.RemoteSession` remembers), ``isready``
answered; then the conversation's own ``isready`` if it waits for a
``readyok`` (a drop at a game's start: the fresh engine's answer is the one
it waits for), and the search in progress replayed with the time away
taken off the mover's clock.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from arbiter.engine.remote_session import RemoteSession
from protocol import wire

__all__ = ["Restart", "RESUME_HANDSHAKE_TIMEOUT"]

#: how long a reconnected client has to restart its engine (``ugi`` to
#: ``ugiok``, ``isready`` to ``readyok``) before the replayed ``go`` (seconds)
RESUME_HANDSHAKE_TIMEOUT = wire.HANDSHAKE_TIMEOUT


class Restart:
    """One restart: :meth:`run` queues its frames with ``queue`` and waits
    for the answers, which the transport hands to :meth:`heard` (every line
    of the engine while the restart runs)."""

    def __init__(self, state: RemoteSession, session: str, queue: Callable[..., None]):
        self._state = state
        self._session = session
        self._queue = queue
        self._lines: list[str] = []
        self._heard = trio.Event()

    def heard(self, lines: list[str]) -> None:
        """Lines of the fresh engine (answers to the restart's questions)."""
        self._lines += lines
        self._heard.set()

    async def run(self) -> bool:
        """The restart; False when the engine did not answer ``ugiok`` and
        ``readyok`` within :data:`RESUME_HANDSHAKE_TIMEOUT` (nothing more is
        queued then: the connection is to end)."""
        state = self._state
        self._queue(wire.Resume(f"{self._session}-{state.games}"[:wire.MAX_ID_CHARS], state.moves))
        with trio.move_on_after(RESUME_HANDSHAKE_TIMEOUT) as scope:
            await self._exchange("ugi", "ugiok")
            setup = state.setup_lines()
            if setup:
                self._queue(*wire.lines_frames(setup))
            await self._exchange("isready", "readyok")
        if scope.cancelled_caught:
            return False
        if state.ready_asked:  # the conversation's isready (a game's start): its readyok is the engine's
            self._queue(wire.Lines(["isready"]))
        search = state.replayed_search(trio.current_time())
        if search:
            self._queue(*wire.lines_frames(search))
        return True

    async def _exchange(self, ask: str, answer: str) -> None:
        self._lines = []
        self._heard = trio.Event()
        self._queue(wire.Lines([ask]))
        while answer not in self._lines:
            await self._heard.wait()
            self._heard = trio.Event()
