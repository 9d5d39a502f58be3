"""Speed of the sample engines, per game.

For each game, in one run on the same positions (the start and a few
mid-game positions reached by seeded random play):

* baseline: random playouts through the referee alone (plies/s, games/s);
* random: ``choose_move`` calls per second;
* greedy: positions evaluated per second (one per legal move);
* mcts: iterations (= playouts, each cut short and scored by the
  evaluation) per second, and its nodes/s relative to the baseline's plies/s.

Usage: ``python bench/engines.py [--seconds S] [--games troll,atoll,...]``.
Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arbiter.games import GAME_NAMES, Position, get_game  # noqa: E402
from protocol.sdk import SearchLimits  # noqa: E402
from sample_engines.greedy import GreedyEngine  # noqa: E402
from sample_engines.mcts import MctsEngine  # noqa: E402
from sample_engines.random import RandomEngine  # noqa: E402


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per engine and game")
    parser.add_argument("--games", default=",".join(GAME_NAMES))
    args = parser.parse_args()
    print(f"{'game':9} {'baseline plies/s':>17} {'games/s':>8} {'random mv/s':>12} "
          f"{'greedy evals/s':>15} {'mcts iter/s':>12} {'mcts/baseline':>14}")
    for game in args.games.split(","):
        positions = bench_positions(game)
        plies, games = baseline(game, args.seconds)
        random_calls, _ = per_second(RandomEngine, game, positions, args.seconds)
        _, greedy_evals = per_second(GreedyEngine, game, positions, args.seconds)
        _, mcts_iterations = per_second(MctsEngine, game, positions, args.seconds,
                                        Iterations="10000000")
        print(f"{game:9} {plies:17,.0f} {games:8,.0f} {random_calls:12,.0f} "
              f"{greedy_evals:15,.0f} {mcts_iterations:12,.0f} {mcts_iterations / plies:14.4f}",
              flush=True)


if __name__ == "__main__":
    main()
