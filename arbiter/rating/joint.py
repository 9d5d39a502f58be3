"""Joint maximum-likelihood ratings of any number of engines from all their games.

The logistic Bradley-Terry model, a draw counting as half a win, with a small
virtual-draw prior on every pair that met, and on request a first-move term
fitted with the ratings (BayesElo's "advantage", Ordo's white advantage);
95% error bars from the inverse Fisher information; the scale anchored on an
engine or on the mean.  The solver is :mod:`.fit`.  Formulas:
``specs/ratings.md`` §Joint ratings, §First-move advantage, §Prior,
§Anchoring, §LOS matrix.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from arbiter.rating.elo import ELO_PER_THETA, Z95, normal_cdf, score_from_elo
from arbiter.rating.fit import Edge, fit, regauge
from arbiter.rating.pairs import PairStats

__all__ = [
    "DEFAULT_PRIOR_DRAWS",
    "Advantage",
    "Anchor",
    "Rating",
    "RatingList",
    "joint_ratings",
    "joint_ratings_from_pairs",
]

#: Virtual draws added to every pair of engines that met (§Prior).
DEFAULT_PRIOR_DRAWS = 1.0


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
class Advantage:
    """The first mover's advantage fitted with the ratings: ``elo`` on the
    ratings' own scale (two equal engines score ``score_from_elo(elo)`` with
    the first move) and ``error``, the 95% half-width.  §First-move advantage."""

    elo: float
    error: float

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% interval, ``elo -/+ error``."""
        return self.elo - self.error, self.elo + self.error

    @property
    def score(self) -> float:
        """The first mover's expected score between two equal engines."""
        return score_from_elo(self.elo)


@dataclass(frozen=True)
class RatingList:
    """Result of :func:`joint_ratings`: ratings best first, plus covariances,
    and the first-move advantage when it was fitted (``None`` otherwise, or
    without games)."""

    ratings: tuple[Rating, ...]
    anchor: Anchor
    prior_draws: float
    components: int
    _index: Mapping[str, int] = field(repr=False, compare=False)
    _covariance: tuple[tuple[float, ...], ...] = field(repr=False, compare=False)
    first_move: Advantage | None = None

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

    def _spread(self, a: str, b: str) -> tuple[float, float]:
        """Elo of ``a`` minus ``b`` and the standard deviation of that difference (Elo)."""
        ra, rb = self[a], self[b]
        if ra.elo is None or rb.elo is None or ra.component != rb.component:
            raise ValueError(f"no games link {a!r} and {b!r}: their difference is unknown")
        i, j = self._index[a], self._index[b]
        c = self._covariance
        var = max(0.0, c[i][i] + c[j][j] - 2.0 * c[i][j])
        return ra.elo - rb.elo, ELO_PER_THETA * math.sqrt(var)

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """Elo of ``a`` minus ``b`` and the 95% half-width of that difference.

        Raises ``ValueError`` when the two are not in one component (no games
        link them, so their difference is not measured).
        """
        diff, sd = self._spread(a, b)
        return diff, Z95 * sd

    def los(self, a: str, b: str) -> float | None:
        """The likelihood that ``a`` is stronger than ``b``: Phi(difference / its
        standard deviation), from the ratings' covariance.  ``None`` when no
        games link them (or ``a`` is ``b``).  §LOS matrix."""
        if a == b:
            return None
        try:
            diff, sd = self._spread(a, b)
        except ValueError:
            return None
        if sd > 0.0:
            return normal_cdf(diff / sd)
        return 0.5 if diff == 0.0 else float(diff > 0.0)


def joint_ratings(
    games: Iterable[tuple[str, str, float]],
    *,
    anchor: Anchor = Anchor(),
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    engines: Iterable[str] = (),
    first_move: bool = False,
) -> RatingList:
    """Maximum-likelihood ratings of every engine from all games.  §Joint ratings.

    ``games`` are ``(engine_a, engine_b, score_of_a)`` with the score in
    [0, 1] (1, 1/2, 0 for a win, draw, loss).  ``engines`` lists engines to
    include even without games.  ``prior_draws`` virtual draws are added to
    every pair of engines that met (§Prior), which keeps 100% and 0% scores
    finite; with ``prior_draws=0`` the plain MLE is returned, or a
    ``ValueError`` names the group of engines whose ratings are unbounded.
    With ``first_move``, ``engine_a`` had the first move in each game and the
    model has a first-move term, fitted with the ratings
    (:attr:`RatingList.first_move`; §First-move advantage); it needs
    ``prior_draws > 0``.
    """
    table = _ScoreTable(directed=first_move)
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
    first_move: bool = False,
) -> RatingList:
    """:func:`joint_ratings` from per-pair W/D/L, ``{(a, b): PairStats}`` (a's
    view); with ``first_move``, ``a`` had the first move in those games (a pair
    of engines then has up to two entries, one per engine moving first)."""
    table = _ScoreTable(directed=first_move)
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
    """Games and points between each pair of engines: per unordered pair, or
    (``directed``) per engine moving first and its opponent."""

    def __init__(self, directed: bool = False) -> None:
        self.directed = directed
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        # (i, j) -> [games, points of i]; i < j unless directed (then i moved first)
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
        if i > j and not self.directed:
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


@dataclass(frozen=True)
class _Totals:
    """What the fit and the rating list need from a :class:`_ScoreTable`.

    ``games`` and ``points`` are each engine's real figures (no prior);
    ``edges`` the games as the fit sees them, the prior's virtual draws
    included; ``s_dir`` the points of ``i`` against ``j`` (both directions,
    with the prior) for the check of §Prior.
    """

    games: list[int]
    points: list[float]
    edges: list[Edge]
    s_dir: dict[tuple[int, int], float]


def _totals(table: _ScoreTable, prior_draws: float) -> _Totals:
    """Games and (prior-augmented) points.  §Prior: ``prior_draws`` virtual
    draws per pair that met; with the first-move term half of them with each
    engine moving first, so that the prior favours no side."""
    size = len(table.names)
    totals = _Totals([0] * size, [0.0] * size, [], {})
    met: set[tuple[int, int]] = set()
    for (i, j), (n, p) in table.pairs.items():
        totals.games[i] += int(n)
        totals.games[j] += int(n)
        totals.points[i] += p
        totals.points[j] += n - p
        met.add((min(i, j), max(i, j)))
        totals.s_dir[(i, j)] = totals.s_dir.get((i, j), 0.0) + p
        totals.s_dir[(j, i)] = totals.s_dir.get((j, i), 0.0) + n - p
    for i, j in met:
        totals.s_dir[(i, j)] += prior_draws / 2.0
        totals.s_dir[(j, i)] += prior_draws / 2.0
    if not table.directed:
        for (i, j), (n, p) in table.pairs.items():
            totals.edges.append(Edge(i, j, n + prior_draws, p + prior_draws / 2.0))
        return totals
    for i, j in sorted(met):
        for a, b in ((i, j), (j, i)):
            n, p = table.pairs.get((a, b), (0.0, 0.0))
            totals.edges.append(Edge(a, b, n + prior_draws / 2.0, p + prior_draws / 4.0))
    return totals


def _groups(names: list[str], totals: _Totals, anchor: Anchor) -> list[list[int]]:
    """The connected groups of rated engines, biggest first, then by first engine seen.

    An engine is rated when it has games or is the anchor; the others belong
    to no group.
    """
    labels = _components(len(names), ((e.first, e.second) for e in totals.edges))
    groups: dict[int, list[int]] = {}
    for x in range(len(names)):
        if totals.games[x] > 0 or names[x] == anchor.engine:
            groups.setdefault(labels[x], []).append(x)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def _check_bounded(members: list[int], s_dir: dict[tuple[int, int], float], names: list[str]) -> None:
    """``ValueError`` naming the group when its plain MLE (no prior) does not exist."""
    if _unbounded(members, s_dir):
        group = ", ".join(repr(names[m]) for m in members)
        raise ValueError(
            f"ratings of {group} are unbounded without a prior: some of them "
            "scored 100% against the others; use prior_draws > 0"
        )


def _solve(table: _ScoreTable, anchor: Anchor, prior_draws: float) -> RatingList:
    """Fit every group of ``table`` and place it on the anchor's scale."""
    if not (prior_draws >= 0.0 and math.isfinite(prior_draws)):
        raise ValueError(f"prior_draws must be a finite number >= 0, got {prior_draws!r}")
    if table.directed and prior_draws == 0.0:
        raise ValueError("the first-move term needs prior_draws > 0: without it a side that won "
                         "every game has no finite advantage")
    if anchor.engine is not None:
        table.add_engine(anchor.engine)
    names = table.names
    size = len(names)
    totals = _totals(table, prior_draws)
    ordered = _groups(names, totals, anchor)
    component_of = [-1] * size
    for number, members in enumerate(ordered):
        for m in members:
            component_of[m] = number
        if prior_draws == 0.0:
            _check_bounded(members, totals.s_dir, names)
    advantage = table.directed and bool(totals.edges)
    result = fit(size, ordered, totals.edges, advantage)
    # The anchor's group relative to the anchor, every other group to its mean (§Anchoring).
    anchor_index = None if anchor.engine is None else table.index[anchor.engine]
    relative: list[list[int]] = [[] for _ in range(size + 1)]
    for members in ordered:
        for m in members:
            relative[m] = [anchor_index] if anchor_index in members else members
    values, cov = regauge(result.theta + [result.eta or 0.0], result.covariance, relative)
    anchor_theta = anchor.rating / ELO_PER_THETA
    theta: list[float | None] = [None] * size
    for members in ordered:
        for m in members:
            theta[m] = values[m] + anchor_theta
    first_move = None
    if result.eta is not None:
        first_move = Advantage(result.eta * ELO_PER_THETA,
                               Z95 * ELO_PER_THETA * math.sqrt(max(0.0, cov[size][size])))
    return RatingList(
        ratings=_rating_rows(names, theta, cov, totals, component_of),
        anchor=anchor,
        prior_draws=prior_draws,
        components=len(ordered),
        _index=dict(table.index),
        _covariance=tuple(tuple(row[:size]) for row in cov[:size]),
        first_move=first_move,
    )


def _rating_rows(
    names: list[str],
    theta: list[float | None],
    cov: list[list[float]],
    totals: _Totals,
    component_of: list[int],
) -> tuple[Rating, ...]:
    """One :class:`Rating` per engine, best first (unrated last, ties by name)."""
    ratings = []
    for x, name in enumerate(names):
        t = theta[x]
        if t is None:
            ratings.append(Rating(name, None, None, 0, 0.0, -1))
            continue
        elo = t * ELO_PER_THETA
        error = Z95 * ELO_PER_THETA * math.sqrt(max(0.0, cov[x][x]))
        ratings.append(Rating(name, elo, error, totals.games[x], totals.points[x], component_of[x]))
    ratings.sort(key=lambda r: (r.elo is None, -(r.elo or 0.0), r.engine))
    return tuple(ratings)
