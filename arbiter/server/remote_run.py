"""Remote participants of a tournament or a match (``-e remote:NAME``
with ``--listen HOST:PORT``, ``specs/wire.md`` §Remote participants).

:func:`run_with_remotes` listens while a run plays: it waits (bounded:
``--wait-engines``) for every remote engine to connect with a token of the
database and the name NAME, then runs the tournament; :class:`RemoteEngines`
is the tournament's source of engines: a ``remote:NAME`` config is the
connected engine of that name (its connection held by the listener), every
other config a local process (:func:`arbiter.engine.open_engine`).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import TypeVar

import trio

from arbiter.engine import Engine, EngineConfig, EngineStartError, EngineTimeouts, open_engine
from arbiter.enginespec import DEFAULT_WAIT_ENGINES, REMOTE_PREFIX
from arbiter.tokens import TokenStore

from .listener import Listener, Log, Registry, Remote, fault_reason

__all__ = ["REMOTE_PREFIX", "DEFAULT_WAIT_ENGINES", "RemoteWaitError", "RemoteEngines",
           "remote_name", "run_with_remotes"]


T = TypeVar("T")


class RemoteWaitError(Exception):
    """Remote engines did not connect in time; the message names them."""


def remote_name(config: EngineConfig) -> str | None:
    """NAME of a ``remote:NAME`` config, None for a local engine."""
    return config.cmd[len(REMOTE_PREFIX):] if config.cmd.startswith(REMOTE_PREFIX) else None


class RemoteEngines:
    """Engines for a run (an :class:`arbiter.run.gameloop.EngineSource`):
    remote ones from ``registry``, local ones started."""

    def __init__(self, registry: Registry, wait: float):
        self.registry = registry
        self.wait = wait

    def open(self, config: EngineConfig, *, timeouts: EngineTimeouts | None = None,
             log_dir: str | None = None) -> AbstractAsyncContextManager[Engine]:
        """The engine of ``config`` for as long as the context lasts."""
        name = remote_name(config)
        if name is None:
            return open_engine(config, timeouts=timeouts, log_dir=log_dir)
        return self._remote(name)

    def exclusive(self, config: EngineConfig) -> bool:
        """A remote engine is one connection: one game at a time."""
        return remote_name(config) is not None

    @asynccontextmanager
    async def _remote(self, name: str) -> AsyncIterator[Engine]:
        remote = await self._connected(name)
        remote.busy = True
        try:
            yield remote.engine
        finally:
            remote.busy = False
            remote.idle_since = trio.current_time()
            if remote.transport.detached:
                remote.release()  # its client is gone: a fresh connection is waited for
            elif not remote.engine.healthy:  # its fault: its client reconnects a fresh engine
                remote.release(fault_reason(remote.engine))
            self.registry.changed()

    async def _connected(self, name: str) -> Remote:
        """The free connected engine ``name``, waited for within :attr:`wait`."""
        with trio.move_on_after(self.wait):
            while True:
                for remote in self.registry.idle():
                    if remote.name == name:
                        return remote
                await self.registry.wait_change()
        raise EngineStartError(f"{REMOTE_PREFIX}{name}",
                               f"not connected within {self.wait:g} s")


async def run_with_remotes(run: Callable[[RemoteEngines], Awaitable[T]], *, db: str, host: str,
                           port: int, names: list[str], wait: float, log: Log,
                           tls: ssl.SSLContext | None = None) -> T:
    """Listen on ``host``:``port``, wait up to ``wait`` seconds for the
    engines ``names`` to connect (:class:`RemoteWaitError` naming those
    missing), then ``run(engines)``; the listener stops with the run."""
    with TokenStore(db) as tokens:
        registry = Registry()
        listener = Listener(tokens, registry, log=log)
        async with trio.open_nursery() as nursery:
            listeners = await trio.open_tcp_listeners(port, host=host)
            log(f"listening on {host}:{listeners[0].socket.getsockname()[1]}")
            served: list[trio.abc.Listener[trio.abc.Stream]] = list(listeners)
            if tls is not None:
                served = [trio.SSLListener(one, tls, https_compatible=False) for one in listeners]
            nursery.start_soon(partial(trio.serve_listeners, listener.handle, served))
            with trio.move_on_after(wait):
                while missing := sorted(set(names) - {r.name for r in registry.idle()}):
                    await registry.wait_change()
            if not missing:
                result = await run(RemoteEngines(registry, wait))
            nursery.cancel_scope.cancel()
    if missing:
        raise RemoteWaitError(f"--wait-engines {wait:g}: not connected in time: "
                              + ", ".join(f"{REMOTE_PREFIX}{n}" for n in missing))
    return result
