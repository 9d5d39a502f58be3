"""The robustness checks: ``quit`` ends everything, and what the engine wrote all run long.

``quit`` must end the process and every process it started.  The others
judge the :class:`~arbiter.check.probe.Evidence` gathered from every process
of the run, so they come last: ``info`` lines parse, their ``pv``s are legal,
nothing unasked or malformed, no flood, output flushed per line.
``specs/check.md`` §The checks: ``quit``, ``info.*``, ``output.*``.
"""

from __future__ import annotations

import trio

from arbiter.check.checker import Checker, CheckSpec, Context, check, ms
from arbiter.check.probe import (
    FLOOD_BYTES,
    FLOOD_BYTES_PER_S,
    FLOOD_LINES,
    FLOOD_LINES_PER_S,
    clip,
    leftovers,
)
from arbiter.procs import cmdline, descendants, proc_table
from protocol import limits
from protocol.messages import Quit

__all__ = ["CHECKS"]

#: Problems listed one by one per whole-run check; the rest are counted.
LISTED_PROBLEMS = 10
#: Seconds a child of the engine on its way out gets before it counts as left running.
CHILD_EXIT_WAIT = 0.1
#: Processes left running named in the problem, and the characters of each command line.
SHOWN_LEFTOVERS = 5
COMMAND_WIDTH = 60


# --- quit ----------------------------------------------------------------------------------------------------


@check("quit", "quit ends the process and its children",
       "after `quit`, the process exits within {grace} s and no process of its group (or one it "
       "started) is left running", needs="start", searches=2)
async def quit_process(checker: Checker, ctx: Context) -> None:
    probe = await checker.fresh(ctx, new_game=False)
    await checker.ready(probe, ctx, "before quit")
    root = probe.pid
    assert root is not None
    earlier = descendants(root, proc_table())
    sent = await probe.send(Quit())
    status = await probe.wait_exit(checker.settings.quit_grace)
    probe.dirty = True
    if status is None:
        probe.note("#", f"still running {checker.settings.quit_grace:g} s after quit")
        raise ctx.fail(f"still running {checker.settings.quit_grace:g} s after quit (the arbiter then "
                       "sends SIGTERM, then SIGKILL)", probe.lines[-1])
    took = trio.current_time() - sent
    probe.note("#", f"exited ({status}) {ms(took)} after quit")
    left = leftovers(root, earlier)
    if left:
        await trio.sleep(CHILD_EXIT_WAIT)  # a child on its way out gets a moment
        left = leftovers(root, earlier)
    if left:
        described = ", ".join(f"pid {pid} ({clip(' '.join(cmdline(pid).split()), COMMAND_WIDTH)})"
                              for pid in left[:SHOWN_LEFTOVERS])
        note = probe.note("#", f"left running: {described}")
        raise ctx.fail(f"the engine exited but left {len(left)} process(es) running: {described}", note)
    ctx.notes.append(f"exited ({status}) {ms(took)} after quit")


# --- aggregates over the whole run ---------------------------------------------------------------------------


@check("info.parse", "info lines parse",
       "every `info` line parses: known fields with valid values (specs/protocol.md §Engine to "
       "arbiter)", needs="start", searches=0)
async def info_parse(checker: Checker, ctx: Context) -> None:
    evidence = checker.evidence
    for line, error in evidence.info_errors[:LISTED_PROBLEMS]:
        ctx.problem(f"malformed info: {error}", line)
    if len(evidence.info_errors) > LISTED_PROBLEMS:
        ctx.problems.append(f"... and {len(evidence.info_errors) - LISTED_PROBLEMS} more malformed info lines")
    if evidence.info_total == 0:
        ctx.warn("the engine wrote no info lines: records will have no evaluation, depth or pv")
    ctx.notes.append(f"{evidence.info_total} info lines")


@check("info.pv", "pv lines are legal",
       "every `info ... pv` is a legal line of play from the searched position (WARN only)",
       mandatory=False, needs="start", searches=0)
async def info_pv(checker: Checker, ctx: Context) -> None:
    evidence = checker.evidence
    for line, problem in evidence.pv_problems[:LISTED_PROBLEMS]:
        ctx.problem(problem, line)
    if len(evidence.pv_problems) > LISTED_PROBLEMS:
        ctx.problems.append(f"... and {len(evidence.pv_problems) - LISTED_PROBLEMS} more")
    ctx.notes.append(f"{evidence.pv_checked} pvs checked")


@check("output.unasked", "nothing unasked or malformed",
       "no malformed line and nothing unasked: no second `bestmove`, no `readyok` or `response` "
       "without a request, no handshake lines after `ugiok`", needs="start", searches=0)
async def output_unasked(checker: Checker, ctx: Context) -> None:
    for line, problem in checker.evidence.violations[:LISTED_PROBLEMS]:
        ctx.problem(f"{line.text!r}: {problem}", line)
    if len(checker.evidence.violations) > LISTED_PROBLEMS:
        ctx.problems.append(f"... and {len(checker.evidence.violations) - LISTED_PROBLEMS} more")


@check("output.flood", "nothing floods",
       "per search at most " + f"{FLOOD_LINES} + {FLOOD_LINES_PER_S}/s `info` lines and "
       f"{FLOOD_BYTES // 1024} KiB + {FLOOD_BYTES_PER_S // 1024} KiB/s, no line longer than "
       f"{limits.MAX_LINE_BYTES} bytes", needs="start", searches=0)
async def output_flood(checker: Checker, ctx: Context) -> None:
    worst = 0
    for search in checker.evidence.searches:
        end = search.ended_at if search.ended_at is not None else trio.current_time()
        seconds = max(0.0, end - search.sent_at) if search.sent_at else 0.0
        worst = max(worst, search.info_lines)
        if (search.info_lines > FLOOD_LINES + FLOOD_LINES_PER_S * seconds
                or search.info_bytes > FLOOD_BYTES + FLOOD_BYTES_PER_S * seconds):
            ctx.problem(f"{search.info_lines} info lines ({search.info_bytes // 1024} KiB) in a search of "
                        f"{ms(seconds)} (`{search.go.to_line()}`, check {search.check})", search.go_line)
    for line, problem in checker.evidence.floods:
        ctx.problem(problem, line)
    if len(ctx.problems) > LISTED_PROBLEMS:
        ctx.problems[LISTED_PROBLEMS:] = [f"... and {len(ctx.problems) - LISTED_PROBLEMS} more"]
    ctx.notes.append(f"at most {worst} info lines in one search")


@check("output.flush", "output flushed per line",
       "each answer arrives without further input: the engine flushes stdout after every line",
       needs="none", searches=0)
async def output_flush(checker: Checker, ctx: Context) -> None:
    for lines, problem in checker.evidence.flush:
        ctx.problem(problem, *lines)


CHECKS: tuple[CheckSpec, ...] = (quit_process, info_parse, info_pv, output_unasked, output_flood,
                                 output_flush)
