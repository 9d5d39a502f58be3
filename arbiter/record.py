"""The record of a finished game, below the match: plain values, no I/O.

A :class:`GameRecord` is what :func:`arbiter.match.play_game` returns and
what the store, the records exporter, the standings and the CLI consume;
one :class:`Ply` per move an engine played.  This module imports only the
referee (:mod:`arbiter.games`), so every consumer can read a record without
the match, its engines or trio.

Terminations, score kinds and colours are enums or value types in here;
they become text only at the edge (``to_dict``, the database, the PGN and
JSON forms), and that text is today's: ``"time-forfeit"``, ``"cp 35"``,
``"white"`` (``specs/match.md`` §The game record, ``specs/storage.md``).

*Plies* means one thing everywhere: the plies of the game from its starting
position (the ``fen``, or the game's start position), **the opening's
included** (:attr:`GameRecord.plies`, ``--maxplies``, the PGN ``PlyCount``,
the ``plies`` column of the database).  The plies the engines played are
``len(record.moves)``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arbiter.games import Color, Result, Termination

__all__ = ["MatchTermination", "ScoreKind", "Score", "Ply", "GameRecord", "Ending"]


class MatchTermination(enum.StrEnum):
    """Endings the arbiter decides (the rules' endings are
    :class:`arbiter.games.Termination`).  Each is defined in ``specs/match.md``
    §Terminations; the values are the text of records and the database."""

    ILLEGAL_MOVE = "illegal-move"  # the referee refused the move: the mover loses
    MALFORMED_BESTMOVE = "malformed-bestmove"  # not `bestmove <move>`: the mover loses
    TIME_FORFEIT = "time-forfeit"  # over its clock (+ margin): the mover loses
    CRASH = "crash"  # exited or closed its output: it loses
    STALL = "stall"  # no bestmove within the stall limit nor after stop: it loses
    PROTOCOL_ERROR = "protocol-error"  # broke the protocol (2nd bestmove, overlong line...): it loses
    MAX_PLIES = "max-plies"  # adjudicated at --maxplies: scores decide, else a draw
    ADJUDICATED_RESIGN = "adjudicated-resign"  # --resign: the engines' scores say one side is lost
    ADJUDICATED_DRAW = "adjudicated-draw"  # --draw: both engines' scores stayed near zero
    HANDSHAKE_FAILURE = "handshake-failure"  # never in a record: the game is not played
    DISCONNECT = "disconnect"  # a remote engine gone mid-game did not come back in its time: it loses


#: Why a game ended: the rules' reason or the arbiter's.
Ending = Termination | MatchTermination


class ScoreKind(enum.StrEnum):
    """What an engine's score counts (``specs/protocol.md`` §info)."""

    CP = "cp"  # centipawn-like units, from the mover's view
    MATE = "mate"  # mate in N plies (negative: mated)
    WINPROB = "winprob"  # probability of winning, 0..1


_SCORE_SYNTAX = "expected 'cp N', 'mate N' or 'winprob P'"


@dataclass(frozen=True, slots=True, eq=False)
class Score:
    """An engine's score of its move, from the mover's view.

    ``str(score)`` is the record's text (``cp 35``, ``mate -3``, ``winprob
    0.62``) and :meth:`parse` reads it back: ``Score.parse(str(s)) == s``.  A
    winprob is kept as its text shows it (``:g``, six significant digits), so
    a score read back from a stored record equals the one the match made.

    A score is not its text: it equals only a score (``Score.parse("cp 35")
    == Score(CP, 35)``, never ``"cp 35"``); text is read with :meth:`parse`
    at the edge, and written as it is shown with :func:`arbiter.pgn.format_score`,
    the one formatter."""

    kind: ScoreKind
    value: int | float

    def __post_init__(self) -> None:
        kind = ScoreKind(self.kind)
        object.__setattr__(self, "kind", kind)
        value = self.value
        if kind is ScoreKind.WINPROB:
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or value < 0:
                raise ValueError(f"bad score: winprob {value!r} is not a number >= 0")
            object.__setattr__(self, "value", float(f"{value:g}"))
        elif isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"bad score: {kind} {value!r} is not a whole number")

    @classmethod
    def parse(cls, text: object) -> Score:
        """The score written as ``text``; ValueError if it is not one."""
        if isinstance(text, str):
            kind, _, value = text.partition(" ")
            try:
                if kind in (ScoreKind.CP, ScoreKind.MATE):
                    return cls(ScoreKind(kind), int(value))
                if kind == ScoreKind.WINPROB:
                    return cls(ScoreKind.WINPROB, float(value))
            except ValueError:
                pass
        raise ValueError(f"bad score {text!r} ({_SCORE_SYNTAX})")

    @classmethod
    def from_info(cls, info: Mapping[str, object]) -> Score | None:
        """The score of a search's merged ``info`` fields (``score_mate``,
        ``score_cp`` or ``score_winprob``, in that order), None without one."""
        for key, kind in (("score_mate", ScoreKind.MATE), ("score_cp", ScoreKind.CP),
                          ("score_winprob", ScoreKind.WINPROB)):
            value = info.get(key)
            if value is not None:
                return cls(kind, value)  # type: ignore[arg-type]  # the codec made it an int or float
        return None

    def __str__(self) -> str:
        if self.kind is ScoreKind.WINPROB:
            return f"winprob {self.value:g}"
        return f"{self.kind} {self.value}"

    def __repr__(self) -> str:
        return f"Score({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Score):
            return self.kind is other.kind and self.value == other.value
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.kind, self.value))


@dataclass(slots=True)
class ReportedInfo:
    """What an engine reported of one search: the latest value of each field
    of its ``info`` lines (None, or an empty pv, where it gave none); the
    score from the latest line with one (a mate first, then cp, then
    winprob: :meth:`Score.from_info`).  False when the engine reported
    nothing.  One is made per ply: a plain slotted class (not frozen, whose
    ``__init__`` costs a call per field), which nothing changes once made."""

    depth: int | None = None
    seldepth: int | None = None
    nodes: int | None = None
    nps: int | None = None
    time: int | None = None  # the engine's own search time, ms
    pv: tuple[str, ...] = ()  # at most MAX_PV_KEPT moves
    score: Score | None = None

    def __bool__(self) -> bool:
        return (self.score is not None or self.depth is not None or self.nodes is not None
                or self.time is not None or bool(self.pv) or self.seldepth is not None
                or self.nps is not None)


@dataclass(slots=True)
class Ply:
    """One ply played by an engine: what the arbiter measured and what the
    engine reported (the last value of each field of its ``info`` lines).

    ``score`` may be given as its text (``"cp 35"``): it is parsed."""

    move: str  # canonical
    color: Color  # who played it (its text, "white" or "black", is taken and read as it)
    time_ms: int  # measured: `go` written -> `bestmove` read
    clock_ms: int | None = None  # the mover's clock after the move (None without a clock)
    engine_time_ms: int | None = None  # the engine's own `info time`
    score: Score | None = None  # from the mover's view
    depth: int | None = None
    nodes: int | None = None
    pv: list[str] = field(default_factory=list)
    rtt_ms: int | None = None  # a remote engine's: the last round trip measured (specs/wire.md)
    comp_ms: int | None = None  # a remote engine's: the lag compensation of this ply

    def __post_init__(self) -> None:
        if type(self.color) is not Color:
            self.color = Color(self.color)
        if self.score is not None and not isinstance(self.score, Score):
            self.score = Score.parse(self.score)

    def to_dict(self) -> dict[str, Any]:
        data = {"move": self.move, "color": self.color, "time_ms": self.time_ms,
                "clock_ms": self.clock_ms, "engine_time_ms": self.engine_time_ms,
                "score": None if self.score is None else str(self.score),
                "depth": self.depth, "nodes": self.nodes, "pv": list(self.pv)}
        if self.comp_ms is not None:  # a remote engine's ply only
            data["rtt_ms"], data["comp_ms"] = self.rtt_ms, self.comp_ms
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ply:
        fields: dict[str, Any] = {k: data.get(k) for k in (
            "move", "color", "time_ms", "clock_ms", "engine_time_ms", "score", "depth", "nodes",
            "rtt_ms", "comp_ms")}
        return cls(**fields, pv=list(data.get("pv") or []))



def as_result(text: Any) -> Any:
    """A stored result's text as its :class:`Result` (anything else as it is:
    the readers that check records name it)."""
    return _RESULT_OF_TEXT.get(text, text)


#: each result by its text: one dict lookup a row (the store converts every
#: game row it reads; calling the enum costs several times that)
_RESULT_OF_TEXT: dict[str, Result] = {result.value: result for result in Result}


@dataclass
class GameRecord:
    """A finished game.  JSON-able through :meth:`to_dict` / :meth:`from_dict`.

    ``result`` is from White's view (``1-0``, ``0-1``, ``1/2-1/2``) whoever
    moved first; ``termination`` is the text of a
    :class:`~arbiter.games.Termination` or :class:`MatchTermination`;
    ``termination_detail`` is one sentence saying who did what.  ``fen`` None
    means the game's start position; ``opening_moves`` were given, not played
    by the engines; ``moves`` are the plies the engines played.
    """

    game: str
    white: str
    black: str
    result: Result
    termination: str
    termination_detail: str
    fen: str | None = None
    opening_moves: list[str] = field(default_factory=list)
    moves: list[Ply] = field(default_factory=list)
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
        """Plies from the starting position: the opening's and the engines'."""
        return len(self.opening_moves) + len(self.moves)

    @property
    def all_moves(self) -> list[str]:
        return self.opening_moves + [m.move for m in self.moves]

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON values (the fields in order; moves as objects,
        scores as their text)."""
        data: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "moves":
                value = [move.to_dict() for move in value]
            elif isinstance(value, list | dict):
                value = value.copy()
            data[name] = value
        return data

    def values_to_store(self) -> dict[str, Any]:
        """:meth:`to_dict`'s values for one reader that only reads them (the
        store): a record may hand over its own lists (a received record's
        plies as they came) instead of copies, so nothing may change them."""
        return self.to_dict()

    def encoded_moves(self) -> str | None:
        """The JSON text of ``to_dict()["moves"]`` if this record came with it
        (a cluster worker's, checked when read), else None: the store then
        writes it from :meth:`to_dict`.  It saves the coordinator encoding
        again what a worker encoded (``specs/cluster.md`` §Requests and results)."""
        return None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameRecord:
        """Inverse of :meth:`to_dict`; unknown keys are ignored.  ValueError
        names the move whose score is not one."""
        values = dict(data)
        moves = []
        for ply, move in enumerate(data.get("moves") or [], start=1):
            try:
                moves.append(Ply.from_dict(move))
            except ValueError as exc:
                raise ValueError(f"move {ply}: {exc}") from None
        values["moves"] = moves
        values["result"] = as_result(values.get("result"))
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in values.items() if k in known})
