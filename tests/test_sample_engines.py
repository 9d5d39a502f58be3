"""The sample engines and the engine SDK, over real pipes (specs/protocol.md).

A small harness starts ``python -m sample_engines.<name>`` and talks to it
through the codec and an :class:`~protocol.session.EngineSession`, so every
line the engine writes is also checked against the protocol's state machine.
Timeouts here only guard against hangs; nothing measures speed.
"""

from __future__ import annotations

import functools
import io
import os
import queue
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arbiter import sdk
from arbiter.games import Color, get_game
from arbiter.sdk import SearchLimits, query_answer, time_budget_ms
from protocol import messages as m
from protocol.codec import LineSplitter
from protocol.session import EngineSession, SessionState
from sample_engines.geometry import morris_board, talisman_board

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ("random", "greedy", "mcts")
GAMES = ("troll", "atoll", "morris", "talisman")
HANG_GUARD = 60.0  # seconds: only to fail instead of hanging


class EngineProcess:
    """One sample engine over pipes, every line through the codec and session."""

    def __init__(self, name: str, *args: str, stderr_path: Path | None = None):
        self.stderr = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"sample_engines.{name}", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, cwd=ROOT,
        )
        self.session = EngineSession()
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.infos: list[m.Info] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        splitter = LineSplitter()
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        while data := os.read(fd, 65536):
            for line in splitter.feed(data):
                self.lines.put(line)
        last = splitter.close()
        if last is not None:
            self.lines.put(last)
        self.lines.put(None)

    def send(self, msg: m.ArbiterMessage) -> None:
        data = self.session.send(msg)
        self.proc.stdin.write(data)  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def send_raw(self, line: str) -> None:
        self.proc.stdin.write(line.encode() + b"\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def next_message(self, timeout: float = HANG_GUARD) -> m.EngineMessage:
        while True:
            line = self.lines.get(timeout=timeout)
            assert line is not None, "the engine closed its output"
            msg = self.session.receive(line)  # raises on any protocol violation
            if msg is not None:
                return msg

    def expect(self, kind: type, timeout: float = HANG_GUARD):
        """The next message of ``kind``; ``info`` lines on the way are kept."""
        while True:
            msg = self.next_message(timeout)
            if isinstance(msg, kind):
                return msg
            assert isinstance(msg, m.Info), f"expected {kind.__name__}, got {msg.to_line()!r}"
            self.infos.append(msg)

    def handshake(self) -> None:
        self.send(m.Ugi())
        while not isinstance(msg := self.next_message(), m.UgiOk):
            assert isinstance(msg, (m.IdName, m.IdAuthor, m.OptionDecl, m.Info)), msg

    def new_game(self, game: str) -> None:
        self.send(m.SetOption(m.GAME_OPTION, game))
        self.send(m.UgiNewGame())
        self.sync()

    def sync(self) -> None:
        self.send(m.IsReady())
        self.expect(m.ReadyOk)

    def best_move(self, position_msg: m.SetPosition, go: m.Go) -> str:
        self.send(position_msg)
        self.send(go)
        return self.expect(m.BestMove).move

    def quit(self) -> int:
        self.send(m.Quit())
        try:
            return self.proc.wait(timeout=HANG_GUARD)
        finally:
            self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        # The reader must see EOF and finish before stdout is closed: a closed
        # descriptor number is soon reused by the next engine's pipe.
        self.reader.join(timeout=HANG_GUARD)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        if not isinstance(self.stderr, int):  # a file, not subprocess.DEVNULL
            self.stderr.close()


@pytest.fixture
def engine_factory(tmp_path):
    started: list[EngineProcess] = []

    def start(name: str, *args: str) -> EngineProcess:
        engine = EngineProcess(name, *args, stderr_path=tmp_path / f"{name}-{len(started)}.err")
        started.append(engine)
        return engine

    yield start
    for engine in started:
        engine.close()
    for path in tmp_path.glob("*.err"):  # an engine traceback fails the test
        assert "Traceback" not in path.read_text(errors="replace"), path.read_text()


# --- positions with each game's special cases (found with the referee) -------------


@functools.cache
def moves_until(game: str, want: str) -> tuple[str, ...]:
    """Moves of a seeded random game up to a position where ``want`` holds:
    morris: a removal is possible, or flying; talisman: a
    capture is possible.  Deterministic (seeded)."""
    adjacent_morris = morris_board().neighbours
    adjacent_talisman = talisman_board().neighbours

    def holds(position) -> bool:
        legal = position.legal_moves()
        if want == "removal":
            return any("x" in move for move in legal)
        if want == "flying":
            return any("-" in move and move.split("x")[0].split("-")[1]
                       not in adjacent_morris[move.split("-")[0]] for move in legal)
        if want == "capture":
            return any("-" in move and move.split("-")[1] not in adjacent_talisman[move.split("-")[0]]
                       for move in legal)
        raise AssertionError(want)

    for seed in range(20_000):
        rng = random.Random(seed)
        position = get_game(game).start()
        moves: list[str] = []
        while position.outcome() is None and len(moves) < 400:
            if holds(position) and moves:
                return tuple(moves)
            move = rng.choice(position.legal_moves())
            moves.append(move)
            position = position.play(move)
    raise AssertionError(f"no {want} position found in {game}")


#: A Troll game (found by seeded random play) after which Black must play
#: `pass` (specs/games/troll.md): hard-coded because finding one takes seconds.
TROLL_PASS = tuple("""f5 a6 d1 e6 b3 f7 c5 h5 d3 e4 d6 f3 f1 a7 b1 e5 b7 c7 c1 b5 g6 e7 e3 g7
g4 b2 d7 h6 e2 a5 f2 d8 d4 g3 c2 c3 b6 d2 d5 h4 a1 f4 f8 a2 h3 a3 g1 e8 h7 a4 g5 f6 c4 g2 h2
b4 c6 g8 e1""".split())


def test_troll_pass_position_is_a_forced_pass():
    assert get_game("troll").position(None, TROLL_PASS).legal_moves() == ["pass"]


def special_positions(game: str) -> list[m.SetPosition]:
    """Start position, a position string, and the game's special cases
    (specs/games/<game>.md): Troll pass, Atoll swap, Morris removals and
    flying, Talisman captures."""
    start = get_game(game).start()
    positions = [m.SetPosition(), m.SetPosition(start.fen())]
    if game == "troll":
        moves = TROLL_PASS
        positions.append(m.SetPosition(None, moves))  # the engine must answer `pass`
        positions.append(m.SetPosition(None, moves + ("pass",)))
    elif game == "atoll":
        positions.append(m.SetPosition(None, ("f6",)))  # swap is legal
        positions.append(m.SetPosition(None, ("f6", "swap")))
    elif game == "morris":
        removal = moves_until("morris", "removal")
        positions.append(m.SetPosition(None, removal))
        flying = moves_until("morris", "flying")
        positions.append(m.SetPosition(get_game("morris").position(None, flying[:-4]).fen(),
                                       flying[-4:]))
    elif game == "talisman":
        positions.append(m.SetPosition(None, moves_until("talisman", "capture")))
    return positions


def referee_position(game: str, msg: m.SetPosition):
    return get_game(game).position(msg.fen, msg.moves)


# --- handshake, selection, positions, limits -----------------------------------------


@pytest.mark.parametrize("name", ENGINES)
def test_handshake_declares_ids_and_options(engine_factory, name):
    engine = engine_factory(name)
    engine.handshake()
    session = engine.session
    assert session.state is SessionState.IDLE
    assert session.name and session.author
    game_option = session.game_option
    assert game_option is not None and set(game_option.vars) == set(GAMES)
    assert game_option.default == "troll"
    assert session.option("Seed").type == "spin"
    # the SDK reads movestogo, and says so (specs/protocol.md §Arbiter to engine)
    assert session.option("UGI_MovesToGo").type == "check" and session.reads_movestogo
    if name == "mcts":
        assert session.option("Iterations").type == "spin"
    assert engine.quit() == 0


@pytest.mark.parametrize("name", ENGINES)
def test_every_game_every_limit_gives_a_legal_move(engine_factory, name):
    """Each game's special positions under each kind of `go` (specs/protocol.md §go)."""
    engine = engine_factory(name)
    engine.handshake()
    engine.send(m.SetOption("Seed", "7"))
    limits = [m.Go(movetime=40), m.Go(depth=1), m.Go(nodes=30), m.Go(depth=2, nodes=200),
              m.Go(p1time=3000, p2time=3000, p1inc=10, p2inc=10),
              m.Go(p1time=1500, p2time=900, movestogo=5), m.Go(p1time=-5, p2time=-5)]
    turn = 0
    for game in GAMES:
        engine.new_game(game)
        for position_msg in special_positions(game):
            go = limits[turn % len(limits)]
            turn += 1
            position = referee_position(game, position_msg)
            engine.infos.clear()
            move = engine.best_move(position_msg, go)
            assert position.is_legal(move), (game, position_msg.to_line(), go.to_line(), move)
            assert engine.infos, "every sample engine reports info while thinking"
            if position.legal_moves() == ["pass"]:
                assert move == "pass"
    assert engine.quit() == 0


def test_game_from_the_command_line_without_selection(engine_factory):
    engine = engine_factory("random", "--game", "morris")
    engine.handshake()
    assert engine.session.game_option.default == "morris"
    move = engine.best_move(m.SetPosition(), m.Go(depth=1))
    assert get_game("morris").start().is_legal(move)
    assert engine.quit() == 0


def test_seed_makes_random_reproducible(engine_factory):
    games = []
    for _ in range(2):
        engine = engine_factory("random")
        engine.handshake()
        engine.send(m.SetOption("Seed", "12345"))
        engine.new_game("atoll")
        moves: list[str] = []
        for _ in range(6):
            moves.append(engine.best_move(m.SetPosition(None, tuple(moves)), m.Go(nodes=1)))
        games.append(moves)
        engine.quit()
    assert games[0] == games[1]
    get_game("atoll").position(None, games[0])  # and all legal


# --- stop, isready, query, quit -----------------------------------------------------


@pytest.mark.parametrize("name", ENGINES)
def test_go_infinite_answers_isready_and_waits_for_stop(engine_factory, name):
    engine = engine_factory(name)
    engine.handshake()
    engine.new_game("talisman")
    engine.send(m.SetPosition())
    engine.send(m.Go(infinite=True))
    engine.send(m.IsReady())
    engine.expect(m.ReadyOk)  # answered during the search; a bestmove first would fail here
    assert engine.session.state is SessionState.SEARCHING
    engine.send(m.Stop())
    move = engine.expect(m.BestMove).move
    assert get_game("talisman").start().is_legal(move)
    engine.sync()
    assert engine.quit() == 0


def test_quit_during_an_infinite_search_exits(engine_factory):
    engine = engine_factory("mcts")
    engine.handshake()
    engine.send(m.SetPosition())
    engine.send(m.Go(infinite=True))
    assert engine.quit() == 0


def test_stdin_closed_ends_the_engine(engine_factory):
    engine = engine_factory("greedy")
    engine.handshake()
    engine.proc.stdin.close()
    assert engine.proc.wait(timeout=HANG_GUARD) == 0


@pytest.mark.parametrize("game", GAMES)
def test_query_agrees_with_the_referee(engine_factory, game):
    engine = engine_factory("random")
    engine.handshake()
    engine.send(m.SetOption("Seed", "3"))
    engine.new_game(game)
    rng = random.Random(11)
    position = get_game(game).start()
    moves: list[str] = []
    while position.outcome() is None and len(moves) < 300:
        move = rng.choice(position.legal_moves())
        moves.append(move)
        position = position.play(move)
    for prefix in (0, 1, len(moves)):
        pos = get_game(game).position(None, moves[:prefix])
        engine.send(m.SetPosition(None, tuple(moves[:prefix])))
        for what in m.QUERY_WORDS:
            engine.send(m.Query(what))
            assert engine.expect(m.Response).value == query_answer(pos, what)
    final = get_game(game).position(None, moves)
    outcome = final.outcome()
    if outcome is not None:
        p1_won = outcome.winner is get_game(game).first
        engine.send(m.Query("result"))
        expected = "draw" if outcome.winner is None else ("p1win" if p1_won else "p2win")
        assert engine.expect(m.Response).value == expected
    engine.quit()


def test_query_answer_words():
    atoll = get_game("atoll")
    assert query_answer(atoll.start(), "p1turn") == "true"  # Black moves first in Atoll
    assert query_answer(atoll.start().play("f6"), "p1turn") == "false"
    assert query_answer(get_game("troll").start(), "p1turn") == "true"
    assert query_answer(atoll.start(), "gameover") == "false"
    assert query_answer(atoll.start(), "result") == "none"


# --- errors are reported with info string, never fatal --------------------------------


def test_bad_commands_are_reported_and_survived(engine_factory):
    engine = engine_factory("greedy")
    engine.handshake()
    engine.send_raw("setoption name Seed value 99999999999")
    engine.send_raw("setoption name NoSuchOption value 1")
    engine.send_raw("setoption name UGI_Game value chess")
    engine.send_raw("position startpos moves z9")
    engine.send_raw("frobnicate")  # unknown: silently ignored
    engine.sync()
    errors = [i.string for i in engine.infos if i.string and i.string.startswith("error:")]
    assert len(errors) == 4, errors
    assert "outside" in errors[0] and "unknown option" in errors[1] and "chess" in errors[2]
    assert "z9" in errors[3]
    engine.send(m.Go(depth=1))  # no valid position: the engine says so and answers none
    assert engine.expect(m.BestMove).move == "none"
    move = engine.best_move(m.SetPosition(), m.Go(depth=1))
    assert get_game("troll").start().is_legal(move)  # still troll: the bad selection was refused
    assert engine.quit() == 0


def test_a_go_with_unknown_words_is_still_answered(engine_factory):
    """specs/protocol.md §go: the SDK drops what it cannot use and searches."""
    engine = engine_factory("mcts")
    engine.handshake()
    engine.send(m.SetPosition())
    engine.infos.clear()
    engine.send_raw("go wtime 100 ponder depth x depth 1 nodes 50 nodes 7")
    engine.session.send(m.Go(depth=1))  # the session must know a search runs (bytes unused)
    move = engine.expect(m.BestMove).move
    assert get_game("troll").start().is_legal(move)
    warning = next(i.string for i in engine.infos if i.string and i.string.startswith("error:"))
    assert "wtime" in warning and "'go depth 1 nodes 50'" in warning
    assert engine.quit() == 0


# --- the SDK's time management (specs/protocol.md §Python SDK) ------------------------


def test_time_budget_arithmetic():
    assert time_budget_ms(m.Go(movetime=1000), True) == 970
    assert time_budget_ms(m.Go(p1time=60_000, p2time=1_000), True) == pytest.approx(59_970 / 30)
    assert time_budget_ms(m.Go(p1time=60_000, p2time=1_000), False) == pytest.approx(970 / 30)
    with_inc = time_budget_ms(m.Go(p1time=10_000, p2time=10_000, p1inc=1_000), True)
    assert with_inc == pytest.approx(9_970 / 30 + 500)
    assert time_budget_ms(m.Go(p1time=1_000, p2time=1_000, movestogo=1), True) == pytest.approx(485)
    # an increment never lets a move take more than half the clock
    assert time_budget_ms(m.Go(p1time=100, p2time=100, p1inc=5_000), True) == pytest.approx(35)
    assert time_budget_ms(m.Go(p1time=-50, p2time=0), True) == 0
    assert time_budget_ms(m.Go(p1time=60_000, p2time=60_000, movetime=100), True) == 75
    assert time_budget_ms(m.Go(depth=3), True) is None
    assert time_budget_ms(m.Go(infinite=True), True) is None


#: ``go movetime`` of the time test below, and the positions per engine and game
MOVETIME_MS = 50
TIMED_POSITIONS = 12


def _random_positions(game: str, count: int, seed: int) -> list[tuple[str, ...]]:
    """Move lists of ``count`` positions of random games, at random plies, not over."""
    rng, found = random.Random(seed), []
    while len(found) < count:
        position, moves = get_game(game).start(), []
        for _ in range(rng.randrange(120)):
            if position.outcome() is not None:
                break
            moves.append(rng.choice(position.legal_moves()))
            position = position.play(moves[-1])
        if position.outcome() is None:
            found.append(tuple(moves))
    return found


#: Searches of one position before its longest unchecked stretch is judged, the
#: least of them kept: a thread's CPU time on a shared virtual machine counts
#: cache misses and stolen cycles too (5.57 ms once for a 5 ms stretch under
#: load), while a stretch the code really has is there in every search.
UNCHECKED_TRIES = 3

@pytest.mark.parametrize("name", ENGINES)
def test_sample_engines_look_at_their_deadline_often_enough(name):
    """specs/protocol.md §Python SDK: under ``go movetime 50`` each sample
    engine, in every game and many positions, spends at most
    MAX_UNCHECKED_MS of CPU between two looks at its deadline (its SDK's
    work up to ``bestmove`` included).  With the reserve the SDK keeps, that
    answers in time on an unloaded machine.  Measured in the search thread's
    CPU time, so the machine's load cannot change the verdict; the wall
    clock is not asserted on."""
    budget = time_budget_ms(m.Go(movetime=MOVETIME_MS), True)
    assert budget is not None and budget + sdk.MAX_UNCHECKED_MS < MOVETIME_MS - 5  # room for the pipes
    engine_class = {"random": "RandomEngine", "greedy": "GreedyEngine", "mcts": "MctsEngine"}[name]
    module = __import__(f"sample_engines.{name}", fromlist=[engine_class])
    worst: list[tuple[float, str, int]] = []
    for game in GAMES:
        out = io.StringIO()
        runner = sdk.EngineRunner(getattr(module, engine_class)(game), stdin=0, stdout=out)
        for moves in _random_positions(game, TIMED_POSITIONS, seed=len(game)):
            unchecked = []
            for _ in range(UNCHECKED_TRIES):  # the least of a few searches: a stretch the code always has
                runner.handle(m.SetPosition(None, moves).to_line())
                runner.handle(f"go movetime {MOVETIME_MS}")
                runner.wait_search()
                limits = runner.last_limits
                assert limits is not None and limits.budget is not None  # the fixed reserve or a measured larger one
                assert MOVETIME_MS * (1 - sdk.MAX_RESERVE_SHARE) / 1000 <= limits.budget <= budget / 1000
                unchecked.append(limits.longest_unchecked * 1000)
                answer = out.getvalue().splitlines()[-1].split()
                assert answer[0] == "bestmove" and get_game(game).position(None, moves).is_legal(answer[1])
                if unchecked[-1] <= sdk.MAX_UNCHECKED_MS:
                    break
            worst.append((min(unchecked), game, len(moves)))
    longest = max(worst)
    assert longest[0] <= sdk.MAX_UNCHECKED_MS, f"{name}: {longest[0]:.2f} ms unchecked ({longest[1]}, ply {longest[2]})"


def test_the_budget_counts_from_the_moment_go_was_read():
    """The SDK starts a search's clock when it read the ``go`` line, as the
    arbiter's clock starts when it wrote it: setting up the position (a long
    move list replayed) is spent from the budget."""
    from sample_engines.random import RandomEngine

    runner = sdk.EngineRunner(RandomEngine("troll"), stdin=0, stdout=io.StringIO())
    read_at = runner._read_at = 12.5  # as run() stamps each chunk it reads
    runner.handle("go movetime 100")
    runner.wait_search()
    assert runner.last_limits is not None and runner.last_limits.start == read_at


def test_the_reserve_covers_the_measured_overhead():
    """specs/protocol.md §Python SDK: a budget keeps back the larger of the
    fixed reserve and the engine's measured overhead (late answers, stalls
    counted twice, the collection after answering), of a movetime at most
    half; the meter remembers the last OVERHEAD_WINDOW searches."""
    meter = sdk.OverheadMeter()
    assert meter.reserve_ms() == 0
    meter.record(late_ms=-20, stalled_ms=0)  # early and unstalled: nothing to keep back
    assert meter.reserve_ms() == 0
    meter.record(late_ms=3, stalled_ms=4, after_ms=1)
    assert meter.reserve_ms() == 3 + 2 * 4 + 1
    meter.record(late_ms=1, stalled_ms=0)
    assert meter.reserve_ms() == 12  # the largest of the window, not the last
    for _ in range(sdk.OVERHEAD_WINDOW):
        meter.record(late_ms=2, stalled_ms=0)
    assert meter.reserve_ms() == 2  # the spell is forgotten after a window of searches

    go50 = m.Go(movetime=50)
    assert time_budget_ms(go50, True) == 37.5  # a quarter of it before any measure
    assert time_budget_ms(go50, True, reserve_ms=5) == 37.5  # a smaller measure keeps the floor
    assert time_budget_ms(go50, True, reserve_ms=20) == 30
    assert time_budget_ms(go50, True, reserve_ms=400) == 25  # never more than half a movetime
    clock = m.Go(p1time=60_000, p2time=60_000)
    assert time_budget_ms(clock, True, reserve_ms=90) == pytest.approx((60_000 - 90) / 30)


def test_a_stall_is_wall_time_without_cpu_time():
    """SearchLimits.longest_stall: a stretch between two looks spent waiting
    (here asleep: no CPU) counts as a stall, and CPU work does not."""
    limits = SearchLimits.fixed(seconds=1.0)
    limits.begin()
    time.sleep(0.02)
    limits.checked()
    assert limits.longest_stall >= 0.015 and limits.longest_unchecked < 0.015


def test_a_timed_search_is_measured_and_collects_after_answering():
    """The runner records each timed search's overhead (its reserve grows
    from nothing) and leaves the garbage collector on once it answered;
    an untimed search is not measured."""
    import gc

    from sample_engines.random import RandomEngine

    out = io.StringIO()
    runner = sdk.EngineRunner(RandomEngine("troll"), stdin=0, stdout=out)
    runner.handle("go depth 1")
    runner.wait_search()
    assert runner.overhead.reserve_ms() == 0 and gc.isenabled()
    runner.handle("go movetime 100")
    runner.wait_search()
    assert runner.overhead.reserve_ms() > 0 and gc.isenabled()
    assert out.getvalue().count("bestmove") == 2


# --- strength: cannot flake (fixed iterations, fixed seeds) ----------------------------


def _play(game: str, white, black) -> Color | None:
    position = get_game(game).start()
    while (outcome := position.outcome()) is None:
        engine = white if position.to_move is Color.WHITE else black
        position = position.play(engine.choose_move(position, SearchLimits.fixed()))
    return outcome.winner


@pytest.mark.parametrize("game", GAMES)
def test_mcts_beats_random_every_game(game):
    """mcts at a fixed 200 iterations against random, both colours, seeded:
    deterministic, so a loss is a real regression."""
    from sample_engines.mcts import MctsEngine
    from sample_engines.random import RandomEngine

    for index, mcts_color in enumerate((Color.WHITE, Color.BLACK)):
        mcts, rand = MctsEngine(game), RandomEngine(game)
        mcts.set_option("Iterations", "200")
        mcts.set_option("Seed", str(1 + index))
        rand.set_option("Seed", str(100 + index))
        white, black = (mcts, rand) if mcts_color is Color.WHITE else (rand, mcts)
        assert _play(game, white, black) is mcts_color


# --- the SDK survives a buggy engine (in-process: the runner over a pipe) -----------


class _Buggy:
    """Engines whose choose_move misbehaves in the ways an author's bug would."""

    @staticmethod
    def make(behaviour: str):
        from arbiter.sdk import Engine

        class Buggy(Engine):
            name = f"Buggy {behaviour}"

            def choose_move(self, position, limits):
                if behaviour == "raise":
                    raise RuntimeError("oops")
                if behaviour == "none":
                    return None
                return "z99"

        return Buggy


@pytest.mark.parametrize("behaviour", ["raise", "none", "illegal"])
def test_sdk_answers_a_legal_bestmove_whatever_choose_move_does(behaviour):
    import io

    from arbiter.sdk import EngineRunner

    read_end, write_end = os.pipe()
    os.write(write_end, b"ugi\nsetoption name UGI_Game value morris\nposition startpos\ngo depth 1\n")
    os.close(write_end)
    out = io.StringIO()
    EngineRunner(_Buggy.make(behaviour)(), stdin=read_end, stdout=out).run()  # returns at EOF
    os.close(read_end)
    lines = out.getvalue().splitlines()
    assert lines[-1] == "bestmove " + get_game("morris").start().legal_moves()[0]
    assert any(line.startswith("info string error:") for line in lines)
