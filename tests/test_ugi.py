"""An engine written from the cutegames ``ugi.md`` alone passes ``arbiter
check`` and plays games (specs/protocol.md §Arbiter to engine, specs/check.md).

The engine, ``tests/check_engines/ugi_minimal.py``, answers ``ugi`` with
``ugiok`` only and exits (status 3) on any ``go`` that is not one of the five
forms ``ugi.md`` lists: so a check that passes and games that end by the rules
show that the arbiter sends nothing else (no ``movestogo`` to an engine that
did not declare ``UGI_MovesToGo``, all four clock fields in every clock ``go``,
also when the opponent has no clock).
"""

from __future__ import annotations

import json
import os
import sys

import pytest
import trio
from typer.testing import CliRunner

from arbiter.check import CHECKS, CheckSettings, Status, run_checks
from arbiter.cli import app
from arbiter.engine import EngineConfig
from arbiter.games import Termination

HERE = os.path.dirname(os.path.abspath(__file__))
MINIMAL = os.path.join(HERE, "check_engines", "ugi_minimal.py")

#: generous deadlines: the verdicts must not depend on the machine's load
SETTINGS = CheckSettings(quick=True, margin_ms=3000, movetime_ms=50, quiet_wait=0.3, quit_grace=5,
                         infinite_wait=0.3)

#: the rules' endings (a crash, a time forfeit... would mean a go the engine refused)
RULE_ENDINGS = {t.value for t in Termination}


def minimal(game: str) -> EngineConfig:
    return EngineConfig(cmd=f"{sys.executable} {MINIMAL}", args=[game])


@pytest.mark.parametrize("game", ["troll", "morris"])
async def test_minimal_ugi_engine_passes_arbiter_check(game):
    """specs/check.md: no FAIL; the missing ids are a WARN of startup.handshake
    (ugi.md requires only ugiok); go.movestogo is not applicable (not declared);
    every other check PASSes, the advice ones too."""
    with trio.fail_after(240):
        report = await run_checks(game, minimal(game), SETTINGS)
    by_name = {r.name: r for r in report.results}
    assert report.passed, [(r.name, r.status, r.happened) for r in report.results if r.status is not Status.PASS]
    handshake = by_name["startup.handshake"]
    assert handshake.status is Status.WARN
    assert "no `id name`" in handshake.happened and "no `id author`" in handshake.happened
    assert by_name["go.movestogo"].status is Status.PASS
    assert "not applicable" in by_name["go.movestogo"].happened
    assert "UGI_MovesToGo" in by_name["go.movestogo"].happened
    others = {spec.name for spec in CHECKS} - {"startup.handshake", "info.parse"}
    assert {name for name in others if by_name[name].status is not Status.PASS} == set()
    assert by_name["info.parse"].status is Status.WARN  # it writes no info: records have no score


def _play(*args: str) -> dict:
    result = CliRunner().invoke(app, ["play", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("tc, second", [
    ("40/5+0.05", ""),  # moves/time: no movestogo for an engine that did not declare it
    ("5+0.05", " tc=st=0.05"),  # the opponent has no clock: still all four clock fields
    ("5", ""),  # no increment: p1inc 0 p2inc 0
])
def test_minimal_ugi_engine_plays_a_game(tc, second):
    """specs/protocol.md §Arbiter to engine: the game ends by the rules (the
    engine would exit on a go form ugi.md does not list: a crash), and the
    record names the engine by its spec, with no author (no id lines)."""
    spec = f"cmd={sys.executable} arg={MINIMAL} arg=troll name=minimal"
    record = _play("troll", "--engine", spec, "--engine", f"random option.Seed=1{second}", "--tc", tc)
    assert record["termination"] in RULE_ENDINGS, record["termination_detail"]
    assert record["white"] == "minimal"
    assert record["white_id"] == {"name": None, "author": None}
    assert len(record["moves"]) > 10
