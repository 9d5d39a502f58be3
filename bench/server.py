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
  server's CPU time per ply stored, and the time forfeits.  ``--together``:
  both at once on one server (the idle connections play atoll only, the
  arena troll, so it leaves them idle): memory per connection, CPU per ply,
  time forfeits, idle connections dropped.

Options of the overhead part: ``--tls`` (the remote engines over TLS, a
test authority from ``trustme``); ``--steps`` (trio task steps and scheduler
passes per ply in this process; per frame in each client, with the poll
wake-ups of its plain TCP relay loop); ``--only pipe|remote``;
``--floor`` (first the three-process path in bare blocking Python: a pipe
round trip to the engine, the same through a bare relay process over
loopback TCP, and through a real ``arbiter connect`` with this side bare);
``--instructions`` (instead of timing: the arbiter's, the server's and the
clients' instructions per ply under callgrind, 6 games less 2, so that
start-up cancels; independent of the machine's load).

Run: ``python3 bench/server.py [--rounds R] [--games-per-round N] [--idle 500]
[--games 50] [--seconds 30] [--skip-overhead] [--skip-load] [--together] [--tls] [--steps]
[--floor] [--instructions]``.
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


class Steps(trio.abc.Instrument):
    """Scheduler work of a trio run: task steps and passes (each pass waits
    for I/O once, ``after_io_wait``)."""

    def __init__(self) -> None:
        self.steps = self.passes = 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.steps += 1

    def after_io_wait(self, timeout: float) -> None:
        self.passes += 1

    def snapshot(self) -> tuple[int, int]:
        return self.steps, self.passes


class Options:
    """How the overhead part runs (see main's options)."""

    def __init__(self, rounds: int, per_round: int, *, tls: bool = False, only: str = "",
                 steps: Steps | None = None, client_prefix: list[str] | None = None):
        self.rounds, self.per_round, self.tls, self.only = rounds, per_round, tls, only
        self.steps, self.client_prefix = steps, client_prefix or []


def _tls_files(tmp: str):
    """A server TLS context and the CA file a client trusts (trustme, a test extra)."""
    import ssl

    import trustme

    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    ca_file = os.path.join(tmp, "ca.pem")
    ca.cert_pem.write_to_path(ca_file)
    return context, ca_file


async def _serve_remote(nursery: trio.Nursery, tmp: str, options: Options, cmd: str):
    """A listener in this process and two clients connected to it: the
    remote engines and the client processes."""
    tokens = TokenStore(os.path.join(tmp, "t.db"))
    secrets = [tokens.add(name) for name in ("ra", "rb")]
    registry = Registry()
    listener = Listener(tokens, registry, log=lambda text: None)
    tcp = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = tcp[0].socket.getsockname()[1]
    listeners: list = list(tcp)
    extra: list[str] = []
    if options.tls:
        context, ca_file = _tls_files(tmp)
        listeners = [trio.SSLListener(one, context, https_compatible=False) for one in tcp]
        extra = ["--tls-ca", ca_file]
    nursery.start_soon(trio.serve_listeners, listener.handle, listeners)
    clients = []
    for secret, name in zip(secrets, ("ra", "rb"), strict=True):
        args = [f"127.0.0.1:{port}", "--token", secret, "-e", f"cmd='{cmd}' name={name}", *extra]
        argv = ([sys.executable, __file__, "--counted-client", *args]
                if options.steps is not None
                else [*options.client_prefix, "-m", "arbiter", "connect", *args]
                if options.client_prefix else _arbiter("connect", *args))
        clients.append(await trio.lowlevel.open_process(
            argv, env={**os.environ, "PYTHONPATH": ROOT}, stdout=subprocess.PIPE))
    while len(registry.idle()) < 2:
        await registry.wait_change()
    ra, rb = registry.idle()[:2]
    ra.busy = rb.busy = True
    return ra.engine, rb.engine, clients


async def _stop_clients(clients) -> list[str]:
    """SIGINT to the clients (they close their connection); what they printed."""
    import signal

    out = []
    for client in clients:
        client.send_signal(signal.SIGINT)
    for client in clients:
        await client.wait()
        out.append((await client.stdout.receive_some(1 << 16)).decode())
    return out


async def overhead(options: Options) -> None:
    moves = recorded_game(GAME, 1)
    cmd = " ".join([sys.executable, REPLAY, *moves])
    steps = options.steps
    figures: dict[str, list[float]] = {key: [] for key in (
        "pipe", "remote", "pipe_cpu", "remote_cpu", "client_cpu", "ratio",
        "pipe_steps", "pipe_passes", "remote_steps", "remote_passes")}

    def counted(kind: str, before: tuple[int, int], plies: int) -> None:
        if steps is not None:
            figures[f"{kind}_steps"].append((steps.steps - before[0]) / plies)
            figures[f"{kind}_passes"].append((steps.passes - before[1]) / plies)

    with tempfile.TemporaryDirectory() as tmp:
        async with trio.open_nursery() as nursery:
            clients = []
            if options.only != "pipe":
                ra, rb, clients = await _serve_remote(nursery, tmp, options, cmd)
            async with open_engine(EngineConfig(cmd=cmd, name="la")) as la, \
                    open_engine(EngineConfig(cmd=cmd, name="lb")) as lb:
                for _ in range(options.rounds):
                    if options.only != "remote":
                        mark = steps.snapshot() if steps else (0, 0)
                        pipe, cpu, plies = await _games(la, lb, options.per_round, moves)
                        counted("pipe", mark, plies)
                        figures["pipe"].append(pipe / plies * 1000)
                        figures["pipe_cpu"].append(cpu / plies * 1000)
                    if options.only != "pipe":
                        before = sum(_proc_stats(client.pid)[1] for client in clients)
                        mark = steps.snapshot() if steps else (0, 0)
                        remote, rcpu, rplies = await _games(ra, rb, options.per_round, moves)
                        counted("remote", mark, rplies)
                        after = sum(_proc_stats(client.pid)[1] for client in clients)
                        figures["client_cpu"].append((after - before) / rplies * 1000)
                        figures["remote"].append(remote / rplies * 1000)
                        figures["remote_cpu"].append(rcpu / rplies * 1000)
                    if not options.only:
                        figures["ratio"].append(figures["remote"][-1] / figures["pipe"][-1])
            said = await _stop_clients(clients)
            nursery.cancel_scope.cancel()
    _report(options, len(moves), figures, said)


def _report(options: Options, plies: int, figures: dict[str, list[float]], said: list[str]) -> None:
    def med(key: str) -> float:
        return statistics.median(figures[key])

    print(f"overhead{' over TLS' if options.tls else ''}: {plies} plies a game, "
          f"{options.rounds} rounds of {options.per_round} games each way; "
          f"load average {os.getloadavg()[0]:.2f}")
    if figures["pipe"]:
        print(f"  pipe   {med('pipe'):.3f} ms/ply wall, {med('pipe_cpu'):.3f} ms/ply arbiter CPU "
              "(medians of rounds)")
    if figures["remote"]:
        print(f"  remote {med('remote'):.3f} ms/ply wall, {med('remote_cpu'):.3f} ms/ply server "
              f"CPU, {med('client_cpu'):.3f} ms/ply client CPU (the moving side's client)")
    if figures["ratio"]:
        print(f"  server CPU remote/pipe {med('remote_cpu') / med('pipe_cpu'):.2f}x")
        print(f"  remote/pipe {med('ratio'):.2f}x "
              f"(rounds: {', '.join(f'{r:.2f}' for r in figures['ratio'])})")
    for kind in ("pipe", "remote"):
        if figures[f"{kind}_steps"]:
            print(f"  {kind} arbiter/server: {med(f'{kind}_steps'):.1f} task steps, "
                  f"{med(f'{kind}_passes'):.1f} scheduler passes per ply")
    for text in said:
        if text.strip():
            print(f"  client: {text.strip()}")


def counted_client(args: list[str]) -> None:
    """``arbiter connect`` with a scheduler count, printed per lines frame
    received when it is interrupted (``--steps``): trio's task steps and
    passes (the handshake, the engine's process; on TLS the relay too) and
    the poll wake-ups of the plain TCP relay loop (``SocketLoop``, a thread
    of its own)."""
    import signal
    import ssl

    from arbiter.enginespec import parse_engine_spec
    from arbiter.server import client as client_module
    from arbiter.server.relay_loop import SocketLoop

    address, _, token, _, spec, *rest = args
    host, port = address.rsplit(":", 1)
    tls = ssl.create_default_context(cafile=rest[1]) if rest else None
    steps = Steps()
    frames, wakeups = [0], [0]
    receive = client_module.WireConnection.next_event
    run = SocketLoop.run

    def next_event(self):  # counts the server's lines frames (one per ply sent to the engine)
        event = receive(self)
        if isinstance(event, wire.Lines):
            frames[0] += 1
        return event

    def counted_run(self: SocketLoop) -> None:
        try:
            run(self)
        finally:
            wakeups[0] += self.wakeups

    client_module.WireConnection.next_event = next_event  # type: ignore[method-assign]
    SocketLoop.run = counted_run  # type: ignore[method-assign]

    async def main() -> None:  # Ctrl-C cancels, as run_interruptible does for arbiter connect
        async with trio.open_nursery() as nursery:
            async def watch(task_status=trio.TASK_STATUS_IGNORED) -> None:
                with trio.open_signal_receiver(signal.SIGINT) as signals:
                    task_status.started()
                    async for _ in signals:
                        nursery.cancel_scope.cancel()

            await nursery.start(watch)
            await client_module.connect(host, int(port), token, parse_engine_spec(spec), tls=tls)
            nursery.cancel_scope.cancel()

    trio.run(main, instruments=[steps])
    count = max(frames[0], 1)
    print(f"{steps.steps / count:.1f} task steps, {steps.passes / count:.1f} scheduler passes, "
          f"{wakeups[0] / count:.1f} relay loop wake-ups per lines frame ({frames[0]} frames)",
          flush=True)


# --------------------------------------------------------------------------
# load: many connections, many games
# --------------------------------------------------------------------------


#: what an idle connection of ``--together`` declares: it plays another game
#: than the arena's, so the arena leaves it idle (arbiter/server/arena.py)
IDLE_GAME_OPTION = ["option name UGI_Game type combo default atoll var atoll"]


def source_address(index: int) -> str:
    """A loopback source address of its own for connection ``index``: the
    load stands for many clients, and the server limits each source's
    connections not answered yet (``specs/wire.md`` §Limits)."""
    return f"127.0.{1 + index // 250}.{1 + index % 250}"


async def open_from(source: str, port: int) -> trio.SocketStream:
    """A TCP stream to the server on loopback ``port``, from ``source``."""
    sock = trio.socket.socket()
    await sock.bind((source, 0))
    await sock.connect(("127.0.0.1", port))
    return trio.SocketStream(sock)


async def _fake_engine(port: int, token: str, name: str, moves: list[str], ready,
                       source: str = "127.0.0.1") -> None:
    """One connection answering like an instant engine (the recorded moves);
    one named ``idle...`` says it plays atoll only."""
    stream = await open_from(source, port)
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
                        answer += ["id name fake", *IDLE_GAME_OPTION * name.startswith("idle"),
                                   "ugiok"]
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
                               one_ready, source_address(index))
            await trio.sleep(0.002)  # an orderly arrival, not a SYN flood


def _proc_stats(pid: int) -> tuple[int, float]:
    """(RSS in KiB, CPU seconds) of process ``pid``."""
    with open(f"/proc/{pid}/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks


def _serve(db: str, *arena: str, log: list[str] | None = None) -> tuple[subprocess.Popen[str], int]:
    """An ``arbiter serve`` process and its port; its log read on by a thread
    (into ``log``), so that a full pipe never holds the server."""
    import threading

    proc = subprocess.Popen(_arbiter("serve", "--db", db, "--listen", "127.0.0.1:0", *arena),
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.stderr is not None
    stderr = proc.stderr
    for line in stderr:
        if "listening on" in line:
            threading.Thread(target=(log if log is not None else []).extend, args=(stderr,),
                             daemon=True).start()
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


def _arena_figures(db: str) -> tuple[int, int, int]:
    """Plies stored, games stored and time forfeits in ``db``."""
    with sqlite3.connect(db) as conn:
        plies, stored = conn.execute("select sum(json_array_length(moves)), count(*) "
                                     "from games").fetchone()
        forfeits = conn.execute("select count(*) from games where termination = "
                                "'time-forfeit'").fetchone()[0]
    return plies or 0, stored, forfeits


def load_together(idle: int, games: int, seconds: float) -> None:
    """``idle`` idle connections and ``games`` arena games at once on one
    server: the idle ones play atoll only (:data:`IDLE_GAME_OPTION`), the
    arena troll, so it never pairs them."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "server.db")
        with TokenStore(db) as tokens:
            secrets = [tokens.add(f"t{i}") for i in range(wire.MAX_CONNECTIONS // 8 + 1)]
        log: list[str] = []
        server, port = _serve(db, "--arena", f"game={GAME} tc=10+0.1", log=log)
        time.sleep(1.0)
        before, _ = _proc_stats(server.pid)
        idlers = _load_process(port, secrets, [f"idle{i}" for i in range(idle)])
        time.sleep(2.0)
        with_idle, _ = _proc_stats(server.pid)
        players = _load_process(port, secrets[::-1], [f"e{i}" for i in range(2 * games)])
        _, cpu_start = _proc_stats(server.pid)
        started = time.monotonic()
        time.sleep(seconds)
        rss_end, cpu_end = _proc_stats(server.pid)
        elapsed = time.monotonic() - started
        load_average = os.getloadavg()[0]
        dropped = sum("disconnected" in line and "idle" in line for line in log)
        _stop(players, idlers, server)
        plies, stored, forfeits = _arena_figures(db)
        print(f"load together: {idle} idle authenticated connections, then {games} concurrent "
              f"arena games at 10+0.1 ({2 * games} remote engines) on the same server for "
              f"{elapsed:.0f} s")
        print(f"  server RSS {before / 1024:.1f} -> {with_idle / 1024:.1f} MiB with the idle "
              f"ones ({(with_idle - before) / idle:.1f} KiB per connection), "
              f"{rss_end / 1024:.1f} MiB at the end")
        print(f"  {stored} games, {plies} plies stored; server CPU {cpu_end - cpu_start:.1f} s = "
              f"{(cpu_end - cpu_start) / max(plies, 1) * 1000:.2f} ms per ply "
              f"({(cpu_end - cpu_start) / elapsed * 100:.0f}% of a core); time forfeits: "
              f"{forfeits}; idle connections dropped: {dropped}; load average {load_average:.2f}")


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
        plies, stored, forfeits = _arena_figures(db)
        print(f"load: {games} concurrent arena games at 10+0.1 ({2 * games} remote engines) "
              f"for {elapsed:.0f} s: {stored} games, {plies} plies stored; server CPU "
              f"{cpu_end - cpu_start:.1f} s = {(cpu_end - cpu_start) / max(plies, 1) * 1000:.2f} "
              f"ms per ply; time forfeits: {forfeits}; load average {os.getloadavg()[0]:.2f}")


# --------------------------------------------------------------------------
# floor: the three-process path in bare blocking Python, before any arbiter code
# --------------------------------------------------------------------------


def _ply_lines(moves: list[str], ply: int) -> bytes:
    """What the arbiter sends for ``ply``: the position and a go with clock fields."""
    return (f"position startpos moves {' '.join(moves[:ply])}\n"
            "go p1time 1000000 p2time 1000000 p1inc 0 p2inc 0\n").encode()


def _read_line(fd: int, buffer: bytearray) -> bytes:
    while b"\n" not in buffer:
        data = os.read(fd, 65536)
        if not data:
            raise EOFError
        buffer += data
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return line


def _relay_child(port: int) -> None:
    """The bare relay: socket -> engine pipe, engine pipe -> socket, one
    blocking call each, no framing (``--floor``)."""
    import socket

    moves = recorded_game(GAME, 1)
    engine = subprocess.Popen([sys.executable, REPLAY, *moves], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, bufsize=0)
    assert engine.stdin is not None and engine.stdout is not None
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    stdin, stdout = engine.stdin.fileno(), engine.stdout.fileno()
    pending = bytearray()
    while True:
        data = sock.recv(65536)
        if not data:
            break
        os.write(stdin, data)
        if b"go" in data:
            sock.sendall(_read_line(stdout, pending) + b"\n")
    engine.kill()


def floor(rounds: int, plies: int) -> None:
    """Wall time per round trip: a bare pipe to the engine, against the bare
    relay (this process -> loopback TCP -> relay process -> pipe -> engine and back)."""
    import socket

    moves = recorded_game(GAME, 1)
    engine = subprocess.Popen([sys.executable, REPLAY, *moves], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, bufsize=0)
    assert engine.stdin is not None and engine.stdout is not None
    server = socket.create_server(("127.0.0.1", 0))
    relay = subprocess.Popen([sys.executable, __file__, "--relay-child",
                              str(server.getsockname()[1])], env={**os.environ, "PYTHONPATH": ROOT})
    sock, _ = server.accept()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pipe_in, pipe_out = engine.stdin.fileno(), engine.stdout.fileno()
    sock_fd = sock.fileno()
    pipe_buffer, sock_buffer = bytearray(), bytearray()
    pipe_us, relay_us, ratios = [], [], []
    count = min(plies, len(moves))
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(plies // count or 1):
            for ply in range(count):
                os.write(pipe_in, _ply_lines(moves, ply))
                _read_line(pipe_out, pipe_buffer)
        pipe = (time.perf_counter() - started) / count / (plies // count or 1)
        started = time.perf_counter()
        for _ in range(plies // count or 1):
            for ply in range(count):
                os.write(sock_fd, _ply_lines(moves, ply))
                _read_line(sock_fd, sock_buffer)
        remote = (time.perf_counter() - started) / count / (plies // count or 1)
        pipe_us.append(pipe * 1e6)
        relay_us.append(remote * 1e6)
        ratios.append(remote / pipe)
    client_us = _client_floor(server, moves, rounds, count, plies // count or 1)
    sock.close()
    relay.wait(10)
    engine.kill()
    print(f"floor: bare blocking Python, {rounds} rounds of {plies} round trips; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"  pipe  {statistics.median(pipe_us):.0f} us/round trip (this process -> engine)")
    print(f"  relay {statistics.median(relay_us):.0f} us/round trip (-> TCP -> relay -> engine)")
    print(f"  relay/pipe {statistics.median(ratios):.2f}x "
          f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})")
    print(f"  client {statistics.median(client_us):.0f} us/round trip (frames over TCP -> "
          f"arbiter connect -> engine; this side bare blocking Python)")


def _client_floor(server, moves: list[str], rounds: int, count: int, repeat: int) -> list[float]:
    """Round trips through a real ``arbiter connect``, this side speaking the
    wire in bare blocking Python (handshake by hand): the client's share."""
    with tempfile.TemporaryDirectory() as tmp:
        secret = TokenStore(os.path.join(tmp, "t.db")).add("floor")
    cmd = " ".join([sys.executable, REPLAY, *moves])
    client = subprocess.Popen(_arbiter("connect", f"127.0.0.1:{server.getsockname()[1]}",
                                       "--token", secret, "-e", f"cmd='{cmd}' name=floor"),
                              env={**os.environ, "PYTHONPATH": ROOT}, stderr=subprocess.DEVNULL)
    sock, _ = server.accept()
    conn = WireConnection(Role.SERVER)

    def frame() -> wire.Frame:
        while (event := conn.next_event()) is NEED_DATA:
            conn.receive_data(sock.recv(65536))
        return event

    assert isinstance(frame(), wire.Hello)
    sock.sendall(conn.send(wire.Welcome(wire.WIRE_VERSION, "floor", 5000, False)))
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(repeat):
            for ply in range(count):
                sock.sendall(conn.send(wire.Lines(_ply_lines(moves, ply).decode().splitlines())))
                while not isinstance(event := frame(), wire.Lines) or \
                        not event.lines[-1].startswith("bestmove"):
                    pass
        times.append((time.perf_counter() - started) / count / repeat * 1e6)
    sock.sendall(conn.send(wire.Close("done")))
    client.wait(10)
    sock.close()
    return times


# --------------------------------------------------------------------------
# instructions: the same games counted by callgrind (independent of the load)
# --------------------------------------------------------------------------

#: a callgrind run's bound (seconds): about 25x slower than a plain run, on a loaded machine
COUNTED_RUN_TIMEOUT = 1800
#: the real interpreter (valgrind cannot run pyenv's shim)
PYTHON = os.path.realpath(sys.executable)


def _valgrind(out: str) -> list[str]:
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", PYTHON]


def _totals(directory: str, prefix: str) -> int:
    total = 0
    for name in os.listdir(directory):
        if name.startswith(prefix):
            with open(os.path.join(directory, name)) as data:
                total += next(int(line.split()[1]) for line in data
                              if line.startswith(("summary:", "totals:")))
    return total


def _counted_run(kind: str, games: int, tls: bool) -> tuple[int, int]:
    """Instructions of the arbiter/server process and of the clients for
    ``games`` games of ``kind``."""
    with tempfile.TemporaryDirectory() as out:
        argv = [*_valgrind(os.path.join(out, "server")), __file__, "--only", kind, "--rounds",
                "1", "--games-per-round", str(games), "--skip-load", "--client-valgrind", out]
        if tls:
            argv.append("--tls")
        subprocess.run(argv, check=True, env={**os.environ, "PYTHONPATH": ROOT},
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=COUNTED_RUN_TIMEOUT)
        return _totals(out, "server"), _totals(out, "client.")


def instructions(tls: bool) -> None:
    """Per ply: (6 games - 2 games) / 4 games' plies, so start-up cancels."""
    plies = 4 * len(recorded_game(GAME, 1))
    pipe = [_counted_run("pipe", games, False) for games in (2, 6)]
    arbiter = (pipe[1][0] - pipe[0][0]) / plies
    print(f"instructions per ply: pipe arbiter {arbiter / 1e3:.0f}k", flush=True)
    remote = [_counted_run("remote", games, tls) for games in (2, 6)]
    server = (remote[1][0] - remote[0][0]) / plies
    client = (remote[1][1] - remote[0][1]) / plies
    print(f"instructions per ply (callgrind){' over TLS' if tls else ''}: "
          f"pipe arbiter {arbiter / 1e3:.0f}k; remote server {server / 1e3:.0f}k "
          f"({server / arbiter:.2f}x), client {client / 1e3:.0f}k; "
          f"server+client {(server + client) / arbiter:.2f}x the pipe arbiter")


def main() -> None:
    if sys.argv[1:2] == ["--counted-client"]:  # its arguments are connect's, not ours
        counted_client(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--games-per-round", type=int, default=3)
    parser.add_argument("--idle", type=int, default=500)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--together", action="store_true",
                        help="the load's idle connections and arena games at once, one server")
    parser.add_argument("--floor", action="store_true",
                        help="also the bare relay against the bare pipe")
    parser.add_argument("--tls", action="store_true", help="the remote engines over TLS")
    parser.add_argument("--steps", action="store_true",
                        help="count trio task steps and scheduler passes per ply")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions per ply under callgrind instead of timing")
    parser.add_argument("--only", choices=("pipe", "remote"), default="")
    parser.add_argument("--load-client", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--client-valgrind", help=argparse.SUPPRESS)
    parser.add_argument("--relay-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_client:
        port, secrets, names = args.load_client
        trio.run(_load_client, int(port), secrets.split(","), names.split(","))
        return
    if args.instructions:
        instructions(args.tls)
        return
    if args.relay_child:
        _relay_child(args.relay_child)
        return
    if args.floor:
        floor(args.rounds, 54 * args.games_per_round * 2)
    if not args.skip_overhead:
        prefix = _valgrind(os.path.join(args.client_valgrind, "client.%p")) \
            if args.client_valgrind else []
        steps = Steps() if args.steps else None
        trio.run(overhead, Options(args.rounds, args.games_per_round, tls=args.tls,
                                   only=args.only, steps=steps, client_prefix=prefix),
                 instruments=[steps] if steps else [])
    if not args.skip_load:
        (load_together if args.together else load)(args.idle, args.games, args.seconds)


if __name__ == "__main__":
    main()
