"""The trio driver of a game: engines, deadlines and the record.

:func:`play_game` does what the :class:`~arbiter.match.state.MatchState`
asks (write ``position``/``go``, wait for the ``bestmove`` until a deadline,
send ``stop``) and tells it what happened; every rule (clocks, legality,
faults, adjudication) is decided there, this module only waits and reports.

Each search has its own deadline, covering the ``go`` write and the wait for
``bestmove``.  An engine that faults while the other one is waited for
wakes the wait at once (through :attr:`Engine.on_fault
<arbiter.engine.Engine.on_fault>`).  The only tasks are the engines' own
(owned by :func:`~arbiter.engine.open_engine`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack, suppress
from datetime import UTC, datetime
from typing import Any

import trio

from arbiter.clock import DEFAULT_STALL_MS, Clock, TimeControl
from arbiter.engine import (
    Engine,
    EngineConfig,
    EngineFaultError,
    EngineStartError,
    EngineTimeouts,
    open_engine,
)
from arbiter.engine.transport import Transport
from arbiter.games import Color, Game, Position, get_game, result_for
from arbiter.record import GameRecord, Ply

from .adjudication import Adjudication
from .state import (
    DEADLINE_PASSED,
    Action,
    Answer,
    BestMove,
    Disconnected,
    Faulted,
    GameOver,
    Go,
    MatchState,
    Stop,
)

__all__ = ["DEFAULT_TC", "DEADLINE_SLACK", "Player", "play_game", "play_engines"]

#: How much later than a search's deadline the wait may end (seconds).  The
#: deadline kept on the driver's cancel scope is moved only when it would
#: end the wait before the search's deadline or later than this after it:
#: setting a trio deadline is the costliest single step of a ply
#: (``bench/README.md`` §The match), and in fast games (small increments,
#: where plies are many) successive deadlines move by a few milliseconds.
#: 20 ms is below what a person notices and below trio's timer jitter on a
#: loaded machine; it changes only when a silent engine's time forfeit is
#: declared, never who loses it (a ``bestmove`` read late is judged by the
#: clock, and is a time forfeit too: specs/match.md §Clocks).
DEADLINE_SLACK = 0.020

#: The time control when neither the match nor an engine names one.
DEFAULT_TC = "10+0.1"

#: What ``play_game`` calls after each ply: its record and the position after it.
OnMove = Callable[[Ply, Position], None]


class Player:
    """An engine in one game: its colour and its clock."""

    __slots__ = ("engine", "color", "clock")

    def __init__(self, engine: Engine, color: Color, clock: Clock):
        self.engine = engine
        self.color = color
        self.clock = clock


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Driver:
    """Runs one :class:`MatchState` against two players until it is over."""

    def __init__(self, state: MatchState, players: dict[Color, Player], on_move: OnMove | None):
        self.state = state
        self.players = players
        self.on_move = on_move
        self._white, self._black = players[Color.WHITE].engine, players[Color.BLACK].engine
        #: the wait in progress (a search or a stop), cancelled by interrupt()
        self._scope: trio.CancelScope | None = None
        #: when the search in progress started (the end of its go write)
        self._started = 0.0
        #: per colour, the engine's transport when it compensates lag (its
        #: ``lag_allowance`` is not None: a remote engine, whose search is
        #: waited for longer and whose plies carry lag figures), None for a
        #: local engine (specs/wire.md §Clock fairness)
        self._remote = {color: p.engine.transport if p.engine.transport.lag_allowance is not None else None
                        for color, p in players.items()}
        #: the remote transport of the side searching or being stopped (None: local)
        self._mover_remote: Transport | None = None

    def interrupt(self, engine: Engine) -> None:
        """:attr:`Engine.on_fault`: an engine faulted, stop waiting at once."""
        if self._scope is not None:
            self._scope.cancel()

    async def run(self) -> GameOver:
        """Play until the state says the game is over; every ply recorded."""
        try:
            action = self.state.start()
            while type(action) is not GameOver:
                if type(action) is Go:
                    action = await self._searches(action)
                else:
                    assert type(action) is Stop
                    action = await self._stop(action)
            return action
        finally:
            self._record()

    async def _searches(self, go: Go) -> Action:
        """Play searches, one after the other, while each ends in time;
        return the state's first answer that is not a Go (or one after a
        search that did not end in time).

        Each search has its own deadline, ``go.seconds`` after its ``go``
        write finished (the clock starts then).  It is set before the write,
        counted from its start, so a write that blocks (the engine is not
        reading) is bounded too; when it fires before the search's own
        deadline (the write took time), the rest is waited out.

        Kept for speed (one seam, ``bench/README.md`` §The match): the
        deadlines are set on one cancel scope that serves searches until one
        of them is cancelled (a deadline passed, or an engine faulted:
        :meth:`interrupt`), rather than a scope per search, and the scope's
        deadline is moved only when it is not within :data:`DEADLINE_SLACK`
        after the search's.

        A remote engine's search is waited for longer by its lag allowance
        (the most its lag quota can take off the time it is charged), so
        that a move the quota brings within the clock is not cut: the state
        judges the reply's credited time (specs/wire.md §Clock fairness).
        Its deadline is kept by the same slack rule once the go went (the
        allowance is known then); before, only a deadline earlier than the
        search's is moved: a remote engine's write never waits (its
        transport queues what the peer does not take at once)."""
        action: Action = go
        engine = self.players[go.color].engine
        before = self._started
        deadline = math.inf  # the scope's (kept here: trio's property is not free)
        with trio.CancelScope() as scope:
            self._scope = scope
            while type(action) is Go:
                now = trio.current_time()
                if now >= deadline:  # the last one's passed as its reply came: trio may cancel
                    break
                go = action
                engine = self.players[go.color].engine
                self._started = before = now
                due = before + go.seconds
                remote = self._mover_remote = self._remote[go.color]
                if deadline < due or (remote is None and deadline > due + DEADLINE_SLACK):
                    scope.deadline = deadline = due + DEADLINE_SLACK
                reply: Answer | None = None
                try:
                    self._started = await engine.go(go.position, go.limits, go.mover_is_p1)
                    if remote is not None:  # the allowance is read once the go went
                        due = self._started + go.seconds + _allowance(remote)
                        if not due <= deadline <= due + DEADLINE_SLACK:
                            scope.deadline = deadline = due + DEADLINE_SLACK
                    self._record()  # the previous ply, while this engine thinks
                    reply = await engine.wait_bestmove()
                except EngineFaultError:
                    pass  # reported by _settle
                action = self._settle(reply)
        self._scope = None
        if not scope.cancelled_caught:
            return action  # (a Go after the break above: played under a new scope)
        reply = None
        if self._started > before:  # the write was done: the search's own deadline counts from its end
            remote = self._mover_remote  # (the search's own, set before its go)
            reply = await self._wait_until(
                engine, self._started + go.seconds + (0.0 if remote is None else _allowance(remote)))
        return self._settle(reply)

    async def _wait_until(self, engine: Engine, deadline: float) -> Answer | None:
        """The bestmove, waited for until ``deadline`` (None: no bestmove by
        then, or an engine faulted)."""
        reply: Answer | None = None
        if trio.current_time() >= deadline or self._white.fault is not None or self._black.fault is not None:
            return reply
        with trio.move_on_at(deadline) as scope:
            self._scope = scope
            try:
                reply = await engine.wait_bestmove()
            except EngineFaultError:
                pass  # reported by _settle
        self._scope = None
        return reply

    async def _stop(self, stop: Stop) -> Action:
        """``stop`` the search, wait the grace for its bestmove."""
        engine = self.players[stop.color].engine
        self._mover_remote = self._remote[stop.color]
        reply: Answer | None = None
        with trio.move_on_after(stop.seconds) as scope:
            self._scope = scope
            try:
                await engine.stop()
                reply = await engine.wait_bestmove()
            except EngineFaultError:
                pass  # reported below
        self._scope = None
        return self._settle(reply)

    def _settle(self, reply: Answer | None) -> Action:
        """Tell the state how the wait ended.  The faults known now were read
        with the reply or before it: they go first (and void it).  A remote
        mover's reply comes with its lag figures; a remote mover still
        detached when its deadline passed is reported as :class:`Disconnected`
        (the state decides what that ending is)."""
        white, black = self._white.fault, self._black.fault
        if white is not None or black is not None:
            return self.state.receive(Faulted(white, black))
        remote = self._mover_remote
        if reply is None:  # neither a reply nor a fault: the deadline passed
            if remote is not None and remote.detached:
                return self.state.receive(Disconnected(self._mover_name()))
            return self.state.receive(DEADLINE_PASSED)
        return self.state.receive(BestMove(reply, self._started, None if remote is None else remote.last_lag))

    def _mover_name(self) -> str:
        mover = self.state.mover
        assert mover is not None  # a wait ended: somebody searched
        return self.players[mover].engine.name

    def _record(self) -> None:
        made = self.state.record_ply()
        if made is not None and self.on_move is not None:
            self.on_move(*made)


def _allowance(remote: Transport) -> float:
    """A remote transport's lag allowance (never None: see ``_Driver._remote``)."""
    allowance = remote.lag_allowance
    return 0.0 if allowance is None else allowance


def _clock(engine: Engine, default_tc: TimeControl, timemargin_ms: int, stall_ms: int) -> Clock:
    """The engine's clock: its own time control and margin when its config
    names them, the match's otherwise."""
    tc = TimeControl.parse(engine.config.tc) if engine.config.tc else default_tc
    return Clock(tc, timemargin_ms=engine.config.timemargin_ms or timemargin_ms, stall_ms=stall_ms)


async def _new_game(name: str, white: Engine, black: Engine) -> None:
    """Both engines take the new game in one round trip: both are written
    to, then both answers awaited (the second has usually come by then).
    :class:`EngineStartError` names the first engine that failed; an engine
    that was asked is still waited for, so no answer is left in its pipe."""
    await white.start_new_game(name)
    try:
        await black.start_new_game(name)
    except EngineStartError:
        with suppress(EngineStartError):
            await white.wait_ready()
        raise
    try:
        await white.wait_ready()
    except EngineStartError:
        with suppress(EngineStartError):
            await black.wait_ready()
        raise
    await black.wait_ready()


async def play_game(
    game: Game | str,
    white: Engine,
    black: Engine,
    *,
    fen: str | None = None,
    opening_moves: Sequence[str] = (),
    tc: TimeControl | str | None = None,
    timemargin_ms: int = 0,
    maxplies: int | None = None,
    adjudication: Adjudication | None = None,
    stall_ms: int = DEFAULT_STALL_MS,
    on_move: OnMove | None = None,
) -> GameRecord:
    """Play one game, ``white`` against ``black``, and return its record.

    ``fen``/``opening_moves`` give the opening (checked by the referee first:
    a bad one raises :class:`arbiter.games.GameError` before any engine is
    told).  ``tc`` is the time control of both sides unless an engine's config
    names its own; ``timemargin_ms`` likewise (the engine's config wins when it
    gives one).  ``maxplies`` adjudicates at that many plies, the opening's
    included; ``adjudication`` the score rules (``--resign``, ``--draw``; off
    by default).  ``stall_ms`` bounds a search without a clock.  ``on_move`` is
    called after each ply with its record and the new position.

    Raises :class:`EngineStartError` (``handshake-failure``: the game is not
    played) when an engine does not take the new game (``uginewgame`` /
    ``isready``).  Every other failure of an engine ends the game with a
    record.  An engine that was searching when the game ended (time forfeit,
    stall, opponent's fault) is left searching: it is not
    :attr:`~arbiter.engine.Engine.healthy`; call
    :meth:`~arbiter.engine.Engine.finish_search` to reuse it, or close it.
    """
    if white is black:
        raise ValueError("an engine cannot play itself in one process: start it twice")
    if isinstance(game, str):
        game = get_game(game)  # UnknownGameError if there is none
    opening = list(opening_moves)
    default_tc = tc if isinstance(tc, TimeControl) else TimeControl.parse(tc or DEFAULT_TC)
    players = {color: Player(engine, color, _clock(engine, default_tc, timemargin_ms, stall_ms))
               for color, engine in ((Color.WHITE, white), (Color.BLACK, black))}
    state = MatchState(game, {color: p.clock for color, p in players.items()}, fen=fen, opening=opening,
                       maxplies=maxplies, adjudication=adjudication,
                       stop_grace={color: p.engine.timeouts.stop for color, p in players.items()})
    white.transport.seat(game.first is Color.WHITE)  # (a resumed search's clock: specs/wire.md)
    black.transport.seat(game.first is Color.BLACK)
    await _new_game(game.name, white, black)
    start_time = _utc_now()
    driver = _Driver(state, players, on_move)
    white.on_fault = black.on_fault = driver.interrupt
    try:
        end = await driver.run()
    finally:
        white.on_fault = black.on_fault = None
    return _game_record(game, state, players, end, fen=fen, opening=opening, maxplies=maxplies,
                        start_time=start_time)


def _game_record(game: Game, state: MatchState, players: dict[Color, Player], end: GameOver, *,
                 fen: str | None, opening: list[str], maxplies: int | None, start_time: str) -> GameRecord:
    white, black = players[Color.WHITE], players[Color.BLACK]
    final = state.position
    scores = final.scores()
    return GameRecord(
        game=game.name,
        white=white.engine.name,
        black=black.engine.name,
        result=result_for(end.winner),
        termination=end.termination.value,
        termination_detail=end.detail,
        fen=fen,
        opening_moves=opening,
        moves=state.moves,
        time_control={"white": str(white.clock.tc), "black": str(black.clock.tc)},
        timemargin_ms={"white": white.clock.timemargin_ms, "black": black.clock.timemargin_ms},
        start_time=start_time,
        end_time=_utc_now(),
        final_fen=final.fen(),
        scores=list(scores) if scores is not None else None,
        maxplies=maxplies,
        illegal_move=end.illegal_move,
        white_id={"name": white.engine.id_name, "author": white.engine.author},
        black_id={"name": black.engine.id_name, "author": black.engine.author},
    )


async def play_engines(
    game: Game | str,
    white: EngineConfig,
    black: EngineConfig,
    *,
    timeouts: EngineTimeouts | None = None,
    log_dir: str | None = None,
    **options: Any,
) -> GameRecord:
    """Start both engines, play one game (:func:`play_game` ``options``), end both.

    :class:`EngineStartError` if either fails to start or to take the game;
    in every case both processes (and their groups) are gone on return."""
    async with AsyncExitStack() as stack:
        white_engine = await stack.enter_async_context(
            open_engine(white, timeouts=timeouts, log_dir=log_dir))
        black_engine = await stack.enter_async_context(
            open_engine(black, timeouts=timeouts, log_dir=log_dir))
        return await play_game(game, white_engine, black_engine, **options)
