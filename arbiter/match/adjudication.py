"""Score adjudication: cutechess's ``-resign`` and ``-draw`` (no I/O).

The rules (``specs/match.md`` §Adjudication):

* ``--resign movecount=N score=S [twosided=true]``: a side whose own score
  was ``-S`` or worse on each of its last ``N`` moves loses; with
  ``twosided`` only if the other side's score was ``+S`` or better on each
  of its last ``N`` moves too (both engines agree).
* ``--draw movenumber=M movecount=N score=S``: a draw when both sides'
  scores were within ``S`` of zero on each of their last ``N`` moves (the
  last ``2N`` plies), and at least ``M`` full moves (``2M`` plies from the
  starting position, the opening's included) have been played.

Scores are the engines' own, from the mover's view, on one scale
(:func:`centipawns`): ``cp`` as given, ``mate`` as :data:`MATE_CP` with its
sign, ``winprob`` through the logistic that maps a win probability to
centipawns.  A move without a score breaks every run it was part of.

:class:`Adjudicator` holds the runs of one game; :class:`MatchState
<arbiter.match.state.MatchState>` feeds it each ply the rules did not end.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from arbiter.games import Color
from arbiter.record import Score, ScoreKind
from protocol.limits import MAX_INT

__all__ = ["AdjudicationError", "ResignRule", "DrawRule", "Adjudication", "Verdict", "Adjudicator",
           "centipawns", "MATE_CP", "WINPROB_CLAMP"]

#: A mate score on the centipawn scale: beyond any threshold a user sets
#: (an engine that sees a forced win is certain).
MATE_CP = 100_000

#: A winprob is clamped to [WINPROB_CLAMP, 1 - WINPROB_CLAMP] before it is
#: mapped, so 0 and 1 (certainty) become +-1200 cp rather than infinities.
WINPROB_CLAMP = 0.001

#: The scale of the logistic: p = 1 / (1 + 10 ** (-cp / WINPROB_SCALE)), so
#: p = 0.5 is 0 cp and p = 0.76 about 200 cp (the Elo logistic, as engines
#: that report both usually map them).
WINPROB_SCALE = 400


class AdjudicationError(ValueError):
    """A ``--resign`` or ``--draw`` value that is not one; the message names
    the option, the value and what is wrong."""


def centipawns(score: Score) -> float:
    """``score`` on the centipawn scale (see the module docstring)."""
    if score.kind is ScoreKind.CP:
        return float(score.value)
    if score.kind is ScoreKind.MATE:
        return float(MATE_CP if score.value > 0 else -MATE_CP)
    p = min(max(float(score.value), WINPROB_CLAMP), 1 - WINPROB_CLAMP)
    return WINPROB_SCALE * math.log10(p / (1 - p))


def _fields(option: str, text: str, keys: tuple[str, ...], required: tuple[str, ...]) -> dict[str, str]:
    """``key=value`` words of ``text``, each key known and given once, the required ones all given."""
    found: dict[str, str] = {}
    for word in text.split():
        key, eq, value = word.partition("=")
        if not eq or not value:
            raise AdjudicationError(f"{option} {text!r}: {word!r} is not key=value")
        if key not in keys:
            raise AdjudicationError(f"{option} {text!r}: unknown key {key!r} (expected {', '.join(keys)})")
        if key in found:
            raise AdjudicationError(f"{option} {text!r}: {key} given twice")
        found[key] = value
    missing = [key for key in required if key not in found]
    if missing:
        raise AdjudicationError(f"{option} {text!r}: {missing[0]}= is missing")
    return found


def _whole(option: str, text: str, key: str, value: str, low: int) -> int:
    if not value.lstrip("-").isdigit() or len(value) > 19:
        raise AdjudicationError(f"{option} {text!r}: {key} must be a whole number, not {value!r}")
    number = int(value)
    if not low <= number <= MAX_INT:
        raise AdjudicationError(f"{option} {text!r}: {key} must be from {low} to {MAX_INT}, not {number}")
    return number


@dataclass(frozen=True)
class ResignRule:
    """``--resign``: ``movecount`` moves of one side at ``-score`` or worse
    (and, ``twosided``, of the other at ``+score`` or better) lose."""

    movecount: int
    score: int
    twosided: bool = False

    @classmethod
    def parse(cls, text: str) -> ResignRule:
        """``movecount=N score=S [twosided=true|false]``; AdjudicationError if bad."""
        found = _fields("--resign", text, ("movecount", "score", "twosided"), ("movecount", "score"))
        twosided = found.get("twosided", "false")
        if twosided not in ("true", "false"):
            raise AdjudicationError(f"--resign {text!r}: twosided must be true or false, not {twosided!r}")
        return cls(_whole("--resign", text, "movecount", found["movecount"], 1),
                   _whole("--resign", text, "score", found["score"], 1), twosided == "true")

    def __str__(self) -> str:
        """The canonical spelling: ``ResignRule.parse(str(rule)) == rule``."""
        tail = " twosided=true" if self.twosided else ""
        return f"movecount={self.movecount} score={self.score}{tail}"


@dataclass(frozen=True)
class DrawRule:
    """``--draw``: from full move ``movenumber`` on, ``movecount`` moves of
    each side within ``score`` of zero are a draw."""

    movenumber: int
    movecount: int
    score: int

    @classmethod
    def parse(cls, text: str) -> DrawRule:
        """``movenumber=M movecount=N score=S``; AdjudicationError if bad."""
        keys = ("movenumber", "movecount", "score")
        found = _fields("--draw", text, keys, keys)
        return cls(_whole("--draw", text, "movenumber", found["movenumber"], 0),
                   _whole("--draw", text, "movecount", found["movecount"], 1),
                   _whole("--draw", text, "score", found["score"], 0))

    def __str__(self) -> str:
        """The canonical spelling: ``DrawRule.parse(str(rule)) == rule``."""
        return f"movenumber={self.movenumber} movecount={self.movecount} score={self.score}"


@dataclass(frozen=True)
class Adjudication:
    """The score rules of a match: either, both or neither (the default: off)."""

    resign: ResignRule | None = None
    draw: DrawRule | None = None

    @classmethod
    def parse(cls, resign: str | None = None, draw: str | None = None) -> Adjudication:
        """From the options' texts (None: that rule is off)."""
        return cls(None if resign is None else ResignRule.parse(resign),
                   None if draw is None else DrawRule.parse(draw))

    def __bool__(self) -> bool:
        return self.resign is not None or self.draw is not None


@dataclass(frozen=True)
class Verdict:
    """An adjudication: ``winner`` None is a draw; ``detail`` names the scores."""

    resign: bool
    winner: Color | None
    detail: str


def _side(color: Color) -> str:
    return "White" if color is Color.WHITE else "Black"


def _texts(scores: list[Score]) -> str:
    return ", ".join(str(score) for score in scores)


class Adjudicator:
    """The runs of one game: each side's scores of its last moves, fed one
    ply at a time (:meth:`ply`), which answers a :class:`Verdict` once a rule
    is met (None before)."""

    def __init__(self, rules: Adjudication):
        self.rules = rules
        keep = max(rules.resign.movecount if rules.resign else 0, rules.draw.movecount if rules.draw else 0)
        #: each side's scores of its last ``keep`` moves, newest last
        self._last: dict[Color, deque[Score | None]] = {
            color: deque(maxlen=keep) for color in (Color.WHITE, Color.BLACK)}

    def ply(self, color: Color, score: Score | None, plies: int) -> Verdict | None:
        """``color`` moved with ``score`` (its own, from its view; None: none
        given); ``plies`` is the game's plies now, the opening's included."""
        self._last[color].append(score)
        resign, draw = self.rules.resign, self.rules.draw
        if resign is not None:
            verdict = self._resign(resign, color) or self._resign(resign, color.other)
            if verdict is not None:
                return verdict
        if draw is not None and plies >= 2 * draw.movenumber:
            return self._draw(draw)
        return None

    def _run(self, color: Color, count: int) -> list[Score] | None:
        """``color``'s last ``count`` scores, if its last ``count`` moves all had one."""
        last = list(self._last[color])[-count:]
        run = [score for score in last if score is not None]
        return run if len(run) == count else None

    def _resign(self, rule: ResignRule, loser: Color) -> Verdict | None:
        run = self._run(loser, rule.movecount)
        if run is None or any(centipawns(s) > -rule.score for s in run):
            return None
        detail = (f"adjudicated a loss for {_side(loser)} (resign): its score over its last "
                  f"{rule.movecount} move(s) was {_texts(run)}, at most -{rule.score} cp")
        if rule.twosided:
            other = self._run(loser.other, rule.movecount)
            if other is None or any(centipawns(s) < rule.score for s in other):
                return None
            detail += f", and {_side(loser.other)}'s was {_texts(other)}, at least +{rule.score} cp"
        return Verdict(True, loser.other, detail)

    def _draw(self, rule: DrawRule) -> Verdict | None:
        runs = [self._run(color, rule.movecount) for color in (Color.WHITE, Color.BLACK)]
        for run in runs:
            if run is None or any(abs(centipawns(s)) > rule.score for s in run):
                return None
        white, black = runs
        assert white is not None and black is not None
        return Verdict(False, None, (
            f"adjudicated a draw: scores within {rule.score} cp of zero over each side's last "
            f"{rule.movecount} move(s) (White {_texts(white)}; Black {_texts(black)}), "
            f"from move {rule.movenumber}"))
