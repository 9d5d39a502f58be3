"""Statistics of one pair of engines: score, draw ratio, Elo, nElo, LOS.

:class:`PairStats` gives the Elo difference with a 95% interval from the
trinomial model (games as samples) and, when the games were played in pairs
with colours swapped, the same from the pentanomial model (game pairs as
samples); :func:`pentanomial` counts pairs into its five buckets.  Formulas:
``specs/ratings.md`` §Trinomial, §Pentanomial, §Normalized Elo, §LOS.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from arbiter.rating.elo import NELO_PER_T, Z95, Interval, check_count, elo_from_score, normal_cdf

__all__ = ["pentanomial", "PairStats", "SHOWN_FIGURES"]

#: The figures a pair is shown with, wherever it is shown (the pair table,
#: a match's headline, the progress line, JSON, the web view): from its game
#: pairs when it has complete ones, else from its games (§Which figure).
SHOWN_FIGURES = ("elo", "elo_error", "elo_interval", "nelo", "los")

#: How far twice a pair score may sit from a whole number and still name its
#: bucket: room for a score summed in floating point, far below the 1/2 steps.
_BUCKET_TOLERANCE = 1e-9


def _elo_interval(mu: float, se: float) -> Interval | None:
    """Map the score interval mu -/+ Z95*se to Elo, clamping to [0, 1].

    ``None`` when the samples have no spread (``se == 0``) but the score is
    not perfect: every sample had the same middle outcome (all draws, or every
    game pair in one middle bucket), and an interval of zero width would claim
    a certainty the data do not have (§Edge cases).  A perfect score keeps its
    infinite interval.
    """
    if se == 0.0 and 0.0 < mu < 1.0:
        return None
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
        if not 0 <= bucket <= 4 or abs(total * 2.0 - bucket) > _BUCKET_TOLERANCE:
            raise ValueError(
                f"pair {index}: pair score {item!r} is not one of 0, 0.5, 1, 1.5, 2"
            )
        counts[bucket] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


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
            check_count(name, getattr(self, name))
        if self.pentanomial is not None:
            counts = tuple(self.pentanomial)
            if len(counts) != 5:
                raise ValueError(f"pentanomial needs 5 counts, got {len(counts)}")
            for i, c in enumerate(counts):
                check_count(f"pentanomial[{i}]", c)
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
        if var == 0.0:  # no spread: infinite at a perfect score, else undefined
            return (centre, centre) if math.isinf(centre) else None
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
        if var == 0.0:  # no spread: infinite at a perfect score, else undefined
            return (centre, centre) if math.isinf(centre) else None
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

    # -- the figures shown -------------------------------------------------------

    @property
    def samples(self) -> Literal["pentanomial", "trinomial"]:
        """What the shown figures come from: ``"pentanomial"`` (complete game
        pairs) or ``"trinomial"`` (games, when there is no complete pair)."""
        return "pentanomial" if self.pairs else "trinomial"

    def shown(self, figure: str) -> Any:
        """The pair's ``figure`` (one of :data:`SHOWN_FIGURES`) as every
        place shows it: the pentanomial one when complete game pairs exist,
        else the trinomial one.  §Which figure."""
        return getattr(self, self._shown_attribute(figure))

    def shown_reason(self, figure: str) -> str | None:
        """:meth:`reason` of the shown ``figure``."""
        return self.reason(self._shown_attribute(figure))

    def _shown_attribute(self, figure: str) -> str:
        if figure not in SHOWN_FIGURES:
            raise ValueError(f"{figure!r} is not a shown figure ({', '.join(SHOWN_FIGURES)})")
        return ("penta_" if self.pairs else "") + figure

    # -- why a figure is missing or infinite -------------------------------------

    def reason(self, figure: str) -> str | None:
        """Why ``figure`` (an attribute name: ``"elo"``, ``"elo_interval"``,
        ``"penta_nelo"``...) is ``None``, infinite, or an interval with an
        infinite end; ``None`` when it is finite.  §Edge cases.

        Displays print this next to (or instead of) the figure, and JSON puts
        it beside the ``null`` that stands for the figure, so that a missing
        or infinite number is never mistaken for a measured one.
        """
        value = getattr(self, figure)
        ends = value if isinstance(value, tuple) else (value,)
        if value is not None and all(math.isfinite(x) for x in ends):
            return None
        if figure.startswith("penta_"):
            if self.pentanomial is None:
                return "no game pairs (games not played in pairs)"
            sample = self._penta()
            if sample is None:
                return "no complete game pair"
            kind = "game pair"
        else:
            sample = self._trinomial()
            if sample is None:
                return "no games"
            kind = "game"
        _, mu, var = sample
        if mu == 1.0:
            return "every game won: a score of 100% has no finite Elo"
        if mu == 0.0:
            return "every game lost: a score of 0% has no finite Elo"
        if var == 0.0:
            points = 2.0 * mu  # a game pair's points: twice its per-game average
            outcome = ("drawn" if kind == "game"
                       else f"scored {points:g} point{'' if points == 1.0 else 's'}")
            return f"every {kind} {outcome}: the results have no spread to measure"
        side = "above" if value is not None and math.inf in ends else "below"
        bound = "100%" if side == "above" else "0%"
        return f"the 95% interval reaches a score of {bound}: unbounded {side}"

    # -- display ----------------------------------------------------------------

    def summary(self) -> str:
        """One line in the manner of cutechess-cli, for logs and the CLI."""
        if self.games == 0:
            return "no games"
        parts = [
            f"W {self.wins} D {self.draws} L {self.losses}",
            f"score {self.score:.3f}",
            f"Elo {_fmt(self.elo)} +/- {_fmt_error(self.elo_error)}",
            f"nElo {_fmt(self.nelo)}",
            f"LOS {100.0 * self.los:.1f} %",  # type: ignore[operator]
            f"draws {100.0 * self.draw_ratio:.1f} %",  # type: ignore[operator]
        ]
        if self.penta_elo is not None:
            parts.append(
                f"penta {list(self.pentanomial)} Elo {_fmt(self.penta_elo)} "  # type: ignore[arg-type]
                f"+/- {_fmt_error(self.penta_elo_error)} nElo {_fmt(self.penta_nelo)}"
            )
        return ", ".join(parts)


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:.1f}"


def _fmt_error(x: float | None) -> str:
    """A "+/-" figure; ``undefined`` when the games have no spread (§Edge cases)."""
    return "undefined" if x is None else _fmt(x)
