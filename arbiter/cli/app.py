"""The typer application shared by the command modules, error helpers, and
the command line's one interrupt policy (:func:`run_interruptible`): signals
are the command line's business, the library never installs a handler."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import typer

if TYPE_CHECKING:
    import trio

# trio and the engine machinery are imported where they run: the light
# commands (`arbiter games`) never load them (tests/test_cli_rules.py)

app = typer.Typer(
    name="arbiter",
    help="Tournament and match server for game engines: Troll, Atoll, Nine Men's Morris, Talisman.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion
    pretty_exceptions_enable=False,
)

#: the platforms Arbiter runs on: it reads /proc, locks with flock, waits on
#: pidfds and ends engines by process group (specs/match.md §Engine processes)
SUPPORTED_PLATFORMS = ("linux",)


def platform_problem(platform: str) -> str | None:
    """Why Arbiter cannot run on ``platform`` (a ``sys.platform`` value), or
    None when it can."""
    if platform.startswith(SUPPORTED_PLATFORMS):
        return None
    return (f"Arbiter runs on Linux only (it uses /proc, flock, pidfd and process groups "
            f"to run and end engine processes); this system is {platform!r}")


def version_text() -> str:
    """``arbiter VERSION`` of the installed package."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"arbiter {version('arbiter')}"
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "arbiter (not installed: version unknown)"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def _start(version: bool = typer.Option(False, "--version", is_eager=True, callback=_show_version,
                                        help="print the version and exit")) -> None:
    """Every command starts here: a platform Arbiter cannot run on is refused
    with one clear line (exit 2) before anything starts."""
    problem = platform_problem(sys.platform)
    if problem is not None:
        fail(problem)

#: the help of --each (play, match, tournament; specs/match.md §Engine specs)
EACH_HELP = ("settings for every engine, as in a SPEC: 'tc=5+0.05 option.Threads=1' "
             "(a SPEC's own settings win)")

#: exit status for bad user input (a malformed move, spec, file ...)
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``arbiter: error: message`` on stderr and exit with ``code``."""
    print(f"arbiter: error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def checked_log_dir(path: str | None) -> str | None:
    """``--log DIR``: made if missing, else a clear error (exit 2) before
    any engine starts."""
    if path is not None:
        from arbiter.engine import log_dir_problem

        problem = log_dir_problem(path)
        if problem is not None:
            fail(f"--log {path}: {problem}")
    return path


def checked_record_file(path: str | None) -> str | None:
    """``--pgn FILE``: opened for appending once, else a clear error (exit
    2) before any engine starts.  A file this check made is removed again:
    the first game appended makes it, so a run that plays nothing leaves no
    empty file behind."""
    if path is None:
        return None
    existed = os.path.lexists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        fail(f"--pgn {path}: cannot append to it ({exc.strerror})")
    if not existed:
        with contextlib.suppress(OSError):
            os.remove(path)
    return path


def remove_if_empty(directory: str | None, existed: bool) -> None:
    """Remove ``directory`` (a ``--log DIR`` that :func:`checked_log_dir`
    made) when nothing was written into it: an engine that could not start
    leaves no empty folder.  Nothing happens to a folder that ``existed``."""
    if directory is not None and not existed:
        with contextlib.suppress(OSError):  # not empty, or gone: leave it
            os.rmdir(directory)


T = TypeVar("T")

# --------------------------------------------------------------------------
# The one interrupt policy
# --------------------------------------------------------------------------

#: exit status of a command stopped by a signal or by a closed output
EXIT_INTERRUPTED = 130
#: a run aborted (an engine failing its handshake twice, a failing database)
EXIT_ABORTED = 1
#: another process is running the tournament: nothing started
EXIT_BUSY = 3
#: --strict: the run finished, and some game raised a warning
EXIT_STRICT = 4

#: the signals that stop a command: Ctrl-C, ``kill``'s default, the terminal
#: closed.  Left to their defaults, SIGTERM and SIGHUP would end the process
#: at once, and an engine that ignores the end of its input would outlive it.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: The signal of ``arbiter stop`` (without ``--now``): finish the games in
#: progress, start no new one (``specs/tournament.md`` §Stopping).  A command
#: that has nothing to finish takes it as a stop signal.
DRAIN_SIGNAL = signal.SIGUSR1

#: the reason of a stop when the reader of stdout went away (``arbiter ... | head``)
OUTPUT_CLOSED = "its output was closed"


class Interrupted(Exception):
    """A command's main was cancelled by a signal or a closed output; ``reason``
    says which (``SIGINT``, ``SIGTERM``, ``SIGHUP``, :data:`OUTPUT_CLOSED`)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` says that the command was stopped (:class:`Interrupted`,
    or a Ctrl-C that came before or after :func:`run_interruptible`'s watch)."""
    return isinstance(exc, Interrupted | KeyboardInterrupt)


def run_interruptible(main: Callable[[], Awaitable[T]], *,
                      stop: Callable[[str], None] | None = None,
                      drain: Callable[[str], None] | None = None) -> T:
    """``trio.run(main)`` under the command line's one interrupt policy (the
    library installs no signal handler; ``specs/tournament.md`` §Stopping).

    The first of :data:`STOP_SIGNALS` calls ``stop(reason)`` when given (a
    clean stop, such as :meth:`arbiter.tournament.Tournament.stop`: ``main``
    ends on its own and its result is returned); without ``stop``, or on a
    second signal, ``main`` is cancelled (engines are still shut down:
    ``Engine.aclose`` is shielded from the cancellation) and
    :class:`Interrupted` is raised.  :data:`DRAIN_SIGNAL` (``arbiter stop``)
    calls ``drain(reason)`` when given (the games in progress finish, ``main``
    ends on its own), else counts as a stop signal.  A ``main`` that wrote to a closed stdout
    (:class:`BrokenPipeError`) raises ``Interrupted(OUTPUT_CLOSED)``, stdout
    sent nowhere from then on.  Any other exception of ``main`` comes out as
    itself, not inside a group."""
    watch = _Watch(stop, drain)
    try:
        import trio

        return trio.run(watch.guard, main)
    except KeyboardInterrupt:  # Ctrl-C before the watch began or after it ended
        raise Interrupted(signal.SIGINT.name) from None
    except BrokenPipeError:
        from arbiter.progress import silence_stdout  # (rich: only when needed)

        silence_stdout()
        raise Interrupted(OUTPUT_CLOSED) from None


class _Watch:
    """The signal watch of :func:`run_interruptible` around one ``main``."""

    def __init__(self, stop: Callable[[str], None] | None, drain: Callable[[str], None] | None = None):
        self.stop = stop
        self.drain = drain
        self.drainable = drain is not None
        self.reason: str | None = None  # set when main was cancelled

    async def guard(self, main: Callable[[], Awaitable[T]]) -> T:
        try:
            import trio

            async with trio.open_nursery() as nursery:
                await nursery.start(self._watch, nursery.cancel_scope)
                result = await main()
                nursery.cancel_scope.cancel()
        except* BaseException as group:
            # _watch never raises: the group holds exactly what main raised
            (raised,) = group.exceptions
            raise raised from None
        if self.reason is not None:
            raise Interrupted(self.reason)
        return result

    async def _watch(self, scope: trio.CancelScope, *, task_status: trio.TaskStatus[None]) -> None:
        import trio

        with trio.open_signal_receiver(*STOP_SIGNALS, DRAIN_SIGNAL) as signals:
            task_status.started()
            async for number in signals:
                reason = signal.Signals(number).name
                if number == DRAIN_SIGNAL:
                    if self.drainable:
                        if self.drain is not None:
                            drain, self.drain = self.drain, None
                            drain("arbiter stop")
                        continue  # a second one: the games in progress are finishing already
                    reason = "arbiter stop"  # nothing to finish: a stop
                if self.stop is not None:
                    stop, self.stop = self.stop, None
                    stop(reason)  # the clean stop; a second signal cancels
                    continue
                self.reason = reason
                scope.cancel()
                return


def exit_interrupted(exc: Interrupted, what: str) -> NoReturn:
    """``arbiter: interrupted; <what>`` on stderr (naming a closed output,
    the one reason a user may not guess), exit status 130."""
    why = f" ({exc.reason})" if exc.reason == OUTPUT_CLOSED else ""
    print(f"arbiter: interrupted{why}; {what}", file=sys.stderr)
    raise typer.Exit(EXIT_INTERRUPTED)
