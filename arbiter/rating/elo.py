"""The Elo scale and the elementary conversions every other rating module shares.

Logistic Elo from a score and back, the standard normal law, the logistic
function in overflow-free form, and the count check used wherever W/D/L or
pentanomial counts come in.  Formulas: ``specs/ratings.md`` (§Elo from score,
§Normalized Elo, §Joint ratings).  Pure :mod:`math`, nothing else.
"""

from __future__ import annotations

import math

__all__ = [
    "Z95",
    "NELO_PER_T",
    "ELO_PER_THETA",
    "Interval",
    "elo_from_score",
    "score_from_elo",
    "normal_cdf",
    "logistic",
    "log_logistic",
    "check_count",
]

#: Two-sided 95% quantile of the standard normal law, Phi^-1(0.975).
Z95 = 1.959963984540054

#: Normalized Elo per unit of t-value: nElo = t * 800 / ln 10 (§Normalized Elo).
NELO_PER_T = 800.0 / math.log(10.0)

#: Elo per natural-log unit of odds: Elo = theta * 400 / ln 10 (§Joint ratings).
ELO_PER_THETA = 400.0 / math.log(10.0)

#: A (low, high) interval of Elo or normalized Elo.
Interval = tuple[float, float]


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
    return logistic(elo / ELO_PER_THETA)


def normal_cdf(x: float) -> float:
    """Phi(x), the standard normal distribution function, through ``math.erf``."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def logistic(x: float) -> float:
    """1/(1+e^-x), written in two branches so that exp never overflows."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def log_logistic(x: float) -> float:
    """log(1/(1+e^-x)) without overflow or loss of precision."""
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def check_count(name: str, value: object) -> int:
    """``value`` when it is a non-negative ``int`` (not a ``bool``), else ``ValueError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return value
