"""``arbiter stop``: ask a running run to stop (``specs/tournament.md`` §Stopping).

A run holds its tournament with a lock file that names its process
(:meth:`arbiter.store.Store.claim_run`); ``arbiter stop`` finds the runs
that hold tournaments of the database now and sends each
:data:`~arbiter.cli.app.DRAIN_SIGNAL` (finish the games in progress, start
no new one; the run ends ``stopped``, exit 0, resumable) or, with ``--now``,
SIGTERM (as Ctrl-C: the games in progress are abandoned).  ``arbiter serve``
holds its arenas' tournaments the same way: it drains its arenas.
"""

from __future__ import annotations

import os
import signal
import sys

import typer

from arbiter.store import DEFAULT_DB, Store, StoreError

from .app import DRAIN_SIGNAL, app, fail

#: exit status when no run holds the tournament(s) asked for
EXIT_NOT_RUNNING = 1


def _holder(store: Store, tournament_id: int) -> int | None:
    """The pid of the live run that holds ``tournament_id``, None if none
    does (or its lock names no process that is an arbiter)."""
    if not store.run_active(tournament_id):
        return None
    try:
        with open(store.run_lock_path(tournament_id), encoding="ascii", errors="replace") as file:
            text = file.read(32).strip()
    except OSError:
        return None
    if not text.isdigit():
        return None
    pid = int(text)
    try:  # a pid the kernel gave to another program since would not be ours to signal
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            command = file.read()
    except OSError:
        return None
    return pid if b"arbiter" in command else None


@app.command()
def stop(
    db: str = typer.Option(DEFAULT_DB, "--db", help="the database the run writes"),
    tournament_id: int | None = typer.Option(None, "--tournament", "-t",
                                             help="the tournament (default: every one a run plays now)"),
    now: bool = typer.Option(False, "--now", help="stop at once, as Ctrl-C does (games in progress are replayed on resume)"),
) -> None:
    """Ask a running tournament, match or server to stop: finish its games in progress, start no new one."""
    try:
        store = Store(db, readonly=True)
    except StoreError as exc:
        fail(str(exc))
    with store:
        if tournament_id is not None:
            if store.tournament(tournament_id) is None:
                fail(f"{db}: no tournament {tournament_id}")
            ids = [tournament_id]
        else:
            ids = [row["id"] for row in store.tournaments()]
        held = {tid: pid for tid in ids if (pid := _holder(store, tid)) is not None}
    if not held:
        which = f"tournament {tournament_id}" if tournament_id is not None else "no tournament"
        print(f"arbiter: {which} of {db} is being run now; nothing to stop", file=sys.stderr)
        raise typer.Exit(EXIT_NOT_RUNNING)
    sig = signal.SIGTERM if now else DRAIN_SIGNAL
    for pid in sorted(set(held.values())):
        tournaments = ", ".join(str(tid) for tid, p in held.items() if p == pid)
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            print(f"arbiter: the run of tournament {tournaments} (pid {pid}) has just ended", file=sys.stderr)
            continue
        what = ("stop now (its games in progress are replayed on resume)" if now
                else "finish its games in progress and start no new one")
        print(f"arbiter: asked the run of tournament {tournaments} (pid {pid}) to {what}")
