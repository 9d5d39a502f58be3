"""Ratings and statistics against hand-computed values (specs/ratings.md).

Each expected number is worked out in the comment above it, from the formula of
the named section of specs/ratings.md, so that a wrong formula in
arbiter/rating.py cannot agree with its test by construction.
"""

from __future__ import annotations

import math
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.rating import (
    NELO_PER_T,
    SPRT,
    Z95,
    Anchor,
    PairStats,
    SPRTConfigError,
    elo_from_score,
    expected_samples_left,
    joint_ratings,
    joint_ratings_from_pairs,
    llr_pentanomial,
    llr_trinomial,
    normal_cdf,
    pentanomial,
    score_from_elo,
)

approx = pytest.approx

T = TypeVar("T")


def known(value: T | None) -> T:
    """``value``, which the test expects to exist (a figure of a match
    with games): None fails the test."""
    assert value is not None
    return value


# ---------------------------------------------------------------------------
# §Elo from score


def test_elo_from_score_known_values():
    # 0.75 -> -400*log10(1/0.75 - 1) = -400*log10(1/3) = 400*0.4771213 = 190.8485
    assert elo_from_score(0.75) == approx(190.84850188786)
    # 0.5 -> -400*log10(1) = 0 (and not -0.0)
    assert elo_from_score(0.5) == 0.0 and math.copysign(1.0, elo_from_score(0.5)) == 1.0
    # 10/11 -> -400*log10(1/10) = 400
    assert elo_from_score(10 / 11) == approx(400.0)
    assert score_from_elo(400.0) == approx(10 / 11)
    assert elo_from_score(1.0) == math.inf
    assert elo_from_score(0.0) == -math.inf
    with pytest.raises(ValueError, match="score must lie in"):
        elo_from_score(1.2)


def test_normal_cdf():
    # Phi(0) = 1/2; Phi(1) = (1 + erf(1/sqrt 2))/2 = (1 + 0.6826895)/2 = 0.8413447
    assert normal_cdf(0.0) == 0.5
    assert normal_cdf(1.0) == approx(0.8413447460685429)
    assert normal_cdf(Z95) == approx(0.975)


# ---------------------------------------------------------------------------
# §Trinomial, §Normalized Elo, §LOS


def test_pair_60_20_20():
    s = PairStats(wins=60, draws=20, losses=20)
    # games 100, points 60 + 20/2 = 70, score 0.7, draw ratio 0.2
    assert s.games == 100
    assert s.score == approx(0.7)
    assert s.draw_ratio == approx(0.2)
    # Elo = -400*log10(1/0.7 - 1) = -400*log10(0.4285714) = -400*(-0.3679768) = 147.19
    assert s.elo == approx(147.1907141178)
    # E[x^2] = (60*1 + 20*1/4)/100 = 0.65; var = 0.65 - 0.7^2 = 0.16; sd = 0.4
    # se = 0.4/sqrt(100) = 0.04; 1.959964*0.04 = 0.0783986
    # score interval [0.6216014, 0.7783986]
    # elo(0.7783986) = -400*log10(0.2216014/0.7783986) = -400*log10(0.2846889) = 218.25
    # elo(0.6216014) = -400*log10(0.3783986/0.6216014) = -400*log10(0.6087475) = 86.23
    lo, hi = known(s.elo_interval)
    assert lo == approx(86.2250, abs=1e-3)
    assert hi == approx(218.2518, abs=1e-3)
    # +/- = (218.2518 - 86.2250)/2 = 66.013
    assert s.elo_error == approx(66.0134, abs=1e-3)
    # nElo = (0.7 - 0.5)/0.4 * 800/ln10 = 0.5 * 347.43559 = 173.7178
    assert s.nelo == approx(173.7177928)
    # nElo interval: 173.7178 -/+ 1.959964 * 347.43559 / sqrt(100) = -/+ 68.0961
    nlo, nhi = known(s.nelo_interval)
    assert nlo == approx(173.7178 - 68.0961, abs=1e-3)
    assert nhi == approx(173.7178 + 68.0961, abs=1e-3)
    # LOS = Phi((60-20)/sqrt(60+20)) = Phi(4.472136) = 0.99999613
    assert s.los == approx(0.9999961279, abs=1e-9)
    assert "Elo 147.2 +/- 66.0" in s.summary()


def test_los_small_case():
    # W 3 L 1: Phi((3-1)/sqrt(4)) = Phi(1) = 0.8413447; draws do not enter.
    assert PairStats(3, 0, 1).los == approx(0.8413447460685429)
    assert PairStats(3, 7, 1).los == approx(0.8413447460685429)
    # W 1 L 3: Phi(-1) = 0.1586553
    assert PairStats(1, 0, 3).los == approx(0.15865525393145707)


def test_symmetric_match_is_zero():
    s = PairStats(25, 50, 25, (5, 10, 20, 10, 5))
    assert s.score == 0.5
    assert s.elo == 0.0
    assert s.nelo == 0.0
    assert s.los == 0.5
    assert s.penta_elo == 0.0
    assert s.penta_nelo == 0.0
    assert s.penta_los == 0.5
    lo, hi = known(s.elo_interval)
    assert lo == approx(-hi)


# ---------------------------------------------------------------------------
# §Pentanomial


def test_pentanomial_counts():
    # 2 -> bucket 4; (1, 0.5) = 1.5 -> 3; 1.0 -> 2; (0, 1) = 1 -> 2; (0.5, 0.5) -> 2; 0 -> 0
    assert pentanomial([2, (1, 0.5), 1.0, (0, 1), (0.5, 0.5), 0]) == (1, 0, 3, 1, 1)
    assert pentanomial([]) == (0, 0, 0, 0, 0)


@pytest.mark.parametrize(
    "pairs, message",
    [
        ([2, 2.5], "pair 1: pair score 2.5"),
        ([0.25], "pair 0: pair score 0.25"),
        ([(1, 0.3)], "pair 0: game score 0.3"),
        ([(1, 1, 1)], "pair 0: expected two game scores"),
        ([-0.5], "pair 0"),
    ],
)
def test_pentanomial_rejects_bad_pairs(pairs, message):
    with pytest.raises(ValueError, match=message):
        pentanomial(pairs)


def test_pentanomial_statistics():
    # Pairs LD x10, DD x20, WD x30, WW x40: counts (0, 10, 20, 30, 40);
    # W = 30 + 80 = 110, D = 10 + 40 + 30 = 80, L = 10; 200 games.
    s = PairStats(110, 80, 10, (0, 10, 20, 30, 40))
    # per-game pair averages 0, .25, .5, .75, 1:
    # mu = (10*.25 + 20*.5 + 30*.75 + 40*1)/100 = (2.5 + 10 + 22.5 + 40)/100 = 0.75
    assert s.penta_score == approx(0.75)
    # elo(0.75) = 400*log10(3) = 190.8485
    assert s.penta_elo == approx(190.84850188786)
    # E[a^2] = (10*.0625 + 20*.25 + 30*.5625 + 40*1)/100 = 0.625; var = 0.625 - 0.5625 = 0.0625
    # sigma_pair = 0.25, se = 0.25/sqrt(100) = 0.025, 1.959964*0.025 = 0.0489991
    # interval: elo(0.7010009) = -400*log10(0.2989991/0.7010009) = 148.019
    #           elo(0.7989991) = -400*log10(0.2010009/0.7989991) = 239.739
    lo, hi = known(s.penta_elo_interval)
    assert lo == approx(148.0195, abs=1e-3)
    assert hi == approx(239.7393, abs=1e-3)
    # nElo = (0.75 - 0.5)/(sqrt(2)*0.25) * 347.43559 = 0.7071068 * 347.43559 = 245.6741
    assert s.penta_nelo == approx(245.67406, abs=1e-4)
    # interval -/+ 1.959964 * 347.43559 / sqrt(200) = -/+ 48.1508
    nlo, nhi = known(s.penta_nelo_interval)
    assert nhi - nlo == approx(2 * 48.1508, abs=1e-3)
    # LOS = Phi(0.25/0.025) = Phi(10) = 1 - 7.6e-24
    assert s.penta_los == approx(1.0)
    # The trinomial view of the same 200 games: E[x^2] = (110 + 80/4)/200 = 0.65,
    # var = 0.65 - 0.5625 = 0.0875: a different (smaller) spread than the pairs show.
    assert s.elo == approx(190.84850188786)
    assert known(s.elo_error) < known(s.penta_elo_error)


def test_pentanomial_figures_absent_without_pairs():
    s = PairStats(3, 2, 1)
    assert s.pairs == 0
    assert s.penta_elo is None and s.penta_elo_interval is None
    assert s.penta_nelo is None and s.penta_los is None and s.penta_elo_error is None
    empty = PairStats(3, 2, 1, (0, 0, 0, 0, 0))
    assert empty.penta_elo is None


# ---------------------------------------------------------------------------
# §Edge cases


def test_no_games_gives_none_everywhere():
    s = PairStats(0, 0, 0)
    for name in ("score", "draw_ratio", "elo", "elo_interval", "elo_error", "nelo",
                 "nelo_interval", "los"):
        assert getattr(s, name) is None, name
    assert s.summary() == "no games"


def test_all_wins_and_all_losses_are_infinite():
    s = PairStats(10, 0, 0, (0, 0, 0, 0, 5))
    assert s.score == 1.0
    assert s.elo == math.inf
    assert s.elo_interval == (math.inf, math.inf)
    assert s.elo_error == math.inf
    assert s.nelo == math.inf
    assert s.penta_elo == math.inf and s.penta_nelo == math.inf
    assert s.penta_los == 1.0
    # LOS = Phi(10/sqrt(10)) = Phi(3.1623) = 0.99922
    assert s.los == approx(0.9992173, abs=1e-6)
    assert "+inf" in s.summary()
    t = s.swapped()
    assert t.elo == -math.inf and t.nelo == -math.inf and t.penta_los == 0.0


def test_all_draws():
    s = PairStats(0, 10, 0)
    # var = 10/4/10 - 0.25 = 0: no spread, so no interval (not a +/- 0 one:
    # §Edge cases); nElo is 0, LOS 1/2.
    assert s.elo == 0.0
    assert s.elo_interval is None and s.elo_error is None
    assert s.nelo == 0.0 and s.nelo_interval is None
    assert s.los == 0.5
    assert s.reason("elo_error") == "every game drawn: the results have no spread to measure"
    assert s.reason("elo") is None and s.reason("los") is None


def test_one_kind_of_game_pair_has_no_interval():
    """specs/ratings.md §Edge cases: ten WD pairs (each 1.5 points) have no
    spread, so the pentanomial interval is undefined, not +/- 0.0."""
    s = PairStats(10, 10, 0, (0, 0, 0, 10, 0))
    # mu_p = 3/4, var_p = 0: Elo 400 log10(3) = 190.85, interval undefined.
    assert s.penta_elo == approx(190.848501887865)
    assert s.penta_elo_interval is None and s.penta_elo_error is None
    assert s.reason("penta_elo_error") == "every game pair scored 1.5 points: the results have no spread to measure"
    # t = 0.25 / 0: normalized Elo is infinite, and its interval infinite too.
    assert s.penta_nelo == math.inf and s.penta_nelo_interval == (math.inf, math.inf)
    # The games themselves do vary (W and D): the trinomial interval exists.
    assert known(s.elo_error) > 0 and s.reason("elo_error") is None
    # Ten WL pairs (each 1 point): the same, centred on 0.
    even = PairStats(10, 0, 10, (0, 0, 10, 0, 0))
    assert even.penta_elo == 0.0 and even.penta_elo_interval is None
    assert even.reason("penta_elo_interval") == "every game pair scored 1 point: the results have no spread to measure"


def test_reasons_name_why_a_figure_is_missing_or_infinite():
    """specs/ratings.md §Edge cases: each None or infinite figure has a reason."""
    assert PairStats(0, 0, 0).reason("elo") == "no games"
    assert PairStats(3, 0, 1).reason("penta_elo") == "no game pairs (games not played in pairs)"
    assert PairStats(3, 0, 1, (0, 0, 0, 0, 0)).reason("penta_elo") == "no complete game pair"
    won = PairStats(5, 0, 0)
    assert won.reason("elo") == won.reason("elo_error") == "every game won: a score of 100% has no finite Elo"
    assert won.swapped().reason("nelo") == "every game lost: a score of 0% has no finite Elo"
    # 9 W 1 L: mu = 0.9, se = sqrt(0.09/10) = 0.0949, mu + 1.96 se = 1.086 > 1:
    # the upper end is clamped to a score of 1, so infinite.
    lop = PairStats(9, 0, 1)
    lo, hi = known(lop.elo_interval)
    assert hi == math.inf and math.isfinite(lo) and lop.elo_error == math.inf
    assert lop.reason("elo_interval") == "the 95% interval reaches a score of 100%: unbounded above"
    assert lop.swapped().reason("elo_interval") == "the 95% interval reaches a score of 0%: unbounded below"
    assert lop.reason("elo") is None and lop.reason("los") is None


@pytest.mark.parametrize(
    "args, message",
    [
        ((-1, 0, 0), "wins must be a non-negative integer"),
        ((1, 0.5, 0), "draws must be a non-negative integer"),
        ((1, 0, 0, (1, 2, 3)), "pentanomial needs 5 counts"),
        ((1, 0, 0, (0, 0, 0, 0, -1)), r"pentanomial\[4\]"),
        ((2, 0, 0, (0, 0, 0, 0, 2)), "more than the 2 games"),
    ],
)
def test_pair_stats_rejects_bad_counts(args, message):
    with pytest.raises(ValueError, match=message):
        PairStats(*args)


# ---------------------------------------------------------------------------
# properties


counts = st.integers(min_value=0, max_value=60)


@st.composite
def pair_stats(draw):
    penta = tuple(draw(counts) for _ in range(5))
    extra = tuple(draw(counts) for _ in range(3))
    # W/D/L consistent with the pairs (middle bucket counted as two draws), plus unpaired games.
    w = 2 * penta[4] + penta[3] + extra[0]
    d = penta[1] + 2 * penta[2] + penta[3] + extra[1]
    l_ = 2 * penta[0] + penta[1] + extra[2]
    return PairStats(w, d, l_, penta)


def _neg(x):
    return None if x is None else -x


@given(pair_stats())
def test_swapping_sides_negates(s):
    t = s.swapped()
    assert t.swapped() == s
    for name in ("elo", "nelo", "penta_elo", "penta_nelo"):
        a, b = getattr(s, name), getattr(t, name)
        if a is None or math.isinf(a):
            assert b == _neg(a)
        else:
            assert b == approx(-a, abs=1e-9)
    if s.games:
        assert t.los == approx(1.0 - s.los, abs=1e-12)
        assert t.score == approx(1.0 - s.score)
        assert (s.elo_interval is None) == (t.elo_interval is None)
    if s.elo_interval is not None:
        lo, hi = s.elo_interval
        tlo, thi = known(t.elo_interval)
        assert (tlo, thi) == approx((-hi, -lo), abs=1e-9) or math.isinf(lo) or math.isinf(hi)
    if s.pairs:
        assert t.penta_los == approx(1.0 - s.penta_los, abs=1e-12)


@given(pair_stats())
def test_interval_contains_estimate(s):
    # An interval is missing only for samples without spread (§Edge cases),
    # and then a reason says so.
    for prefix, n in (("", s.games), ("penta_", s.pairs)):
        if not n:
            continue
        interval = getattr(s, prefix + "elo_interval")
        if interval is None:
            assert "no spread" in (s.reason(prefix + "elo_interval") or "")
            continue
        lo, hi = interval
        assert lo <= getattr(s, prefix + "elo") <= hi


# ---------------------------------------------------------------------------
# §Joint ratings, §Prior, §Anchoring, §Error bars


def _games(a, b, wins, draws, losses):
    return [(a, b, 1.0)] * wins + [(a, b, 0.5)] * draws + [(b, a, 1.0)] * losses


def test_two_engines_without_prior_agree_with_pair_formula():
    games = _games("A", "B", 60, 20, 20)
    r = joint_ratings(games, prior_draws=0)
    diff, err = r.difference("A", "B")
    # The fractional-win MLE makes the expected score equal the observed 0.7:
    # elo(0.7) = 147.19, the same as PairStats.
    assert diff == approx(PairStats(60, 20, 20).elo)
    # Mean anchored: A = +73.60, B = -73.60.
    assert r["A"].elo == approx(73.5953570589)
    assert r["B"].elo == approx(-73.5953570589)
    assert r["A"].points == 70 and r["A"].games == 100
    assert r.connected
    assert r.ratings[0].engine == "A"  # best first
    # Fisher information: n p (1-p) = 100*0.7*0.3 = 21; var(dtheta) = 1/21;
    # se = 0.2182179 nats * 173.71779 = 37.9080 Elo; 95%: 1.959964*37.908 = 74.299
    assert err == approx(74.2990, abs=1e-3)


def test_two_engines_no_draws_error_equals_trinomial_delta_method():
    # 30 W 10 L, prior 0.  Fisher: var(dtheta) = 1/(40*0.75*0.25) = 1/7.5,
    # se = 0.3651484 * 173.71779 = 63.4328 Elo.  Trinomial without draws:
    # se(mu) = sqrt(0.1875/40) = 0.0684653; dElo/dmu = 173.71779/0.1875 = 926.495
    # -> 63.4328 Elo.  Same figure: with no draws the two models coincide.
    r = joint_ratings(_games("A", "B", 30, 0, 10), prior_draws=0)
    _, err = r.difference("A", "B")
    # 95%: 1.959964 * 63.4328 = 124.326
    assert err == approx(124.3259, abs=1e-3)
    # Mean anchored, each engine is half the difference: 124.326/2 = 62.163
    assert r["A"].error == approx(124.3259 / 2, abs=1e-3)


def test_two_engines_with_prior_draws():
    # prior 1: one virtual draw is added: (70 + 0.5)/(100 + 1) = 0.6980198
    # elo = -400*log10(1/0.6980198 - 1) = 145.556
    r = joint_ratings(_games("A", "B", 60, 20, 20))
    assert r.prior_draws == 1.0
    assert r.difference("A", "B")[0] == approx(elo_from_score(70.5 / 101))
    assert r.difference("A", "B")[0] == approx(145.5557, abs=1e-3)
    # prior 4: (70 + 2)/(100 + 4) = 0.6923077 -> 140.85
    r4 = joint_ratings(_games("A", "B", 60, 20, 20), prior_draws=4)
    assert r4.difference("A", "B")[0] == approx(elo_from_score(72 / 104))


def test_from_pairs_equals_from_games():
    a = joint_ratings(_games("A", "B", 7, 3, 2) + _games("B", "C", 4, 4, 4))
    b = joint_ratings_from_pairs({("A", "B"): PairStats(7, 3, 2), ("C", "B"): PairStats(4, 4, 4)})
    for x in "ABC":
        assert a[x].elo == approx(b[x].elo, abs=1e-9)
        assert a[x].error == approx(b[x].error, abs=1e-9)


def _transitive():
    # A-B 30:10, B-C 30:10, A-C 36:4: odds 3, 3 and 9 = 3*3, a perfect logistic fit,
    # so the MLE reproduces each pair exactly: A - B = B - C = 400*log10(3) = 190.8485.
    return _games("A", "B", 30, 0, 10) + _games("B", "C", 30, 0, 10) + _games("A", "C", 36, 0, 4)


def test_three_engines_transitive():
    r = joint_ratings(_transitive(), prior_draws=0)
    assert [x.engine for x in r] == ["A", "B", "C"]
    assert r["A"].elo == approx(190.8485018879, abs=1e-6)
    assert r["B"].elo == approx(0.0, abs=1e-6)
    assert r["C"].elo == approx(-190.8485018879, abs=1e-6)
    # Fisher weights n p (1-p): AB 40*.75*.25 = 7.5, BC 7.5, AC 40*.9*.1 = 3.6.
    # With B fixed at 0 the information over (A, C) is [[11.1, -3.6], [-3.6, 11.1]],
    # det = 123.21 - 12.96 = 110.25, inverse = [[11.1, 3.6], [3.6, 11.1]]/110.25.
    # Mean gauge: A - mean = (2A - C)/3, var = (4*11.1 + 11.1 - 4*3.6)/(9*110.25)
    #   = 41.1/992.25 = 0.0414210, sd 0.2035215 nats = 35.3553 Elo -> 95% 69.295
    # B - mean = -(A + C)/3, var = (11.1 + 11.1 + 7.2)/992.25 = 0.0296296,
    #   sd 0.1721326 = 29.9025 Elo -> 95% 58.608
    assert r["A"].error == approx(69.2951, abs=1e-3)
    assert r["C"].error == approx(69.2951, abs=1e-3)
    assert r["B"].error == approx(58.6078, abs=1e-3)
    # A - C: var = (11.1 + 11.1 - 2*3.6)/110.25 = 15/110.25 = 0.1360544,
    # sd 0.3688556 = 64.0768 Elo -> 95% 125.588
    diff, err = r.difference("A", "C")
    assert diff == approx(381.697, abs=1e-3)
    assert err == approx(125.588, abs=1e-3)


def test_anchor_on_engine_shifts_ratings():
    mean = joint_ratings(_transitive(), prior_draws=0)
    fixed = joint_ratings(_transitive(), prior_draws=0, anchor=Anchor("C", 1000))
    # C at 1000, B = 1000 + 190.85, A = 1000 + 381.70
    assert fixed["C"].elo == approx(1000.0)
    assert fixed["B"].elo == approx(1190.8485, abs=1e-3)
    assert fixed["A"].elo == approx(1381.6970, abs=1e-3)
    # A shift of 1190.85 from the mean-anchored list, differences unchanged.
    for x in "ABC":
        assert known(fixed[x].elo) - known(mean[x].elo) == approx(1190.8485, abs=1e-3)
    # Errors become relative to C: C has none, A carries the A-C error 125.588.
    assert fixed["C"].error == 0.0
    assert fixed["A"].error == approx(125.588, abs=1e-3)
    assert fixed.difference("A", "C") == approx(mean.difference("A", "C"))
    # Mean anchored at 1500: every rating moves by 1500.
    moved = joint_ratings(_transitive(), prior_draws=0, anchor=Anchor(rating=1500))
    for x in "ABC":
        assert known(moved[x].elo) - known(mean[x].elo) == approx(1500.0)


def test_perfect_score_is_finite_with_prior_and_refused_without():
    games = _games("A", "B", 10, 0, 0)
    r = joint_ratings(games)
    # (10 + 0.5)/(10 + 1) = 21/22 -> elo = 400*log10(21) = 528.89; A = +264.44
    assert r["A"].elo == approx(400 * math.log10(21) / 2)
    assert math.isfinite(known(r["A"].error))
    with pytest.raises(ValueError, match="unbounded without a prior.*prior_draws > 0"):
        joint_ratings(games, prior_draws=0)
    # A cycle A > B > C > A with a 100% score in each pair has a finite MLE.
    cycle = _games("A", "B", 3, 0, 0) + _games("B", "C", 3, 0, 0) + _games("C", "A", 3, 0, 0)
    c = joint_ratings(cycle, prior_draws=0)
    assert all(x.elo == approx(0.0, abs=1e-6) for x in c)


def test_disconnected_groups_and_engines_without_games():
    games = _games("A", "B", 10, 0, 0) + _games("C", "D", 1, 3, 0)
    r = joint_ratings(games, engines=["E"])
    assert r.components == 2 and not r.connected
    assert r["A"].component == 0 and r["B"].component == 0
    assert r["C"].component == 1 and r["D"].component == 1
    # each group's mean sits at the anchor rating 0
    assert known(r["A"].elo) + known(r["B"].elo) == approx(0.0, abs=1e-9)
    assert known(r["C"].elo) + known(r["D"].elo) == approx(0.0, abs=1e-9)
    # C-D: (1 + 1.5 + 0.5)/(4 + 1) = 0.6 -> elo(0.6) = 70.437, C = +35.22
    assert r["C"].elo == approx(elo_from_score(0.6) / 2)
    assert r["E"].elo is None and r["E"].error is None and r["E"].games == 0
    assert r.ratings[-1].engine == "E"  # unrated engines last
    with pytest.raises(ValueError, match="no games link 'A' and 'C'"):
        r.difference("A", "C")
    # An anchor engine without games is placed at its rating; the others'
    # groups have their means there too.
    a = joint_ratings(games, anchor=Anchor("E", 1500))
    assert a["E"].elo == 1500.0 and a["E"].error == 0.0
    assert known(a["A"].elo) + known(a["B"].elo) == approx(3000.0)


@pytest.mark.parametrize(
    "games, kwargs, message",
    [
        ([("A", "A", 1.0)], {}, "game 0: engine 'A' cannot play itself"),
        ([("A", "B", 1.5)], {}, r"game 0: score 1\.5 outside"),
        ([("A", "B")], {}, "game 0: expected"),
        ([("A", "B", 1.0), ("A", "B", "won")], {}, "game 1: score 'won' is not a number"),
        ([("A", "B", math.nan)], {}, "game 0: score nan outside"),
        ([("A", "B", 1.0)], {"prior_draws": -1}, "prior_draws must be"),
        ([("A", "", 1.0)], {}, "non-empty strings"),
    ],
)
def test_joint_ratings_rejects_bad_input(games, kwargs, message):
    with pytest.raises(ValueError, match=message):
        joint_ratings(games, **kwargs)


def test_anchor_rejects_infinite_rating():
    with pytest.raises(ValueError, match="anchor rating must be finite"):
        Anchor("A", math.inf)


game_lists = st.lists(
    st.tuples(st.sampled_from("ABCDE"), st.sampled_from("ABCDE"), st.sampled_from([0.0, 0.5, 1.0]))
    .filter(lambda g: g[0] != g[1]),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(game_lists)
def test_joint_ratings_invariances(games):
    base = joint_ratings(games)
    # Each game seen from the other side, in reverse order: same ratings.
    flipped = joint_ratings([(b, a, 1.0 - s) for a, b, s in reversed(games)])
    assert len(base) == len(flipped)

    def groups(ratings):
        out: dict[int, set[str]] = {}
        for x in ratings:
            out.setdefault(x.component, set()).add(x.engine)
        return sorted(sorted(g) for g in out.values())

    assert groups(base) == groups(flipped)
    for x in base:
        y = flipped[x.engine]
        if x.elo is None:
            assert y.elo is None
        else:
            assert y.elo == approx(x.elo, abs=1e-6)
            assert y.error == approx(x.error, abs=1e-6)
    # Mean anchoring: each group sums to zero.
    sums: dict[int, float] = {}
    for x in base:
        if x.elo is not None:
            sums[x.component] = sums.get(x.component, 0.0) + x.elo
    assert all(v == approx(0.0, abs=1e-6) for v in sums.values())


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40), st.sampled_from([0.5, 1.0, 2.0]))
def test_two_engine_ml_equals_shrunk_pair_score(w, d, l_, prior):
    # With two engines the MLE reproduces the prior-augmented score exactly.
    if w + d + l_ == 0:
        return
    r = joint_ratings(_games("A", "B", w, d, l_), prior_draws=prior)
    expected = elo_from_score((w + d / 2 + prior / 2) / (w + d + l_ + prior))
    assert r.difference("A", "B")[0] == approx(expected, rel=1e-9, abs=1e-9)


# ---------------------------------------------------------------------------
# §First-move advantage, §LOS matrix


def _by_mover(a, b, a_first, a_points, b_first, b_points):
    """Games of a and b: ``a_first`` with a moving first (a scored ``a_points``),
    ``b_first`` with b moving first (b scored ``b_points``); halves as draws."""
    def side(first, second, n, points):
        wins, half = int(points), points - int(points)
        games = [(first, second, 1.0)] * wins + [(first, second, 0.5)] * (1 if half else 0)
        return games + [(first, second, 0.0)] * (n - len(games))
    return side(a, b, a_first, a_points) + side(b, a, b_first, b_points)


def test_first_move_two_engines_by_hand():
    # A moved first 10 times and scored 7; B moved first 10 times and scored 6.
    # Prior 1: half a virtual draw with each engine first, so
    # q_A = (7 + 1/4)/(10 + 1/2) = 0.690476, elo 139.3819;
    # q_B = (6 + 1/4)/(10 + 1/2) = 0.595238, elo 66.9964.
    # Two engines fill the model exactly: d + eta = 139.3819, eta - d = 66.9964,
    # so A - B = d = 36.1927 and eta = 103.1891.
    r = joint_ratings(_by_mover("A", "B", 10, 7, 10, 6), first_move=True)
    assert r.difference("A", "B")[0] == approx(36.1927117, abs=1e-6)
    adv = known(r.first_move)
    assert adv.elo == approx(103.1891466, abs=1e-6)
    # Information over (d, eta): edges (1, 1) and (-1, 1) with weights
    # w = 10.5 q (1 - q): 2.244048 and 2.529762; var(eta) = (1/w1 + 1/w2)/4,
    # 95%: 1.959964 * 173.71779 * sqrt(0.2102358) = 156.1130; var(d) the same.
    assert adv.error == approx(156.1130048, abs=1e-6)
    assert r.difference("A", "B")[1] == approx(156.1130048, abs=1e-6)
    assert adv.interval == approx((adv.elo - adv.error, adv.elo + adv.error))
    assert adv.score == approx(score_from_elo(adv.elo))
    # Without the term the same games say A is 6.5 points better of 20 instead:
    plain = joint_ratings(_by_mover("A", "B", 10, 7, 10, 6))
    assert plain.first_move is None
    assert plain.difference("A", "B")[0] == approx(elo_from_score((11 + 0.5) / 21))


def test_first_move_takes_unequal_colours_out_of_the_ratings():
    # A and B equal, the first move worth 100 Elo, A first in 30 games, B in 10:
    # each side scores its expected share.  A scores more overall (30 games
    # at 64%), which the plain model reads as strength; with the term the
    # difference is 0 (the prior pulls both scores toward 1/2 alike).
    p = score_from_elo(100.0)
    games = [("A", "B", p)] * 30 + [("B", "A", p)] * 10
    plain = joint_ratings(games)
    assert plain.difference("A", "B")[0] > 40
    fitted = joint_ratings(games, first_move=True, prior_draws=1e-9)
    assert fitted.difference("A", "B")[0] == approx(0.0, abs=1e-6)
    assert known(fitted.first_move).elo == approx(100.0, abs=1e-6)


def test_first_move_recovered_with_three_engines():
    # Expected scores of a logistic model with ratings 200, 100, 0 and a
    # first-move term of 50, both colours, as fractional games: the fit gives
    # them back (up to the negligible prior).
    true = {"A": 200.0, "B": 100.0, "C": 0.0}
    games = [(a, b, score_from_elo(true[a] - true[b] + 50.0)) for a in true for b in true if a != b]
    r = joint_ratings(games * 5, first_move=True, prior_draws=1e-9)
    assert known(r.first_move).elo == approx(50.0, abs=1e-5)
    assert r.difference("A", "B")[0] == approx(100.0, abs=1e-5)
    assert r.difference("B", "C")[0] == approx(100.0, abs=1e-5)


def test_first_move_needs_a_prior():
    with pytest.raises(ValueError, match="first-move term needs prior_draws > 0"):
        joint_ratings([("A", "B", 1.0)], first_move=True, prior_draws=0)
    assert joint_ratings([], first_move=True).first_move is None  # no games: nothing fitted


@settings(max_examples=40, deadline=None)
@given(game_lists)
def test_first_move_of_the_other_side_negates_the_term(games):
    # The same results with the other engine moving first in every game: the
    # ratings stay, the term changes sign.
    base = joint_ratings(games, first_move=True)
    other = joint_ratings([(b, a, 1.0 - s) for a, b, s in games], first_move=True)
    for x in base:
        y = other[x.engine]
        assert (x.elo is None) == (y.elo is None)
        if x.elo is not None:
            assert y.elo == approx(x.elo, abs=1e-6) and y.error == approx(x.error, abs=1e-6)
    if base.first_move is None:
        assert other.first_move is None
    else:
        assert known(other.first_move).elo == approx(-base.first_move.elo, abs=1e-6)
        assert known(other.first_move).error == approx(base.first_move.error, abs=1e-6)


def test_los_from_the_ratings_covariance():
    # §LOS matrix: Phi(difference / its standard deviation).  Transitive
    # example of §Joint ratings: A - C = 381.697, sd = 125.588 / 1.959964 =
    # 64.0768, z = 5.9569: LOS 0.99999999871.  A - B: 190.8485 with
    # var = 11.1/110.25 (A's with B fixed), sd = 0.3173 nats = 55.1196 Elo,
    # z = 3.4624, LOS = 0.999732.
    r = joint_ratings(_transitive(), prior_draws=0)
    assert r.los("A", "C") == approx(normal_cdf(381.697 / 64.0768), abs=1e-6)
    assert r.los("A", "B") == approx(0.999732, abs=1e-6)
    assert known(r.los("A", "B")) + known(r.los("B", "A")) == approx(1.0)
    assert r.los("A", "A") is None
    split = joint_ratings(_games("A", "B", 3, 0, 1) + _games("C", "D", 1, 0, 1), engines=["E"])
    assert split.los("A", "C") is None and split.los("A", "E") is None


# ---------------------------------------------------------------------------
# §SPRT


def test_sprt_bounds():
    s = SPRT(0, 5, 0.05, 0.05)
    # ln(0.05/0.95) = -2.944439, ln(0.95/0.05) = ln 19 = 2.944439
    assert s.lower == approx(-2.9444389791664403)
    assert s.upper == approx(2.9444389791664403)
    t = SPRT(0, 5, alpha=0.05, beta=0.1)
    # ln(0.1/0.95) = -2.251292, ln(0.9/0.05) = ln 18 = 2.890372
    assert t.lower == approx(-2.251291798606495)
    assert t.upper == approx(2.8903717578961645)


def _binary_llr(wins, losses, t0, t1):
    """Hand formula for results without draws (see specs/ratings.md §LLR).

    On the support {0, 1}, mu = p and sigma = sqrt(p(1-p)), so
    t = (p - 1/2)/sqrt(p(1-p)) has the single solution p = (1 + t/sqrt(1+t^2))/2,
    and LLR = W ln(p1/p0) + L ln((1-p1)/(1-p0)).
    """
    p0 = (1 + t0 / math.sqrt(1 + t0 * t0)) / 2
    p1 = (1 + t1 / math.sqrt(1 + t1 * t1)) / 2
    return wins * math.log(p1 / p0) + losses * math.log((1 - p1) / (1 - p0))


def test_llr_trinomial_matches_hand_computation():
    # nelo0 = 0 (t0 = 0, p0 = 1/2); nelo1 = 0.1 * 347.4356 = 34.7436 (t1 = 0.1):
    # p1 = (1 + 0.1/sqrt(1.01))/2 = (1 + 0.0995037)/2 = 0.5497519
    # LLR = 60 ln(0.5497519/0.5) + 40 ln(0.4502481/0.5)
    #     = 60 * 0.0948595 + 40 * (-0.1048098) = 5.69157 - 4.19239 = 1.49917
    hand = _binary_llr(60, 40, 0.0, 0.1)
    assert hand == approx(1.49917, abs=1e-5)
    # The empty draw bucket carries the 1e-3 regularization mass: a 1e-5 effect.
    assert llr_trinomial(60, 0, 40, 0.0, 0.1 * NELO_PER_T) == approx(hand, abs=1e-4)
    # Losing instead: 40 W 60 L -> 40 * 0.0948595 + 60 * (-0.1048098) = 3.79438 - 6.28859
    #   = -2.49421
    assert llr_trinomial(40, 0, 60, 0.0, 0.1 * NELO_PER_T) == approx(-2.49421, abs=1e-4)


def test_llr_pentanomial_matches_hand_computation():
    # Only LL and WW pairs: the pair is a binary sample with t_pair = sqrt(2) * t_game.
    # nelo1 = 0.1/sqrt(2) * 347.4356 gives t_pair = 0.1: the same 1.49917 as above.
    nelo1 = 0.1 / math.sqrt(2) * NELO_PER_T
    assert llr_pentanomial((40, 0, 0, 0, 60), 0.0, nelo1) == approx(1.49917, abs=1e-4)


@pytest.mark.parametrize(
    "kind, counts, nelo0, nelo1, expected",
    [
        # Values published in fastchess's SPRT test suite, an independent
        # implementation of fishtest's normalized model (to two decimals).
        ("penta", (365, 16618, 36029 + 200, 16974, 390), 0, 2, 2.25),
        ("penta", (127, 4883, 10311 + 401, 5150, 104), -1.75, 0.25, 3.01),
        ("penta", (0, 0, 0, 0, 5550), 0, 5, 111.82),
        ("tri", (36433, 68692, 36027), 0, 2, 0.92),
        ("tri", (10871, 20431, 10650), -1.75, 0.25, 2.30),
        ("tri", (4250, 0, 0), 0, 10, 120.56),
    ],
)
def test_llr_reference_values(kind, counts, nelo0, nelo1, expected):
    if kind == "penta":
        value = llr_pentanomial(counts, nelo0, nelo1)
    else:
        wins, draws, losses = counts
        value = llr_trinomial(wins, draws, losses, nelo0, nelo1)
    assert value == approx(expected, rel=0.01, abs=0.01)


def test_llr_no_games_is_zero():
    assert llr_trinomial(0, 0, 0, 0, 5) == 0.0
    assert llr_pentanomial((0, 0, 0, 0, 0), 0, 5) == 0.0


def test_status_decisions():
    s = SPRT(0, 5)
    # Far above elo1: H1.  100 WW, 200 WD, 100 DD, 50 LD pairs:
    # W = 200 + 200 = 400, D = 200 + 200 + 50 = 450, L = 50.
    win = PairStats(400, 450, 50, (0, 50, 100, 200, 100))
    st_ = s.status(win)
    assert st_.samples == "pentanomial" and st_.model == "normalized"
    assert st_.llr > st_.upper and st_.decision == "H1"
    # The mirror image: H0.
    lose = s.status(win.swapped())
    assert lose.llr < lose.lower and lose.decision == "H0"
    # Little data: continue.
    few = s.status(PairStats(3, 2, 1, (0, 0, 1, 1, 1)))
    assert few.decision is None and few.lower < few.llr < few.upper
    # Without pairs the trinomial LLR is used.
    tri = s.status(PairStats(60, 0, 40))
    assert tri.samples == "trinomial"
    assert tri.llr == approx(llr_trinomial(60, 0, 40, 0, 5))
    assert s.llr(PairStats(0, 0, 0)) == 0.0


def test_sprt_parse():
    s = SPRT.parse("elo0=0 elo1=5 alpha=0.05 beta=0.05")
    assert s == SPRT(0.0, 5.0, 0.05, 0.05)
    assert SPRT.parse("elo0=-1.75, elo1=0.25") == SPRT(-1.75, 0.25)
    assert SPRT.parse(" ELO1=2  elo0=0 beta=0.1 ") == SPRT(0, 2, 0.05, 0.1)
    assert SPRT.parse(str(s)) == s


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty specification"),
        ("elo0=0", "missing elo1"),
        ("elo1=5", "missing elo0"),
        ("elo0=0 elo1=5 gamma=1", "unknown key 'gamma'"),
        ("elo0=x elo1=5", "elo0 value 'x' is not a number"),
        ("elo0=nan elo1=5", "not a finite number"),
        ("elo0 elo1=5", "'elo0' is not of the form key=value"),
        ("elo0= elo1=5", "not of the form key=value"),
        ("elo0=0 elo0=1 elo1=5", "elo0 given twice"),
        ("elo0=5 elo1=0", r"elo0 \(5.0\) must be less than elo1 \(0.0\)"),
        ("elo0=0 elo1=5 alpha=1.5", "alpha must lie strictly between 0 and 1"),
        ("elo0=0 elo1=5 beta=0", "beta must lie strictly between 0 and 1"),
        ("elo0=0 elo1=5 alpha=0.6 beta=0.5", "alpha \\+ beta must be below 1"),
    ],
)
def test_sprt_parse_errors(text, message):
    with pytest.raises(SPRTConfigError, match=message):
        SPRT.parse(text)


small = st.integers(min_value=0, max_value=200)
hypotheses = st.tuples(st.floats(-10, 10), st.floats(0.5, 15)).map(lambda p: (p[0], p[0] + p[1]))


@settings(max_examples=40, deadline=None)
@given(small, small, st.integers(1, 200), hypotheses)
def test_llr_grows_when_a_loss_becomes_a_win(w, d, l_, h):
    before = llr_trinomial(w, d, l_, *h)
    assert llr_trinomial(w + 1, d, l_ - 1, *h) >= before - 1e-9
    assert llr_trinomial(w + 1, d, l_, *h) >= before - 1e-9  # an extra win
    assert llr_trinomial(w, d, l_ + 1, *h) <= before + 1e-9  # an extra loss


@settings(max_examples=40, deadline=None)
@given(st.tuples(st.integers(1, 100), small, small, small, small), hypotheses)
def test_penta_llr_grows_when_a_lost_pair_becomes_won(c, h):
    before = llr_pentanomial(c, *h)
    after = llr_pentanomial((c[0] - 1, c[1], c[2], c[3], c[4] + 1), *h)
    assert after >= before - 1e-9


@settings(max_examples=40, deadline=None)
@given(st.tuples(small, small, small, small, small), hypotheses)
def test_penta_llr_antisymmetry(c, h):
    # Reversing the pairs and negating (and swapping) the hypotheses negates the LLR:
    # the normalized model is symmetric around score 1/2.
    nelo0, nelo1 = h
    a = llr_pentanomial(c, nelo0, nelo1)
    b = llr_pentanomial(tuple(reversed(c)), -nelo1, -nelo0)
    assert b == approx(-a, rel=1e-6, abs=1e-6)


# ---------------------------------------------------------------------------
# §SPRT models, §Expected length


@pytest.mark.parametrize(
    "model, counts, elo0, elo1, expected",
    [
        # Values published in fastchess's SPRT test suite (to two decimals);
        # trinomial counts as (W, D, L), pentanomial as (LL, LD, DD+WL, WD, WW).
        ("logistic", (21404, 40708, 21184), 0.5, 2.5, -1.57),
        ("logistic", (57433, 106593, 57030), 0, 2, -2.59),
        ("bayesian", (68965, 128429, 68526), 0, 2, -1.26),
        ("bayesian", (21629, 41111, 21484), 0.5, 2.5, -1.13),
        ("logistic", (223, 9863, 20279 + 1000, 10037, 246), 0.5, 2.5, -3.07),
        ("logistic", (871, 26175, 55003 + 980, 26678, 821), 0, 2, -4.98),
    ],
)
def test_llr_of_the_other_models_matches_reference_values(model, counts, elo0, elo1, expected):
    if len(counts) == 5:
        c = counts
        stats = PairStats(2 * c[4] + c[3], c[1] + 2 * c[2] + c[3], 2 * c[0] + c[1], c)
    else:
        stats = PairStats(*counts)
    status = SPRT(elo0, elo1, model=model).status(stats)
    assert status.llr == approx(expected, rel=0.01, abs=0.01)
    assert status.model == model
    assert status.samples == ("pentanomial" if len(counts) == 5 and model != "bayesian" else "trinomial")


def test_logistic_llr_by_hand():
    # Without draws the distribution with mean s on {0, 1} is (1 - s, s), so
    # LLR = W ln(s1/s0) + L ln((1-s1)/(1-s0)).  elo1 = 5: s1 = 1/(1+10^(-5/400))
    # = 1/(1 + 0.9716279) = 0.5071951, s0 = 1/2; 60 W 40 L:
    # 60 ln(1.0143902) + 40 ln(0.9856098) = 60 * 0.0142876 - 40 * 0.0144947
    # = 0.857256 - 0.579788 = 0.27747.
    s1 = score_from_elo(5)
    assert s1 == approx(0.5071951, abs=1e-7)
    hand = 60 * math.log(s1 / 0.5) + 40 * math.log((1 - s1) / 0.5)
    assert hand == approx(0.27747, abs=1e-5)
    # The empty draw bucket's 1e-3 regularization moves it by about 1e-5.
    assert SPRT(0, 5, model="logistic").llr(PairStats(60, 0, 40)) == approx(hand, abs=1e-4)


def test_bayesian_model_needs_a_win_and_a_loss():
    # The draw Elo 200 log10((1-l)/l (1-w)/w) needs w, l > 0: no evidence before.
    status = SPRT(0, 5, model="bayesian").status(PairStats(10, 5, 0, (0, 0, 1, 2, 2)))
    assert status.llr == 0.0 and status.decision is None and status.samples == "trinomial"


def test_sprt_model_parse_and_name():
    s = SPRT.parse("elo0=0 elo1=5 model=Logistic")
    assert s == SPRT(0, 5, model="logistic") and str(s).endswith("model=logistic")
    assert SPRT.parse("elo0=0 elo1=5").model == "normalized"  # the default, as before
    assert str(SPRT(0, 5)) == "elo0=0 elo1=5 alpha=0.05 beta=0.05 model=normalized"
    assert SPRT.parse(str(s)) == s
    for text, message in (("elo0=0 elo1=5 model=elo", "unknown model 'elo'"),
                          ("elo0=0 elo1=5 model=logistic model=bayesian", "model given twice"),
                          ("elo0=0 elo1=9000 model=logistic", r"elo1 = 9000 is beyond \+/-1000"),
                          ("elo0=-1001 elo1=0", r"elo0 = -1001 is beyond \+/-1000")):
        with pytest.raises(SPRTConfigError, match=message):
            SPRT.parse(text)


def test_expected_length_without_drift_is_exact_for_a_fair_walk():
    # Steps +1/-1 with probability 1/2 from 0 leave (-3, 3) after 3 * 3 = 9
    # steps on average (a fair walk's exit time, (b - x)(x - a) / s^2 exactly).
    assert expected_samples_left(0.0, -3.0, 3.0, (1.0, -1.0), (0.5, 0.5)) == approx(9.0)
    assert expected_samples_left(1.0, -3.0, 3.0, (1.0, -1.0), (0.5, 0.5)) == approx(8.0)
    assert expected_samples_left(3.0, -3.0, 3.0, (1.0, -1.0), (0.5, 0.5)) == 0.0  # decided
    assert expected_samples_left(0.0, -3.0, 3.0, (1.0, 1.0), (0.5, 0.5)) is None  # no spread


def test_expected_length_agrees_with_a_simulated_test():
    """§Expected length: the Brownian approximation against 2000 simulated
    runs of a Wald test (win 0.55, H0 p = 0.5, H1 p = 0.55, small steps)."""
    import random

    rng = random.Random(7)
    a, b = math.log(0.05 / 0.95), math.log(0.95 / 0.05)
    up, down = math.log(0.55 / 0.5), math.log(0.45 / 0.5)
    lengths = []
    for _ in range(2000):
        x, n = 0.0, 0
        while a < x < b:
            x += up if rng.random() < 0.55 else down
            n += 1
        lengths.append(n)
    simulated = sum(lengths) / len(lengths)
    estimate = known(expected_samples_left(0.0, a, b, (up, down), (0.55, 0.45)))
    # The walk overshoots a bound by up to a step (0.1 of a span of 5.9), so
    # the approximation runs a little short.
    assert estimate == approx(simulated, rel=0.1)


def test_status_expects_the_games_left():
    s = SPRT(0, 5)
    few = s.status(PairStats(4, 7, 3, (0, 1, 3, 2, 1)))  # 7 pairs: too few to say
    assert few.games_left is None
    # Symmetric pairs, nElo 0 = elo0: the LLR drifts down slowly; thousands of
    # games to go, counted in games (two per pair).
    even = s.status(PairStats(30, 40, 30, (5, 10, 20, 10, 5)))
    assert even.decision is None and known(even.games_left) > 1000
    decided = s.status(PairStats(400, 450, 50, (0, 50, 100, 200, 100)))
    assert decided.decision == "H1" and decided.games_left == 0.0


def test_llr_with_a_hypothesis_far_from_zero():
    """specs/ratings.md §LLR: with nElo 500 the uniform start of the fixed
    point has no root; the walk from the empirical t still finds the
    distribution.  Without draws the hand formula holds: t1 = 500 / 347.4356 =
    1.43912, p1 = (1 + t1/sqrt(1 + t1^2))/2 = 0.91060, LLR = 60 ln(1.82121) +
    40 ln(0.17879) = 35.9699 - 68.8608 = -32.891."""
    hand = _binary_llr(60, 40, 0.0, 500 / NELO_PER_T)
    assert hand == approx(-32.891, abs=1e-3)
    assert llr_trinomial(60, 0, 40, 0, 500) == approx(hand, abs=1e-2)
    # Pairs, nElo 250 (beyond the uniform start from about 231): a finite LLR,
    # and the pairs' hand formula with t_pair = sqrt 2 * 250 / 347.4356.
    pairs = _binary_llr(30, 20, 0.0, math.sqrt(2) * 250 / NELO_PER_T)
    assert llr_pentanomial((20, 0, 0, 0, 30), 0, 250) == approx(pairs, abs=1e-2)
    assert SPRT(0, 300).status(PairStats(3, 1, 0, (0, 0, 0, 1, 1))).decision is None


@pytest.mark.parametrize("counts", [(0, 0, 0, 0, 5), (5, 0, 0, 0, 0), (1, 0, 0, 0, 1000),
                                    (1000, 1, 1, 1, 1), (2, 5, 50, 5, 2)])
@pytest.mark.parametrize("h", [(999, 1000), (-1000, -999), (-1000, 1000)])
def test_llr_at_the_limits_of_the_hypotheses(counts, h):
    """specs/ratings.md §SPRT: every hypothesis within +/-1000 gives a finite LLR."""
    for model in ("normalized", "logistic"):
        c = counts
        stats = PairStats(2 * c[4] + c[3], c[1] + 2 * c[2] + c[3], 2 * c[0] + c[1], c)
        assert math.isfinite(SPRT(h[0], h[1], model=model).llr(stats))
        assert math.isfinite(SPRT(h[0], h[1], model=model).llr(PairStats(*c[:3])))
