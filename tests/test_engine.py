"""Engine processes (arbiter/engine.py): start, handshake, options, shutdown.

Real subprocesses from tests/bad_engines/.  Rules: specs/match.md §Engine
processes and §Engine errors."""

from __future__ import annotations

import os
import re
import sys

import pytest
import trio
from bad_engines.harness import FAST, config, group_alive, pid_alive

from arbiter.engine import (
    Engine,
    EngineConfig,
    EngineFaultError,
    EngineStartError,
    EngineTimeouts,
    open_engine,
)
from protocol.messages import Go, SetPosition


async def test_handshake_and_clean_shutdown():
    async with open_engine(config("instant.py", name=None), timeouts=FAST) as engine:
        pid = engine.pid
        assert engine.id_name == "bad" and engine.name == "bad"  # no name given: its id name
        assert engine.author == "the arbiter tests"
        assert set(engine.options) == {"UGI_Game", "Depth", "Fast"}
        assert engine.healthy
        await engine.new_game("morris")
        await engine.ping()
        assert group_alive(pid) == [pid]
    assert not pid_alive(pid) and group_alive(pid) == []


async def test_configured_name_wins_over_id_name():
    async with open_engine(config("instant.py", name="mine"), timeouts=FAST) as engine:
        assert engine.name == "mine" and engine.id_name == "bad"


async def test_exit_before_ugiok_is_a_start_error():
    with pytest.raises(EngineStartError) as info:
        async with open_engine(config("exit_before_ugiok.py"), timeouts=FAST):
            pytest.fail("the handshake cannot succeed")
    message = str(info.value)
    assert "exit_before_ugiok" in message and "exited (status 1)" in message
    assert "during the handshake" in message


async def test_silent_engine_times_out_and_is_killed(tmp_path):
    timeouts = EngineTimeouts(handshake=0.5, quit_grace=0.2, term_grace=0.2)
    with pytest.raises(EngineStartError, match=r"no ugiok within 0.5 s of ugi"):
        async with open_engine(config("silent.py"), timeouts=timeouts, log_dir=str(tmp_path)):
            pass
    (log,) = tmp_path.iterdir()
    pid = int(re.search(r"-(\d+)\.log$", log.name).group(1))
    assert group_alive(pid) == [] and not pid_alive(pid)
    assert "SIGTERM" in log.read_text()  # it ignored quit and the end of its input


async def test_missing_program_and_directory():
    with pytest.raises(EngineStartError, match=r"cannot start 'no-such-engine-xyz'.*No such file"):
        async with open_engine(EngineConfig(cmd="no-such-engine-xyz")):
            pass
    with pytest.raises(EngineStartError, match=r"working directory '/no/such/dir' does not exist"):
        async with open_engine(EngineConfig(cmd="true", dir="/no/such/dir")):
            pass
    with pytest.raises(EngineStartError, match=r"bad command"):
        async with open_engine(EngineConfig(cmd="'unbalanced")):
            pass


async def test_options_are_checked_before_any_is_sent(tmp_path):
    """One good option and one unknown: nothing is sent, the error names the bad one."""
    cfg = config("instant.py", options={"Depth": "5", "Hash": "64"})
    with pytest.raises(EngineStartError, match=r"has no option 'Hash' \(it declares: UGI_Game, Depth, Fast\)"):
        async with open_engine(cfg, timeouts=FAST, log_dir=str(tmp_path)):
            pass
    (log,) = tmp_path.iterdir()
    assert "setoption" not in log.read_text()


@pytest.mark.parametrize("options, words", [
    ({"Depth": "10"}, "option 'Depth': value 10 outside [1, 9]"),
    ({"Depth": "deep"}, "is not an integer"),
    ({"Fast": "yes"}, "must be true or false"),
    ({"UGI_Game": "chess"}, "'chess' is not one of troll, atoll, morris, talisman"),
])
async def test_bad_option_values(options, words):
    with pytest.raises(EngineStartError) as info:
        async with open_engine(config("instant.py", options=options), timeouts=FAST):
            pass
    assert words in str(info.value)


async def test_good_options_are_sent(tmp_path):
    cfg = config("instant.py", options={"depth": "7", "Fast": "true"})  # names are case-insensitive
    async with open_engine(cfg, timeouts=FAST, log_dir=str(tmp_path)):
        pass
    text = next(tmp_path.iterdir()).read_text()
    assert "> setoption name Depth value 7\n" in text
    assert "> setoption name Fast value true\n" in text


async def test_game_selection():
    cfg = config("instant.py", env={"BAD_ENGINE_GAMES": "troll atoll"})
    async with open_engine(cfg, timeouts=FAST) as engine:
        await engine.new_game("atoll")
        with pytest.raises(EngineStartError, match=r"does not play morris \(its UGI_Game option lists: troll, atoll\)"):
            await engine.new_game("morris")
    # an engine without the option plays whatever it is given
    async with open_engine(config("replay.py"), timeouts=FAST) as engine:
        await engine.new_game("talisman")


async def test_ignores_quit_and_sigterm_then_sigkill(tmp_path):
    async with open_engine(config("ignore_quit.py"), timeouts=FAST, log_dir=str(tmp_path)) as engine:
        pid = engine.pid
    assert group_alive(pid) == []
    text = next(tmp_path.iterdir()).read_text()
    assert "SIGTERM to the group" in text and "SIGKILL" in text
    assert text.rstrip().endswith("ended: killed by SIGKILL")


async def test_child_that_outlives_the_engine_is_killed(tmp_path):
    pidfile = tmp_path / "child.pid"
    async with open_engine(config("spawn_child.py", str(pidfile)), timeouts=FAST) as engine:
        pid = engine.pid
        child = int(pidfile.read_text())
        assert pid_alive(child) and child in group_alive(pid)
    assert not pid_alive(child)
    assert group_alive(pid) == []


async def test_stderr_is_drained(tmp_path):
    """2 MB of stderr before ugiok: a full pipe would hang the handshake."""
    async with open_engine(config("stderr_flood.py"), timeouts=FAST, log_dir=str(tmp_path)) as engine:
        await engine.new_game("troll")
        await engine.go(SetPosition(), Go(movetime=1000))
        reply = await engine.wait_bestmove()
        assert reply.move
    text = next(tmp_path.iterdir()).read_text()
    assert "! warming up" in text and "! searching" in text


async def test_io_log_has_monotonic_timestamps(tmp_path):
    async with open_engine(config("instant.py"), timeouts=FAST, log_dir=str(tmp_path)) as engine:
        await engine.new_game("troll")
    (log,) = tmp_path.iterdir()
    assert log.name.startswith("instant-")
    lines = log.read_text().splitlines()
    stamps = [float(line.split()[0]) for line in lines]
    assert stamps == sorted(stamps)
    tags = [line.split()[1] for line in lines]
    assert set(tags) <= {">", "<", "!", "#"}
    body = [line.split(maxsplit=1)[1] for line in lines]
    assert "> ugi" in body and "< ugiok" in body and "> uginewgame" in body
    assert "> isready" in body and "< readyok" in body and "> quit" in body


async def test_cancellation_mid_search_leaves_nothing(tmp_path):
    """The whole run is cancelled while an engine searches: it is still ended."""
    with trio.move_on_after(0.5) as scope:
        async with open_engine(config("ignore_stop.py"), timeouts=FAST) as engine:
            pid = engine.pid
            await engine.new_game("troll")
            await engine.go(SetPosition(), Go(infinite=True))
            await engine.wait_bestmove()  # never comes
    assert scope.cancelled_caught
    assert group_alive(pid) == []


async def test_keyboard_interrupt_propagates_unwrapped_and_cleans_up():
    """Ctrl-C inside the block: the KeyboardInterrupt itself comes out (not an
    exception group) and the engine is gone."""
    with pytest.raises(KeyboardInterrupt):
        async with open_engine(config("instant.py"), timeouts=FAST) as engine:
            pid = engine.pid
            raise KeyboardInterrupt
    assert group_alive(pid) == []


async def test_crash_is_reported_to_a_waiter():
    async with open_engine(config("crash.py"), timeouts=FAST) as engine:
        await engine.new_game("troll")
        for _ in range(2):
            await engine.go(SetPosition(), Go(movetime=1000))
            await engine.wait_bestmove()
        await engine.go(SetPosition(), Go(movetime=1000))
        with pytest.raises(EngineFaultError, match=r"exited \(status 3\)"):
            await engine.wait_bestmove()
        assert engine.fault.kind == "crash" and not engine.healthy


async def test_finish_search_recovers_an_engine_for_reuse():
    async with open_engine(config("instant.py"), timeouts=FAST) as engine:
        await engine.new_game("troll")
        await engine.go(SetPosition(), Go(infinite=True))  # instant answers at once anyway
        assert engine.searching and not engine.healthy
        assert await engine.finish_search()
        assert engine.healthy
    async with open_engine(config("ignore_stop.py"), timeouts=FAST) as engine:
        await engine.new_game("troll")
        await engine.go(SetPosition(), Go(infinite=True))
        assert not await engine.finish_search()
        assert engine.fault.kind == "stall" and not engine.healthy


async def _read_until(stream, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = await stream.receive_some(65536)
        assert chunk, f"end of output before {marker!r}: {data!r}"
        data += chunk
    return data


async def test_spawn_without_reading_stdout_leaves_the_conversation_to_the_caller(tmp_path):
    """The public process API (what arbiter/check_probe.py uses): spawn with
    read_stdout=False, talk over ``process``'s pipes, add to the I/O log; an
    exit is reported by exit_status()/wait_exit(), not turned into a fault."""
    engine = Engine(config("crash.py"), FAST, str(tmp_path))
    async with trio.open_nursery() as nursery:
        await engine.spawn(nursery, read_stdout=False)
        assert engine.process is not None and engine.process.pid == engine.pid
        assert engine.started_at <= trio.current_time()
        assert engine.exit_status() is None
        engine.io_log.write("#", "the caller's own event")
        stdin, stdout = engine.process.stdin, engine.process.stdout
        await stdin.send_all(b"ugi\n")
        assert b"ugiok" in await _read_until(stdout, b"ugiok")
        with pytest.raises(RuntimeError, match="read by the caller"):
            await engine.wait_bestmove()
        for _ in range(3):  # crash.py dies (status 3) on its third go
            await stdin.send_all(b"position startpos\ngo movetime 1000\n")
        assert await engine.wait_exit(10) == "status 3"
        assert engine.exit_status() == "status 3"
        assert engine.fault is None  # not the engine's business: the caller reads
        await engine.aclose()
        nursery.cancel_scope.cancel()
    assert group_alive(engine.pid) == []
    text = next(tmp_path.iterdir()).read_text()
    assert "# the caller's own event" in text and "ended: status 3" in text


async def test_aclose_with_a_short_grace(tmp_path):
    """``aclose(grace=...)`` caps the quit and term graces for an engine known
    to be broken (specs/check.md); the configured timeouts are untouched."""
    timeouts = EngineTimeouts(quit_grace=5, term_grace=5)
    async with open_engine(config("ignore_quit.py"), timeouts=timeouts, log_dir=str(tmp_path)) as engine:
        # after the handshake: it ignores SIGTERM by now
        await engine.aclose(grace=0.1)
        assert engine.exit_status() is not None
    assert engine.timeouts == timeouts
    assert group_alive(engine.pid) == []
    text = next(tmp_path.iterdir()).read_text()
    assert "no exit 0.1 s after quit: SIGTERM to the group" in text
    assert "no exit 0.1 s after SIGTERM: SIGKILL" in text


def test_harness_detects_live_processes():
    """The leftover-process check itself can fail: it sees this test process."""
    assert pid_alive(os.getpid())
    assert os.getpid() in group_alive(os.getpgid(0))
    assert sys.executable
