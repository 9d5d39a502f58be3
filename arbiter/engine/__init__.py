"""Engines, seen from the arbiter (trio): a process, a transport, a conversation.

* :mod:`~arbiter.engine.process`: :class:`EngineProcess`, one engine process
  and its process group (spawn, stderr drain, exit watch, group shutdown),
  and its :class:`IOLog`;
* :mod:`~arbiter.engine.transport`: what the conversation needs of a
  connection (:class:`~arbiter.engine.transport.Transport`), and
  :class:`~arbiter.engine.transport.PipeTransport` over a process's pipes;
* :mod:`~arbiter.engine.conversation`: :class:`Engine`, the protocol
  conversation (handshake, options, new game, ``position``/``go``, ``stop``,
  ``isready``, faults), written once over any transport;
* :mod:`~arbiter.engine.info`: the ``bestmove`` :class:`Reply` and the
  bounded, lazily parsed ``info`` of a search;
* :mod:`~arbiter.engine.config` and :mod:`~arbiter.engine.errors`: how to run
  an engine, its deadlines, start errors and faults.

Use :func:`open_engine` as an async context manager: the process, its tasks
and its shutdown live inside it, so no path out (game over, error, Ctrl-C,
cancellation) leaves a process behind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from arbiter.engine.config import EngineConfig, EngineTimeouts
from arbiter.engine.conversation import Engine
from arbiter.engine.errors import (
    EngineError,
    EngineFault,
    EngineFaultError,
    EngineStartError,
    FaultKind,
    stderr_clause,
)
from arbiter.engine.info import Reply, merge_info
from arbiter.engine.iolog import IOLog, log_dir_problem
from arbiter.engine.process import QUIT_LINE, EngineProcess
from arbiter.engine.transport import PipeTransport

__all__ = [
    "EngineConfig", "EngineTimeouts", "EngineFault", "FaultKind", "EngineError", "EngineStartError",
    "EngineFaultError", "Reply", "Engine", "EngineProcess", "PipeTransport", "IOLog", "open_engine",
    "log_dir_problem", "sole_exception", "merge_info", "stderr_clause",
]


@asynccontextmanager
async def open_engine(
    config: EngineConfig,
    *,
    timeouts: EngineTimeouts | None = None,
    log_dir: str | None = None,
) -> AsyncIterator[Engine]:
    """Start an engine process, do the handshake and set its options; yield
    its :class:`Engine`; end it.

    Raises :class:`EngineStartError` (the process is already gone by then) if
    the engine cannot be started, fails ``ugi``/``ugiok`` within the timeout,
    or refuses an option.  Leaving the block, by any path, runs the shutdown
    of :meth:`EngineProcess.aclose`: nothing of the engine survives it.

    A start error of this engine's conversation (its handshake here, its
    ``readyok`` in the block) quotes the last lines of its stderr
    (:meth:`EngineStartError.add_stderr`), read to the end after the
    shutdown, and is noted in its I/O log."""
    timeouts = timeouts or EngineTimeouts()
    process = EngineProcess(config, timeouts, log_dir)
    engine: Engine | None = None
    failed: EngineStartError | None = None
    try:
        async with trio.open_nursery() as nursery:
            try:
                await process.spawn(nursery)
                engine = Engine(config, timeouts, PipeTransport.of(process),
                                pid=process.pid, log_path=process.log_path)
                process.on_exit = engine.transport_lost
                await engine.handshake()
                yield engine
            except EngineStartError as exc:
                if engine is not None and exc is engine.start_error:  # not another engine's
                    failed = exc
                    engine.transport.note(f"cannot start: {exc.reason}")
                raise
            finally:
                farewell = engine.goodbye() if engine is not None else QUIT_LINE
                await process.aclose(farewell=farewell)
                nursery.cancel_scope.cancel()
                if failed is not None:
                    failed.add_stderr(process.stderr_tail())
    except BaseExceptionGroup as group:
        raise sole_exception(group) from None


def sole_exception(group: BaseExceptionGroup) -> BaseException:
    """The one exception inside ``group`` (nested groups flattened), or the group.

    The background tasks of :func:`open_engine` never raise, so a group out
    of its nursery holds what the body raised; callers get that exception
    itself, not a group around it."""
    leaves: list[BaseException] = []
    stack: list[BaseException] = [group]
    while stack:
        exc = stack.pop()
        if isinstance(exc, BaseExceptionGroup):
            stack.extend(exc.exceptions)
        else:
            leaves.append(exc)
    return leaves[0] if len(leaves) == 1 else group
