"""Speed of the sample engines, per game.

For each game, in one run on the same positions (the start and a few
mid-game positions reached by seeded random play):

* baseline: random playouts through the referee alone (plies/s, games/s);
* random: ``choose_move`` calls per second;
* greedy: positions evaluated per second (one per legal move);
* mcts: iterations (= playouts, each cut short and scored by the
  evaluation) per second, and its nodes/s relative to the baseline's plies/s.

Usage: ``python bench/engines.py [--seconds S] [--games troll,atoll,...]``.

``--overshoot`` measures instead whether the sample engines keep their time
(issue 30): real ``arbiter match`` runs of each engine against itself at each
limit (``--limits st=0.05,st=0.1``: ``go movetime``), on ``--game``; per ply
the time the arbiter charged minus the limit (negative: under it), as
p50/p90/p99/max, the plies over the limit and the games lost on time.  With
``--baseline REV`` the engines of commit REV (``git archive``, as
``bench/web.py`` does) play the same runs in the same process order, one
after the other, so the two are measured under the same load.
Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arbiter.games import GAME_NAMES, Position, get_game  # noqa: E402
from arbiter.sdk import SearchLimits  # noqa: E402
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


ROOT = str(Path(__file__).resolve().parent.parent)
OVERSHOOT_ENGINES = tuple(os.environ.get("BENCH_ENGINES", "random,greedy,mcts").split(","))


def overshoot_run(engine: str, limit: str, game: str, games: int, concurrency: int,
                  tree: str, folder: str) -> dict[str, object]:
    """``arbiter match`` of ``engine`` against itself at ``limit`` (this
    tree's arbiter; the engines from ``tree``): every ply's overshoot."""
    db = os.path.join(folder, f"{engine}-{limit}-{len(os.listdir(folder))}.db")
    cmd = f"env PYTHONPATH={tree} python3 -m sample_engines.{engine}"
    argv = [sys.executable, "-m", "arbiter", "match", game, f"name={engine}-a cmd='{cmd}'",
            f"name={engine}-b cmd='{cmd}'", "--tc", limit, "--games", str(games),
            "--concurrency", str(concurrency), "--workers", "1", "--db", db, "--plain", "--new"]
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run(argv, env=env, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   check=True)
    movetime = float(limit.split("=")[1]) * 1000
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("select termination, move_data, detail from games").fetchall()
    finally:
        conn.close()
    over = [ply["time_ms"] - movetime for _, moves, _ in rows for ply in json.loads(moves or "[]")]
    for termination, moves, detail in rows:  # the ply that lost is not among the moves: its time is
        found = re.search(r"bestmove after ([0-9.]+) s", detail or "")
        if termination == "time-forfeit" and found:  # in the ending's detail
            over.append(float(found[1]) * 1000 - movetime)
            if os.environ.get("BENCH_SHOW_FORFEITS"):
                print(f"    forfeit at ply {len(json.loads(moves or '[]')) + 1}: {detail}")
    over.sort()
    return {"plies": len(over), "over": over, "lost": sum(1 for row in rows if row[0] == "time-forfeit"),
            "games": len(rows)}


def show_overshoot(label: str, engine: str, limit: str, result: dict[str, object]) -> None:
    over = result["over"]
    assert isinstance(over, list)

    def q(share: float) -> str:
        return f"{over[min(len(over) - 1, int(share * len(over)))]:+4.0f}" if over else "   -"
    print(f"  {label:9} {engine:7} {limit:8} plies {result['plies']:5}  overshoot ms p50 {q(0.5)} "
          f"p90 {q(0.9)} p99 {q(0.99)} max {q(1.0)}  plies over {sum(1 for x in over if x > 0):3}  "
          f"lost on time {result['lost']}/{result['games']}", flush=True)


def overshoot(args: argparse.Namespace) -> None:
    print(f"bench/engines.py --overshoot: {args.game}, {args.match_games} games per run, "
          f"concurrency {args.concurrency}, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        trees = [("this tree", ROOT)]
        if args.baseline:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from web import extract_baseline
            trees.insert(0, (f"{args.baseline}", extract_baseline(args.baseline, folder)))
        runs = os.path.join(folder, "runs")
        os.makedirs(runs)
        for limit in args.limits.split(","):
            for engine in OVERSHOOT_ENGINES:
                for label, tree in trees:
                    show_overshoot(label, engine, limit, overshoot_run(
                        engine, limit, args.game, args.match_games, args.concurrency, tree, runs))
    print(f"  (load average now {os.getloadavg()[0]:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="per engine and game")
    parser.add_argument("--games", default=",".join(GAME_NAMES))
    parser.add_argument("--overshoot", action="store_true", help="time kept in real matches instead")
    parser.add_argument("--limits", default="st=0.05,st=0.1", help="--overshoot: the time controls")
    parser.add_argument("--game", default="talisman", help="--overshoot: the game")
    parser.add_argument("--match-games", type=int, default=8, help="--overshoot: games per run")
    parser.add_argument("--concurrency", type=int, default=1, help="--overshoot: games at once")
    parser.add_argument("--baseline", default=None, help="--overshoot: also the engines of this commit")
    args = parser.parse_args()
    if args.overshoot:
        overshoot(args)
        return
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
