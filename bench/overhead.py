"""The arbiter's cost per ply, against the floor measured in the same run.

Both sides of each game are an *instant* engine (``tests/bad_engines/replay.py``:
it answers ``go`` at once with the next move of a recorded legal game, without
any referee), so nearly all the time per ply is the arbiter's plus the pipe
round trip.

The floor and the lean floor play on two bare processes of that engine
(pipes for stdin and stdout, nothing more), the arbiter on two ``Engine`` of
the same program; every pair stays up for the whole measurement.

* floor: a bare trio ping-pong: write
  ``position ... moves ...`` and ``go`` with clock fields, read until the
  ``bestmove`` line (trio's pipe streams).  No session, no validation, no
  clocks, no record.
* lean floor: the same ping-pong through the arbiter's own transport
  (:class:`arbiter.engine.transport.PipeTransport`: one ``os.write``;
  ``wait_readable`` then ``os.read``; lines split by the protocol's
  splitter), for the cost of everything but I/O.
* arbiter: :func:`arbiter.match.play_game` on the same recorded game: codec,
  session, referee validation, clocks, deadlines, info merging, the record.

Wall-clock and CPU time of this process are both measured.  Each round plays
a few games of each kind in turn; the ratio is taken within each round and
the median over the rounds is printed, so that a slow spell of the shared
machine (a neighbour's burst) weighs on both sides of a ratio alike (the load
average is printed too).  Goal: arbiter/floor <= 1.5 in wall-clock time per ply.

Then the peak memory of one running game: Python allocations during a game
(tracemalloc peak), and the process's peak RSS.

Run: ``python3 bench/overhead.py [--rounds R] [--games N] [--game NAME ...]``.

``--instructions`` counts instead of timing: each side runs under valgrind's
callgrind (instructions executed by the arbiter process only, not by the
engines), with 2 and then 6 games, and the difference per ply is printed.
Instruction counts do not depend on what else the shared machine is doing,
so they show a change of a few percent that wall-clock time hides; they
include every per-game cost (setup, record) spread over the game's plies.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from arbiter.engine import Engine, EngineConfig, PipeTransport, open_engine  # noqa: E402
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
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stdin, self.stdout = process.stdin, process.stdout
        self.buffer = b""

    async def line_starting(self, prefix: bytes) -> bytes:
        while True:
            newline = self.buffer.find(b"\n")
            while newline >= 0:
                line, self.buffer = self.buffer[:newline], self.buffer[newline + 1:]
                if line.startswith(prefix):
                    return line
                newline = self.buffer.find(b"\n")
            data = await self.stdout.receive_some(65536)
            if not data:
                raise RuntimeError("engine closed its output")
            self.buffer += data


async def floor_game(engines: list[BareEngine], moves: list[str]) -> int:
    """One game of bare ping-pong on the engines' own pipes (trio's pipe
    streams): ``uginewgame``/``isready``, then ``position``/``go`` ->
    ``bestmove`` for every ply.  Returns the plies."""
    for engine in engines:
        await engine.stdin.send_all(b"uginewgame\nisready\n")
        await engine.line_starting(b"readyok")
    line = "position startpos"
    for ply, move in enumerate(moves):
        engine = engines[ply % 2]
        await engine.stdin.send_all(line.encode() + b"\n" + GO)
        await engine.line_starting(b"bestmove")
        line += (" " if ply else " moves ") + move
    return len(moves)


class LeanEngine:
    """The floor again, through the arbiter's own transport
    (:class:`~arbiter.engine.transport.PipeTransport`: one ``os.write``;
    ``wait_readable`` then ``os.read``; the protocol's line splitter) instead
    of trio's streams, whose send_all and receive_some each pass through the
    scheduler: what the arbiter's I/O costs with nothing else."""

    def __init__(self, process: trio.Process):
        assert process.stdin is not None and process.stdout is not None
        self.transport = PipeTransport(process.stdin, process.stdout)

    async def line_starting(self, prefix: str) -> None:
        while True:
            lines, _, end = await self.transport.receive()
            if any(line.startswith(prefix) for line in lines):
                return
            if end is not None:
                raise RuntimeError("engine closed its output")


async def lean_floor_game(engines: list[LeanEngine], moves: list[str]) -> int:
    for engine in engines:
        await engine.transport.send(b"uginewgame\nisready\n")
        await engine.line_starting("readyok")
    line = "position startpos"
    for ply, move in enumerate(moves):
        engine = engines[ply % 2]
        await engine.transport.send(line.encode() + b"\n" + GO)
        await engine.line_starting("bestmove")
        line += (" " if ply else " moves ") + move
    return len(moves)


async def arbiter_game(name: str, white: Engine, black: Engine) -> int:
    """One game through :func:`arbiter.match.play_game`: codec, session,
    referee validation, clocks, deadlines, info merging, the record."""
    record = await play_game(name, white, black, tc="1000+0")
    return len(record.moves)


@asynccontextmanager
async def players(moves: list[str]) -> AsyncIterator[dict[str, Callable[[str], Awaitable[int]]]]:
    """By kind, a function playing one game of ``moves``: the floor and the
    lean floor on two bare processes of the instant engine (started with
    pipes for stdin and stdout, nothing else), the arbiter on two
    :class:`~arbiter.engine.Engine` of the same program.  Each pair stays up
    for the whole measurement, so rounds compare plies, not start-ups."""
    argv = [sys.executable, REPLAY, *moves]
    processes = [await trio.lowlevel.open_process(argv, stdin=-1, stdout=-1) for _ in range(2)]
    try:
        bare = [BareEngine(process) for process in processes]
        for engine in bare:
            await engine.stdin.send_all(b"ugi\n")
            await engine.line_starting(b"ugiok")
        lean = [LeanEngine(process) for process in processes]
        config = EngineConfig(cmd=sys.executable, args=argv[1:])
        async with open_engine(config) as white, open_engine(config) as black:
            yield {
                "floor": lambda name: floor_game(bare, moves),
                "lean": lambda name: lean_floor_game(lean, moves),
                "arbiter": lambda name: arbiter_game(name, white, black),
            }
    finally:
        for process in processes:
            process.kill()
            await process.wait()


async def peak_memory(name: str, moves: list[str]) -> int:
    """Peak bytes Python allocated while one game ran (engines already started)."""
    async with players(moves) as play:
        tracemalloc.start()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        await play["arbiter"](name)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak - base


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def geometric_mean(values: list[float]) -> float:
    product = 1.0
    for value in values:
        product *= value
    return product ** (1 / len(values))


async def main(rounds: int, games: int, names: list[str]) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} (on {os.cpu_count()} cores)")
    print("floor: trio streams ping-pong; lean: the same through the arbiter's PipeTransport;")
    print("ratio = arbiter / floor (the goal's measure), lean ratio = arbiter / lean floor;")
    print(f"each round plays {games} game(s) of each kind on the same two engine processes; "
          f"medians of {rounds} rounds")
    print(f"{'':<15} {'wall us/ply':^35} {'CPU us/ply of the arbiter process':^35}")
    header = f"{'floor':>7} {'lean':>7} {'arbiter':>7} {'ratio':>5} {'lean':>5}"
    print(f"{'game':<9} {'plies':>5} {header}   {header}  {'peak KiB/game':>13}")
    ratios: dict[str, list[float]] = {"wall": [], "wall lean": [], "cpu": [], "cpu lean": []}
    clock, cpu_clock = time.perf_counter, time.process_time
    for name in names:
        moves = recorded_game(name, seed=GAME_NAMES.index(name))
        per_ply: dict[str, list[float]] = {}  # "<kind> <wall|cpu>" -> us per ply, by round
        async with players(moves) as play:
            await play["arbiter"](name)  # warm-up: imports, caches
            for _ in range(rounds):
                for kind, game in play.items():
                    wall, cpu, plies = clock(), cpu_clock(), 0
                    for _ in range(games):
                        plies += await game(name)
                    wall, cpu = clock() - wall, cpu_clock() - cpu
                    per_ply.setdefault(f"{kind} wall", []).append(wall / plies * 1e6)
                    per_ply.setdefault(f"{kind} cpu", []).append(cpu / plies * 1e6)
        peak = await peak_memory(name, moves)
        cells = []
        for measure in ("wall", "cpu"):
            floor, lean, arbiter = (per_ply[f"{kind} {measure}"] for kind in ("floor", "lean", "arbiter"))
            # the ratio of each round's games (played back to back), then their median:
            # a slow spell of the shared machine touches both sides of a ratio
            ratio = median([a / f for a, f in zip(arbiter, floor, strict=False)])
            lean_ratio = median([a / f for a, f in zip(arbiter, lean, strict=False)])
            ratios[measure].append(ratio)
            ratios[measure + " lean"].append(lean_ratio)
            cells.append(f"{median(floor):>7.1f} {median(lean):>7.1f} {median(arbiter):>7.1f} "
                         f"{ratio:>5.2f} {lean_ratio:>5.2f}")
        print(f"{name:<9} {len(moves):>5} {cells[0]}   {cells[1]}  {peak / 1024:>13.1f}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"ratio arbiter/floor, geometric mean: wall {geometric_mean(ratios['wall']):.2f} "
          f"(goal <= 1.5), CPU {geometric_mean(ratios['cpu']):.2f}; against the lean floor: "
          f"wall {geometric_mean(ratios['wall lean']):.2f}, CPU {geometric_mean(ratios['cpu lean']):.2f}")
    print(f"peak RSS of the arbiter process: {rss / 1024:.1f} MiB "
          f"(two engines and one game at a time)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def count_instructions(kind: str, name: str, games: int) -> int:
    """Instructions the Python process executes for ``games`` games of
    ``kind`` ("floor" or "arbiter"), start-up included, under callgrind."""
    return callgrind([os.path.abspath(__file__), "--one", kind, name, str(games)])


def callgrind(script: list[str]) -> int:
    """Instructions a Python process running ``script`` (a path and its
    arguments) executes, start-up included, under callgrind."""
    if shutil.which("valgrind") is None:
        raise SystemExit("counting instructions needs valgrind (Debian package valgrind)")
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, *script]
    env = dict(os.environ, PYTHONHASHSEED="0")  # the same dict layouts in every run
    run = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in callgrind's output:\n{run.stderr[-2000:]}")
    return int(found.group(1))


def instructions_report(names: list[str]) -> None:
    print("instructions per ply of the arbiter process (callgrind; 6 games minus 2, per ply)")
    print(f"{'game':<9} {'plies':>5} {'floor':>9} {'arbiter':>9} {'ratio':>6}")
    ratios = []
    for name in names:
        plies = len(recorded_game(name, seed=GAME_NAMES.index(name)))
        per_ply = {}
        for kind in ("floor", "arbiter"):
            few, more = (count_instructions(kind, name, games) for games in (2, 6))
            per_ply[kind] = (more - few) / (4 * plies)
        ratio = per_ply["arbiter"] / per_ply["floor"]
        ratios.append(ratio)
        print(f"{name:<9} {plies:>5} {per_ply['floor']:>9.0f} {per_ply['arbiter']:>9.0f} {ratio:>6.2f}")
    print(f"ratio arbiter/floor, geometric mean: {geometric_mean(ratios):.2f}")


async def one_run(kind: str, name: str, games: int) -> None:
    """The measured part of --instructions: ``games`` games of one kind."""
    async with players(recorded_game(name, seed=GAME_NAMES.index(name))) as play:
        for _ in range(games):
            await play[kind](name)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:  # a run under callgrind (see count_instructions)
        trio.run(one_run, sys.argv[2], sys.argv[3], int(sys.argv[4]))
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9,
                        help="rounds (games of each kind in turn; medians are printed)")
    parser.add_argument("--games", type=int, default=5,
                        help="games of each kind per round, back to back (fewer flatters the "
                             "arbiter: a single game of each in turn leaves both with cold caches, "
                             "which costs the small floor more)")
    parser.add_argument("--game", action="append", choices=GAME_NAMES, help="only these games")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under callgrind instead of timing")
    args = parser.parse_args()
    if args.instructions:
        instructions_report(args.game or list(GAME_NAMES))
    else:
        trio.run(main, args.rounds, args.games, args.game or list(GAME_NAMES))
