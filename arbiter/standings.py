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
#: A game's score for one side -> its place in a win/draw/loss triple.
_SLOT = {1.0: 0, 0.5: 1, 0.0: 2}


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


@dataclass(frozen=True)
class Difference:
    """The headline of a two-engine match: ``first``'s Elo minus ``second``'s.

    From the pair's own games, as cutechess-cli and fastchess print it: the
    pentanomial figures when complete game pairs exist (``samples`` says
    which), else the trinomial ones.  Each figure is ``None`` when unknown;
    :meth:`reason` says why a figure is ``None`` or infinite
    (``specs/tournament.md`` §Standings).
    """

    first: str
    second: str
    stats: PairStats

    @property
    def samples(self) -> str:
        """``"pentanomial"`` (game pairs) or ``"trinomial"`` (games)."""
        return "pentanomial" if self.stats.pairs else "trinomial"

    def _figure(self, name: str) -> str:
        return ("penta_" if self.stats.pairs else "") + name

    @property
    def elo(self) -> float | None:
        return getattr(self.stats, self._figure("elo"))

    @property
    def elo_error(self) -> float | None:
        return getattr(self.stats, self._figure("elo_error"))

    @property
    def elo_interval(self) -> tuple[float, float] | None:
        return getattr(self.stats, self._figure("elo_interval"))

    @property
    def nelo(self) -> float | None:
        return getattr(self.stats, self._figure("nelo"))

    @property
    def los(self) -> float | None:
        return getattr(self.stats, self._figure("los"))

    def reason(self, figure: str) -> str | None:
        """Why ``figure`` (``elo``, ``elo_error``, ``elo_interval``, ``nelo``,
        ``los``) is ``None`` or infinite; ``None`` when it is finite."""
        return self.stats.reason(self._figure(figure))


@dataclass
class Standings:
    engines: list[EngineLine]
    pairs: list[PairLine]
    games: int
    terminations: Counter = field(default_factory=Counter)
    sprt: SPRT | None = None
    sprt_status: SPRTStatus | None = None
    #: a two-engine match's Elo difference (None with more engines)
    difference: Difference | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``arbiter standings --json`` (``specs/tournament.md``
        §Standings): a number that is infinite or undefined is ``null``, and
        the object holding it says why in ``null_reasons``."""
        pairs = []
        for line in self.pairs:
            s = line.stats
            entry: dict[str, Any] = {
                "first": line.first, "second": line.second, "games": s.games,
                "wins": s.wins, "draws": s.draws, "losses": s.losses,
                "pentanomial": list(s.pentanomial) if s.pentanomial else None}
            entry.update(_figures(s, _PAIR_FIGURES))
            pairs.append(entry)
        data: dict[str, Any] = {
            "games": self.games,
            "engines": [_engine_json(e) for e in self.engines],
            "pairs": pairs,
            "difference": None if self.difference is None else _difference_json(self.difference),
            "terminations": dict(sorted(self.terminations.items())),
            "sprt": None,
        }
        if self.sprt is not None and self.sprt_status is not None:
            data["sprt"] = _sprt_json(self.sprt, self.sprt_status)
        return data


#: JSON key -> (PairStats attribute, decimals) of a pair's figures
_PAIR_FIGURES = {
    "score": ("score", 4), "draw_ratio": ("draw_ratio", 4),
    "elo": ("elo", 1), "elo_error": ("elo_error", 1), "elo_interval": ("elo_interval", 1),
    "nelo": ("nelo", 1), "los": ("los", 4),
    "penta_elo": ("penta_elo", 1), "penta_elo_error": ("penta_elo_error", 1),
    "penta_elo_interval": ("penta_elo_interval", 1), "penta_nelo": ("penta_nelo", 1),
}

#: the same for a match's headline difference (Difference attributes)
_DIFFERENCE_FIGURES = {
    "elo": ("elo", 1), "elo_error": ("elo_error", 1), "elo_interval": ("elo_interval", 1),
    "nelo": ("nelo", 1), "los": ("los", 4),
}


def _json_number(x: float | None, digits: int) -> float | None:
    """A finite number rounded, else ``None`` (JSON has no infinity)."""
    return None if x is None or not math.isfinite(x) else round(x, digits)


def _figures(source: Any, figures: Mapping[str, tuple[str, int]]) -> dict[str, Any]:
    """``source``'s figures as JSON values, with ``null_reasons``: for each
    figure that is ``null`` (or an interval with a ``null`` end), why."""
    out: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    for key, (attr, digits) in figures.items():
        value = getattr(source, attr)
        if isinstance(value, tuple):
            out[key] = [_json_number(x, digits) for x in value]
        else:
            out[key] = _json_number(value, digits)
        why = source.reason(attr)
        if why is not None:
            reasons[key] = why
    out["null_reasons"] = reasons
    return out


def _engine_json(line: EngineLine) -> dict[str, Any]:
    reasons = {} if line.elo is not None else {"elo": "no games", "elo_error": "no games"}
    return {"name": line.name, "games": line.games, "points": line.points,
            "wins": line.wins, "draws": line.draws, "losses": line.losses,
            "elo": _json_number(line.elo, 1), "elo_error": _json_number(line.error, 1),
            "null_reasons": reasons}


def _difference_json(diff: Difference) -> dict[str, Any]:
    s = diff.stats
    return {"first": diff.first, "second": diff.second, "samples": diff.samples,
            "games": s.games, "pairs": s.pairs, "draw_ratio": _json_number(s.draw_ratio, 4),
            **_figures(diff, _DIFFERENCE_FIGURES)}


def _sprt_json(sprt: SPRT, st: SPRTStatus) -> dict[str, Any]:
    return {"elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha, "beta": sprt.beta,
            "llr": round(st.llr, 4), "lower": round(st.lower, 4),
            "upper": round(st.upper, 4), "decision": st.decision, "model": st.model,
            "samples": st.samples,
            "games_left": None if st.games_left is None else round(st.games_left),
            "null_reasons": {} if st.games_left is not None else {
                "games_left": "too few results yet to estimate the test's length"}}


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
        """Count one game row (one without a decisive or drawn result is skipped).

        Called once per stored game by every standings (the view counts
        10,000-game tournaments with it), hence written without loops."""
        score = _SCORE.get(row["result"])
        if score is None:
            return
        white, black = row["white"], row["black"]
        self.games += 1
        self.terminations[row.get("termination") or "?"] += 1
        w, b = score
        order, wdl = self.order, self.wdl
        if white not in order:
            order[white] = len(order)
            wdl[white] = [0, 0, 0]
        if black not in order:
            order[black] = len(order)
            wdl[black] = [0, 0, 0]
        self.points[white] += w
        self.points[black] += b
        wdl[white][_SLOT[w]] += 1
        wdl[black][_SLOT[b]] += 1
        if order[white] <= order[black]:  # the pair's first engine is the one seen first
            first, second, first_score = white, black, w
        else:
            first, second, first_score = black, white, b
        counts = self.per_pair.setdefault((first, second), [0, 0, 0])
        counts[_SLOT[first_score]] += 1
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
        # Points first, then the rating (specs/tournament.md §Standings).
        lines.sort(key=lambda e: (-e.points, e.elo is None, -(e.elo or 0.0), order[e.name]))
        standings = Standings(engines=lines, pairs=pairs, games=self.games,
                              terminations=Counter(self.terminations))
        if len(order) == 2:
            first, second = sorted(order, key=order.__getitem__)
            stats = pairs[0].stats if pairs else PairStats(0, 0, 0)
            standings.difference = Difference(first, second, stats)
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


def fmt_signed(x: float | None) -> str:
    """``+35.2``, ``+inf``/``-inf``, or ``-`` when unknown."""
    if x is None:
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:+.1f}"


def fmt_elo(value: float | None, error: float | None = None, *, undefined: bool = False) -> str:
    """``+35.2 +/- 20.1``; ``+159.0 +/- inf`` when the interval is unbounded;
    ``+0.0 +/- undefined`` with ``undefined`` (an interval that the data cannot
    give: no spread, ``specs/ratings.md`` §Edge cases); a bare ``+inf`` (the
    interval is infinite too) or ``-`` when unknown."""
    if value is None or math.isinf(value):
        return fmt_signed(value)
    if error is None:
        return f"{fmt_signed(value)} +/- undefined" if undefined else fmt_signed(value)
    return f"{fmt_signed(value)} +/- {'inf' if math.isinf(error) else f'{error:.1f}'}"


def fmt_pair_elo(stats: PairStats, penta: bool = False) -> str:
    """A pair's Elo with its "+/-", trinomial or (``penta``) pentanomial."""
    prefix = "penta_" if penta else ""
    value, error = getattr(stats, prefix + "elo"), getattr(stats, prefix + "elo_error")
    return fmt_elo(value, error, undefined=value is not None)


def fmt_interval(interval: tuple[float, float] | None) -> str:
    """``[-7.4, +85.0]`` (``+inf`` for an unbounded end), ``-`` without one."""
    if interval is None:
        return "-"
    return f"[{fmt_signed(interval[0])}, {fmt_signed(interval[1])}]"


def difference_lines(diff: Difference) -> list[str]:
    """The headline of a two-engine match, before its tables: the Elo
    difference with its "+/-" and 95% interval, what it was computed from,
    then nElo, LOS and draws; a reason when a figure is infinite or undefined
    (``specs/tournament.md`` §Standings)."""
    s = diff.stats
    head = f"Elo difference {diff.first} - {diff.second}: "
    if s.games == 0:
        return [head + "- (no games yet)"]
    estimate = fmt_elo(diff.elo, diff.elo_error, undefined=True)
    if diff.elo_interval is not None and diff.elo is not None and math.isfinite(diff.elo):
        estimate += f", 95% {fmt_interval(diff.elo_interval)}"
    lines = [head + estimate]
    why = diff.reason("elo") or diff.reason("elo_interval")
    if why:
        lines.append(f"  ({why})")
    source = f"{s.pairs} game pairs" if diff.samples == "pentanomial" else f"{s.games} games"
    los = "-" if diff.los is None else f"{100 * diff.los:.1f}%"
    draws = "-" if s.draw_ratio is None else f"{100 * s.draw_ratio:.1f}%"
    lines.append(f"  {diff.samples} ({source}), nElo {fmt_signed(diff.nelo)}, LOS {los}, draws {draws}")
    return lines
