"""The honest pair's games while the match server is attacked (issue 29,
``specs/wire.md`` §Reasons, §Limits): does anyone else pay for a hostile peer?

An ``arbiter serve`` process with a Troll arena at 10+0.1 and two honest
``arbiter connect`` clients (``sample_engines.random``: instant moves, so a
ply's time is the server's and the wire's).  For each attack, two windows of
``--seconds`` one after the other on the same server: a control window
without it, then one with it (an attack process of its own, started a
moment before the window opens, stopped after it).  For each window: the
honest pair's games (ra against rb) started and ended in it, the per-ply
elapsed of their plies (what the server measured from the ``go`` to the
``bestmove``: the stored ``time_ms`` plus the lag compensation ``comp_ms``)
p50 and p99, and the honest engines' forfeits (a game of ra or rb lost by
``crash``, ``protocol-error``, ``stall``, ``time-forfeit`` or ``disconnect``)
and disconnections.  The figure asked for: the attack window's p99 within 2x
of its control window's.

The attacks, each from another host (the source address 127.0.0.3; the
honest clients connect from 127.0.0.1):

- ``silent``: ``MAX_CONNECTIONS`` + 32 connections that never send a byte,
  each opened again a second after the server closes it;
- ``hellos``: 64 connections in a loop, each a hello with a valid token of the
  attacker (a full token check each) and a name of a small set (taken, or over
  the token's limit), closed at the answer;
- ``guesses``: 200 connections in a loop, each a hello with a wrong secret;
- ``flood``: connections of the attacker's token that, once welcomed, send
  heartbeat frames as fast as the socket takes them (never an ``ugiok``),
  opened again as the server closes them;
- ``stall``: a third engine in the arena (``arbiter connect``) that answers
  ``isready`` until its first game, then never: its games cannot start, and
  the honest engine it was paired with waits out the ready timeout (its
  window is longer by that timeout, so that the pair plays in it at all).

Run: ``python3 bench/attacks.py [--seconds 20] [--attacks silent,hellos,guesses,flood,stall]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests"))

from server import _arbiter, _serve, open_from  # noqa: E402
from server_peers import DEAF_AT_GAME_ENGINE  # noqa: E402

from arbiter.server.listener import REMOTE_READY_TIMEOUT  # noqa: E402
from arbiter.tokens import TokenStore  # noqa: E402
from protocol import wire  # noqa: E402
from protocol.wire import NEED_DATA, Role, WireConnection  # noqa: E402

ATTACKS = ("silent", "hellos", "guesses", "flood", "stall")
ARENA = "game=troll tc=10+0.1"
HONEST = ("ra", "rb")
#: the terminations that charge the loser with a fault (tests/server_peers.FAULTS and a drop)
FAULTS = ("crash", "protocol-error", "stall", "time-forfeit", "disconnect")
#: seconds an attack runs before its window opens (its connections made)
WARM_UP = 3.0
#: seconds after an attack is stopped before the next control window opens
SETTLE = 3.0
#: the attackers' source address: another host than the honest clients'
ATTACKER = "127.0.0.3"
#: seconds before a silent connection the server closed is opened again
SILENT_REOPEN = 1.0
#: the attack processes' niceness: on this machine they share its two cores
#: with the server and the honest pair; elsewhere they would not
ATTACKER_NICENESS = 19


def _cpu(pid: int) -> float:
    """CPU seconds (user and system) of process ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --------------------------------------------------------------------------
# the attacks (each in a process of its own: --attack NAME PORT TOKEN)
# --------------------------------------------------------------------------


async def _hello_answer(port: int, hello: wire.Hello) -> None:
    """One connection: ``hello``, the server's answer read, closed."""
    try:
        stream = await open_from(ATTACKER, port)
    except OSError:
        await trio.sleep(0.05)
        return
    async with stream:
        conn = WireConnection(Role.CLIENT)
        try:
            await stream.send_all(conn.send(hello))
            while conn.next_event() is NEED_DATA:
                data = await stream.receive_some(wire.READ_CHUNK)
                conn.receive_data(data)
                if not data:
                    return
        except (trio.BrokenResourceError, OSError, wire.WireError):
            return


async def _silent(port: int) -> None:
    async def one() -> None:
        while True:
            try:
                stream = await open_from(ATTACKER, port)
                async with stream:
                    while await stream.receive_some(wire.READ_CHUNK):
                        pass
            except (trio.BrokenResourceError, OSError):
                pass
            await trio.sleep(SILENT_REOPEN)

    async with trio.open_nursery() as nursery:
        for _ in range(wire.MAX_CONNECTIONS + wire.MAX_UNANSWERED_PER_SOURCE):
            nursery.start_soon(one)


async def _loop_hellos(port: int, count: int, make) -> None:
    async def one(index: int) -> None:
        turn = 0
        while True:
            turn += 1
            await _hello_answer(port, make(index, turn))

    async with trio.open_nursery() as nursery:
        for index in range(count):
            nursery.start_soon(one, index)


async def _flood(port: int, token: str) -> None:
    beats = b"".join(wire.encode_frame(wire.Heartbeat()) for _ in range(1000))

    async def one(index: int) -> None:
        while True:
            try:
                stream = await open_from(ATTACKER, port)
                async with stream:
                    await stream.send_all(WireConnection(Role.CLIENT).send(
                        wire.Hello(wire.WIRE_VERSION, token, f"flood{index}", "flood")))
                    while True:
                        await stream.send_all(beats)
            except (trio.BrokenResourceError, OSError):
                await trio.sleep(0.05)

    async with trio.open_nursery() as nursery:
        for index in range(4):
            nursery.start_soon(one, index)


def attack(name: str, port: int, token: str) -> None:
    """Run attack ``name`` on the server at ``port`` until killed, at the
    lowest priority: an attacker is another machine, its own work is not the
    server's cost (as bench/web.py's viewers)."""
    os.nice(ATTACKER_NICENESS)
    if name == "silent":
        trio.run(_silent, port)
    elif name == "hellos":
        trio.run(_loop_hellos, port, 64, lambda index, turn: wire.Hello(
            wire.WIRE_VERSION, token, f"h{(index + turn) % 12}", "hellos"))
    elif name == "guesses":
        trio.run(_loop_hellos, port, 200, lambda index, turn: wire.Hello(
            wire.WIRE_VERSION, f"{token.partition('.')[0]}.guess{index}x{turn}", "g", "guess"))
    elif name == "flood":
        trio.run(_flood, port, token)
    else:
        raise SystemExit(f"no attack {name!r}")


# --------------------------------------------------------------------------
# the measure
# --------------------------------------------------------------------------


def _connect(port: int, token: str, name: str, engine: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(_arbiter("connect", f"127.0.0.1:{port}", "--token", token, "-e",
                                     f"cmd='{engine}' name={name}"),
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": ROOT})


def _window(db: str, start: str, end: str) -> dict[str, float]:
    """The honest pair's figures for the games started and ended in [start, end]."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select white, black, result, termination, move_data from games "
                            "where start_time >= ? and end_time <= ?", (start, end)).fetchall()
    elapsed: list[float] = []
    games = forfeits = 0
    for white, black, result, termination, move_data in rows:
        lost = {"1-0": black, "0-1": white}.get(result)
        if lost in HONEST and termination in FAULTS:
            forfeits += 1
        if {white, black} != set(HONEST):
            continue
        games += 1
        elapsed += [ply["time_ms"] + (ply.get("comp_ms") or 0) for ply in json.loads(move_data)]
    if len(elapsed) < 2:
        return {"games": games, "plies": len(elapsed), "p50": math.nan,
                "p99": math.nan, "forfeits": forfeits}
    cuts = statistics.quantiles(elapsed, n=100, method="inclusive")
    return {"games": games, "plies": len(elapsed), "p50": statistics.median(elapsed),
            "p99": cuts[98], "forfeits": forfeits}


def measure(seconds: float, attacks: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "server.db")
        with TokenStore(db) as tokens:
            secrets = {name: tokens.add(name) for name in ("ta", "tb", "tx", "tz")}
        deaf = Path(tmp) / "deaf.py"
        deaf.write_text(DEAF_AT_GAME_ENGINE)
        log: list[str] = []
        server, port = _serve(db, "--arena", ARENA, log=log)
        random_engine = f"{sys.executable} -m sample_engines.random"
        honest = [_connect(port, secrets[token], name, random_engine)
                  for token, name in (("ta", "ra"), ("tb", "rb"))]
        try:
            while not any("game 1:" in line for line in log):  # warmed up: a game stored
                assert server.poll() is None, "".join(log)
                time.sleep(0.2)
            print(f"bench/attacks.py: {ARENA}, honest ra and rb (sample_engines.random), "
                  f"windows of {seconds:g} s; per-ply elapsed of ra-rb plies, ms", flush=True)
            print(f"{'attack':8} {'window':8} {'games':>5} {'plies':>6} {'p50':>6} {'p99':>6} "
                  f"{'forfeits':>8} {'server CPU':>10} {'attacker CPU':>12}", flush=True)
            for name in attacks:
                control_start, cpu = _now(), _cpu(server.pid)
                time.sleep(seconds)
                control = _window(db, control_start, _now())
                control["server"], control["attacker"] = (_cpu(server.pid) - cpu) / seconds, 0.0
                if name == "stall":
                    proc = _connect(port, secrets["tz"], "rz", f"{sys.executable} {deaf}")
                else:
                    proc = subprocess.Popen(
                        [sys.executable, __file__, "--attack", name, str(port), secrets["tx"]],
                        env={**os.environ, "PYTHONPATH": ROOT})
                time.sleep(WARM_UP)
                attack_start, cpu, spent = _now(), _cpu(server.pid), _cpu(proc.pid)
                lasts = seconds + (REMOTE_READY_TIMEOUT if name == "stall" else 0)
                time.sleep(lasts)
                attacked = _window(db, attack_start, _now())
                attacked["server"] = (_cpu(server.pid) - cpu) / lasts
                attacked["attacker"] = (_cpu(proc.pid) - spent) / lasts
                proc.terminate()  # (a client ends its engine on SIGTERM)
                proc.wait()
                for window, figures in (("control", control), ("attack", attacked)):
                    print(f"{name:8} {window:8} {figures['games']:5} {figures['plies']:6} "
                          f"{figures['p50']:6.1f} {figures['p99']:6.1f} {figures['forfeits']:8} "
                          f"{figures['server']:10.0%} {figures['attacker']:12.0%}", flush=True)
                print(f"{name:8} p99 attack/control {attacked['p99'] / control['p99']:.2f}x; "
                      f"load average {os.getloadavg()[0]:.1f}", flush=True)
                time.sleep(SETTLE)
            rested = sum("rz disconnected and rested" in line for line in log)
            print(f"the stalling engine rz: disconnected and rested {rested} times", flush=True)
            gone = [line.strip() for line in log
                    if any(f"{n} (t{n[1]}) disconnected" in line for n in HONEST)]
            running = [proc.poll() is None for proc in honest]
            print(f"honest clients running at the end: {running}; honest engines disconnected: "
                  f"{len(gone)}", flush=True)
            for line in gone:
                print(f"  {line}")
        finally:
            for proc in honest:
                proc.kill()
            server.terminate()
            server.wait(60)
            for proc in honest:
                proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--attacks", default=",".join(ATTACKS))
    parser.add_argument("--attack", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attack:
        name, port, token = args.attack
        attack(name, int(port), token)
        return
    attacks = args.attacks.split(",")
    unknown = sorted(set(attacks) - set(ATTACKS))
    if unknown:
        parser.error(f"unknown attacks {', '.join(unknown)} (known: {', '.join(ATTACKS)})")
    measure(args.seconds, attacks)


if __name__ == "__main__":
    main()
