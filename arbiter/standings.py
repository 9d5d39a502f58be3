"""Standings of a tournament from its stored games: points, ratings, pair
statistics and SPRT, as one value the live display, ``arbiter standings``
and ``--json`` all print.

The math is :mod:`arbiter.rating`'s; this module only sorts finished games
into what it needs: W/D/L per pair of engines (all the joint ratings need
too), and the pentanomial counts of the game pairs (two games of one pairing
sharing a ``pair`` number, colours swapped -- ``specs/tournament.md``
§Schedule).  Incomplete game pairs count in W/D/L but not in the pentanomial.
A running tournament keeps a :class:`Tally` and adds each game as it comes.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arbiter.rating import SPRT, Anchor, PairStats, SPRTStatus, joint_ratings_from_pairs

_SCORE = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


@dataclass(frozen=True)
class EngineLine:
    """One engine's line: games, points, W/D/L, rating (mean 0) and its 95% +/-."""

    name: str
    games: int
    points: float
    wins: int
    draws: int
    losses: int
    elo: float | None
    error: float | None


@dataclass(frozen=True)
class PairLine:
    """Engine ``first`` against ``second``, from ``first``'s view."""

    first: str
    second: str
    stats: PairStats


@dataclass
class Standings:
    engines: list[EngineLine]
    pairs: list[PairLine]
    games: int
    terminations: Counter = field(default_factory=Counter)
    sprt: SPRT | None = None
    sprt_status: SPRTStatus | None = None

    def to_json(self) -> dict[str, Any]:
        def num(x: float | None, digits: int = 1) -> float | str | None:
            if x is None:
                return None
            if math.isinf(x):
                return "+inf" if x > 0 else "-inf"
            return round(x, digits)

        pairs = []
        for line in self.pairs:
            s = line.stats
            pairs.append({
                "first": line.first, "second": line.second, "games": s.games,
                "wins": s.wins, "draws": s.draws, "losses": s.losses,
                "score": num(s.score, 4), "draw_ratio": num(s.draw_ratio, 4),
                "elo": num(s.elo), "elo_error": num(s.elo_error), "nelo": num(s.nelo),
                "los": num(s.los, 4),
                "pentanomial": list(s.pentanomial) if s.pentanomial else None,
                "penta_elo": num(s.penta_elo), "penta_elo_error": num(s.penta_elo_error),
                "penta_nelo": num(s.penta_nelo),
            })
        data: dict[str, Any] = {
            "games": self.games,
            "engines": [{"name": e.name, "games": e.games, "points": e.points,
                         "wins": e.wins, "draws": e.draws, "losses": e.losses,
                         "elo": num(e.elo), "elo_error": num(e.error)} for e in self.engines],
            "pairs": pairs,
            "terminations": dict(sorted(self.terminations.items())),
            "sprt": None,
        }
        if self.sprt is not None and self.sprt_status is not None:
            st = self.sprt_status
            data["sprt"] = {"elo0": self.sprt.elo0, "elo1": self.sprt.elo1,
                            "alpha": self.sprt.alpha, "beta": self.sprt.beta,
                            "llr": round(st.llr, 4), "lower": round(st.lower, 4),
                            "upper": round(st.upper, 4), "decision": st.decision,
                            "model": st.model}
        return data


def compute_standings(engines: Sequence[str], games: Iterable[Mapping[str, Any]],
                      sprt: SPRT | None = None) -> Standings:
    """Standings from game rows (``white``, ``black``, ``result``,
    ``termination``, and ``pairing``/``pair`` for the pentanomial counts).

    ``engines`` fixes the order of names in pairs: the one listed first is a
    pair's ``first``.  Engines without games are listed too.
    """
    tally = Tally(engines)
    for row in games:
        tally.add(row)
    return tally.standings(sprt)


class Tally:
    """The counts standings are made of, taken one game at a time.

    A running tournament adds each game as it is stored and asks for the
    standings after each: :meth:`add` costs the same for the 10000th game
    as for the first, and :meth:`standings` depends on the number of
    engines, not of games (the joint ratings need only each pair's games
    and points).  Recounting every game after each one made a long match
    quadratic, and stalled the event loop that times the engines for tens of
    milliseconds per game by the ten-thousandth."""

    def __init__(self, engines: Sequence[str]):
        self.order: dict[str, int] = {name: i for i, name in enumerate(engines)}
        self.wdl: dict[str, list[int]] = {name: [0, 0, 0] for name in engines}
        self.points: dict[str, float] = defaultdict(float)
        self.per_pair: dict[tuple[str, str], list[int]] = {}
        self.penta: dict[tuple[str, str], list[int]] = {}
        #: the first game of each game pair whose second has not come yet
        self.half_pairs: dict[tuple[Any, Any, str, str], float] = {}
        self.terminations: Counter = Counter()
        self.games = 0

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one game row (one without a decisive or drawn result is skipped)."""
        white, black, result = row["white"], row["black"], row["result"]
        if result not in _SCORE:
            return
        self.games += 1
        self.terminations[row.get("termination") or "?"] += 1
        w, b = _SCORE[result]
        order, wdl = self.order, self.wdl
        for name in (white, black):
            if name not in order:
                order[name] = len(order)
                wdl[name] = [0, 0, 0]
        self.points[white] += w
        self.points[black] += b
        for name, score in ((white, w), (black, b)):
            wdl[name][0 if score == 1 else 1 if score == 0.5 else 2] += 1
        first, second = sorted((white, black), key=order.__getitem__)
        first_score = w if first == white else b
        counts = self.per_pair.setdefault((first, second), [0, 0, 0])
        counts[0 if first_score == 1 else 1 if first_score == 0.5 else 2] += 1
        if row.get("pair") is not None:
            key = (row.get("pairing"), row["pair"], first, second)
            other = self.half_pairs.pop(key, None)
            if other is None:
                self.half_pairs[key] = first_score
            else:  # the game pair is complete: one pentanomial count
                penta = self.penta.setdefault((first, second), [0, 0, 0, 0, 0])
                penta[round((other + first_score) * 2)] += 1

    def standings(self, sprt: SPRT | None = None) -> Standings:
        order, penta = self.order, self.penta
        pairs = [PairLine(a, b, PairStats(wins, draws, losses, pentanomial=_five(penta.get((a, b)))))
                 for (a, b), (wins, draws, losses) in sorted(
                     self.per_pair.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]]))]
        ratings = joint_ratings_from_pairs({(line.first, line.second): line.stats for line in pairs},
                                           anchor=Anchor(), engines=list(order))
        lines = []
        for rating in ratings:
            wins, draws, losses = self.wdl[rating.engine]
            lines.append(EngineLine(rating.engine, wins + draws + losses, self.points[rating.engine],
                                    wins, draws, losses,
                                    rating.elo, rating.error))
        lines.sort(key=lambda e: (e.elo is None, -(e.elo or 0.0), -e.points, order[e.name]))
        standings = Standings(engines=lines, pairs=pairs, games=self.games,
                              terminations=Counter(self.terminations))
        if sprt is not None:
            stats = pairs[0].stats if pairs else PairStats(0, 0, 0)
            standings.sprt = sprt
            standings.sprt_status = sprt.status(stats)
        return standings


def _five(counts: list[int] | None) -> tuple[int, int, int, int, int] | None:
    """A pentanomial count list as the tuple PairStats takes."""
    if counts is None:
        return None
    a, b, c, d, e = counts
    return (a, b, c, d, e)


def fmt_elo(value: float | None, error: float | None = None) -> str:
    """``+35.2 +/- 20.1`` (or ``-`` when unknown)."""
    def one(x: float | None) -> str:
        if x is None:
            return "-"
        if math.isinf(x):
            return "+inf" if x > 0 else "-inf"
        return f"{x:+.1f}"
    if error is None or value is None or math.isinf(value):
        return one(value)
    return f"{one(value)} +/- {one(error).lstrip('+')}"
