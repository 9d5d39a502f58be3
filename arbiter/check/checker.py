"""What every check works with: the engine under examination and the verdict being built.

A check is an async function of a :class:`Checker` (the run's engine
processes, settings and positions, with the conversation steps the checks
share: handshake, new game, ``isready``, a judged search, a whole game) and a
:class:`Context` (the problems, warnings and notes of this one check, and the
transcript lines that show them: :mod:`arbiter.check.context`, re-exported
here with the rest of a check's declaration).  :func:`check` declares one, with its name,
title and expected behaviour as ``specs/check.md`` words them; the check
modules (``checks_*.py``) hold the checks, :mod:`arbiter.check.runner` runs
them in the report's order.

A check ends early by raising the :class:`Failed` returned by
:meth:`Context.fail` (its problem is already recorded), or lets
:class:`~arbiter.check.probe.Gone` through when the engine died.
"""

from __future__ import annotations

from dataclasses import dataclass

import trio

from arbiter.check.context import (
    SHOWN_LINES,
    CheckSpec,
    Context,
    Failed,
    NotApplicable,
    check,
    ms,
)
from arbiter.check.positions import CheckPosition, positions
from arbiter.check.probe import Evidence, Gone, Line, Probe, Received, Search
from arbiter.check.report import CheckReport, CheckSettings
from arbiter.clock import Clock, TimeControl
from arbiter.engine import EngineConfig, EngineError, EngineTimeouts
from arbiter.games import Game, IllegalMoveError, Position, play_moves
from protocol.codec import ProtocolError
from protocol.messages import (
    ArbiterMessage,
    BestMove,
    Go,
    IsReady,
    ReadyOk,
    SetOption,
    SetPosition,
    Stop,
    Ugi,
    UgiNewGame,
    UgiOk,
)
from protocol.search import go_message

__all__ = ["Failed", "NotApplicable", "Context", "CheckSpec", "check", "Answer", "Checker", "ms", "SELFPLAY_TC",
           "SHOWN_LINES"]

#: Clocks of the self-play game and of the repeat rounds.
SELFPLAY_TC = "3+0.03"
#: Seconds the flush diagnosis watches an engine whose input was closed.
DIAGNOSIS_WAIT = 0.5
#: Seconds of grace (after SIGTERM) for the checker's engine processes.
TERM_GRACE = 0.5


@dataclass
class Answer:
    move: str | None
    elapsed: float  # seconds from the end of the go write to the bestmove line
    line: Line | None
    verdict: str  # ok, illegal, late, malformed, no answer


class Checker:
    """One run against one engine: its processes (one at a time), settings,
    positions, the evidence the whole-run checks judge, and the report
    being filled.  ``start_failed`` and ``game_failed`` are set by the
    start-up checks and make the runner skip what depends on them."""

    def __init__(self, game: Game, config: EngineConfig, settings: CheckSettings,
                 log_dir: str | None):
        self.game = game
        self.config = config
        self.settings = settings
        self.log_dir = log_dir
        self.timeouts = EngineTimeouts(handshake=settings.handshake_timeout,
                                       ready=settings.ready_timeout, stop=settings.stop_timeout,
                                       quit_grace=settings.quit_grace, term_grace=TERM_GRACE)
        self.margin = max(settings.margin_ms, config.timemargin_ms) / 1000
        self.evidence = Evidence()
        self.nursery: trio.Nursery | None = None
        self.probe: Probe | None = None
        self.processes = 0
        self.start_failed: str | None = None
        self.game_failed: str | None = None
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

    def movetime_go(self) -> Go:
        """The ``go`` of the position and legality checks."""
        return Go(movetime=self.settings.movetime_ms)

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

    async def fresh(self, ctx: Context, new_game: bool = True) -> Probe:
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

    # -- the conversation steps --------------------------------------------------------------

    async def handshake(self, probe: Probe, ctx: Context, *, judge: bool) -> None:
        """``ugi`` to ``ugiok``, then the configured options; raises Failed or Gone."""
        await probe.send(Ugi())
        deadline = trio.current_time() + self.settings.handshake_timeout
        seen: list[Received] = []
        while True:
            received = await probe.next(deadline)
            if received is None:
                text = f"no ugiok within {self.settings.handshake_timeout:g} s of ugi"
                ctx.problem(text, probe.lines[-1] if probe.lines else None)
                await self.diagnose_silence(probe, ctx, "ugi")
                raise Failed(text)
            seen.append(received)
            if isinstance(received.message, UgiOk) and received.violation is None:
                break
        if judge:
            self.handshake_lines = seen
        if self.config.options:
            await probe.send(*self.configured_options(probe, ctx))

    def configured_options(self, probe: Probe, ctx: Context) -> list[SetOption]:
        """``setoption`` for each option of the engine spec; Failed if the
        engine does not declare one or rejects its value."""
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
        return messages

    async def new_game(self, probe: Probe, ctx: Context) -> None:
        """Select the game (if the engine has the option), ``uginewgame``, ``isready``."""
        messages: list[ArbiterMessage] = []
        decl = probe.session.game_option
        if decl is not None and probe.session.plays(self.game.name):
            messages.append(SetOption(decl.name, decl.validate_value(self.game.name)))
        messages.append(UgiNewGame())
        await probe.send(*messages)
        await self.ready(probe, ctx, "after uginewgame")
        probe.game_selected = True

    async def ready(self, probe: Probe, ctx: Context, when: str) -> float:
        """``isready`` -> ``readyok``; the seconds it took.  Failed on a timeout."""
        sent = await probe.send(IsReady())
        deadline = sent + self.settings.ready_timeout
        while True:
            received = await probe.next(deadline)
            if received is None:
                ctx.problem(f"no readyok within {self.settings.ready_timeout:g} s of isready ({when})",
                            probe.lines[-1] if probe.lines else None)
                await self.diagnose_silence(probe, ctx, "isready")
                raise Failed()
            if isinstance(received.message, ReadyOk) and received.violation is None:
                return received.line.at - sent

    async def diagnose_silence(self, probe: Probe, ctx: Context, asked: str) -> None:
        """After a missing answer: close the engine's input and watch.  Output
        that appears as the engine exits (its stdout closing with it) was
        sitting in a buffer: the engine does not flush after each line.
        Output while it keeps running is only a late answer."""
        if probe.fault is not None:
            return
        lines_before = len(probe.lines)
        await probe.close_input()
        with trio.move_on_after(DIAGNOSIS_WAIT):
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

    def start_search(self, probe: Probe, ctx: Context, pos: Position, go: Go) -> Search:
        """Record a search about to be sent: the probe attributes the engine's
        ``info`` lines to it, the whole-run checks judge it."""
        probe.skip_pending()
        search = Search(ctx.spec.name, pos, go, 0.0)
        probe.search = search
        self.evidence.searches.append(search)
        return search

    async def search(self, probe: Probe, ctx: Context, pos: Position, setpos: SetPosition,
                     go: Go, where: str) -> Answer:
        """Send ``position`` + ``go``, wait for ``bestmove`` within the budget,
        judge its timing and legality.  Problems go to ``ctx`` (prefixed with
        ``where``); the answer says what happened.  Gone if the engine dies."""
        try:
            return await self._search(probe, ctx, pos, setpos, go, where)
        except Gone as exc:
            probe.search = None
            raise Gone(f"{where}: {exc.detail}") from None

    async def _search(self, probe: Probe, ctx: Context, pos: Position, setpos: SetPosition,
                      go: Go, where: str) -> Answer:
        budget, budget_text = self.budget(pos, go)
        search = self.start_search(probe, ctx, pos, go)
        sent = await probe.send(setpos, go)
        search.sent_at = sent
        search.go_line = probe.lines[-1] if probe.lines else None
        position_line = probe.lines[-2] if len(probe.lines) >= 2 else None
        received = await self.bestmove(probe, sent + budget)
        late = False
        if received is None:
            probe.note("#", f"no bestmove within {ms(budget)} ({budget_text}): sending stop")
            await probe.send(Stop())
            received = await self.bestmove(probe, trio.current_time() + self.settings.stop_timeout)
            if received is None:
                ctx.stalled = True
                search.ended_at = trio.current_time()
                probe.search = None
                probe.dirty = True
                ctx.problem(f"{where}: no bestmove within {ms(budget)} ({budget_text}), nor within "
                            f"{self.settings.stop_timeout:g} s of the stop that followed",
                            position_line, search.go_line)
                await self.diagnose_silence(probe, ctx, "go")
                return Answer(None, trio.current_time() - sent, None, "no answer")
            late = True
        ctx.answered = True
        elapsed = received.line.at - sent
        if received.error is not None:
            probe.dirty = True
            probe.search = None
            ctx.problem(f"{where}: malformed bestmove: {received.error}", position_line,
                        search.go_line, received.line)
            return Answer(None, elapsed, received.line, "malformed")
        assert isinstance(received.message, BestMove)
        move = received.message.move
        try:
            pos.parse_move(move)
        except IllegalMoveError as exc:
            ctx.problem(f"{where}: illegal move {move!r}: {exc.reason}", position_line,
                        received.line)
            return Answer(move, elapsed, received.line, "illegal")
        if late or elapsed > budget:
            ctx.problem(f"{where}: bestmove {move} after {ms(elapsed)}, over the budget of "
                        f"{ms(budget)} ({budget_text})", search.go_line, received.line)
            return Answer(move, elapsed, received.line, "late")
        ctx.good += 1
        return Answer(move, elapsed, received.line, "ok")

    async def bestmove(self, probe: Probe, deadline: float) -> Received | None:
        """The search's bestmove line (well-formed or malformed), or None at the deadline."""
        while True:
            received = await probe.next(deadline)
            if received is None:
                return None
            if received.command == "bestmove" and (received.violation is None or received.error):
                return received

    async def play_game(self, probe: Probe, ctx: Context, plies: int, label: str) -> str:
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

    async def search_entries(self, probe: Probe, ctx: Context,
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
