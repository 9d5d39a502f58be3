"""The web view under load (``specs/web.md``; figures in bench/README.md §The web view).

Two parts, each measured against a baseline in the same run when
``--baseline REV`` names one (an earlier commit's ``arbiter/``, ``protocol/``
and ``sample_engines/``, extracted with ``git archive`` into a scratch
directory and put first on the path of the processes that use it):

1. **A big tournament's page.** A database of ``--games`` (10,000) games of
   one SPRT match (two real games from a real match, then stored again
   with other results and keys); the tournament page and its JSON, the
   first request (nothing remembered: the standings and the LLR counted
   from every row) and the following ones, wall and CPU time of a process
   of their own, through the real application (Starlette's TestClient);
   each version's process in turn, ``--rounds`` times.  Goal: at most 200
   ms.  Then the pages the baseline may not have, on the same database:
   the engine page (its rating history and head to head over the 10,000
   games), the list of engines, a game.
2. **Live viewers and the clocks.** Real tournaments as ``bench/load.py``
   plays them (mcts against mcts, tc ``1+0.01``, concurrency 4), run
   alternately (``--modes``): ``no-viewers``; with ``--viewers`` (100)
   event streams of the tournament page open from another process, the web
   view served by ``serve-http`` (``arbiter serve --http``'s own code,
   :mod:`arbiter.web.child`: an ``arbiter web`` child at a lower CPU
   priority), ``serve-http-baseline`` (the same, the baseline's view),
   ``web-process`` (a plain ``arbiter web`` beside the run, at its priority:
   ``arbiter tournament`` and ``arbiter web`` side by side), ``same-loop``
   (the view's tasks in the run's own trio loop: the first design of
   ``serve --http``); and ``no-live-rows`` (the live rows not written at
   all).  The clock error per move (measured minus engine-reported, p50 /
   p99: load.py's figure), time forfeits, the updates the viewers received.

Run: ``python3 bench/web.py [--games 10000] [--rounds 3] [--baseline REV]
[--viewers 100] [--load-games 32] [--repeat 1] [--modes no-viewers,serve-http,...]
[--skip-page] [--skip-viewers]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

import trio  # noqa: E402

#: the runs of part 2, alternated in this order
MODES = ("no-viewers", "serve-http", "serve-http-baseline", "web-process", "same-loop", "no-live-rows")
#: the runs with viewers: the view served by ``arbiter serve --http``'s child
#: process (niced; the baseline's), by a plain ``arbiter web`` process, in the run's own loop
VIEWED = ("serve-http", "serve-http-baseline", "web-process", "same-loop")
#: the modes run when none are named: with a baseline, the clocks without
#: viewers and with 100 viewers of the view as it is and as it was
DEFAULT_MODES = ("no-viewers", "serve-http", "serve-http-baseline")
#: the tree the baseline's code runs from (``--baseline``), set once extracted
BASELINE: dict[str, str] = {}

#: the SPRT of the big match: never decided by 10,000 random results
SPRT = "elo0=0 elo1=5"


# --------------------------------------------------------------------------
# 1. A big tournament's page
# --------------------------------------------------------------------------


def big_database(path: str, games: int) -> None:
    """A real 2-game SPRT match, then its first game stored again up to ``games``."""
    from typer.testing import CliRunner

    from arbiter.cli import app
    from arbiter.store import Store

    py = sys.executable
    run = CliRunner().invoke(app, [
        "match", "troll", f"cmd={py} arg=-m arg=sample_engines.greedy name=greedy",
        f"cmd={py} arg=-m arg=sample_engines.random name=random", "--games", "2",
        "--db", path, "--plain", "--sprt", SPRT])
    assert run.exit_code == 0, run.output
    rng = random.Random(1)
    with Store(path) as store:
        record = store.games(1)[0]["record"]
        with store.transaction():
            for i in range(games - 2):
                copy = dict(record, result=rng.choice(["1-0", "0-1", "1/2-1/2"]))
                store.save_game(1, key=f"x{i}", seq=2 + i, round=1, pairing=1, index=3 + i,
                                pair=2 + i // 2, opening={}, record=copy)


def timed(client, url: str) -> tuple[float, float, int]:
    """(wall ms, CPU ms, bytes) of one GET."""
    wall, cpu = time.perf_counter(), time.process_time()
    response = client.get(url)
    assert response.status_code == 200, (url, response.text[:200])
    return (1000 * (time.perf_counter() - wall), 1000 * (time.process_time() - cpu),
            len(response.content))


#: the big database's pages timed in every version, then those timed in this one only
PAGES = ("/tournament/1", "/api/tournament/1")
NEW_PAGES = ("/engine/greedy", "/engines", "/game/1", "/tournament/1?engine=greedy&result=1-0")


def time_pages(path: str, urls: list[str]) -> None:
    """(A child process, its code first on its path.) Each URL through a
    fresh application: the first request and the median of 5 more, as JSON."""
    from starlette.testclient import TestClient

    from arbiter.web import create_app

    out = {}
    for url in urls:
        app = create_app(path)  # a fresh view: nothing remembered
        with TestClient(app) as client:
            first = timed(client, url)
            again = [timed(client, url) for _ in range(5)]
        app.state.reader.close()
        out[url] = {"first": first, "wall": statistics.median(a[0] for a in again),
                    "cpu": statistics.median(a[1] for a in again)}
    print(json.dumps(out))


def _pages_in(tree: str | None, path: str, urls: tuple[str, ...]) -> dict[str, Any]:
    """:func:`time_pages` in a process of its own, with ``tree``'s code (None: this one's)."""
    command = [sys.executable, __file__, "--time-pages", path, *urls]
    if tree is not None:
        command += ["--tree", tree]
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(run.stdout.strip().splitlines()[-1])


def page(args, directory: str) -> None:
    path = os.path.join(directory, "big.db")
    started = time.perf_counter()
    big_database(path, args.games)
    print(f"a big tournament's page: {args.games} games (built in {time.perf_counter() - started:.0f} s), "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; first request (nothing "
          "remembered) and the median of 5 more, wall / CPU ms")
    versions = [("baseline " + args.baseline, BASELINE["tree"])] if args.baseline else []
    versions.append(("this tree", None))
    for round_ in range(args.rounds):
        for label, tree in versions:
            for url, t in _pages_in(tree, path, PAGES).items():
                print(f"  round {round_ + 1} {label:<18} {url:<20} first {t['first'][0]:5.0f} / "
                      f"{t['first'][1]:4.0f} ms ({t['first'][2] // 1024} KiB); then {t['wall']:5.1f} / "
                      f"{t['cpu']:5.1f} ms", flush=True)
    for url, t in _pages_in(None, path, NEW_PAGES).items():
        print(f"  this tree {url:<42} first {t['first'][0]:5.0f} / {t['first'][1]:4.0f} ms "
              f"({t['first'][2] // 1024} KiB); then {t['wall']:5.1f} / {t['cpu']:5.1f} ms", flush=True)
    print(f"  (load average now {os.getloadavg()[0]:.1f})")


def extract_baseline(revision: str, directory: str) -> str:
    """``revision``'s code (``arbiter/``, ``protocol/``, ``sample_engines/``)
    in a directory of ``directory``: the tree a baseline runs from."""
    tree = os.path.join(directory, "baseline")
    os.makedirs(tree)
    archive = subprocess.run(["git", "-C", ROOT, "archive", revision, "arbiter", "protocol",
                              "sample_engines"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
    return tree


# --------------------------------------------------------------------------
# 2. Live viewers and the clocks
# --------------------------------------------------------------------------


def viewers_client(url: str, count: int) -> None:
    """(A child process.) ``count`` event streams of ``url`` read until
    SIGTERM; then the number of updates received, as JSON on stdout."""
    import http.client
    from urllib.parse import urlsplit

    from arbiter.web.child import VIEW_NICENESS

    os.nice(VIEW_NICENESS)  # viewers are other machines: their reading is not the server's cost
    parts = urlsplit(url)
    received = [0] * count
    stop = threading.Event()
    ready = threading.Semaphore(0)

    def viewer(i: int) -> None:
        try:
            connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port,
                                                    timeout=600)
            connection.request("GET", parts.path)
            response = connection.getresponse()
            for line in response:
                if line.startswith(b"event: section"):
                    received[i] += 1
                    if received[i] == 1:
                        ready.release()
        except OSError:
            pass
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    for i in range(count):
        threading.Thread(target=viewer, args=(i,), daemon=True).start()
    for _ in range(count):
        ready.acquire()
    print("ready", flush=True)  # every viewer has the page's state: the run may start
    stop.wait()
    print(json.dumps({"updates": sum(received), "viewers": sum(1 for r in received if r)}), flush=True)


async def _line(stream: Any) -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        chunk = await stream.receive_some(1)
        assert chunk, "the process ended"
        line += chunk
    return line


async def _viewers(url: str, viewers: int, seen: dict[str, Any], *,
                   task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """A process of ``viewers`` event streams of ``url`` until cancelled;
    started once every stream has had its first event."""
    child = await trio.lowlevel.open_process(
        [sys.executable, __file__, "--viewers-client", url, "--viewers", str(viewers)],
        stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        assert await _line(child.stdout) == b"ready\n"
        task_status.started()
        await trio.sleep_forever()
    finally:
        with trio.CancelScope(shield=True):
            child.send_signal(signal.SIGTERM)
            assert child.stdout is not None
            out = b""
            async for chunk in child.stdout:
                out += chunk
            await child.wait()
            seen.update(json.loads(out or b"{}"))


async def _with_view(db: str, viewers: int, seen: dict[str, Any], mode: str, *,
                     task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """The web view of ``db`` as ``mode`` serves it, and ``viewers`` event
    streams of its tournament page from another process; started once
    every viewer is attached."""
    if mode == "same-loop":
        await _in_loop(db, viewers, seen, task_status=task_status)
        return
    from arbiter.web.child import start_view, stop_view

    if mode == "serve-http":  # arbiter serve --http's own code: a niced child
        web, url = await start_view(db, "127.0.0.1", 0)
    elif mode == "serve-http-baseline":  # the same child, the baseline's code
        env = {**os.environ, "PYTHONSAFEPATH": "1",  # the working directory's arbiter not first
               "PYTHONPATH": os.pathsep.join(filter(None, (BASELINE["tree"], os.environ.get("PYTHONPATH"))))}
        web, url = await start_view(db, "127.0.0.1", 0, env=env)
    else:  # an arbiter web process beside the run, at the run's priority
        web = await trio.lowlevel.open_process(
            [sys.executable, "-m", "arbiter", "web", "--db", db, "--http", "127.0.0.1:0"],
            stdout=subprocess.PIPE)
        assert web.stdout is not None
        url = (await _line(web.stdout)).decode().split(" at ")[1].strip().rstrip("/")
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(_viewers, f"{url}/events/tournament/1", viewers, seen))
            task_status.started()
    finally:
        if web.stdin is None:
            web.kill()
        await stop_view(web)


async def _in_loop(db: str, viewers: int, seen: dict[str, Any], *,
                   task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """The view served in this trio run (the first design of ``serve --http``)."""
    from arbiter.web import create_app
    from arbiter.web.serve import serve_view

    view = create_app(db)
    try:
        async with trio.open_nursery() as nursery:
            (url,) = await nursery.start(serve_view, view, "127.0.0.1", 0)
            try:
                await nursery.start(partial(_viewers, f"{url}/events/tournament/1", viewers, seen))
                task_status.started()
                await trio.sleep_forever()
            finally:
                seen["renders"] = view.state.feed.renders
    finally:
        view.state.reader.close()


def run_tournament(config: Any, directory: str, mode: str, viewers: int, seen: dict[str, Any]
                   ) -> tuple[float, list[dict[str, Any]]]:
    """``bench/load.py``'s run, with the viewers attached before the first game."""
    from arbiter.run.coordinator import Coordinator
    from arbiter.store import Store
    from arbiter.tournament import open_tournament

    path = os.path.join(directory, "load.db")
    with Store(path) as store:
        tournament_id, _ = open_tournament(store, config)
        tournament = Coordinator(config, store, tournament_id)

        async def main() -> float:
            async with trio.open_nursery() as nursery:
                if mode in VIEWED:
                    await nursery.start(partial(_with_view, path, viewers, seen, mode))
                started = time.perf_counter()
                result = await tournament.run()
                nursery.cancel_scope.cancel()
            if result.status != "finished":
                raise SystemExit(f"bench tournament ended {result.status}: {result.note}")
            return time.perf_counter() - started

        seconds = trio.run(main)
        return seconds, store.games(tournament_id)


def one_run(args, mode: str) -> dict[str, Any]:
    from load import _tournament_config, percentile

    from arbiter import live
    from arbiter.engine import EngineConfig

    engines = [EngineConfig(cmd=f"{sys.executable} -m sample_engines.mcts", name=f"mcts{i}",
                            options={"Seed": str(i + 1)}) for i in range(2)]
    config = _tournament_config(game="troll", engines=engines, games=args.load_games, tc=args.tc,
                                random_plies=2, seed=1, concurrency=4, name="bench web")
    seen: dict[str, Any] = {}
    written = live.LiveGames.keep_written
    with tempfile.TemporaryDirectory(prefix="bench-web-") as directory:
        if mode == "no-live-rows":
            async def nothing(self, interval: float = 0) -> None:
                await trio.sleep_forever()
            live.LiveGames.keep_written = nothing  # type: ignore[method-assign]  # this run only
        try:
            seconds, rows = run_tournament(config, directory, mode, args.viewers, seen)
        finally:
            live.LiveGames.keep_written = written  # type: ignore[method-assign]
    errors = [m["time_ms"] - m["engine_time_ms"] for r in rows for m in r["move_data"]
              if m.get("engine_time_ms") is not None]
    return {"mode": mode, "games": len(rows), "seconds": seconds,
            "forfeits": sum(1 for r in rows if r["termination"] == "time-forfeit"),
            "p50": statistics.median(errors), "p99": percentile(errors, 0.99), "moves": len(errors),
            **seen}


def viewers(args) -> None:
    print(f"live viewers: troll, mcts vs mcts, {args.load_games} games, tc {args.tc}, concurrency 4, "
          f"{os.cpu_count()} cores; {args.viewers} viewers of the tournament page")
    for _ in range(args.repeat):
        for mode in args.modes.split(","):
            r = one_run(args, mode)
            extra = (f"; {r.get('viewers', 0)} viewers got {r.get('updates', 0)} section updates"
                     + (f" ({r['renders']} renders)" if "renders" in r else "")
                     ) if mode in VIEWED else ""
            print(f"  {mode:<22} clock error p50 {r['p50']:5.1f} ms, p99 {r['p99']:6.1f} ms over "
                  f"{r['moves']} moves; forfeits {r['forfeits']} of {r['games']}; "
                  f"{r['seconds']:.0f} s{extra}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="the page's timings per version")
    parser.add_argument("--baseline", metavar="REV", help="an earlier commit to measure beside this tree")
    parser.add_argument("--baseline-tree", metavar="DIR",
                        help="the baseline's code extracted already (git archive REV arbiter protocol "
                             "sample_engines): on a machine without the repository's history")
    parser.add_argument("--time-pages", metavar="DB", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    parser.add_argument("urls", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--load-games", type=int, default=32)
    parser.add_argument("--tc", default="1+0.01")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--modes", help="the runs, comma-separated, in this order, of: " + ",".join(MODES)
                        + " (default: " + ",".join(DEFAULT_MODES) + " with --baseline, else without its baseline)")
    parser.add_argument("--skip-page", action="store_true")
    parser.add_argument("--skip-viewers", action="store_true")
    parser.add_argument("--viewers-client", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.viewers_client:
        viewers_client(args.viewers_client, args.viewers)
        return
    if args.time_pages:
        if args.tree:
            sys.path.insert(0, args.tree)  # before anything of arbiter is imported
        time_pages(args.time_pages, args.urls)
        return
    if args.modes is None:
        args.modes = ",".join(m for m in DEFAULT_MODES if args.baseline or not m.endswith("-baseline"))
    if "-baseline" in args.modes and not args.baseline:
        parser.error("a -baseline mode needs --baseline REV")
    if args.baseline_tree and not args.baseline:
        parser.error("--baseline-tree needs --baseline REV (the revision it holds)")
    with tempfile.TemporaryDirectory(prefix="bench-web-") as directory:
        if args.baseline:
            BASELINE["tree"] = (os.path.abspath(args.baseline_tree) if args.baseline_tree
                                else extract_baseline(args.baseline, directory))
        if not args.skip_page:
            page(args, directory)
        if not args.skip_viewers:
            viewers(args)


if __name__ == "__main__":
    main()
