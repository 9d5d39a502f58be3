"""The match server's costs (``specs/wire.md``): a remote engine's ply, and a
server holding many connections.

* **overhead**: the same instant engine (``tests/bad_engines/replay.py``,
  replaying one recorded legal game) as a local pipe and as a remote engine
  over loopback (two ``arbiter connect`` processes to a listener in this
  process), :func:`arbiter.match.play_game` on both, rounds alternating;
  the median of the per-round ratios of wall-clock time per ply is printed
  (goal: remote/pipe <= 2).
* **load**: an ``arbiter serve`` process and one load process speaking the
  wire for many connections at once (each answers like an instant engine,
  with the recorded game's moves: no engine processes).  First ``--idle``
  authenticated idle connections on a server without an arena (its RSS
  before and after: memory per connection); then ``--games`` concurrent
  arena games at 10+0.1 (``2 * games`` engines) for ``--seconds``: the
  server's CPU time per ply stored, and the time forfeits.

Run: ``python3 bench/server.py [--rounds R] [--games-per-round N] [--idle 500]
[--games 50] [--seconds 30] [--skip-overhead] [--skip-load]``.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from arbiter.engine import EngineConfig, open_engine  # noqa: E402
from arbiter.match import play_game  # noqa: E402
from arbiter.server.listener import Listener, Registry  # noqa: E402
from arbiter.tokens import TokenStore  # noqa: E402
from protocol import wire  # noqa: E402
from protocol.wire import NEED_DATA, Role, WireConnection  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
from overhead import REPLAY, recorded_game  # noqa: E402

GAME = "troll"
TC = "1000+0"  # no clock pressure in the overhead part: only the cost counts


def _arbiter(*args: str) -> list[str]:
    return [sys.executable, "-m", "arbiter", *args]


# --------------------------------------------------------------------------
# overhead: a remote ply against a pipe ply
# --------------------------------------------------------------------------


async def _games(white, black, count: int, moves: list[str]) -> tuple[float, float, int]:
    """Wall-clock and this process's CPU seconds of ``count`` games, and their plies."""
    plies = 0
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        record = await play_game(GAME, white, black, tc=TC, maxplies=len(moves))
        plies += len(record.moves)
    return time.perf_counter() - started, time.process_time() - cpu, plies


async def overhead(rounds: int, per_round: int) -> None:
    moves = recorded_game(GAME, 1)
    cmd = " ".join([sys.executable, REPLAY, *moves])
    with tempfile.TemporaryDirectory() as tmp:
        tokens = TokenStore(os.path.join(tmp, "t.db"))
        secrets = [tokens.add(name) for name in ("ra", "rb")]
        registry = Registry()
        listener = Listener(tokens, registry, log=lambda text: None)
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, listener.handle, 0,
                                                    host="127.0.0.1"))
            port = listeners[0].socket.getsockname()[1]
            clients = [await trio.lowlevel.open_process(
                _arbiter("connect", f"127.0.0.1:{port}", "--token", secret, "-e",
                         f"cmd='{cmd}' name={name}"), env={**os.environ, "PYTHONPATH": ROOT})
                for secret, name in zip(secrets, ("ra", "rb"), strict=True)]
            while len(registry.idle()) < 2:
                await registry.wait_change()
            ra, rb = registry.idle()[:2]
            ra.busy = rb.busy = True
            async with open_engine(EngineConfig(cmd=cmd, name="la")) as la, \
                    open_engine(EngineConfig(cmd=cmd, name="lb")) as lb:
                ratios, pipe_ms, remote_ms, pipe_cpu, remote_cpu = [], [], [], [], []
                for _ in range(rounds):
                    pipe, cpu, plies = await _games(la, lb, per_round, moves)
                    remote, rcpu, rplies = await _games(ra.engine, rb.engine, per_round, moves)
                    pipe_ms.append(pipe / plies * 1000)
                    remote_ms.append(remote / rplies * 1000)
                    pipe_cpu.append(cpu / plies * 1000)
                    remote_cpu.append(rcpu / rplies * 1000)
                    ratios.append(remote_ms[-1] / pipe_ms[-1])
            print(f"overhead: {len(moves)} plies a game, {rounds} rounds of {per_round} games "
                  f"each way; load average {os.getloadavg()[0]:.2f}")
            print(f"  pipe   {statistics.median(pipe_ms):.3f} ms/ply wall, "
                  f"{statistics.median(pipe_cpu):.3f} ms/ply arbiter CPU (medians of rounds)")
            print(f"  remote {statistics.median(remote_ms):.3f} ms/ply wall, "
                  f"{statistics.median(remote_cpu):.3f} ms/ply server CPU")
            print(f"  server CPU remote/pipe "
                  f"{statistics.median(remote_cpu) / statistics.median(pipe_cpu):.2f}x")
            print(f"  remote/pipe {statistics.median(ratios):.2f}x "
                  f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})")
            for client in clients:
                client.terminate()
            for client in clients:
                await client.wait()
            nursery.cancel_scope.cancel()


# --------------------------------------------------------------------------
# load: many connections, many games
# --------------------------------------------------------------------------


async def _fake_engine(port: int, token: str, name: str, moves: list[str], ready) -> None:
    """One connection answering like an instant engine (the recorded moves)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    conn = WireConnection(Role.CLIENT)
    await stream.send_all(conn.send(wire.Hello(wire.WIRE_VERSION, token, name, "fake")))
    index = 0
    told = False
    while True:
        data = await stream.receive_some(wire.READ_CHUNK)
        if not data:
            return
        conn.receive_data(data)
        out: list[wire.Frame] = []
        while (event := conn.next_event()) is not NEED_DATA:
            if isinstance(event, wire.Sync):
                out.append(wire.Sync(event.seq))
            elif isinstance(event, wire.Close | wire.Refusal):
                return
            elif isinstance(event, wire.Lines):
                answer: list[str] = []
                for line in event.lines:
                    word = line.split(maxsplit=1)[0] if line else ""
                    if word == "ugi":
                        answer += ["id name fake", "ugiok"]
                        if not told:
                            told = True
                            ready()
                    elif word == "isready":
                        answer.append("readyok")
                    elif word == "position":
                        words = line.split()
                        index = len(words) - words.index("moves") - 1 if "moves" in words else 0
                    elif word == "go":
                        answer.append(f"bestmove {moves[index % len(moves)]}")
                if answer:
                    out.append(wire.Lines(answer, 0 if any(a.startswith("bestmove")
                                                           for a in answer) else None))
        if out:
            await stream.send_all(b"".join(conn.send(frame) for frame in out))


async def _load_client(port: int, secrets: list[str], names: list[str]) -> None:
    moves = recorded_game(GAME, 1)
    ready = 0

    def one_ready() -> None:
        nonlocal ready
        ready += 1
        if ready == len(names):
            print("ready", flush=True)

    async with trio.open_nursery() as nursery:
        for index, name in enumerate(names):
            nursery.start_soon(_fake_engine, port, secrets[index % len(secrets)], name, moves,
                               one_ready)
            await trio.sleep(0.002)  # an orderly arrival, not a SYN flood


def _proc_stats(pid: int) -> tuple[int, float]:
    """(RSS in KiB, CPU seconds) of process ``pid``."""
    with open(f"/proc/{pid}/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks


def _serve(db: str, *arena: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(_arbiter("serve", "--db", db, "--listen", "127.0.0.1:0", *arena),
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.stderr is not None
    for line in proc.stderr:
        if "listening on" in line:
            return proc, int(line.rsplit(":", 1)[1])
    raise RuntimeError("the server did not start")


def _load_process(port: int, secrets: list[str], names: list[str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, __file__, "--load-client", str(port),
                             ",".join(secrets), ",".join(names)], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def _stop(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait(60)


def load(idle: int, games: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "server.db")
        with TokenStore(db) as tokens:
            secrets = [tokens.add(f"t{i}") for i in range(wire.MAX_CONNECTIONS // 8 + 1)]
        # idle connections: a server without an arena (else it pairs them)
        server, port = _serve(db)
        time.sleep(1.0)
        before, _ = _proc_stats(server.pid)
        client = _load_process(port, secrets, [f"idle{i}" for i in range(idle)])
        time.sleep(2.0)
        after, _ = _proc_stats(server.pid)
        _stop(client, server)
        print(f"load: {idle} idle authenticated connections: server RSS {before / 1024:.1f} -> "
              f"{after / 1024:.1f} MiB, {(after - before) / idle:.1f} KiB per connection")
        # concurrent arena games
        server, port = _serve(db, "--arena", f"game={GAME} tc=10+0.1")
        client = _load_process(port, secrets, [f"e{i}" for i in range(2 * games)])
        _, cpu_start = _proc_stats(server.pid)
        started = time.monotonic()
        time.sleep(seconds)
        _, cpu_end = _proc_stats(server.pid)
        elapsed = time.monotonic() - started
        _stop(client, server)
        with sqlite3.connect(db) as conn:
            plies, stored = conn.execute("select sum(json_array_length(moves)), count(*) "
                                         "from games").fetchone()
            forfeits = conn.execute("select count(*) from games where termination = "
                                    "'time-forfeit'").fetchone()[0]
        plies = plies or 0
        print(f"load: {games} concurrent arena games at 10+0.1 ({2 * games} remote engines) "
              f"for {elapsed:.0f} s: {stored} games, {plies} plies stored; server CPU "
              f"{cpu_end - cpu_start:.1f} s = {(cpu_end - cpu_start) / max(plies, 1) * 1000:.2f} "
              f"ms per ply; time forfeits: {forfeits}; load average {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games-per-round", type=int, default=3)
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--load-client", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_client:
        port, secrets, names = args.load_client
        trio.run(_load_client, int(port), secrets.split(","), names.split(","))
        return
    if not args.skip_overhead:
        trio.run(overhead, args.rounds, args.games_per_round)
    if not args.skip_load:
        load(args.idle, args.games, args.seconds)


if __name__ == "__main__":
    main()
