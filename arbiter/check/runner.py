"""The conformance checker: one engine against the protocol and the referee.

``arbiter check GAME --engine SPEC`` runs the named checks of
``specs/check.md`` against one engine and reports, for each, PASS, WARN, FAIL
(or SKIP when an earlier failure makes it pointless), and for each problem
what was expected, what happened and the transcript lines that show it.  The
run passes when every *mandatory* check passes; the others (``isready``
during a search, ``query``, legal ``pv``s) can only warn, because the arbiter
does not depend on them.

How it is built (trio, structured):

* :class:`~arbiter.check_probe.Probe` runs the engine as a match does (its
  own process group, stderr drained, the whole group killed on the way out)
  but keeps a transcript of every line both ways and hands the checks every
  message, including those a match would treat as a fault, so that the
  checks can judge them;
* every wait has a deadline taken from :class:`CheckSettings`, and every check
  runs under a further safety deadline, so the checker never hangs;
* a check that leaves the engine unusable (crashed, still searching, owing an
  answer) makes the next check start a fresh process; after three search
  checks in a row that hung or got no usable answer, the remaining search
  checks are skipped rather than each repeating the failure;
* the positions come from :mod:`arbiter.check_positions`, every ``bestmove``
  is judged by the referee (:mod:`arbiter.games`).

The Python API is :func:`run_checks` (async) and :func:`check_engine`.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import trio

from arbiter.check.positions import CheckPosition, final_positions, positions
from arbiter.check.probe import (
    FLOOD_BYTES,
    FLOOD_BYTES_PER_S,
    FLOOD_LINES,
    FLOOD_LINES_PER_S,
    Evidence,
    Gone,
    Line,
    Probe,
    Received,
    Search,
    clip,
    describe_fault,
    leftovers,
)
from arbiter.clock import Clock, TimeControl
from arbiter.engine import EngineConfig, EngineError, EngineTimeouts
from arbiter.games import Game, IllegalMoveError, Position, get_game, play_moves
from arbiter.procs import cmdline, descendants, proc_table
from protocol import limits
from protocol.codec import ProtocolError
from protocol.messages import (
    GAME_OPTION,
    ArbiterMessage,
    BestMove,
    Go,
    IsReady,
    Query,
    Quit,
    ReadyOk,
    SetOption,
    SetPosition,
    Stop,
    Ugi,
    UgiNewGame,
    UgiOk,
)
from protocol.sdk import query_answer
from protocol.search import go_message

__all__ = ["Status", "CheckSettings", "CheckResult", "CheckReport", "CHECKS", "run_checks",
           "check_engine"]


class Status(str, enum.Enum):
    PASS = "PASS"
    WARN = "WARN"  # a problem the arbiter can live with (or a non-mandatory check failed)
    FAIL = "FAIL"  # a mandatory check failed
    SKIP = "SKIP"  # not run: an earlier failure makes it meaningless

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class CheckSettings:
    """Deadlines and sizes of a run (seconds unless the name says ms).

    The defaults are the deadlines the arbiter itself uses in matches
    (``protocol/limits.py``).  ``margin_ms`` is how far past a timed budget
    (``movetime``, the mover's clock) a ``bestmove`` may arrive."""

    quick: bool = False
    handshake_timeout: float = limits.HANDSHAKE_TIMEOUT_MS / 1000
    ready_timeout: float = limits.READY_TIMEOUT_MS / 1000
    stop_timeout: float = limits.STOP_TIMEOUT_MS / 1000
    quit_grace: float = limits.QUIT_GRACE_MS / 1000
    stall_timeout: float = 10.0
    margin_ms: int = 100
    movetime_ms: int = 100
    quiet_wait: float = 0.3
    infinite_wait: float = 0.5

    @property
    def selfplay_plies(self) -> int:
        return 40 if self.quick else 150

    @property
    def repeat_plies(self) -> int:
        return 16 if self.quick else 60

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


#: Consecutive search checks that hung, or got no usable answer at all, before the
#: remaining search checks are skipped (each would only repeat the failure).
STALLS_BEFORE_SKIP = 3
#: Clocks of the self-play game and of the repeat rounds.
SELFPLAY_TC = "3+0.03"
#: Transcript lines shown per problem in a report.
SHOWN_LINES = 40


# --- results ------------------------------------------------------------------------------


@dataclass
class CheckResult:
    """The verdict of one check.  ``transcript`` lines read
    ``[p2   1.234] > go movetime 100``: process number, seconds since it
    started, ``>`` to the engine, ``<`` from it, ``#`` what the checker saw."""

    name: str
    title: str
    mandatory: bool
    status: Status
    expected: str
    happened: str
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "mandatory": self.mandatory,
                "status": self.status.value, "expected": self.expected,
                "happened": self.happened, "seconds": round(self.seconds, 3),
                "problems": list(self.problems), "transcript": list(self.transcript)}


@dataclass
class CheckReport:
    game: str
    engine: str
    command: str
    settings: CheckSettings
    id_name: str | None = None
    id_author: str | None = None
    options: list[str] = field(default_factory=list)
    results: list[CheckResult] = field(default_factory=list)
    seconds: float = 0.0
    processes: int = 0
    pids: list[int] = field(default_factory=list)  # of the engine processes started

    @property
    def passed(self) -> bool:
        """Every mandatory check passed (WARNs allowed)."""
        return all(r.status is not Status.FAIL and not (r.mandatory and r.status is Status.SKIP)
                   for r in self.results)

    def counts(self) -> dict[str, int]:
        return {s.value: sum(1 for r in self.results if r.status is s) for s in Status}

    def result(self, name: str) -> CheckResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> dict:
        return {"game": self.game, "engine": self.engine, "command": self.command,
                "id_name": self.id_name, "id_author": self.id_author, "options": self.options,
                "passed": self.passed, "counts": self.counts(), "seconds": round(self.seconds, 3),
                "processes": self.processes, "pids": list(self.pids),
                "settings": self.settings.to_dict(),
                "checks": [r.to_dict() for r in self.results]}


# --- the checks ----------------------------------------------------------------------------------


class _Failed(Exception):
    """Ends a check early (its problem is already recorded)."""


@dataclass
class _Context:
    spec: CheckSpec
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    focus: list[Line] = field(default_factory=list)
    slices: list[tuple[Probe, int]] = field(default_factory=list)  # (probe, first line index)
    stalled: bool = False  # some go got no bestmove at all
    answered: bool = False  # some go got a bestmove
    good: int = 0  # searches answered with a legal move in time

    def problem(self, text: str, *lines: Line | None) -> None:
        self.problems.append(text)
        self.focus.extend(line for line in lines if line is not None)

    def fail(self, text: str, *lines: Line | None) -> _Failed:
        self.problem(text, *lines)
        return _Failed(text)

    def warn(self, text: str, *lines: Line | None) -> None:
        self.warnings.append(text)
        self.focus.extend(line for line in lines if line is not None)

    def watch(self, probe: Probe) -> None:
        if not any(p is probe for p, _ in self.slices):
            self.slices.append((probe, len(probe.lines)))


@dataclass(frozen=True)
class CheckSpec:
    """A named check.  ``needs``: ``none`` (always runs), ``start`` (a
    handshake succeeded), ``game`` (the engine plays the game), ``search``
    (the engine still answers ``go``)."""

    name: str
    title: str
    expected: str
    mandatory: bool
    needs: str
    run: Callable[[_Checker, _Context], Awaitable[None]]
    searches: int = 2  # rough number of waits, for the safety deadline

    def expected_text(self, checker: _Checker) -> str:
        return self.expected.format(**checker.format_values())


CHECKS: list[CheckSpec] = []


def _check(name: str, title: str, expected: str, *, mandatory: bool = True, needs: str = "game",
           searches: int = 2):
    def register(fn: Callable[[_Checker, _Context], Awaitable[None]]):
        CHECKS.append(CheckSpec(name, title, expected, mandatory, needs, fn, searches))
        return fn
    return register


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"


@dataclass
class _Answer:
    move: str | None
    elapsed: float  # seconds from the end of the go write to the bestmove line
    line: Line | None
    verdict: str  # ok, illegal, late, malformed, no answer


class _Checker:
    def __init__(self, game: Game, config: EngineConfig, settings: CheckSettings,
                 log_dir: str | None):
        self.game = game
        self.config = config
        self.settings = settings
        self.log_dir = log_dir
        self.timeouts = EngineTimeouts(handshake=settings.handshake_timeout,
                                       ready=settings.ready_timeout, stop=settings.stop_timeout,
                                       quit_grace=settings.quit_grace, term_grace=0.5)
        self.margin = max(settings.margin_ms, config.timemargin_ms) / 1000
        self.evidence = Evidence()
        self.nursery: trio.Nursery | None = None
        self.probe: Probe | None = None
        self.processes = 0
        self.start_failed: str | None = None
        self.game_failed: str | None = None
        self.stall_streak: list[str] = []
        self.report = CheckReport(game.name, config.label, config.cmd, settings)
        self.positions = positions(game.name, settings.quick)
        self.all_positions = positions(game.name)
        self.handshake_lines: list[Received] = []

    def format_values(self) -> dict[str, object]:
        s = self.settings
        return {"game": self.game.name, "handshake": f"{s.handshake_timeout:g}",
                "ready": f"{s.ready_timeout:g}", "stop": f"{s.stop_timeout:g}",
                "grace": f"{s.quit_grace:g}", "stall": f"{s.stall_timeout:g}",
                "margin": f"{self.margin * 1000:.0f}", "movetime": s.movetime_ms,
                "positions": len(self.positions), "plies": s.selfplay_plies,
                "repeat_plies": s.repeat_plies, "tc": SELFPLAY_TC,
                "infinite": f"{s.infinite_wait:g}"}

    # -- positions ---------------------------------------------------------------------------

    def entry(self, feature: str) -> CheckPosition:
        for entry in self.all_positions:
            if entry.feature == feature:
                return entry
        raise KeyError(feature)

    # -- processes ---------------------------------------------------------------------------

    async def spawn(self) -> Probe:
        """A new engine process, not yet spoken to."""
        await self.close_probe()
        self.processes += 1
        probe = Probe(self.processes, self.config, self.timeouts, self.log_dir, self.evidence)
        assert self.nursery is not None
        self.probe = probe
        try:
            await probe.start(self.nursery)
        except EngineError as exc:
            self.probe = None
            raise Gone(exc.reason) from None
        assert probe.pid is not None
        self.report.pids.append(probe.pid)
        probe.note("#", f"started process {self.processes} (pid {probe.pid}): {self.config.cmd} "
                        f"{' '.join(self.config.args)}".rstrip())
        return probe

    async def close_probe(self) -> None:
        probe, self.probe = self.probe, None
        if probe is None:
            return
        await probe.aclose(hurry=not probe.usable)

    async def fresh(self, ctx: _Context, new_game: bool = True) -> Probe:
        """A usable engine: the current one, or a new process after a full
        handshake (and the game selected); Gone if it cannot be had."""
        if self.probe is not None and self.probe.usable:
            ctx.watch(self.probe)
            if new_game and not self.probe.game_selected:
                await self.new_game(self.probe, ctx)
            return self.probe
        probe = await self.spawn()
        ctx.watch(probe)
        await self.handshake(probe, ctx, judge=False)
        if new_game:
            await self.new_game(probe, ctx)
        return probe

    async def handshake(self, probe: Probe, ctx: _Context, *, judge: bool) -> None:
        """``ugi`` to ``ugiok``, then the configured options; raises _Failed or Gone."""
        await probe.send(Ugi())
        deadline = trio.current_time() + self.settings.handshake_timeout
        seen: list[Received] = []
        while True:
            received = await probe.next(deadline)
            if received is None:
                text = f"no ugiok within {self.settings.handshake_timeout:g} s of ugi"
                ctx.problem(text, probe.lines[-1] if probe.lines else None)
                await self.diagnose_silence(probe, ctx, "ugi")
                raise _Failed(text)
            seen.append(received)
            if isinstance(received.message, UgiOk) and received.violation is None:
                break
        if judge:
            self.handshake_lines = seen
        if self.config.options:
            messages = []
            for name, value in self.config.options.items():
                decl = probe.session.option(name)
                if decl is None:
                    raise ctx.fail(f"the engine spec sets option {name!r}, which the engine does not "
                                   f"declare (it declares: {', '.join(probe.options) or 'none'})")
                try:
                    messages.append(SetOption(decl.name, decl.validate_value(value)))
                except ProtocolError as exc:
                    raise ctx.fail(f"the engine spec's value for {exc}") from None
            await probe.send(*messages)

    async def new_game(self, probe: Probe, ctx: _Context) -> None:
        """Select the game (if the engine has the option), ``uginewgame``, ``isready``."""
        messages: list[ArbiterMessage] = []
        decl = probe.session.game_option
        if decl is not None and probe.session.plays(self.game.name):
            messages.append(SetOption(decl.name, decl.validate_value(self.game.name)))
        messages.append(UgiNewGame())
        await probe.send(*messages)
        await self.ready(probe, ctx, "after uginewgame")
        probe.game_selected = True

    async def ready(self, probe: Probe, ctx: _Context, when: str) -> float:
        """``isready`` -> ``readyok``; the seconds it took.  _Failed on a timeout."""
        sent = await probe.send(IsReady())
        deadline = sent + self.settings.ready_timeout
        while True:
            received = await probe.next(deadline)
            if received is None:
                ctx.problem(f"no readyok within {self.settings.ready_timeout:g} s of isready ({when})",
                            probe.lines[-1] if probe.lines else None)
                await self.diagnose_silence(probe, ctx, "isready")
                raise _Failed()
            if isinstance(received.message, ReadyOk) and received.violation is None:
                return received.line.at - sent

    async def diagnose_silence(self, probe: Probe, ctx: _Context, asked: str) -> None:
        """After a missing answer: close the engine's input and watch.  Output
        that appears as the engine exits (its stdout closing with it) was
        sitting in a buffer: the engine does not flush after each line.
        Output while it keeps running is only a late answer."""
        if probe.fault is not None:
            return
        lines_before = len(probe.lines)
        await probe.close_input()
        with trio.move_on_after(0.5):
            while probe.fault is None:  # until stdout closes (or half a second)
                await probe.arrival.wait()
        new = [line for line in probe.lines[lines_before:] if line.direction == "<"]
        if not new:
            return
        if probe.fault is None:
            probe.note("#", "(output came after the input was closed, while the engine kept running: "
                            "a late answer, not a buffering problem)")
            return
        text = (f"the answer to {asked} arrived only when the engine exited after its input was "
                "closed: its stdout is not flushed after each line")
        self.evidence.flush.append((new[:5], text))
        ctx.problem(text, *new[:5])

    # -- searching ---------------------------------------------------------------------------

    def budget(self, pos: Position, go: Go) -> tuple[float, str]:
        """Seconds a search may take, and what that budget is (for messages)."""
        budgets: list[tuple[float, str]] = []
        if go.movetime is not None:
            budgets.append((go.movetime / 1000 + self.margin, f"movetime {go.movetime} ms"))
        mover_is_p1 = pos.to_move is self.game.first
        clock = go.p1time if mover_is_p1 else go.p2time
        if clock is not None:
            side = "p1" if mover_is_p1 else "p2"
            budgets.append((max(clock, 0) / 1000 + self.margin,
                            f"{side}time {clock} ms, the clock of the side to move ({side}: "
                            f"{pos.to_move.value})"))
        if budgets:
            seconds, what = min(budgets)
            return seconds, f"{what} + {self.margin * 1000:.0f} ms margin"
        return self.settings.stall_timeout, f"the stall limit of {self.settings.stall_timeout:g} s"

    async def search(self, probe: Probe, ctx: _Context, pos: Position, setpos: SetPosition,
                     go: Go, where: str) -> _Answer:
        """Send ``position`` + ``go``, wait for ``bestmove`` within the budget,
        judge its timing and legality.  Problems go to ``ctx`` (prefixed with
        ``where``); the answer says what happened.  Gone if the engine dies."""
        try:
            return await self._search(probe, ctx, pos, setpos, go, where)
        except Gone as exc:
            probe.search = None
            raise Gone(f"{where}: {exc.detail}") from None

    async def _search(self, probe: Probe, ctx: _Context, pos: Position, setpos: SetPosition,
                      go: Go, where: str) -> _Answer:
        probe.skip_pending()
        budget, budget_text = self.budget(pos, go)
        search = Search(ctx.spec.name, pos, go, 0.0)
        probe.search = search
        self.evidence.searches.append(search)
        sent = await probe.send(setpos, go)
        search.sent_at = sent
        search.go_line = probe.lines[-1] if probe.lines else None
        position_line = probe.lines[-2] if len(probe.lines) >= 2 else None
        received = await self._bestmove(probe, sent + budget)
        late = False
        if received is None:
            probe.note("#", f"no bestmove within {_ms(budget)} ({budget_text}): sending stop")
            await probe.send(Stop())
            received = await self._bestmove(probe, trio.current_time() + self.settings.stop_timeout)
            if received is None:
                ctx.stalled = True
                search.ended_at = trio.current_time()
                probe.search = None
                probe.dirty = True
                ctx.problem(f"{where}: no bestmove within {_ms(budget)} ({budget_text}), nor within "
                            f"{self.settings.stop_timeout:g} s of the stop that followed",
                            position_line, search.go_line)
                await self.diagnose_silence(probe, ctx, "go")
                return _Answer(None, trio.current_time() - sent, None, "no answer")
            late = True
        ctx.answered = True
        elapsed = received.line.at - sent
        if received.error is not None:
            probe.dirty = True
            probe.search = None
            ctx.problem(f"{where}: malformed bestmove: {received.error}", position_line,
                        search.go_line, received.line)
            return _Answer(None, elapsed, received.line, "malformed")
        assert isinstance(received.message, BestMove)
        move = received.message.move
        try:
            pos.parse_move(move)
        except IllegalMoveError as exc:
            ctx.problem(f"{where}: illegal move {move!r}: {exc.reason}", position_line,
                        received.line)
            return _Answer(move, elapsed, received.line, "illegal")
        if late or elapsed > budget:
            ctx.problem(f"{where}: bestmove {move} after {_ms(elapsed)}, over the budget of "
                        f"{_ms(budget)} ({budget_text})", search.go_line, received.line)
            return _Answer(move, elapsed, received.line, "late")
        ctx.good += 1
        return _Answer(move, elapsed, received.line, "ok")

    async def _bestmove(self, probe: Probe, deadline: float) -> Received | None:
        """The search's bestmove line (well-formed or malformed), or None at the deadline."""
        while True:
            received = await probe.next(deadline)
            if received is None:
                return None
            if received.command == "bestmove" and (received.violation is None or received.error):
                return received

    async def play_game(self, probe: Probe, ctx: _Context, plies: int, label: str) -> str:
        """The engine plays both sides from the start position under clocks,
        sending the whole game each ply as the arbiter does.  Returns ``ok``
        or the kind of the first problem (``illegal``, ``late``, ...)."""
        tc = TimeControl.parse(SELFPLAY_TC)
        margin_ms = int(self.margin * 1000)
        clocks = {color: Clock(tc, timemargin_ms=margin_ms)
                  for color in (self.game.first, self.game.first.other)}
        pos = self.game.start()
        moves: list[str] = []
        verdict = "ok"
        while pos.outcome() is None and len(moves) < plies:
            mover = pos.to_move
            go = go_message(clocks[mover].limits(clocks[mover.other]), mover is self.game.first)
            answer = await self.search(probe, ctx, pos, SetPosition(None, tuple(moves)), go,
                                       f"{label}, ply {len(moves) + 1} ({mover.value})")
            if answer.verdict != "ok":
                verdict = answer.verdict
                break
            assert answer.move is not None
            clocks[mover].stop(answer.elapsed * 1000)
            move = pos.parse_move(answer.move)
            moves.append(move)
            pos = pos.play(move)
        outcome = pos.outcome()
        if outcome is not None:
            ctx.notes.append(f"{label}: {len(moves)} plies, {outcome.result} by "
                             f"{outcome.termination.value}")
        else:
            ctx.notes.append(f"{label}: {len(moves)} plies played")
        return verdict

    def setpos(self, entry: CheckPosition, style: str) -> SetPosition:
        """``position`` for an entry: ``startpos`` + moves, ``fen``, or a ``fen``
        from the middle of the game + the rest of the moves."""
        if style == "fen":
            return SetPosition(entry.position().fen(), ())
        if style == "fen+moves" and len(entry.moves) >= 2:
            cut = len(entry.moves) // 2
            start = play_moves(self.game.start(), entry.moves[:cut])
            return SetPosition(start.fen(), entry.moves[cut:])
        return SetPosition(None, entry.moves)

    async def search_entries(self, probe: Probe, ctx: _Context,
                             entries: list[tuple[CheckPosition, str]], go: Go,
                             restart: bool = True) -> tuple[Probe, list[str]]:
        """Search each (entry, style) and return the (possibly new) probe and
        each entry's verdict.  A crash or a hang costs the process, not the
        rest of the list (unless ``restart`` is False); the list is given up
        after two hangs, or after the first if nothing was answered."""
        verdicts: list[str] = []
        stalls = 0
        for index, (entry, style) in enumerate(entries):
            pos = entry.position()
            where = f"position {index + 1} ({entry.label}, {pos.to_move.value} to move, as {style})"
            if probe is not self.probe or not probe.usable:
                if not restart:
                    break
                probe = await self.fresh(ctx)
            try:
                answer = await self.search(probe, ctx, pos, self.setpos(entry, style), go, where)
            except Gone as exc:
                ctx.problem(exc.detail)
                verdicts.append("crash")
                continue
            verdicts.append(answer.verdict)
            if answer.verdict == "no answer":
                stalls += 1
                if stalls >= 2 or not ctx.answered:
                    left = len(entries) - index - 1
                    if left:
                        ctx.problem(f"gave up after {stalls} position(s) without an answer "
                                    f"({left} positions not tried)")
                    break
        return probe, verdicts

    # -- running -----------------------------------------------------------------------------

    def skip_reason(self, spec: CheckSpec) -> str | None:
        if spec.needs == "none":
            return None
        if self.start_failed is not None:
            return f"not run: {self.start_failed}"
        if spec.needs == "start":
            return None
        if self.game_failed is not None:
            return f"not run: {self.game_failed}"
        if spec.needs == "search" and len(self.stall_streak) >= STALLS_BEFORE_SKIP:
            return (f"not run: the engine gave no usable answer to go in {len(self.stall_streak)} "
                    f"checks in a row ({', '.join(self.stall_streak)})")
        return None

    def safety_deadline(self, spec: CheckSpec) -> float:
        s = self.settings
        per_wait = max(s.stall_timeout, s.ready_timeout, 3.0 + self.margin) + s.stop_timeout + 1.0
        return 30.0 + s.handshake_timeout + spec.searches * per_wait

    async def run_one(self, spec: CheckSpec) -> CheckResult:
        expected = spec.expected_text(self)
        reason = self.skip_reason(spec)
        if reason is not None:
            return CheckResult(spec.name, spec.title, spec.mandatory, Status.SKIP, expected, reason)
        ctx = _Context(spec)
        if self.probe is not None:
            ctx.watch(self.probe)
        started = time.monotonic()
        deadline = self.safety_deadline(spec)
        with trio.move_on_after(deadline) as scope:
            try:
                await spec.run(self, ctx)
            except _Failed:
                pass
            except Gone as exc:
                if not ctx.problems or exc.detail not in ctx.problems[-1]:
                    ctx.problem(exc.detail)
        if scope.cancelled_caught:
            ctx.problem(f"the check did not finish within its safety deadline of {deadline:g} s")
            if self.probe is not None:
                self.probe.dirty = True
        seconds = time.monotonic() - started
        keep = spec.name == "startup.quiet" and self.start_failed is None  # ugi comes next
        if self.probe is not None and not self.probe.usable and not keep:
            await self.close_probe()
        if spec.needs == "search":
            if ctx.stalled or (ctx.problems and not ctx.good):
                self.stall_streak.append(spec.name)
            else:
                self.stall_streak = []
        return self.result(spec, ctx, expected, seconds)

    def result(self, spec: CheckSpec, ctx: _Context, expected: str, seconds: float) -> CheckResult:
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
        transcript = self.transcript(ctx) if status in (Status.FAIL, Status.WARN) else []
        return CheckResult(spec.name, spec.title, spec.mandatory, status, expected, happened,
                           seconds, list(ctx.problems) + list(ctx.warnings), transcript)

    @staticmethod
    def transcript(ctx: _Context) -> list[str]:
        """The lines worth showing: each problem's lines with a little context,
        or, without any, the start and end of what the check exchanged."""
        lines: list[Line] = []
        for probe, start in ctx.slices:
            lines.extend(probe.lines[start:])
        if not lines:
            return [line.render() for line in ctx.focus[:SHOWN_LINES]]
        keep: set[int] = set()
        index_of = {id(line): i for i, line in enumerate(lines)}
        for line in ctx.focus:
            i = index_of.get(id(line))
            if i is not None:
                keep.update(range(max(0, i - 2), min(len(lines), i + 3)))
        if not keep:
            keep.update(range(min(8, len(lines))))
            keep.update(range(max(0, len(lines) - 16), len(lines)))
        chosen = sorted(keep)
        if len(chosen) > SHOWN_LINES:
            chosen = chosen[:SHOWN_LINES // 2] + chosen[-SHOWN_LINES // 2:]
        shown: list[str] = []
        previous = -1
        for i in chosen:
            if previous >= 0 and i > previous + 1:
                shown.append(f"... {i - previous - 1} lines ...")
            shown.append(lines[i].render())
            previous = i
        extra = [line.render() for line in ctx.focus if id(line) not in index_of][:5]
        return extra + shown

    async def run(self, on_result: Callable[[CheckResult], None] | None = None) -> CheckReport:
        started = time.monotonic()
        try:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                try:
                    for spec in CHECKS:
                        result = await self.run_one(spec)
                        self.report.results.append(result)
                        if on_result is not None:
                            on_result(result)
                finally:
                    await self.close_probe()
                    nursery.cancel_scope.cancel()
        finally:
            self.report.seconds = time.monotonic() - started
            self.report.processes = self.processes
        return self.report


# --- start-up ------------------------------------------------------------------------------------


@_check("startup.quiet", "no stray output before ugi",
        "nothing on stdout before `ugi` but `info` lines (watched for the first "
        "moments after start)", needs="none")
async def _startup_quiet(checker: _Checker, ctx: _Context) -> None:
    try:
        probe = await checker.spawn()
    except Gone as exc:
        checker.start_failed = f"the engine could not be started: {exc.detail}"
        raise ctx.fail(f"cannot start the engine: {exc.detail}")
    ctx.watch(probe)
    with trio.move_on_after(checker.settings.quiet_wait):
        while probe.fault is None:
            await probe.arrival.wait()
    for received in probe.before_ugi:
        if received.message is not None or received.error is not None:
            ctx.problem(f"wrote {received.line.text!r} before ugi: protocol output before ugi is "
                        "not allowed (specs/protocol.md §Engine to arbiter)", received.line)
        elif received.command is not None:
            ctx.warn(f"wrote {received.line.text!r} before ugi (a banner?): the arbiter ignores "
                     "it, but the protocol asks for silence until ugi", received.line)
    if probe.fault is not None:
        checker.start_failed = f"the engine ended before ugi: {describe_fault(probe)}"
        raise ctx.fail(f"{describe_fault(probe)} before ugi was sent")
    probe.skip_pending()
    if not ctx.problems and not ctx.warnings:
        ctx.notes.append(f"silent for {checker.settings.quiet_wait:g} s")


@_check("startup.handshake", "ugi answered: id name, id author, ugiok",
        "`ugi` answered with `id name`, `id author` and `ugiok` within {handshake} s; "
        "between them only `option` and `info` lines", needs="none")
async def _startup_handshake(checker: _Checker, ctx: _Context) -> None:
    if checker.start_failed is not None:
        raise ctx.fail(checker.start_failed)
    probe = checker.probe
    assert probe is not None
    ctx.watch(probe)
    try:
        sent = trio.current_time()
        await checker.handshake(probe, ctx, judge=True)
    except (_Failed, Gone) as exc:
        detail = exc.detail if isinstance(exc, Gone) else str(exc)
        if isinstance(exc, Gone):
            ctx.problem(f"{detail} during the handshake", probe.lines[-1] if probe.lines else None)
        checker.start_failed = f"the handshake failed ({detail})"
        raise _Failed(detail) from None
    seen = checker.handshake_lines
    ugiok = seen[-1]
    checker.report.id_name = probe.id_name
    checker.report.id_author = probe.author
    if probe.id_name is None:
        ctx.problem("no `id name` before ugiok", ugiok.line)
    if probe.author is None:
        ctx.problem("no `id author` before ugiok", ugiok.line)
    for received in seen:
        if received.command in ("option", "id") and received.error is None:
            continue
        if received.command == "id" and received.error is not None:
            ctx.problem(f"malformed id line: {received.error}", received.line)
        elif received.message is not None and received.violation is not None:
            ctx.problem(f"{received.line.text!r} during the handshake: {received.violation}",
                        received.line)
        elif received.error is not None and received.command != "option":
            ctx.problem(f"malformed line during the handshake: {received.error}", received.line)
    ctx.notes.append(f"ugiok after {_ms(ugiok.line.at - sent)}: {probe.id_name!r} by {probe.author!r}")


@_check("startup.options", "options well-formed and settable",
        "every `option` line well-formed (a known type; a spin's default within min..max; a "
        "combo's default among its vars); `setoption` of each option's default, then `isready`, "
        "answered with `readyok` within {ready} s", needs="start")
async def _startup_options(checker: _Checker, ctx: _Context) -> None:
    probe = checker.probe
    if probe is None or not probe.usable:
        probe = await checker.fresh(ctx, new_game=False)
    ctx.watch(probe)
    for received in checker.handshake_lines:
        if received.command == "option" and received.error is not None:
            ctx.problem(f"malformed option: {received.error}", received.line)
        elif received.command == "option" and received.violation is not None:
            ctx.problem(f"bad option: {received.violation}", received.line)
    checker.report.options = [decl.to_line() for decl in probe.options.values()]
    messages: list[ArbiterMessage] = []
    for decl in probe.options.values():
        if decl.type == "button" or decl.default is None:
            continue
        if decl.name.lower() in (name.lower() for name in checker.config.options):
            continue  # the user's value stays
        messages.append(SetOption(decl.name, decl.default))
    if messages:
        await probe.send(*messages)
    took = await checker.ready(probe, ctx, f"after setting {len(messages)} options to their defaults")
    ctx.notes.append(f"{len(probe.options)} options; readyok {_ms(took)} after {len(messages)} "
                     "setoption lines")


@_check("startup.game", "plays the game",
        "the `UGI_Game` combo lists {game}, or there is no `UGI_Game` option (the engine is then "
        "trusted to be configured for {game}; the searches below test it)", needs="start")
async def _startup_game(checker: _Checker, ctx: _Context) -> None:
    probe = checker.probe or await checker.fresh(ctx, new_game=False)
    decl = probe.session.option(GAME_OPTION)
    name = checker.game.name
    if decl is None:
        ctx.notes.append(f"no {GAME_OPTION} option: plays what it was configured for")
        return
    if decl.type != "combo":
        ctx.warn(f"{GAME_OPTION} is a {decl.type} option, not a combo: the arbiter ignores it and "
                 "sends no game selection")
        return
    if not probe.session.plays(name):
        checker.game_failed = f"the engine does not play {name}"
        raise ctx.fail(f"its {GAME_OPTION} combo does not list {name} (it lists: {', '.join(decl.vars)})")
    ctx.notes.append(f"{GAME_OPTION} lists {', '.join(decl.vars)}")


# --- isready ----------------------------------------------------------------------------------------


@_check("isready.idle", "isready before a search",
        "`readyok` within {ready} s of `isready`, before any search", needs="start")
async def _isready_idle(checker: _Checker, ctx: _Context) -> None:
    probe = await checker.fresh(ctx, new_game=False)
    took = await checker.ready(probe, ctx, "before any search")
    ctx.notes.append(f"readyok after {_ms(took)}")


@_check("isready.newgame", "isready after uginewgame",
        "`readyok` within {ready} s of `isready` sent after `setoption name UGI_Game value {game}` "
        "(when declared) and `uginewgame`")
async def _isready_newgame(checker: _Checker, ctx: _Context) -> None:
    probe = await checker.fresh(ctx, new_game=False)
    await checker.new_game(probe, ctx)


# --- positions ------------------------------------------------------------------------------------


def _movetime(checker: _Checker) -> Go:
    return Go(movetime=checker.settings.movetime_ms)


async def _search_list(checker: _Checker, ctx: _Context, entries: list[tuple[CheckPosition, str]],
                       go: Go | None = None) -> None:
    probe = await checker.fresh(ctx)
    _, verdicts = await checker.search_entries(probe, ctx, entries, go or _movetime(checker))
    if not ctx.problems:
        ctx.notes.append(f"{len(verdicts)} legal answers")


@_check("position.startpos", "position startpos",
        "a legal `bestmove` within {movetime} ms (+{margin} ms) after `position startpos` (p1 to "
        "move) and `position startpos moves <one move>` (p2 to move)", needs="search")
async def _position_startpos(checker: _Checker, ctx: _Context) -> None:
    start = CheckPosition(checker.game.name, "sample", (), False)
    await _search_list(checker, ctx, [(start, "startpos"), (checker.entry("early-p2"), "startpos")])


@_check("position.fen", "position fen",
        "a legal `bestmove` after `position fen <position string>`, with p1 and with p2 to move",
        needs="search")
async def _position_fen(checker: _Checker, ctx: _Context) -> None:
    await _search_list(checker, ctx, [(checker.entry("midgame-p1"), "fen"),
                                      (checker.entry("midgame-p2"), "fen")])


@_check("position.moves", "long move lists",
        "a legal `bestmove` after long move lists (45 plies or more) from `startpos` and from a "
        "`fen`, with p1 and with p2 to move", needs="search", searches=4)
async def _position_moves(checker: _Checker, ctx: _Context) -> None:
    long1, long2 = checker.entry("long-p1"), checker.entry("long-p2")
    await _search_list(checker, ctx, [(long1, "startpos"), (long2, "startpos"),
                                      (long1, "fen+moves"), (long2, "fen+moves")])


@_check("isready.between-moves", "isready between moves",
        "after a `bestmove`, `isready` answered with `readyok` within {ready} s, before the next "
        "`position` and `go`", needs="search", searches=4)
async def _isready_between(checker: _Checker, ctx: _Context) -> None:
    probe = await checker.fresh(ctx)
    entry = checker.entry("midgame-p1")
    pos = entry.position()
    moves = entry.moves
    for _ in range(2):
        answer = await checker.search(probe, ctx, pos, SetPosition(None, moves), _movetime(checker),
                                      f"{pos.to_move.value} to move at ply {len(moves)}")
        if answer.verdict != "ok":
            raise _Failed()
        took = await checker.ready(probe, ctx, "right after a bestmove")
        ctx.notes.append(f"readyok {_ms(took)} after isready")
        move = pos.parse_move(answer.move)
        moves, pos = moves + (move,), pos.play(move)
        if pos.outcome() is not None:
            break


# --- go ----------------------------------------------------------------------------------------------


def _clock_go(checker: _Checker, pos: Position, mine: int, theirs: int, **extra: int) -> Go:
    p1 = pos.to_move is checker.game.first
    return Go(p1time=mine if p1 else theirs, p2time=theirs if p1 else mine, **extra)


async def _go_pair(checker: _Checker, ctx: _Context, make: Callable[[Position], Go]) -> None:
    probe = await checker.fresh(ctx)
    for feature in ("midgame-p1", "midgame-p2"):
        entry = checker.entry(feature)
        pos = entry.position()
        go = make(pos)
        answer = await checker.search(probe, ctx, pos, SetPosition(None, entry.moves), go,
                                      f"`{go.to_line()}` with {pos.to_move.value} to move")
        if answer.move is not None:
            ctx.notes.append(f"{pos.to_move.value}: {answer.move} after {_ms(answer.elapsed)}")
        if not probe.usable:
            probe = await checker.fresh(ctx)


@_check("go.clock", "go with both clocks",
        "with `p1time`/`p2time` only, the mover's clock 1500 ms and the other's 60000 ms: a legal "
        "`bestmove` within the mover's clock (+{margin} ms), with p1 and with p2 to move (an "
        "engine that reads the other side's clock runs over)", needs="search")
async def _go_clock(checker: _Checker, ctx: _Context) -> None:
    await _go_pair(checker, ctx, lambda pos: _clock_go(checker, pos, 1500, 60000))


@_check("go.increment", "go with increments",
        "with the mover's clock (300 ms) smaller than its increment (2000 ms): a legal `bestmove` "
        "within the clock (+{margin} ms); the increment is added after the move", needs="search")
async def _go_increment(checker: _Checker, ctx: _Context) -> None:
    await _go_pair(checker, ctx, lambda pos: _clock_go(checker, pos, 300, 300, p1inc=2000, p2inc=2000))


@_check("go.movestogo", "go with movestogo",
        "with `movestogo 1` and 1000 ms on each clock: a legal `bestmove` within the clock "
        "(+{margin} ms)", needs="search")
async def _go_movestogo(checker: _Checker, ctx: _Context) -> None:
    await _go_pair(checker, ctx, lambda pos: _clock_go(checker, pos, 1000, 1000, movestogo=1))


@_check("go.movetime", "go movetime",
        "with `movetime 300`: a legal `bestmove` within 300 ms (+{margin} ms)", needs="search")
async def _go_movetime(checker: _Checker, ctx: _Context) -> None:
    await _go_pair(checker, ctx, lambda pos: Go(movetime=300))


@_check("go.depth", "go depth",
        "with `depth 2`: a legal `bestmove` within the stall limit of {stall} s", needs="search")
async def _go_depth(checker: _Checker, ctx: _Context) -> None:
    await _go_pair(checker, ctx, lambda pos: Go(depth=2))


@_check("go.nodes", "go nodes",
        "with `nodes 500`: a legal `bestmove` within the stall limit of {stall} s", needs="search")
async def _go_nodes(checker: _Checker, ctx: _Context) -> None:
    await _go_pair(checker, ctx, lambda pos: Go(nodes=500))


async def _infinite(checker: _Checker, ctx: _Context, ask_ready: bool) -> None:
    """``go infinite``, optionally ``isready`` mid-search, then ``stop``."""
    settings = checker.settings
    probe = await checker.fresh(ctx)
    entry = checker.entry("midgame-p1")
    pos = entry.position()
    probe.skip_pending()
    search = Search(ctx.spec.name, pos, Go(infinite=True), 0.0)
    probe.search = search
    checker.evidence.searches.append(search)
    sent = await probe.send(SetPosition(None, entry.moves), Go(infinite=True))
    search.sent_at = sent
    go_line = probe.lines[-1]
    early: Received | None = None
    if ask_ready:
        await trio.sleep(min(0.1, settings.infinite_wait))
        asked = await probe.send(IsReady())
        while True:
            received = await probe.next(asked + settings.ready_timeout)
            if received is None:
                ctx.problem(f"no readyok within {settings.ready_timeout:g} s of isready during go "
                            "infinite (does the engine read its input while it searches?)",
                            go_line, probe.lines[-1])
                break
            if received.command == "bestmove" and early is None:
                early = received
            elif isinstance(received.message, ReadyOk):
                ctx.notes.append(f"readyok {_ms(received.line.at - asked)} after isready, mid-search")
                break
    while early is None:  # no bestmove may come before stop
        received = await probe.next(sent + settings.infinite_wait)
        if received is None:
            break
        if received.command == "bestmove":
            early = received
    if early is not None:
        ctx.answered = True
        text = (f"bestmove {_ms(early.line.at - sent)} after go infinite, before any stop: under "
                "infinite an engine must hold its bestmove until stop (the arbiter accepts it)")
        if ask_ready:
            ctx.warn("could not test isready mid-search: " + text, go_line, early.line)
        else:
            ctx.warn(text, go_line, early.line)
        if early.error is not None:
            probe.dirty = True
            raise ctx.fail(f"malformed bestmove: {early.error}", early.line)
        return
    stopped = await probe.send(Stop())
    received = await checker._bestmove(probe, stopped + settings.stop_timeout)
    if received is None:
        probe.dirty = True
        if ask_ready:
            ctx.notes.append("(no bestmove after stop: see go.infinite)")
            return
        ctx.stalled = True
        ctx.problem(f"no bestmove within {settings.stop_timeout:g} s of stop after go infinite",
                    go_line, probe.lines[-1])
        await checker.diagnose_silence(probe, ctx, "stop")
        return
    ctx.answered = True
    if received.error is not None:
        probe.dirty = True
        raise ctx.fail(f"malformed bestmove after stop: {received.error}", received.line)
    if not ask_ready:
        move = received.message.move  # type: ignore[union-attr]
        try:
            pos.parse_move(move)
        except IllegalMoveError as exc:
            ctx.problem(f"illegal move {move!r} after stop: {exc.reason}", received.line)
        ctx.notes.append(f"bestmove {move} {_ms(received.line.at - stopped)} after stop")


@_check("go.infinite", "go infinite, then stop",
        "after `go infinite`, no `bestmove` for {infinite} s (until `stop`: WARN if one comes "
        "early); after `stop`, a legal `bestmove` within {stop} s", needs="game")
async def _go_infinite(checker: _Checker, ctx: _Context) -> None:
    await _infinite(checker, ctx, ask_ready=False)


@_check("isready.searching", "isready during go infinite",
        "`readyok` within {ready} s of `isready` sent during `go infinite` (WARN only: the arbiter "
        "never needs it mid-search)", mandatory=False, needs="search")
async def _isready_searching(checker: _Checker, ctx: _Context) -> None:
    await _infinite(checker, ctx, ask_ready=True)


# --- legality and a whole game -----------------------------------------------------------------------------


_STYLES = ("startpos", "fen", "fen+moves")


@_check("legality", "legal moves in positions from real games",
        "a legal `bestmove` (checked by the referee) within {movetime} ms (+{margin} ms) in each of "
        "{positions} positions from real games of {game}, special cases included "
        "(specs/check.md §Positions), sent alternately as startpos+moves, fen and fen+moves",
        needs="search", searches=30)
async def _legality(checker: _Checker, ctx: _Context) -> None:
    entries = [(entry, _STYLES[i % 3]) for i, entry in enumerate(checker.positions)]
    probe = await checker.fresh(ctx)
    _, verdicts = await checker.search_entries(probe, ctx, entries, _movetime(checker))
    if not ctx.problems:
        features = sorted({entry.feature for entry, _ in entries})
        ctx.notes.append(f"{len(verdicts)} positions ({', '.join(features)})")


@_check("game.selfplay", "a whole game against itself",
        "a game against itself from the start position under clocks of {tc} (each ply sent as "
        "`position startpos moves ...` with both clocks, as in a match), up to {plies} plies: "
        "every move legal and within the mover's clock (+{margin} ms)", needs="search", searches=60)
async def _selfplay(checker: _Checker, ctx: _Context) -> None:
    probe = await checker.fresh(ctx)
    await checker.play_game(probe, ctx, checker.settings.selfplay_plies, "self-play")


# --- query ------------------------------------------------------------------------------------------------


@_check("query", "query answers agree with the referee",
        "`response` to `query gameover`, `query p1turn` and `query result` within {ready} s, "
        "agreeing with the referee, in positions with either side to move and at the end of "
        "finished games (WARN only: the arbiter never trusts them)", mandatory=False, searches=12)
async def _query(checker: _Checker, ctx: _Context) -> None:
    probe = await checker.fresh(ctx)
    cases: list[tuple[str, tuple[str, ...]]] = [("the start position", ()),
                                                ("early, p2 to move", checker.entry("early-p2").moves),
                                                ("a middle game", checker.entry("midgame-p1").moves)]
    for final in final_positions(checker.game.name):
        cases.append((f"a finished game ({final.result})", final.moves))
    checked = 0
    for label, moves in cases:
        pos = play_moves(checker.game.start(), moves)
        await probe.send(SetPosition(None, moves))
        for what in ("gameover", "p1turn", "result"):
            probe.skip_pending()
            asked = await probe.send(Query(what))
            deadline = asked + checker.settings.ready_timeout
            while True:
                received = await probe.next(deadline)
                if received is None:
                    probe.dirty = True
                    raise ctx.fail(f"no response to `query {what}` within {checker.settings.ready_timeout:g} s "
                                   f"(in {label}); query is optional for this arbiter, but other UGI "
                                   "managers rely on it", probe.lines[-1])
                if received.command == "response":
                    break
            if received.error is not None:
                ctx.problem(f"`query {what}` in {label}: malformed response: {received.error}",
                            received.line)
                continue
            want = query_answer(pos, what)
            got = received.message.value  # type: ignore[union-attr]
            checked += 1
            if got != want:
                ctx.problem(f"`query {what}` in {label}: the engine says {got}, the referee {want}",
                            received.line)
    ctx.notes.append(f"{checked} answers in {len(cases)} positions")


# --- quit and repetition -----------------------------------------------------------------------------------


@_check("quit", "quit ends the process and its children",
        "after `quit`, the process exits within {grace} s and no process of its group (or one it "
        "started) is left running", needs="start", searches=2)
async def _quit(checker: _Checker, ctx: _Context) -> None:
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
    probe.note("#", f"exited ({status}) {_ms(took)} after quit")
    left = leftovers(root, earlier)
    if left:
        await trio.sleep(0.1)  # a child on its way out gets a moment
        left = leftovers(root, earlier)
    if left:
        described = ", ".join(f"pid {pid} ({clip(' '.join(cmdline(pid).split()), 60)})"
                              for pid in left[:5])
        note = probe.note("#", f"left running: {described}")
        raise ctx.fail(f"the engine exited but left {len(left)} process(es) running: {described}", note)
    ctx.notes.append(f"exited ({status}) {_ms(took)} after quit")


@_check("repeat", "same verdicts twice in one fresh process",
        "in one fresh process, the {game} positions and a game of up to {repeat_plies} plies "
        "played twice in a row (separated by `uginewgame`) get the same verdicts both times: "
        "no state kept wrongly between games", needs="search", searches=80)
async def _repeat(checker: _Checker, ctx: _Context) -> None:
    await checker.close_probe()
    probe = await checker.fresh(ctx)
    entries = [(entry, _STYLES[i % 3]) for i, entry in enumerate(checker.positions)]
    labels = [f"position {i + 1} ({entry.label})" for i, (entry, _) in enumerate(entries)]
    labels.append(f"the game of up to {checker.settings.repeat_plies} plies")
    rounds: list[list[str]] = []
    for number in (1, 2):
        round_ctx = _Context(ctx.spec)
        if number == 2:
            await checker.new_game(probe, ctx)
        probe, verdicts = await checker.search_entries(probe, round_ctx, entries,
                                                       _movetime(checker), restart=False)
        if len(verdicts) == len(entries) and probe.usable:
            verdicts.append(await checker.play_game(probe, round_ctx, checker.settings.repeat_plies,
                                                    f"round {number} game"))
        ctx.focus.extend(round_ctx.focus)
        ctx.answered = ctx.answered or round_ctx.answered
        ctx.good += round_ctx.good
        ctx.stalled = ctx.stalled or round_ctx.stalled
        if len(verdicts) < len(labels) or not probe.usable:
            first = round_ctx.problems[0] if round_ctx.problems else "the engine became unusable"
            raise ctx.fail(f"round {number} did not complete in one process ({first}): "
                           "nothing to compare")
        rounds.append(verdicts)
        ctx.notes.extend(round_ctx.notes)
    differences = [f"{label}: round 1 {_verdict(a)}, round 2 {_verdict(b)}"
                   for label, a, b in zip(labels, rounds[0], rounds[1], strict=False) if a != b]
    if differences:
        ctx.problem(f"the rounds differ in {len(differences)} place(s), so the engine's behaviour "
                    f"depends on what it did before; {differences[0]}")
        ctx.problems.extend(differences[1:4])
    else:
        bad = sum(1 for verdict in rounds[0] if verdict != "ok")
        same = f" (the same {bad} problem(s) twice: see legality)" if bad else ""
        ctx.notes.insert(0, f"{len(labels)} verdicts, the same in both rounds{same}")


def _verdict(verdict: str) -> str:
    return {"ok": "legal and in time", "late": "over the time budget"}.get(verdict, verdict)


# --- aggregates over the whole run ---------------------------------------------------------------------------


@_check("info.parse", "info lines parse",
        "every `info` line parses: known fields with valid values (specs/protocol.md §Engine to "
        "arbiter)", needs="start", searches=0)
async def _info_parse(checker: _Checker, ctx: _Context) -> None:
    evidence = checker.evidence
    for line, error in evidence.info_errors[:10]:
        ctx.problem(f"malformed info: {error}", line)
    if len(evidence.info_errors) > 10:
        ctx.problems.append(f"... and {len(evidence.info_errors) - 10} more malformed info lines")
    if evidence.info_total == 0:
        ctx.warn("the engine wrote no info lines: records will have no evaluation, depth or pv")
    ctx.notes.append(f"{evidence.info_total} info lines")


@_check("info.pv", "pv lines are legal",
        "every `info ... pv` is a legal line of play from the searched position (WARN only)",
        mandatory=False, needs="start", searches=0)
async def _info_pv(checker: _Checker, ctx: _Context) -> None:
    evidence = checker.evidence
    for line, problem in evidence.pv_problems[:10]:
        ctx.problem(problem, line)
    if len(evidence.pv_problems) > 10:
        ctx.problems.append(f"... and {len(evidence.pv_problems) - 10} more")
    ctx.notes.append(f"{evidence.pv_checked} pvs checked")


@_check("output.unasked", "nothing unasked or malformed",
        "no malformed line and nothing unasked: no second `bestmove`, no `readyok` or `response` "
        "without a request, no handshake lines after `ugiok`", needs="start", searches=0)
async def _output_unasked(checker: _Checker, ctx: _Context) -> None:
    for line, problem in checker.evidence.violations[:10]:
        ctx.problem(f"{line.text!r}: {problem}", line)
    if len(checker.evidence.violations) > 10:
        ctx.problems.append(f"... and {len(checker.evidence.violations) - 10} more")


@_check("output.flood", "nothing floods",
        "per search at most " + f"{FLOOD_LINES} + {FLOOD_LINES_PER_S}/s `info` lines and "
        f"{FLOOD_BYTES // 1024} KiB + {FLOOD_BYTES_PER_S // 1024} KiB/s, no line longer than "
        f"{limits.MAX_LINE_BYTES} bytes", needs="start", searches=0)
async def _output_flood(checker: _Checker, ctx: _Context) -> None:
    worst = 0
    for search in checker.evidence.searches:
        end = search.ended_at if search.ended_at is not None else trio.current_time()
        seconds = max(0.0, end - search.sent_at) if search.sent_at else 0.0
        worst = max(worst, search.info_lines)
        if (search.info_lines > FLOOD_LINES + FLOOD_LINES_PER_S * seconds
                or search.info_bytes > FLOOD_BYTES + FLOOD_BYTES_PER_S * seconds):
            ctx.problem(f"{search.info_lines} info lines ({search.info_bytes // 1024} KiB) in a search of "
                        f"{_ms(seconds)} (`{search.go.to_line()}`, check {search.check})", search.go_line)
    for line, problem in checker.evidence.floods:
        ctx.problem(problem, line)
    if len(ctx.problems) > 10:
        ctx.problems[10:] = [f"... and {len(ctx.problems) - 10} more"]
    ctx.notes.append(f"at most {worst} info lines in one search")


@_check("output.flush", "output flushed per line",
        "each answer arrives without further input: the engine flushes stdout after every line",
        needs="none", searches=0)
async def _output_flush(checker: _Checker, ctx: _Context) -> None:
    for lines, problem in checker.evidence.flush:
        ctx.problem(problem, *lines)


# Order of the report: the aggregates last, after every process has been judged.
_ORDER = ["startup.quiet", "startup.handshake", "startup.options", "startup.game", "isready.idle",
          "isready.newgame", "position.startpos", "position.fen", "position.moves",
          "isready.between-moves", "go.clock", "go.increment", "go.movestogo", "go.movetime",
          "go.depth", "go.nodes", "go.infinite", "isready.searching", "legality", "game.selfplay",
          "query", "quit", "repeat", "info.parse", "info.pv", "output.unasked", "output.flood",
          "output.flush"]
CHECKS.sort(key=lambda spec: _ORDER.index(spec.name))


# --- entry points --------------------------------------------------------------------------------------------


async def run_checks(game: str | Game, config: EngineConfig, settings: CheckSettings | None = None,
                     *, log_dir: str | None = None,
                     on_result: Callable[[CheckResult], None] | None = None) -> CheckReport:
    """Run the whole suite against one engine; ``on_result`` sees each result as it comes."""
    the_game = get_game(game) if isinstance(game, str) else game
    checker = _Checker(the_game, config, settings or CheckSettings(), log_dir)
    return await checker.run(on_result)


def check_engine(game: str | Game, config: EngineConfig, settings: CheckSettings | None = None,
                 **kwargs) -> CheckReport:
    """:func:`run_checks` in a fresh trio run."""
    return trio.run(lambda: run_checks(game, config, settings, **kwargs))
