"""One game in progress as data: the match's rules without I/O (h11 style).

A :class:`MatchState` knows the position, both clocks and the rules of
``specs/match.md``; it never reads, writes or waits.  Whoever drives it (the
trio driver in :mod:`arbiter.match.driver`, a test, another event loop) tells
it what happened, as **events**, and does what it answers, as **actions**:

========================================  ==========================================
event                                     the state answers
========================================  ==========================================
:meth:`MatchState.start`                  the first :class:`Go` (or :class:`GameOver`)
:class:`BestMove` (a reply, and when the  the next :class:`Go`, or :class:`GameOver`
search started)                           (illegal, malformed, over its time, the end)
:class:`DeadlinePassed` after a Go        :class:`GameOver` (time forfeit) with a clock
                                          or movetime; :class:`Stop` without one
:class:`DeadlinePassed` after a Stop      :class:`GameOver` (stall)
:class:`Disconnected` (the deadline        as DeadlinePassed, the ending ``disconnect``
passed, the mover's engine away)           in place of a time forfeit
:class:`Faulted` (either engine, any      :class:`GameOver`: the first fault in time
time)                                     loses
========================================  ==========================================

Times are seconds on the driver's monotonic clock (``trio.current_time()``
for the trio driver): a reply's ``time`` is when its ``bestmove`` line was
read, ``started`` when the ``go`` write finished, a fault's ``time`` when its
evidence was read.  An event that does not fit (a bestmove when nobody
searches, anything after the end but a fault) raises :class:`MatchStateError`
and leaves the state in :attr:`Phase.ERROR`.

**Order of events.** Report what was read in the order it was read: the
faults known when a bestmove is read go first (they were read with it or
before it, so the move is void: ``specs/match.md`` §Terminations,
precedence), and a fault seen after a move that ended the game changes
nothing (the state answers the same :class:`GameOver`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from arbiter.clock import Clock
from arbiter.games import Color, Game, IllegalMoveError, Outcome, Position
from arbiter.record import Ending, MatchTermination, Ply, ReportedInfo
from protocol.search import PositionLine, SearchLimits

from .adjudication import Adjudication, Adjudicator, Verdict

__all__ = [
    "MatchState", "MatchStateError", "Phase", "Go", "Stop", "GameOver", "Action",
    "BestMove", "Faulted", "DeadlinePassed", "DEADLINE_PASSED", "Disconnected", "Event", "Answer", "FaultReport",
    "CanonicalSpellings",
]


# --- what the state is told -------------------------------------------------------------


class Answer(Protocol):
    """A ``bestmove`` as read: its move text, when it was read, and the merged
    fields of the search's ``info`` lines (read only when the ply is recorded,
    so an engine may parse them lazily: :meth:`MatchState.record_ply`)."""

    @property
    def move(self) -> str: ...
    @property
    def time(self) -> float: ...
    @property
    def info(self) -> ReportedInfo: ...


class FaultReport(Protocol):
    """What went wrong with an engine (``arbiter.engine.EngineFault``):
    ``kind`` ``"crash"``, ``"protocol-error"`` or ``"stall"``; ``command`` and
    ``searching`` tell a malformed ``bestmove`` apart; ``line`` the offending
    line, when there is one."""

    @property
    def kind(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def time(self) -> float: ...
    @property
    def command(self) -> str | None: ...
    @property
    def searching(self) -> bool: ...
    @property
    def line(self) -> str | None: ...


@dataclass(slots=True)
class BestMove:
    """The mover's ``bestmove``: ``reply``, for the search whose ``go`` write
    finished at ``started`` (its measured time is ``reply.time - started``);
    ``lag``, for a remote engine, the round trip and lag compensation (ms)
    of this reply, kept in its ply's record (``reply.time`` is credited
    already: specs/wire.md §Clock fairness)."""

    reply: Answer
    started: float
    lag: tuple[int | None, int] | None = None


@dataclass(slots=True)
class Faulted:
    """The faults of the engines seen so far (None: that engine has none)."""

    white: FaultReport | None = None
    black: FaultReport | None = None


@dataclass(slots=True)
class DeadlinePassed:
    """The wait the last action asked for is over: a :class:`Go`'s
    ``seconds`` after the ``go`` write, or a :class:`Stop`'s grace."""


#: The one DeadlinePassed (it has no fields).
DEADLINE_PASSED = DeadlinePassed()


@dataclass(slots=True)
class Disconnected:
    """The wait the last action asked for is over, as :class:`DeadlinePassed`,
    and the mover's engine, ``name``, is disconnected: its remote connection
    dropped and it has not come back (``specs/wire.md`` §Disconnect and
    resume).  Its clock ran on meanwhile, so the answer is DeadlinePassed's
    with the ending ``disconnect`` in place of ``time-forfeit``."""

    name: str


Event = BestMove | Faulted | DeadlinePassed | Disconnected


# --- what the state asks for -------------------------------------------------------------


@dataclass(slots=True)
class Go:
    """Send ``position`` (the whole line, with its LF) and the ``go`` for
    ``limits`` to ``color`` (``mover_is_p1``: whose ``p1time`` is whose), then
    wait for its ``bestmove`` at most ``seconds`` after the write finished
    (then send :class:`DeadlinePassed`).  A write that blocks is bounded by
    the same ``seconds`` counted from its start.  A driver may wait longer
    for an engine whose reply times are credited with a lag compensation (a
    remote engine, ``specs/wire.md`` §Clock fairness): the state judges a
    reply by its ``time``, so it is in time only when credited within
    ``seconds``, and DeadlinePassed is right once no credit can bring it there."""

    color: Color
    position: bytes
    limits: SearchLimits
    mover_is_p1: bool
    seconds: float


@dataclass(slots=True)
class Stop:
    """Send ``stop`` to ``color`` and wait at most ``seconds`` for its
    ``bestmove`` (a :class:`BestMove`), then send :class:`DeadlinePassed`."""

    color: Color
    seconds: float


@dataclass(slots=True)
class GameOver:
    """The game is over: ``termination``, ``winner`` (None: a draw) and a
    sentence saying who did what; ``illegal_move`` the move text refused."""

    termination: Ending
    winner: Color | None
    detail: str
    illegal_move: str | None = None


Action = Go | Stop | GameOver


class Phase(enum.Enum):
    READY = "ready"  # made, start() not called
    SEARCHING = "searching"  # a Go was answered: waiting for its bestmove
    STOPPING = "stopping"  # a Stop was answered: waiting for the bestmove after stop
    OVER = "over"  # a GameOver was answered
    ERROR = "error"  # an event that did not fit: the state is unusable


class MatchStateError(RuntimeError):
    """An event that does not fit the phase (a driver's bug, not an engine's)."""


# --- the seams kept for speed --------------------------------------------------------------


class CanonicalSpellings:
    """Judge a move text: the canonical move and the position after it.

    Kept trick (``bench/README.md`` §The match): the move strings the
    referee has confirmed to be canonical spellings go straight to
    ``play()``, which judges them without ``parse_move`` (whose explanations
    list the legal moves: in Troll most of a ply's referee time).  Being a
    canonical spelling is a property of the game's notation, not of a
    position, so one set serves every game of that kind played in this
    process; it is bounded by the game's move strings."""

    _by_game: ClassVar[dict[Game, CanonicalSpellings]] = {}

    def __init__(self) -> None:
        self._known: set[str] = set()

    @classmethod
    def of(cls, game: Game) -> CanonicalSpellings:
        spellings = cls._by_game.get(game)
        if spellings is None:
            spellings = cls._by_game[game] = cls()
        return spellings

    def judge(self, position: Position, text: str) -> tuple[str, Position]:
        """``(move, after)``; IllegalMoveError (with the referee's reason) if
        ``text`` is not a legal move in ``position``."""
        if text in self._known:
            return text, position.play(text)
        move = position.parse_move(text)
        after = position.play(move)
        if move == text:
            self._known.add(text)
        return move, after


# --- the state -------------------------------------------------------------------------------


def _side(color: Color) -> str:
    return "White" if color is Color.WHITE else "Black"


class _Side:
    """One side of the game as the rules see it: its colour, its clock, how
    long it may take to answer ``stop``, and the other side."""

    __slots__ = ("color", "name", "clock", "stop_grace", "other")

    def __init__(self, color: Color, clock: Clock, stop_grace: float):
        self.color = color
        self.name = color  # what the record of a ply says (Ply.color)
        self.clock = clock
        self.stop_grace = stop_grace
        self.other: _Side = self


class MatchState:
    """The rules of one game between two engines, fed events, answering actions.

    ``fen``/``opening`` give the starting position and the opening's moves
    (the referee checks them here: :class:`arbiter.games.GameError` before any
    action); ``clocks`` each side's :class:`~arbiter.clock.Clock`, charged
    here; ``maxplies`` adjudicates the game at that many plies from the
    starting position, the opening's included; ``adjudication`` the score
    rules (``--resign``, ``--draw``: :mod:`arbiter.match.adjudication`; off
    when None or empty), judged on each ply the rules did not end, before
    ``maxplies``; ``stop_grace`` how long each side may take to answer
    ``stop`` (seconds).

    :attr:`position` is the position now, :attr:`plies` its plies from the
    starting position, :attr:`ending` the :class:`GameOver` once there is one.
    """

    def __init__(self, game: Game, clocks: Mapping[Color, Clock], *, fen: str | None = None,
                 opening: Sequence[str] = (), maxplies: int | None = None,
                 adjudication: Adjudication | None = None, stop_grace: Mapping[Color, float]):
        self.game = game
        self.position: Position = game.position(fen, opening)
        self.maxplies = maxplies
        self.plies = len(opening)
        self.phase = Phase.READY
        self.ending: GameOver | None = None
        white, black = (_Side(color, clocks[color], stop_grace[color]) for color in (Color.WHITE, Color.BLACK))
        white.other, black.other = black, white
        self._sides = {Color.WHITE: white, Color.BLACK: black}
        #: the side searching (or being stopped), None between searches
        self._mover: _Side | None = None
        self._seconds = 0.0  # the search's allowance (Go.seconds)
        self._faults: dict[Color, FaultReport] = {}
        self._spellings = CanonicalSpellings.of(game)
        #: Kept trick (one seam): the ``position ... moves`` line, one move
        #: appended per ply (protocol.search.PositionLine, amortised O(1)).
        self._line = PositionLine(fen, tuple(opening))
        self._moves: list[Ply] = []
        #: the last accepted ply, not recorded yet: (move, its side, measured
        #: ms, clock ms after it, reply, position after it, its lag figures);
        #: see record_ply
        self._unrecorded: tuple[str, _Side, float, int | None, Answer, Position,
                                tuple[int | None, int] | None] | None = None
        #: the score rules' bookkeeping (None: no score rule), and its verdict on the last ply
        self._adjudicator = Adjudicator(adjudication) if adjudication else None
        self._verdict: Verdict | None = None

    # -- events in, actions out -------------------------------------------------------------

    def start(self) -> Action:
        """The first action: the first Go, or GameOver if the opening ended the game."""
        if self.phase is not Phase.READY:
            raise self._error("start() after the game started")
        return self._next()

    def receive(self, event: Event) -> Action:
        """What to do after ``event`` (see the module docstring)."""
        phase = self.phase
        if phase is Phase.ERROR:
            raise MatchStateError("the state is unusable after an event that did not fit")
        if type(event) is BestMove:
            if phase is Phase.SEARCHING or phase is Phase.STOPPING:
                return self._bestmove(event)
        elif type(event) is Faulted:
            return self._faulted(event)
        elif type(event) is DeadlinePassed:
            if phase is Phase.SEARCHING:
                return self._search_overtime()
            if phase is Phase.STOPPING:
                return self._stall()
        elif type(event) is Disconnected:
            if phase is Phase.SEARCHING:
                return self._search_overtime(event.name)
            if phase is Phase.STOPPING:
                return self._stall()
        raise self._error(f"{type(event).__name__} in phase {phase.value}")

    @property
    def mover(self) -> Color | None:
        """The side searching (or being stopped), None between searches."""
        return None if self._mover is None else self._mover.color

    @property
    def moves(self) -> list[Ply]:
        """The record of every ply the engines played (the last one made now
        if it was not yet: :meth:`record_ply`)."""
        self.record_ply()
        return self._moves

    def record_ply(self) -> tuple[Ply, Position] | None:
        """Make the record of the last accepted ply, if not made yet; return
        it and the position after it (None if there is none to make).

        Kept trick (one seam): the trio driver calls this right after the
        next ``go`` is written, while that engine thinks, so reading the
        ply's ``info`` (which the engine parses only then) costs no engine
        any time; and once more when the game is over."""
        pending = self._unrecorded
        if pending is None:
            return None
        self._unrecorded = None
        move, side, elapsed_ms, clock_ms, reply, after, lag = pending
        info = reply.info
        if info:
            ply = Ply(move, side.name, round(elapsed_ms), clock_ms, engine_time_ms=info.time,
                      score=info.score, depth=info.depth, nodes=info.nodes, pv=list(info.pv))
        else:
            ply = Ply(move, side.name, round(elapsed_ms), clock_ms)
        if lag is not None:
            ply.rtt_ms, ply.comp_ms = lag
        self._moves.append(ply)
        return ply, after

    # -- between searches ------------------------------------------------------------------

    def _next(self) -> Action:
        """After a ply (or at the start): the rules' ending, the adjudication,
        or the next search."""
        position = self.position
        outcome = position.outcome()
        if outcome is not None:
            return self._over(outcome.termination, outcome.winner, _rule_detail(outcome, position))
        verdict = self._verdict
        if verdict is not None:
            kind = MatchTermination.ADJUDICATED_RESIGN if verdict.resign else MatchTermination.ADJUDICATED_DRAW
            return self._over(kind, verdict.winner, verdict.detail)
        if self.maxplies is not None and self.plies >= self.maxplies:
            return self._adjudicate()
        mover = position.to_move
        side = self._sides[mover]
        clock = side.clock
        self.phase = Phase.SEARCHING
        self._mover = side
        self._seconds = seconds = clock.deadline_ms() / 1000
        return Go(mover, self._line.to_bytes(), clock.limits(side.other.clock), mover is self.game.first, seconds)

    def _adjudicate(self) -> GameOver:
        """``--maxplies``: scores decide where the game keeps them, else a draw."""
        maxplies = self.maxplies
        scores = self.position.scores()
        if scores is None:
            return self._over(MatchTermination.MAX_PLIES, None, f"adjudicated a draw after {maxplies} plies")
        white, black = scores
        winner = None if white == black else (Color.WHITE if white > black else Color.BLACK)
        verdict = "a draw" if winner is None else f"a win for {_side(winner)}"
        return self._over(MatchTermination.MAX_PLIES, winner,
                          f"adjudicated {verdict} after {maxplies} plies on scores {white}-{black}")

    # -- a search ends ------------------------------------------------------------------------

    def _bestmove(self, event: BestMove) -> Action:
        """Charge the clock, let the referee judge the move, accept it."""
        reply = event.reply
        side = self._mover
        assert side is not None  # searching or stopping
        color, clock = side.color, side.clock
        elapsed_ms = (reply.time - event.started) * 1000
        if not clock.stop(elapsed_ms):
            return self._over(MatchTermination.TIME_FORFEIT, color.other,
                              f"{_side(color)} lost on time: bestmove after {elapsed_ms / 1000:.3f} s, "
                              f"allowed {clock.deadline_ms() / 1000:.3f} s")
        text = reply.move
        if not (text.isascii() and text.isprintable()):
            return self._over(MatchTermination.MALFORMED_BESTMOVE, color.other,
                              f"{_side(color)} sent a malformed bestmove {text!r}", text)
        position = self.position
        try:
            move, after = self._spellings.judge(position, text)
        except IllegalMoveError as exc:
            return self._over(MatchTermination.ILLEGAL_MOVE, color.other,
                              f"{_side(color)} played illegal move {text!r}: {exc.reason}", text)
        if self._unrecorded is not None:  # (made already when the driver follows the seam)
            self.record_ply()
        self._line.append(move)
        self.position = after
        self.plies += 1
        self._mover = None
        self._unrecorded = (move, side, elapsed_ms, clock.clock_ms(), reply, after, event.lag)
        if self._adjudicator is not None:  # the score is read now (the lazy info's seam is kept when off)
            self._verdict = self._adjudicator.ply(color, reply.info.score, self.plies)
        return self._next()

    def _search_overtime(self, disconnected: str | None = None) -> Action:
        """No bestmove by the search's deadline: with a clock or a movetime a
        time forfeit, or a ``disconnect`` when the mover's engine (named
        ``disconnected``) is away; without one (depth, nodes, inf) ``stop``
        and a grace."""
        side = self._mover
        assert side is not None  # searching
        if side.clock.tc.is_timed:
            if disconnected is not None:
                return self._over(MatchTermination.DISCONNECT, side.other.color,
                                  f"{disconnected} was disconnected and did not come back before "
                                  "its time ran out")
            return self._over(MatchTermination.TIME_FORFEIT, side.other.color,
                              f"{_side(side.color)} lost on time: no bestmove within {self._seconds:.3f} s")
        self.phase = Phase.STOPPING
        return Stop(side.color, side.stop_grace)

    def _stall(self) -> GameOver:
        side = self._mover
        assert side is not None  # stopping
        return self._over(MatchTermination.STALL, side.other.color,
                          f"{_side(side.color)} stalled: no bestmove within the {self._seconds:g} s stall limit "
                          f"nor {side.stop_grace:g} s after stop")

    def _faulted(self, event: Faulted) -> GameOver:
        """The engine that faulted first loses (a fault seen after the game
        ended changes nothing)."""
        if self.ending is not None:
            return self.ending
        for color, fault in ((Color.WHITE, event.white), (Color.BLACK, event.black)):
            if fault is not None:
                self._faults.setdefault(color, fault)
        first: tuple[float, Color] | None = None
        for color, fault in self._faults.items():
            if first is None or fault.time < first[0]:
                first = (fault.time, color)
        if first is None:
            raise self._error("Faulted without a fault")
        color = first[1]
        return self._fault_ending(color, self._faults[color])

    def _fault_ending(self, color: Color, fault: FaultReport) -> GameOver:
        if fault.kind == "crash":
            kind = MatchTermination.CRASH
        elif fault.kind == "stall":
            kind = MatchTermination.STALL
        elif fault.command == "bestmove" and fault.searching:
            kind = MatchTermination.MALFORMED_BESTMOVE
        else:
            kind = MatchTermination.PROTOCOL_ERROR
        illegal = fault.line if kind is MatchTermination.MALFORMED_BESTMOVE else None
        return self._over(kind, color.other, f"{_side(color)} {fault.detail}", illegal)

    # -- the end --------------------------------------------------------------------------------

    def _over(self, termination: Ending, winner: Color | None, detail: str,
              illegal_move: str | None = None) -> GameOver:
        self.phase = Phase.OVER
        self.ending = GameOver(termination, winner, detail, illegal_move)
        return self.ending

    def _error(self, message: str) -> MatchStateError:
        self.phase = Phase.ERROR
        return MatchStateError(message)


def _rule_detail(outcome: Outcome, position: Position) -> str:
    reason = outcome.termination.value
    scores = position.scores()
    tail = f" (scores {scores[0]}-{scores[1]})" if scores else ""
    if outcome.winner is None:
        return f"draw by {reason}{tail}"
    return f"{_side(outcome.winner)} wins by {reason}{tail}"
