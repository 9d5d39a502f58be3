"""Elo, LOS, pentanomial statistics, joint ratings and SPRT: pure math.

Every formula used here is written out in ``specs/ratings.md``; the section
names quoted in docstrings (``§Trinomial`` and so on) point there.

Three layers, each usable alone:

* :class:`PairStats` -- one pair of engines: score, draw ratio, Elo difference
  with a 95% interval from the trinomial model, the same from game pairs
  (pentanomial), normalized Elo, LOS.
* :func:`joint_ratings` -- maximum-likelihood ratings of any number of
  engines from all their games (logistic Bradley-Terry, a draw counting as
  half a win, a small virtual-draw prior), with 95% error bars, anchored on
  an engine or on the mean.
* :class:`SPRT` -- the generalized sequential probability ratio test on
  normalized Elo, from pentanomial counts (or W/D/L when no pairs exist).

Scores are always from the first engine's point of view: 1 for a win, 1/2 for a
draw, 0 for a loss.  Nothing here imports anything else of ours, does I/O, or
needs more than :mod:`math`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Z95",
    "NELO_PER_T",
    "DEFAULT_PRIOR_DRAWS",
    "elo_from_score",
    "score_from_elo",
    "normal_cdf",
    "pentanomial",
    "PairStats",
    "Anchor",
    "Rating",
    "RatingList",
    "joint_ratings",
    "joint_ratings_from_pairs",
    "llr_trinomial",
    "llr_pentanomial",
    "SPRT",
    "SPRTStatus",
    "SPRTConfigError",
]

#: Two-sided 95% quantile of the standard normal law, Phi^-1(0.975).
Z95 = 1.959963984540054

#: Normalized Elo per unit of t-value: nElo = t * 800 / ln 10 (§Normalized Elo).
NELO_PER_T = 800.0 / math.log(10.0)

#: Elo per natural-log unit of odds: Elo = theta * 400 / ln 10 (§Joint ratings).
_ELO_PER_THETA = 400.0 / math.log(10.0)

#: Virtual draws added to every pair of engines that met (§Prior).
DEFAULT_PRIOR_DRAWS = 1.0

#: Pair scores of the five pentanomial buckets, in order.
PAIR_SCORES = (0.0, 0.5, 1.0, 1.5, 2.0)

Interval = tuple[float, float]


# --------------------------------------------------------------------------
# Elementary conversions


def elo_from_score(score: float) -> float:
    """The logistic Elo difference whose expected score is ``score``.

    ``-400 * log10(1/score - 1)``; ``+inf`` at score 1 and ``-inf`` at score 0
    (no finite difference explains a perfect result).  §Elo from score.
    """
    if not 0.0 <= score <= 1.0 or math.isnan(score):
        raise ValueError(f"score must lie in [0, 1], got {score!r}")
    if score == 1.0:
        return math.inf
    if score == 0.0:
        return -math.inf
    return 0.0 - 400.0 * math.log10(1.0 / score - 1.0)  # 0.0 - x: never -0.0


def score_from_elo(elo: float) -> float:
    """Expected score of an engine ``elo`` points stronger: ``1/(1+10^(-elo/400))``."""
    return _logistic(elo / _ELO_PER_THETA)


def normal_cdf(x: float) -> float:
    """Phi(x), the standard normal distribution function, through ``math.erf``."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def _logistic(x: float) -> float:
    # Written in two branches so that exp never overflows.
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log_logistic(x: float) -> float:
    """log(1/(1+e^-x)) without overflow or loss of precision."""
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def _elo_interval(mu: float, se: float) -> Interval:
    """Map the score interval mu -/+ Z95*se to Elo, clamping to [0, 1]."""
    lo = min(1.0, max(0.0, mu - Z95 * se))
    hi = min(1.0, max(0.0, mu + Z95 * se))
    return elo_from_score(lo), elo_from_score(hi)


def _half_width(interval: Interval | None) -> float | None:
    if interval is None:
        return None
    lo, hi = interval
    if math.isinf(lo) or math.isinf(hi):
        return math.inf  # a perfect score: the data bound nothing (§Edge cases)
    return (hi - lo) / 2.0


def _normalized(mu: float, sigma: float) -> float:
    """t = (mu - 1/2) / sigma, with the sigma = 0 cases made explicit."""
    if sigma > 0.0:
        return (mu - 0.5) / sigma
    if mu == 0.5:
        return 0.0
    return math.inf if mu > 0.5 else -math.inf


def _los(z_num: float, z_den: float) -> float:
    """Phi(num/den), with den = 0 meaning certainty in the sign of num."""
    if z_den > 0.0:
        return normal_cdf(z_num / z_den)
    if z_num == 0.0:
        return 0.5
    return 1.0 if z_num > 0 else 0.0


# --------------------------------------------------------------------------
# Pentanomial counts


def pentanomial(pairs: Iterable[float | tuple[float, float]]) -> tuple[int, int, int, int, int]:
    """Counts of game pairs by pair score 0, 1/2, 1, 3/2, 2 (first engine's view).

    Each item is either the pair's total score or the two game scores of the
    pair, e.g. ``[2, (1, 0.5), 1.0]`` -> ``(0, 0, 1, 1, 1)``.  A win and a loss
    (1 + 0) and two draws both land in the middle bucket.  §Pentanomial.
    """
    counts = [0, 0, 0, 0, 0]
    for index, item in enumerate(pairs):
        if isinstance(item, tuple):
            if len(item) != 2:
                raise ValueError(f"pair {index}: expected two game scores, got {item!r}")
            for game_score in item:
                if game_score not in (0, 0.5, 1):
                    raise ValueError(
                        f"pair {index}: game score {game_score!r} is not 0, 0.5 or 1"
                    )
            total = float(item[0]) + float(item[1])
        else:
            total = float(item)
        bucket = round(total * 2.0)
        if not 0 <= bucket <= 4 or abs(total * 2.0 - bucket) > 1e-9:
            raise ValueError(
                f"pair {index}: pair score {item!r} is not one of 0, 0.5, 1, 1.5, 2"
            )
        counts[bucket] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def _check_count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return value


# --------------------------------------------------------------------------
# One pair of engines


@dataclass(frozen=True)
class PairStats:
    """Match statistics of engine A against engine B, from A's point of view.

    ``pentanomial`` holds the game-pair counts (see :func:`pentanomial`) when
    the games were played in pairs with colours swapped; the ``penta_*``
    figures are ``None`` without it.  Figures that need games return ``None``
    when there are none; perfect results give infinite Elo (see
    ``specs/ratings.md`` §Edge cases).  Nothing here raises on valid counts.
    """

    wins: int
    draws: int
    losses: int
    pentanomial: tuple[int, int, int, int, int] | None = None

    def __post_init__(self) -> None:
        for name in ("wins", "draws", "losses"):
            _check_count(name, getattr(self, name))
        if self.pentanomial is not None:
            counts = tuple(self.pentanomial)
            if len(counts) != 5:
                raise ValueError(f"pentanomial needs 5 counts, got {len(counts)}")
            for i, c in enumerate(counts):
                _check_count(f"pentanomial[{i}]", c)
            if 2 * sum(counts) > self.games:
                raise ValueError(
                    f"pentanomial counts {sum(counts)} pairs = {2 * sum(counts)} games, "
                    f"more than the {self.games} games of W/D/L"
                )
            object.__setattr__(self, "pentanomial", counts)

    # -- basic counts -------------------------------------------------------

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """A's points: wins + draws/2."""
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float | None:
        """A's mean score per game, ``None`` without games."""
        return self.points / self.games if self.games else None

    @property
    def draw_ratio(self) -> float | None:
        return self.draws / self.games if self.games else None

    def swapped(self) -> PairStats:
        """The same match seen from B's side."""
        penta = None if self.pentanomial is None else tuple(reversed(self.pentanomial))
        return PairStats(self.losses, self.draws, self.wins, penta)  # type: ignore[arg-type]

    # -- trinomial ------------------------------------------------------------

    def _trinomial(self) -> tuple[int, float, float] | None:
        n = self.games
        if n == 0:
            return None
        mu = self.points / n
        var = max(0.0, (self.wins + 0.25 * self.draws) / n - mu * mu)
        return n, mu, var

    @property
    def elo(self) -> float | None:
        """Elo difference A - B from the score.  §Elo from score."""
        s = self.score
        return None if s is None else elo_from_score(s)

    @property
    def elo_interval(self) -> Interval | None:
        """95% interval of the Elo difference, trinomial model.  §Trinomial."""
        t = self._trinomial()
        if t is None:
            return None
        n, mu, var = t
        return _elo_interval(mu, math.sqrt(var / n))

    @property
    def elo_error(self) -> float | None:
        """Half the width of :attr:`elo_interval` (the "+/-" figure)."""
        return _half_width(self.elo_interval)

    @property
    def nelo(self) -> float | None:
        """Normalized Elo from the per-game standard deviation.  §Normalized Elo."""
        t = self._trinomial()
        if t is None:
            return None
        _, mu, var = t
        return _normalized(mu, math.sqrt(var)) * NELO_PER_T

    @property
    def nelo_interval(self) -> Interval | None:
        """95% interval of :attr:`nelo`: nElo -/+ Z95 * 800/ln10 / sqrt(games)."""
        t = self._trinomial()
        if t is None:
            return None
        n, mu, var = t
        centre = _normalized(mu, math.sqrt(var)) * NELO_PER_T
        if var == 0.0:
            return centre, centre
        half = Z95 * NELO_PER_T / math.sqrt(n)
        return centre - half, centre + half

    @property
    def los(self) -> float | None:
        """Likelihood of superiority: Phi((W - L) / sqrt(W + L)).  §LOS."""
        if self.games == 0:
            return None
        return _los(self.wins - self.losses, math.sqrt(self.wins + self.losses))

    # -- pentanomial ------------------------------------------------------------

    def _penta(self) -> tuple[int, float, float] | None:
        if self.pentanomial is None:
            return None
        npairs = sum(self.pentanomial)
        if npairs == 0:
            return None
        # Per-game average of each pair: 0, 1/4, 1/2, 3/4, 1.
        mu = sum(c * i / 4.0 for i, c in enumerate(self.pentanomial)) / npairs
        second = sum(c * (i / 4.0) ** 2 for i, c in enumerate(self.pentanomial)) / npairs
        return npairs, mu, max(0.0, second - mu * mu)

    @property
    def pairs(self) -> int:
        return 0 if self.pentanomial is None else sum(self.pentanomial)

    @property
    def penta_score(self) -> float | None:
        p = self._penta()
        return None if p is None else p[1]

    @property
    def penta_elo(self) -> float | None:
        """Elo from the score over game pairs.  §Pentanomial."""
        p = self._penta()
        return None if p is None else elo_from_score(p[1])

    @property
    def penta_elo_interval(self) -> Interval | None:
        """95% interval from the variance of pair scores.  §Pentanomial."""
        p = self._penta()
        if p is None:
            return None
        npairs, mu, var = p
        return _elo_interval(mu, math.sqrt(var / npairs))

    @property
    def penta_elo_error(self) -> float | None:
        return _half_width(self.penta_elo_interval)

    @property
    def penta_nelo(self) -> float | None:
        """Normalized Elo with sigma_game = sqrt(2) * sigma_pair.  §Normalized Elo."""
        p = self._penta()
        if p is None:
            return None
        _, mu, var = p
        return _normalized(mu, math.sqrt(2.0 * var)) * NELO_PER_T

    @property
    def penta_nelo_interval(self) -> Interval | None:
        """nElo -/+ Z95 * 800/ln10 / sqrt(2 * pairs)."""
        p = self._penta()
        if p is None:
            return None
        npairs, mu, var = p
        centre = _normalized(mu, math.sqrt(2.0 * var)) * NELO_PER_T
        if var == 0.0:
            return centre, centre
        half = Z95 * NELO_PER_T / math.sqrt(2.0 * npairs)
        return centre - half, centre + half

    @property
    def penta_los(self) -> float | None:
        """Phi((mu - 1/2) / se) with se from the pair variance.  §LOS."""
        p = self._penta()
        if p is None:
            return None
        npairs, mu, var = p
        return _los(mu - 0.5, math.sqrt(var / npairs))

    # -- display ----------------------------------------------------------------

    def summary(self) -> str:
        """One line in the manner of cutechess-cli, for logs and the CLI."""
        if self.games == 0:
            return "no games"
        parts = [
            f"W {self.wins} D {self.draws} L {self.losses}",
            f"score {self.score:.3f}",
            f"Elo {_fmt(self.elo)} +/- {_fmt(self.elo_error)}",
            f"nElo {_fmt(self.nelo)}",
            f"LOS {100.0 * self.los:.1f} %",  # type: ignore[operator]
            f"draws {100.0 * self.draw_ratio:.1f} %",  # type: ignore[operator]
        ]
        if self.penta_elo is not None:
            parts.append(
                f"penta {list(self.pentanomial)} Elo {_fmt(self.penta_elo)} "  # type: ignore[arg-type]
                f"+/- {_fmt(self.penta_elo_error)} nElo {_fmt(self.penta_nelo)}"
            )
        return ", ".join(parts)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:.1f}"


# --------------------------------------------------------------------------
# Joint maximum-likelihood ratings


@dataclass(frozen=True)
class Anchor:
    """Where the rating scale sits.  §Anchoring.

    ``Anchor()`` puts the mean of the ratings at 0; ``Anchor(rating=1500)``
    puts the mean at 1500; ``Anchor("stockfish", 3000)`` fixes that engine at
    3000.  Groups of engines not connected to the anchor by games get their
    mean at ``rating``.
    """

    engine: str | None = None
    rating: float = 0.0

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):
            raise ValueError(f"anchor rating must be finite, got {self.rating!r}")


@dataclass(frozen=True)
class Rating:
    """One engine's line of a :class:`RatingList`.

    ``elo`` and ``error`` (the 95% half-width) are ``None`` for an engine
    without games (unless it is the anchor); ``component`` numbers the group
    of engines connected by games (0 is the largest).
    """

    engine: str
    elo: float | None
    error: float | None
    games: int
    points: float
    component: int


@dataclass(frozen=True)
class RatingList:
    """Result of :func:`joint_ratings`: ratings best first, plus covariances."""

    ratings: tuple[Rating, ...]
    anchor: Anchor
    prior_draws: float
    components: int
    _index: Mapping[str, int] = field(repr=False, compare=False)
    _covariance: tuple[tuple[float, ...], ...] = field(repr=False, compare=False)

    @property
    def connected(self) -> bool:
        """True when every engine with games is linked to every other by games."""
        return self.components <= 1

    def __getitem__(self, engine: str) -> Rating:
        for r in self.ratings:
            if r.engine == engine:
                return r
        raise KeyError(engine)

    def __iter__(self) -> Iterator[Rating]:
        return iter(self.ratings)

    def __len__(self) -> int:
        return len(self.ratings)

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """Elo of ``a`` minus ``b`` and the 95% half-width of that difference.

        Raises ``ValueError`` when the two are not in one component (no games
        link them, so their difference is not measured).
        """
        ra, rb = self[a], self[b]
        if ra.elo is None or rb.elo is None or ra.component != rb.component:
            raise ValueError(f"no games link {a!r} and {b!r}: their difference is unknown")
        i, j = self._index[a], self._index[b]
        c = self._covariance
        var = max(0.0, c[i][i] + c[j][j] - 2.0 * c[i][j])
        return ra.elo - rb.elo, Z95 * _ELO_PER_THETA * math.sqrt(var)


def joint_ratings(
    games: Iterable[tuple[str, str, float]],
    *,
    anchor: Anchor = Anchor(),
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    engines: Iterable[str] = (),
) -> RatingList:
    """Maximum-likelihood ratings of every engine from all games.  §Joint ratings.

    ``games`` are ``(engine_a, engine_b, score_of_a)`` with the score in
    [0, 1] (1, 1/2, 0 for a win, draw, loss).  ``engines`` lists engines to
    include even without games.  ``prior_draws`` virtual draws are added to
    every pair of engines that met (§Prior), which keeps 100% and 0% scores
    finite; with ``prior_draws=0`` the plain MLE is returned, or a
    ``ValueError`` names the group of engines whose ratings are unbounded.
    """
    table = _ScoreTable()
    for name in engines:
        table.add_engine(name)
    for index, item in enumerate(games):
        try:
            a, b, s = item
        except (TypeError, ValueError):
            raise ValueError(f"game {index}: expected (engine_a, engine_b, score), got {item!r}") from None
        try:
            score = float(s)
        except (TypeError, ValueError):
            raise ValueError(f"game {index}: score {s!r} is not a number") from None
        table.add(a, b, 1, score, where=f"game {index}")
    return _solve(table, anchor, prior_draws)


def joint_ratings_from_pairs(
    pairs: Mapping[tuple[str, str], PairStats],
    *,
    anchor: Anchor = Anchor(),
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    engines: Iterable[str] = (),
) -> RatingList:
    """:func:`joint_ratings` from per-pair W/D/L, ``{(a, b): PairStats}`` (a's view)."""
    table = _ScoreTable()
    for name in engines:
        table.add_engine(name)
    for (a, b), stats in pairs.items():
        if stats.games:
            table.add(a, b, stats.games, stats.points, where=f"pair {a!r}-{b!r}")
        else:
            table.add_engine(a)
            table.add_engine(b)
    return _solve(table, anchor, prior_draws)


class _ScoreTable:
    """Games and points between each unordered pair of engines."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        # (i, j) with i < j -> [games, points of i]
        self.pairs: dict[tuple[int, int], list[float]] = {}

    def add_engine(self, name: str) -> int:
        if not isinstance(name, str) or not name:
            raise ValueError(f"engine names must be non-empty strings, got {name!r}")
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
        return self.index[name]

    def add(self, a: str, b: str, n: int, points: float, *, where: str) -> None:
        if a == b:
            raise ValueError(f"{where}: engine {a!r} cannot play itself")
        if not (0.0 <= points <= n) or math.isnan(points):
            raise ValueError(f"{where}: score {points!r} outside [0, {n}]")
        i, j = self.add_engine(a), self.add_engine(b)
        if i > j:
            i, j, points = j, i, n - points
        entry = self.pairs.setdefault((i, j), [0.0, 0.0])
        entry[0] += n
        entry[1] += points


def _components(size: int, edges: Iterable[tuple[int, int]]) -> list[int]:
    """Union-find labels of the graph's connected components."""
    parent = list(range(size))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[ri] = rj
    return [find(x) for x in range(size)]


def _unbounded(members: list[int], score: dict[tuple[int, int], float]) -> bool:
    """Whether the plain MLE of a component fails to exist.

    It exists only when the digraph "i scored something against j" is
    strongly connected (Zermelo's condition): otherwise some group of engines
    scored 100% against the rest and the likelihood grows without bound as
    their ratings go to infinity.
    """
    out: dict[int, set[int]] = {m: set() for m in members}
    for (i, j), s in score.items():
        if s > 0.0 and i in out:
            out[i].add(j)

    def reach(start: int, graph: dict[int, set[int]]) -> set[int]:
        seen, stack = {start}, [start]
        while stack:
            for nxt in graph[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    rev: dict[int, set[int]] = {m: set() for m in members}
    for i, targets in out.items():
        for j in targets:
            rev[j].add(i)
    root = members[0]
    whole = set(members)
    return not (reach(root, out) == whole and reach(root, rev) == whole)


def _solve(table: _ScoreTable, anchor: Anchor, prior_draws: float) -> RatingList:
    if not (prior_draws >= 0.0 and math.isfinite(prior_draws)):
        raise ValueError(f"prior_draws must be a finite number >= 0, got {prior_draws!r}")
    if anchor.engine is not None:
        table.add_engine(anchor.engine)
    names = table.names
    size = len(names)

    # Games and (prior-augmented) points in both directions.
    games = [0] * size
    points = [0.0] * size
    n_pair: dict[tuple[int, int], float] = {}
    s_dir: dict[tuple[int, int], float] = {}  # (i, j) -> points of i against j
    for (i, j), (n, p) in table.pairs.items():
        games[i] += int(n)
        games[j] += int(n)
        points[i] += p
        points[j] += n - p
        n_pair[(i, j)] = n + prior_draws
        s_dir[(i, j)] = p + prior_draws / 2.0
        s_dir[(j, i)] = n - p + prior_draws / 2.0

    labels = _components(size, n_pair)
    # Number the components: biggest first, then by first engine seen.
    groups: dict[int, list[int]] = {}
    for x in range(size):
        if games[x] > 0 or names[x] == anchor.engine:
            groups.setdefault(labels[x], []).append(x)
    ordered = sorted(groups.values(), key=lambda g: (-len(g), g[0]))

    theta: list[float | None] = [None] * size
    cov = [[0.0] * size for _ in range(size)]
    component_of = [-1] * size
    anchor_theta = anchor.rating / _ELO_PER_THETA
    for number, members in enumerate(ordered):
        for m in members:
            component_of[m] = number
        if prior_draws == 0.0:
            if _unbounded(members, s_dir):
                group = ", ".join(repr(names[m]) for m in members)
                raise ValueError(
                    f"ratings of {group} are unbounded without a prior: some of them "
                    "scored 100% against the others; use prior_draws > 0"
                )
        local, local_cov = _fit_component(members, n_pair, s_dir)
        fixed = anchor.engine is not None and table.index[anchor.engine] in members
        if fixed:
            a = members.index(table.index[anchor.engine])  # type: ignore[index]
            shift = anchor_theta - local[a]
            # Re-express the covariance relative to the anchor: r_k - r_a.
            k = len(members)
            rel = [[local_cov[p][q] - local_cov[p][a] - local_cov[a][q] + local_cov[a][a]
                    for q in range(k)] for p in range(k)]
        else:
            shift = anchor_theta - sum(local) / len(local)
            rel = local_cov  # already relative to the component mean
        for p, m in enumerate(members):
            theta[m] = local[p] + shift
            for q, m2 in enumerate(members):
                cov[m][m2] = rel[p][q]

    ratings = []
    for x, name in enumerate(names):
        if theta[x] is None:
            ratings.append(Rating(name, None, None, 0, 0.0, -1))
            continue
        elo = theta[x] * _ELO_PER_THETA  # type: ignore[operator]
        error = Z95 * _ELO_PER_THETA * math.sqrt(max(0.0, cov[x][x]))
        ratings.append(Rating(name, elo, error, games[x], points[x], component_of[x]))
    ratings.sort(key=lambda r: (r.elo is None, -(r.elo or 0.0), r.engine))
    return RatingList(
        ratings=tuple(ratings),
        anchor=anchor,
        prior_draws=prior_draws,
        components=len(ordered),
        _index=dict(table.index),
        _covariance=tuple(tuple(row) for row in cov),
    )


def _fit_component(
    members: list[int],
    n_pair: Mapping[tuple[int, int], float],
    s_dir: Mapping[tuple[int, int], float],
) -> tuple[list[float], list[list[float]]]:
    """Newton's method on one connected component.

    Returns the ratings in natural units (theta = Elo * ln10 / 400) with mean
    0, and their covariance around that mean (the inverse Fisher information
    of the centred parametrization).  §Joint ratings (Solver).
    """
    k = len(members)
    if k == 1:
        return [0.0], [[0.0]]
    pos = {m: p for p, m in enumerate(members)}
    edges = [(pos[i], pos[j], n, s_dir[(i, j)]) for (i, j), n in n_pair.items() if i in pos]

    def loglik(th: list[float]) -> float:
        total = 0.0
        for p, q, n, s in edges:
            d = th[p] - th[q]
            total += s * _log_logistic(d) + (n - s) * _log_logistic(-d)
        return total

    def grad_info(th: list[float]) -> tuple[list[float], list[list[float]]]:
        g = [0.0] * k
        info = [[0.0] * k for _ in range(k)]
        for p, q, n, s in edges:
            e = _logistic(th[p] - th[q])
            r = s - n * e
            g[p] += r
            g[q] -= r
            w = n * e * (1.0 - e)
            info[p][p] += w
            info[q][q] += w
            info[p][q] -= w
            info[q][p] -= w
        return g, info

    # Engine 0 of the component is held at 0 during the fit (the likelihood
    # only sees differences); the reduced information matrix is then positive
    # definite for a connected component with a positive prior or a finite MLE.
    # The stopping rule is on the Newton step, not the gradient: far from
    # equal strength the curvature is tiny and a small gradient can still
    # mean a large error in the ratings.
    th = [0.0] * k
    current = loglik(th)
    for _ in range(200):
        g, info = grad_info(th)
        step = _solve_spd([row[1:] for row in info[1:]], g[1:])
        if max(abs(v) for v in step) < 1e-12:
            break
        t = 1.0
        while True:
            trial = [0.0] + [th[p] + t * step[p - 1] for p in range(1, k)]
            value = loglik(trial)
            if value >= current - 1e-12 * abs(current) or t < 1e-10:
                break
            t /= 2.0
        th, current = trial, value

    _, info = grad_info(th)
    reduced_inv = _invert_spd([row[1:] for row in info[1:]])
    # Covariance with engine 0 fixed, then moved to the mean-zero gauge:
    # C = M C0 M^T with M = I - 11^T/k.
    c0 = [[0.0] * k for _ in range(k)]
    for p in range(1, k):
        for q in range(1, k):
            c0[p][q] = reduced_inv[p - 1][q - 1]
    row_mean = [sum(c0[p]) / k for p in range(k)]
    total_mean = sum(row_mean) / k
    cov = [[c0[p][q] - row_mean[p] - row_mean[q] + total_mean for q in range(k)] for p in range(k)]
    mean = sum(th) / k
    return [v - mean for v in th], cov


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(low[i][k] * low[j][k] for k in range(j))
            if i == j:
                if s <= 0.0:
                    raise ArithmeticError("information matrix is not positive definite")
                low[i][i] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    return low


def _solve_spd(a: list[list[float]], b: list[float]) -> list[float]:
    low = _cholesky(a)
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def _invert_spd(a: list[list[float]]) -> list[list[float]]:
    n = len(a)
    columns = [_solve_spd(a, [1.0 if r == c else 0.0 for r in range(n)]) for c in range(n)]
    return [[columns[c][r] for c in range(n)] for r in range(n)]


# --------------------------------------------------------------------------
# Generalized SPRT on normalized Elo


#: Mass given to an empty bucket before the LLR is computed (§LLR, Regularization).
_EMPTY_BUCKET = 1e-3


def _secular_root(probs: Sequence[float], values: Sequence[float]) -> float:
    """The x with sum p_i v_i / (1 + x v_i) = 0 and every 1 + x v_i > 0.

    The left side falls strictly from +inf to -inf on (-1/max v, -1/min v), so
    a safeguarded Newton iteration inside a shrinking bracket always finds it.
    """
    vmin, vmax = min(values), max(values)
    if not (vmin < 0.0 < vmax):
        raise ArithmeticError("constraint cannot be met on this support")
    lo, hi = -1.0 / vmax, -1.0 / vmin
    x = 0.0
    for _ in range(200):
        f = 0.0
        df = 0.0
        for p, v in zip(probs, values, strict=False):
            d = 1.0 + x * v
            f += p * v / d
            df -= p * v * v / (d * d)
        if f > 0.0:
            lo = x
        elif f < 0.0:
            hi = x
        else:
            return x
        newton = x - f / df
        x_next = newton if lo < newton < hi else (lo + hi) / 2.0
        if abs(x_next - x) <= 1e-15 * (1.0 + abs(x)):
            return x_next
        x = x_next
    return x


def _mean_var(probs: Sequence[float], values: Sequence[float]) -> tuple[float, float]:
    mu = sum(p * v for p, v in zip(probs, values, strict=False))
    var = sum(p * (v - mu) ** 2 for p, v in zip(probs, values, strict=False))
    return mu, var


def _mle_with_t(probs: Sequence[float], values: Sequence[float], t: float) -> list[float]:
    """Most likely distribution on ``values`` with (mu - 1/2)/sigma = t.

    Maximizes sum p^_i log p_i over distributions with the given t-value; the
    Lagrange conditions give p_i = p^_i / (1 + x b_i) with b_i depending on
    the solution's own mu and sigma, solved by fixed-point iteration.  §LLR.
    """
    n = len(values)
    q = [1.0 / n] * n
    # Typically converges in about five rounds; near the poles of the secular
    # equation rounding leaves changes of ~1e-11, hence the tolerance.
    for _ in range(100):
        mu, var = _mean_var(q, values)
        sigma = math.sqrt(var)
        b = [v - 0.5 - t * sigma * (1.0 + ((v - mu) / sigma) ** 2) / 2.0 for v in values]
        x = _secular_root(probs, b)
        new = [p / (1.0 + x * bi) for p, bi in zip(probs, b, strict=False)]
        total = sum(new)
        new = [p / total for p in new]
        done = max(abs(a - c) for a, c in zip(new, q, strict=False)) < 1e-10
        q = new
        if done:
            break
    return q


def _llr(counts: Sequence[float], values: Sequence[float], t0: float, t1: float) -> float:
    total = sum(counts)
    if total == 0:
        return 0.0
    reg = [c if c > 0 else _EMPTY_BUCKET for c in counts]
    n = sum(reg)
    probs = [c / n for c in reg]
    q0 = _mle_with_t(probs, values, t0)
    q1 = _mle_with_t(probs, values, t1)
    return sum(c * (math.log(a) - math.log(b)) for c, a, b in zip(reg, q1, q0, strict=False))


def llr_trinomial(wins: int, draws: int, losses: int, nelo0: float, nelo1: float) -> float:
    """Generalized log-likelihood ratio of nElo = nelo1 against nelo0 from W/D/L.

    Games are the samples (scores 0, 1/2, 1); t = nelo / (800/ln10).  §LLR.
    """
    for name, v in (("wins", wins), ("draws", draws), ("losses", losses)):
        _check_count(name, v)
    return _llr((losses, draws, wins), (0.0, 0.5, 1.0), nelo0 / NELO_PER_T, nelo1 / NELO_PER_T)


def llr_pentanomial(counts: Sequence[int], nelo0: float, nelo1: float) -> float:
    """Generalized log-likelihood ratio of nElo = nelo1 against nelo0 from pairs.

    Pairs are the samples (per-game average 0, 1/4, 1/2, 3/4, 1); a pair's
    standard deviation is the game's divided by sqrt(2), so the pair t-value
    is sqrt(2) * nelo / (800/ln10).  §LLR.
    """
    counts = tuple(counts)
    if len(counts) != 5:
        raise ValueError(f"pentanomial needs 5 counts, got {len(counts)}")
    for i, c in enumerate(counts):
        _check_count(f"pentanomial[{i}]", c)
    k = math.sqrt(2.0) / NELO_PER_T
    return _llr(counts, (0.0, 0.25, 0.5, 0.75, 1.0), nelo0 * k, nelo1 * k)


class SPRTConfigError(ValueError):
    """An SPRT specification that cannot be used; the message says why."""


@dataclass(frozen=True)
class SPRTStatus:
    """Where a running SPRT stands.

    ``decision`` is ``"H1"`` (elo1 accepted: the first engine is stronger by
    at least the margin), ``"H0"`` (elo0 accepted) or ``None`` (keep playing).
    """

    llr: float
    lower: float
    upper: float
    decision: Literal["H0", "H1"] | None
    model: Literal["pentanomial", "trinomial"]


@dataclass(frozen=True)
class SPRT:
    """Wald's sequential test of nElo = elo0 against nElo = elo1.

    ``elo0`` and ``elo1`` are *normalized* Elo (fishtest's "normalized"
    model); ``alpha`` and ``beta`` the error rates of the two kinds.  §SPRT.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SPRTConfigError(f"sprt: {name} must be a finite number, got {value!r}")
        if not self.elo0 < self.elo1:
            raise SPRTConfigError(f"sprt: elo0 ({self.elo0}) must be less than elo1 ({self.elo1})")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise SPRTConfigError(f"sprt: {name} must lie strictly between 0 and 1, got {value}")
        if self.alpha + self.beta >= 1.0:
            raise SPRTConfigError(
                f"sprt: alpha + beta must be below 1, got {self.alpha} + {self.beta}"
            )

    @property
    def lower(self) -> float:
        """ln(beta / (1 - alpha)): at or below it, H0 is accepted."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """ln((1 - beta) / alpha): at or above it, H1 is accepted."""
        return math.log((1.0 - self.beta) / self.alpha)

    @classmethod
    def parse(cls, text: str) -> SPRT:
        """Read ``"elo0=0 elo1=5 alpha=0.05 beta=0.05"`` (alpha, beta optional).

        Tokens are ``key=value`` separated by spaces or commas; errors name
        the offending token.
        """
        known = ("elo0", "elo1", "alpha", "beta")
        values: dict[str, float] = {}
        tokens = text.replace(",", " ").split()
        if not tokens:
            raise SPRTConfigError("sprt: empty specification, expected e.g. 'elo0=0 elo1=5 alpha=0.05 beta=0.05'")
        for token in tokens:
            key, sep, raw = token.partition("=")
            key = key.strip().lower()
            if not sep or not key or not raw:
                raise SPRTConfigError(f"sprt: {token!r} is not of the form key=value")
            if key not in known:
                raise SPRTConfigError(f"sprt: unknown key {key!r} in {token!r} (known: {', '.join(known)})")
            if key in values:
                raise SPRTConfigError(f"sprt: {key} given twice")
            try:
                number = float(raw)
            except ValueError:
                raise SPRTConfigError(f"sprt: {key} value {raw!r} is not a number") from None
            if not math.isfinite(number):
                raise SPRTConfigError(f"sprt: {key} value {raw!r} is not a finite number")
            values[key] = number
        for key in ("elo0", "elo1"):
            if key not in values:
                raise SPRTConfigError(f"sprt: missing {key} (e.g. 'elo0=0 elo1=5')")
        return cls(**values)

    def __str__(self) -> str:
        return f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g}"

    def llr(self, stats: PairStats) -> float:
        """LLR from the pairs when there are any, else from W/D/L."""
        return self.status(stats).llr

    def status(self, stats: PairStats) -> SPRTStatus:
        """The LLR, both bounds, and the decision once a bound is reached."""
        if stats.pairs > 0:
            value = llr_pentanomial(stats.pentanomial, self.elo0, self.elo1)  # type: ignore[arg-type]
            model: Literal["pentanomial", "trinomial"] = "pentanomial"
        else:
            value = llr_trinomial(stats.wins, stats.draws, stats.losses, self.elo0, self.elo1)
            model = "trinomial"
        lower, upper = self.lower, self.upper
        decision: Literal["H0", "H1"] | None = None
        if value >= upper:
            decision = "H1"
        elif value <= lower:
            decision = "H0"
        return SPRTStatus(value, lower, upper, decision, model)
