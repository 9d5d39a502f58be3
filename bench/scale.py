"""Every core: a run's throughput, clock error and coordinator cost as the
concurrency grows, the default settings (``--workers auto``) against one
process (``--workers 1``), in the same run (issue 32).

Each case is ``arbiter match GAME random other --games G --concurrency C
--tc TC`` as a process, into a fresh database, with the random mover on both
sides (its search is a few microseconds and it reports it: ``info time``),
so every figure is the arbiter's:

* games/s: the steady rate, from the games' end times (the middle 80% of the
  run: start-up and the last stragglers left out), and over the whole run;
* lost on time: games ending ``time-forfeit``; the engines' own reported
  search times (max) say whose fault it is: an engine that reports 0-2 ms of
  search and loses on time lost to the arbiter's delay;
* clock error: the time charged to an engine minus the search time it
  reported (``time_ms - engine_time_ms`` of every ply), p50 and p99;
* coordinator CPU per game: the ``arbiter`` process's own CPU
  (``RUSAGE_SELF`` at its exit, start-up included) over the games; with
  ``--marginal`` also the marginal figure of the default settings at the
  largest concurrency ((CPU of G games - CPU of G/2 games) / (G/2));
* machine busy: the CPU of the whole process tree (the arbiter, its workers,
  the engines) over the wall time and the cores.

Concurrency is 1x, 4x and 8x the cores (``--multiples``), ``--per-slot`` games
per slot.  Run: ``python3 bench/scale.py [--game morris] [--tc 1+0.01]
[--per-slot 8] [--multiples 1,4,8] [--cores N] [--marginal] [--out FILE.json]``.
Figures and their history: bench/README.md §Worker processes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Runs ``python3 -m arbiter ...`` and writes its own RUSAGE_SELF CPU
#: seconds to ``$CPU_OUT`` at exit: the coordinator's CPU alone.
WRAPPER = r"""
import atexit, os, resource, runpy, sys
def _report():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open(os.environ["CPU_OUT"], "w") as out:
        out.write(repr(usage.ru_utime + usage.ru_stime))
atexit.register(_report)
sys.argv = ["arbiter"] + sys.argv[1:]
runpy.run_module("arbiter", run_name="__main__", alter_sys=True)
"""

_CASES = itertools.count(1)

#: Seconds one case may run: a guard against a hang, not a measure.
CASE_LIMIT = 1800


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_case(game: str, tc: str, games: int, concurrency: int, workers: str,
             folder: str) -> dict[str, object]:
    """One ``arbiter match`` process; its figures."""
    db = os.path.join(folder, f"c{concurrency}-w{workers}-g{games}-{next(_CASES)}.db")  # a fresh file each
    cpu_out = db + ".cpu"
    env = dict(os.environ, CPU_OUT=cpu_out,
               PYTHONPATH=ROOT + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else ""))
    argv = [sys.executable, "-c", WRAPPER, "match", game, "random", "name=other cmd='python3 -m sample_engines.random'", "--games", str(games),
            "--concurrency", str(concurrency), "--tc", tc, "--workers", workers, "--db", db,
            "--plain", "--new"]
    began = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        raise
    wall = time.monotonic() - began
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"case c{concurrency} workers {workers} failed ({proc.returncode}): {err[-2000:]}")
    with open(cpu_out) as file:
        coordinator = float(file.read())
    tree = usage.ru_utime + usage.ru_stime  # the arbiter and every descendant it waited for
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("select termination, end_time, move_data from games").fetchall()
    finally:
        conn.close()
    ends = sorted(datetime.fromisoformat(row[1]).timestamp() for row in rows if row[1])
    steady = float("nan")
    if len(ends) >= 10:
        low, high = ends[len(ends) // 10], ends[(len(ends) * 9) // 10]
        if high > low:
            steady = ((len(ends) * 9) // 10 - len(ends) // 10) / (high - low)
    errors: list[float] = []
    reported: list[float] = []
    for _, _, moves in rows:
        for ply in json.loads(moves or "[]"):
            if ply.get("engine_time_ms") is not None:
                errors.append(ply["time_ms"] - ply["engine_time_ms"])
                reported.append(ply["engine_time_ms"])
    forfeits = sum(1 for row in rows if row[0] == "time-forfeit")
    return {
        "concurrency": concurrency, "workers": workers, "games": len(rows), "wall_s": round(wall, 2),
        "games_per_s": round(len(rows) / wall, 1), "steady_games_per_s": round(steady, 1),
        "lost_on_time": forfeits, "reported_search_ms_max": max(reported, default=None),
        "clock_error_p50_ms": percentile(errors, 0.5), "clock_error_p99_ms": percentile(errors, 0.99),
        "coordinator_cpu_s": round(coordinator, 3),
        "coordinator_ms_per_game": round(1000 * coordinator / max(1, len(rows)), 2),
        "tree_cpu_s": round(tree, 2), "busy_share": round(tree / (wall * cores()), 3),
    }


def show(result: dict[str, object]) -> None:
    print(f"  c={result['concurrency']:>4} workers={result['workers']:>4}: "
          f"{result['games']} games in {result['wall_s']} s, {result['games_per_s']} games/s "
          f"(steady {result['steady_games_per_s']}), lost on time {result['lost_on_time']} "
          f"(engines' search <= {result['reported_search_ms_max']} ms), clock error p50/p99 "
          f"{result['clock_error_p50_ms']}/{result['clock_error_p99_ms']} ms, coordinator "
          f"{result['coordinator_ms_per_game']} ms CPU/game, machine busy "
          f"{100 * float(result['busy_share']):.0f}%", flush=True)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="morris")
    parser.add_argument("--tc", default="1+0.01")
    parser.add_argument("--per-slot", type=int, default=8, help="games per slot")
    parser.add_argument("--multiples", default="1,4,8", help="concurrency as multiples of the cores")
    parser.add_argument("--cores", type=int, default=None, help="the cores to scale by (default: this machine's)")
    parser.add_argument("--marginal", action="store_true",
                        help="also the default settings' marginal coordinator CPU per game at the largest concurrency")
    parser.add_argument("--out", default=None, help="write every figure as JSON here too")
    args = parser.parse_args()
    machine = args.cores or cores()
    multiples = [int(m) for m in args.multiples.split(",")]
    results: list[dict[str, object]] = []
    print(f"bench/scale.py: {args.game} at {args.tc}, {args.per_slot} games per slot, "
          f"{machine} cores, concurrency {', '.join(f'{m}x' for m in multiples)}", flush=True)
    with tempfile.TemporaryDirectory(prefix="arbiter-scale-") as folder:
        for multiple in multiples:
            concurrency = multiple * machine
            games = max(2, args.per_slot * concurrency // 2 * 2)
            row = {}
            for workers in ("1", "auto"):
                result = run_case(args.game, args.tc, games, concurrency, workers, folder)
                show(result)
                results.append(result)
                row[workers] = result
            ratio = float(row["auto"]["games_per_s"]) / max(1e-9, float(row["1"]["games_per_s"]))  # type: ignore[arg-type]
            print(f"  {multiple}x the cores: default / --workers 1 games/s = {ratio:.2f}", flush=True)
            if args.out:
                with open(args.out, "w") as file:
                    json.dump(results, file, indent=1)
        if args.marginal:
            concurrency = multiples[-1] * machine
            games = max(2, args.per_slot * concurrency // 2 * 2)
            half = run_case(args.game, args.tc, games // 2, concurrency, "auto", folder)
            full = next(r for r in results if r["concurrency"] == concurrency and r["workers"] == "auto")
            marginal = 1000 * (float(full["coordinator_cpu_s"]) - float(half["coordinator_cpu_s"])) / max(  # type: ignore[arg-type]
                1, int(full["games"]) - int(half["games"]))  # type: ignore[call-overload]
            print(f"  marginal coordinator CPU per game at c={concurrency}: {marginal:.2f} ms "
                  f"(whole run {full['coordinator_ms_per_game']} ms)", flush=True)
            results.append({"marginal_ms_per_game": round(marginal, 3), "concurrency": concurrency})
    if args.out:
        with open(args.out, "w") as file:
            json.dump(results, file, indent=1)


if __name__ == "__main__":
    main()
