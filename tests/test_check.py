"""The conformance checker (``arbiter check``, specs/check.md) against real engines.

* every sample engine passes every check, for every game (specs/check.md §The checks);
* each misbehaving engine (``tests/bad_engines/`` from the match tests, and
  ``tests/check_engines/`` for what only the checker looks at) fails exactly
  the checks it should, with a message that says what happened;
* the checker never hangs (each run is under a deadline here, and hung
  engines cost it only its own deadlines) and leaves no process behind;
* the stored positions are what they claim to be (specs/check.md §Positions).

Deadlines: the healthy engines get a margin of seconds on every timed search,
so that a loaded machine cannot make them late; the misbehaving ones get short
stop/quit/ready timeouts, since their verdicts do not depend on speed (a hung
engine never answers, however long the wait).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from importlib import resources

import pytest
import trio
from bad_engines.harness import processes_with
from typer.testing import CliRunner

from arbiter.check import CHECKS, CheckReport, CheckSettings, Status, checks_handshake, run_checks, runner
from arbiter.check.features import FEATURES, QUICK_FEATURES
from arbiter.check.positions import (
    DATA_FILE,
    PositionDataError,
    dumps,
    final_positions,
    main,
    parse,
    positions,
    regenerate,
)
from arbiter.check.probe import MAX_RECEIVED
from arbiter.cli import app
from arbiter.engine import EngineConfig
from arbiter.games import GAME_NAMES, get_game
from arbiter.procs import live_group_members as group_alive
from protocol.limits import MAX_LINE_BYTES

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "bad_engines")
CHECKERS = os.path.join(HERE, "check_engines")

#: healthy engines: generous deadlines (verdicts must not depend on machine load)
HEALTHY = CheckSettings(quick=True, margin_ms=3000, movetime_ms=50, quiet_wait=0.3, quit_grace=5,
                        infinite_wait=0.3)
#: misbehaving engines: short waits where they hang, generous margins where they answer
SHORT = CheckSettings(quick=True, margin_ms=2000, movetime_ms=50, quiet_wait=1.0,
                      infinite_wait=0.3, handshake_timeout=3, ready_timeout=1.5,
                      stop_timeout=0.5, quit_grace=3, stall_timeout=3)

#: small searches for the sample engines (options through the engine spec)
SAMPLE_OPTIONS = {
    "random": {},
    "greedy": {},
    "mcts": {"Iterations": "20", "PlayoutPlies": "10"},
}


def sample(engine: str) -> EngineConfig:
    return EngineConfig(cmd=f"{sys.executable} -m sample_engines.{engine}",
                        options=dict(SAMPLE_OPTIONS[engine]))


def script(path: str, *args: str, **env: str) -> EngineConfig:
    return EngineConfig(cmd=f"{sys.executable} {path}", args=list(args), env=dict(env))


def describe(report: CheckReport) -> str:
    """Every result that is not PASS, with its problems and transcript (assert messages)."""
    lines = [f"{report.engine} on {report.game}:"]
    for result in report.results:
        if result.status is not Status.PASS:
            lines.append(f"  {result.status} {result.name}: {result.happened}")
            lines.extend(f"      {line}" for line in result.transcript[:20])
    return "\n".join(lines)


def statuses(report: CheckReport, status: Status) -> set[str]:
    return {r.name for r in report.results if r.status is status}


def cli(*args: str):
    """``arbiter check ARGS`` in-process (the engines it checks are real processes)."""
    result = CliRunner().invoke(app, ["check", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def assert_nothing_left(report: CheckReport) -> None:
    assert report.pids, "no engine process was started"
    for pid in report.pids:
        assert group_alive(pid) == [], f"engine process group {pid} left running"


# --- the positions -------------------------------------------------------------------


@pytest.mark.parametrize("game", GAME_NAMES)
def test_positions_show_their_features(game):
    """Loading re-verifies every entry with the referee (specs/check.md §Positions);
    here: every special feature is present, the quick set has each quick
    feature, both sides are to move somewhere, and finished games exist."""
    entries = positions(game)
    features = {e.feature for e in entries}
    assert features == set(FEATURES[game]), f"missing: {set(FEATURES[game]) - features}"
    quick = positions(game, quick=True)
    assert {e.feature for e in quick} == set(QUICK_FEATURES[game])
    the_game = get_game(game)
    movers = {e.position().to_move for e in quick}
    assert movers == {the_game.first, the_game.first.other}
    finals = final_positions(game)
    assert len({f.result for f in finals}) >= 2
    for final in finals:
        outcome = final.position().outcome()
        assert outcome is not None and outcome.result == final.result


def test_special_positions_are_special():
    """Spot checks of what the features promise (specs/check.md §Positions)."""
    troll = {e.feature: e for e in positions("troll")}
    assert troll["pass"].position().legal_moves() == ["pass"]
    assert troll["after-pass"].moves[-1] == "pass"
    atoll = {e.feature: e for e in positions("atoll")}
    assert "swap" in atoll["swap-offer"].position().legal_moves()
    assert atoll["after-swap"].moves[1] == "swap"
    talisman = {e.feature: e for e in positions("talisman")}
    assert talisman["placement-p1"].position().ply < 12
    morris = {e.feature: e for e in positions("morris")}
    assert any("x" in m for m in morris["placing-mill"].position().legal_moves())


def stored_text() -> str:
    return resources.files("arbiter.check").joinpath(DATA_FILE).read_text(encoding="utf-8")


def test_positions_file_is_in_the_written_format():
    """The shipped file is exactly what the writer writes for its data (one
    entry per line), so a regeneration's diff shows only changed entries."""
    text = stored_text()
    assert dumps(parse(text)) == text


@pytest.mark.parametrize("change, message", [
    (lambda text: text[:-5], "not JSON"),
    (lambda text: text.replace('"format": 1', '"format": 2'), "not a positions file of format 1"),
    (lambda text: text.replace('"talisman"', '"chess"'), "unknown games ['chess'], missing games ['talisman']"),
    (lambda text: text.replace('{"feature": "pass", "moves"', '{"feature": "pass", "plies"', 1),
     "troll positions, entry 1: not {'feature': text, 'moves': text}"),
    (lambda text: text.replace('{"result": "0-1"', '{"result": "0:1"', 1), "result '0:1' is not one of"),
])
def test_a_malformed_positions_file_is_a_position_data_error(change, message):
    """specs/check.md §Positions: a file not in its format fails as loudly as a stale position."""
    with pytest.raises(PositionDataError, match="positions.json") as caught:
        parse(change(stored_text()))
    assert message in str(caught.value)


def test_regenerate_writes_positions_that_verify(tmp_path, capsys):
    """``python3 -m arbiter.check.positions --regenerate`` (here one game, into
    another file): fresh positions for that game, verified by the referee
    before writing, with every feature; the other games' entries are kept."""
    target = tmp_path / DATA_FILE
    assert main(["--regenerate", "--game", "talisman", "--output", str(target)]) == 0
    written = parse(target.read_text(encoding="utf-8"))
    stored = parse(stored_text())
    assert {name: data for name, data in written.items() if name != "talisman"} == \
        {name: data for name, data in stored.items() if name != "talisman"}
    assert {feature for feature, _ in written["talisman"]["positions"]} == set(FEATURES["talisman"])
    assert len({result for result, _ in written["talisman"]["final"]}) >= 2
    assert regenerate(target, games=["talisman"]) == written  # seeded: the same data again
    assert "talisman: 23 positions" in capsys.readouterr().out  # then the stored file verified


def test_report_order_names_every_check_once():
    """The runner orders the checks of every area; a check missing from ORDER
    (or ORDER naming one no module declares) stops the import."""
    assert [spec.name for spec in CHECKS] == runner.ORDER
    with pytest.raises(RuntimeError, match="ORDER and the check modules disagree"):
        runner._ordered(checks_handshake.CHECKS)


# --- healthy engines ----------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["random", "greedy", "mcts"])
async def test_sample_engine_passes_every_check_for_every_game(engine):
    """specs/check.md: each sample engine, all four games at once, quick suite:
    every check PASSes (the advice ones too), and no process is left."""
    reports: dict[str, CheckReport] = {}

    async def one(game: str) -> None:
        reports[game] = await run_checks(game, sample(engine), HEALTHY)

    with trio.fail_after(240):
        async with trio.open_nursery() as nursery:
            for game in GAME_NAMES:
                nursery.start_soon(one, game)
    for report in reports.values():
        assert report.passed, describe(report)
        assert statuses(report, Status.PASS) == {spec.name for spec in CHECKS}, describe(report)
        assert_nothing_left(report)


def test_cli_check_json_passes_and_lists_every_check(tmp_path):
    """Through the CLI: exit status 0, the JSON report (specs/check.md §Verdicts)."""
    spec = f"cmd={sys.executable} arg=-m arg=sample_engines.random"
    done = cli("atoll", "--engine", spec, "--quick", "--json", "--margin", "3000", "--movetime", "50",
               "--log", str(tmp_path))
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["passed"] is True
    assert report["game"] == "atoll" and report["id_name"] == "Random"
    assert [c["name"] for c in report["checks"]] == [spec.name for spec in CHECKS]
    assert all(c["status"] == "PASS" for c in report["checks"])
    assert report["counts"]["PASS"] == len(CHECKS)
    assert os.listdir(tmp_path), "--log wrote no I/O log"


# --- misbehaving engines ----------------------------------------------------------------------

#: what an engine that floods from its first command after ``ugiok`` on fails:
#: every check that talks to one of its processes (startup.game judges the
#: handshake's lines only), and the whole-run output.flood
FLOODED_AFTER_UGIOK = {"startup.options", "isready.idle", "isready.newgame", "position.startpos",
                       "position.fen", "position.moves", "go.infinite", "quit", "output.flood"}

#: engine -> (config, checks that must FAIL (exactly), a phrase of the first FAIL's message).
#: Advice checks and WARNs are not counted: the _base engines answer no query and
#: write no info (WARN), and answer `go infinite` at once (WARN).
BAD_CASES = {
    # plays the game's first move again on its second search: position.startpos
    # sends the second search of the first process
    "illegal": (script(os.path.join(BAD, "illegal.py")), {"position.startpos"}, "is occupied"),
    # `bestmove` with no move, always: three search checks fail, the rest are
    # skipped, go.infinite (the stop check) still runs
    "garbage": (script(os.path.join(BAD, "garbage.py"), "empty"),
                {"position.startpos", "position.fen", "position.moves", "go.infinite"},
                "malformed bestmove"),
    "silent": (script(os.path.join(BAD, "silent.py")), {"startup.handshake"}, "no ugiok within 3 s"),
    "hang_go": (script(os.path.join(BAD, "hang_go.py")),
                {"position.startpos", "position.fen", "position.moves"}, "no bestmove within"),
    "ignore_stop": (script(os.path.join(BAD, "ignore_stop.py")),
                    {"position.startpos", "position.fen", "position.moves", "go.infinite"},
                    "no bestmove within"),
    "ignore_quit": (script(os.path.join(BAD, "ignore_quit.py")), {"quit"}, "still running 3 s after quit"),
    # 5000 info lines (1.1 MB) before each of its ~80 bestmoves: past the flood
    # limit (200 lines + 1000 a second, specs/check.md §output.flood) for any
    # search under 4.8 s; reading them takes time on a loaded machine, hence
    # the large margin (see SETTINGS).  (The match tests' 20000 lines cost the
    # checker 4x the time for the same verdict.)
    "flood_info": (script(os.path.join(BAD, "flood_info.py"), FLOOD_BLOCKS="5"), {"output.flood"}, "info lines"),
    "double_bestmove": (script(os.path.join(BAD, "double_bestmove.py")), {"output.unasked"},
                        "while not searching"),
    # every process writes `readyok` at start: before ugi in the first one (the
    # checker waits there), after ugi in the restarted ones (nobody asked for it)
    "stray_output": (script(os.path.join(CHECKERS, "stray_output.py")),
                     {"startup.quiet", "output.unasked"}, "'readyok' before ugi"),
    "bad_option": (script(os.path.join(CHECKERS, "bad_option.py")), {"startup.options"},
                   "default 5000 outside [1, 1024]"),
    "no_flush": (script(os.path.join(CHECKERS, "no_flush.py")), {"startup.handshake", "output.flush"},
                 "no ugiok within"),
    "stale_board": (script(os.path.join(CHECKERS, "stale_board.py")), {"repeat"}, "the rounds differ"),
    # stdout without end (`yes`), never reading again: before ugi it ends the
    # start (the checker's cap on lines, or the line-length limit); after a
    # proper handshake every check that talks to a process fails on its flood
    "flood_before_lines": (script(os.path.join(BAD, "flood_output.py"), "before", "lines"),
                           {"startup.quiet", "startup.handshake"},
                           f"flooded the checker with more than {MAX_RECEIVED} lines before ugi"),
    "flood_before_raw": (script(os.path.join(BAD, "flood_output.py"), "before", "raw"),
                         {"startup.quiet", "startup.handshake"},
                         f"wrote a line longer than {MAX_LINE_BYTES} bytes before ugi"),
    "flood_after_lines": (script(os.path.join(BAD, "flood_output.py"), "after", "lines"), FLOODED_AFTER_UGIOK,
                          f"flooded the checker with more than {MAX_RECEIVED} lines"),
    "flood_after_raw": (script(os.path.join(BAD, "flood_output.py"), "after", "raw"), FLOODED_AFTER_UGIOK,
                        f"wrote a line longer than {MAX_LINE_BYTES} bytes"),
}


#: per-engine settings where SHORT would make a verdict depend on the machine's speed:
#: the stray lines (and a flood before ugi: its first megabyte, or its first lines)
#: come once the engine's Python has started, which takes seconds
#: when all the engines below start at once on a loaded machine; flood_info
#: answers `go infinite` after its flood, which a starved engine may finish
#: only after `stop` (seen 0.8 s after it): it never hangs, so long waits cost nothing
SETTINGS = {"flood_info": dataclasses.replace(SHORT, margin_ms=20_000, stop_timeout=20.0),
            "stray_output": dataclasses.replace(SHORT, quiet_wait=5.0),
            "banner": dataclasses.replace(SHORT, quiet_wait=5.0),
            "flood_before_lines": dataclasses.replace(SHORT, quiet_wait=5.0),
            "flood_before_raw": dataclasses.replace(SHORT, quiet_wait=5.0)}


#: the engines of the tests below that are not in BAD_CASES: (game, config)
OTHER_SHORT_CASES = {
    "banner": ("talisman", script(os.path.join(CHECKERS, "stray_output.py"), "banner")),
    "not_the_game": ("atoll", script(os.path.join(BAD, "instant.py"), BAD_ENGINE_GAMES="troll morris")),
}


#: the tests of the module fixture below, kept on one xdist worker under
#: ``--dist loadgroup`` (under ``load`` each worker that gets one of them
#: builds the fixture again)
SHORT_RUNS_GROUP = pytest.mark.xdist_group("check-short-runs")


@pytest.fixture(scope="module")
def short_runs(tmp_path_factory) -> tuple[dict[str, CheckReport], str]:
    """Every run with the SHORT settings, all at once, once for the tests below
    (most of their time is waits for engines that hang, which overlap): the
    reports by case name, and the file where spawn_child writes its child's pid."""
    child_file = str(tmp_path_factory.mktemp("spawn_child") / "child.pid")
    cases = {name: ("troll", config) for name, (config, _, _) in BAD_CASES.items()}
    cases["spawn_child"] = ("troll", script(os.path.join(BAD, "spawn_child.py"), child_file))
    cases.update(OTHER_SHORT_CASES)
    reports: dict[str, CheckReport] = {}

    async def one(name: str, game: str, config: EngineConfig) -> None:
        reports[name] = await run_checks(game, config, SETTINGS.get(name, SHORT))

    async def all_cases() -> None:
        with trio.fail_after(150):  # the checker never hangs
            async with trio.open_nursery() as nursery:
                for name, (game, config) in cases.items():
                    nursery.start_soon(one, name, game, config)

    trio.run(all_cases)
    return reports, child_file


@SHORT_RUNS_GROUP
def test_misbehaving_engines_fail_exactly_their_checks(short_runs):
    """specs/check.md: each engine with one fault fails exactly the checks
    that look at that fault, says so in the first problem, never hangs the
    checker, and leaves no process (nor child) behind."""
    reports, child_file = short_runs
    expected = {name: (failing, phrase) for name, (_, failing, phrase) in BAD_CASES.items()}
    expected["spawn_child"] = ({"quit"}, "left 1 process(es) running")
    for name, (failing, phrase) in expected.items():
        report = reports[name]
        assert statuses(report, Status.FAIL) == failing, f"{name}: " + describe(report)
        first = next(r for r in report.results if r.status is Status.FAIL)
        assert phrase in first.happened, f"{name}: {first.happened}"
        assert first.expected and first.transcript, f"{name}: no expectation or transcript"
        assert not report.passed
        assert_nothing_left(report)
    # the child that ignores SIGTERM/SIGHUP was killed with the engine's group
    with open(child_file) as pid_file:
        child = int(pid_file.read())
    assert not os.path.exists(f"/proc/{child}") or open(f"/proc/{child}/stat").read().split()[2] in "ZX"


@SHORT_RUNS_GROUP
def test_banner_before_ugi_only_warns(short_runs):
    """specs/check.md §startup.quiet: text that is no protocol message is a WARN."""
    report = short_runs[0]["banner"]
    assert report.result("startup.quiet").status is Status.WARN
    assert "Stray 1.0 by nobody" in report.result("startup.quiet").happened
    assert report.passed, describe(report)


@SHORT_RUNS_GROUP
def test_engine_that_does_not_play_the_game_skips_the_game_checks(short_runs):
    """specs/check.md §startup.game: the UGI_Game combo must list the game."""
    report = short_runs[0]["not_the_game"]
    assert statuses(report, Status.FAIL) == {"startup.game"}
    assert "does not list atoll" in report.result("startup.game").happened
    assert report.result("legality").status is Status.SKIP
    assert report.result("quit").status is Status.PASS


def test_cli_reports_a_failure_with_transcript_and_exit_status_1():
    """The human report: table, expected / happened / transcript of each FAIL."""
    spec = f"cmd={sys.executable} arg={os.path.join(BAD, 'illegal.py')}"
    done = cli("morris", "--engine", spec, "--quick", "--margin", "3000", "--ready-timeout", "1")
    assert done.exit_code == 1, done.output
    out = done.stdout
    assert "FAIL position.startpos" in out
    assert "expected:" in out and "happened:" in out and "transcript:" in out
    assert "illegal move" in out and "> position startpos moves" in out
    assert "FAILS 1 mandatory check(s): position.startpos" in out


def test_cli_ctrl_c_stops_the_check_and_its_engine():
    """Ctrl-C during a check: one line on stderr, exit 130, no traceback,
    and the engine (here stuck before `ugiok`) is gone (specs/check.md)."""
    import signal
    import time
    import uuid

    tag = f"arbiter-test-{uuid.uuid4()}"
    spec = f"cmd={sys.executable} arg={os.path.join(BAD, 'silent.py')} env.TAG={tag}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arbiter", "check", "troll", "--engine", spec,
         "--handshake-timeout", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not processes_with(tag) and time.monotonic() < deadline:  # the engine is up
            time.sleep(0.02)
        assert processes_with(tag), "the engine never started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert processes_with(tag) == []


@pytest.mark.parametrize("args, message", [
    (["chess", "--engine", "cmd=x"], "unknown game 'chess'"),
    (["troll", "--engine", "name=x"], "no cmd="),
])
def test_cli_bad_input_is_a_clear_error(args, message):
    done = cli(*args)  # no traceback: cli() asserts that nothing but an exit came out
    assert done.exit_code == 2
    assert message in done.stderr and "Traceback" not in done.stderr
