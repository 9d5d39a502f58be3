"""The generalized sequential probability ratio test on normalized Elo.

:func:`llr_pentanomial` and :func:`llr_trinomial` give the generalized
log-likelihood ratio of nElo = elo1 against nElo = elo0 from game-pair or
W/D/L counts; :class:`SPRT` holds a test's bounds, parses its specification
and says where a running match stands (:class:`SPRTStatus`).  Formulas:
``specs/ratings.md`` §LLR, §SPRT.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from arbiter.rating.elo import NELO_PER_T, check_count, score_from_elo
from arbiter.rating.pairs import PairStats

__all__ = [
    "MODELS", "MAX_SPRT_ELO", "llr_trinomial", "llr_pentanomial", "expected_samples_left", "bayeselo_score",
    "SPRT", "SPRTStatus", "SPRTConfigError",
]

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

#: Smallest step in t of the walk in :func:`_mle_with_t` before it gives
#: up: far below any difference an SPRT could state (a guard; not reached).
_MIN_T_STEP = 1e-9

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
    the solution's own mu and sigma, solved by fixed-point iteration from the
    uniform distribution.  A t far from 0 (nElo above about 230 on game
    pairs) leaves every b_i of the uniform start negative, with no root: the
    iteration then walks to ``t`` from the empirical distribution's own t
    (where q = p^), each step starting at the last solution.  §LLR.
    """
    n = len(values)
    try:
        return _fixed_point(probs, values, t, [1.0 / n] * n)
    except ArithmeticError:
        pass
    q = list(probs)
    mu, var = _mean_var(q, values)
    reached = (mu - 0.5) / math.sqrt(var)
    step = t - reached
    while reached != t:
        if abs(step) < _MIN_T_STEP:
            raise ArithmeticError(f"no distribution with t = {t} found")
        target = t if abs(t - reached) <= abs(step) else reached + step
        try:
            q = _fixed_point(probs, values, target, q)
        except ArithmeticError:
            step /= 2.0
            continue
        reached = target
        step *= 2.0  # it went: try a longer step next
    return q


def _fixed_point(probs: Sequence[float], values: Sequence[float], t: float, q: list[float]) -> list[float]:
    """The fixed-point rounds of :func:`_mle_with_t` from ``q``; an
    ``ArithmeticError`` when a round's b_i all have one sign (no root)."""
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


def _mle_with_mean(probs: Sequence[float], values: Sequence[float], score: float) -> list[float]:
    """Most likely distribution on ``values`` with mean ``score``: p^_i / (1 + x (a_i - s)).

    The constraint is linear, so one secular root gives it.  §LLR (logistic).
    """
    b = [v - score for v in values]
    x = _secular_root(probs, b)
    q = [p / (1.0 + x * bi) for p, bi in zip(probs, b, strict=False)]
    total = sum(q)
    return [p / total for p in q]


def _regularized(counts: Sequence[float]) -> list[float]:
    """The counts with each empty bucket at :data:`_EMPTY_BUCKET` (§LLR)."""
    return [c if c > 0 else _EMPTY_BUCKET for c in counts]


def _test(counts: Sequence[float], fit: Callable[[list[float], int], list[float]]) -> _Test:
    """The LLR of ``counts`` with the hypotheses' most likely distributions
    ``fit(probs, 0)`` and ``fit(probs, 1)``, and what the expected length
    needs: the LLR step of each outcome and the outcomes' empirical law."""
    if sum(counts) == 0:
        return _Test(0.0, (), (), 0.0)
    reg = _regularized(counts)
    n = sum(reg)
    probs = [c / n for c in reg]
    q0, q1 = fit(probs, 0), fit(probs, 1)
    steps = tuple(math.log(a) - math.log(b) for a, b in zip(q1, q0, strict=False))
    llr = sum(c * z for c, z in zip(reg, steps, strict=False))
    return _Test(llr, steps, tuple(probs), float(sum(counts)))


@dataclass(frozen=True)
class _Test:
    """One evaluation of the test: the LLR, the LLR step of each outcome,
    the outcomes' (regularized) empirical probabilities, and the samples."""

    llr: float
    steps: tuple[float, ...]
    probs: tuple[float, ...]
    samples: float


def _normalized_fit(values: Sequence[float], t0: float, t1: float) -> Callable[[list[float], int], list[float]]:
    return lambda probs, h: _mle_with_t(probs, values, (t0, t1)[h])


def _mean_fit(values: Sequence[float], s0: float, s1: float) -> Callable[[list[float], int], list[float]]:
    return lambda probs, h: _mle_with_mean(probs, values, (s0, s1)[h])


def _llr(counts: Sequence[float], values: Sequence[float], t0: float, t1: float) -> float:
    return _test(counts, _normalized_fit(values, t0, t1)).llr


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


#: The Elo scales the hypotheses can be stated in, as fastchess names them
#: (§SPRT models); the first is the default.
MODELS = ("normalized", "logistic", "bayesian")

Model = Literal["normalized", "logistic", "bayesian"]

#: Largest |elo0| and |elo1| (in the model's own Elo): a score of 99.7% in
#: logistic Elo, decided in a handful of games.  Beyond it the most likely
#: distributions of §LLR sit so close to the support's end that finding them
#: takes long or fails in floating point; no engine test states such a bound.
MAX_SPRT_ELO = 1000

#: Samples (game pairs, or games without pairs) before the expected length
#: is estimated: with fewer, the drift of the LLR rests on a handful of
#: results and the estimate swings by orders of magnitude (§Expected length).
MIN_SAMPLES_FOR_LENGTH = 10

#: |2 m (b - a) / s^2| below which the drift counts as zero in the expected
#: length, whose general form divides by m (§Expected length): the zero-drift
#: form is then exact to about this relative error.
_ZERO_DRIFT = 1e-4


def expected_samples_left(llr: float, lower: float, upper: float, steps: Sequence[float],
                          probs: Sequence[float]) -> float | None:
    """Samples still expected before the LLR leaves (lower, upper).

    The LLR moves by ``steps[i]`` on outcome ``i``, drawn with ``probs[i]``;
    with drift m and variance s^2 per sample, the approximation of the LLR by
    a Brownian motion gives the expected exit time from (a, b) starting at x:
    (P_b (b - x) + (1 - P_b)(a - x)) / m with P_b = (1 - e^(-th(x-a))) /
    (1 - e^(-th(b-a))), th = 2m/s^2, and (b - x)(x - a) / s^2 without drift.
    ``None`` when the steps do not vary.  §Expected length.
    """
    a, b, x = lower, upper, llr
    if not a < x < b:
        return 0.0
    m = sum(p * z for p, z in zip(probs, steps, strict=False))
    var = sum(p * z * z for p, z in zip(probs, steps, strict=False)) - m * m
    if not var > 0.0:
        return None
    theta = 2.0 * m / var
    if abs(theta * (b - a)) < _ZERO_DRIFT:
        return (b - x) * (x - a) / var
    if theta > 0:
        p_b = math.expm1(-theta * (x - a)) / math.expm1(-theta * (b - a))
    else:  # written so that no exponential overflows
        phi = -theta
        p_b = math.exp(-phi * (b - x)) * math.expm1(-phi * (x - a)) / math.expm1(-phi * (b - a))
    return max(0.0, (p_b * (b - x) + (1.0 - p_b) * (a - x)) / m)


@dataclass(frozen=True)
class SPRTStatus:
    """Where a running SPRT stands.

    ``decision`` is ``"H1"`` (elo1 accepted: the first engine is stronger by
    at least the margin), ``"H0"`` (elo0 accepted) or ``None`` (keep playing).
    ``samples`` says what the LLR was computed from (game pairs or games),
    ``model`` the Elo scale of the hypotheses, ``games_left`` how many more
    games the test is expected to need (``None`` until it can be estimated:
    §Expected length).
    """

    llr: float
    lower: float
    upper: float
    decision: Literal["H0", "H1"] | None
    samples: Literal["pentanomial", "trinomial"]
    model: Model = "normalized"
    games_left: float | None = None


def bayeselo_score(elo: float, draw_elo: float) -> float:
    """Expected score at BayesElo difference ``elo`` with draw Elo ``draw_elo``:
    P(win) + P(draw)/2 with P(win) = 1/(1+10^((draw_elo - elo)/400)) and
    P(loss) = 1/(1+10^((draw_elo + elo)/400)).  §SPRT models."""
    win = 1.0 / (1.0 + 10.0 ** ((draw_elo - elo) / 400.0))
    loss = 1.0 / (1.0 + 10.0 ** ((draw_elo + elo) / 400.0))
    return (1.0 + win - loss) / 2.0


@dataclass(frozen=True)
class SPRT:
    """Wald's sequential test of elo = elo0 against elo = elo1.

    ``model`` names the Elo scale of ``elo0`` and ``elo1`` (§SPRT models):
    ``normalized`` Elo (the default, fishtest's and fastchess's), ``logistic``
    Elo, or ``bayesian`` Elo (BayesElo, with the draw Elo taken from the
    games); ``alpha`` and ``beta`` the error rates of the two kinds.  §SPRT.
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "normalized"

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SPRTConfigError(f"sprt: {name} must be a finite number, got {value!r}")
        if self.model not in MODELS:
            raise SPRTConfigError(f"sprt: unknown model {self.model!r} (known: {', '.join(MODELS)})")
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
        for name in ("elo0", "elo1"):
            if abs(getattr(self, name)) > MAX_SPRT_ELO:
                raise SPRTConfigError(f"sprt: {name} = {getattr(self, name):g} is beyond +/-{MAX_SPRT_ELO} "
                                      "(a difference that large needs no test)")

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
        """Read ``"elo0=0 elo1=5 alpha=0.05 beta=0.05 model=normalized"``
        (alpha, beta and model optional).

        Tokens are ``key=value`` separated by spaces or commas; errors name
        the offending token.
        """
        known = ("elo0", "elo1", "alpha", "beta", "model")
        values: dict[str, float] = {}
        model: str | None = None
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
            if key in values or (key == "model" and model is not None):
                raise SPRTConfigError(f"sprt: {key} given twice")
            if key == "model":
                model = raw.lower()
                if model not in MODELS:
                    raise SPRTConfigError(f"sprt: unknown model {raw!r} in {token!r} (known: {', '.join(MODELS)})")
                continue
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
        return cls(**values, model=model or MODELS[0])  # type: ignore[arg-type]  # model checked above

    def __str__(self) -> str:
        return (f"elo0={self.elo0:g} elo1={self.elo1:g} alpha={self.alpha:g} beta={self.beta:g} "
                f"model={self.model}")

    def llr(self, stats: PairStats) -> float:
        """The LLR of ``stats`` in this test's model (see :meth:`status`)."""
        return self.status(stats).llr

    def _run(self, stats: PairStats) -> tuple[_Test, Literal["pentanomial", "trinomial"]]:
        """The test on game pairs when there are any (the ``bayesian`` model:
        always on W/D/L, as its draw Elo is a per-game notion), else on games."""
        penta = (0.0, 0.25, 0.5, 0.75, 1.0)
        tri = (0.0, 0.5, 1.0)
        wdl = (stats.losses, stats.draws, stats.wins)
        if self.model == "bayesian":
            if stats.wins == 0 or stats.losses == 0:  # no draw Elo yet: no evidence
                return _Test(0.0, (), (), float(stats.games)), "trinomial"
            loss, _, win = (c / sum(_regularized(wdl)) for c in _regularized(wdl))
            draw_elo = 200.0 * math.log10((1.0 - loss) / loss * (1.0 - win) / win)
            fit = _mean_fit(tri, bayeselo_score(self.elo0, draw_elo), bayeselo_score(self.elo1, draw_elo))
            return _test(wdl, fit), "trinomial"
        kind: Literal["pentanomial", "trinomial"] = "pentanomial" if stats.pairs > 0 else "trinomial"
        counts: Sequence[float] = stats.pentanomial or () if kind == "pentanomial" else wdl
        values: Sequence[float] = penta if kind == "pentanomial" else tri
        # The pair average has sigma_game / sqrt 2: its t-value is sqrt 2 times larger (§LLR).
        t_scale = (math.sqrt(2.0) if kind == "pentanomial" else 1.0) / NELO_PER_T
        if self.model == "logistic":
            fit = _mean_fit(values, score_from_elo(self.elo0), score_from_elo(self.elo1))
        else:
            fit = _normalized_fit(values, self.elo0 * t_scale, self.elo1 * t_scale)
        return _test(counts, fit), kind

    def status(self, stats: PairStats) -> SPRTStatus:
        """The LLR, both bounds, the decision once a bound is reached, and the
        games the test is still expected to need."""
        test, kind = self._run(stats)
        lower, upper = self.lower, self.upper
        decision: Literal["H0", "H1"] | None = None
        if test.llr >= upper:
            decision = "H1"
        elif test.llr <= lower:
            decision = "H0"
        games_left: float | None = None
        if decision is not None:
            games_left = 0.0
        elif test.samples >= MIN_SAMPLES_FOR_LENGTH and test.steps:
            left = expected_samples_left(test.llr, lower, upper, test.steps, test.probs)
            if left is not None:
                games_left = left * (2.0 if kind == "pentanomial" else 1.0)
        return SPRTStatus(test.llr, lower, upper, decision, kind, self.model, games_left)
