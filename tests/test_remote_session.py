"""What the server remembers of a remote engine's session from the lines it
sends (arbiter/engine/remote_session.py: pure, the times given by the test)."""

from __future__ import annotations

import pytest

from arbiter.engine.remote_session import RemoteSession, quota_of

GO = "go p1time 10000 p2time 9000 p1inc 100 p2inc 100"


def test_a_search_is_credited_its_time_less_the_compensation() -> None:
    state = RemoteSession()
    assert state.sent(["uginewgame", "position startpos", GO], now=100.0)
    assert state.quota is not None and state.lag_allowance() == pytest.approx(state.quota.quota)
    assert state.ends_search(["info depth 1", "bestmove a1"])
    credited = state.credit(101.0, think_ms=950, rtt=0.004)  # 50 ms of lag, within the quota
    assert credited == pytest.approx(100.95)
    assert state.lag == [(4, 50)]
    assert not state.ends_search(["bestmove a1"]) and state.lag_allowance() == 0.0


def test_a_resume_tells_a_fresh_engine_the_options_the_game_and_the_search() -> None:
    state = RemoteSession()
    state.sent(["setoption name Hash value 16", "setoption name Hash value 32", "isready"], 0.0)
    assert state.ready_asked
    state.answered(["readyok"])
    assert not state.ready_asked
    state.sent(["uginewgame", "position startpos moves a1 b2", GO], now=10.0)
    assert state.setup_lines() == ["setoption name Hash value 32", "uginewgame"]
    assert (state.games, state.moves) == (1, 2)
    state.plays_p1 = False
    assert state.replayed_search(now=12.5) == [
        "position startpos moves a1 b2", "go p1time 10000 p2time 6500 p1inc 100 p2inc 100"]
    state.plays_p1 = None  # not known: both clocks
    assert state.replayed_search(now=12.5)[-1].startswith("go p1time 7500 p2time 6500")


def test_a_new_game_starts_the_quota_again() -> None:
    state = RemoteSession()
    state.sent(["uginewgame", "position startpos", GO], 0.0)
    state.credit(1.0, None, None)
    assert state.lag == [(None, 0)]
    state.sent(["uginewgame", "position startpos", "go movetime 100"], 2.0)
    assert state.lag == [] and state.quota is None  # no clock in this game's first go
    assert quota_of("go depth 3") is None and quota_of(GO) is not None
