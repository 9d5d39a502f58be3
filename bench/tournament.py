"""The whole path: the ``arbiter match`` process's CPU per ply, against the floor.

``bench/overhead.py`` times the match loop inside one process.  This one
times what a user runs: ``arbiter match`` as a process, with its records,
JSON, the store, standings and the display, every game committed the moment
it ends.  Both engines are the instant replay engine
(``tests/bad_engines/replay.py``: it answers ``go`` at once with the next
move of a recorded legal game), so nearly all the CPU is the arbiter's.

* arbiter: ``python3 -m arbiter match GAME A B --games N`` into a fresh
  database; its own CPU (user + system of the arbiter process alone, not of
  its engines: ``RUSAGE_SELF`` read at exit by a small wrapper).
* floor: a bare script doing the same pipe round trips on the same engine
  program (two processes, ``uginewgame``/``isready`` per game, then
  ``position ... moves ...`` + ``go`` -> ``bestmove`` per ply, blocking
  ``os.write``/``os.read``), measured the same way.

Each side runs with a small and a large number of games; the marginal CPU
per ply is (large - small) / (plies large - plies small), so start-up
(interpreter, imports, engine start) cancels out.  Each round measures both
sides; the median over rounds of each figure and of their ratio is printed.
Goal (issue 11): arbiter/floor <= 2.5.

Run: ``python3 bench/tournament.py [--rounds R] [--game NAME] [--small N --large N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from overhead import recorded_game  # noqa: E402  (bench/ is the script's directory)

from arbiter.games import GAME_NAMES  # noqa: E402

REPLAY = os.path.join(ROOT, "tests", "bad_engines", "replay.py")

#: The floor plays this many times the arbiter's games: a floor ply costs
#: about a tenth of the arbiter's, so equal game counts would leave its
#: marginal figure within the noise of the process's start and end.
FLOOR_SCALE = 10

#: Runs a module (``-m`` style) and writes its own RUSAGE_SELF CPU seconds to
#: the file named by ``$CPU_OUT`` at exit (atexit runs on ``sys.exit``).
WRAPPER = r"""
import atexit, os, resource, runpy, sys
def _report():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open(os.environ["CPU_OUT"], "w") as out:
        out.write(repr(usage.ru_utime + usage.ru_stime))
atexit.register(_report)
module = sys.argv[1]
sys.argv = [module] + sys.argv[2:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""

#: The floor: the same round trips as a match, nothing else.
FLOOR = r"""
import os, subprocess, sys
replay, games, moves = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
procs = [subprocess.Popen([sys.executable, replay] + moves, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, bufsize=0) for _ in range(2)]
buffers = [b"", b""]
def until(i, prefix):
    while True:
        nl = buffers[i].find(b"\n")
        while nl >= 0:
            line, buffers[i] = buffers[i][:nl], buffers[i][nl + 1:]
            if line.startswith(prefix):
                return line
            nl = buffers[i].find(b"\n")
        data = os.read(procs[i].stdout.fileno(), 65536)
        if not data:
            raise SystemExit("engine closed its output")
        buffers[i] += data
for i in range(2):
    os.write(procs[i].stdin.fileno(), b"ugi\n")
    until(i, b"ugiok")
go = b"go p1time 1000000 p2time 1000000 p1inc 0 p2inc 0\n"
for game in range(games):
    for i in range(2):
        os.write(procs[i].stdin.fileno(), b"uginewgame\nisready\n")
        until(i, b"readyok")
    line = b"position startpos"
    for ply, move in enumerate(moves):
        i = (ply + game) % 2
        os.write(procs[i].stdin.fileno(), line + b"\n" + go)
        until(i, b"bestmove")
        line += (b" " if ply else b" moves ") + move.encode()
for p in procs:
    p.stdin.close()
    p.wait()
"""


def own_cpu(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds of the process that runs ``argv`` (a module and its
    arguments, under :data:`WRAPPER`), not of its children."""
    with tempfile.NamedTemporaryFile("r", suffix=".cpu") as out:
        run_env = dict(env, CPU_OUT=out.name)
        result = subprocess.run([sys.executable, "-c", WRAPPER] + argv, env=run_env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            raise SystemExit(f"{' '.join(argv[:3])} failed ({result.returncode}): {result.stderr[-2000:]}")
        return float(out.read())


def arbiter_cpu(name: str, moves: list[str], games: int, workdir: str) -> tuple[float, int]:
    """CPU of ``arbiter match`` for ``games`` games, and the plies it stored."""
    db = os.path.join(workdir, f"bench-{games}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    cmd = shlex.join([sys.executable, REPLAY] + moves)
    engines = [f"cmd={shlex.quote(cmd)} name={side}" for side in ("a", "b")]
    cpu = own_cpu(["arbiter", "match", name, *engines, "--games", str(games), "--tc", "1000+0",
                   "--db", db], dict(os.environ, PYTHONPATH=ROOT, COLUMNS="100"))
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT move_data FROM games").fetchall()  # the moves (specs/storage.md)
    plies = sum(len(json.loads(row[0])) for row in rows)
    if len(rows) != games:
        raise SystemExit(f"arbiter match stored {len(rows)} games of {games}")
    return cpu, plies


def floor_cpu(moves: list[str], games: int, workdir: str) -> tuple[float, int]:
    """CPU of the floor script for ``games`` games, and its plies."""
    path = os.path.join(workdir, "bench_floor.py")
    if not os.path.exists(path):
        with open(path, "w") as script:
            script.write(FLOOR)
    env = dict(os.environ, PYTHONPATH=workdir)
    return own_cpu(["bench_floor", REPLAY, str(games), *moves], env), games * len(moves)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--game", choices=GAME_NAMES, default="troll")
    parser.add_argument("--small", type=int, default=2, help="games in the small run (default 2)")
    parser.add_argument("--large", type=int, default=20, help="games in the large run (default 20)")
    args = parser.parse_args()
    moves = recorded_game(args.game, 1)
    print(f"{args.game}: {len(moves)} plies per game, {args.small} and {args.large} games per run, "
          f"{args.rounds} rounds; load average {os.getloadavg()[0]:.2f}")
    ours, floors, ratios = [], [], []
    with tempfile.TemporaryDirectory() as workdir:
        for round_ in range(args.rounds):
            a_small, pa_small = arbiter_cpu(args.game, moves, args.small, workdir)
            a_large, pa_large = arbiter_cpu(args.game, moves, args.large, workdir)
            f_small, pf_small = floor_cpu(moves, args.small * FLOOR_SCALE, workdir)
            f_large, pf_large = floor_cpu(moves, args.large * FLOOR_SCALE, workdir)
            arbiter_per_ply = (a_large - a_small) / (pa_large - pa_small) * 1e6
            floor_per_ply = (f_large - f_small) / (pf_large - pf_small) * 1e6
            ours.append(arbiter_per_ply)
            floors.append(floor_per_ply)
            ratios.append(arbiter_per_ply / floor_per_ply)
            print(f"  round {round_ + 1}: arbiter {arbiter_per_ply:7.1f} us/ply, floor {floor_per_ply:6.1f} us/ply, "
                  f"ratio {ratios[-1]:.2f}")
    print(f"median: arbiter process {statistics.median(ours):.1f} us CPU per ply, floor "
          f"{statistics.median(floors):.1f} us, arbiter/floor {statistics.median(ratios):.2f} (goal <= 2.5)")


if __name__ == "__main__":
    main()
