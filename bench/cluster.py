"""A tournament on a Dask cluster: the coordinator's cost, the throughput, the stop.

Three figures (issue 14), each printed as the median over ``--rounds``:

* **coordinator CPU per stored game**: ``arbiter tournament --cluster
  tcp://127.0.0.1:PORT`` against a scheduler and two ``arbiter worker``
  processes of their own (so the scheduler's and the workers' CPU are not
  the coordinator's), its own CPU (``RUSAGE_SELF`` at exit:
  ``bench/tournament.py``'s wrapper) for a small and a large number of games;
  the marginal CPU per game is (large - small) / (games large - games small),
  so start-up (imports, connecting) cancels out.  Goal: <= 1 ms per game.
  Beside it, the same figure for a local run (``arbiter tournament``
  without ``--cluster``: its CPU includes playing the games), measured the
  same way in the same round, to show what the machine's load does to both.
* **throughput**: the same tournament played locally and on ``--cluster
  local:2``, the same ``--concurrency``, one after the other in each round:
  games per second of wall time between the first game's start and the last
  game's end (the records' times: a local cluster's start-up is left out),
  and the whole command's wall time beside it.
* **parts**: where the coordinator's CPU per game goes, each part timed
  alone in this process (``time.process_time``) on the records of the
  large run, in batches of :data:`BATCH` games as the coordinator sees
  them: the batch's JSON text read, the records parsed
  (``GameRecord.from_dict``), the games stored in one transaction per
  batch (``Store.save_game``), the standings once per batch, a display
  line per game; and the pairs taken (``Tournament._take_pairs``) from a
  schedule of :data:`TAKE_GAMES` pending games, where a cost that grows
  with the pending games would show.
* **stop**: ``--cluster local:2`` with every engine held at its first move
  (``tests/engines_for_tournament/gate.py``), SIGINT to the coordinator,
  then the seconds until no engine process is left, and until the command
  has exited.

The engines are the instant replay engine (``tests/bad_engines/replay.py``)
playing a recorded game, so nearly all the CPU is the arbiter's and Dask's.

Run: ``python3 bench/cluster.py [--rounds R] [--small N --large N] [--concurrency C]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from overhead import recorded_game  # noqa: E402  (bench/ is the script's directory)
from tournament import own_cpu  # noqa: E402

from arbiter.procs import processes_with  # noqa: E402

REPLAY = os.path.join(ROOT, "tests", "bad_engines", "replay.py")
GATE = os.path.join(ROOT, "tests", "engines_for_tournament", "gate.py")
GAME = "troll"
#: seconds any step may take before the benchmark gives up (a hang, not a figure)
GUARD = 600
#: games per batch in the parts' figures: the coordinator's largest batch
#: (``MAX_BATCH`` pairs of two games)
BATCH = 32


def environment() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=ROOT, COLUMNS="100")


#: seconds the idle coordinator's CPU is read over (``/proc`` counts it in
#: clock ticks of 10 ms: 10 s reads it to 1 ms a second)
IDLE_SECONDS = 10.0


#: what the held engines carry in their environment (:func:`held_cpu` counts them)
HELD_TAG = f"arbiter-bench-held-{uuid.uuid4()}"


def write_engines(workdir: str) -> str:
    """An engines file of two replay engines, ``a`` and ``b``, and two gate
    engines held at their first move until the file ``never`` exists (it
    never does), ``held-a`` and ``held-b`` (tagged ``TAG``, to be counted)."""
    moves = recorded_game(GAME, 1)
    cmd = shlex.join([sys.executable, REPLAY] + moves)
    gate = shlex.join([sys.executable, GATE])
    path = os.path.join(workdir, "engines.toml")
    with open(path, "w") as out:
        for name in ("a", "b"):
            out.write(f"[engines.{name}]\ncmd = {json.dumps(cmd)}\n")
            out.write(f"[engines.held-{name}]\ncmd = {json.dumps(gate)}\n"
                      f"env = {{GATE = {json.dumps(os.path.join(workdir, 'never'))}, "
                      f"GATE_AFTER = \"0\", TAG = \"{HELD_TAG}\"}}\n")
    return path


def fresh_db(workdir: str, name: str) -> str:
    db = os.path.join(workdir, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    return db


def tournament_args(engines: str, games: int, concurrency: int, db: str,
                    prefix: str = "") -> list[str]:
    """``arbiter tournament`` of engines ``a`` and ``b`` (``prefix``: ``held-``)."""
    return ["arbiter", "tournament", "-g", GAME, "-e", f"{prefix}a", "-e", f"{prefix}b",
            "--engines", engines,
            "--games", str(games), "--tc", "1000+0", "-c", str(concurrency), "--plain",
            "--db", db]


def stored(db: str, games: int) -> list[tuple[str, str]]:
    """(start, end) of each stored game; SystemExit unless all ``games`` are there."""
    with sqlite3.connect(db) as conn:
        records = [json.loads(r[0]) for r in conn.execute("SELECT record FROM games")]
    if len(records) != games:
        raise SystemExit(f"{db}: {len(records)} games stored of {games}")
    return [(r["start_time"], r["end_time"]) for r in records]


def games_per_second(times: list[tuple[str, str]]) -> float:
    parse = datetime.datetime.fromisoformat
    first = min(parse(start) for start, _ in times)
    last = max(parse(end) for _, end in times)
    return len(times) / max((last - first).total_seconds(), 1e-9)


# --------------------------------------------------------------------------
# A scheduler and workers of their own (for the coordinator's CPU)
# --------------------------------------------------------------------------


class OwnCluster:
    """``dask scheduler`` on 127.0.0.1 and ``arbiter worker`` processes."""

    def __init__(self, workdir: str, engines: str, workers: int, slots: int):
        self.procs: list[subprocess.Popen] = []
        info = os.path.join(workdir, "scheduler.json")
        self._start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                     "--port", "0", "--no-dashboard", "--scheduler-file", info])
        deadline = time.monotonic() + GUARD
        while not os.path.exists(info) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)  # written whole by now
        with open(info) as file:
            self.address = json.load(file)["address"]
        for _ in range(workers):
            proc = self._start([sys.executable, "-m", "arbiter", "worker", self.address,
                                "--engines", engines, "--slots", str(slots)], pipe=True)
            assert proc.stderr is not None
            line = ""
            while "joined" not in line:
                line = proc.stderr.readline()
                if not line:
                    raise SystemExit("a worker ended before it joined")

    def _start(self, argv: list[str], pipe: bool = False) -> subprocess.Popen:
        proc = subprocess.Popen(argv, env=environment(), cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE if pipe else subprocess.DEVNULL, text=True)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
            proc.wait(timeout=GUARD)


def parts(db: str, workdir: str) -> dict[str, float]:
    """CPU ms per game of each part of the coordinator's work (see the docstring)."""
    from arbiter.cluster.task import read_result, result_game
    from arbiter.progress import LineDisplay
    from arbiter.record import GameRecord
    from arbiter.schedule import build_schedule
    from arbiter.standings import Tally
    from arbiter.store import Store, game_record

    source = Store(db)
    records = [game_record(row) for row in source.games(1, with_record=True)]
    source.close()
    games = len(records) // BATCH * BATCH
    schedule = build_schedule(["a", "b"], games=games).games
    batches = [schedule[i:i + BATCH] for i in range(0, games, BATCH)]
    # what a worker sends: each scheduled game with a record of the run, in its colours
    texts = [json.dumps([result_game(g.key, GameRecord.from_dict(
                             {**records[n], "white": g.white, "black": g.black}))
                         for n, g in enumerate(batch, start=number * BATCH)])
             for number, batch in enumerate(batches)]
    figures: dict[str, float] = {}

    def timed(label: str, work) -> None:
        began = time.process_time()
        work()
        figures[f"part: {label} ms/game"] = (time.process_time() - began) * 1000 / games

    timed("JSON text read", lambda: [json.loads(t) for t in texts])
    results = [{"worker": "bench", "games": t, "events": [], "failure": None, "skipped": []}
               for t in texts]
    outcomes = [read_result(r, b) for r, b in zip(results, batches, strict=True)]
    if sum(len(o.played) for o in outcomes) != games:
        raise SystemExit(f"read_result kept {sum(len(o.played) for o in outcomes)} of {games}")
    timed("result read (read_result: JSON, checks, records)",
          lambda: [read_result(r, b) for r, b in zip(results, batches, strict=True)])
    parsed = [[record for _, record in o.played] for o in outcomes]
    store = Store(fresh_db(workdir, "parts.db"))
    tid = store.create_tournament(name="parts", game=GAME, format="gauntlet", identity="parts",
                                  config={}, engines=[{"name": "a"}, {"name": "b"}],
                                  total_games=games)

    def save() -> None:
        for number, batch in enumerate(parsed):
            with store.transaction():
                for index, record in enumerate(batch):
                    g = schedule[number * BATCH + index]
                    store.save_game(tid, key=g.key, seq=g.seq, round=g.round, pairing=g.pairing,
                                    index=g.index, pair=g.pair, opening=g.opening.to_dict(),
                                    record=record.to_dict(), move_data=record.encoded_moves())

    timed("stored (one transaction a batch)", save)
    store.close()
    tally = Tally(["a", "b"])
    rows = [{"white": r.white, "black": r.black, "result": r.result, "termination": r.termination,
             "pairing": 0, "pair": n // 2, "key": str(n), "seq": n}
            for n, r in enumerate(r for b in parsed for r in b)]

    def standings() -> None:
        for number in range(len(batches)):
            for row in rows[number * BATCH:(number + 1) * BATCH]:
                tally.add(row)
            tally.standings(None)

    timed("standings (once a batch)", standings)

    class Run:  # what the line display reads of a run (no ETA: played 0)
        done, total, played, started_at, sprt = 0, games, 0, 0.0, None

    devnull = open(os.devnull, "w")
    display = LineDisplay(devnull)
    display.run = Run()  # type: ignore[assignment]  # a stand-in with the fields it reads
    final = tally.standings(None)

    def lines() -> None:
        for n, record in enumerate(r for b in parsed for r in b):
            display.game_finished(schedule[n], record, final)

    timed("display line", lines)
    devnull.close()
    return figures


#: games of the schedule the pairs are taken from in the ``taking`` part: a
#: large tournament, where a cost that grows with the pending games shows
TAKE_GAMES = 200_000


def taking(workdir: str, games: int = TAKE_GAMES) -> float:
    """CPU us per game of taking a run's game pairs (``Tournament._take_pairs``,
    batches of 16 pairs for 64 takers) from a schedule of ``games`` pending
    games, as a pair player's run takes them."""
    from arbiter.config import TournamentConfig
    from arbiter.engine import EngineConfig
    from arbiter.run.coordinator import Coordinator
    from arbiter.store import Store
    from arbiter.tournament import open_tournament

    names = ["a", "b", "c", "d", "e"]  # 10 pairings
    config = TournamentConfig(game=GAME, engines=[EngineConfig(cmd="unused", name=n) for n in names],
                              games=games // 10, tc="1+0", concurrency=64)
    with Store(fresh_db(workdir, "take.db")) as store:
        tournament_id, _ = open_tournament(store, config)
        run = Coordinator(config, store, tournament_id)
        run._load()
        began = time.process_time()
        taken = 0
        while pairs := run._take_pairs(16, 64):
            taken += sum(len(pair) for pair in pairs)
        spent = time.process_time() - began
    if taken != games:
        raise SystemExit(f"took {taken} games of {games}")
    return spent * 1e6 / games


def coordinator_cpu(cluster: OwnCluster | None, engines: str, games: int, concurrency: int,
                    workdir: str) -> tuple[float, float]:
    """The CPU of ``arbiter tournament`` itself for ``games`` games (on
    ``cluster``, or locally: None) and the command's wall seconds."""
    db = fresh_db(workdir, f"cpu-{games}.db")
    extra = ["--cluster", cluster.address] if cluster is not None else []
    began = time.monotonic()
    cpu = own_cpu([*tournament_args(engines, games, concurrency, db), *extra], environment())
    wall = time.monotonic() - began
    stored(db, games)
    return cpu, wall


def _cpu_of(pid: int) -> float:
    """CPU seconds of process ``pid`` so far, all its threads (``/proc``)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def held_cpu(cluster: OwnCluster, engines: str, concurrency: int, workdir: str,
             seconds: float) -> float:
    """CPU seconds a second of the coordinator on ``cluster`` while every
    pair worker's batch is in flight and no game ends (the held engines
    wait at their first move): what it costs whatever the pace."""
    db = fresh_db(workdir, "held.db")
    proc = subprocess.Popen([sys.executable, "-m", *tournament_args(
        engines, 4 * concurrency, concurrency, db, "held-"), "--cluster", cluster.address],
        env=environment(), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + GUARD
        while len(processes_with(HELD_TAG)) < 2 * concurrency:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit("the held engines never all started")
            time.sleep(0.05)
        time.sleep(1.0)  # every batch submitted and waiting at its first move
        began, cpu = time.monotonic(), _cpu_of(proc.pid)
        time.sleep(seconds)
        return (_cpu_of(proc.pid) - cpu) / (time.monotonic() - began)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=GUARD)
        finally:
            proc.kill()


# --------------------------------------------------------------------------
# Throughput and the stop
# --------------------------------------------------------------------------


def run_wall(argv: list[str]) -> float:
    """Wall seconds of ``python -m ARGV`` (``argv[0]`` a module)."""
    began = time.monotonic()
    result = subprocess.run([sys.executable, "-m", *argv], env=environment(), cwd=ROOT,
                            capture_output=True, text=True, timeout=GUARD)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:3])} failed: {result.stderr[-2000:]}")
    return time.monotonic() - began


def throughput(engines: str, games: int, concurrency: int, workdir: str) -> dict[str, float]:
    figures = {}
    for where, extra in (("local", []), ("cluster", ["--cluster", "local:2"])):
        db = fresh_db(workdir, f"speed-{where}.db")
        wall = run_wall(["arbiter", *tournament_args(engines, games, concurrency, db)[1:], *extra])
        figures[f"{where} games/s"] = games_per_second(stored(db, games))
        figures[f"{where} wall s"] = wall
    return figures


def stop_time(workdir: str, concurrency: int) -> tuple[float, float]:
    """Seconds from SIGINT to the last engine gone, and to the command's exit."""
    tag = f"arbiter-bench-{uuid.uuid4()}"
    gate = os.path.join(workdir, f"gate-{tag}")  # each round's own: the last opens it at its end
    engines = [f"cmd='{sys.executable} {GATE}' name={name} env.GATE={gate} env.GATE_AFTER=0 "
               f"env.TAG={tag}" for name in ("a", "b")]
    db = fresh_db(workdir, "stop.db")
    proc = subprocess.Popen([sys.executable, "-m", "arbiter", "tournament", "-g", GAME,
                             "-e", engines[0], "-e", engines[1], "--games", "20", "--tc", "depth=1",
                             "-c", str(concurrency), "--plain", "--db", db, "--cluster", "local:2"],
                            env=environment(), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + GUARD
        while len(processes_with(tag)) < 2 * concurrency:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit(f"the gated engines never all started: {proc.communicate()[1]}")
            time.sleep(0.05)
        time.sleep(0.5)  # every pair waiting at the gate
        began = time.monotonic()
        proc.send_signal(signal.SIGINT)
        while processes_with(tag):
            time.sleep(0.01)
        engines_gone = time.monotonic() - began
        proc.communicate(timeout=GUARD)
        return engines_gone, time.monotonic() - began
    finally:
        proc.kill()
        open(gate, "w").close()


def measure_cpu(options: argparse.Namespace, engines: str, workdir: str,
                figures: dict[str, list[float]]) -> None:
    """The coordinator's CPU per game (and a local run's), then its parts.

    The coordinator's CPU is taken as ``a * games + b * seconds + c``: ``a``
    what each game costs (its share of a batch's task, its record read,
    stored, counted, shown), ``b`` what each second of the run costs whatever
    the pace (Dask's heartbeats and its client's loop, the results thread's
    and trio's timers, the display's tick), ``c`` start-up and close.  ``b``
    is measured alone: the coordinator's CPU over :data:`IDLE_SECONDS` while
    all its batches are in flight and held (:func:`held_cpu`).  The plain
    slope of the small and the large run is ``a`` plus ``b`` spread over the
    games at this run's pace; ``a`` is that slope with ``b`` times the two
    runs' difference in wall seconds taken out."""
    cluster = OwnCluster(workdir, engines, workers=2, slots=max(1, options.concurrency // 2))
    extra_games = options.large - options.small
    try:
        for _ in range(options.rounds):
            small, small_wall = coordinator_cpu(cluster, engines, options.small,
                                                options.concurrency, workdir)
            large, large_wall = coordinator_cpu(cluster, engines, options.large,
                                                options.concurrency, workdir)
            per_second = held_cpu(cluster, engines, options.concurrency, workdir,
                                  options.idle_seconds)
            slope = (large - small) / extra_games
            spread = per_second * (large_wall - small_wall) / extra_games
            for label, value in (("coordinator ms/game (plain slope)", slope * 1000),
                                 ("coordinator ms/game, per-second part out",
                                  (slope - spread) * 1000),
                                 ("coordinator CPU ms a second, games held", per_second * 1000),
                                 ("  its part of the plain slope ms/game", spread * 1000),
                                 ("cluster games/s (large run, whole command)",
                                  options.large / large_wall)):
                figures.setdefault(label, []).append(value)
            for key, value in parts(os.path.join(workdir, f"cpu-{options.large}.db"),
                                    workdir).items():
                figures.setdefault(key, []).append(value)
            figures.setdefault(f"part: pairs taken from {TAKE_GAMES:,} pending us/game",
                               []).append(taking(workdir))
            local_small, _ = coordinator_cpu(None, engines, options.small, options.concurrency,
                                             workdir)
            local_large, _ = coordinator_cpu(None, engines, options.large, options.concurrency,
                                             workdir)
            figures.setdefault("local run ms/game (games included)", []).append(
                (local_large - local_small) / extra_games * 1000)
    finally:
        cluster.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--small", type=int, default=20, help="games of the small coordinator run")
    parser.add_argument("--large", type=int, default=100, help="games of the large coordinator run")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--speed-games", type=int, default=40, help="games of the throughput runs")
    parser.add_argument("--idle-seconds", type=float, default=IDLE_SECONDS,
                        help="seconds the held coordinator's CPU is read over")
    parser.add_argument("--parts", default="cpu,speed,stop",
                        help="what to measure: any of cpu (with the parts), speed, stop")
    options = parser.parse_args()
    wanted = set(options.parts.split(","))
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as workdir:
        engines = write_engines(workdir)
        if "cpu" in wanted:
            measure_cpu(options, engines, workdir, figures)
        for _ in range(options.rounds):
            if "speed" in wanted:
                for key, value in throughput(engines, options.speed_games, options.concurrency,
                                             workdir).items():
                    figures.setdefault(key, []).append(value)
            if "stop" in wanted:
                gone, exited = stop_time(workdir, options.concurrency)
                figures.setdefault("SIGINT -> last engine gone s", []).append(gone)
                figures.setdefault("SIGINT -> exit s", []).append(exited)
    print(f"{GAME}, replay engines, --concurrency {options.concurrency}, "
          f"{options.rounds} round(s), median (min-max):")
    for key, values in figures.items():
        print(f"  {key:36} {statistics.median(values):8.3f}  ({min(values):.3f}-{max(values):.3f})")


if __name__ == "__main__":
    main()
