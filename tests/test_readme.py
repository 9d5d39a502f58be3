"""The README's examples run as written (issue 15, "Rough edges"; issue 29).

Every ``sh`` code block of README.md is read line by line (a line ending in
``\\`` goes on), comments dropped as a shell would.  Each ``arbiter ...`` line
must parse (its command exists, its options and arguments are accepted), and
each one is run in a fresh folder holding a copy of ``examples/`` and no
database yet -- what a new user on a fresh clone has.  A line that reads what
earlier lines wrote (the database, a record file, a token file, a running
server: :data:`READS_FROM`) runs after them, in their folder, in the README's
order; every other line is a test of its own, so that the examples run on
both xdist workers.  Nothing is skipped and nothing is changed for the test:
a README example that is too slow to run here must be made quicker in the
README.

A line that runs until it is stopped (:data:`RUNNERS`: ``arbiter web``,
``serve``, ``connect``, ``worker``, and a match that waits for a remote
engine) is started as a real process with what it needs (a server for
``connect``, the README's own ``connect`` line for the remote match, a TLS
Dask scheduler and certificates from trustme for ``worker``), checked at its
job (a page served, a client connected, a match played, a worker joined), then
stopped with SIGINT or SIGTERM, and its exit status checked.  These lines
listen on the README's own ports (7171, 8000, 8786), which must be free where
the tests run; the lines of one port are in one group, so they take it in
turn.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from cli import PROCESS_TIMEOUT, ROOT, Watched, child_env, invoke, start

from arbiter.cli import app

README = ROOT / "README.md"

#: the README's lines that are not ``arbiter`` commands, by their start:
#: installing and the whole test suite, which the test is part of
NOT_ARBITER = ("python3 -m pip install", "python3 -m pytest")


def sh_lines(text: str) -> list[str]:
    """The command lines of the ``sh`` blocks of ``text``, continuations joined."""
    lines: list[str] = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        pending = ""
        for raw in block.splitlines():
            if raw.rstrip().endswith("\\"):
                pending += raw.rstrip()[:-1] + " "
                continue
            line = (pending + raw).strip()
            pending = ""
            if line:
                lines.append(line)
    return lines


def commands(text: str) -> list[list[str]]:
    """Each line's commands (split on ``&&``) as words, comments dropped."""
    found = []
    for line in sh_lines(text):
        words = shlex.split(line, comments=True)
        while "&&" in words:
            cut = words.index("&&")
            found.append(words[:cut])
            words = words[cut + 1:]
        if words:
            found.append(words)
    return found


def arbiter_commands() -> list[list[str]]:
    every = commands(README.read_text(encoding="utf-8"))
    return [words for words in every if words[0] == "arbiter"]


def _redirect(words: list[str]) -> tuple[list[str], str | None]:
    """``arbiter ... > FILE``: the arguments and the file stdout goes to."""
    if ">" in words:
        cut = words.index(">")
        return words[:cut], words[cut + 1]
    return words, None


def test_the_readme_has_only_arbiter_commands_and_the_install_lines():
    every = commands(README.read_text(encoding="utf-8"))
    assert len(arbiter_commands()) >= 20  # the blocks were found
    others = [" ".join(words) for words in every if words[0] != "arbiter"]
    assert others and all(line.startswith(NOT_ARBITER) for line in others), others


def test_no_example_puts_a_token_on_the_command_line():
    """specs/wire.md §The server and the client: a command line is every
    local user's to read (``/proc/PID/cmdline``), so the README's
    ``connect`` reads its token from a file, and no example shows ``--token``."""
    connects = [words for words in arbiter_commands() if words[1] == "connect"]
    assert connects and all("--token-file" in words for words in connects)
    assert not [words for words in arbiter_commands() if "--token" in words]


def test_no_example_needs_what_a_clone_does_not_have():
    """No ``./my_engine``, no option the sample engines do not declare
    (``option.Hash``), and every file an example reads is in the clone."""
    text = README.read_text(encoding="utf-8")
    assert "my_engine" not in text and "Hash" not in text
    for words in arbiter_commands():
        for word in words:
            if word.startswith("examples/"):
                assert (ROOT / word).is_file(), word


def _parse(words: list[str]) -> None:
    """Parse ``arbiter ARGS`` as click would, without running the command:
    an unknown command or option, a missing argument or a bad value raises."""
    group = typer.main.get_command(app)
    args, _ = _redirect(words[1:])
    command, name = group, "arbiter"
    while args and not args[0].startswith("-") and hasattr(command, "get_command"):
        found = command.get_command(command.make_context(name, [], resilient_parsing=True), args[0])
        if found is None:
            break
        command, name, args = found, f"{name} {args[0]}", args[1:]
    try:
        command.make_context(name, list(args))
    except typer.Exit as exc:  # --version, --help: an eager option that ended it
        assert exc.exit_code == 0
    except SystemExit as exc:  # pragma: no cover - click's way on some versions
        assert exc.code == 0


@pytest.mark.parametrize("words", arbiter_commands(), ids=lambda words: " ".join(words)[:60])
def test_every_arbiter_line_parses(words):
    _parse(words)


def test_a_misspelt_option_would_be_caught():
    """The parse check can fail."""
    with pytest.raises(Exception, match="--gmaes"):
        _parse(["arbiter", "match", "troll", "mcts", "greedy", "--gmaes", "4"])


#: the README lines that read what an earlier line wrote, by their start:
#: the start of the line they read from (its latest occurrence before
#: them).  A line runs in the folder of the line it reads from, after it;
#: every other line runs alone, in a folder of its own
READS_FROM = {
    "arbiter standings": "arbiter match troll mcts greedy",  # its tournament (1, the latest)
    "arbiter tournaments": "arbiter match troll mcts greedy",
    "arbiter export": "arbiter match troll mcts greedy",  # tournament 1's games
    "arbiter replay games.pgn": "arbiter export --tournament 1",
    "arbiter show games.pgn": "arbiter export --tournament 1",
    "arbiter import games.pgn": "arbiter export --tournament 1",
    "arbiter ratings --game troll": "arbiter match troll mcts greedy",
    "arbiter ratings --game morris": "arbiter tournament -g morris",  # its games with random
    "arbiter web --http": "arbiter match troll mcts greedy",  # shows its tournament
    "arbiter serve": "arbiter token add",  # the token is in its database
    "arbiter connect": "arbiter serve",  # connects to it with the token file
    "arbiter match troll greedy remote:": "arbiter token add",  # its client's token
    "arbiter stop --db many.db": "arbiter match morris random greedy",  # the run it stops
}


def example_runs() -> list[list[list[str]]]:
    """The README's ``arbiter`` lines in groups: a line with the line it
    reads from (:data:`READS_FROM`, transitively), in the README's order;
    every group in the order of its first line."""
    lines = arbiter_commands()
    group_of: list[int] = []  # each line's group, by the index of the group's first line
    for at, words in enumerate(lines):
        line = " ".join(words)
        source = next((src for start, src in READS_FROM.items() if line.startswith(start)), None)
        if source is None:
            group_of.append(at)
            continue
        earlier = [i for i in range(at) if " ".join(lines[i]).startswith(source)]
        assert earlier, f"{line!r} reads from {source!r}, which no line before it starts with"
        group_of.append(group_of[earlier[-1]])
    return [[words for words, group in zip(lines, group_of, strict=True) if group == first]
            for first in dict.fromkeys(group_of)]


def test_every_example_runs_once_and_each_reader_after_what_it_reads():
    runs = example_runs()
    ran = [words for run in runs for words in run]
    every = arbiter_commands()
    assert sorted(map(" ".join, ran)) == sorted(map(" ".join, every))
    for run in runs:  # each group in the README's order
        assert sorted(run, key=every.index) == run
    for first in [*READS_FROM, *RUNNERS]:  # no stale entry
        assert any(" ".join(words).startswith(first) for words in every), first


class Scene:
    """The folder a group of README lines runs in, and the server a line
    started for the line after it (:attr:`serving`, stopped by the test
    once that line has run).  Every process started is killed on the way
    out of :attr:`stack` if a failed check left it running."""

    def __init__(self, folder: Path, stack: contextlib.ExitStack):
        self.folder = folder
        self.stack = stack
        self.serving: Watched | None = None
        self.running: Watched | None = None  # a run the line after it stops (arbiter stop)

    def start(self, words: list[str]) -> Watched:
        """The README line ``words`` (``arbiter ...``) started as written."""
        return self.watch(start(*words[1:], cwd=self.folder))

    def watch(self, proc: subprocess.Popen[str]) -> Watched:
        running = Watched(proc)
        self.stack.callback(running.kill)
        return running


def _option(words: list[str], name: str) -> str:
    """The value of option ``name`` in a README line."""
    return words[words.index(name) + 1]


def _run(scene: Scene, words: list[str]) -> None:
    """A line that runs to its end: in this process, exit status 0, its
    stdout written where ``> FILE`` sends it."""
    line = " ".join(words)
    args, out = _redirect(words[1:])
    result = invoke(*args, cwd=scene.folder)
    assert result.returncode == 0, f"{line}\n{result.stdout[-2000:]}\n{result.stderr}"
    if out is not None:
        Path(scene.folder, out).write_text(result.stdout, encoding="utf-8")
    if line.startswith("arbiter import games.pgn --db other.db"):
        assert (scene.folder / "games.pgn").stat().st_size > 0 and (scene.folder / "other.db").exists()
    if line.startswith("arbiter token add"):  # specs/wire.md §Authentication: the owner's alone
        assert (scene.folder / _option(words, "--out")).stat().st_mode & 0o777 == 0o600


def _web(scene: Scene, words: list[str]) -> None:
    """``arbiter web``: its first page lists the tournament of the match
    line, whose page shows its engines; SIGTERM ends it with 130
    (specs/web.md)."""
    address = _option(words, "--http")
    web = scene.start(words)
    web.wait_for(f"at http://{address}/")

    def page(path: str) -> str:
        with urllib.request.urlopen(f"http://{address}{path}", timeout=PROCESS_TIMEOUT) as answer:
            assert answer.status == 200
            return answer.read().decode("utf-8")

    assert 'href="/tournament/1"' in page("/")
    html = page("/tournament/1")
    assert "mcts" in html and "greedy" in html, html[:2000]
    assert web.stop(signal.SIGTERM) == 130, web.text


def _serve(scene: Scene, words: list[str]) -> None:
    """``arbiter serve``: listening where the line says, kept for the line
    after it (``connect``), then stopped by SIGTERM (130, specs/wire.md)."""
    server = scene.start(words)
    server.wait_for(f"listening on {_option(words, '--listen')}")
    scene.serving = server


def _connected(scene: Scene, words: list[str], server: Watched) -> Watched:
    """The README's ``connect`` line started; returned once ``server`` (a
    server or a run listening) has welcomed its engine, by the engine's
    name and the token's (``arbiter: NAME (TOKEN) connected``)."""
    token = (scene.folder / _option(words, "--token-file")).read_text(encoding="utf-8")
    client = scene.start(words)
    server.wait_for(f"{_option(words, '-e')} ({token.split('.')[0]}) connected")
    return client


def _connect(scene: Scene, words: list[str]) -> None:
    """``arbiter connect -e mcts`` (a sample engine, issue 29 item 10) on
    the server of the line before it: welcomed there; Ctrl-C ends it with
    130 and the server sees it go (specs/wire.md §The server and the client)."""
    assert scene.serving is not None, "arbiter connect needs the arbiter serve line before it"
    client = _connected(scene, words, scene.serving)
    assert client.stop(signal.SIGINT) == 130, client.text
    scene.serving.wait_for(" disconnected")


def _remote_match(scene: Scene, words: list[str]) -> None:
    """A match with ``remote:mcts``: the README's ``connect`` line, started
    once the match listens, plays it; the match ends (0) with its games
    stored, and the client ends when the run closes its connection or on
    SIGINT (specs/wire.md §Remote participants)."""
    run = scene.start(words)
    run.wait_for(f"listening on {_option(words, '--listen')}")
    (connect,) = [line for line in arbiter_commands() if line[1] == "connect"]
    client = _connected(scene, connect, run)
    assert run.wait() == 0, run.text
    client.proc.send_signal(signal.SIGINT)  # nothing if it has ended already
    assert client.wait() in (0, 130), client.text
    with sqlite3.connect(scene.folder / "arbiter.db") as db:
        games = db.execute("select white, black from games").fetchall()
    assert len(games) == int(_option(words, "--games"))
    assert all({white, black} == {"greedy", "mcts"} for white, black in games), games


def _worker(scene: Scene, words: list[str]) -> None:
    """``arbiter worker tls://...``: certificates of one CA made with
    trustme (specs/cluster.md §Security) where the line reads them, a
    ``dask scheduler --protocol tls`` at the line's address; the worker
    joins it with its engines file, and leaves it on SIGINT."""
    import trustme

    address = words[2]
    host, port = address.removeprefix("tls://").rsplit(":", 1)
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(scene.folder / _option(words, "--tls-ca")))
    certificates = {}
    for who in ("worker", "scheduler"):
        issued = ca.issue_cert(host, common_name=who)
        cert, key = ((_option(words, "--tls-cert"), _option(words, "--tls-key")) if who == "worker"
                     else ("scheduler.pem", "scheduler-key.pem"))
        issued.cert_chain_pems[0].write_to_path(str(scene.folder / cert))
        issued.private_key_pem.write_to_path(str(scene.folder / key))
        certificates[who] = (cert, key)
    scheduler = scene.watch(subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", host, "--port", port,
         "--no-dashboard", "--protocol", "tls", "--tls-ca-file", _option(words, "--tls-ca"),
         "--tls-cert", certificates["scheduler"][0], "--tls-key", certificates["scheduler"][1]],
        cwd=scene.folder, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True))
    worker = scene.start(words)
    joined = worker.wait_for(" joined ")
    engines = _option(words, "--engines")
    assert f"joined {address}: {_option(words, '--slots')} slot(s), engines new, old from {engines}" \
        in joined, joined
    assert worker.stop(signal.SIGINT) == 0, worker.text
    scheduler.wait_for("Remove worker")  # it left the scheduler
    scheduler.stop(signal.SIGTERM)


def _long_run(scene: Scene, words: list[str]) -> None:
    """The run ``arbiter stop`` stops: started as written, kept running for
    the line after it once it has stored a game."""
    run = scene.start(words)
    database = scene.folder / _option(words, "--db")
    deadline = time.monotonic() + PROCESS_TIMEOUT  # a guard against a hang only
    while _stored(database) == 0:
        assert run.proc.poll() is None and time.monotonic() < deadline, run.text
        time.sleep(0.02)
    scene.running = run


def _stored(database: Path) -> int:
    try:
        with sqlite3.connect(database) as db:
            return db.execute("select count(*) from games").fetchone()[0]
    except sqlite3.OperationalError:  # no file or no table yet
        return 0


def _stop(scene: Scene, words: list[str]) -> None:
    """``arbiter stop``: the run of the line before it finishes its games in
    progress, starts no new one and ends ``stopped`` with exit 0
    (specs/tournament.md §Stopping)."""
    run, scene.running = scene.running, None
    assert run is not None, "arbiter stop needs a run before it"
    _run(scene, words)
    assert run.wait() == 0, run.text
    with sqlite3.connect(scene.folder / _option(words, "--db")) as db:
        (status,), (stored,) = (db.execute("select status from tournaments").fetchone(),
                                db.execute("select count(*) from games").fetchone())
    assert status == "stopped" and stored < 400, (status, stored)


#: the README lines that run until they are stopped, or that need a process
#: beside them, by their start: how the test runs each (every other line:
#: :func:`_run`)
RUNNERS: dict[str, Callable[[Scene, list[str]], None]] = {
    "arbiter web --http": _web,
    "arbiter serve": _serve,
    "arbiter connect": _connect,
    "arbiter match troll greedy remote:": _remote_match,
    "arbiter worker": _worker,
    "arbiter match morris random greedy": _long_run,
    "arbiter stop": _stop,
}


def _runner(words: list[str]) -> Callable[[Scene, list[str]], None]:
    line = " ".join(words)
    return next((run for start, run in RUNNERS.items() if line.startswith(start)), _run)


@pytest.mark.parametrize("run", example_runs(), ids=lambda run: " ".join(run[0])[:60].rstrip())
def test_the_examples_run_on_a_fresh_clone(run, tmp_path):
    """A README line with the lines that read what it wrote, in the README's
    order, in a folder with examples/ and nothing else; each ends with exit
    status 0, or does its job until the test stops it (:data:`RUNNERS`)."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    with contextlib.ExitStack() as stack:
        scene = Scene(tmp_path, stack)
        for words in run:
            serving = scene.serving
            _runner(words)(scene, words)
            if serving is not None:  # a server serves the line after it
                assert serving.stop(signal.SIGTERM) == 130, serving.text
                scene.serving = None
        assert scene.serving is None, "a server with no line after it to serve"
        assert scene.running is None, "a run with no line after it to stop it"
    assert not (tmp_path / "engines.toml").exists()  # the names resolved without one


def test_the_engines_file_the_readme_shows_is_the_one_in_examples():
    text = README.read_text(encoding="utf-8")
    (shown,) = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    tables = "\n".join(line.strip() for line in shown.splitlines())
    assert tables.strip() in (ROOT / "examples" / "engines.toml").read_text(encoding="utf-8")
