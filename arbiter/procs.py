"""What processes are alive: the one place that reads ``/proc``.

The arbiter promises that no engine process, nor any child of one, outlives
its game.  Checking that needs more than ``killpg(pgid, 0)``, which succeeds
while zombies remain (and orphaned zombies stay for good under an init that
does not reap, as in some containers); so on Linux the answers come from
``/proc/<pid>/stat``: state, parent and process group of every process.
"""

from __future__ import annotations

import os

__all__ = ["proc_table", "pid_alive", "live_group_members", "descendants", "cmdline", "with_environ", "processes_with"]

#: process states that count as gone (zombie, dead)
GONE = ("Z", "X")


def _stat(pid: int | str) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) of one process; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            text = file.read()
    except OSError:
        return None
    fields = text[text.rindex(b")") + 2:].split()
    return fields[0].decode(), int(fields[1]), int(fields[2])


def proc_table() -> dict[int, tuple[str, int, int]]:
    """pid -> (state, parent pid, process group) for every process we can see."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(entry)
            if stat is not None:
                table[int(entry)] = stat
    return table


def pid_alive(pid: int) -> bool:
    """True if ``pid`` runs (zombies and missing processes are dead)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in GONE


def live_group_members(pgid: int) -> list[int]:
    """The live (non-zombie) processes of process group ``pgid``, sorted.

    Without ``/proc`` (not Linux) it falls back to ``killpg(pgid, 0)``, which
    cannot tell zombies from the living: then ``[pgid]`` means "maybe"."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [pgid]
    return sorted(pid for pid, (state, _, group) in proc_table().items()
                  if group == pgid and state not in GONE)


def descendants(root: int, table: dict[int, tuple[str, int, int]]) -> set[int]:
    """Every process below ``root`` in the parent tree of ``table``."""
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def cmdline(pid: int) -> str:
    """The command line of ``pid`` for messages ("?" if unknown)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip() or "?"
    except OSError:
        return "?"


def with_environ(entry: bytes, pids: set[int] | list[int]) -> list[int]:
    """Those of ``pids`` whose initial environment holds the exact entry
    ``entry`` (``b"NAME=value"``), sorted.  Zombies and processes of other
    users have no readable environment, so they are never in the answer."""
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as file:
                if entry in file.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue
    return sorted(found)


def processes_with(tag: str) -> list[int]:
    """Pids of the live processes whose environment holds ``tag`` anywhere
    (an engine started with ``env.TAG=<tag>``, and its children, which
    inherit it): how tests and benches find what a run left behind."""
    found = []
    for pid, (state, _, _) in proc_table().items():
        if state in GONE:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if tag.encode() in environ.read():
                    found.append(pid)
        except OSError:
            continue
    return found
