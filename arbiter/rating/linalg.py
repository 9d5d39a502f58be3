"""Dense symmetric positive-definite linear algebra for the joint-ratings solver.

Cholesky factorization, a solve and an inverse on plain lists of lists: the
matrices are one row per engine of a connected group, small enough that
nothing beyond :mod:`math` is worth importing.
"""

from __future__ import annotations

import math

__all__ = ["cholesky", "solve_spd", "invert_spd"]


def cholesky(a: list[list[float]]) -> list[list[float]]:
    """The lower-triangular L with L L^T = a; ``ArithmeticError`` if a is not positive definite."""
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


def solve_spd(a: list[list[float]], b: list[float]) -> list[float]:
    """The x with a x = b, by forward then back substitution on the Cholesky factor."""
    return _solve_factored(cholesky(a), b)


def _solve_factored(low: list[list[float]], b: list[float]) -> list[float]:
    """The x with L L^T x = b for the Cholesky factor L."""
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def invert_spd(a: list[list[float]]) -> list[list[float]]:
    """a^-1, one solve per column of the identity on one factorization."""
    low = cholesky(a)
    n = len(a)
    columns = [_solve_factored(low, [1.0 if r == c else 0.0 for r in range(n)]) for c in range(n)]
    return [[columns[c][r] for c in range(n)] for r in range(n)]
