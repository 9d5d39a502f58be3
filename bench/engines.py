"""Speed of the sample engines, per game.

For each game, in one run on the same positions (the start and a few
mid-game positions reached by seeded random play):

* baseline: random playouts through the referee alone (plies/s, games/s);
* random: ``choose_move`` calls per second;
* greedy: positions evaluated per second (one per legal move);
* mcts: iterations (= playouts, each cut short and scored by the
  evaluation) per second, and its nodes/s relative to the baseline's plies/s.

Then, with ``--time`` (or alone with ``--time-only``), whether the sample
engines keep their time: each engine plays itself with ``arbiter match``
(real processes and pipes) at each limit of ``--limits`` (default
``st=0.05`` and ``1+0.01``), once with the SDK's measured reserve and once
with its fixed reserve alone (``ARBITER_SDK_RESERVE=fixed``, the baseline),
the two interleaved so both see the same machine.  Per engine, limit and
reserve: the distribution (p50/p90/p99/max, ms) of the ``bestmove`` time the
arbiter's clock measured minus what it allowed (the movetime; with a clock,
the time left on it before the move), and how many moves went over (a move
over ends its game as a time forfeit, so each forfeit is one).

Usage: ``python bench/engines.py [--seconds S] [--games troll,atoll,...]
[--time | --time-only] [--time-game talisman] [--time-games 4] [--limits st=0.05,1+0.01]
[--concurrency 1] [--collector GAMES]``.  Figures only; nothing is asserted.

``--collector GAMES`` adds why the SDK pauses Python's cyclic garbage
collector during a timed search: ``mcts`` in this process at ``go movetime
50``, per search the longest CPU stretch and the longest wall-clock gap
between two looks at its deadline, with the pause and without it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arbiter.games import GAME_NAMES, Position, get_game  # noqa: E402
from protocol import sdk  # noqa: E402
from protocol.sdk import SearchLimits  # noqa: E402
from sample_engines.greedy import GreedyEngine  # noqa: E402
from sample_engines.mcts import MctsEngine  # noqa: E402
from sample_engines.random import RandomEngine  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def bench_positions(game: str, count: int = 4) -> list[Position]:
    positions = [get_game(game).start()]
    rng = random.Random(2024)
    while len(positions) < count:
        position = get_game(game).start()
        for _ in range(rng.randrange(6, 24)):
            if position.outcome() is not None:
                break
            position = position.play(rng.choice(position.legal_moves()))
        if position.outcome() is None and len(position.legal_moves()) > 1:
            positions.append(position)
    return positions


def baseline(game: str, seconds: float) -> tuple[float, float]:
    """Random playouts with the referee alone: (plies/s, games/s)."""
    rng = random.Random(1)
    start = get_game(game).start()
    plies = games = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        position = start
        while position.outcome() is None and position.ply < 1000:
            position = position.play(rng.choice(position.legal_moves()))
            plies += 1
        games += 1
    elapsed = time.perf_counter() - began
    return plies / elapsed, games / elapsed


def per_second(engine_class, game: str, positions: list[Position], seconds: float,
               **options: str) -> tuple[float, float]:
    """(choose_move calls/s, work units/s) where a work unit is what the engine
    counts: legal moves for random, evaluations for greedy, iterations for mcts."""
    engine = engine_class(game)
    engine.set_option("Seed", "1")
    for name, value in options.items():
        engine.set_option(name, value)
    calls = units = 0
    share = seconds / len(positions)
    began = time.perf_counter()
    for position in positions:
        limits = SearchLimits.fixed(seconds=share)
        stop_at = time.perf_counter() + share
        while time.perf_counter() < stop_at:
            engine.choose_move(position, limits if engine_class is MctsEngine else SearchLimits.fixed())
            calls += 1
            if engine_class is MctsEngine:
                units += engine.iterations_done
                break
            units += len(position.legal_moves())
    elapsed = time.perf_counter() - began
    return calls / elapsed, units / elapsed


def overshoots(engine: str, tc: str, *, fixed: bool, game: str, games: int,
               concurrency: int) -> tuple[list[int], int]:
    """``engine`` against itself at ``tc`` through ``arbiter match``: (each
    recorded move's time minus what it was allowed, in ms; time forfeits)."""
    env_word = " env.ARBITER_SDK_RESERVE=fixed" if fixed else ""
    openings = ROOT / "examples" / f"openings-{game}.txt"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "t.db"
        command = [sys.executable, "-m", "arbiter", "match", game, f"{engine} name=a{env_word}",
                   f"{engine} name=b{env_word}", "--tc", tc, "--games", str(games),
                   "-c", str(concurrency), "--db", str(db), "--plain"]
        if openings.exists():
            command += ["--openings", str(openings)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run(command, check=True, env=env, cwd=tmp, capture_output=True)
        with sqlite3.connect(db) as conn:
            rows = conn.execute("select termination, move_data from games").fetchall()
    samples: list[int] = []
    forfeits = 0
    for termination, move_data in rows:
        forfeits += termination == "time-forfeit"
        for ply in json.loads(move_data):
            if ply["clock_ms"] is None:  # a movetime: st=S
                allowed = int(round(float(tc.removeprefix("st=")) * 1000))
            else:  # a clock BASE+INC: what was left before this move
                inc = int(round(float(tc.split("+")[1]) * 1000)) if "+" in tc else 0
                allowed = ply["clock_ms"] - inc + ply["time_ms"]
            samples.append(ply["time_ms"] - allowed)
    return samples, forfeits


def percentile(values: Sequence[float], share: float) -> float:
    """The value below which ``share`` of ``values`` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def time_table(engines: list[str], limits: list[str], game: str, games: int,
               concurrency: int) -> None:
    print(f"\novershoot: bestmove time (arbiter's clock) minus allowed, ms; {game}, "
          f"self-play, {games} games per row, concurrency {concurrency}")
    print(f"{'limit':8} {'engine':7} {'reserve':9} {'moves':>6} {'p50':>6} {'p90':>6} {'p99':>6} "
          f"{'max':>6} {'over':>5}")
    for tc in limits:
        for engine in engines:
            for fixed in (False, True):
                samples, forfeits = overshoots(engine, tc, fixed=fixed, game=game, games=games,
                                               concurrency=concurrency)
                over = forfeits + sum(1 for sample in samples if sample > 0)
                cells = [f"{percentile(samples, q):6.0f}" for q in (0.5, 0.9, 0.99)] if samples else ["     -"] * 3
                top = f"{max(samples):6d}" if samples else "     -"
                print(f"{tc:8} {engine:7} {'fixed' if fixed else 'measured':9} {len(samples):6d} "
                      f"{' '.join(cells)} {top} {over:5d}", flush=True)


def collector_gaps(pause: bool, game: str, games: int) -> tuple[list[float], list[float]]:
    """``mcts`` in this process (an :class:`~protocol.sdk.EngineRunner`, no
    pipes) playing ``games`` games against itself at ``go movetime 50``, the
    SDK's collector pause on or off: per search, the longest CPU stretch
    between two looks at the deadline and the longest wall-clock gap, ms."""
    out = io.StringIO()
    runner = sdk.EngineRunner(MctsEngine(game), stdin=0, stdout=out)
    runner.pause_collector = pause
    runner.handle("uginewgame")
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(games):
        position, moves = get_game(game).start(), list[str]()
        while position.outcome() is None:
            runner.handle(f"position startpos moves {' '.join(moves)}" if moves else "position startpos")
            runner._read_at = time.monotonic()  # as run() stamps the line it read
            runner.handle("go movetime 50")
            runner.wait_search()
            limits = runner.last_limits
            assert limits is not None
            cpu.append(limits.longest_unchecked * 1000)
            wall.append(limits.longest_gap * 1000)
            move = out.getvalue().splitlines()[-1].split()[1]
            moves.append(move)
            position = position.play(move)
    return cpu, wall


def collector_table(game: str, games: int) -> None:
    print(f"\nmcts at go movetime 50 in this process, {game}, {games} self-play games a row: "
          "per search, the longest stretch between two looks at the deadline, ms")
    print(f"{'collector':22} {'searches':>8} {'cpu p50':>8} {'cpu p99':>8} {'cpu max':>8} "
          f"{'wall p50':>9} {'wall p99':>9} {'wall max':>9}")
    for pause in (True, False):
        cpu, wall = collector_gaps(pause, game, games)
        label = "paused (the SDK)" if pause else "running (baseline)"
        print(f"{label:22} {len(cpu):8d} {percentile(cpu, 0.5):8.2f} {percentile(cpu, 0.99):8.2f} "
              f"{max(cpu):8.2f} {percentile(wall, 0.5):9.2f} {percentile(wall, 0.99):9.2f} "
              f"{max(wall):9.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per engine and game")
    parser.add_argument("--games", default=",".join(GAME_NAMES))
    parser.add_argument("--time", action="store_true", help="also the overshoot table")
    parser.add_argument("--time-only", action="store_true", help="only the overshoot table")
    parser.add_argument("--time-game", default="talisman")
    parser.add_argument("--time-games", type=int, default=4, help="games per row")
    parser.add_argument("--limits", default="st=0.05,1+0.01")
    parser.add_argument("--engines", default="random,greedy,mcts")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--collector", type=int, default=0, metavar="GAMES",
                        help="also the collector table, GAMES self-play games a row (in-process)")
    args = parser.parse_args()
    if not args.time_only:
        speed_table(args.games.split(","), args.seconds)
    if args.collector:
        collector_table(args.time_game, args.collector)
    if args.time or args.time_only:
        time_table(args.engines.split(","), args.limits.split(","), args.time_game,
                   args.time_games, args.concurrency)


def speed_table(games: list[str], seconds: float) -> None:
    print(f"{'game':9} {'baseline plies/s':>17} {'games/s':>8} {'random mv/s':>12} "
          f"{'greedy evals/s':>15} {'mcts iter/s':>12} {'mcts/baseline':>14}")
    for game in games:
        positions = bench_positions(game)
        plies, games_per_s = baseline(game, seconds)
        random_calls, _ = per_second(RandomEngine, game, positions, seconds)
        _, greedy_evals = per_second(GreedyEngine, game, positions, seconds)
        _, mcts_iterations = per_second(MctsEngine, game, positions, seconds,
                                        Iterations="10000000")
        print(f"{game:9} {plies:17,.0f} {games_per_s:8,.0f} {random_calls:12,.0f} "
              f"{greedy_evals:15,.0f} {mcts_iterations:12,.0f} {mcts_iterations / plies:14.4f}",
              flush=True)


if __name__ == "__main__":
    main()
