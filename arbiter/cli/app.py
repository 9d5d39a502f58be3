"""The typer application shared by the command modules, and error helpers."""

from __future__ import annotations

import signal
import sys
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

import typer

app = typer.Typer(
    name="arbiter",
    help="Tournament and match server for game engines: Troll, Atoll, Nine Men's Morris, Talisman.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: exit status for bad user input (a malformed move, spec, file ...)
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``arbiter: error: message`` on stderr and exit with ``code``."""
    print(f"arbiter: error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C: a KeyboardInterrupt, or a group of nothing
    else (trio raises it out of a nursery wrapped in one)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(interrupted(inner) for inner in exc.exceptions)
    return False


def checked_log_dir(path: str | None) -> str | None:
    """``--log DIR``: made if missing, else a clear error (exit 2) before
    any engine starts."""
    if path is not None:
        from arbiter.engine import log_dir_problem  # trio: not for the light commands

        problem = log_dir_problem(path)
        if problem is not None:
            fail(f"--log {path}: {problem}")
    return path


def checked_record_file(path: str | None) -> str | None:
    """``--pgn FILE``: opened for appending once (made if missing, as each
    game will be appended to it), else a clear error (exit 2) before any
    engine starts."""
    if path is None:
        return None
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        fail(f"--pgn {path}: cannot append to it ({exc.strerror})")
    return path


T = TypeVar("T")


def run_interruptible(main: Callable[[], Awaitable[T]]) -> T:
    """``trio.run(main)``, ended by SIGTERM and SIGHUP as by Ctrl-C: ``main``
    is cancelled, its engines are shut down (``Engine.aclose`` is shielded
    from the cancellation), and a KeyboardInterrupt comes out (see
    :func:`interrupted`).  Left to their default, those signals end the
    process at once, and an engine that ignores the end of its input would
    outlive it."""
    import trio  # here, not at the top: the light commands never run trio

    from arbiter.engine import sole_exception

    async def guarded() -> T:
        try:
            async with trio.open_nursery() as nursery:
                async def watch() -> None:
                    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                        async for _ in signals:
                            raise KeyboardInterrupt

                nursery.start_soon(watch)
                result = await main()
                nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # what main raised, not a group around it
            raise sole_exception(group) from None
        return result

    return trio.run(guarded)
