"""The arbiter under load: many games at once, short time controls.

Two parts, each a real tournament run in this process (``arbiter.tournament``)
with real engine processes and a real SQLite file in a temporary directory:

1. **Loaded clocks.** A round-robin of thinking engines (``sample_engines.mcts``,
   which spends its clock) at concurrency = 2 x the cores, tc ``1+0.01``:
   time forfeits (goal: 0 -- cutechess-cli loses games to time at high
   concurrency), the clock error per move (the think time the arbiter measured
   minus the ``info time`` the engine reported: pipe and scheduling latency,
   median and p99), games per second, and the arbiter's peak memory.
2. **Throughput.** Instant engines (``tests/bad_engines/replay.py``: the next move
   of a recorded game, at once) at concurrency 1, 2 and 4: games per second
   and the ratio to concurrency 1 -- on a machine with C cores the ratio can
   reach about min(concurrency, C / 3) (each game is three busy processes);
   that it scales at all shows the arbiter is not the bottleneck.

Run: ``python3 bench/load.py [--games N] [--game troll] [--tc 1+0.01]``.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from arbiter.engine import EngineConfig  # noqa: E402
from arbiter.games import get_game  # noqa: E402
from arbiter.store import Store  # noqa: E402
from arbiter.tournament import Tournament, TournamentConfig, open_tournament  # noqa: E402

REPLAY = os.path.join(ROOT, "tests", "bad_engines", "replay.py")  # the instant engine the overhead bench uses too


def run_tournament(config: TournamentConfig, directory: str) -> tuple[float, float, list[dict]]:
    """Play ``config`` into a fresh database; (wall seconds, this process's CPU
    seconds, stored game rows)."""
    path = os.path.join(directory, f"load-{time.monotonic_ns()}.db")
    with Store(path) as store:
        tournament_id, _ = open_tournament(store, config)
        tournament = Tournament(config, store, tournament_id)
        started, cpu = time.perf_counter(), time.process_time()
        result = trio.run(tournament.run)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        if result.status != "finished":
            raise SystemExit(f"bench tournament ended {result.status}: {result.note}")
        return seconds, cpu, store.games(tournament_id)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def loaded_clocks(args, directory: str) -> None:
    cores = os.cpu_count() or 1
    concurrency = 2 * cores
    engines = [EngineConfig(cmd=f"{sys.executable} -m sample_engines.mcts", name=f"mcts{i}",
                            options={"Seed": str(i + 1)}) for i in range(2)]
    games = args.games or 4 * concurrency
    config = TournamentConfig(game=args.game, engines=engines, games=games, tc=args.tc,
                              random_plies=2, seed=1, concurrency=concurrency,
                              name="bench load")
    seconds, cpu, rows = run_tournament(config, directory)
    forfeits = sum(1 for r in rows if r["termination"] == "time-forfeit")
    errors = [m["time_ms"] - m["engine_time_ms"] for r in rows for m in r["move_data"]
              if m.get("engine_time_ms") is not None]
    moves = sum(len(r["move_data"]) for r in rows)
    terminations = {}
    for r in rows:
        terminations[r["termination"]] = terminations.get(r["termination"], 0) + 1
    print(f"loaded clocks: {args.game}, {len(rows)} games of mcts vs mcts, tc {args.tc}, "
          f"concurrency {concurrency} on {cores} cores")
    print(f"  time forfeits:      {forfeits} of {len(rows)} games (goal 0)")
    print(f"  clock error:        median {statistics.median(errors):.1f} ms, "
          f"p99 {percentile(errors, 0.99):.1f} ms, max {max(errors):.1f} ms "
          f"over {len(errors)} of {moves} moves (measured - engine-reported)")
    print(f"  games per second:   {len(rows) / seconds:.2f} ({seconds:.1f} s; arbiter CPU "
          f"{cpu:.1f} s = {100 * cpu / seconds:.0f}% of one core)")
    print(f"  terminations:       {', '.join(f'{k} {v}' for k, v in sorted(terminations.items()))}")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"  arbiter peak RSS:   {peak_kib / 1024:.1f} MiB (this process, all runs so far)")


def recorded_game(game_name: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    position = get_game(game_name).start()
    moves = []
    while not position.is_over():
        move = rng.choice(sorted(position.legal_moves()))
        moves.append(move)
        position = position.play(move)
    return moves


def throughput(args, directory: str) -> None:
    moves = recorded_game(args.game, 7)
    engines = [EngineConfig(cmd=f"{sys.executable} {REPLAY}", args=list(moves), name=f"instant{i}")
               for i in range(2)]
    games = args.instant_games
    print(f"throughput: {games} games of {len(moves)} plies between instant engines "
          f"({args.game}, tc 10+0.1), engines reused")
    base = None
    for concurrency in (1, 2, 4):
        config = TournamentConfig(game=args.game, engines=engines, games=games, tc="10+0.1",
                                  concurrency=concurrency, name=f"bench throughput {concurrency}")
        best = None
        for _ in range(args.repeat):
            seconds, cpu, rows = run_tournament(config, directory)
            assert len(rows) == games
            if best is None or seconds < best[0]:
                best = (seconds, cpu)
        rate = games / best[0]
        base = base or rate
        print(f"  concurrency {concurrency}:      {rate:7.1f} games/s  "
              f"{rate * len(moves):8.0f} plies/s  x{rate / base:.2f} vs concurrency 1  "
              f"(arbiter CPU {100 * best[1] / best[0]:.0f}% of one core, "
              f"{1e6 * best[1] / (games * len(moves)):.0f} us per ply)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="troll")
    parser.add_argument("--tc", default="1+0.01")
    parser.add_argument("--games", type=int, default=0,
                        help="games of the loaded-clock run (default 4 x concurrency)")
    parser.add_argument("--instant-games", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=2, help="best of N throughput runs")
    parser.add_argument("--skip-clocks", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        if not args.skip_clocks:
            loaded_clocks(args, directory)
        throughput(args, directory)


if __name__ == "__main__":
    main()
