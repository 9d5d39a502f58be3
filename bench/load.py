"""The arbiter under load: many games at once, short time controls.

Three parts, each made of real tournament runs (``arbiter.tournament``) with
real engine processes and a real SQLite file in a temporary directory:

1. **Loaded clocks.** A round-robin of thinking engines (``sample_engines.mcts``,
   which spends its clock) at concurrency = 2 x the cores, tc ``1+0.01``:
   time forfeits (goal: 0 -- cutechess-cli loses games to time at high
   concurrency), the clock error per move (the think time the arbiter measured
   minus the ``info time`` the engine reported: pipe and scheduling latency,
   median and p99), games per second, and the arbiter's peak memory.
2. **Start-up waves.** Random engines (``sample_engines.random``, which need
   no time), tc ``1+0.01``, at concurrency 16, 32 and 64, two games per
   worker (the first wave of games is played by freshly started engines), with
   this tree's code and with another revision's (``--against``, default
   ``main``, unpacked with ``git archive``), the runs alternating, each in its
   own process: time forfeits (in the first wave and after), failed
   handshakes, and where the time of the moves went -- the engines' own
   reported search times, the time outside their searches (measured minus
   reported: pipes, and waiting for a core), the arbiter's event-loop lag (how
   late a 5 ms sleep wakes up), and how busy the machine's cores were.  A
   forfeit with an engine-reported time near zero, a small loop lag and busy
   cores is an engine waiting for a core (the engines starving), not the
   arbiter.
3. **Throughput.** Instant engines (``tests/bad_engines/replay.py``: the next move
   of a recorded game, at once) at concurrency 1, 2 and 4: games per second
   and the ratio to concurrency 1 -- on a machine with C cores the ratio can
   reach about min(concurrency, C / 3) (each game is three busy processes);
   that it scales at all shows the arbiter is not the bottleneck.

Run: ``python3 bench/load.py [--games N] [--game troll] [--tc 1+0.01]
[--skip-clocks] [--skip-waves] [--skip-throughput] [--waves 16,32,64]
[--against REF|none]``.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from typing import Any

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAY = os.path.join(ROOT, "tests", "bad_engines", "replay.py")  # the instant engine the overhead bench uses too

#: the concurrencies of the start-up waves (the issue's: 8, 16 and 32 x 2 cores)
WAVE_CONCURRENCY = "16,32,64"
#: how often the loop-lag probe sleeps (s): short enough to see every stall
LAG_PROBE = 0.005
#: how often the engines' scheduler statistics are read (s): each engine
#: lives for two games, so at most this much of its end goes unseen
SCHED_PROBE = 0.5


def _use_tree(tree: str) -> None:
    """Import ``arbiter`` from ``tree`` (this one, or the revision compared)."""
    sys.path.insert(0, tree)


def _tournament_config(**settings: Any):
    """A TournamentConfig of the tree in use: in ``arbiter.config`` since
    issue 11, in ``arbiter.tournament`` before."""
    try:
        module = importlib.import_module("arbiter.config")
    except ImportError:
        module = importlib.import_module("arbiter.tournament")
    return module.TournamentConfig(**settings)


def run_tournament(config, directory: str, main_extra=None, **options: Any
                   ) -> tuple[float, float, list[dict], Any]:
    """Play ``config`` into a fresh database; (wall seconds, this process's CPU
    seconds, stored game rows, the Store's events).  ``main_extra`` is an
    async callable run beside the tournament (cancelled when it ends);
    ``options`` go to the Tournament."""
    from arbiter.run.coordinator import Coordinator
    from arbiter.store import Store
    from arbiter.tournament import open_tournament

    path = os.path.join(directory, f"load-{time.monotonic_ns()}.db")
    with Store(path) as store:
        tournament_id, _ = open_tournament(store, config)
        tournament = Coordinator(config, store, tournament_id, **options)

        async def main():
            async with trio.open_nursery() as nursery:
                if main_extra is not None:
                    nursery.start_soon(main_extra)
                result = await tournament.run()
                nursery.cancel_scope.cancel()
            return result

        started, cpu = time.perf_counter(), time.process_time()
        result = trio.run(main)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        if result.status != "finished":
            raise SystemExit(f"bench tournament ended {result.status}: {result.note}")
        return seconds, cpu, store.games(tournament_id), store.events(tournament_id)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


# --------------------------------------------------------------------------
# 1. Loaded clocks
# --------------------------------------------------------------------------


def loaded_clocks(args, directory: str) -> None:
    from arbiter.engine import EngineConfig

    cores = os.cpu_count() or 1
    concurrency = 2 * cores
    engines = [EngineConfig(cmd=f"{sys.executable} -m sample_engines.mcts", name=f"mcts{i}",
                            options={"Seed": str(i + 1)}) for i in range(2)]
    games = args.games or 4 * concurrency
    config = _tournament_config(game=args.game, engines=engines, games=games, tc=args.tc,
                                random_plies=2, seed=1, concurrency=concurrency,
                                name="bench load")
    seconds, cpu, rows, _ = run_tournament(config, directory)
    forfeits = sum(1 for r in rows if r["termination"] == "time-forfeit")
    errors = [m["time_ms"] - m["engine_time_ms"] for r in rows for m in r["move_data"]
              if m.get("engine_time_ms") is not None]
    moves = sum(len(r["move_data"]) for r in rows)
    terminations: dict[str, int] = {}
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


# --------------------------------------------------------------------------
# 2. Start-up waves
# --------------------------------------------------------------------------


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy, total) jiffies of all cores since boot, from /proc/stat (Linux)."""
    try:
        with open("/proc/stat") as file:
            fields = [int(x) for x in file.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def _schedstat(path: str) -> tuple[int, int] | None:
    """(ns on a core, ns waiting for one) of a task, from its schedstat (Linux)."""
    try:
        with open(path) as file:
            run, wait, _ = file.read().split()
    except (OSError, ValueError):
        return None
    return int(run), int(wait)


def _children_schedstat(parent: int) -> dict[int, tuple[int, int]]:
    """:func:`_schedstat` of every child process of ``parent`` (the engines)."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as file:
                ppid = int(file.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and (stat := _schedstat(f"/proc/{name}/schedstat")) is not None:
            found[int(name)] = stat
    return found


def waves_child(spec: dict[str, Any]) -> dict[str, Any]:
    """One start-up-wave run, in this process (``--waves-child``): what
    :func:`start_up_waves` prints, as JSON-able data."""
    from arbiter.engine import EngineConfig

    engines = [EngineConfig(cmd=f"{sys.executable} -m sample_engines.random", name=f"random{i}",
                            options={"Seed": str(i + 1)}) for i in range(2)]
    config = _tournament_config(game=spec["game"], engines=engines, games=spec["games"],
                                tc=spec["tc"], random_plies=2, seed=1,
                                concurrency=spec["concurrency"], name="bench start-up waves")
    lags: list[float] = []
    engines_sched: dict[int, tuple[int, int]] = {}

    async def lag_probe() -> None:
        while True:
            asked = trio.current_time()
            await trio.sleep(LAG_PROBE)
            lags.append(trio.current_time() - asked - LAG_PROBE)

    async def sched_probe() -> None:  # in a thread: the scan of /proc is no work of the loop's
        while True:
            engines_sched.update(await trio.to_thread.run_sync(_children_schedstat, os.getpid()))
            await trio.sleep(SCHED_PROBE)

    async def probe() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lag_probe)
            nursery.start_soon(sched_probe)

    loop_sched = _schedstat("/proc/self/schedstat")
    ticks = _cpu_ticks()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    options = {"startups": spec["startups"]} if spec.get("startups") else {}
    seconds, cpu, rows, events = run_tournament(config, spec["directory"], probe, **options)
    after, engines_cpu = _cpu_ticks(), resource.getrusage(resource.RUSAGE_CHILDREN)
    loop_after = _schedstat("/proc/self/schedstat")
    loop_wait = (loop_after[1] - loop_sched[1]) / 1e9 if loop_sched and loop_after else None
    busy = None
    if ticks is not None and after is not None and after[1] > ticks[1]:
        busy = (after[0] - ticks[0]) / (after[1] - ticks[1])
    return {
        "seconds": seconds, "arbiter_cpu": cpu, "busy": busy,
        "engines_cpu": (engines_cpu.ru_utime + engines_cpu.ru_stime
                        - children.ru_utime - children.ru_stime),
        "lag_ms": [1000 * lag for lag in lags],
        "loop_wait": loop_wait,
        "engines_wait": sum(wait for _, wait in engines_sched.values()) / 1e9 if engines_sched else None,
        "handshake_failures": sum(1 for e in events if e["kind"] == "handshake-failed"),
        "games": [{"start": r["start_time"], "end": r["end_time"], "termination": r["termination"],
                   "detail": r["detail"], "white": r["white"], "black": r["black"],
                   "result": r["result"],
                   "moves": [(m["color"], m["time_ms"], m.get("engine_time_ms"))
                             for m in r["move_data"]]} for r in rows],
    }


def _run_child(tree: str, spec: dict[str, Any]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": tree}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--tree", tree,
                           "--waves-child", json.dumps(spec)],
                          cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"start-up wave run in {tree} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def _unpack(ref: str, directory: str) -> str | None:
    """The code of revision ``ref`` of this repository, in ``directory``."""
    target = os.path.join(directory, "against")
    os.makedirs(target)
    archive = os.path.join(directory, "against.tar")
    done = subprocess.run(["git", "-C", ROOT, "archive", "-o", archive, ref],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"  (no comparison: git archive {ref}: {done.stderr.strip()})")
        return None
    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")
    return target


def _in_play(games: list[dict[str, Any]]) -> tuple[float, int]:
    """Games in play at once: (mean over the span of the games, peak)."""
    spans = [(datetime.datetime.fromisoformat(g["start"]), datetime.datetime.fromisoformat(g["end"]))
             for g in games]
    if not spans:
        return 0.0, 0
    first, last = min(s for s, _ in spans), max(e for _, e in spans)
    total = sum((e - s).total_seconds() for s, e in spans)
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return total / max(1e-9, (last - first).total_seconds()), peak


def _forfeit_lines(games: list[dict[str, Any]], limit: int = 3) -> list[str]:
    """What the first forfeits looked like: the loser's own moves, measured and reported."""
    lines = []
    for game in [g for g in games if g["termination"] == "time-forfeit"][:limit]:
        color = _losers(game)
        own = [m for m in game["moves"] if m[0] == color]
        measured = sum(m[1] for m in own)
        reported = sum(m[2] or 0 for m in own)
        lines.append(f"      forfeit: {game['detail']}; before it, {len(own)} moves took "
                     f"{measured} ms on its clock, {reported} ms by its own reports")
    return lines


def _losers(game: dict[str, Any]) -> str | None:
    """The colour that lost on time (``white``/``black``)."""
    if game["termination"] != "time-forfeit":
        return None
    return "white" if game["result"] == "0-1" else "black"


def _summary(run: dict[str, Any], concurrency: int) -> dict[str, Any]:
    games = sorted(run["games"], key=lambda g: g["start"])
    forfeits = [g for g in games if g["termination"] == "time-forfeit"]
    first_wave = [g for g in games[:concurrency] if g["termination"] == "time-forfeit"]
    moves = [m for g in games for m in g["moves"] if m[2] is not None]
    reported = [m[2] for m in moves]
    outside = [m[1] - m[2] for m in moves]
    loser_reported = [m[2] for g in forfeits for m in g["moves"]
                      if m[0] == _losers(g) and m[2] is not None]
    mean, peak = _in_play(games)
    return {"forfeits": len(forfeits), "first_wave": len(first_wave), "games": len(games),
            "in_play": f"games in play: mean {mean:.1f}, peak {peak}",
            "reported": reported, "outside": outside, "loser_reported": loser_reported}


def _wave_line(label: str, run: dict[str, Any], summary: dict[str, Any]) -> str:
    return (f"    {label:<10} time forfeits {summary['forfeits']:>3} of {summary['games']} "
            f"(first wave {summary['first_wave']}), failed handshakes "
            f"{run['handshake_failures']}, {run['seconds']:.1f} s; {summary['in_play']}")


def _where_line(run: dict[str, Any], summary: dict[str, Any]) -> str:
    lag = run["lag_ms"]
    busy = "?" if run["busy"] is None else f"{100 * run['busy']:.0f}%"
    losers = summary["loser_reported"]
    moves = max(1, len(summary["reported"]))
    waits = "?"
    if run.get("engines_wait") is not None and run.get("loop_wait") is not None:
        waits = (f"{1000 * run['engines_wait'] / moves:.0f} ms per move for the engines, "
                 f"{1000 * run['loop_wait'] / moves:.1f} for the arbiter's loop")
    return (f"      waiting for a core: {waits}; mean time outside the search "
            f"{statistics.fmean(summary['outside'] or [0]):.0f} ms per move\n"
            f"      engine-reported search p99 {percentile(summary['reported'], 0.99):.0f} ms"
            f" (losers of forfeits: max {max(losers) if losers else 0} ms); outside the search "
            f"p50 {percentile(summary['outside'], 0.5):.0f} / p99 "
            f"{percentile(summary['outside'], 0.99):.0f} ms; arbiter loop lag p50 "
            f"{percentile(lag, 0.5):.1f} / p99 {percentile(lag, 0.99):.1f} / max "
            f"{max(lag, default=0):.0f} ms; cores busy {busy}; CPU arbiter "
            f"{run['arbiter_cpu']:.1f} s, engines {run['engines_cpu']:.1f} s")


def start_up_waves(args, directory: str) -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    print(f"start-up waves: {args.game}, random vs random, tc {args.tc}, 2 games per worker, "
          f"{cores} cores; this tree against {args.against}")
    against = None if args.against == "none" else _unpack(args.against, directory)
    trees = [("this tree", ROOT)] + ([(args.against, against)] if against else [])
    for step, concurrency in enumerate(int(c) for c in args.waves.split(",")):
        print(f"  concurrency {concurrency} ({concurrency / cores:g} x the cores)")
        spec = {"game": args.game, "tc": args.tc, "concurrency": concurrency,
                "games": 2 * concurrency, "directory": directory}
        order = trees if step % 2 == 0 else trees[::-1]  # neither always runs first
        results = {label: _run_child(tree, {**spec, "startups": args.startups if tree == ROOT else 0})
                   for label, tree in order}
        for label, _ in trees:
            run = results[label]
            summary = _summary(run, concurrency)
            print(_wave_line(label, run, summary))
            print(_where_line(run, summary))
            for line in _forfeit_lines(run["games"]):
                print(line)


# --------------------------------------------------------------------------
# 3. Throughput
# --------------------------------------------------------------------------


def recorded_game(game_name: str, seed: int) -> list[str]:
    from arbiter.games import get_game

    rng = random.Random(seed)
    position = get_game(game_name).start()
    moves = []
    while not position.is_over():
        move = rng.choice(sorted(position.legal_moves()))
        moves.append(move)
        position = position.play(move)
    return moves


def throughput(args, directory: str) -> None:
    from arbiter.engine import EngineConfig

    moves = recorded_game(args.game, 7)
    engines = [EngineConfig(cmd=f"{sys.executable} {REPLAY}", args=list(moves), name=f"instant{i}")
               for i in range(2)]
    games = args.instant_games
    print(f"throughput: {games} games of {len(moves)} plies between instant engines "
          f"({args.game}, tc 10+0.1), engines reused")
    base = None
    for concurrency in (1, 2, 4):
        config = _tournament_config(game=args.game, engines=engines, games=games, tc="10+0.1",
                                    concurrency=concurrency, name=f"bench throughput {concurrency}")
        best: tuple[float, float] | None = None
        for _ in range(args.repeat):
            seconds, cpu, rows, _ = run_tournament(config, directory)
            assert len(rows) == games
            if best is None or seconds < best[0]:
                best = (seconds, cpu)
        assert best is not None
        rate = games / best[0]
        base = base or rate
        print(f"  concurrency {concurrency}:      {rate:7.1f} games/s  "
              f"{rate * len(moves):8.0f} plies/s  x{rate / base:.2f} vs concurrency 1  "
              f"(arbiter CPU {100 * best[1] / best[0]:.0f}% of one core, "
              f"{1e6 * best[1] / (games * len(moves)):.0f} us per ply)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--game", default="troll")
    parser.add_argument("--tc", default="1+0.01")
    parser.add_argument("--games", type=int, default=0,
                        help="games of the loaded-clock run (default 4 x concurrency)")
    parser.add_argument("--instant-games", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=2, help="best of N throughput runs")
    parser.add_argument("--skip-clocks", action="store_true")
    parser.add_argument("--skip-waves", action="store_true")
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--waves", default=WAVE_CONCURRENCY,
                        help=f"concurrencies of the start-up waves (default {WAVE_CONCURRENCY})")
    parser.add_argument("--startups", type=int, default=0,
                        help="engine start-ups at once in this tree's start-up waves "
                             "(default: the arbiter's own limit)")
    parser.add_argument("--against", default="main",
                        help="the revision the start-up waves compare with ('none': no comparison)")
    parser.add_argument("--tree", default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--waves-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    _use_tree(args.tree)
    if args.waves_child:
        print(json.dumps(waves_child(json.loads(args.waves_child))))
        return
    with tempfile.TemporaryDirectory() as directory:
        if not args.skip_clocks:
            loaded_clocks(args, directory)
        if not args.skip_waves:
            start_up_waves(args, directory)
        if not args.skip_throughput:
            throughput(args, directory)


if __name__ == "__main__":
    main()
