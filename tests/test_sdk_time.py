"""The SDK keeps its time from a game's first move (specs/protocol.md §Python SDK).

``uginewgame`` measures the machine into the overhead meter and freezes what
the game's selection built; a real match of ``mcts`` at ``st=0.05`` ends
without a time loss.  Nothing here asserts how fast anything is: the match
asserts that the engine kept its budget, on an idle machine.
"""

from __future__ import annotations

import gc
import io
import json
import os
import sqlite3

import pytest
from cli import ROOT, arbiter

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


def _busier_than_its_cores() -> bool:
    """The promise is for an idle machine (issue 30): on one that runs more
    than it has cores, a process waits for a core for tens of ms at any
    moment (``greedy``, which answers in 1 ms, once took 56 ms at load 12 on
    2 cores), which no reserve foresees."""
    return os.getloadavg()[0] > (os.cpu_count() or 1)


def test_mcts_keeps_a_50_ms_movetime_in_a_real_match(tmp_path):
    """``mcts`` (the sample engine that spends all its time) against
    ``greedy`` through ``arbiter match`` at ``st=0.05``: no game is lost on
    time and every move the arbiter recorded was within the 50 ms."""
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
