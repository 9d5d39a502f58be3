"""The SDK keeps its time from a game's first move (specs/protocol.md §Python SDK).

``uginewgame`` measures the machine into the overhead meter and freezes what
the game's selection built.  Whether the engines keep their time in real
matches is a figure of the machine, measured in bench/ (``bench/engines.py
--overshoot``, bench/README.md), not asserted here.
"""

from __future__ import annotations

import gc
import io

import pytest

from arbiter import sdk
from protocol import messages as m
from sample_engines.random import RandomEngine


@pytest.fixture
def runner():
    yield sdk.EngineRunner(RandomEngine("talisman"), stdin=0, stdout=io.StringIO())
    gc.unfreeze()  # what the runner froze belongs to this test process, not to the next test


def test_a_new_game_measures_the_machine_for_its_first_moves(runner):
    """Before any search of the game was measured, the reserve already holds
    the machine's scheduling delay (a stall: counted twice), and the first
    budget keeps it back."""
    assert sdk.scheduling_delay_ms(naps=2) >= 0
    assert runner.overhead.reserve_ms() == 0
    runner.handle("uginewgame")
    measured = runner.overhead.reserve_ms()
    assert measured > 0  # each 1 ms nap lasts at least its 1 ms and then some
    runner.handle("position startpos")
    runner.handle("go movetime 200")
    runner.wait_search()
    assert runner.last_limits is not None
    assert runner.last_limits.budget == pytest.approx(
        sdk.time_budget_ms(m.Go(movetime=200), True, measured) / 1000)


def test_a_new_game_freezes_what_the_game_selection_built(runner):
    """The referee's tables of the game ``setoption`` selects are built after
    start-up; ``uginewgame`` freezes them out of the collection that follows
    each timed answer."""
    runner.handle(f"setoption name {m.GAME_OPTION} value morris")
    frozen_before = gc.get_freeze_count()
    runner.handle("uginewgame")
    assert gc.get_freeze_count() > frozen_before
    assert gc.isenabled()
