"""Strict mode: what a finished game's record says an engine lied about
(``specs/match.md`` §Strict mode).  Pure: a :class:`~arbiter.record.GameRecord`
and the game's referee in, warnings out; no I/O, no engine.

Three checks, each over the engines' own reports (the ``info`` fields kept
with each ply):

* **illegal-pv**: a principal variation that is not a legal line from the
  position the engine searched (a move the referee refuses, or a move after
  the line has already ended the game);
* **mate-contradicted**: a ``mate N`` score (a forced win in N plies; a
  negative N a forced loss) that the game's result by the rules contradicts:
  the side that claimed a forced win did not win, or the side that claimed a
  forced loss won.  Only an ending by the rules counts: a fault, a time
  forfeit or an adjudication ends the game before the position could
  answer;
* **search-time**: an ``info time`` longer than the time the arbiter
  measured for that search (from its ``go`` written to its ``bestmove``
  read, the lag compensation of a remote engine added back), by more than
  :data:`SEARCH_TIME_SLACK_MS`.

A game gives at most one warning per check and engine: the first ply where
it happened, and how many plies did (an engine that lies on every move
makes six warnings at most, not one per ply).  Strict mode changes no game:
the run stores the warnings with the game, counts them, and exits non-zero
when there were any.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arbiter.games import Game, GameError, Position, Result, Termination
from arbiter.record import GameRecord, Ply, ScoreKind

__all__ = ["StrictCheck", "StrictWarning", "check_game", "SEARCH_TIME_SLACK_MS"]

#: How much longer than the measured time an engine's ``info time`` may be,
#: in ms.  The engine's interval (``go`` read to ``info`` written) lies inside
#: the arbiter's (``go`` written to ``bestmove`` read), but the arbiter takes
#: its start when its write returns: a busy machine that deschedules it there
#: for a few ms, after the engine has read its ``go``, makes an honest report
#: longer than the measure (up to 5 ms over 1,370 plies of the sample engines
#: on the loaded 2-core test machine; both figures are also whole ms).  20 ms
#: is the clock error a run is built to stay within (issue 32: p99 at 8x the
#: cores), so a report beyond it is not the measure's error; a lie (a time
#: counted from an earlier moment, another unit) is larger.
SEARCH_TIME_SLACK_MS = 20

#: the rules' endings: the only ones a mate claim can be judged by
_RULE_ENDINGS = frozenset(t.value for t in Termination)


class StrictCheck(enum.StrEnum):
    """What a strict warning is about (``specs/match.md`` §Strict mode)."""

    ILLEGAL_PV = "illegal-pv"
    MATE_CONTRADICTED = "mate-contradicted"
    SEARCH_TIME = "search-time"


@dataclass(frozen=True)
class StrictWarning:
    """One check that failed for one engine in one game: ``ply`` is the first
    ply where it did (plies from the starting position, the opening's
    included), ``count`` how many of the engine's plies did, ``detail`` one
    sentence saying what it reported and why that cannot be."""

    check: StrictCheck
    engine: str
    color: str
    ply: int
    count: int
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check.value, "engine": self.engine, "color": self.color,
                "ply": self.ply, "count": self.count, "detail": self.detail}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StrictWarning:
        return cls(check=StrictCheck(data["check"]), engine=data["engine"], color=data["color"],
                   ply=data["ply"], count=data["count"], detail=data["detail"])

    def __str__(self) -> str:
        more = f" ({self.count} plies in all)" if self.count > 1 else ""
        return f"{self.check.value}: {self.detail}{more}"


def check_game(record: GameRecord, game: Game) -> list[StrictWarning]:
    """The strict warnings of ``record`` (a game of ``game``), White's first,
    each check in the order of :class:`StrictCheck`.  ValueError if the
    record's own moves are not a game of ``game`` (a record the match made
    always is)."""
    try:
        position = game.position(record.fen, record.opening_moves)
    except (GameError, ValueError) as exc:
        raise ValueError(f"the record's opening is not a position of {game.name}: {exc}") from None
    first: dict[tuple[StrictCheck, str], tuple[int, str]] = {}
    counts: dict[tuple[StrictCheck, str], int] = {}

    def found(check: StrictCheck, color: str, ply: int, detail: str) -> None:
        key = (check, color)
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, (ply, detail))

    for number, ply in enumerate(record.moves, start=len(record.opening_moves) + 1):
        side = _side(ply.color)
        bad = _illegal_pv(position, ply)
        if bad is not None:
            found(StrictCheck.ILLEGAL_PV, ply.color, number, f"{side}'s principal variation at ply "
                  f"{number} ({' '.join(ply.pv)}) {bad}")
        contradicted = _mate_contradicted(record, ply)
        if contradicted is not None:
            found(StrictCheck.MATE_CONTRADICTED, ply.color, number,
                  f"{side} reported {ply.score} at ply {number} {contradicted}")
        measured = ply.time_ms + (ply.comp_ms or 0)
        if ply.engine_time_ms is not None and ply.engine_time_ms > measured + SEARCH_TIME_SLACK_MS:
            found(StrictCheck.SEARCH_TIME, ply.color, number,
                  f"{side} reported a search of {ply.engine_time_ms} ms (info time) at ply {number}, "
                  f"but its go to its bestmove took {measured} ms")
        try:
            position = position.play(ply.move)
        except GameError as exc:
            raise ValueError(f"ply {number} of the record ({ply.move!r}) is not legal: {exc}") from None
    warnings = []
    for color in ("white", "black"):
        for check in StrictCheck:
            if (check, color) in first:
                ply_number, detail = first[check, color]
                engine = record.white if color == "white" else record.black
                warnings.append(StrictWarning(check, engine, color, ply_number,
                                              counts[check, color], detail))
    return warnings


def _side(color: str) -> str:
    return "White" if color == "white" else "Black"


def _illegal_pv(position: Position, ply: Ply) -> str | None:
    """Why ``ply``'s pv is not a line from ``position``, or None."""
    for index, move in enumerate(ply.pv, start=1):
        try:
            position = position.play(position.parse_move(move))
        except GameError as exc:
            return f"has an illegal move {move!r} (its move {index}): {exc}"
    return None


def _mate_contradicted(record: GameRecord, ply: Ply) -> str | None:
    """Why the result contradicts ``ply``'s mate score, or None (no mate
    score, or an ending not by the rules, or a result that agrees)."""
    score = ply.score
    if score is None or score.kind is not ScoreKind.MATE or record.termination not in _RULE_ENDINGS:
        return None
    won = {Result.WHITE_WINS: "white", Result.BLACK_WINS: "black"}.get(record.result)
    claims_win = score.value > 0
    if claims_win and won != ply.color:
        outcome = "drew" if won is None else "lost"
        return (f"(a forced win in {score.value} plies) but {outcome} by the rules "
                f"({record.result}, {record.termination})")
    if not claims_win and won == ply.color:
        return (f"(a forced loss in {-score.value} plies) but won by the rules "
                f"({record.result}, {record.termination})")
    return None
