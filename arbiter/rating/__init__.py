"""Elo, LOS, pentanomial statistics, joint ratings and SPRT: pure math.

Every formula used here is written out in ``specs/ratings.md``; the section
names quoted in docstrings (``§Trinomial`` and so on) point there.

Three layers, each usable alone, one module each:

* :class:`PairStats` (:mod:`.pairs`) -- one pair of engines: score, draw
  ratio, Elo difference with a 95% interval from the trinomial model, the same
  from game pairs (pentanomial), normalized Elo, LOS; and which of the two a
  pair is shown with, everywhere (:meth:`PairStats.shown`).
* :func:`joint_ratings` (:mod:`.joint`) -- maximum-likelihood ratings of any
  number of engines from all their games (logistic Bradley-Terry, a draw
  counting as half a win, a small virtual-draw prior, on request a first-move
  term fitted with them), with 95% error bars and the likelihood of
  superiority between any two, anchored on an engine or on the mean.  Its
  solver is :mod:`.fit`, whose linear algebra is :mod:`.linalg`.
* :class:`SPRT` (:mod:`.sprt`) -- the generalized sequential probability
  ratio test on normalized (default), logistic or BayesElo, from pentanomial
  counts (or W/D/L when no pairs exist), with the games it is still expected
  to need.

:mod:`.elo` holds what they share: the Elo scale, its conversions, the normal
law.  Scores are always from the first engine's point of view: 1 for a win,
1/2 for a draw, 0 for a loss.  Nothing here imports anything else of ours,
does I/O, or needs more than :mod:`math`.  Import from this package, not from
its modules: the split is an internal matter.
"""

from __future__ import annotations

from arbiter.rating.elo import NELO_PER_T, Z95, elo_from_score, normal_cdf, score_from_elo
from arbiter.rating.joint import (
    DEFAULT_PRIOR_DRAWS,
    Advantage,
    Anchor,
    Rating,
    RatingList,
    joint_ratings,
    joint_ratings_from_pairs,
)
from arbiter.rating.pairs import SHOWN_FIGURES, PairStats, pentanomial
from arbiter.rating.sprt import (
    MODELS,
    SPRT,
    SPRTConfigError,
    SPRTStatus,
    bayeselo_score,
    expected_samples_left,
    llr_pentanomial,
    llr_trinomial,
)

__all__ = [
    "Z95",
    "NELO_PER_T",
    "DEFAULT_PRIOR_DRAWS",
    "elo_from_score",
    "score_from_elo",
    "normal_cdf",
    "pentanomial",
    "PairStats",
    "SHOWN_FIGURES",
    "Advantage",
    "Anchor",
    "Rating",
    "RatingList",
    "joint_ratings",
    "joint_ratings_from_pairs",
    "llr_trinomial",
    "llr_pentanomial",
    "expected_samples_left",
    "bayeselo_score",
    "MODELS",
    "SPRT",
    "SPRTStatus",
    "SPRTConfigError",
]
