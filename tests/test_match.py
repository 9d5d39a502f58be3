"""One game between two real engine processes (arbiter/match/), the
misbehaving engines of tests/bad_engines/, rule endings of every game through
real engines, engine specs, and ``arbiter play``.

Each misbehaving engine gets: the right termination, the right loser, no
process left behind, and a healthy arbiter (a normal game right after, in the
same test).  Terminations: specs/match.md §Terminations.  The same rules
without processes, one event at a time: tests/test_match_state.py."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import subprocess

import pytest
import trio
from bad_engines.harness import FAST, config, group_alive, pid_alive
from cli import invoke, start

from arbiter.engine import EngineConfig, EngineStartError, EngineTimeouts, open_engine
from arbiter.engine.transport import Seat
from arbiter.enginespec import EngineSpecError, load_engines_file, parse_engine_spec
from arbiter.games import Color, Termination, get_game
from arbiter.match import MatchTermination, play_engines, play_game
from arbiter.match.driver import DEADLINE_SLACK
from arbiter.record import GameRecord, ReportedInfo

M = MatchTermination


async def play_pair(white_cfg, black_cfg, game="troll", timeouts=FAST, **options):
    """Play one game; return its record and the engines' pids (for the leftover check)."""
    async with open_engine(white_cfg, timeouts=timeouts) as white, \
            open_engine(black_cfg, timeouts=timeouts) as black:
        record = await play_game(game, white, black, **options)
        pids = (white.pid, black.pid)
    return record, pids


async def assert_healthy_arbiter():
    """A normal game after a bad one: the arbiter is still fine."""
    record, pids = await play_pair(config("instant.py"), config("instant.py"), tc="10+0.1")
    assert record.termination == Termination.CONNECTION.value
    assert all(group_alive(pid) == [] for pid in pids)


def loser(record: GameRecord) -> Color:
    assert record.result in ("1-0", "0-1"), record.result
    return Color.BLACK if record.result == "1-0" else Color.WHITE


# (script, args, options for play_game, termination, words in the detail)
FAULTS = [
    ("crash.py", (), dict(tc="10+0.1"), M.CRASH, "exited (status 3)"),
    ("close_stdout.py", (), dict(tc="10+0.1"), M.CRASH, "closed its output but is still running"),
    ("hang_go.py", (), dict(tc="0.4+0"), M.TIME_FORFEIT, "lost on time: no bestmove within"),
    ("hang_go.py", (), dict(tc="depth=4", stall_ms=500), M.STALL,
     "no bestmove within the 0.5 s stall limit nor 0.5 s after stop"),
    ("ignore_stop.py", (), dict(tc="inf", stall_ms=500), M.STALL, "stalled"),
    ("ignore_stop.py", (), dict(tc="nodes=1000", stall_ms=500), M.STALL, "stalled"),
    ("ignore_stop.py", (), dict(tc="st=0.2"), M.TIME_FORFEIT, "lost on time"),
    ("long_line.py", (), dict(tc="10+0.1"), M.PROTOCOL_ERROR, "wrote a line longer than 1048576 bytes"),
    ("illegal.py", (), dict(tc="10+0.1"), M.ILLEGAL_MOVE, "is occupied"),
    ("garbage.py", ("word",), dict(tc="10+0.1"), M.ILLEGAL_MOVE, "played illegal move 'hello'"),
    ("garbage.py", ("empty",), dict(tc="10+0.1"), M.MALFORMED_BESTMOVE, "the move is missing"),
    ("garbage.py", ("many",), dict(tc="10+0.1"), M.MALFORMED_BESTMOVE, "exactly one move"),
    ("garbage.py", ("binary",), dict(tc="10+0.1"), M.MALFORMED_BESTMOVE, "malformed bestmove"),
    ("garbage.py", ("noise",), dict(tc="st=0.3"), M.TIME_FORFEIT, "lost on time"),
    ("bad_utf8.py", ("move",), dict(tc="10+0.1"), M.MALFORMED_BESTMOVE, "malformed bestmove '\ufffd"),
    ("double_bestmove.py", (), dict(tc="10+0.1"), M.PROTOCOL_ERROR, "while not searching"),
]


@pytest.mark.parametrize("index", range(len(FAULTS)), ids=[
    f"{s.removesuffix('.py')}{'-' + a[0] if a else ''}-{o['tc']}" for s, a, o, _, _ in FAULTS])
async def test_misbehaving_engine_loses(index):
    script, args, options, termination, words = FAULTS[index]
    bad_color = Color.WHITE if index % 2 == 0 else Color.BLACK
    bad, good = config(script, *args), config("instant.py")
    white, black = (bad, good) if bad_color is Color.WHITE else (good, bad)
    record, pids = await play_pair(white, black, **options)
    assert record.termination == termination.value, record.termination_detail
    assert loser(record) is bad_color
    side = "White" if bad_color is Color.WHITE else "Black"
    assert record.termination_detail.startswith(side)
    assert words in record.termination_detail
    if termination in (M.ILLEGAL_MOVE, M.MALFORMED_BESTMOVE):
        assert record.illegal_move
    assert all(group_alive(pid) == [] for pid in pids)
    # the record is complete and JSON-able
    assert GameRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    await assert_healthy_arbiter()


async def test_illegal_move_records_the_move_and_reason():
    record, _ = await play_pair(config("instant.py"), config("illegal.py"), tc="10+0.1")
    first = record.moves[0].move
    assert record.illegal_move == first
    assert record.termination_detail == f"Black played illegal move '{first}': cell {first} is occupied"
    assert len(record.moves) == 3  # the illegal move is not among the moves played


@pytest.mark.parametrize("script, args", [("exit_before_ugiok.py", ()), ("silent.py", ())])
async def test_handshake_failure_means_no_game(script, args, tmp_path):
    timeouts = EngineTimeouts(handshake=0.5, stop=0.5, quit_grace=0.3, term_grace=0.3)
    with pytest.raises(EngineStartError) as info:
        await play_engines("troll", config("instant.py"), config(script, *args), timeouts=timeouts,
                           log_dir=str(tmp_path))
    assert script.removesuffix(".py") in str(info.value)
    pids = [int(log.stem.rsplit("-", 1)[1]) for log in tmp_path.iterdir()]
    assert len(pids) == 2  # both engines were started ...
    assert all(group_alive(pid) == [] for pid in pids)  # ... and both are gone
    await assert_healthy_arbiter()


async def test_no_readyok_before_the_first_move_means_no_game(tmp_path):
    """specs/match.md §Terminations, `readyok`: no answer to the isready of
    the new game is a handshake failure; nothing is left behind."""
    timeouts = EngineTimeouts(handshake=10, ready=0.3, stop=0.5, quit_grace=0.3, term_grace=0.3)
    with pytest.raises(EngineStartError, match=r"'readyok': no readyok within 0.3 s of isready"):
        await play_engines("troll", config("instant.py"), config("readyok.py", "never"),
                           timeouts=timeouts, log_dir=str(tmp_path))
    pids = [int(log.stem.rsplit("-", 1)[1]) for log in tmp_path.iterdir()]
    assert len(pids) == 2 and all(group_alive(pid) == [] for pid in pids)


@pytest.mark.parametrize("bad_color", [Color.WHITE, Color.BLACK])
async def test_new_game_failure_names_the_engine_and_leaves_the_other_ready(bad_color):
    """Both engines are asked for the new game before either answer is
    awaited (one round trip).  When one never answers, the error names it,
    and the other's `readyok` is still taken: reused for the next game, that
    engine plays it normally (no stale `readyok` read as unasked)."""
    timeouts = EngineTimeouts(handshake=10, ready=0.3, stop=0.5, quit_grace=0.3, term_grace=0.3)
    # the honest engines get all the patience a loaded machine needs: only the
    # silent one's 0.3 s is under test (an instant engine once took longer in CI)
    patient = EngineTimeouts(handshake=10, ready=10, stop=0.5, quit_grace=0.3, term_grace=0.3)
    async with open_engine(config("readyok.py", "never"), timeouts=timeouts) as bad, \
            open_engine(config("instant.py"), timeouts=patient) as good, \
            open_engine(config("instant.py"), timeouts=patient) as other:
        white, black = (bad, good) if bad_color is Color.WHITE else (good, bad)
        with pytest.raises(EngineStartError, match=r"'readyok': no readyok within 0.3 s of isready"):
            await play_game("troll", white, black, tc="10+0.1")
        assert good.session.pending_ready == 0
        record = await play_game("troll", good, other, tc="10+0.1")
    assert record.termination == Termination.CONNECTION.value, record.termination_detail


@pytest.mark.parametrize("bad_color", [Color.WHITE, Color.BLACK])
async def test_readyok_during_the_game_is_a_protocol_error(bad_color):
    """specs/match.md §Terminations, `readyok`: during a game the arbiter asks
    for none, so an unasked `readyok` loses the game for its writer."""
    bad, good = config("readyok.py", "unasked"), config("instant.py")
    white, black = (bad, good) if bad_color is Color.WHITE else (good, bad)
    record, pids = await play_pair(white, black, tc="10+0.1")
    assert record.termination == M.PROTOCOL_ERROR.value, record.termination_detail
    assert loser(record) is bad_color
    assert "readyok without isready" in record.termination_detail
    assert all(group_alive(pid) == [] for pid in pids)


async def test_ignores_quit_game_is_normal_and_process_killed():
    record, pids = await play_pair(config("ignore_quit.py"), config("instant.py"), tc="10+0.1")
    assert record.termination == Termination.CONNECTION.value
    assert all(group_alive(pid) == [] for pid in pids)
    await assert_healthy_arbiter()


async def test_flood_of_info_keeps_the_last_fields():
    record, pids = await play_pair(config("instant.py"), config("flood_info.py"), tc="30+0.1")
    assert record.termination == Termination.CONNECTION.value
    black_moves = [m for m in record.moves if m.color == "black"]
    assert black_moves
    for move in black_moves:
        assert (str(move.score), move.depth, move.nodes, move.engine_time_ms) == ("cp 42", 99, 123456, 7)
        assert move.pv == [move.move]
    white_moves = [m for m in record.moves if m.color == "white"]
    assert all(m.score is None and m.pv == [] for m in white_moves)
    assert all(group_alive(pid) == [] for pid in pids)
    await assert_healthy_arbiter()


async def test_invalid_utf8_is_harmless():
    record, pids = await play_pair(config("bad_utf8.py", name=None), config("instant.py"), tc="10+0.1")
    assert record.termination == Termination.CONNECTION.value
    assert record.white == "bad\ufffd\ufffdutf8" == record.white_id["name"]
    await assert_healthy_arbiter()


async def test_child_outliving_the_engine_is_killed(tmp_path):
    pidfile = tmp_path / "child.pid"
    record, pids = await play_pair(config("instant.py"), config("spawn_child.py", str(pidfile)),
                                   tc="10+0.1")
    assert record.termination == Termination.CONNECTION.value
    child = int(pidfile.read_text())
    assert not pid_alive(child)
    assert all(group_alive(pid) == [] for pid in pids)
    await assert_healthy_arbiter()


async def test_second_bestmove_in_the_same_write_voids_the_move():
    """Both bestmove lines arrive together: the fault is seen with the move,
    which is not played, and the opponent is never asked."""
    record, _ = await play_pair(config("double_bestmove.py"), config("instant.py"), tc="10+0.1")
    assert record.termination == M.PROTOCOL_ERROR.value and record.result == "0-1"
    assert record.moves == []


async def test_fault_of_the_waiting_engine_is_noticed_at_once():
    """White dies while Black (who never answers) thinks under a 60 s stall
    limit: the game ends on White's crash, not on Black's stall a minute later."""
    record, pids = await play_pair(config("crash_idle.py"), config("ignore_stop.py"),
                                   tc="inf", stall_ms=60_000)
    assert record.termination == M.CRASH.value and record.result == "0-1"
    assert record.termination_detail == "White exited (status 4)"
    assert len(record.moves) == 1
    assert all(group_alive(pid) == [] for pid in pids)


async def test_search_outlasting_the_other_sides_deadline_is_not_forfeited():
    """specs/match.md §Time controls: each search has its own deadline.
    White's is 0.2 s (movetime); Black, on a 10 s clock, thinks 0.4 s a
    move and must not be held to White's."""
    white = config("instant.py", tc="st=0.2")
    black = config("slow.py", "0.4", tc="10+0")
    record, _ = await play_pair(white, black, maxplies=5)
    assert (record.termination, record.result) == ("max-plies", "1/2-1/2")
    assert [m.color for m in record.moves] == ["white", "black"] * 2 + ["white"]
    # each of Black's searches went past White's deadline.  (Not ">= 400": Black's
    # clock starts when the go write returns, and its sleep when the go arrives,
    # so an arbiter descheduled between the two is charged less; seen once, in a
    # run of three workers on two cores.)
    assert all(m.time_ms > 200 for m in record.moves if m.color == "black")


async def test_sooner_deadline_is_enforced():
    """White's long clock gives its searches a late deadline; Black's 0.2 s
    movetime must still be enforced on time: Black forfeits long before
    White's 60 s."""
    from datetime import datetime
    white = config("instant.py", tc="60+0")
    black = config("ignore_stop.py", tc="st=0.2")
    record, _ = await play_pair(white, black)
    assert (record.termination, record.result) == ("time-forfeit", "1-0")
    assert record.termination_detail == "Black lost on time: no bestmove within 0.200 s"
    seconds = (datetime.fromisoformat(record.end_time.replace("Z", "+00:00"))
               - datetime.fromisoformat(record.start_time.replace("Z", "+00:00"))).total_seconds()
    assert seconds < 60  # not at White's armed deadline


async def test_record_fields_and_clock_bookkeeping():
    moves = []
    record, _ = await play_pair(config("instant.py"), config("instant.py", name="second"),
                                tc="40/20+0.5", on_move=lambda rec, pos: moves.append((rec.move, pos.ply)))
    assert (record.game, record.white, record.black) == ("troll", "instant", "second")
    assert record.time_control == {"white": "40/20+0.5", "black": "40/20+0.5"}
    assert [m for m, _ in moves] == [m.move for m in record.moves]
    assert [ply for _, ply in moves] == list(range(1, len(moves) + 1))
    assert record.fen is None and record.opening_moves == []
    assert record.final_fen == get_game("troll").position(None, record.all_moves).fen()
    assert record.start_time.endswith("Z") and record.start_time <= record.end_time
    clock = {"white": 20_000.0, "black": 20_000.0}
    for move in record.moves:
        assert move.time_ms >= 0
        clock[move.color] = clock[move.color] - move.time_ms + 500
        # whole ms in the record: within 1 ms per move of the exact arithmetic
        assert abs(move.clock_ms - clock[move.color]) <= len(record.moves)
    assert record.white_id == {"name": "bad", "author": "the arbiter tests"}


async def test_per_engine_time_controls_and_opening():
    game = get_game("troll")
    opening = game.start().legal_moves()[:1]
    white = config("instant.py", tc="st=5")
    record, _ = await play_pair(white, config("instant.py"), tc="depth=2", opening_moves=opening)
    assert record.time_control == {"white": "st=5", "black": "depth=2"}
    assert record.opening_moves == opening
    assert record.moves[0].color == "black"
    assert all(m.clock_ms is None for m in record.moves)


async def test_bad_opening_is_refused_before_play():
    from arbiter.games import GameError
    async with open_engine(config("instant.py"), timeouts=FAST) as white, \
            open_engine(config("instant.py"), timeouts=FAST) as black:
        with pytest.raises(GameError, match="ply 1: illegal move 'zz'"):
            await play_game("troll", white, black, opening_moves=["zz"])
        with pytest.raises(ValueError, match="cannot play itself"):
            await play_game("troll", white, white)


# --- the driver in-process: fake engines on a virtual clock ---------------------------
#
# The rules are the state's (tests/test_match_state.py); these check what only
# the trio driver does: its deadlines (a write that blocks, a bestmove at the
# deadline) and a fault waking the wait.  trio's autojump clock: no real time.


@dataclasses.dataclass(frozen=True)
class FakeFault:
    kind: str
    detail: str
    time: float
    command: str | None = None
    searching: bool = False
    line: str | None = None


class FakeReply:
    def __init__(self, move: str, time: float):
        self.move, self.time, self.info = move, time, ReportedInfo()


class FakeEngine:
    """Answers each go with its first legal move after ``think`` seconds
    (None: never); its go write blocks for ``write`` seconds; ``lag``: the
    reply reaches the driver that much after it was read (a busy loop)."""

    def __init__(self, name: str, think: list[float | None], write: list[float] | None = None,
                 lag: float = 0.0):
        self.name = self.id_name = name
        self.author = "the tests"
        self.config = EngineConfig(cmd="fake", name=name)
        self.timeouts = FAST
        self.fault: FakeFault | None = None
        self.on_fault = None
        self.think, self.write = list(think), list(write or [])
        self.due = math.inf
        self.lag = lag
        self.moves: list[str] = []
        self.stops = 0
        self.transport = Seat()  # a local engine's: no lag allowance, never away

    async def start_new_game(self, name: str) -> None:
        pass

    async def wait_ready(self) -> None:
        pass

    async def go(self, position: bytes, limits, mover_is_p1: bool) -> float:
        if self.write:
            await trio.sleep(self.write.pop(0))
        words = position.decode().split()
        moves = words[words.index("moves") + 1:] if "moves" in words else []
        self.moves = get_game("troll").position(None, moves).legal_moves()
        think = self.think.pop(0)
        self.due = math.inf if think is None else trio.current_time() + think
        return trio.current_time()

    async def wait_bestmove(self) -> FakeReply:
        await trio.sleep_until(self.due)
        with trio.CancelScope(shield=True):
            await trio.sleep(self.lag)
        return FakeReply(self.moves[0], self.due)

    async def stop(self) -> None:
        self.stops += 1

    def crash(self) -> None:
        self.fault = FakeFault("crash", "exited (status 9)", trio.current_time())
        if self.on_fault is not None:
            self.on_fault(self)


async def test_a_write_that_blocks_is_bounded_by_the_deadline_from_its_start(autojump_clock):
    """specs/match.md §Time controls, measuring: the write blocks 0.3 s of a
    1 s clock; once written, the search has its 1 s from the end of the write."""
    white = FakeEngine("w", [0.9], write=[0.3])
    black = FakeEngine("b", [None])
    record = await play_game("troll", white, black, tc="1+0")
    assert record.moves[0].time_ms == 900  # measured from the end of the write
    assert record.termination_detail == "Black lost on time: no bestmove within 1.000 s"
    white = FakeEngine("w", [0.1], write=[1.5])  # still blocked at its deadline
    record = await play_game("troll", white, FakeEngine("b", []), tc="1+0")
    assert (record.termination, record.result) == (M.TIME_FORFEIT.value, "0-1")
    assert record.moves == []


async def test_a_bestmove_seen_after_its_deadline_leaves_the_next_search_its_own(autojump_clock):
    """A bestmove read in time but handled after its deadline passed (the
    clock takes it) must not carry that deadline's cancellation into the next
    search: the other side still gets its whole allowance, its write too."""
    white = FakeEngine("w", [0.9, None], lag=0.2)
    black = FakeEngine("b", [0.5], write=[0.3])
    record = await play_game("troll", white, black, tc="1+0")
    assert [m.time_ms for m in record.moves] == [900, 500]
    assert record.termination_detail == "White lost on time: no bestmove within 0.100 s"


async def test_a_silent_engine_loses_on_time_within_the_slack_after_its_deadline(autojump_clock):
    """specs/match.md §Clocks: the forfeit is declared at the deadline, at
    most DEADLINE_SLACK after it; a bestmove read within that slack is a time
    forfeit too (the clock judges it), so the slack never changes who loses."""
    start = trio.current_time()
    record = await play_game("troll", FakeEngine("w", [None]), FakeEngine("b", []), tc="1+0")
    assert 1 <= trio.current_time() - start <= 1 + DEADLINE_SLACK
    assert record.termination_detail == "White lost on time: no bestmove within 1.000 s"
    late = 1 + DEADLINE_SLACK / 2
    record = await play_game("troll", FakeEngine("w", [late]), FakeEngine("b", []), tc="1+0")
    assert (record.termination, record.result) == (M.TIME_FORFEIT.value, "0-1")
    assert record.termination_detail.startswith("White lost on time: bestmove after 1.010 s")
    assert record.moves == []


async def test_a_fault_of_the_waiting_engine_wakes_the_wait(autojump_clock):
    white = FakeEngine("w", [0.1])
    black = FakeEngine("b", [None])  # never answers, no clock: would stall after 60 s
    async with trio.open_nursery() as nursery:
        async def crash_white() -> None:
            await trio.sleep(5)
            white.crash()

        nursery.start_soon(crash_white)
        start = trio.current_time()
        record = await play_game("troll", white, black, tc="inf")
        assert trio.current_time() - start == pytest.approx(5)
    assert (record.termination, record.result) == (M.CRASH.value, "0-1")
    assert record.termination_detail == "White exited (status 9)" and len(record.moves) == 1


async def test_without_a_clock_the_driver_stops_then_waits_the_grace(autojump_clock):
    white = FakeEngine("w", [None])
    start = trio.current_time()
    record = await play_game("troll", white, FakeEngine("b", []), tc="depth=3", stall_ms=2000)
    # the stall limit, then the stop timeout; the wait may end DEADLINE_SLACK
    # after the limit (specs/match.md §Clocks)
    assert trio.current_time() - start == pytest.approx(2 + DEADLINE_SLACK + FAST.stop)
    assert white.stops == 1 and record.termination == M.STALL.value


# --- rule endings through real engines ------------------------------------------


def _rev(move: str | None) -> str | None:
    if move is None:
        return None
    move = move.split("x")[0]
    if "-" in move:
        a, b = move.split("-")
        return f"{b}-{a}"
    return None


def find_game(name: str, termination: str, shuttle: bool, tries: int = 400) -> list[str]:
    """A complete game of ``name`` ending by ``termination``, from seeded random
    play (``shuttle``: each side undoes its previous move when it can, which
    makes repetitions)."""
    game = get_game(name)
    for seed in range(tries):
        rng = random.Random(seed)
        position, moves = game.start(), []
        while position.outcome() is None:
            legal = position.legal_moves()
            back = _rev(moves[-2]) if shuttle and len(moves) >= 2 else None
            move = back if back in legal else rng.choice(legal)
            moves.append(move)
            position = position.play(move)
        if position.outcome().termination.value == termination:
            return moves
    raise AssertionError(f"no {name} game ending by {termination} in {tries} seeded tries")


ENDINGS = [
    ("troll", "connection", False),
    ("atoll", "connection", False),
    ("morris", "fewer-than-three", False),
    ("morris", "no-progress", False),
    ("morris", "repetition", True),
    ("talisman", "cannot-catch-up", False),
    ("talisman", "no-progress", False),
    ("talisman", "all-triangles", False),
    ("talisman", "blocked", False),
    ("talisman", "repetition", True),
]


@pytest.mark.parametrize("name, termination, shuttle", ENDINGS, ids=[f"{g}-{t}" for g, t, _ in ENDINGS])
async def test_rule_ending_through_engines(name, termination, shuttle):
    """The opening is all but the last 4 plies; two replaying engines play the
    rest, and the arbiter must see the rules' ending with the right result."""
    moves = find_game(name, termination, shuttle)
    final = get_game(name).position(None, moves)
    engine = config("replay.py", *moves)
    record, pids = await play_pair(engine, engine, game=name, tc="10+0.1",
                                   opening_moves=moves[:-4])
    assert record.termination == termination
    assert record.result == final.outcome().result
    assert [m.move for m in record.moves] == moves[-4:]
    assert record.final_fen == final.fen()
    assert record.scores == (list(final.scores()) if final.scores() else None)
    assert all(group_alive(pid) == [] for pid in pids)


async def test_troll_pass_and_no_moves_draw():
    """specs/games/troll.md §6: a forced pass played by an engine, then the
    last drop fills the board: draw by no-moves."""
    rows = ["BWBWBWBW" if r % 2 == 0 else "WBWBWBWB" for r in range(8)]
    rows[6] = "1" + rows[6][1:]  # rank 2: a2 empty; White would flip nothing there
    fen = "/".join(rows) + " w 63"
    assert get_game("troll").from_fen(fen).legal_moves() == ["pass"]
    record, _ = await play_pair(config("instant.py"), config("instant.py"), tc="10+0.1", fen=fen)
    assert [m.move for m in record.moves] == ["pass", "a2"]
    assert (record.termination, record.result) == ("no-moves", "1/2-1/2")
    assert record.fen == fen


async def test_morris_blocked():
    """specs/games/morris.md: White, to move after a4-a7, has no legal move and loses."""
    fen = "W1W/WB1/3/BBB2B/WWB/BB1/1B1 b 0 0 15 61"
    engine = config("replay.py", "d1-a1", "a7-d7", "a4-a7")
    record, _ = await play_pair(engine, engine, game="morris", tc="10+0.1", fen=fen)
    assert (record.termination, record.result) == ("blocked", "0-1")


async def test_atoll_black_moves_first_and_is_p1(tmp_path):
    moves = find_game("atoll", "connection", False)
    engine = config("replay.py", *moves)
    async with open_engine(engine, timeouts=FAST, log_dir=str(tmp_path)) as white, \
            open_engine(config("replay.py", *moves), timeouts=FAST, log_dir=str(tmp_path)) as black:
        record = await play_game("atoll", white, black, tc="20+0", opening_moves=moves[:-2])
        white_log, black_log = white.log_path, black.log_path
    assert record.moves[0].color == get_game("atoll").position(None, moves[:-2]).to_move.value
    # Black is p1 in atoll: in Black's go, p1time is Black's own (larger, it moved less) clock
    black_go = [line for line in open(black_log) if "> go " in line]
    white_go = [line for line in open(white_log) if "> go " in line]
    assert black_go and white_go
    assert "p1time" in black_go[0] and "p2time" in white_go[0]


async def test_max_plies_without_scores_is_a_draw():
    record, _ = await play_pair(config("instant.py"), config("instant.py"), tc="10+0.1", maxplies=4)
    assert (record.termination, record.result) == ("max-plies", "1/2-1/2")
    assert len(record.moves) == 4 and record.maxplies == 4
    assert record.termination_detail == "adjudicated a draw after 4 plies"


async def test_max_plies_with_scores_and_opening():
    moves = find_game("talisman", "cannot-catch-up", False)
    final = get_game("talisman").position(None, moves[:-1])
    white, black = final.scores()
    assert final.outcome() is None
    engine = config("replay.py", *moves)
    record, _ = await play_pair(engine, engine, game="talisman", tc="10+0.1",
                                opening_moves=moves[:-3], maxplies=len(moves) - 1)
    assert record.termination == "max-plies" and len(record.moves) == 2  # opening plies count
    expected = "1/2-1/2" if white == black else ("1-0" if white > black else "0-1")
    assert record.result == expected
    assert f"on scores {white}-{black}" in record.termination_detail


# --- engine specs and the engines file ----------------------------------------------


def test_engine_spec_parsing():
    cfg = parse_engine_spec('cmd="python3 -m x" name=X arg=--fast arg="a b" dir=/tmp '
                            'option.Depth=5 "option.Skill Level=3" option.Clear tc=40/60+0.5 '
                            'timemargin=50 env.FOO=bar')
    assert cfg.argv() == ["python3", "-m", "x", "--fast", "a b"]
    assert (cfg.name, cfg.dir, cfg.tc, cfg.timemargin_ms) == ("X", "/tmp", "40/60+0.5", 50)
    assert cfg.options == {"Depth": "5", "Skill Level": "3", "Clear": None}
    assert cfg.env == {"FOO": "bar"}


@pytest.mark.parametrize("spec, words", [
    ("", "empty engine spec"),
    ("name=x", "no cmd="),
    ("cmd=x bogus=1", "unknown key 'bogus'"),
    ("cmd=x tc=fast", "bad time control 'fast'"),
    ("cmd=x timemargin=-1", "timemargin must be a whole number"),
    ("cmd=x option.=3", "no option name"),
    ("cmd='x", "No closing quotation"),
    ("cmd=x noequals", "'noequals' is not key=value"),
    ("mcts", "there is no engines file"),
])
def test_bad_engine_specs(spec, words):
    with pytest.raises(EngineSpecError) as info:
        parse_engine_spec(spec)
    assert words in str(info.value)


def test_engines_file(tmp_path):
    path = tmp_path / "engines.toml"
    path.write_text('[engines.fast]\ncmd = "python3 -m sample_engines.random"\n'
                    'args = ["-v"]\ndir = "sub"\noptions = { seed = 7, Fast = true }\n'
                    'tc = "st=1"\ntimemargin = 20\nenv = { A = "1" }\n'
                    '[other]\nanything = 1\n')
    engines = load_engines_file(str(path))
    cfg = parse_engine_spec("fast option.seed=9 tc=5+0.1", engines, str(path))
    assert cfg.name == "fast" and cfg.args == ["-v"] and cfg.dir == str(tmp_path / "sub")
    assert cfg.options == {"seed": "9", "Fast": "true"} and cfg.tc == "5+0.1"
    assert cfg.timemargin_ms == 20 and cfg.env == {"A": "1"}
    assert engines["fast"].options["seed"] == "7"  # the file's config is not changed by overrides
    assert parse_engine_spec("conf=fast name=f2", engines, str(path)).name == "f2"
    with pytest.raises(EngineSpecError, match=r"no engine 'slow' in .*engines.toml \(it defines: fast\)"):
        parse_engine_spec("slow", engines, str(path))


@pytest.mark.parametrize("text, words", [
    ("[engines.a]\ncmd = 3\n", "[engines.a]: cmd must be a string"),
    ("[engines.a]\nargs = []\n", "[engines.a]: cmd is missing"),
    ("[engines.a]\ncmd = 'x'\ncommand = 'y'\n", "unknown key 'command'"),
    ("[engines.a]\ncmd = 'x'\nargs = 'y'\n", "args must be a list of strings"),
    ("[engines.a]\ncmd = 'x'\ntc = '1+'\n", "bad time control '1+'"),
    ("[engines.a]\ncmd = 'x'\noptions = { a = [1] }\n", "option 'a': option values must be"),
    ("[engines.a]\ncmd = 'x'\ntimemargin = 1.5\n", "timemargin must be a whole number"),
    ("[engines.a\ncmd = 'x'\n", "not valid TOML"),
    ("engines = 3\n", "'engines' must be a table"),
])
def test_bad_engines_files(tmp_path, text, words):
    path = tmp_path / "e.toml"
    path.write_text(text)
    with pytest.raises(EngineSpecError) as info:
        load_engines_file(str(path))
    assert words in str(info.value) and str(path) in str(info.value)


# --- the CLI ------------------------------------------------------------------------


def spec(script: str, *extra: str) -> str:
    cfg = config(script)
    return " ".join([f"cmd='{cfg.cmd}'", f"name={cfg.name}", *extra])


def test_cli_play_live_and_json(tmp_path):
    result = invoke("play", "troll", "--engine", spec("instant.py"),
                 "--engine", spec("flood_info.py"), "--tc", "30+0.1",
                 "--log", str(tmp_path / "logs"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "troll: instant (White) vs flood_info (Black), tc 30+0.1"
    assert lines[1].split()[:3] == ["1.", "white", get_game("troll").start().legal_moves()[0]]
    assert "cp 42" in lines[2] and "depth 99" in lines[2]
    assert lines[-1].startswith("result: 0-1 (connection): Black wins by connection")
    assert len(list((tmp_path / "logs").iterdir())) == 2
    result = invoke("play", "troll", "-e", spec("instant.py"), "-e", spec("illegal.py"), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["termination"] == "illegal-move" and data["result"] == "1-0"
    assert GameRecord.from_dict(data).illegal_move == data["moves"][0]["move"]


def test_cli_play_appends_a_replayable_record(tmp_path):
    """`play --pgn` appends each finished game (specs/records.md); replay reads it back."""
    pgn = tmp_path / "games.pgn"
    for _ in range(2):
        result = invoke("play", "morris", "-e", spec("instant.py"), "-e", spec("instant.py"),
                     "--maxplies", "12", "--pgn", str(pgn))
        assert result.returncode == 0, result.stderr
    text = pgn.read_text()
    assert text.count('[Game "morris"]') == 2
    assert '[Termination "adjudication"]\n[ArbiterTermination "max-plies"]' in text
    replay = invoke("replay", str(pgn))
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_cli_play_engines_file_and_opening(tmp_path, monkeypatch):
    moves = find_game("morris", "fewer-than-three", False)
    cfg = config("replay.py", *moves)
    (tmp_path / "engines.toml").write_text(
        f"[engines.rep]\ncmd = '{cfg.cmd}'\nargs = {json.dumps(moves)}\n")
    monkeypatch.chdir(tmp_path)  # ./engines.toml is the default engines file
    result = invoke("play", "morris", "-e", "rep", "-e", "rep name=other",
                 "--moves", " ".join(moves[:-1]), "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["white"], data["black"]) == ("rep", "other")
    assert data["termination"] == "fewer-than-three" and len(data["moves"]) == 1


@pytest.mark.parametrize("args, words", [
    (["--engine", "cmd=x"], "exactly two --engine"),
    (["-e", "cmd=x", "-e", "cmd=y foo=1"], "unknown key 'foo'"),
    (["-e", "cmd=x", "-e", "cmd=y", "--tc", "1/"], "bad time control"),
    (["-e", "cmd=x", "-e", "cmd=y", "--moves", "a1"], "ply 1: illegal move 'a1'"),
    (["-e", "nosuch", "-e", "cmd=y", "--engines", "/no/such.toml"], "cannot read"),
    (["-e", "cmd=x", "-e", "cmd=y", "--log", "/proc/no/such"],
     "--log /proc/no/such: cannot create the directory"),
    (["-e", "cmd=x", "-e", "cmd=y", "--pgn", "/proc/no/such.pgn"],
     "--pgn /proc/no/such.pgn: cannot append to it"),
])
def test_cli_play_usage_errors(args, words):
    result = invoke("play", "troll", *args)
    assert result.returncode == 2
    assert words in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


async def test_an_unwritable_log_directory_is_a_start_error(tmp_path):
    """An I/O log that cannot be written stops the engine from starting, with
    the reason, before any process exists (nothing to clean up)."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(EngineStartError, match=r"cannot write its I/O log into '.*file/logs'"):
        async with open_engine(config("instant.py"), timeouts=FAST, log_dir=str(blocker / "logs")):
            pass  # pragma: no cover


def test_cli_play_handshake_failure():
    result = invoke("play", "troll", "-e", spec("instant.py"), "-e", spec("exit_before_ugiok.py"))
    assert result.returncode == 1
    assert "handshake-failure" in result.stderr and "exit_before_ugiok" in result.stderr
    assert "the game was not played" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_cli_ctrl_c_stops_engines(tmp_path, signame):
    """SIGINT, SIGTERM or SIGHUP to `arbiter play` mid-search: exit 130, no
    engine process left, also of an engine that ignores `quit`, the end of
    its input and SIGTERM (specs/match.md §Engine processes, shutdown on
    every path out)."""
    import os
    import signal
    import time

    logs = tmp_path / "logs"
    process = start("play", "troll", "-e", spec("ignore_stop.py"), "-e", spec("ignore_quit.py"),
                    "--tc", "inf", "--stall", "600", "--log", logs)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until White is searching
            texts = [p.read_text() for p in logs.glob("ignore_stop-*.log")] if logs.exists() else []
            if any("> go infinite" in text for text in texts):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the game never started")
        process.send_signal(getattr(signal, signame))
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:  # the test failed: still let the arbiter clean up
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    pids = [int(log.stem.rsplit("-", 1)[1]) for log in logs.iterdir()]
    assert len(pids) == 2
    assert all(group_alive(pid) == [] for pid in pids)
    assert os.path.exists(logs)
