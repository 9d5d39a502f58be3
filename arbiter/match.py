"""One game between two engines, refereed, clocked and recorded (trio).

:func:`play_game` is the heart of the arbiter: it sends ``position``/``go``
with both clocks, measures each search on the monotonic clock (from the end
of the ``go`` write to the read of the ``bestmove`` line), lets the referee
alone decide whether a move is legal and whether the game is over, and turns
every way an engine can fail into a named termination with the right loser
(``specs/match.md``).  It returns a :class:`GameRecord`; the store, the
records exporter and the CLI consume its :meth:`~GameRecord.to_dict`.

Structured concurrency: the only tasks are the engines' readers (owned by
:func:`~arbiter.engine.open_engine`); every wait here runs under a cancel
scope whose deadline comes from the clock, so no engine can hold a game up.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import trio

from arbiter.clock import DEFAULT_STALL_MS, Clock, TimeControl
from arbiter.engine import (
    Engine,
    EngineConfig,
    EngineFault,
    EngineFaultError,
    EngineStartError,
    EngineTimeouts,
    Reply,
    format_score,
    open_engine,
)
from arbiter.games import Color, Game, IllegalMoveError, Position, get_game, result_for
from protocol.search import PositionLine

__all__ = [
    "MatchTermination", "MoveRecord", "GameRecord", "play_game", "play_engines",
    "DEFAULT_TC", "EngineStartError",
]

#: The time control when neither the match nor an engine names one.
DEFAULT_TC = "10+0.1"


class MatchTermination(str, enum.Enum):
    """Endings the arbiter decides (the rules' endings are
    :class:`arbiter.games.Termination`).  Each is defined in ``specs/match.md``."""

    ILLEGAL_MOVE = "illegal-move"  # the referee refused the move: the mover loses
    MALFORMED_BESTMOVE = "malformed-bestmove"  # not `bestmove <move>`: the mover loses
    TIME_FORFEIT = "time-forfeit"  # over its clock (+ margin): the mover loses
    CRASH = "crash"  # exited or closed its output: it loses
    STALL = "stall"  # no bestmove within the stall limit nor after stop: it loses
    PROTOCOL_ERROR = "protocol-error"  # broke the protocol (2nd bestmove, overlong line...): it loses
    MAX_PLIES = "max-plies"  # adjudicated at --maxplies: scores decide, else a draw
    HANDSHAKE_FAILURE = "handshake-failure"  # never in a record: the game is not played

    def __str__(self) -> str:
        return self.value


@dataclass
class MoveRecord:
    """One ply played by an engine, with what the arbiter measured and what the
    engine reported (the last value of each field of its ``info`` lines)."""

    move: str
    color: str  # "white" or "black": who played it
    time_ms: int  # measured: `go` written -> `bestmove` read
    clock_ms: int | None = None  # the mover's clock after the move (None without a clock)
    engine_time_ms: int | None = None  # the engine's own `info time`
    score: str | None = None  # "cp 35", "mate 3", "winprob 0.62" (mover's view)
    depth: int | None = None
    nodes: int | None = None
    pv: list[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MoveRecord:
        return cls(**{k: data.get(k) for k in (
            "move", "color", "time_ms", "clock_ms", "engine_time_ms", "score", "depth", "nodes")},
            pv=list(data.get("pv") or []))


@dataclass
class GameRecord:
    """A finished game.  JSON-able through :meth:`to_dict` / :meth:`from_dict`.

    ``result`` is from White's view (``1-0``, ``0-1``, ``1/2-1/2``) whoever
    moved first; ``termination`` is a :class:`arbiter.games.Termination` or
    :class:`MatchTermination` value; ``termination_detail`` is one sentence
    saying who did what.  ``fen`` None means the game's start position;
    ``opening_moves`` were given, not played by the engines; ``moves`` are the
    plies the engines played.
    """

    game: str
    white: str
    black: str
    result: str
    termination: str
    termination_detail: str
    fen: str | None = None
    opening_moves: list[str] = field(default_factory=list)
    moves: list[MoveRecord] = field(default_factory=list)
    time_control: dict[str, str] = field(default_factory=dict)  # {"white": tc, "black": tc}
    timemargin_ms: dict[str, int] = field(default_factory=dict)
    start_time: str = ""  # ISO 8601 UTC
    end_time: str = ""
    final_fen: str | None = None
    scores: list[int] | None = None  # [white, black] for games with scores
    maxplies: int | None = None
    illegal_move: str | None = None  # the move text refused (illegal / malformed bestmove)
    white_id: dict[str, str | None] = field(default_factory=dict)  # {"name", "author"} as declared
    black_id: dict[str, str | None] = field(default_factory=dict)

    @property
    def plies(self) -> int:
        """Plies in the game: the opening's and the engines'."""
        return len(self.opening_moves) + len(self.moves)

    @property
    def all_moves(self) -> list[str]:
        return self.opening_moves + [m.move for m in self.moves]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameRecord:
        values = dict(data)
        values["moves"] = [MoveRecord.from_dict(m) for m in data.get("moves") or []]
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in values.items() if k in known})


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _side(color: Color) -> str:
    return "White" if color is Color.WHITE else "Black"


class _Ending(Exception):
    """Internal: the game is over (raised inside the move loop)."""

    def __init__(self, termination: str, winner: Color | None, detail: str,
                 illegal_move: str | None = None):
        self.termination = termination
        self.winner = winner
        self.detail = detail
        self.illegal_move = illegal_move


def _fault_ending(color: Color, fault: EngineFault) -> _Ending:
    """The termination for an engine's fault: it loses."""
    side = _side(color)
    if fault.kind == "crash":
        kind = MatchTermination.CRASH
    elif fault.kind == "stall":
        kind = MatchTermination.STALL
    elif fault.command == "bestmove" and fault.searching:
        kind = MatchTermination.MALFORMED_BESTMOVE
    else:
        kind = MatchTermination.PROTOCOL_ERROR
    illegal = fault.line if kind is MatchTermination.MALFORMED_BESTMOVE else None
    return _Ending(kind.value, color.other, f"{side} {fault.detail}", illegal)


def _rule_detail(outcome, position: Position) -> str:
    reason = outcome.termination.value
    scores = position.scores()
    tail = f" (scores {scores[0]}-{scores[1]})" if scores else ""
    if outcome.winner is None:
        return f"draw by {reason}{tail}"
    return f"{_side(outcome.winner)} wins by {reason}{tail}"


def _adjudicate(position: Position, maxplies: int) -> _Ending:
    """``--maxplies``: scores decide where the game keeps them, else a draw."""
    scores = position.scores()
    if scores is None:
        return _Ending(MatchTermination.MAX_PLIES.value, None,
                       f"adjudicated a draw after {maxplies} plies")
    white, black = scores
    winner = None if white == black else (Color.WHITE if white > black else Color.BLACK)
    verdict = "a draw" if winner is None else f"a win for {_side(winner)}"
    return _Ending(MatchTermination.MAX_PLIES.value, winner,
                   f"adjudicated {verdict} after {maxplies} plies on scores {white}-{black}")


#: per game, the canonical move strings seen so far (bounded by the game's moves)
_CANONICAL: dict[str, set[str]] = {}


class _Search:
    """A search: who, on which clock, since when (monotonic s), for how long.
    One per side for the whole game, its ``started``/``limit`` set at each ``go``."""

    __slots__ = ("color", "name", "engine", "clock", "started", "limit")

    def __init__(self, color: Color, engine: Engine, clock: Clock, started: float, limit: float):
        self.color = color
        self.name = color.value  # for the records (an Enum's .value is a Python-level property)
        self.engine = engine
        self.clock = clock
        self.started = started
        self.limit = limit


class _Game:
    """The state of one game in progress (see :func:`play_game`).

    One cancel scope spans many plies (cheaper than a scope per ply, see
    ``bench/overhead.py``); its deadline is never later than the current
    search's.  It is cancelled when its deadline passes or when an engine
    faults (through :attr:`Engine.on_fault`); :meth:`run` then settles the
    search in progress (:meth:`_overtime`) and opens a new scope."""

    def __init__(self, game: Game, engines: dict[Color, Engine], clocks: dict[Color, Clock],
                 position: Position, line: PositionLine, opening_plies: int, maxplies: int | None,
                 on_move: Callable[[MoveRecord, Position], None] | None):
        self.game = game
        self.engines = engines
        self.clocks = clocks
        self.position = position
        self.line = line  # `position ...` so far; moves appended as played
        self.opening_plies = opening_plies
        self.maxplies = maxplies
        self.on_move = on_move
        #: move strings the referee has confirmed to be canonical spellings
        #: (a property of the spelling, not of the position): those go
        #: straight to ``play``, which judges them without parse_move's prose
        self.canonical = _CANONICAL.setdefault(game.name, set())
        self.plies = 0  # plies accepted
        self._scope: trio.CancelScope | None = None
        #: the deadline armed on self._scope (read back without the property)
        self._armed = float("inf")
        # (the dicts keyed by Color are read once here: an Enum's hash is Python code)
        white, black = Color.WHITE, Color.BLACK
        self._white_search = _Search(white, engines[white], clocks[white], 0.0, 0.0)
        self._black_search = _Search(black, engines[black], clocks[black], 0.0, 0.0)
        #: the search in progress (one of the two above), None between searches
        self._search: _Search | None = None
        #: trio.current_time without its lookups (the deadlines' clock)
        self._now = trio.lowlevel.current_clock().current_time
        #: the MoveRecord of every ply played but the last
        self._records: list[MoveRecord] = []
        #: the last accepted ply, as (move, color name, elapsed_ms, clock left,
        #: reply, position after): recorded after the next `go` is written,
        #: off the critical path (the engine thinks meanwhile), see _record
        self._unrecorded: tuple | None = None

    def records(self) -> list[MoveRecord]:
        """The MoveRecord of every ply played."""
        self._record()
        return self._records

    def interrupt(self, engine: Engine) -> None:
        """An engine faulted while nobody read it: stop waiting at once."""
        if self._scope is not None:
            self._scope.cancel()

    def check_faults(self) -> None:
        """The engine that faulted first (if any) loses."""
        faulted = [(e.fault.time, color) for color, e in self.engines.items() if e.fault]
        if faulted:
            _, color = min(faulted, key=lambda item: item[0])
            fault = self.engines[color].fault
            assert fault is not None
            raise _fault_ending(color, fault)

    async def run(self) -> None:
        """Play until the game ends (always by raising :class:`_Ending`)."""
        try:
            while True:
                with trio.CancelScope() as scope:
                    self._scope = scope
                    self._armed = scope.deadline
                    await self._play(scope)
                self._scope = None
                # cancelled: a search's deadline passed, or an engine faulted
                self._record()
                self.check_faults()
                search = self._search
                if search is not None:
                    self._accept(search, await self._overtime(search))
        finally:
            self._record()

    async def _play(self, scope: trio.CancelScope) -> None:
        white_search, black_search = self._white_search, self._black_search
        white, black = white_search.engine, black_search.engine
        white_clock, black_clock = white_search.clock, black_search.clock
        white_is_p1 = self.game.first is Color.WHITE
        black_is_p1 = not white_is_p1
        maxplies = self.maxplies
        now = self._now
        white_color = Color.WHITE  # (a class attribute of an Enum is slow to look up)
        while True:
            position = self.position
            outcome = position.outcome()
            if outcome is not None:
                raise _Ending(outcome.termination.value, outcome.winner,
                              _rule_detail(outcome, position))
            if maxplies is not None and self.opening_plies + self.plies >= maxplies:
                raise _adjudicate(position, maxplies)
            if white.fault is not None or black.fault is not None:
                self.check_faults()
            # (no dict lookups keyed by Color in this loop: an Enum's hash is Python code)
            if position.to_move is white_color:
                engine, clock, search, mover_is_p1 = white, white_clock, white_search, white_is_p1
                limits = clock.limits(black_clock)
            else:
                engine, clock, search, mover_is_p1 = black, black_clock, black_search, black_is_p1
                limits = clock.limits(white_clock)
            search.limit = limit = clock.deadline_ms() / 1000
            search.started = started = now()
            self._search = search
            # The scope is re-armed only when this search's deadline comes
            # sooner than the armed one: the armed deadline is never later than
            # the search's (a hung engine is caught on time), and when it is
            # earlier, _overtime waits out the rest.  Deadlines mostly move
            # forward, so this saves trio's costly deadline update on most
            # plies.  A write that blocks (the engine is not reading) gets the
            # exact deadline (_arm_exactly), counted from before the write.
            deadline = started + limit
            if deadline < self._armed:
                scope.deadline = self._armed = deadline
            try:
                search.started = await engine.go(self.line.to_bytes(), limits, mover_is_p1)
                if self._unrecorded is not None:  # the previous ply, while this engine thinks
                    self._record()
                reply = await engine.wait_bestmove()
            except EngineFaultError:
                self.check_faults()
                raise  # pragma: no cover - check_faults raised already
            self._accept(search, reply)

    def _arm_exactly(self) -> None:
        """The ``go`` write blocks: bound it by this search's own deadline, not
        by an earlier one armed for another search (see :meth:`_play`)."""
        search, scope = self._search, self._scope
        if search is not None and scope is not None:
            scope.deadline = self._armed = search.started + search.limit

    def _accept(self, search: _Search, reply: Reply) -> None:
        """Charge the clock, let the referee judge the move, record it."""
        color, engine, clock = search.color, search.engine, search.clock
        fault = engine.fault
        if fault is not None and fault.time <= reply.time:
            raise _fault_ending(color, fault)  # e.g. a second bestmove in the same write
        elapsed_ms = (reply.time - search.started) * 1000
        if not clock.stop(elapsed_ms):
            raise _Ending(MatchTermination.TIME_FORFEIT.value, color.other,
                          f"{_side(color)} lost on time: bestmove after {elapsed_ms / 1000:.3f} s, "
                          f"allowed {clock.deadline_ms() / 1000:.3f} s")
        text = reply.move
        if not (text.isascii() and text.isprintable()):
            raise _Ending(MatchTermination.MALFORMED_BESTMOVE.value, color.other,
                          f"{_side(color)} sent a malformed bestmove {text!r}", illegal_move=text)
        position = self.position
        try:
            if text in self.canonical:  # known canonical spelling: the fast path of play()
                move = text
                after = position.play(move)
            else:
                move = position.parse_move(text)
                after = position.play(move)
                if move == text:
                    self.canonical.add(text)
        except IllegalMoveError as exc:
            raise _Ending(MatchTermination.ILLEGAL_MOVE.value, color.other,
                          f"{_side(color)} played illegal move {text!r}: {exc.reason}",
                          illegal_move=text) from None
        self.line.append(move)
        self.position = after
        self._search = None
        self.plies += 1
        assert self._unrecorded is None  # recorded after each go, and before _overtime's ply
        self._unrecorded = (move, search.name, elapsed_ms, clock.remaining_ms, reply, after)

    def _record(self) -> None:
        """Make the record of the last accepted ply, if not made yet, and pass
        it to ``on_move``.  Called right after the next ``go`` is written,
        while that engine thinks (the merging of the ply's ``info`` lines
        happens here too), and when the game ends."""
        if self._unrecorded is None:
            return
        move, color, elapsed_ms, remaining, reply, after = self._unrecorded
        self._unrecorded = None
        record = _move_record(move, color, elapsed_ms,
                              None if remaining is None else int(remaining), reply.info)
        self._records.append(record)
        if self.on_move is not None:
            self.on_move(record, after)

    async def _overtime(self, search: _Search) -> Reply:
        """The scope ended with a search in progress.  Before the search's
        deadline (the scope's came sooner, or was counted from before the
        ``go`` write): wait out the rest.
        After it, with a clock or movetime, that is a time forfeit; without
        one (depth/nodes/inf) the arbiter sends ``stop`` and waits the stop
        timeout, then it is a stall."""
        engine = search.engine
        side = _side(search.color)
        with trio.CancelScope(deadline=search.started + search.limit) as scope:
            self._scope = scope
            try:
                return await engine.wait_bestmove()
            except EngineFaultError:
                pass
        self._scope = None
        self.check_faults()
        if search.clock.tc.is_timed:
            raise _Ending(MatchTermination.TIME_FORFEIT.value, search.color.other,
                          f"{side} lost on time: no bestmove within {search.limit:.3f} s")
        grace = engine.timeouts.stop
        with trio.CancelScope(deadline=trio.current_time() + grace) as scope:
            self._scope = scope
            try:
                await engine.stop()
                return await engine.wait_bestmove()
            except EngineFaultError:
                pass
        self._scope = None
        self.check_faults()
        raise _Ending(MatchTermination.STALL.value, search.color.other,
                      f"{side} stalled: no bestmove within the {search.limit:g} s stall limit "
                      f"nor {grace:g} s after stop")


def _move_record(move: str, color: str, elapsed_ms: float, clock_ms: int | None,
                 info: dict[str, object]) -> MoveRecord:
    if info:
        return MoveRecord(
            move, color, round(elapsed_ms), clock_ms, info.get("time"),  # type: ignore[arg-type]
            format_score(info), info.get("depth"), info.get("nodes"),  # type: ignore[arg-type]
            list(info.get("pv", ())),  # type: ignore[call-overload]
        )
    # every field given: the dataclass's __init__ is much quicker without defaults to fill
    return MoveRecord(move, color, round(elapsed_ms), clock_ms, None, None, None, None, [])


#: get_game by the names asked for (it imports the game's module on every call)
_GAMES_BY_NAME: dict[str, Game] = {}


def _game_named(name: str) -> Game:
    game = _GAMES_BY_NAME.get(name)
    if game is None:
        game = _GAMES_BY_NAME[name] = get_game(name)  # UnknownGameError if there is none
    return game


def _time_control(engine: Engine, default: TimeControl) -> TimeControl:
    if engine.config.tc:
        return TimeControl.parse(engine.config.tc)
    return default


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
    stall_ms: int = DEFAULT_STALL_MS,
    on_move: Callable[[MoveRecord, Position], None] | None = None,
) -> GameRecord:
    """Play one game, ``white`` against ``black``, and return its record.

    ``fen``/``opening_moves`` give the opening (checked by the referee first:
    a bad one raises :class:`arbiter.games.GameError` before any engine is
    told).  ``tc`` is the time control of both sides unless an engine's config
    names its own; ``timemargin_ms`` likewise (the engine's config wins when it
    gives one).  ``stall_ms`` bounds a search without a clock.  ``on_move`` is
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
        game = _game_named(game)
    opening = list(opening_moves)
    position = game.position(fen, opening)
    default_tc = tc if isinstance(tc, TimeControl) else TimeControl.parse(tc or DEFAULT_TC)
    white_clock, black_clock = (
        Clock(_time_control(engine, default_tc),
              timemargin_ms=engine.config.timemargin_ms or timemargin_ms,
              stall_ms=stall_ms)
        for engine in (white, black)
    )
    engines = {Color.WHITE: white, Color.BLACK: black}
    clocks = {Color.WHITE: white_clock, Color.BLACK: black_clock}
    await _new_game(game.name, white, black)
    state = _Game(game, engines, clocks, position, PositionLine(fen, opening), len(opening), maxplies, on_move)
    start_time = _utc_now()
    white.on_fault = black.on_fault = state.interrupt
    try:
        await state.run()
        raise AssertionError("unreachable: run() only ends by _Ending")  # pragma: no cover
    except _Ending as ending:
        end = ending
    finally:
        white.on_fault = black.on_fault = None
    final = state.position
    scores = final.scores()
    return GameRecord(
        game=game.name,
        white=white.name,
        black=black.name,
        result=result_for(end.winner),
        termination=end.termination,
        termination_detail=end.detail,
        fen=fen,
        opening_moves=opening,
        moves=state.records(),
        time_control={"white": str(white_clock.tc), "black": str(black_clock.tc)},
        timemargin_ms={"white": white_clock.timemargin_ms, "black": black_clock.timemargin_ms},
        start_time=start_time,
        end_time=_utc_now(),
        final_fen=final.fen(),
        scores=list(scores) if scores is not None else None,
        maxplies=maxplies,
        illegal_move=end.illegal_move,
        white_id={"name": white.id_name, "author": white.author},
        black_id={"name": black.id_name, "author": black.author},
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
