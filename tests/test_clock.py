"""Clock arithmetic of every time control (specs/match.md §Time controls).

Pure: elapsed times are given, nothing is timed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.clock import MAX_TIME_MS, Clock, TimeControl, TimeControlError
from protocol.limits import MAX_INT
from protocol.messages import GO_INT_FIELDS
from protocol.search import go_message


def go_fields(mover: Clock, opponent: Clock, mover_is_p1: bool) -> dict[str, int | bool]:
    """The fields of the ``go`` the arbiter sends: the clock's limits put in
    the protocol's words (protocol/search.py), the fields that are set."""
    go = go_message(mover.limits(opponent), mover_is_p1)
    fields: dict[str, int | bool] = {k: getattr(go, k) for k in GO_INT_FIELDS if getattr(go, k) is not None}
    if go.infinite:
        fields["infinite"] = True
    return fields


@pytest.mark.parametrize("text, fields", [
    ("40/60+0.5", dict(moves=40, base_ms=60_000, inc_ms=500)),
    ("40/60", dict(moves=40, base_ms=60_000)),
    ("60+0.5", dict(base_ms=60_000, inc_ms=500)),
    ("0.5+0.01", dict(base_ms=500, inc_ms=10)),
    ("1:30+1", dict(base_ms=90_000, inc_ms=1000)),
    ("40/1:30", dict(moves=40, base_ms=90_000)),
    ("st=2", dict(movetime_ms=2000)),
    ("st=0.05", dict(movetime_ms=50)),
    ("depth=8", dict(depth=8)),
    ("nodes=100000", dict(nodes=100_000)),
    ("nodes=1e5", dict(nodes=100_000)),
    ("inf", dict()),
    ("60+1,depth=12", dict(base_ms=60_000, inc_ms=1000, depth=12)),
    ("st=1,nodes=500", dict(movetime_ms=1000, nodes=500)),
    ("inf,depth=3", dict(depth=3)),
])
def test_parse(text, fields):
    tc = TimeControl.parse(text)
    assert tc == TimeControl(**fields)
    assert TimeControl.parse(str(tc)) == tc  # the canonical spelling round-trips


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("abc", "is not moves/seconds"),
    ("60+", "is not moves/seconds"),
    ("0+1", "more than 0"),
    ("40/0", "more than 0"),
    ("0/60", ">= 1"),
    ("st=0", "more than 0"),
    ("st=x", "not a number"),
    ("depth=0", ">= 1"),
    ("depth=2.5", ">= 1"),
    ("nodes=-3", ">= 1"),
    ("nodes=abc", "not a whole number"),
    ("60+1,30+1", "two clocks"),
    ("st=1,st=2", "given twice"),
    ("hash=3", "unknown term"),
    ("1:2:3", "minutes:seconds"),
    ("nan", "is not moves/seconds"),
])
def test_parse_errors_say_why(text, words):
    with pytest.raises(TimeControlError) as info:
        TimeControl.parse(text)
    assert words in str(info.value)
    assert repr(text) in str(info.value)


def test_fischer_increment_added_after_the_move():
    clock = Clock(TimeControl.parse("10+1"))
    assert clock.remaining_ms == 10_000  # the first go shows the bare base time
    assert clock.stop(2500)
    assert clock.remaining_ms == 10_000 - 2500 + 1000
    assert clock.stop(0)
    assert clock.remaining_ms == 9500.0
    assert clock.moves_to_go is None
    assert clock.clock_ms() == 9500


def test_fischer_flag_and_margin():
    clock = Clock(TimeControl.parse("1+0"), timemargin_ms=50)
    assert clock.deadline_ms() == 1050
    assert not clock.is_over_time(1050)
    assert clock.is_over_time(1050.5)
    # over the clock but inside the margin: allowed, and the clock stops at 0 (no debt)
    assert clock.stop(1030)
    assert clock.remaining_ms == 0
    assert clock.deadline_ms() == 50
    assert not clock.stop(51)  # flagged: the clock is left as it was
    assert clock.remaining_ms == 0


def test_moves_per_period_repeats_and_counts_down():
    clock = Clock(TimeControl.parse("3/6+0.5"))
    assert clock.moves_to_go == 3
    assert clock.stop(1000)
    assert (clock.moves_to_go, clock.remaining_ms) == (2, 5500)
    assert clock.stop(1000)
    assert (clock.moves_to_go, clock.remaining_ms) == (1, 5000)
    assert clock.stop(1000)  # end of the period: + base time again
    assert (clock.moves_to_go, clock.remaining_ms) == (3, 4500 + 6000)
    for _ in range(3):
        assert clock.stop(0)
    assert (clock.moves_to_go, clock.remaining_ms) == (3, 10_500 + 1500 + 6000)


def test_moves_per_period_flag_before_the_refill():
    clock = Clock(TimeControl.parse("2/1"))
    assert clock.stop(600)
    assert clock.moves_to_go == 1
    assert not clock.stop(401)  # 400 ms left for the last move of the period


def test_movetime():
    clock = Clock(TimeControl.parse("st=0.2"), timemargin_ms=10)
    assert clock.remaining_ms is None and clock.clock_ms() is None
    assert clock.deadline_ms() == 210
    assert clock.stop(209)
    assert clock.deadline_ms() == 210  # fixed per move, nothing carries over
    assert not clock.stop(211)


@pytest.mark.parametrize("text", ["depth=3", "nodes=10", "inf"])
def test_limits_without_a_clock_use_the_stall_limit(text):
    clock = Clock(TimeControl.parse(text), stall_ms=1234)
    assert not clock.tc.is_timed
    assert clock.deadline_ms() == 1234  # a deadline is always armed
    assert not clock.is_over_time(10**9)  # never a time forfeit: a stall
    assert clock.stop(5000)
    assert clock.clock_ms() is None


def test_go_fields_both_clocks_p1_is_the_first_mover():
    white = Clock(TimeControl.parse("40/60+0.5"))
    black = Clock(TimeControl.parse("30+0.25"))
    white.stop(1500)
    # White moves, and White is p1 (troll, morris, talisman)
    assert go_fields(white, black, True) == dict(
        p1time=59_000, p1inc=500, p2time=30_000, p2inc=250, movestogo=39)
    # Black moves, and Black is p1 (atoll): Black's own fields are p1's
    assert go_fields(black, white, True) == dict(
        p1time=30_000, p1inc=250, p2time=59_000, p2inc=500)
    assert go_fields(black, white, False) == dict(
        p2time=30_000, p2inc=250, p1time=59_000, p1inc=500)
    # an opponent without a clock: all four fields still, the opponent's
    # mirroring the mover's own (specs/protocol.md §Arbiter to engine, go limits)
    assert go_fields(black, Clock(TimeControl.parse("st=2")), False) == dict(
        p2time=30_000, p2inc=250, p1time=30_000, p1inc=250)
    # a clock run below zero (within the margin) is sent as 0
    flagged = Clock(TimeControl.parse("1+0"), timemargin_ms=500)
    assert flagged.stop(1200)
    assert go_fields(flagged, black, True) == dict(p1time=0, p1inc=0, p2time=30_000, p2inc=250)


def test_go_fields_of_each_kind():
    other = Clock(TimeControl.parse("10+0"))
    assert go_fields(Clock(TimeControl.parse("st=2")), other, True) == dict(movetime=2000)
    assert go_fields(Clock(TimeControl.parse("depth=5")), other, True) == dict(depth=5)
    assert go_fields(Clock(TimeControl.parse("nodes=7")), other, False) == dict(nodes=7)
    assert go_fields(Clock(TimeControl.parse("inf")), other, True) == dict(infinite=True)
    # a clocked mover facing an opponent without a clock: all four fields,
    # the opponent's mirroring his own (ugi.md's clock form has all four)
    assert go_fields(other, Clock(TimeControl.parse("depth=2")), True) == dict(
        p1time=10_000, p1inc=0, p2time=10_000, p2inc=0)
    assert go_fields(Clock(TimeControl.parse("5+1,depth=9")), other, True) == dict(
        p1time=5000, p1inc=1000, p2time=10_000, p2inc=0, depth=9)


def test_go_fields_never_negative_time():
    clock = Clock(TimeControl.parse("1+0"), timemargin_ms=100)
    clock.stop(1050)
    assert go_fields(clock, clock, True)["p1time"] == 0


# --- bounds and the exact canonical spelling (issue 16) ---------------------------------------

@pytest.mark.parametrize("text, words", [
    ("depth=1e400", "over the limit"),
    ("nodes=1e30", "over the limit"),
    ("depth=99999999999999999999999", "over the limit"),
    ("nodes=9223372036854775808", "over the limit"),
    ("st=1e308", "over the limit"),
    ("9" * 400 + "+1", "finite"),
    ("9" * 300 + "+1", "over the limit"),
    ("60+" + "9" * 20, "over the limit"),
    ("9" * 307 + ":1", "finite"),
    ("99999999999999999999999/60", "over the limit"),
    ("depth=nan", "not a whole number"),
    ("depth=inf", "not a whole number"),
])
def test_numbers_beyond_the_limits_are_refused(text, words):
    """Numbers too big for a float or for the protocol's signed 64-bit fields
    are a TimeControlError, never an OverflowError nor a ``go`` no engine
    can read (``go depth 99999999999999999999999``)."""
    with pytest.raises(TimeControlError, match=words):
        TimeControl.parse(text)


def test_the_largest_numbers_are_accepted():
    tc = TimeControl.parse(f"{MAX_INT}/{MAX_TIME_MS // 1000}+{MAX_TIME_MS // 1000},nodes={MAX_INT}")
    assert (tc.moves, tc.base_ms, tc.inc_ms, tc.nodes) == (MAX_INT, MAX_TIME_MS, MAX_TIME_MS, MAX_INT)


@pytest.mark.parametrize("text, spelled", [
    ("1000000.5", "1000000.5"), ("123456.789+0.001", "123456.789+0.001"), ("st=0.001", "st=0.001"),
    ("40/1:30.25", "40/90.25"),
])
def test_the_canonical_spelling_is_exact(text, spelled):
    """``%g`` spelled 1000000.5 s as ``1e+06``: a different time control."""
    tc = TimeControl.parse(text)
    assert str(tc) == spelled
    assert TimeControl.parse(str(tc)) == tc


_ms = st.integers(1, MAX_TIME_MS)
_count = st.integers(1, MAX_INT)
_time_controls = st.one_of(
    st.builds(TimeControl, base_ms=_ms, inc_ms=st.integers(0, MAX_TIME_MS),
              moves=st.none() | _count, depth=st.none() | _count, nodes=st.none() | _count),
    st.builds(TimeControl, movetime_ms=_ms, depth=st.none() | _count, nodes=st.none() | _count),
    st.builds(TimeControl, depth=st.none() | _count, nodes=st.none() | _count),
)


@settings(max_examples=300, deadline=None)
@given(_time_controls)
def test_every_time_control_round_trips(tc):
    assert TimeControl.parse(str(tc)) == tc


def test_a_clock_grown_past_the_protocol_range_is_sent_within_it():
    white = Clock(TimeControl.parse(f"{MAX_TIME_MS // 1000}+{MAX_TIME_MS // 1000}"))
    black = Clock(TimeControl.parse("60"))
    white.remaining_ms = 2.0 * MAX_INT  # what ten million moves with that increment leave
    assert go_fields(white, black, True)["p1time"] == MAX_INT
