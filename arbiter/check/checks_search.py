"""The search checks: ``position`` in each form, ``isready`` between moves, each kind of ``go``.

Every ``bestmove`` is judged by :meth:`Checker.search`: legal (the referee
says so) and within its budget.  ``specs/check.md``
§The checks: ``position.*``, ``isready.between-moves``, ``go.*``, ``isready.searching``.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from arbiter.check.checker import Checker, CheckSpec, Context, Failed, NotApplicable, check, ms
from arbiter.check.positions import CheckPosition
from arbiter.check.probe import Line, Probe, Received
from arbiter.games import IllegalMoveError, Position
from protocol.messages import MOVESTOGO_OPTION, BestMove, Go, IsReady, ReadyOk, SetPosition, Stop

__all__ = ["CHECKS"]

#: Seconds into ``go infinite`` before ``isready`` is sent (at most the infinite wait).
MID_SEARCH_DELAY = 0.1


# --- positions ------------------------------------------------------------------------------------


async def _search_list(checker: Checker, ctx: Context, entries: list[tuple[CheckPosition, str]],
                       go: Go | None = None) -> None:
    probe = await checker.fresh(ctx)
    _, verdicts = await checker.search_entries(probe, ctx, entries, go or checker.movetime_go())
    if not ctx.problems:
        ctx.notes.append(f"{len(verdicts)} legal answers")


@check("position.startpos", "position startpos",
       "a legal `bestmove` within {movetime} ms (+{margin} ms) after `position startpos` (p1 to "
       "move) and `position startpos moves <one move>` (p2 to move)", needs="search")
async def position_startpos(checker: Checker, ctx: Context) -> None:
    start = CheckPosition(checker.game.name, "sample", (), False)
    await _search_list(checker, ctx, [(start, "startpos"), (checker.entry("early-p2"), "startpos")])


@check("position.fen", "position fen",
       "a legal `bestmove` after `position fen <position string>`, with p1 and with p2 to move",
       needs="search")
async def position_fen(checker: Checker, ctx: Context) -> None:
    await _search_list(checker, ctx, [(checker.entry("midgame-p1"), "fen"),
                                      (checker.entry("midgame-p2"), "fen")])


@check("position.moves", "long move lists",
       "a legal `bestmove` after long move lists (45 plies or more) from `startpos` and from a "
       "`fen`, with p1 and with p2 to move", needs="search", searches=4)
async def position_moves(checker: Checker, ctx: Context) -> None:
    long1, long2 = checker.entry("long-p1"), checker.entry("long-p2")
    await _search_list(checker, ctx, [(long1, "startpos"), (long2, "startpos"),
                                      (long1, "fen+moves"), (long2, "fen+moves")])


@check("isready.between-moves", "isready between moves",
       "after a `bestmove`, `isready` answered with `readyok` within {ready} s, before the next "
       "`position` and `go`", needs="search", searches=4)
async def isready_between(checker: Checker, ctx: Context) -> None:
    probe = await checker.fresh(ctx)
    entry = checker.entry("midgame-p1")
    pos = entry.position()
    moves = entry.moves
    for _ in range(2):
        answer = await checker.search(probe, ctx, pos, SetPosition(None, moves), checker.movetime_go(),
                                      f"{pos.to_move.value} to move at ply {len(moves)}")
        if answer.verdict != "ok":
            raise Failed()
        assert answer.move is not None  # an ok answer has its move
        took = await checker.ready(probe, ctx, "right after a bestmove")
        ctx.notes.append(f"readyok {ms(took)} after isready")
        move = pos.parse_move(answer.move)
        moves, pos = moves + (move,), pos.play(move)
        if pos.outcome() is not None:
            break


# --- go ----------------------------------------------------------------------------------------------


def _clock_go(checker: Checker, pos: Position, mine: int, theirs: int, *, inc: int = 0,
              movestogo: int | None = None) -> Go:
    """Clocks from the mover's side: ``mine`` for the side to move, ``theirs`` for the other;
    all four clock fields, as ``ugi.md`` lists them (``movestogo`` is our extension)."""
    p1 = pos.to_move is checker.game.first
    return Go(p1time=mine if p1 else theirs, p2time=theirs if p1 else mine, p1inc=inc, p2inc=inc,
              movestogo=movestogo)


async def _go_pair(checker: Checker, ctx: Context, make: Callable[[Position], Go]) -> None:
    probe = await checker.fresh(ctx)
    for feature in ("midgame-p1", "midgame-p2"):
        entry = checker.entry(feature)
        pos = entry.position()
        go = make(pos)
        answer = await checker.search(probe, ctx, pos, SetPosition(None, entry.moves), go,
                                      f"`{go.to_line()}` with {pos.to_move.value} to move")
        if answer.move is not None:
            ctx.notes.append(f"{pos.to_move.value}: {answer.move} after {ms(answer.elapsed)}")
        if not probe.usable:
            probe = await checker.fresh(ctx)


@check("go.clock", "go with both clocks",
       "with both clocks and no increment, the mover's clock 1500 ms and the other's 60000 ms: a legal "
       "`bestmove` within the mover's clock (+{margin} ms), with p1 and with p2 to move (an "
       "engine that reads the other side's clock runs over)", needs="search")
async def go_clock(checker: Checker, ctx: Context) -> None:
    await _go_pair(checker, ctx, lambda pos: _clock_go(checker, pos, 1500, 60000))


@check("go.increment", "go with increments",
       "with the mover's clock (300 ms) smaller than its increment (2000 ms): a legal `bestmove` "
       "within the clock (+{margin} ms); the increment is added after the move", needs="search")
async def go_increment(checker: Checker, ctx: Context) -> None:
    await _go_pair(checker, ctx, lambda pos: _clock_go(checker, pos, 300, 300, inc=2000))


@check("go.movestogo", "go with movestogo",
       "with `movestogo 1` and 1000 ms on each clock: a legal `bestmove` within the clock "
       "(+{margin} ms); only for an engine that declares the check option `UGI_MovesToGo` "
       "(otherwise not applicable: it is our extension of ugi.md)", needs="search")
async def go_movestogo(checker: Checker, ctx: Context) -> None:
    probe = await checker.fresh(ctx)
    if not probe.session.reads_movestogo:
        raise NotApplicable(f"not applicable: the engine does not declare the check option {MOVESTOGO_OPTION} "
                            "(true), so the arbiter never sends it movestogo (specs/protocol.md)")
    await _go_pair(checker, ctx, lambda pos: _clock_go(checker, pos, 1000, 1000, movestogo=1))


@check("go.movetime", "go movetime",
       "with `movetime 300`: a legal `bestmove` within 300 ms (+{margin} ms)", needs="search")
async def go_movetime(checker: Checker, ctx: Context) -> None:
    await _go_pair(checker, ctx, lambda pos: Go(movetime=300))


@check("go.depth", "go depth",
       "with `depth 2`: a legal `bestmove` within the stall limit of {stall} s", needs="search")
async def go_depth(checker: Checker, ctx: Context) -> None:
    await _go_pair(checker, ctx, lambda pos: Go(depth=2))


@check("go.nodes", "go nodes",
       "with `nodes 500`: a legal `bestmove` within the stall limit of {stall} s", needs="search")
async def go_nodes(checker: Checker, ctx: Context) -> None:
    await _go_pair(checker, ctx, lambda pos: Go(nodes=500))


async def _infinite(checker: Checker, ctx: Context, ask_ready: bool) -> None:
    """``go infinite``, optionally ``isready`` mid-search, then ``stop``."""
    probe = await checker.fresh(ctx)
    entry = checker.entry("midgame-p1")
    pos = entry.position()
    search = checker.start_search(probe, ctx, pos, Go(infinite=True))
    sent = await probe.send(SetPosition(None, entry.moves), Go(infinite=True))
    search.sent_at = sent
    go_line = probe.lines[-1]
    early = await _ready_mid_search(checker, ctx, probe, go_line) if ask_ready else None
    while early is None:  # no bestmove may come before stop
        received = await probe.next(sent + checker.settings.infinite_wait)
        if received is None:
            break
        if received.command == "bestmove":
            early = received
    if early is not None:
        _early_bestmove(ctx, probe, early, sent, go_line, ask_ready)
        return
    await _stop_infinite(checker, ctx, probe, pos, go_line, ask_ready)


async def _ready_mid_search(checker: Checker, ctx: Context, probe: Probe, go_line: Line) -> Received | None:
    """``isready`` a moment into ``go infinite``, and its ``readyok``; returns
    a ``bestmove`` that came before it (the engine did not hold it)."""
    settings = checker.settings
    early: Received | None = None
    await trio.sleep(min(MID_SEARCH_DELAY, settings.infinite_wait))
    asked = await probe.send(IsReady())
    while True:
        received = await probe.next(asked + settings.ready_timeout)
        if received is None:
            ctx.problem(f"no readyok within {settings.ready_timeout:g} s of isready during go "
                        "infinite (does the engine read its input while it searches?)",
                        go_line, probe.lines[-1])
            return early
        if received.command == "bestmove" and early is None:
            early = received
        elif isinstance(received.message, ReadyOk):
            ctx.notes.append(f"readyok {ms(received.line.at - asked)} after isready, mid-search")
            return early


def _early_bestmove(ctx: Context, probe: Probe, early: Received, sent: float, go_line: Line,
                    ask_ready: bool) -> None:
    """A ``bestmove`` before ``stop`` under ``go infinite``: a WARN (a FAIL if malformed)."""
    ctx.answered = True
    text = (f"bestmove {ms(early.line.at - sent)} after go infinite, before any stop: under "
            "infinite an engine must hold its bestmove until stop (the arbiter accepts it)")
    if ask_ready:
        ctx.warn("could not test isready mid-search: " + text, go_line, early.line)
    else:
        ctx.warn(text, go_line, early.line)
    if early.error is not None:
        probe.dirty = True
        raise ctx.fail(f"malformed bestmove: {early.error}", early.line)


async def _stop_infinite(checker: Checker, ctx: Context, probe: Probe, pos: Position, go_line: Line,
                         ask_ready: bool) -> None:
    """``stop``, and the legal ``bestmove`` it must bring within the stop timeout."""
    settings = checker.settings
    stopped = await probe.send(Stop())
    received = await checker.bestmove(probe, stopped + settings.stop_timeout)
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
        assert isinstance(received.message, BestMove)  # a well-formed bestmove line
        move = received.message.move
        try:
            pos.parse_move(move)
        except IllegalMoveError as exc:
            ctx.problem(f"illegal move {move!r} after stop: {exc.reason}", received.line)
        ctx.notes.append(f"bestmove {move} {ms(received.line.at - stopped)} after stop")

@check("go.infinite", "go infinite, then stop",
       "after `go infinite`, no `bestmove` for {infinite} s (until `stop`: WARN if one comes "
       "early); after `stop`, a legal `bestmove` within {stop} s", needs="game")
async def go_infinite(checker: Checker, ctx: Context) -> None:
    await _infinite(checker, ctx, ask_ready=False)


@check("isready.searching", "isready during go infinite",
       "`readyok` within {ready} s of `isready` sent during `go infinite` (WARN only: the arbiter "
       "never needs it mid-search)", mandatory=False, needs="search")
async def isready_searching(checker: Checker, ctx: Context) -> None:
    await _infinite(checker, ctx, ask_ready=True)


CHECKS: tuple[CheckSpec, ...] = (position_startpos, position_fen, position_moves, isready_between,
                                 go_clock, go_increment, go_movestogo, go_movetime, go_depth, go_nodes,
                                 go_infinite, isready_searching)
