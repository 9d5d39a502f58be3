"""The runner: every check against one engine, in the report's order, none able to hang.

``arbiter check GAME --engine SPEC`` runs the named checks of
``specs/check.md`` against one engine and reports, for each, PASS, WARN, FAIL
(or SKIP when an earlier failure makes it pointless), and for each problem
what was expected, what happened and the transcript lines that show it.  The
run passes when every *mandatory* check passes; the others (``isready``
during a search, ``query``, legal ``pv``s) can only warn, because the arbiter
does not depend on them.

How it is built (trio, structured):

* :class:`~arbiter.check.probe.Probe` runs the engine as a match does (its
  own process group, stderr drained, the whole group killed on the way out)
  but keeps a transcript of every line both ways and hands the checks every
  message, including those a match would treat as a fault, so that the
  checks can judge them;
* every wait has a deadline taken from :class:`CheckSettings`, and every check
  runs under a further safety deadline, so the checker never hangs;
* a check that leaves the engine unusable (crashed, still searching, owing an
  answer) makes the next check start a fresh process; after
  :data:`STALLS_BEFORE_SKIP` search checks in a row that hung or got no
  usable answer, the remaining search checks are skipped rather than each
  repeating the failure;
* the positions come from :mod:`arbiter.check.positions`, every ``bestmove``
  is judged by the referee (:mod:`arbiter.games`).

The Python API is :func:`run_checks` (async) and :func:`check_engine`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import trio

from arbiter.check import checks_handshake, checks_robustness, checks_rules, checks_search
from arbiter.check.checker import Checker, CheckSpec, Context, Failed, NotApplicable
from arbiter.check.probe import Gone
from arbiter.check.report import CheckReport, CheckResult, CheckSettings, Status
from arbiter.engine import EngineConfig
from arbiter.games import Game, get_game

__all__ = ["CHECKS", "ORDER", "STALLS_BEFORE_SKIP", "run_checks", "check_engine"]

#: Consecutive search checks that hung, or got no usable answer at all, before the
#: remaining search checks are skipped (each would only repeat the failure).
STALLS_BEFORE_SKIP = 3

#: The safety deadline of a check, in seconds: a base (start-up, a restart or
#: two) plus the handshake timeout plus, per wait the check makes
#: (``CheckSpec.searches``), the longest wait with its stop and some slack.
#: It only ends a check whose own deadlines failed to; it never decides a verdict.
SAFETY_BASE = 30.0
#: The longest timed search of a check (before the margin): the self-play clock.
SAFETY_SEARCH = 3.0
SAFETY_SLACK = 1.0

#: The order of the report (specs/check.md §The checks): start-up first, the
#: whole-run aggregates last, after every process has been judged.
ORDER = ["startup.quiet", "startup.handshake", "startup.options", "startup.game", "isready.idle",
         "isready.newgame", "position.startpos", "position.fen", "position.moves",
         "isready.between-moves", "go.clock", "go.increment", "go.movestogo", "go.movetime",
         "go.depth", "go.nodes", "go.infinite", "isready.searching", "legality", "game.selfplay",
         "query", "quit", "repeat", "info.parse", "info.pv", "output.unasked", "output.flood",
         "output.flush"]


def _ordered(*areas: tuple[CheckSpec, ...]) -> list[CheckSpec]:
    """The checks of every area in :data:`ORDER`, which must name each exactly once."""
    specs = {spec.name: spec for area in areas for spec in area}
    if sorted(specs) != sorted(ORDER) or len(specs) != sum(len(area) for area in areas):
        raise RuntimeError(f"ORDER and the check modules disagree: {sorted(set(specs) ^ set(ORDER))}")
    return [specs[name] for name in ORDER]


#: Every check, in the order of the report.
CHECKS: list[CheckSpec] = _ordered(checks_handshake.CHECKS, checks_search.CHECKS,
                                   checks_rules.CHECKS, checks_robustness.CHECKS)


class _Runner:
    """Runs :data:`CHECKS` one after the other against one :class:`Checker`:
    decides what to skip, bounds each check by its safety deadline, closes a
    process a check left unusable, and turns each check's context into its result."""

    def __init__(self, checker: Checker):
        self.checker = checker
        self.stall_streak: list[str] = []  # the search checks that just got no usable answer

    async def run(self, on_result: Callable[[CheckResult], None] | None) -> CheckReport:
        checker = self.checker
        started = time.monotonic()
        try:
            async with trio.open_nursery() as nursery:
                checker.nursery = nursery
                try:
                    for spec in CHECKS:
                        result = await self.run_one(spec)
                        checker.report.results.append(result)
                        if on_result is not None:
                            on_result(result)
                finally:
                    await checker.close_probe()
                    nursery.cancel_scope.cancel()
        finally:
            checker.report.seconds = time.monotonic() - started
            checker.report.processes = checker.processes
        return checker.report

    def skip_reason(self, spec: CheckSpec) -> str | None:
        checker = self.checker
        if spec.needs == "none":
            return None
        if checker.start_failed is not None:
            return f"not run: {checker.start_failed}"
        if spec.needs == "start":
            return None
        if checker.game_failed is not None:
            return f"not run: {checker.game_failed}"
        if spec.needs == "search" and len(self.stall_streak) >= STALLS_BEFORE_SKIP:
            return (f"not run: the engine gave no usable answer to go in {len(self.stall_streak)} "
                    f"checks in a row ({', '.join(self.stall_streak)})")
        return None

    def safety_deadline(self, spec: CheckSpec) -> float:
        s = self.checker.settings
        per_wait = (max(s.stall_timeout, s.ready_timeout, SAFETY_SEARCH + self.checker.margin)
                    + s.stop_timeout + SAFETY_SLACK)
        return SAFETY_BASE + s.handshake_timeout + spec.searches * per_wait

    async def run_one(self, spec: CheckSpec) -> CheckResult:
        checker = self.checker
        expected = spec.expected_text(checker)
        reason = self.skip_reason(spec)
        if reason is not None:
            return CheckResult(spec.name, spec.title, spec.mandatory, Status.SKIP, expected, reason)
        ctx = Context(spec)
        if checker.probe is not None:
            ctx.watch(checker.probe)
        started = time.monotonic()
        deadline = self.safety_deadline(spec)
        with trio.move_on_after(deadline) as scope:
            try:
                await spec.run(checker, ctx)
            except NotApplicable as exc:
                return CheckResult(spec.name, spec.title, spec.mandatory, Status.PASS, expected, str(exc))
            except Failed:
                pass
            except Gone as exc:
                if not ctx.problems or exc.detail not in ctx.problems[-1]:
                    ctx.problem(exc.detail)
        if scope.cancelled_caught:
            ctx.problem(f"the check did not finish within its safety deadline of {deadline:g} s")
            if checker.probe is not None:
                checker.probe.dirty = True
        seconds = time.monotonic() - started
        await self.after(spec, ctx)
        return _result(spec, ctx, expected, seconds)

    async def after(self, spec: CheckSpec, ctx: Context) -> None:
        """Close a process the check left unusable; count the search checks that stalled."""
        checker = self.checker
        keep = spec.name == "startup.quiet" and checker.start_failed is None  # ugi comes next
        if checker.probe is not None and not checker.probe.usable and not keep:
            await checker.close_probe()
        if spec.needs == "search":
            if ctx.stalled or (ctx.problems and not ctx.good):
                self.stall_streak.append(spec.name)
            else:
                self.stall_streak = []


def _result(spec: CheckSpec, ctx: Context, expected: str, seconds: float) -> CheckResult:
    if ctx.problems:
        status = Status.FAIL if spec.mandatory else Status.WARN
        happened = ctx.problems[0] if len(ctx.problems) == 1 else (
            f"{len(ctx.problems)} problems; the first: {ctx.problems[0]}")
    elif ctx.warnings:
        status = Status.WARN
        happened = "; ".join(ctx.warnings)
    else:
        status = Status.PASS
        happened = "; ".join(ctx.notes) or "as expected"
    transcript = ctx.transcript() if status in (Status.FAIL, Status.WARN) else []
    return CheckResult(spec.name, spec.title, spec.mandatory, status, expected, happened,
                       seconds, list(ctx.problems) + list(ctx.warnings), transcript)


# --- entry points --------------------------------------------------------------------------------------------


async def run_checks(game: str | Game, config: EngineConfig, settings: CheckSettings | None = None,
                     *, log_dir: str | None = None,
                     on_result: Callable[[CheckResult], None] | None = None) -> CheckReport:
    """Run the whole suite against one engine; ``on_result`` sees each result as it comes."""
    the_game = get_game(game) if isinstance(game, str) else game
    checker = Checker(the_game, config, settings or CheckSettings(), log_dir)
    return await _Runner(checker).run(on_result)


def check_engine(game: str | Game, config: EngineConfig, settings: CheckSettings | None = None,
                 **kwargs) -> CheckReport:
    """:func:`run_checks` in a fresh trio run."""
    return trio.run(lambda: run_checks(game, config, settings, **kwargs))
