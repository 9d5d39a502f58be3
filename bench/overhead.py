"""The arbiter's cost per ply, against the floor measured in the same run.

Both sides of each game are an *instant* engine (``tests/bad_engines/replay.py``:
it answers ``go`` at once with the next move of a recorded legal game, without
any referee), so nearly all the time per ply is the arbiter's plus the pipe
round trip.

* floor: a bare trio ping-pong with the same engine program: write
  ``position ... moves ...`` and ``go`` with clock fields, read until the
  ``bestmove`` line (trio's pipe streams).  No session, no validation, no
  clocks, no record.
* lean floor: the same ping-pong with the pipe primitives the arbiter itself
  uses (one ``os.write``; ``wait_readable`` then ``os.read``), for the cost of
  everything but I/O.
* arbiter: :func:`arbiter.match.play_game` on the same recorded game: codec,
  session, referee validation, clocks, deadlines, info merging, the record.

Wall-clock and CPU time of this process are both measured; each measurement
is repeated, interleaved, and the best round of each kept (the least disturbed
by the rest of a shared machine; the load average is printed).  Goal:
arbiter/floor <= 1.5 in wall-clock time per ply.

Then the peak memory of one running game: Python allocations during a game
(tracemalloc peak), and the process's peak RSS.

Run: ``python3 bench/overhead.py [--games N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
import tracemalloc

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from arbiter.engine import EngineConfig, open_engine  # noqa: E402
from arbiter.games import GAME_NAMES, get_game  # noqa: E402
from arbiter.match import play_game  # noqa: E402

REPLAY = os.path.join(ROOT, "tests", "bad_engines", "replay.py")
GO = b"go p1time 1000000 p2time 1000000 p1inc 0 p2inc 0\n"


def recorded_game(name: str, seed: int) -> list[str]:
    """A legal game of ``name`` played out at random (the engines replay it)."""
    rng = random.Random(seed)
    position, moves = get_game(name).start(), []
    while position.outcome() is None:
        move = rng.choice(position.legal_moves())
        moves.append(move)
        position = position.play(move)
    return moves


class BareEngine:
    """A process and two pipes: the floor has nothing more."""

    def __init__(self, process: trio.Process):
        self.process = process
        self.buffer = b""

    async def line_starting(self, prefix: bytes) -> bytes:
        while True:
            newline = self.buffer.find(b"\n")
            while newline >= 0:
                line, self.buffer = self.buffer[:newline], self.buffer[newline + 1:]
                if line.startswith(prefix):
                    return line
                newline = self.buffer.find(b"\n")
            data = await self.process.stdout.receive_some(65536)
            if not data:
                raise RuntimeError("engine closed its output")
            self.buffer += data


async def floor_games(moves: list[str], games: int) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and plies for ``games`` bare ping-pong games."""
    argv = [sys.executable, REPLAY, *moves]
    processes = [await trio.lowlevel.open_process(argv, stdin=-1, stdout=-1) for _ in range(2)]
    engines = [BareEngine(p) for p in processes]
    try:
        for engine in engines:
            await engine.process.stdin.send_all(b"ugi\n")
            await engine.line_starting(b"ugiok")
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(games):
            for engine in engines:
                await engine.process.stdin.send_all(b"uginewgame\nisready\n")
                await engine.line_starting(b"readyok")
            line = "position startpos"
            for ply, move in enumerate(moves):
                engine = engines[ply % 2]
                await engine.process.stdin.send_all(line.encode() + b"\n" + GO)
                await engine.line_starting(b"bestmove")
                line += (" " if ply else " moves ") + move
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        for process in processes:
            process.kill()
            await process.wait()
    return elapsed, cpu, games * len(moves)


async def lean_floor_games(moves: list[str], games: int) -> tuple[float, float, int]:
    """The floor again, with the arbiter's own pipe primitives (one
    ``os.write``; ``wait_readable`` then ``os.read``) instead of trio's
    streams, whose send_all and receive_some each pass through the scheduler:
    what the arbiter's I/O costs with nothing else."""
    argv = [sys.executable, REPLAY, *moves]
    processes = [await trio.lowlevel.open_process(argv, stdin=-1, stdout=-1) for _ in range(2)]
    fds = [(p.stdin.fileno(), p.stdout.fileno()) for p in processes]
    buffers = [b"", b""]

    async def line_starting(index: int, prefix: bytes) -> None:
        fd = fds[index][1]
        while True:
            buffer = buffers[index]
            newline = buffer.find(b"\n")
            while newline >= 0:
                line, buffer = buffer[:newline], buffer[newline + 1:]
                if line.startswith(prefix):
                    buffers[index] = buffer
                    return
                newline = buffer.find(b"\n")
            await trio.lowlevel.wait_readable(fd)
            buffers[index] = buffer + os.read(fd, 65536)

    try:
        for index in (0, 1):
            os.write(fds[index][0], b"ugi\n")
            await line_starting(index, b"ugiok")
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(games):
            for index in (0, 1):
                os.write(fds[index][0], b"uginewgame\nisready\n")
                await line_starting(index, b"readyok")
            line = "position startpos"
            for ply, move in enumerate(moves):
                os.write(fds[ply % 2][0], line.encode() + b"\n" + GO)
                await line_starting(ply % 2, b"bestmove")
                line += (" " if ply else " moves ") + move
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        for process in processes:
            process.kill()
            await process.wait()
    return elapsed, cpu, games * len(moves)


async def arbiter_games(name: str, moves: list[str], games: int) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and plies for ``games`` games through play_game."""
    config = EngineConfig(cmd=sys.executable, args=[REPLAY, *moves])
    plies = 0
    async with open_engine(config) as white, open_engine(config) as black:
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(games):
            record = await play_game(name, white, black, tc="1000+0")
            plies += len(record.moves)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        assert record.termination == get_game(name).position(None, moves).outcome().termination.value
    return elapsed, cpu, plies


async def peak_memory(name: str, moves: list[str]) -> int:
    """Peak bytes Python allocated while one game ran (engines already started)."""
    config = EngineConfig(cmd=sys.executable, args=[REPLAY, *moves])
    async with open_engine(config) as white, open_engine(config) as black:
        tracemalloc.start()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        await play_game(name, white, black, tc="1000+0")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak - base


def geometric_mean(values: list[float]) -> float:
    product = 1.0
    for value in values:
        product *= value
    return product ** (1 / len(values))


async def main(games: int, rounds: int, names: list[str]) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} (on {os.cpu_count()} cores)")
    print("floor: trio streams ping-pong; lean: the same with os.write/wait_readable/os.read;")
    print("ratio = arbiter / floor (the goal's measure), lean ratio = arbiter / lean floor")
    print(f"{'':<15} {'wall us/ply':^35} {'CPU us/ply of the arbiter process':^35}")
    header = f"{'floor':>7} {'lean':>7} {'arbiter':>7} {'ratio':>5} {'lean':>5}"
    print(f"{'game':<9} {'plies':>5} {header}   {header}  {'peak KiB/game':>13}")
    ratios: dict[str, list[float]] = {"wall": [], "wall lean": [], "cpu": [], "cpu lean": []}
    for index, name in enumerate(names):
        moves = recorded_game(name, seed=index)
        best = {key: float("inf") for key in ("floor", "lean", "arbiter")}
        cpu_best = dict(best)
        for _ in range(rounds):  # interleaved, the best of each kept
            for key, run in (("floor", floor_games(moves, games)),
                             ("lean", lean_floor_games(moves, games)),
                             ("arbiter", arbiter_games(name, moves, games))):
                wall, cpu, plies = await run
                best[key] = min(best[key], wall / plies * 1e6)
                cpu_best[key] = min(cpu_best[key], cpu / plies * 1e6)
        peak = await peak_memory(name, moves)
        cells = []
        for kind, figures in (("wall", best), ("cpu", cpu_best)):
            ratio, lean = figures["arbiter"] / figures["floor"], figures["arbiter"] / figures["lean"]
            ratios[kind].append(ratio)
            ratios[kind + " lean"].append(lean)
            cells.append(f"{figures['floor']:>7.1f} {figures['lean']:>7.1f} {figures['arbiter']:>7.1f} "
                         f"{ratio:>5.2f} {lean:>5.2f}")
        print(f"{name:<9} {len(moves):>5} {cells[0]}   {cells[1]}  {peak / 1024:>13.1f}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"ratio arbiter/floor, geometric mean: wall {geometric_mean(ratios['wall']):.2f} "
          f"(goal <= 1.5), CPU {geometric_mean(ratios['cpu']):.2f}; against the lean floor: "
          f"wall {geometric_mean(ratios['wall lean']):.2f}, CPU {geometric_mean(ratios['cpu lean']):.2f}")
    print(f"peak RSS of the arbiter process: {rss / 1024:.1f} MiB "
          f"(two engines and one game at a time)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each, best kept")
    parser.add_argument("--game", action="append", choices=GAME_NAMES, help="only these games")
    args = parser.parse_args()
    trio.run(main, args.games, args.rounds, args.game or list(GAME_NAMES))
