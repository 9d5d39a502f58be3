"""``arbiter export`` and ``arbiter import`` on a large database: time and peak memory.

A database of ``--games`` finished games (default 10,000; random legal
games of the four games, every ply with a score, depth, nodes, clock and a
pv of 8 moves, as a tournament stores them) is built once.  Then, as child
processes (the figures are the child's own: wall time, and ``ru_maxrss``
from ``os.wait4``):

* ``export``: ``arbiter export --db D --out F`` (PGN) and ``--format jsonl``;
* ``import``: each file into a fresh database.

With ``--base COMMIT`` the same commands also run from that commit's code
(a ``git worktree`` in a temporary folder, removed at the end), so the old
and the new figures come from the same run on the same database.

Run: ``python3 bench/records.py [--games N] [--base COMMIT]``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from arbiter.games import GAME_NAMES, get_game  # noqa: E402
from arbiter.record import GameRecord, Ply, Score  # noqa: E402
from arbiter.store import RunStatus, Store  # noqa: E402

#: Games a tournament of the database holds: several tournaments, as a
#: database that has served for a while.
GAMES_PER_TOURNAMENT = 2500

#: Longest random game: the referees' games end well before it.
MAX_PLIES = 300

#: Moves of each ply's pv: what an engine searching a few plies deep reports.
PV_MOVES = 8

#: Distinct random games played per game kind; the database's games are
#: copies of them with their own engines and times (playing 10,000 random
#: games would take minutes, storing copies seconds).
POOL = 50


def random_record(rng: random.Random, name: str, white: str, black: str) -> GameRecord:
    """A finished game of random legal moves, with every field a match fills."""
    position = get_game(name).start()
    moves: list[Ply] = []
    clock = {"white": 10_000, "black": 10_000}
    while not position.is_over() and len(moves) < MAX_PLIES:
        legal = sorted(position.legal_moves())
        move = rng.choice(legal)
        color = position.to_move.value
        clock[color] -= rng.randint(1, 60)
        moves.append(Ply(move, color, rng.randint(1, 60), clock_ms=clock[color],
                         engine_time_ms=rng.randint(0, 60), score=Score.parse(f"cp {rng.randint(-500, 500)}"),
                         depth=rng.randint(1, 12), nodes=rng.randint(100, 100_000),
                         pv=[rng.choice(legal) for _ in range(PV_MOVES)]))
        position = position.play(move)
    outcome = position.outcome()
    if outcome is None:
        result, termination = "1/2-1/2", "max-plies"
    else:
        result, termination = outcome.result, outcome.termination.value
    return GameRecord(game=name, white=white, black=black, result=result,
                      termination=termination, termination_detail=f"{termination} (bench)",
                      moves=moves, time_control={"white": "10+0.1", "black": "10+0.1"},
                      start_time="2026-12-01T10:00:00.000Z", end_time="2026-12-01T10:00:05.000Z",
                      final_fen=position.fen(), maxplies=MAX_PLIES if outcome is None else None,
                      white_id={"name": white}, black_id={"name": black})


def build_database(path: str, games: int) -> None:
    """``games`` games in tournaments of :data:`GAMES_PER_TOURNAMENT`."""
    rng = random.Random(1)
    engines = ["alpha", "beta", "gamma", "delta"]
    pools = {name: [random_record(rng, name, "white", "black").to_dict() for _ in range(POOL)]
             for name in GAME_NAMES}
    with Store(path) as store:
        number = 0
        while number < games:
            size = min(GAMES_PER_TOURNAMENT, games - number)
            name = GAME_NAMES[(number // GAMES_PER_TOURNAMENT) % len(GAME_NAMES)]
            tournament = store.create_tournament(
                name=f"bench {name}", game=name, format="round-robin",
                identity=f"bench-{number}", config={"rounds": 1}, total_games=size,
                engines=[{"name": e} for e in engines])
            with store.transaction():
                for seq in range(size):
                    record = dict(rng.choice(pools[name]))
                    record["white"], record["black"] = rng.sample(engines, 2)
                    second = number + seq
                    record["start_time"] = f"2026-12-01T{second // 3600 % 24:02d}:" \
                        f"{second // 60 % 60:02d}:{second % 60:02d}.000Z"
                    record["end_time"] = record["start_time"]
                    store.save_game(tournament, key=f"g{seq}", seq=seq, round=1, pairing=1,
                                    index=seq + 1, pair=seq // 2 + 1,
                                    opening={"source": "none", "fen": None, "moves": []},
                                    record=record)
            store.set_status(tournament, RunStatus.FINISHED)
            number += size


def measure(tree: str, args: list[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak resident MiB) of ``python3 -m
    arbiter ARGS`` run with ``tree``'s code (CPU: the child's user and
    system time, steadier than the wall clock on a shared machine).  It runs
    in ``tree``: ``-m`` puts the working folder first on the path."""
    env = {**os.environ, "PYTHONPATH": tree}
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "arbiter", *args], env=env, cwd=tree,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        raise SystemExit(f"arbiter {' '.join(args)} failed ({child.returncode}): {errors}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


Row = tuple[str, str, float, float, float]


def run(label: str, tree: str, db: str, work: str) -> list[Row]:
    rows = []
    for form in ("pgn", "jsonl"):
        out = os.path.join(work, f"{label.replace(' ', '-')}.{form}")
        rows.append((label, f"export {form}",
                     *measure(tree, ["export", "--db", db, "--format", form, "--out", out])))
        fresh = os.path.join(work, f"{label.replace(' ', '-')}-{form}.db")
        rows.append((label, f"import {form}", *measure(tree, ["import", out, "--db", fresh])))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--base", help="also run this commit's code (a git worktree)")
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-records-")
    base_tree = os.path.join(work, "base")
    try:
        db = os.path.join(work, "games.db")
        start = time.perf_counter()
        build_database(db, options.games)
        size = os.path.getsize(db) / 2**20
        print(f"database: {options.games} games, {size:.0f} MiB, built in "
              f"{time.perf_counter() - start:.0f} s")
        rows = []
        if options.base:
            subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", base_tree,
                            options.base], check=True, capture_output=True)
            rows += run(f"base {options.base[:8]}", base_tree, db, work)
        rows += run("this tree", ROOT, db, work)
        print(f"{'code':<16} {'command':<14} {'wall s':>7} {'CPU s':>7} {'peak MiB':>9}")
        for label, command, wall, cpu, mib in rows:
            print(f"{label:<16} {command:<14} {wall:7.1f} {cpu:7.1f} {mib:9.0f}")
    finally:
        if os.path.isdir(base_tree):
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", base_tree],
                           check=False, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
