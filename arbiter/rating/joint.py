"""Joint maximum-likelihood ratings of any number of engines from all their games.

The logistic Bradley-Terry model, a draw counting as half a win, with a small
virtual-draw prior on every pair that met; 95% error bars from the inverse
Fisher information; the scale anchored on an engine or on the mean.  Each
group of engines connected by games is fitted on its own by Newton's method.
Formulas: ``specs/ratings.md`` §Joint ratings, §Prior, §Anchoring.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from arbiter.rating.elo import ELO_PER_THETA, Z95, log_logistic, logistic
from arbiter.rating.linalg import invert_spd, solve_spd
from arbiter.rating.pairs import PairStats

__all__ = [
    "DEFAULT_PRIOR_DRAWS",
    "Anchor",
    "Rating",
    "RatingList",
    "joint_ratings",
    "joint_ratings_from_pairs",
]

#: Virtual draws added to every pair of engines that met (§Prior).
DEFAULT_PRIOR_DRAWS = 1.0

#: Newton iterations at most: a guard for an input on which the fit does not
#: settle, which then returns its last point.
_MAX_NEWTON_STEPS = 200

#: The fit stops once no rating moves by more than this in one Newton step
#: (natural units): far below anything an Elo figure shows.
_STEP_TOLERANCE = 1e-12

#: A line-search trial is accepted when the log-likelihood falls by at most
#: this fraction of its size: rounding, not a worse point.
_LIKELIHOOD_SLACK = 1e-12

#: The line search stops halving the Newton step below this fraction of it.
_MIN_STEP_FRACTION = 1e-10


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
        return ra.elo - rb.elo, Z95 * ELO_PER_THETA * math.sqrt(var)


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


@dataclass(frozen=True)
class _Totals:
    """What the fit and the rating list need from a :class:`_ScoreTable`.

    ``games`` and ``points`` are each engine's real figures (no prior);
    ``n_pair`` holds, for each pair ``(i, j)`` with ``i < j``, the games plus
    the prior draws, and ``s_dir`` the points of ``i`` against ``j`` (both
    directions) plus half the prior draws.  §Prior.
    """

    games: list[int]
    points: list[float]
    n_pair: dict[tuple[int, int], float]
    s_dir: dict[tuple[int, int], float]


def _totals(table: _ScoreTable, prior_draws: float) -> _Totals:
    """Games and (prior-augmented) points in both directions."""
    size = len(table.names)
    totals = _Totals([0] * size, [0.0] * size, {}, {})
    for (i, j), (n, p) in table.pairs.items():
        totals.games[i] += int(n)
        totals.games[j] += int(n)
        totals.points[i] += p
        totals.points[j] += n - p
        totals.n_pair[(i, j)] = n + prior_draws
        totals.s_dir[(i, j)] = p + prior_draws / 2.0
        totals.s_dir[(j, i)] = n - p + prior_draws / 2.0
    return totals


def _groups(names: list[str], totals: _Totals, anchor: Anchor) -> list[list[int]]:
    """The connected groups of rated engines, biggest first, then by first engine seen.

    An engine is rated when it has games or is the anchor; the others belong
    to no group.
    """
    labels = _components(len(names), totals.n_pair)
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


def _anchored(
    members: list[int],
    local: list[float],
    local_cov: list[list[float]],
    anchor_theta: float,
    anchor_index: int | None,
) -> tuple[float, list[list[float]]]:
    """The shift that puts a fitted group on the anchor's scale, and its covariance there.

    A group holding the anchor engine is moved so that engine sits at
    ``anchor_theta``, and its covariance re-expressed relative to the anchor
    (r_k - r_a); any other group is moved so its mean sits there, and keeps
    the covariance around its mean.  §Anchoring.
    """
    if anchor_index is not None and anchor_index in members:
        a = members.index(anchor_index)
        k = len(members)
        rel = [
            [local_cov[p][q] - local_cov[p][a] - local_cov[a][q] + local_cov[a][a] for q in range(k)]
            for p in range(k)
        ]
        return anchor_theta - local[a], rel
    return anchor_theta - sum(local) / len(local), local_cov  # already relative to the mean


def _solve(table: _ScoreTable, anchor: Anchor, prior_draws: float) -> RatingList:
    """Fit every group of ``table`` and place it on the anchor's scale."""
    if not (prior_draws >= 0.0 and math.isfinite(prior_draws)):
        raise ValueError(f"prior_draws must be a finite number >= 0, got {prior_draws!r}")
    if anchor.engine is not None:
        table.add_engine(anchor.engine)
    names = table.names
    size = len(names)
    totals = _totals(table, prior_draws)
    ordered = _groups(names, totals, anchor)

    theta: list[float | None] = [None] * size
    cov = [[0.0] * size for _ in range(size)]
    component_of = [-1] * size
    anchor_theta = anchor.rating / ELO_PER_THETA
    anchor_index = None if anchor.engine is None else table.index[anchor.engine]
    for number, members in enumerate(ordered):
        for m in members:
            component_of[m] = number
        if prior_draws == 0.0:
            _check_bounded(members, totals.s_dir, names)
        local, local_cov = _fit_component(members, totals.n_pair, totals.s_dir)
        shift, rel = _anchored(members, local, local_cov, anchor_theta, anchor_index)
        for p, m in enumerate(members):
            theta[m] = local[p] + shift
            for q, m2 in enumerate(members):
                cov[m][m2] = rel[p][q]

    return RatingList(
        ratings=_rating_rows(names, theta, cov, totals, component_of),
        anchor=anchor,
        prior_draws=prior_draws,
        components=len(ordered),
        _index=dict(table.index),
        _covariance=tuple(tuple(row) for row in cov),
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


#: One pair of a group as the fit sees it: positions p, q in the group, the
#: games between them and the points of p (both with the prior).
_Edge = tuple[int, int, float, float]


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
    th = _newton(edges, k)
    _, info = _gradient_information(edges, th, k)
    cov = _mean_gauge_covariance(info, k)
    mean = sum(th) / k
    return [v - mean for v in th], cov


def _log_likelihood(edges: list[_Edge], th: list[float]) -> float:
    total = 0.0
    for p, q, n, s in edges:
        d = th[p] - th[q]
        total += s * log_logistic(d) + (n - s) * log_logistic(-d)
    return total


def _gradient_information(edges: list[_Edge], th: list[float], k: int) -> tuple[list[float], list[list[float]]]:
    """The log-likelihood's gradient and the Fisher information (its negative Hessian)."""
    g = [0.0] * k
    info = [[0.0] * k for _ in range(k)]
    for p, q, n, s in edges:
        e = logistic(th[p] - th[q])
        r = s - n * e
        g[p] += r
        g[q] -= r
        w = n * e * (1.0 - e)
        info[p][p] += w
        info[q][q] += w
        info[p][q] -= w
        info[q][p] -= w
    return g, info


def _newton(edges: list[_Edge], k: int) -> list[float]:
    """The maximum-likelihood ratings of a group of ``k``, engine 0 held at 0.

    The likelihood only sees differences, so fixing engine 0 leaves a reduced
    information matrix that is positive definite for a connected component
    with a positive prior or a finite MLE.  Each Newton step is halved until
    the likelihood does not fall.  The stopping rule is on the step, not the
    gradient: far from equal strength the curvature is tiny and a small
    gradient can still mean a large error in the ratings.
    """
    th = [0.0] * k
    current = _log_likelihood(edges, th)
    for _ in range(_MAX_NEWTON_STEPS):
        g, info = _gradient_information(edges, th, k)
        step = solve_spd([row[1:] for row in info[1:]], g[1:])
        if max(abs(v) for v in step) < _STEP_TOLERANCE:
            break
        t = 1.0
        while True:
            trial = [0.0] + [th[p] + t * step[p - 1] for p in range(1, k)]
            value = _log_likelihood(edges, trial)
            if value >= current - _LIKELIHOOD_SLACK * abs(current) or t < _MIN_STEP_FRACTION:
                break
            t /= 2.0
        th, current = trial, value
    return th


def _mean_gauge_covariance(info: list[list[float]], k: int) -> list[list[float]]:
    """Covariance of the ratings around their mean, from the full information matrix.

    The reduced matrix (engine 0 fixed) is inverted, then moved to the
    mean-zero gauge: C = M C0 M^T with M = I - 11^T/k.
    """
    reduced_inv = invert_spd([row[1:] for row in info[1:]])
    c0 = [[0.0] * k for _ in range(k)]
    for p in range(1, k):
        for q in range(1, k):
            c0[p][q] = reduced_inv[p - 1][q - 1]
    row_mean = [sum(c0[p]) / k for p in range(k)]
    total_mean = sum(row_mean) / k
    return [[c0[p][q] - row_mean[p] - row_mean[q] + total_mean for q in range(k)] for p in range(k)]
