"""The generalized sequential probability ratio test on normalized Elo.

:func:`llr_pentanomial` and :func:`llr_trinomial` give the generalized
log-likelihood ratio of nElo = elo1 against nElo = elo0 from game-pair or
W/D/L counts; :class:`SPRT` holds a test's bounds, parses its specification
and says where a running match stands (:class:`SPRTStatus`).  Formulas:
``specs/ratings.md`` §LLR, §SPRT.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from arbiter.rating.elo import NELO_PER_T, check_count
from arbiter.rating.pairs import PairStats

__all__ = ["llr_trinomial", "llr_pentanomial", "SPRT", "SPRTStatus", "SPRTConfigError"]

#: Mass given to an empty bucket before the LLR is computed (§LLR, Regularization).
_EMPTY_BUCKET = 1e-3

#: Newton iterations at most in :func:`_secular_root`: a guard, since the
#: bracket halves whenever Newton leaves it and the root is always found.
_MAX_ROOT_STEPS = 200

#: Relative change of x at which the secular root counts as found: a few
#: times the spacing of doubles, so as exact as the arithmetic allows.
_ROOT_TOLERANCE = 1e-15

#: Fixed-point rounds at most in :func:`_mle_with_t`: a guard for a
#: distribution that does not settle, which then returns its last round.
_MAX_FIXED_POINT_ROUNDS = 100

#: Largest change of any probability at which the fixed point counts as
#: reached (rounding near the poles leaves changes of ~1e-11).
_FIXED_POINT_TOLERANCE = 1e-10


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
    for _ in range(_MAX_ROOT_STEPS):
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
        if abs(x_next - x) <= _ROOT_TOLERANCE * (1.0 + abs(x)):
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
    for _ in range(_MAX_FIXED_POINT_ROUNDS):
        mu, var = _mean_var(q, values)
        sigma = math.sqrt(var)
        b = [v - 0.5 - t * sigma * (1.0 + ((v - mu) / sigma) ** 2) / 2.0 for v in values]
        x = _secular_root(probs, b)
        new = [p / (1.0 + x * bi) for p, bi in zip(probs, b, strict=False)]
        total = sum(new)
        new = [p / total for p in new]
        done = max(abs(a - c) for a, c in zip(new, q, strict=False)) < _FIXED_POINT_TOLERANCE
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
        check_count(name, v)
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
        check_count(f"pentanomial[{i}]", c)
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
