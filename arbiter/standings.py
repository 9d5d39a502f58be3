"""Standings of a tournament from its stored games: points, ratings with the
first-move advantage, pair statistics and SPRT, as one value the live
display, ``arbiter standings``, ``--json`` and the web view all print.

The math is :mod:`arbiter.rating`'s; this module only sorts finished games
into what it needs: W/D/L per pair of engines, the same per engine moving
first (what the joint ratings and their first-move term need), and the
pentanomial counts of the game pairs (two games of one pairing sharing a
``pair`` number, colours swapped -- ``specs/tournament.md`` §Schedule).
Incomplete game pairs count in W/D/L but not in the pentanomial.  A game of
an engine against itself (an old arena's, or imported) is a named anomaly:
counted and shown, kept out of every engine's figures and of the ratings,
with a warning (§Anomalies).  A running tournament keeps a :class:`Tally`
and adds each game as it comes.  How each figure is written, in text and in
JSON, is :mod:`arbiter.figures`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arbiter.figures import (
    ELO_DIGITS,
    FRACTION_DIGITS,
    LLR_DIGITS,
    figures_json,
    fmt_first_move,
    json_number,
)
from arbiter.games import Result
from arbiter.rating import (
    SHOWN_FIGURES,
    SPRT,
    Advantage,
    Anchor,
    PairStats,
    SPRTStatus,
    joint_ratings_from_pairs,
)

_SCORE = {Result.WHITE_WINS: (1.0, 0.0), Result.BLACK_WINS: (0.0, 1.0), Result.DRAW: (0.5, 0.5)}
#: A game's score for one side -> its place in a win/draw/loss triple.
_SLOT = {1.0: 0, 0.5: 1, 0.0: 2}

#: The anomaly of a game whose two sides are one engine (§Anomalies).
SELF_PLAY = "self-play"

#: What each anomaly is and what is done with its games, in a few words.
ANOMALIES = {SELF_PLAY: "games of an engine against itself, left out of the points, "
                        "the pairs and the ratings"}


def by_first_mover(white: str, black: str, white_points: float, side: str) -> tuple[str, str, float]:
    """A game as the joint model with a first-move term takes it (``side``:
    :func:`first_mover` of its game): (the first mover, the other, the first
    mover's points)."""
    return (white, black, white_points) if side == "white" else (black, white, 1.0 - white_points)


def first_mover(game: str | None) -> str:
    """The colour (``"white"`` or ``"black"``) that moves first in ``game``
    by its rules: the side whose advantage the first-move term measures
    (``specs/ratings.md`` §First-move advantage).  White for a game that is
    not known (none given, or a name no referee has)."""
    if game is None:
        return "white"
    from arbiter.games import UnknownGameError, get_game

    try:
        return get_game(game).first.value
    except UnknownGameError:
        return "white"


def self_play_warning(counts: Mapping[str, int]) -> str:
    """The warning for games of an engine against itself, ``counts`` per engine."""
    total = sum(counts.values())
    who = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
    return (f"{total} game{'' if total == 1 else 's'} of an engine against itself ({who}): "
            "shown and counted as the anomaly self-play, but left out of the points, the pairs "
            "and the ratings")


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
    """Engine ``first`` against ``second``, from ``first``'s view.

    ``moved_first`` counts the games in which ``first``, then ``second``, had
    the first move; ``first_mover_points`` the points the side with the
    first move made in them (``specs/tournament.md`` §Standings)."""

    first: str
    second: str
    stats: PairStats
    moved_first: tuple[int, int] = (0, 0)
    first_mover_points: float = 0.0

    @property
    def first_mover_score(self) -> float | None:
        """The first mover's score in this pair's games, ``None`` without games."""
        games = sum(self.moved_first)
        return self.first_mover_points / games if games else None

    @property
    def balanced(self) -> bool:
        """Whether each engine had the first move as often: only then does
        the first-move advantage leave the pair's score alone."""
        return self.moved_first[0] == self.moved_first[1]


@dataclass(frozen=True)
class FirstMove:
    """The first-move advantage of the standings: ``side`` (the colour that
    moves first), the fitted ``advantage`` (``None`` without games), and the
    games and points of the side with the first move."""

    side: str
    advantage: Advantage | None
    games: int
    points: float

    @property
    def score(self) -> float | None:
        return self.points / self.games if self.games else None

    def describe(self) -> str:
        """One line: the advantage with its interval, and what the side with
        the first move scored (:func:`arbiter.figures.fmt_first_move`)."""
        adv = self.advantage
        return fmt_first_move(self.side, None if adv is None else adv.elo,
                              None if adv is None else adv.error, self.score, self.games)

    def to_json(self) -> dict[str, Any]:
        adv = self.advantage
        reasons = {} if adv is not None else {key: "no games" for key in (
            "elo", "elo_error", "elo_interval", "score")}
        return {"side": self.side, "games": self.games,
                "score": json_number(self.score, FRACTION_DIGITS),
                "elo": None if adv is None else json_number(adv.elo, ELO_DIGITS),
                "elo_error": None if adv is None else json_number(adv.error, ELO_DIGITS),
                "elo_interval": None if adv is None else [json_number(x, ELO_DIGITS)
                                                          for x in adv.interval],
                "null_reasons": reasons}


@dataclass(frozen=True)
class Difference:
    """The headline of a two-engine match: ``first``'s Elo minus ``second``'s.

    From the pair's own games, as cutechess-cli and fastchess print it: the
    pair's shown figures (:meth:`PairStats.shown`, the same the pair table
    prints), pentanomial when complete game pairs exist (``samples`` says
    which), else trinomial.  Each figure is ``None`` when unknown;
    :meth:`reason` says why a figure is ``None`` or infinite
    (``specs/tournament.md`` §Standings).
    """

    first: str
    second: str
    stats: PairStats

    @property
    def samples(self) -> str:
        """``"pentanomial"`` (game pairs) or ``"trinomial"`` (games)."""
        return self.stats.samples

    @property
    def elo(self) -> float | None:
        return self.stats.shown("elo")

    @property
    def elo_error(self) -> float | None:
        return self.stats.shown("elo_error")

    @property
    def elo_interval(self) -> tuple[float, float] | None:
        return self.stats.shown("elo_interval")

    @property
    def nelo(self) -> float | None:
        return self.stats.shown("nelo")

    @property
    def los(self) -> float | None:
        return self.stats.shown("los")

    def reason(self, figure: str) -> str | None:
        """Why ``figure`` (``elo``, ``elo_error``, ``elo_interval``, ``nelo``,
        ``los``) is ``None`` or infinite; ``None`` when it is finite."""
        return self.stats.shown_reason(figure)


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
    #: the first-move advantage fitted with the ratings
    first_move: FirstMove | None = None
    #: games of a kind that is not rated, by anomaly (§Anomalies), and the
    #: warnings that say so
    anomalies: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: the games the schedule holds (an SPRT's cap); None when unknown
    scheduled: int | None = None

    @property
    def sprt_capped(self) -> bool:
        """An SPRT that reached the schedule's end undecided: stopped at the
        cap, inconclusive (``specs/tournament.md`` §Stopping)."""
        st = self.sprt_status
        return (st is not None and st.decision is None and bool(self.scheduled)
                and self.games >= (self.scheduled or 0))

    def sprt_verdict(self) -> str | None:
        """Where the SPRT stands, in words: ``H1 accepted``, ``H0 accepted``,
        ``inconclusive: stopped at the cap of N games`` or ``continue``."""
        st = self.sprt_status
        if st is None:
            return None
        if st.decision:
            return f"{st.decision} accepted"
        if self.sprt_capped:
            return f"inconclusive: stopped at the cap of {self.scheduled} games"
        return "continue"

    def sprt_note(self) -> str:
        """The run's note once the SPRT has ended (a decision, or the cap);
        empty while it goes on."""
        st, sprt = self.sprt_status, self.sprt
        if st is None or sprt is None:
            return ""
        if st.decision:
            bound = f">= {st.upper:.2f}" if st.decision == "H1" else f"<= {st.lower:.2f}"
            return f"SPRT: {st.decision} accepted (LLR {st.llr:.2f} {bound}, {sprt})"
        if self.sprt_capped:
            return (f"SPRT: inconclusive, stopped at the cap of {self.scheduled} games "
                    f"(LLR {st.llr:.2f}, within [{st.lower:.2f}, {st.upper:.2f}], {sprt})")
        return ""

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``arbiter standings --json`` (``specs/tournament.md``
        §Standings): a number that is infinite or undefined is ``null``, and
        the object holding it says why in ``null_reasons``; numbers rounded
        as ``specs/tournament.md`` §JSON numbers says."""
        data: dict[str, Any] = {
            "games": self.games,
            "engines": [_engine_json(e) for e in self.engines],
            "pairs": [_pair_json(line) for line in self.pairs],
            "difference": None if self.difference is None else _difference_json(self.difference),
            "first_move": None if self.first_move is None else self.first_move.to_json(),
            "terminations": dict(sorted(self.terminations.items())),
            "anomalies": dict(sorted(self.anomalies.items())),
            "warnings": list(self.warnings),
            "sprt": None,
        }
        if self.sprt is not None and self.sprt_status is not None:
            data["sprt"] = _sprt_json(self.sprt, self.sprt_status, self.sprt_capped)
        return data


#: JSON key -> (PairStats attribute, decimals) of a pair's figures by kind of
#: sample: ``tri_`` from games, ``penta_`` from game pairs
_SAMPLE_FIGURES = {
    "score": ("score", FRACTION_DIGITS), "draw_ratio": ("draw_ratio", FRACTION_DIGITS),
    **{f"tri_{name}": (name, d) for name, d in (
        ("elo", ELO_DIGITS), ("elo_error", ELO_DIGITS), ("elo_interval", ELO_DIGITS),
        ("nelo", ELO_DIGITS), ("los", FRACTION_DIGITS))},
    **{f"penta_{name}": (f"penta_{name}", d) for name, d in (
        ("elo", ELO_DIGITS), ("elo_error", ELO_DIGITS), ("elo_interval", ELO_DIGITS),
        ("nelo", ELO_DIGITS), ("los", FRACTION_DIGITS))},
}

#: a pair's shown figures (PairStats.shown; a match's difference too): decimals
_SHOWN_DIGITS = {name: FRACTION_DIGITS if name == "los" else ELO_DIGITS for name in SHOWN_FIGURES}


def _shown_json(stats: PairStats) -> dict[str, Any]:
    """The shown figures with their reasons, merged into ``null_reasons``."""
    return figures_json({key: (stats.shown(key), stats.shown_reason(key), digits)
                         for key, digits in _SHOWN_DIGITS.items()})


def _pair_json(line: PairLine) -> dict[str, Any]:
    s = line.stats
    entry: dict[str, Any] = {
        "first": line.first, "second": line.second, "games": s.games,
        "wins": s.wins, "draws": s.draws, "losses": s.losses,
        "pentanomial": list(s.pentanomial) if s.pentanomial else None, "samples": s.samples,
        "moved_first": list(line.moved_first),
        "first_mover_score": json_number(line.first_mover_score, FRACTION_DIGITS)}
    shown = _shown_json(s)
    sampled = figures_json({key: (getattr(s, attr), s.reason(attr), digits)
                            for key, (attr, digits) in _SAMPLE_FIGURES.items()})
    reasons = {**shown.pop("null_reasons"), **sampled.pop("null_reasons")}
    if line.first_mover_score is None:
        reasons["first_mover_score"] = "no games"
    return {**entry, **shown, **sampled, "null_reasons": reasons}


def _engine_json(line: EngineLine) -> dict[str, Any]:
    reasons = {} if line.elo is not None else {"elo": "no games", "elo_error": "no games"}
    return {"name": line.name, "games": line.games, "points": line.points,
            "wins": line.wins, "draws": line.draws, "losses": line.losses,
            "elo": json_number(line.elo, ELO_DIGITS), "elo_error": json_number(line.error, ELO_DIGITS),
            "null_reasons": reasons}


def _difference_json(diff: Difference) -> dict[str, Any]:
    s = diff.stats
    return {"first": diff.first, "second": diff.second, "samples": diff.samples,
            "games": s.games, "pairs": s.pairs,
            "draw_ratio": json_number(s.draw_ratio, FRACTION_DIGITS), **_shown_json(s)}


def _sprt_json(sprt: SPRT, st: SPRTStatus, capped: bool) -> dict[str, Any]:
    return {"elo0": sprt.elo0, "elo1": sprt.elo1, "alpha": sprt.alpha, "beta": sprt.beta,
            "llr": round(st.llr, LLR_DIGITS), "lower": round(st.lower, LLR_DIGITS),
            "upper": round(st.upper, LLR_DIGITS), "decision": st.decision, "model": st.model,
            "stopped_at_cap": capped, "samples": st.samples,
            "games_left": None if st.games_left is None else round(st.games_left),
            "null_reasons": {} if st.games_left is not None else {
                "games_left": "too few results yet to estimate the test's length"}}


def compute_standings(engines: Sequence[str], games: Iterable[Mapping[str, Any]],
                      sprt: SPRT | None = None, *, game: str | None = None,
                      scheduled: int | None = None) -> Standings:
    """Standings from game rows (``white``, ``black``, ``result``,
    ``termination``, and ``pairing``/``pair`` for the pentanomial counts) of
    ``game`` (which colour moves first: :func:`first_mover`); ``scheduled``
    games in the schedule (an SPRT's cap).

    ``engines`` fixes the order of names in pairs: the one listed first is a
    pair's ``first``.  Engines without games are listed too.
    """
    tally = Tally(engines, game=game, scheduled=scheduled)
    for row in games:
        tally.add(row)
    return tally.standings(sprt)


class Tally:
    """The counts standings are made of, taken one game at a time.

    A running tournament adds each game as it is stored and asks for the
    standings after each: :meth:`add` costs the same for the 10000th game
    as for the first, and :meth:`standings` depends on the number of
    engines, not of games (the joint ratings need only each pair's games
    and points by who moved first).  Recounting every game after each one
    made a long match quadratic, and stalled the event loop that times the
    engines for tens of milliseconds per game by the ten-thousandth."""

    def __init__(self, engines: Sequence[str], *, game: str | None = None,
                 scheduled: int | None = None):
        self.order: dict[str, int] = {name: i for i, name in enumerate(engines)}
        self.wdl: dict[str, list[int]] = {name: [0, 0, 0] for name in engines}
        self.points: dict[str, float] = defaultdict(float)
        self.per_pair: dict[tuple[str, str], list[int]] = {}
        #: (engine moving first, its opponent) -> W/D/L of the one moving first
        self.by_mover: dict[tuple[str, str], list[int]] = {}
        self.penta: dict[tuple[str, str], list[int]] = {}
        #: the first game of each game pair whose second has not come yet
        self.half_pairs: dict[tuple[Any, Any, str, str], float] = {}
        self.terminations: Counter = Counter()
        #: games of an engine against itself, per engine (§Anomalies)
        self.self_play: Counter = Counter()
        self.games = 0
        self.side = first_mover(game)
        self._white_first = self.side == "white"
        self.scheduled = scheduled

    def _enter(self, name: str) -> None:
        if name not in self.order:
            self.order[name] = len(self.order)
            self.wdl[name] = [0, 0, 0]

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
        self._enter(white)
        self._enter(black)
        if white == black:  # no pair, no rating: an anomaly, counted (§Anomalies)
            self.self_play[white] += 1
            return
        w, b = score
        order, wdl = self.order, self.wdl
        self.points[white] += w
        self.points[black] += b
        wdl[white][_SLOT[w]] += 1
        wdl[black][_SLOT[b]] += 1
        if self._white_first:
            mover = self.by_mover.setdefault((white, black), [0, 0, 0])
            mover[_SLOT[w]] += 1
        else:
            mover = self.by_mover.setdefault((black, white), [0, 0, 0])
            mover[_SLOT[b]] += 1
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

    def _pair_line(self, a: str, b: str) -> PairLine:
        wins, draws, losses = self.per_pair[a, b]
        a_first = self.by_mover.get((a, b), [0, 0, 0])
        b_first = self.by_mover.get((b, a), [0, 0, 0])
        points = a_first[0] + a_first[1] / 2 + b_first[0] + b_first[1] / 2
        return PairLine(a, b, PairStats(wins, draws, losses, pentanomial=_five(self.penta.get((a, b)))),
                        (sum(a_first), sum(b_first)), points)

    def standings(self, sprt: SPRT | None = None) -> Standings:
        order = self.order
        pairs = [self._pair_line(a, b) for a, b in sorted(
            self.per_pair, key=lambda k: (order[k[0]], order[k[1]]))]
        ratings = joint_ratings_from_pairs(
            {key: PairStats(w, d, l_) for key, (w, d, l_) in self.by_mover.items()},
            anchor=Anchor(), engines=list(order), first_move=True)
        lines = []
        for rating in ratings:
            wins, draws, losses = self.wdl[rating.engine]
            lines.append(EngineLine(rating.engine, wins + draws + losses, self.points[rating.engine],
                                    wins, draws, losses,
                                    rating.elo, rating.error))
        # Points first, then the rating (specs/tournament.md §Standings).
        lines.sort(key=lambda e: (-e.points, e.elo is None, -(e.elo or 0.0), order[e.name]))
        moves = sum(sum(c) for c in self.by_mover.values())
        mover_points = sum(c[0] + c[1] / 2 for c in self.by_mover.values())
        standings = Standings(engines=lines, pairs=pairs, games=self.games,
                              terminations=Counter(self.terminations),
                              first_move=FirstMove(self.side, ratings.first_move, moves, mover_points),
                              scheduled=self.scheduled)
        if self.self_play:
            standings.anomalies[SELF_PLAY] = sum(self.self_play.values())
            standings.warnings.append(self_play_warning(self.self_play))
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
