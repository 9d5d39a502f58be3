"""A bound on the match loop: the match's pure parts driven without trio.

``bench/overhead.py`` and ``bench/tournament.py`` compare the arbiter with a
floor that does only the pipe round trips.  This script measures what the
arbiter's own pure parts cost a ply when no event loop is in the way: the
same :class:`~arbiter.match.state.MatchState` (clocks, referee, record), the
same :class:`~protocol.session.EngineSession`, line splitter and ``info``
keeping, driven by a blocking ``poll(2)`` loop on the engines' raw pipes.
No deadlines, no fault handling, no second engine watched: a lower bound of
any driver built from these parts, not a driver.

Printed, per ply of this process (the instant replay engine on both sides,
one pair of processes per kind for the whole run):

* floor: the bare blocking round trip (write ``position ... moves`` + ``go``,
  read until ``bestmove``), as ``bench/tournament.py``'s floor script;
* bound: the pure parts in the blocking loop;
* trio: :func:`arbiter.match.play_game` (the real driver).

CPU time (median of the rounds, and the ratios to the floor), or with
``--instructions`` callgrind's instruction counts of this process (6 games
minus 2, per ply), which the shared machine's load does not move.

Run: ``python3 bench/blocking.py [--rounds R] [--game NAME] [--instructions]``.
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import subprocess
import sys
import time

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from overhead import GO, REPLAY, callgrind, players, recorded_game  # noqa: E402  (bench/ is the script's directory)

from arbiter.clock import Clock, TimeControl  # noqa: E402
from arbiter.engine.info import Reply, SearchInfo  # noqa: E402
from arbiter.games import GAME_NAMES, Color, Game, get_game  # noqa: E402
from arbiter.match.state import BestMove, GameOver, Go, MatchState  # noqa: E402
from protocol.codec import LineSplitter, is_info_line  # noqa: E402
from protocol.messages import BestMove as BestMoveLine  # noqa: E402
from protocol.messages import IsReady, ReadyOk, Ugi, UgiNewGame, UgiOk  # noqa: E402
from protocol.session import EngineSession  # noqa: E402

#: games per kind per round (and the larger run under --instructions)
GAMES = 6
#: the smaller run under --instructions: (GAMES - FEW) games' difference per ply
FEW = 2


class Pipes:
    """One instant engine process, read with a blocking poll on its raw stdout."""

    def __init__(self, moves: list[str]):
        self.process = subprocess.Popen([sys.executable, REPLAY, *moves], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, bufsize=0)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(self.stdout, False)
        self.poller = select.poll()
        self.poller.register(self.stdout, select.POLLIN)
        self.buffer = b""
        self.session = EngineSession()
        self.splitter = LineSplitter()
        self.info = SearchInfo()

    def read(self) -> bytes:
        self.poller.poll(-1)
        data = os.read(self.stdout, 65536)
        if not data:
            raise RuntimeError("the engine closed its output")
        return data

    def raw_line(self, prefix: bytes) -> None:
        """The floor's read: until a line starting with ``prefix``."""
        while True:
            newline = self.buffer.find(b"\n")
            while newline >= 0:
                line, self.buffer = self.buffer[:newline], self.buffer[newline + 1:]
                if line.startswith(prefix):
                    return
                newline = self.buffer.find(b"\n")
            self.buffer += self.read()

    def message(self, kind: type) -> object:
        """The bound's read: lines through the session until a ``kind``
        (a ``bestmove`` becomes a :class:`Reply`, as the conversation makes it)."""
        while True:
            data = self.read()
            now = time.perf_counter()
            for line in self.splitter.feed(data):
                if is_info_line(line):
                    self.info.keep(line)
                    continue
                msg = self.session.receive(line)
                if type(msg) is kind:
                    if kind is BestMoveLine:
                        return Reply(msg.move, now, self.info.take(), msg.ponder)  # type: ignore[attr-defined]
                    return msg

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def floor_game(pair: list[Pipes], moves: list[str]) -> int:
    for engine in pair:
        os.write(engine.stdin, b"uginewgame\nisready\n")
        engine.raw_line(b"readyok")
    line = b"position startpos"
    for ply, move in enumerate(moves):
        engine = pair[ply % 2]
        os.write(engine.stdin, line + b"\n" + GO)
        engine.raw_line(b"bestmove")
        line += (b" " if ply else b" moves ") + move.encode()
    return len(moves)


def bound_game(game: Game, pair: list[Pipes]) -> int:
    for engine in pair:
        os.write(engine.stdin, engine.session.send(UgiNewGame()) + engine.session.send(IsReady()))
    for engine in pair:
        engine.message(ReadyOk)
    tc = TimeControl.parse("1000+0")
    state = MatchState(game, {Color.WHITE: Clock(tc), Color.BLACK: Clock(tc)},
                       stop_grace={Color.WHITE: 5.0, Color.BLACK: 5.0})
    by_color = {Color.WHITE: pair[0], Color.BLACK: pair[1]}
    action = state.start()
    while type(action) is Go:
        engine = by_color[action.color]
        os.write(engine.stdin, action.position + engine.session.send_go(action.limits, action.mover_is_p1))
        started = time.perf_counter()
        state.record_ply()  # the previous ply, while this engine thinks (as the driver does)
        reply = engine.message(BestMoveLine)
        action = state.receive(BestMove(reply, started))  # type: ignore[arg-type]
    state.record_ply()
    assert type(action) is GameOver, action
    return len(state.moves)


def open_pair(kind: str, moves: list[str]) -> list[Pipes]:
    pair = [Pipes(moves), Pipes(moves)]
    for engine in pair:
        if kind == "bound":
            os.write(engine.stdin, engine.session.send(Ugi()))
            engine.message(UgiOk)
        else:
            os.write(engine.stdin, b"ugi\n")
            engine.raw_line(b"ugiok")
    return pair


def play(kind: str, name: str, moves: list[str], pair: list[Pipes], games: int) -> int:
    game = get_game(name)
    if kind == "floor":
        return sum(floor_game(pair, moves) for _ in range(games))
    return sum(bound_game(game, pair) for _ in range(games))


async def trio_cpu(name: str, moves: list[str], games: int) -> float:
    """CPU seconds a ply of :func:`arbiter.match.play_game` (warmed up)."""
    async with players(moves) as kinds:
        await kinds["arbiter"](name)
        cpu, plies = time.process_time(), 0
        for _ in range(games):
            plies += await kinds["arbiter"](name)
        return (time.process_time() - cpu) / plies


def timing(name: str, rounds: int) -> None:
    moves = recorded_game(name, seed=GAME_NAMES.index(name))
    print(f"{name}: {len(moves)} plies a game, {GAMES} games per kind per round, {rounds} rounds; "
          f"load average {os.getloadavg()[0]:.2f}")
    figures: dict[str, list[float]] = {"floor": [], "bound": [], "trio": []}
    pairs = {kind: open_pair(kind, moves) for kind in ("floor", "bound")}
    try:
        play("bound", name, moves, pairs["bound"], 1)  # warm-up: imports, tables
        for round_ in range(rounds):
            for kind, pair in pairs.items():
                cpu = time.process_time()
                plies = play(kind, name, moves, pair, GAMES)
                figures[kind].append((time.process_time() - cpu) / plies * 1e6)
            figures["trio"].append(trio.run(trio_cpu, name, moves, GAMES) * 1e6)
            floor = figures["floor"][-1]
            print(f"  round {round_ + 1}: floor {floor:6.1f}, bound {figures['bound'][-1]:6.1f} "
                  f"({figures['bound'][-1] / floor:.2f}x), trio {figures['trio'][-1]:6.1f} "
                  f"({figures['trio'][-1] / floor:.2f}x) us CPU a ply")
    finally:
        for pair in pairs.values():
            for engine in pair:
                engine.close()
    bound = statistics.median(b / f for b, f in zip(figures["bound"], figures["floor"], strict=True))
    driver = statistics.median(t / f for t, f in zip(figures["trio"], figures["floor"], strict=True))
    print(f"median: floor {statistics.median(figures['floor']):.1f}, bound "
          f"{statistics.median(figures['bound']):.1f}, trio {statistics.median(figures['trio']):.1f} "
          f"us CPU a ply; bound/floor {bound:.2f}, trio/floor {driver:.2f}")


def instructions(kind: str, name: str, games: int) -> int:
    return callgrind([os.path.abspath(__file__), "--one", kind, name, str(games)])


def one(kind: str, name: str, games: int) -> None:
    """The measured part of --instructions."""
    moves = recorded_game(name, seed=GAME_NAMES.index(name))
    if kind == "trio":
        trio.run(trio_cpu, name, moves, games)  # (its warm-up game is in both counts alike)
        return
    pair = open_pair(kind, moves)
    try:
        play(kind, name, moves, pair, games)
    finally:
        for engine in pair:
            engine.close()


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--game", choices=GAME_NAMES, default="troll")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under callgrind (about 2 minutes)")
    args = parser.parse_args()
    if not args.instructions:
        timing(args.game, args.rounds)
        return
    plies = len(recorded_game(args.game, seed=GAME_NAMES.index(args.game)))
    counts = {kind: (instructions(kind, args.game, GAMES) - instructions(kind, args.game, FEW))
              / ((GAMES - FEW) * plies) for kind in ("floor", "bound", "trio")}
    print(f"{args.game}: instructions a ply of this process (callgrind, {GAMES} games minus {FEW}): "
          + ", ".join(f"{kind} {count:,.0f}" for kind, count in counts.items()))
    print(f"bound/floor {counts['bound'] / counts['floor']:.2f}, trio/floor {counts['trio'] / counts['floor']:.2f}, "
          f"trio/bound {counts['trio'] / counts['bound']:.2f}")


if __name__ == "__main__":
    main()
