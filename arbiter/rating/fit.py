"""Newton's method for the joint ratings: the maximum of the Bradley-Terry
log-likelihood over every group of engines at once, with an optional
first-move term that all groups share, and the covariance of the estimate.

Pure: indices and floats in, indices and floats out; :mod:`.joint` turns
engine names and games into :class:`Edge` s and the result into a rating
list.  Formulas: ``specs/ratings.md`` §Joint ratings (Solver), §First-move
advantage, §Error bars.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arbiter.rating.elo import log_logistic, logistic
from arbiter.rating.linalg import invert_spd, solve_spd

__all__ = ["Edge", "Fit", "fit", "regauge"]

#: Newton iterations at most: a guard for an input on which the fit does not
#: settle, which then returns its last point.
_MAX_NEWTON_STEPS = 200

#: The fit stops once no parameter moves by more than this in one Newton step
#: (natural units): far below anything an Elo figure shows.
_STEP_TOLERANCE = 1e-12

#: A line-search trial is accepted when the log-likelihood falls by at most
#: this fraction of its size: rounding, not a worse point.
_LIKELIHOOD_SLACK = 1e-12

#: The line search stops halving the Newton step below this fraction of it.
_MIN_STEP_FRACTION = 1e-10


@dataclass(frozen=True)
class Edge:
    """Games between two engines as the fit sees them: ``games`` games (prior
    included) in which engine ``first`` scored ``points``.  With the
    first-move term, ``first`` had the first move in each of them."""

    first: int
    second: int
    games: float
    points: float


@dataclass(frozen=True)
class Fit:
    """The maximum: each engine's rating in natural units (theta = Elo * ln10 /
    400) with the first engine of each group held at 0, the first-move term
    (``None`` without it), and the covariance of all of them in that gauge:
    ``size + 1`` rows, the engines' then the term's (zero rows for the held
    engines, and for the term when there is none)."""

    theta: list[float]
    eta: float | None
    covariance: list[list[float]]


def fit(size: int, groups: Sequence[Sequence[int]], edges: Sequence[Edge], advantage: bool) -> Fit:
    """The maximum-likelihood ratings of ``size`` engines from ``edges``.

    ``groups`` are the connected groups of rated engines; the first of each is
    held at 0 (the likelihood sees only differences).  With ``advantage`` the
    first engine of each edge scores as if ``eta`` stronger (one ``eta`` for
    every game), which is fitted too.  The information matrix of the free
    parameters is positive definite when every edge carries a positive
    prior (``specs/ratings.md`` §Prior) or the plain maximum exists.
    """
    free = [m for group in groups for m in group[1:]]
    where: dict[int, int] = {m: p for p, m in enumerate(free)}
    eta_at = len(free) if advantage else None
    count = len(free) + (1 if advantage else 0)
    model = _Model(edges, where, eta_at, count)
    values = model.newton()
    theta = [0.0] * size
    for m, p in where.items():
        theta[m] = values[p]
    eta = None if eta_at is None else values[eta_at]
    covariance = [[0.0] * (size + 1) for _ in range(size + 1)]
    if count:
        _, info = model.gradient_information(values)
        inverse = invert_spd(info)
        index = {**where, **({} if eta_at is None else {size: eta_at})}
        for x, px in index.items():
            for y, py in index.items():
                covariance[x][y] = inverse[px][py]
    return Fit(theta, eta, covariance)


class _Model:
    """The log-likelihood over the free parameters, its gradient and information."""

    def __init__(self, edges: Sequence[Edge], where: dict[int, int], eta_at: int | None, count: int):
        # Each edge as (position of first, of second, games, points); -1 for a held engine.
        self.edges = [(where.get(e.first, -1), where.get(e.second, -1), e.games, e.points)
                      for e in edges]
        self.eta_at = eta_at
        self.count = count

    def _difference(self, values: list[float], p: int, q: int) -> float:
        d = (values[p] if p >= 0 else 0.0) - (values[q] if q >= 0 else 0.0)
        return d + values[self.eta_at] if self.eta_at is not None else d

    def log_likelihood(self, values: list[float]) -> float:
        total = 0.0
        for p, q, n, s in self.edges:
            d = self._difference(values, p, q)
            total += s * log_logistic(d) + (n - s) * log_logistic(-d)
        return total

    def gradient_information(self, values: list[float]) -> tuple[list[float], list[list[float]]]:
        """The gradient and the Fisher information (the negative Hessian)."""
        g = [0.0] * self.count
        info = [[0.0] * self.count for _ in range(self.count)]
        at = self.eta_at
        for p, q, n, s in self.edges:  # d/d theta_p = +1, d/d theta_q = -1, d/d eta = +1
            e = logistic(self._difference(values, p, q))
            r, w = s - n * e, n * e * (1.0 - e)
            if p >= 0:
                g[p] += r
                info[p][p] += w
            if q >= 0:
                g[q] -= r
                info[q][q] += w
                if p >= 0:
                    info[p][q] -= w
                    info[q][p] -= w
            if at is not None:
                g[at] += r
                info[at][at] += w
                if p >= 0:
                    info[p][at] += w
                    info[at][p] += w
                if q >= 0:
                    info[q][at] -= w
                    info[at][q] -= w
        return g, info

    def newton(self) -> list[float]:
        """The maximum from 0.  Each step is halved until the likelihood does
        not fall.  The stopping rule is on the step, not the gradient: far
        from equal strength the curvature is tiny and a small gradient can
        still mean a large error in the ratings."""
        values = [0.0] * self.count
        if not self.count:
            return values
        current = self.log_likelihood(values)
        for _ in range(_MAX_NEWTON_STEPS):
            g, info = self.gradient_information(values)
            step = solve_spd(info, g)
            if max(abs(v) for v in step) < _STEP_TOLERANCE:
                break
            t = 1.0
            while True:
                trial = [v + t * s for v, s in zip(values, step, strict=True)]
                value = self.log_likelihood(trial)
                if value >= current - _LIKELIHOOD_SLACK * abs(current) or t < _MIN_STEP_FRACTION:
                    break
                t /= 2.0
            values, current = trial, value
        return values


def regauge(values: list[float], covariance: list[list[float]], relative_to: Sequence[Sequence[int]]
            ) -> tuple[list[float], list[list[float]]]:
    """The values and their covariance after each value ``x`` becomes ``x``
    minus the mean of the values ``relative_to[x]`` (none: unchanged).

    Moves a fit from its held-engine gauge to the anchor's: an engine's group
    for a mean anchor, ``[anchor]`` for an engine anchor (§Anchoring).  Any
    gauge of a group differs from another by a constant shift, so the result
    does not depend on the gauge the fit was made in.  The covariance is
    ``M C M^T`` for that linear map ``M``.
    """
    n = len(values)
    sets = [tuple(s) for s in relative_to]
    shifted = [values[x] - (sum(values[u] for u in s) / len(s) if s else 0.0)
               for x, s in enumerate(sets)]

    def column_means(matrix: list[list[float]], s: tuple[int, ...]) -> list[float]:
        return [sum(row[u] for u in s) / len(s) for row in matrix]

    means: dict[tuple[int, ...], list[float]] = {}
    for s in set(sets):
        if s:
            means[s] = column_means(covariance, s)
    # C M^T: each column y less the mean of the columns relative_to[y] ...
    half = [[covariance[x][y] - (means[sets[y]][x] if sets[y] else 0.0) for y in range(n)]
            for x in range(n)]
    # ... then M (C M^T): each row x less the mean of the rows relative_to[x]
    row_means: dict[tuple[int, ...], list[float]] = {}
    for s in set(sets):
        if s:
            row_means[s] = [sum(half[u][y] for u in s) / len(s) for y in range(n)]
    full = [[half[x][y] - (row_means[sets[x]][y] if sets[x] else 0.0) for y in range(n)]
            for x in range(n)]
    return shifted, full
