"""Engine processes (arbiter/engine/): start, handshake, options, shutdown.

Real subprocesses from tests/bad_engines/.  Rules: specs/match.md §Engine
processes and §Engine errors."""

from __future__ import annotations

import os
import re
import sys
from collections import deque

import pytest
import trio
from bad_engines.harness import FAST, config, group_alive, pid_alive

from arbiter.engine import (
    Engine,
    EngineConfig,
    EngineFault,
    EngineFaultError,
    EngineProcess,
    EngineStartError,
    EngineTimeouts,
    FaultKind,
    Reply,
    merge_info,
    open_engine,
)
from arbiter.engine.conversation import CATCH_UP_READS
from arbiter.engine.info import SearchInfo, cut_line
from arbiter.engine.process import STDERR_TAIL_CHARS, STDERR_TAIL_LINES
from arbiter.engine.transport import End, Received, Transport, TransportClosed
from arbiter.games import Termination
from arbiter.match import MatchTermination, play_game
from arbiter.record import ReportedInfo, Score
from protocol.limits import MAX_INFO_KEPT, MAX_INFO_LINE_KEPT, MAX_INFO_LINES_KEPT, MAX_LINE_BYTES, MAX_PV_KEPT
from protocol.messages import Go, SetPosition, Ugi
from protocol.search import SearchLimits


def started(engine: Engine | EngineProcess) -> int:
    """The pid of an engine that has been started."""
    assert engine.pid is not None
    return engine.pid


def fault_of(engine: Engine) -> EngineFault:
    """The fault of an engine that has faulted."""
    assert engine.fault is not None
    return engine.fault


def pipes(engine: EngineProcess) -> tuple[trio.abc.SendStream, trio.abc.ReceiveStream]:
    """The stdin and stdout of a spawned process."""
    process = engine.process
    assert process is not None and process.stdin is not None and process.stdout is not None
    return process.stdin, process.stdout


async def test_handshake_and_clean_shutdown():
    async with open_engine(config("instant.py", name=None), timeouts=FAST) as engine:
        pid = started(engine)
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
    found = re.search(r"-(\d+)\.log$", log.name)
    assert found is not None
    pid = int(found.group(1))
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


async def test_a_search_already_stopped_is_not_stopped_twice(autojump_clock):
    """specs/match.md §One game (4): after a game that ended while the
    engine searched, ``finish_search`` stops the search and drains its
    bestmove; a search the match already told to ``stop`` (a stall) is not
    told again, and its bestmove is waited for only until that stop's
    timeout ends (a stalled engine costs one stop timeout, not two).  The
    mock refuses any line not expected: a second ``stop`` fails the test."""
    limits = SearchLimits(time_ms=900, opponent_time_ms=900)
    engine, transport = await mock_engine()
    transport.expect("position startpos")
    transport.expect("go p1time 900 p2time 900 p1inc 0 p2inc 0")
    transport.expect("stop")
    await engine.go(b"position startpos\n", limits, mover_is_p1=True)
    await engine.stop()
    stopped = trio.current_time()
    await trio.sleep(FAST.stop)  # the match's grace, unanswered: a stall
    assert not await engine.finish_search()
    assert trio.current_time() == stopped + FAST.stop  # no second wait
    assert fault_of(engine).kind == "stall"
    transport.assert_done()

    engine, transport = await mock_engine()  # stopped, answered within that stop's timeout
    transport.expect("position startpos")
    transport.expect("go p1time 900 p2time 900 p1inc 0 p2inc 0")
    transport.expect("stop")
    await engine.go(b"position startpos\n", limits, mover_is_p1=True)
    await engine.stop()
    await trio.sleep(FAST.stop / 2)
    transport.write("bestmove a1")
    assert await engine.finish_search() and engine.healthy

    transport.expect("position startpos")  # a new search after that stop: stopped afresh
    transport.expect("go p1time 900 p2time 900 p1inc 0 p2inc 0")
    transport.expect("stop", "bestmove b1")
    await engine.go(b"position startpos\n", limits, mover_is_p1=True)
    await trio.sleep(FAST.stop * 4)  # longer than the last stop's timeout
    assert await engine.finish_search() and engine.healthy
    transport.assert_done()


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
        pid = started(engine)
    assert group_alive(pid) == []
    text = next(tmp_path.iterdir()).read_text()
    assert "SIGTERM to the group" in text and "SIGKILL" in text
    assert text.rstrip().endswith("ended: killed by SIGKILL")


async def test_child_that_outlives_the_engine_is_killed(tmp_path):
    pidfile = tmp_path / "child.pid"
    async with open_engine(config("spawn_child.py", str(pidfile)), timeouts=FAST) as engine:
        pid = started(engine)
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
    with trio.CancelScope() as scope:
        async with open_engine(config("ignore_stop.py"), timeouts=FAST) as engine:
            pid = started(engine)
            await engine.new_game("troll")
            await engine.go(SetPosition(), Go(infinite=True))
            scope.deadline = trio.current_time() + 0.5  # from here: the start-up may take long
            await engine.wait_bestmove()  # never comes
    assert scope.cancelled_caught
    assert group_alive(pid) == []


async def test_keyboard_interrupt_propagates_unwrapped_and_cleans_up():
    """Ctrl-C inside the block: the KeyboardInterrupt itself comes out (not an
    exception group) and the engine is gone."""
    with pytest.raises(KeyboardInterrupt):
        async with open_engine(config("instant.py"), timeouts=FAST) as engine:
            pid = started(engine)
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
        assert fault_of(engine).kind == "crash" and not engine.healthy


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
        assert fault_of(engine).kind == "stall" and not engine.healthy


async def _read_until(stream, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = await stream.receive_some(65536)
        assert chunk, f"end of output before {marker!r}: {data!r}"
        data += chunk
    return data


async def test_engine_process_leaves_the_conversation_to_the_caller(tmp_path):
    """The process API (what arbiter/check_probe.py uses): spawn, talk over
    ``process``'s pipes, add to the I/O log; nothing of stdout is read by the
    process side (the caller reads every line), and an exit is reported by
    exit_status()/wait_exit()."""
    engine = EngineProcess(config("crash.py"), FAST, str(tmp_path))
    async with trio.open_nursery() as nursery:
        await engine.spawn(nursery)
        stdin, stdout = pipes(engine)
        assert engine.process is not None and engine.process.pid == engine.pid
        assert engine.started_at <= trio.current_time()
        assert engine.exit_status() is None and engine.running
        assert engine.io_log is not None
        engine.io_log.write("#", "the caller's own event")
        await stdin.send_all(b"ugi\n")
        assert b"ugiok" in await _read_until(stdout, b"ugiok")
        for _ in range(3):  # crash.py dies (status 3) on its third go
            await stdin.send_all(b"position startpos\ngo movetime 1000\n")
        assert await engine.wait_exit(10) == "status 3"
        assert engine.exit_status() == "status 3" and not engine.running
        # its two bestmove lines are still there for the caller to read
        output = b""
        while chunk := await stdout.receive_some(65536):
            output += chunk
        assert output.count(b"bestmove") == 2
        await engine.aclose()
        nursery.cancel_scope.cancel()
    assert group_alive(started(engine)) == []
    text = next(tmp_path.iterdir()).read_text()
    assert "# the caller's own event" in text and "ended: status 3" in text


async def test_aclose_with_a_short_grace(tmp_path):
    """``aclose(grace=...)`` caps the quit and term graces for an engine known
    to be broken (specs/check.md); the configured timeouts are untouched."""
    timeouts = EngineTimeouts(quit_grace=5, term_grace=5)
    engine = EngineProcess(config("ignore_quit.py"), timeouts, str(tmp_path))
    async with trio.open_nursery() as nursery:
        await engine.spawn(nursery)
        stdin, stdout = pipes(engine)
        await stdin.send_all(b"ugi\n")
        await _read_until(stdout, b"ugiok")  # it ignores SIGTERM by now
        await engine.aclose(grace=0.1)
        assert engine.exit_status() is not None
        await engine.aclose()  # a second time: nothing more to do
        nursery.cancel_scope.cancel()
    assert engine.timeouts == timeouts
    assert group_alive(started(engine)) == []
    text = next(tmp_path.iterdir()).read_text()
    assert "> quit" in text
    assert "no exit 0.1 s after quit: SIGTERM to the group" in text
    assert "no exit 0.1 s after SIGTERM: SIGKILL" in text


def test_harness_detects_live_processes():
    """The leftover-process check itself can fail: it sees this test process."""
    assert pid_alive(os.getpid())
    assert os.getpid() in group_alive(os.getpgid(0))
    assert sys.executable


# --- the conversation in-process, over a transport written here --------------------------


class MockTransport(Transport):
    """The engine's end of a conversation, scripted by the test (in the manner
    of python-chess's MockTransport): every line the arbiter sends must be
    the next one :meth:`expect`-ed, and the answer given with it is queued
    for reading as one chunk.  :meth:`write` queues output unasked."""

    alive = True  # (a plain attribute: the tests set it)

    def __init__(self):
        self.expected: deque[tuple[str, tuple[str, ...]]] = deque()
        self.sent: list[str] = []
        self.notes: list[str] = []
        self.alive = True
        self.input_closed = False
        self._out, self._in = trio.open_memory_channel(float("inf"))

    def expect(self, line: str, *answer: str) -> None:
        self.expected.append((line, answer))

    def write(self, *lines: str, end: End | None = None) -> None:
        self._out.send_nowait((list(lines), trio.current_time(), end))

    def assert_done(self) -> None:
        assert not self.expected, f"never sent: {[line for line, _ in self.expected]}"

    async def send(self, data: bytes) -> None:
        if self.input_closed:
            raise TransportClosed("closed")
        for line in data.decode().splitlines():
            self.sent.append(line)
            assert self.expected, f"unexpected {line!r}"
            wanted, answer = self.expected.popleft()
            assert line == wanted
            if answer:
                self.write(*answer)

    async def receive(self) -> Received:
        return await self._in.receive()

    def receive_nowait(self) -> Received | None:
        try:
            return self._in.receive_nowait()
        except trio.WouldBlock:
            return None

    async def end_detail(self) -> str:
        return "closed the connection"

    def note(self, text: str) -> None:
        self.notes.append(text)


HANDSHAKE = ("id name mock", "id author the tests", "option name Hash type spin default 16 min 1 max 64",
             "option name UGI_Game type combo default troll var troll var atoll", "ugiok")


async def mock_engine(options: dict | None = None) -> tuple[Engine, MockTransport]:
    """An engine after its handshake and a new game of troll, over a MockTransport."""
    transport = MockTransport()
    transport.expect("ugi", *HANDSHAKE)
    for name, value in (options or {}).items():
        transport.expect(f"setoption name {name} value {value}")
    engine = Engine(EngineConfig(cmd="mock", options=options or {}), FAST, transport)
    await engine.handshake()
    transport.expect("setoption name UGI_Game value troll")
    transport.expect("uginewgame")
    transport.expect("isready", "readyok")
    await engine.new_game("troll")
    transport.assert_done()
    return engine, transport


async def test_conversation_handshake_and_a_search():
    engine, transport = await mock_engine({"Hash": "32"})
    assert (engine.name, engine.id_name, engine.author) == ("mock", "mock", "the tests")
    assert list(engine.options) == ["Hash", "UGI_Game"] and engine.healthy
    transport.expect("position startpos moves a1")
    transport.expect("go p1time 1000 p2time 900 p1inc 10 p2inc 0", "info depth 1 score cp 5 pv b1",
                     "info depth 2 nodes 40 pv b1 c1", "bestmove b1 ponder c1")
    started = await engine.go(b"position startpos moves a1\n",
                              SearchLimits(time_ms=900, opponent_time_ms=1000, opponent_inc_ms=10),
                              mover_is_p1=False)
    assert engine.searching and not engine.healthy
    reply = await engine.wait_bestmove()
    assert (reply.move, reply.ponder) == ("b1", "c1") and started <= trio.current_time()
    assert reply.info == ReportedInfo(depth=2, nodes=40, pv=("b1", "c1"), score=Score.parse("cp 5"))
    assert engine.healthy and engine.goodbye() == b"quit\n" and engine.goodbye() is None
    transport.assert_done()


@pytest.mark.parametrize("options, words", [
    ({"Threads": "2"}, "has no option 'Threads' (it declares: Hash, UGI_Game)"),
    ({"Hash": "65"}, "option 'Hash': value 65 outside [1, 64]"),
])
async def test_conversation_refuses_an_option_before_sending_any(options, words):
    transport = MockTransport()
    transport.expect("ugi", *HANDSHAKE)
    engine = Engine(EngineConfig(cmd="mock", options={"Hash": "8", **options}), FAST, transport)
    with pytest.raises(EngineStartError) as info:
        await engine.handshake()
    assert words in str(info.value)
    assert transport.sent == ["ugi"]


async def test_conversation_fault_mid_search_wakes_the_match():
    """The stream ends while the engine searches: a crash, seen by the waiter
    and by on_fault, with the time it was read."""
    engine, transport = await mock_engine()
    woken: list[Engine] = []
    engine.on_fault = woken.append
    transport.expect("position startpos")
    transport.expect("go movetime 100", "info depth 1 pv a1")
    await engine.go(SetPosition(), Go(movetime=100))
    transport.write("info depth 2", end=End.CLOSED)
    with pytest.raises(EngineFaultError, match="closed the connection"):
        await engine.wait_bestmove()
    fault = fault_of(engine)
    assert (fault.kind, fault.searching, fault.detail) == (FaultKind.CRASH, True, "closed the connection")
    assert fault.kind == "crash" and woken == [engine] and not engine.healthy
    assert transport.notes == ["fault: crash: closed the connection"]
    with pytest.raises(EngineFaultError):  # and every later command
        await engine.stop()


async def test_conversation_protocol_error_mid_search():
    engine, transport = await mock_engine()
    transport.expect("position startpos")
    transport.expect("go depth 3", "info depth 1", "ugiok")
    await engine.go(SetPosition(), Go(depth=3))
    with pytest.raises(EngineFaultError, match="ugiok after the handshake ended"):
        await engine.wait_bestmove()
    assert (fault_of(engine).kind, fault_of(engine).command, fault_of(engine).searching) == (
        FaultKind.PROTOCOL_ERROR, "ugiok", True)


async def test_conversation_lost_while_idle_is_a_crash_at_once():
    """The other end goes while nobody reads (a process's exit): a crash now,
    after what it wrote before it went."""
    engine, transport = await mock_engine()
    woken: list[Engine] = []
    engine.on_fault = woken.append
    transport.write("info string bye")
    transport.alive = False
    await engine.transport_lost()
    assert fault_of(engine).kind == FaultKind.CRASH and not fault_of(engine).searching
    assert woken == [engine] and not engine.healthy


async def test_conversation_second_bestmove_in_the_same_chunk():
    """Both lines come in one read: the move is returned, and the fault,
    seen at the same time, is already there for the match to void it."""
    engine, transport = await mock_engine()
    transport.expect("position startpos")
    transport.expect("go movetime 100", "bestmove a1", "bestmove a1")
    await engine.go(SetPosition(), Go(movetime=100))
    reply = await engine.wait_bestmove()
    fault = fault_of(engine)
    assert reply.move == "a1" and fault is not None and fault.time <= reply.time
    assert (fault.kind, fault.command, fault.searching) == (FaultKind.PROTOCOL_ERROR, "bestmove", False)
    assert "while not searching (a second bestmove?)" in fault.detail


async def test_conversation_late_second_bestmove_is_caught_before_the_next_go():
    """A second bestmove written while nobody waited is read before the next
    command: never taken for the answer to the next go."""
    engine, transport = await mock_engine()
    transport.expect("position startpos")
    transport.expect("go movetime 100", "bestmove a1")
    await engine.go(SetPosition(), Go(movetime=100))
    assert (await engine.wait_bestmove()).move == "a1"
    transport.write("bestmove b1")
    with pytest.raises(EngineFaultError, match="while not searching"):
        await engine.go(SetPosition(None, ("a1",)), Go(movetime=100))
    assert fault_of(engine).command == "bestmove" and transport.sent[-1] == "go movetime 100"


async def test_conversation_closed_input_is_a_crash():
    engine, transport = await mock_engine()
    transport.input_closed = True
    with pytest.raises(EngineFaultError, match="closed its input"):
        await engine.go(SetPosition(), Go(movetime=100))
    assert fault_of(engine).kind == FaultKind.CRASH


async def test_conversation_keeps_a_bounded_part_of_an_info_flood():
    """Lines near the length limit with a long pv, within the protocol: what
    is kept is cut as it arrives (protocol/limits.py), and the record gets
    the newest fields and a pv of MAX_PV_KEPT moves."""
    engine, transport = await mock_engine()
    transport.expect("position startpos")
    transport.expect("go movetime 100")
    await engine.go(SetPosition(), Go(movetime=100))
    pv = " ".join(["a1"] * (MAX_LINE_BYTES // 3))
    for depth in range(1, 65):
        transport.write(f"info depth {depth} score cp {depth} nodes {depth * 10} time 3 pv {pv}")
    transport.write("bestmove a1")
    reply = await engine.wait_bestmove()
    assert reply._lines is not None and sum(len(line) for line in reply._lines) <= MAX_INFO_KEPT
    assert reply.info == ReportedInfo(depth=64, nodes=640, time=3, pv=("a1",) * MAX_PV_KEPT,
                                      score=Score.parse("cp 64"))


def test_search_info_cuts_lines_at_a_token_boundary_and_keeps_the_newest():
    assert cut_line("info depth 12 pv abc def", 14) == "info depth 12"
    assert cut_line("info depth 12 pv abc def", 13) == "info depth 12"
    assert cut_line("info depth 12 pv abc def", 19) == "info depth 12 pv"  # 'ab' of 'abc' dropped
    assert cut_line("info depth 1", 100) == "info depth 1"
    kept = SearchInfo()
    long = "info depth 1 pv " + " ".join(["a1"] * MAX_INFO_LINE_KEPT)
    for _ in range(10):
        kept.keep(long)
    lines = kept.take()
    assert lines is not None
    assert all(len(line) <= MAX_INFO_LINE_KEPT for line in lines)
    assert sum(map(len, lines)) <= MAX_INFO_KEPT and kept.take() is None
    for depth in range(MAX_INFO_LINES_KEPT + 10):
        kept.keep(f"info depth {depth}")
    lines = kept.take()
    assert lines is not None
    assert len(lines) == MAX_INFO_LINES_KEPT and lines[-1] == f"info depth {MAX_INFO_LINES_KEPT + 9}"


def test_merge_info_takes_the_latest_value_of_each_field():
    """Newest first with an early stop: the same as folding oldest first."""
    lines = ["info depth 1 seldepth 3 score mate 2 nodes 5 pv a1 b1", "info depth x",  # malformed: ignored
             "info depth 2 score cp 7 time 9", "info nps 100 string done", "bestmove a1"]
    assert merge_info(lines) == ReportedInfo(depth=2, seldepth=3, nodes=5, nps=100, time=9,
                                             pv=("a1", "b1"), score=Score.parse("cp 7"))
    assert merge_info([]) == ReportedInfo() and Reply("a1", 0.0).info == ReportedInfo()
    assert not ReportedInfo() and ReportedInfo(depth=1)  # false when nothing was reported


async def test_info_flood_costs_its_opponent_nothing():
    """issue 11: an engine writing lines near the 1 MiB limit, a long pv each,
    all within the protocol.  Its output once took seconds of the event loop
    after the opponent's go was written, and the honest opponent lost on time;
    now the honest side is unharmed, and the game ends by the rules (or by
    the flooder's own fault)."""
    flooder, honest = config("flood_pv.py", "16", tc="60+1"), config("instant.py", tc="10+0")
    async with open_engine(honest, timeouts=FAST) as white, open_engine(flooder, timeouts=FAST) as black:
        record = await play_game("troll", white, black)
        pids = (started(white), started(black))
    rule_endings = {termination.value for termination in Termination}
    assert record.termination in rule_endings or record.result == "1-0", record.termination_detail
    assert record.result != "1-0" or record.termination != MatchTermination.TIME_FORFEIT.value
    assert record.result != "0-1" or record.termination in rule_endings, record.termination_detail
    flooded = [move for move in record.moves if move.color == "black"]
    assert flooded and all((str(move.score), move.depth, move.nodes, move.engine_time_ms) == ("cp 7", 16, 1000, 5)
                           and move.pv == [move.move] * MAX_PV_KEPT for move in flooded)
    assert all(group_alive(pid) == [] for pid in pids)


# --------------------------------------------------------------------------
# Floods of stdout and engines that fail to start (issue 29, items 6 and 7)
# --------------------------------------------------------------------------


class FloodingTransport(MockTransport):
    """A transport whose engine always has more to read (``yes``): every
    ``receive_nowait`` gives one more ``y`` line.  A catch-up that never
    stops reading fails the test instead of hanging it."""

    def __init__(self):
        super().__init__()
        self.reads = 0

    def receive_nowait(self) -> Received | None:
        self.reads += 1
        assert self.reads < 1000, "the catch-up reads a flood without end"
        return ["y"], trio.current_time(), None


async def test_catching_up_with_a_flood_is_bounded():
    """specs/match.md §Engine processes (Reading): what an engine wrote while
    nobody waited is read before the next command, but at most
    CATCH_UP_READS reads: an engine that writes as fast as it is read
    cannot keep ``ugi`` (or any command) from being sent."""
    transport = FloodingTransport()
    transport.expect("ugi")
    engine = Engine(EngineConfig(cmd="mock"), FAST, transport)
    await engine.send(Ugi())
    assert transport.sent == ["ugi"] and transport.reads == CATCH_UP_READS


FLOOD_TIMEOUTS = EngineTimeouts(handshake=1, ready=1, stop=0.5, quit_grace=0.2, term_grace=0.2)


@pytest.mark.parametrize("when, form, words", [
    ("before", "lines", r"no ugiok within 1 s of ugi \(it wrote \d+ line\(s\), the last 'y'\)$"),
    ("before", "raw", rf"wrote a line longer than {MAX_LINE_BYTES} bytes during the handshake$"),
    ("after", "lines", r"no readyok within 1 s of isready \(it wrote \d+ line\(s\), the last 'y'\)$"),
    ("after", "raw", rf"wrote a line longer than {MAX_LINE_BYTES} bytes \(waiting for readyok\)$"),
])
async def test_a_flooding_engine_fails_its_start_within_the_timeout(when, form, words):
    """specs/match.md §Engine processes (Reading, Handshake): an engine that writes stdout without end
    (``y`` lines, or bytes without a newline), before its handshake or after
    it, fails its start within the handshake or ready timeout: the deadline
    holds whatever it writes, the error names it, and nothing of it is left.
    (Before the fix, the ``before``/``lines`` case never returned.)"""
    cfg = config("flood_output.py", when, form)
    pid = None
    with pytest.raises(EngineStartError) as info:
        async with open_engine(cfg, timeouts=FLOOD_TIMEOUTS) as engine:
            pid = started(engine)
            await engine.new_game("troll")
    assert info.value.engine == "flood_output" and re.search(words, str(info.value)), str(info.value)
    assert (pid is None) == (when == "before")
    if pid is not None:
        assert group_alive(pid) == [] and not pid_alive(pid)


@pytest.mark.parametrize("form", ["lines", "raw"])
async def test_a_flood_instead_of_a_bestmove_loses_that_engine_the_game(form):
    """specs/match.md §Terminations: an engine that floods stdout at its
    ``go`` loses on time (lines) or by the line-length limit (raw): the
    search's deadline holds whatever it writes, and the game is the
    flooder's loss, never its opponent's."""
    flooder = config("flood_output.py", "go", form, tc="1+0")
    async with open_engine(flooder, timeouts=FLOOD_TIMEOUTS) as white, \
            open_engine(config("instant.py"), timeouts=FLOOD_TIMEOUTS) as black:
        record = await play_game("troll", white, black)
        pid = started(white)
    assert record.result == "0-1", record.termination_detail
    assert record.termination == ("time-forfeit" if form == "lines" else "protocol-error")
    assert group_alive(pid) == [] and not pid_alive(pid)


async def test_a_failed_start_quotes_the_end_of_its_stderr(tmp_path):
    """specs/match.md §Engine processes (Start errors): an engine that exits before its
    handshake: the error says the exit and quotes the last
    STDERR_TAIL_LINES non-blank lines of its stderr (each escaped, a long
    one cut at STDERR_TAIL_CHARS); its I/O log has every stderr line and
    the start error."""
    with pytest.raises(EngineStartError) as info:
        async with open_engine(config("complain.py", "exit"), timeouts=FAST, log_dir=str(tmp_path)):
            pass
    error = info.value
    long = "x" * STDERR_TAIL_CHARS + "..."
    assert error.stderr == ("complaint 27", "complaint 28", "complaint 29", "complaint 30", long)
    assert len(error.stderr) == STDERR_TAIL_LINES
    assert str(error) == ("engine 'complain': exited (status 3) during the handshake; its last lines on "
                          f"stderr: 'complaint 27' | 'complaint 28' | 'complaint 29' | 'complaint 30' | {long!r}")
    (log,) = tmp_path.iterdir()
    text = log.read_text()
    assert "! complaint 1\n" in text and "! complaint 30\n" in text
    assert "# cannot start: exited (status 3) during the handshake\n" in text


async def test_a_python_engine_with_a_wrong_module_name_says_so():
    """The typo of issue 29 (item 7): ``python3 -m`` of a module that does not
    exist; Python's own message is in the error."""
    with pytest.raises(EngineStartError) as info:
        async with open_engine(EngineConfig(cmd=f"{sys.executable} -m sample_engines.mctz"), timeouts=FAST):
            pass
    assert "exited (status 1) during the handshake" in str(info.value)
    assert "No module named sample_engines.mctz" in str(info.value)


async def test_a_silent_engine_and_one_that_dies_at_isready_quote_their_stderr():
    """A handshake timeout of an engine still running, and an exit at the
    game's ``isready`` (in the block of open_engine), quote its stderr too."""
    timeouts = EngineTimeouts(handshake=0.5, ready=5, quit_grace=0.2, term_grace=0.2)
    with pytest.raises(EngineStartError) as info:
        async with open_engine(config("complain.py", "hang"), timeouts=timeouts):
            pass
    assert str(info.value).startswith("engine 'complain': no ugiok within 0.5 s of ugi (it wrote nothing)")
    assert info.value.stderr[-1] == "ValueError: the search thread died"
    with pytest.raises(EngineStartError) as info:
        async with open_engine(config("complain.py", "ready"), timeouts=FAST) as engine:
            await engine.new_game("troll")
    assert "exited (status 4) (waiting for readyok)" in str(info.value)
    assert info.value.stderr == ("cannot load the net: weights.bin is missing",)


async def test_a_start_error_quotes_only_its_own_engines_stderr():
    """Two engines, the first one chatty on stderr: the second one's start
    error, raised inside the first one's block, quotes the second's stderr,
    never the first's."""
    async with open_engine(config("stderr_flood.py"), timeouts=FAST):
        with pytest.raises(EngineStartError) as info:
            async with open_engine(config("complain.py", "exit"), timeouts=FAST):
                pass
    assert info.value.engine == "complain" and info.value.stderr[0] == "complaint 27"
    assert "warming up" not in str(info.value)
