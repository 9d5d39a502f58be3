"""The SDK keeps its time: the measured reserve (protocol/reserve.py, specs/protocol.md §Python SDK).

In-process tests of the meter and of the budget arithmetic (exact, no clock
read), of the runner that feeds one into the other, and one real match of a
sample engine at ``st=0.05`` that must end without a time loss.  No test
asserts how fast anything is: a sleep gives a lower bound the SDK must see,
nothing more.
"""

from __future__ import annotations

import gc
import io
import json
import os
import sqlite3
import time

import pytest
from cli import ROOT, arbiter

from arbiter.games import Position
from protocol import messages as m
from protocol import sdk
from protocol.reserve import (
    PIPE_ALLOWANCE_MS,
    RESERVE_WINDOW,
    UNMEASURED_SHARE,
    OverheadMeter,
    reserve_ms,
    scheduling_delay_ms,
)
from protocol.sdk import MOVE_OVERHEAD_MS, SearchLimits, time_budget_ms

# --- the meter ------------------------------------------------------------------------


def test_the_meter_keeps_the_worst_of_its_window():
    meter = OverheadMeter(window=3)
    assert meter.worst_ms() == 0.0 and len(meter) == 0
    for overhead in (4.0, 9.0, 2.0):
        meter.record(overhead)
    assert meter.worst_ms() == 9.0
    meter.record(1.0)
    assert meter.worst_ms() == 9.0  # still in the window: 9, 2, 1
    meter.record(3.0)
    assert meter.worst_ms() == 3.0 and len(meter) == 3  # 9 fell out: 2, 1, 3
    meter.record(-2.0)  # impossible, counted as nothing
    assert meter.worst_ms() == 3.0


def test_the_default_window_is_the_named_constant():
    meter = OverheadMeter()
    for overhead in range(RESERVE_WINDOW + 5):
        meter.record(100.0 - overhead)
    assert len(meter) == RESERVE_WINDOW
    assert meter.worst_ms() == 100.0 - 5


def test_a_meter_without_room_is_refused():
    with pytest.raises(ValueError):
        OverheadMeter(window=0)


# --- the arithmetic --------------------------------------------------------------------


def _grown(measured: float) -> float:
    return measured * (1 + UNMEASURED_SHARE) + PIPE_ALLOWANCE_MS


def test_the_reserve_is_the_floor_or_the_measured_overhead_grown():
    assert reserve_ms(12.5, 0.0) == 12.5  # nothing measured: the floor alone
    small = 1.0
    assert _grown(small) < 12.5 and reserve_ms(12.5, small) == 12.5
    assert reserve_ms(12.5, 20.0) == _grown(20.0) > 12.5


def test_movetime_budget_keeps_the_larger_reserve():
    floor = min(MOVE_OVERHEAD_MS, 50 / 4)
    assert time_budget_ms(m.Go(movetime=50), True) == 50 - floor  # 37.5, as before
    assert time_budget_ms(m.Go(movetime=50), True, 1.0) == 50 - floor
    assert time_budget_ms(m.Go(movetime=50), True, 10.0) == pytest.approx(50 - _grown(10.0))
    # a machine too slow for the movetime: answer at once rather than late
    assert time_budget_ms(m.Go(movetime=50), True, 100.0) == 0
    assert time_budget_ms(m.Go(movetime=1000), True, 10.0) == 1000 - MOVE_OVERHEAD_MS


def test_clock_budget_keeps_the_larger_reserve_off_the_clock():
    go = m.Go(p1time=1_000, p2time=1_000, p1inc=10, p2inc=10)
    assert time_budget_ms(go, True) == pytest.approx((1_000 - MOVE_OVERHEAD_MS) / 30 + 5)
    assert _grown(10.0) < MOVE_OVERHEAD_MS
    assert time_budget_ms(go, True, 10.0) == pytest.approx((1_000 - MOVE_OVERHEAD_MS) / 30 + 5)
    assert time_budget_ms(go, True, 40.0) == pytest.approx((1_000 - _grown(40.0)) / 30 + 5)
    assert time_budget_ms(m.Go(p1time=60, p2time=60), True, 40.0) == 0  # less than the reserve left


# --- the runner measures itself and uses what it measured ------------------------------


class _Dawdler(sdk.Engine):
    """Looks at its deadline, sleeps ``PAUSE`` seconds without looking, looks
    again, and answers: a gap the SDK must measure, whatever the machine."""

    name = "Dawdler"
    PAUSE = 0.02
    collector_on: list[bool] = []

    def choose_move(self, position: Position, limits: SearchLimits) -> str:
        type(self).collector_on.append(gc.isenabled())
        limits.stopped()
        time.sleep(self.PAUSE)
        limits.stopped()
        return position.legal_moves()[0]


def _search(runner: sdk.EngineRunner, go: str) -> SearchLimits:
    runner.handle("position startpos")
    runner.handle(go)
    runner.wait_search()
    assert runner.last_limits is not None
    return runner.last_limits


def test_the_runner_measures_each_timed_search_and_reserves_it():
    runner = sdk.EngineRunner(_Dawdler("troll"), stdin=0, stdout=io.StringIO())
    first = _search(runner, "go movetime 200")
    assert first.budget == pytest.approx(time_budget_ms(m.Go(movetime=200), True) / 1000)
    # the sleep without a look is a gap: at least that late had the deadline fallen there
    assert first.longest_gap >= _Dawdler.PAUSE
    assert first.overhead_ms() >= _Dawdler.PAUSE * 1000
    assert runner.meter.worst_ms() == first.overhead_ms()
    second = _search(runner, "go movetime 200")
    expected = time_budget_ms(m.Go(movetime=200), True, first.overhead_ms())
    assert expected is not None and expected < 200 - min(MOVE_OVERHEAD_MS, 200 / 4)
    assert second.budget == pytest.approx(expected / 1000)
    assert runner.meter.worst_ms() == max(first.overhead_ms(), second.overhead_ms())


def test_a_new_game_measures_the_machine_for_its_first_moves():
    """Before any search was measured, ``uginewgame`` (on no clock) puts the
    machine's scheduling delay in the meter: the first moves' reserve."""
    assert scheduling_delay_ms(naps=2) >= 0
    runner = sdk.EngineRunner(_Dawdler("troll"), stdin=0, stdout=io.StringIO())
    runner.handle("uginewgame")
    assert len(runner.meter) == 1
    probed = runner.meter.worst_ms()
    first = _search(runner, "go movetime 200")
    assert first.budget == pytest.approx(time_budget_ms(m.Go(movetime=200), True, probed) / 1000)


def test_untimed_searches_are_not_measured():
    runner = sdk.EngineRunner(_Dawdler("troll"), stdin=0, stdout=io.StringIO())
    _search(runner, "go depth 1")
    _search(runner, "go nodes 10")
    assert len(runner.meter) == 0


def test_the_fixed_reserve_ignores_what_was_measured(monkeypatch):
    monkeypatch.setenv(sdk.RESERVE_ENV, "fixed")
    runner = sdk.EngineRunner(_Dawdler("troll"), stdin=0, stdout=io.StringIO())
    _search(runner, "go movetime 200")
    assert runner.meter.worst_ms() >= _Dawdler.PAUSE * 1000  # measured all the same
    second = _search(runner, "go movetime 200")
    assert second.budget == pytest.approx(time_budget_ms(m.Go(movetime=200), True) / 1000)


def test_a_timed_search_runs_with_the_cyclic_collector_paused():
    """The collector's pauses (tens of ms over a search tree's garbage) are
    kept out of a timed search, and it runs again once the answer is out."""
    assert gc.isenabled()
    _Dawdler.collector_on.clear()
    runner = sdk.EngineRunner(_Dawdler("troll"), stdin=0, stdout=io.StringIO())
    timed = _search(runner, "go movetime 100")
    assert gc.isenabled()
    # the collection after the answer delays the next read: it is measured too
    assert timed.settle_lag > 0
    assert runner.meter.worst_ms() == pytest.approx(
        (timed.longest_gap + timed.answer_lag + timed.settle_lag) * 1000)
    _search(runner, "go depth 1")  # no clock: nothing to protect
    assert _Dawdler.collector_on == [False, True]
    assert gc.isenabled()


# --- a real match -----------------------------------------------------------------------


def _busier_than_its_cores() -> bool:
    """The promise is for an idle machine (issue 30): on one that runs more
    than it has cores, a process waits for a core for tens of ms at any
    moment (``greedy``, which answers in 1 ms, once took 56 ms at load 12 on
    2 cores), which no reserve foresees."""
    return os.getloadavg()[0] > (os.cpu_count() or 1)


def test_mcts_keeps_a_50_ms_movetime_in_a_real_match(tmp_path):
    """specs/protocol.md §Python SDK: ``mcts`` (the engine that uses all its
    time) played by ``arbiter match`` at ``st=0.05`` answers every move in
    time: no game is lost on time, and every move the arbiter recorded was
    within the 50 ms."""
    if _busier_than_its_cores():
        pytest.skip(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: not an idle machine")
    db = tmp_path / "t.db"
    run = arbiter("match", "talisman", "mcts", "greedy", "--tc", "st=0.05", "--games", "2",
                  "--openings", ROOT / "examples" / "openings-talisman.txt", "--db", db, "--plain")
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(db) as conn:
        games = conn.execute("select termination, detail, move_data from games").fetchall()
    assert len(games) == 2
    for termination, detail, move_data in games:
        assert termination != "time-forfeit", detail
        assert all(ply["time_ms"] <= 50 for ply in json.loads(move_data)), detail
