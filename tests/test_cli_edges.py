"""The command line's rough edges a new user meets (issue 15, "Rough edges").

Each test names the rule it checks (specs/match.md §Engine specs and
§Engine names, specs/tournament.md §Engine faults and §Listing and deleting,
specs/storage.md's read-only open).  Most run in this process through
:func:`cli.invoke`; games use ``depth=1`` so they take a second.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli import ROOT, arbiter, child_env, invoke, start
from typer.testing import CliRunner

from arbiter import cli as arbiter_cli
from arbiter.cli.app import platform_problem
from arbiter.config import ConfigError, engine_configs, from_file_and_flags
from arbiter.enginespec import EngineSpecError, load_engines_file, parse_engine_spec
from arbiter.store import Store

PY = sys.executable
FAST = ("--tc", "depth=1")


def _count(db: Path, sql: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchone()[0]


# --------------------------------------------------------------------------
# Sample engines by name, from any folder (specs/match.md §Engine specs)
# --------------------------------------------------------------------------


def test_sample_engines_resolve_by_name_in_a_folder_without_engines_toml(tmp_path):
    assert not (tmp_path / "engines.toml").exists()
    run = invoke("play", "troll", "-e", "random", "-e", "greedy", *FAST, "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    record = json.loads(run.stdout)
    assert (record["white"], record["black"]) == ("random", "greedy")
    assert [e.name for e in engine_configs(["mcts", "greedy", "random"])] == ["mcts", "greedy", "random"]


def test_a_local_engines_toml_still_wins_over_a_sample_engine(tmp_path):
    (tmp_path / "engines.toml").write_text(
        f'[engines.random]\ncmd = "{PY} -m sample_engines.greedy"\nname = "local"\n')
    run = invoke("play", "troll", "-e", "random", "-e", "mcts", *FAST, "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["white"] == "local"


def test_an_unknown_name_still_says_there_is_no_engines_file(tmp_path):
    run = invoke("play", "troll", "-e", "nosuch", "-e", "random", cwd=tmp_path)
    assert run.returncode == 2
    assert "'nosuch'" in run.stderr and "not a sample engine" in run.stderr
    assert "there is no engines file" in run.stderr


# --------------------------------------------------------------------------
# One name everywhere (specs/match.md §Engine names)
# --------------------------------------------------------------------------


def test_an_unnamed_engine_has_one_name_in_the_live_view_the_record_and_the_pgn(tmp_path):
    """Before: `sample_engines.random` in the live view, the engine's `id name`
    (`Random`) in the record and the PGN."""
    unnamed = f"cmd='{PY} -m sample_engines.random'"
    run = invoke("play", "troll", "-e", unnamed, "-e", "greedy", *FAST, "--pgn", "g.pgn",
                 cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("troll: sample_engines.random (White) vs greedy (Black)")
    pgn = (tmp_path / "g.pgn").read_text()
    assert '[White "sample_engines.random"]' in pgn
    run = invoke("play", "troll", "-e", unnamed, "-e", "greedy", *FAST, "--json", cwd=tmp_path)
    record = json.loads(run.stdout)
    assert record["white"] == "sample_engines.random"
    assert record["white_id"]["name"] == "Random"  # what it said is kept beside the name


def test_a_tournament_stores_the_same_name(tmp_path):
    unnamed = f"cmd='{PY} -m sample_engines.random'"
    run = invoke("match", "troll", unnamed, "greedy", "--games", "2", *FAST, "--db", "t.db",
                 cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(tmp_path / "t.db") as conn:
        names = {name for row in conn.execute("select white, black from games") for name in row}
    assert names == {"sample_engines.random", "greedy"}


@pytest.mark.parametrize("spec, key", [
    ("cmd=x name=a name=b", "name"),
    ("cmd=x cmd=y", "cmd"),
    ("cmd=x option.Seed=1 option.Seed=2", "option.Seed"),
    ("cmd=x tc=st=1 tc=st=2", "tc"),
    ("cmd=x env.A=1 env.A=2", "env.A"),
    ("cmd=x conf=a conf=b", "conf"),
])
def test_a_key_given_twice_in_a_spec_is_an_error(spec, key):
    with pytest.raises(EngineSpecError, match=re.escape(f"{key}= given twice")):
        parse_engine_spec(spec, {"a": parse_engine_spec("cmd=a"), "b": parse_engine_spec("cmd=b")}, "f")


def test_arg_may_repeat_and_the_cli_reports_a_duplicate_in_one_line(tmp_path):
    assert parse_engine_spec("cmd=x arg=-v arg=-q").args == ["-v", "-q"]
    run = invoke("play", "troll", "-e", "random name=a name=b", "-e", "greedy", cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "name= given twice" in run.stderr


# --------------------------------------------------------------------------
# --each (specs/match.md §Engine specs)
# --------------------------------------------------------------------------


def test_each_gives_settings_to_every_engine_and_a_spec_wins(tmp_path):
    engines = {"a": parse_engine_spec("cmd=a tc=5+0.1 option.Seed=1")}
    config = parse_engine_spec("a option.Seed=9", engines, "f", each="tc=depth=1 option.Seed=3 arg=-x")
    assert config.tc == "depth=1"  # --each over the table
    assert config.options == {"Seed": "9"}  # the SPEC's own word over --each
    assert config.args == ["-x"]
    for bad, words in [("name=x", "name= cannot be given for every engine"),
                       ("conf=a", "conf= cannot be given"), ("tc=fast", "bad time control"),
                       ("tc=1 tc=2", "tc= given twice"), ("nokey", "is not key=value")]:
        with pytest.raises(EngineSpecError, match=re.escape(words)):
            parse_engine_spec("cmd=x", each=bad)


def test_each_on_the_command_line_reaches_every_engine(tmp_path):
    run = invoke("match", "troll", "random", "greedy", "--games", "2", "--db", "e.db",
                 "--each", "tc=depth=1 option.Seed=5", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(tmp_path / "e.db") as conn:
        config = json.loads(conn.execute("select config from tournaments").fetchone()[0])
    assert [(e["tc"], e["options"]) for e in config["engines"]] == [("depth=1", {"Seed": "5"})] * 2
    run = invoke("play", "troll", "-e", "random", "-e", "greedy", "--each", "tc=depth=1", "--json",
                 cwd=tmp_path)
    assert json.loads(run.stdout)["time_control"] == {"white": "depth=1", "black": "depth=1"}
    run = invoke("play", "troll", "-e", "random", "-e", "greedy", "--each", "name=z", cwd=tmp_path)
    assert run.returncode == 2 and "--each 'name=z'" in run.stderr


def test_each_reaches_the_engines_of_a_config_file(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('game = "troll"\nengine = ["random", "greedy tc=st=1"]\n')
    config, _ = from_file_and_flags(str(path), None, None, {"each": "tc=depth=1"})
    assert [e.tc for e in config.engines] == ["depth=1", "st=1"]
    path.write_text('game = "troll"\n[engines.a]\ncmd = "x"\n[engines.b]\ncmd = "y"\n')
    config, _ = from_file_and_flags(str(path), None, None, {"each": "timemargin=7"})
    assert [e.timemargin_ms for e in config.engines] == [7, 7]
    with pytest.raises(ConfigError, match="--each"):
        from_file_and_flags(str(path), None, None, {"each": "name=q"})


# --------------------------------------------------------------------------
# Engines checked before a tournament exists (specs/tournament.md §Engine faults)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("bad, words", [
    ("cmd=no-such-engine-here name=typo", "cannot start 'no-such-engine-here'"),
    ("random option.Nope=1", "has no option 'Nope'"),
])
def test_an_engine_that_cannot_start_leaves_no_tournament(tmp_path, bad, words):
    run = invoke("tournament", "-g", "troll", "-e", bad, "-e", "greedy", *FAST, "--db", "t.db",
                 "--log", "logs", "--pgn", "t.pgn", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert words in run.stderr and "no tournament was created" in run.stderr
    assert _count(tmp_path / "t.db", "select count(*) from tournaments") == 0
    assert not (tmp_path / "logs").exists() and not (tmp_path / "t.pgn").exists()


def test_a_refused_second_run_does_not_say_resuming(tmp_path):
    """A tournament another run holds is refused (exit 3) before anything
    is said about resuming it or any engine is started."""
    args = ("match", "troll", "random", "greedy", "--games", "2", *FAST, "--db", "r.db")
    assert invoke(*args, cwd=tmp_path).returncode == 0
    with sqlite3.connect(tmp_path / "r.db") as conn:  # make it unfinished: one game to play
        conn.execute("delete from games where id = (select max(id) from games)")
        conn.execute("update tournaments set status = 'interrupted'")
    with Store(tmp_path / "r.db") as store, store.claim_run(1):
        run = invoke(*args, cwd=tmp_path)
    assert run.returncode == 3, run.stderr
    assert "resuming" not in run.stderr and "is being run by another run in this process" in run.stderr
    run = invoke(*args, cwd=tmp_path)
    assert run.returncode == 0 and "resuming tournament 1" in run.stderr


def _runner_invoke(args: list[str], cwd: Path, stdin: str = "") -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        result = CliRunner().invoke(arbiter_cli.app, args, input=stdin, prog_name="arbiter")
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_tournaments_lists_and_delete_asks_then_removes_the_games(tmp_path):
    for name in ("first", "second"):
        run = invoke("match", "troll", "random", "greedy", "--games", "2", *FAST, "--name", name,
                     cwd=tmp_path)
        assert run.returncode == 0, run.stderr
    run = invoke("tournaments", cwd=tmp_path)
    assert run.returncode == 0
    assert re.search(r"^\s+1\s+first .* 2/2 games\s+finished$", run.stdout, re.M), run.stdout
    assert re.search(r"^\s+2\s+second ", run.stdout, re.M)
    listed = json.loads(invoke("tournaments", "--json", cwd=tmp_path).stdout)
    assert [t["name"] for t in listed] == ["first", "second"]

    code, _, err = _runner_invoke(["tournaments", "delete", "1"], tmp_path, stdin="n\n")
    assert code == 1 and "nothing deleted" in err
    assert _count(tmp_path / "arbiter.db", "select count(*) from games where tournament = 1") == 2
    code, out, _ = _runner_invoke(["tournaments", "delete", "1"], tmp_path, stdin="y\n")
    assert code == 0 and "deleted tournament 1 (first, 2 games)" in out
    run = invoke("tournaments", "delete", "2", "--yes", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    db = tmp_path / "arbiter.db"
    assert [_count(db, f"select count(*) from {t}") for t in ("tournaments", "games", "events", "engines")] \
        == [0, 0, 0, 0]
    run = invoke("tournaments", "delete", "7", "--yes", cwd=tmp_path)
    assert run.returncode == 2 and "no tournament 7" in run.stderr


# --------------------------------------------------------------------------
# A database in a folder that cannot be written (specs/storage.md)
# --------------------------------------------------------------------------

#: a user with no right to write the folder (root writes anywhere)
NOBODY = 65534


def _in_a_child_as_nobody(folder: Path, args: list[str]) -> tuple[int, str]:
    """``arbiter ARGS`` in this process's fork, run as :data:`NOBODY` in
    ``folder``: (exit status, stdout + stderr).  Every module it needs is
    imported before the fork (the interpreter's files may be unreadable to
    that user)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            run = invoke(*args, cwd=folder)
            text = f"{run.returncode}\n{run.stdout}{run.stderr}"
        except BaseException as exc:
            text = f"99\n{exc!r}"
        os.write(write, text.encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    code, _, text = data.decode().partition("\n")
    return int(code), text


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a child as another user")
def test_a_database_in_a_read_only_folder_is_read_in_place(tmp_path):
    """Before: "the database cannot be written ... (attempt to write a
    readonly database)" for `standings`; now standings and export read it."""
    assert invoke("match", "troll", "random", "greedy", "--games", "2", *FAST, cwd=tmp_path).returncode == 0
    folder = Path("/tmp") / f"arbiter-ro-{os.getpid()}"
    folder.mkdir()
    try:
        shutil.copy(tmp_path / "arbiter.db", folder / "arbiter.db")
        folder.chmod(0o755)
        (folder / "arbiter.db").chmod(0o644)
        for warm in (["standings"], ["export"]):  # import what the child will need
            assert invoke(*warm, cwd=tmp_path).returncode == 0
        code, text = _in_a_child_as_nobody(folder, ["standings"])
        assert code == 0, text
        assert "greedy" in text and "2/2 games" in text
        code, text = _in_a_child_as_nobody(folder, ["export"])
        assert code == 0 and text.count('[Event "') == 2, text
        assert sorted(os.listdir(folder)) == ["arbiter.db"]  # nothing made there
    finally:
        shutil.rmtree(folder)


# --------------------------------------------------------------------------
# Help, version, completion, platform
# --------------------------------------------------------------------------


def _every_command() -> list[list[str]]:
    names = [[name] for name in arbiter_cli.COMMAND_MODULES]
    return [[], *names]


@pytest.mark.parametrize("words", _every_command(), ids=lambda w: " ".join(w) or "arbiter")
def test_help_has_no_type_noise(words):
    run = invoke(*words, "--help")
    assert run.returncode == 0, run.stderr
    for noise in ("<bool>", "<str>", "<int", "<float", "<list[", "{game}"):
        assert noise not in run.stdout, f"{noise} in arbiter {' '.join(words)} --help"


@pytest.mark.parametrize("command", ["play", "check", "tournament", "match"])
def test_help_shows_the_bracketed_forms(command):
    run = invoke(command, "--help")
    assert "[engines.NAME]" in run.stdout
    if command in ("play", "check"):
        assert "[name=..." in run.stdout or "[arg=..." in run.stdout


def test_version_and_shell_completion(monkeypatch):
    run = invoke("--version")
    assert run.returncode == 0 and re.fullmatch(r"arbiter \S+\n", run.stdout)
    assert "--install-completion" in invoke("--help").stdout
    # the script --show-completion prints, asked for bash by name: --show-completion
    # itself detects the shell from the process tree, which under pytest-xdist has none
    monkeypatch.setenv("_ARBITER_COMPLETE", "source_bash")
    run = invoke()
    assert run.returncode == 0 and "_ARBITER_COMPLETE" in run.stdout and "complete" in run.stdout


def test_completion_lists_commands_in_a_real_process():
    env = child_env({"_ARBITER_COMPLETE": "complete_bash", "COMP_WORDS": "arbiter tournaments d",
                     "COMP_CWORD": "2"})
    done = subprocess.run([PY, "-m", "arbiter"], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["delete"], done.stderr


def test_another_platform_is_refused_with_one_line(monkeypatch):
    assert platform_problem("linux") is None
    assert "Linux only" in (platform_problem("darwin") or "")
    monkeypatch.setattr(sys, "platform", "win32")
    run = invoke("games")
    assert run.returncode == 2
    assert run.stderr.startswith("arbiter: error: Arbiter runs on Linux only") and "'win32'" in run.stderr
    assert "Linux only" in (ROOT / "README.md").read_text()


# --------------------------------------------------------------------------
# engine info
# --------------------------------------------------------------------------


def test_engine_info_shows_the_id_lines_and_the_options(tmp_path):
    run = invoke("engine", "info", "-e", "mcts", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "id name: MCTS" in run.stdout and "id author: " in run.stdout
    line = next(line for line in run.stdout.splitlines() if line.split()[:1] == ["Iterations"])
    assert line.split()[1] == "spin" and "default 20000" in line and "min 1 max 10000000" in line
    assert "choices troll | atoll | morris | talisman" in run.stdout
    info = json.loads(invoke("engine", "info", "-e", "random", "--json", cwd=tmp_path).stdout)
    assert info["id_name"] == "Random"
    assert any(o["name"] == "Seed" and o["type"] == "spin" for o in info["options"])
    run = invoke("engine", "info", "-e", "cmd=no-such-engine-here", cwd=tmp_path)
    assert run.returncode == 1 and "cannot start" in run.stderr


# --------------------------------------------------------------------------
# play leaves nothing behind when an engine cannot start
# --------------------------------------------------------------------------


def test_play_leaves_no_empty_pgn_or_log_folder(tmp_path):
    run = invoke("play", "troll", "-e", "cmd=no-such-engine-here", "-e", "random",
                 "--pgn", "g.pgn", "--log", "logs", cwd=tmp_path)
    assert run.returncode == 1 and "cannot start" in run.stderr
    assert sorted(os.listdir(tmp_path)) == []
    (tmp_path / "kept").mkdir()
    run = invoke("play", "troll", "-e", "cmd=no-such-engine-here", "-e", "random",
                 "--log", "kept", cwd=tmp_path)
    assert (tmp_path / "kept").is_dir()  # a folder that was there stays


# --------------------------------------------------------------------------
# An engine that fails to start says why; one that floods is ended, and a
# signal stops any command during the engines' start-up (issue 29)
# --------------------------------------------------------------------------

#: a Python engine whose module name has a typo: Python says so on stderr
TYPO = f"cmd='{PY} -m sample_engines.mctz'"


@pytest.mark.parametrize("command", [
    ["play", "troll", "-e", TYPO, "-e", "random"],
    ["match", "troll", TYPO, "random", *FAST, "--db", "t.db"],
    ["tournament", "-g", "troll", "-e", "random", "-e", TYPO, *FAST, "--db", "t.db"],
    ["engine", "info", "-e", TYPO],
    ["check", "troll", "--quick", "-e", TYPO],
], ids=lambda command: command[0] if command[0] != "engine" else "engine info")
def test_every_command_quotes_the_stderr_of_an_engine_that_cannot_start(tmp_path, command):
    """specs/match.md §Engine processes (Start errors): the last lines of the engine's stderr
    are in the error (here Python's own "No module named ..."), escaped, and
    in the I/O log of --log."""
    run = invoke(*command, cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    said = run.stderr if command[0] != "check" else run.stdout
    assert "exited (status 1)" in said and "No module named sample_engines.mctz" in said, said
    assert "its last lines on stderr: '" in " ".join(said.split())


def test_connect_quotes_the_stderr_of_its_engine_that_cannot_start(tmp_path):
    """`arbiter connect`'s engine exits at the server's `ugi`: the client's
    last line quotes its stderr (not sent to the server: the server's own
    message says only the exit)."""
    import uuid

    from server_peers import Server, add_token

    tag = f"arbiter-test-{uuid.uuid4()}"
    db = tmp_path / "server.db"
    token = add_token(db, "alice")
    server = Server(db, tag)
    try:
        run = arbiter("connect", f"127.0.0.1:{server.port}", "--token", token, "-e",
                      f"{TYPO} name=typo env.TAG={tag}", cwd=tmp_path)
        server.wait_log("typo (alice)")
    finally:
        server.interrupt([])
    assert "No module named sample_engines.mctz" in run.stderr, run.stderr
    assert "its last lines on stderr: '" in run.stderr
    assert "No module named" not in "".join(server.lines)


def test_the_log_of_an_engine_that_cannot_start_has_its_stderr_and_the_error(tmp_path):
    run = invoke("play", "troll", "-e", TYPO, "-e", "random", "--log", "logs", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    (log,) = (tmp_path / "logs").iterdir()
    text = log.read_text()
    assert re.search(r" ! .*No module named sample_engines\.mctz\n", text), text
    assert "# cannot start: exited (status 1) during the handshake\n" in text


def test_play_names_an_engine_that_floods_instead_of_its_handshake(tmp_path):
    """specs/match.md §Engine processes (Reading, Handshake): `yes` as an engine (endless `y` lines,
    never a `ugiok`): the handshake timeout holds, the error names it and
    what it wrote, nothing of it is left (before the fix: a hang)."""
    import uuid

    from bad_engines.harness import processes_with

    tag = f"arbiter-test-{uuid.uuid4()}"
    run = arbiter("play", "troll", "-e", f"cmd=yes env.TAG={tag}", "-e", "random", cwd=tmp_path,
                  timeout=120)
    assert run.returncode == 1, run.stderr
    assert re.search(r"handshake-failure: engine 'yes': no ugiok within 10 s of ugi "
                     r"\(it wrote \d+ line\(s\), the last 'y'\); the game was not played", run.stderr)
    assert processes_with(tag) == []


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", [
    ["tournament", "-g", "troll", "-e", "random", *FAST, "--db", "t.db"],
    ["play", "troll", "-e", "random"],
], ids=lambda command: command[0])
def test_a_signal_stops_a_command_while_an_engine_floods_its_start(tmp_path, command, signame):
    """specs/tournament.md §Stopping, specs/match.md §Engine processes: SIGINT
    or SIGTERM while `yes` floods its start-up (a tournament's engine check,
    before the tournament exists; play's handshake) ends the command long
    before the handshake timeout would: exit 130, one line, no process
    left, no tournament created.  Before the fix both signals were ignored
    and the command never ended."""
    import signal
    import time
    import uuid

    from bad_engines.harness import processes_with

    tag = f"arbiter-test-{uuid.uuid4()}"
    proc = start(*command, "-e", f"cmd=yes env.TAG={tag}", cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not processes_with(tag) and time.monotonic() < deadline:  # `yes` is up
            time.sleep(0.02)
        assert processes_with(tag), "the engine never started"
        proc.send_signal(getattr(signal, signame))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.startswith("arbiter: interrupted;") and "Traceback" not in err
    assert processes_with(tag) == []
    if command[0] == "tournament":
        assert _count(tmp_path / "t.db", "select count(*) from tournaments") == 0


# --------------------------------------------------------------------------
# Someone else's SQLite file is left as it is (specs/storage.md)
# --------------------------------------------------------------------------

#: every command that opens a results database, with the file as --db
DB_COMMANDS = {
    "tournament": ["tournament", "-g", "troll", "-e", "random", "-e", "greedy", *FAST],
    "match": ["match", "troll", "random", "greedy", *FAST],
    "demo": ["demo", "--plain"],
    "standings": ["standings"],
    "tournaments": ["tournaments"],
    "tournaments delete": ["tournaments", "delete", "1", "--yes"],
    "ratings": ["ratings"],
    "export": ["export"],
    "import": ["import", "games.jsonl"],
    "token add": ["token", "add", "alice"],
    "token list": ["token", "list"],
    "serve": ["serve", "--listen", "127.0.0.1:0"],
    "web": ["web", "--http", "127.0.0.1:0"],
}


@pytest.mark.parametrize("name", list(DB_COMMANDS))
def test_every_command_leaves_someone_elses_database_as_it_is(tmp_path, name):
    """specs/storage.md §Someone else's database: `--db` on a SQLite file with
    tables of its own and no Arbiter schema version: one line naming the
    file and its tables, exit 2, not one byte of the file changed (before
    the fix the writing commands added their tables to it).  serve and web
    run as processes: one that took the file would serve until stopped."""
    import hashlib

    db = tmp_path / "theirs.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table people (name text)")
        conn.execute("insert into people values ('ann')")
    conn.close()
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    (tmp_path / "games.jsonl").write_text("")
    args = [*DB_COMMANDS[name], "--db", db]
    run = arbiter(*args, cwd=tmp_path, timeout=60) if name in ("serve", "web") else invoke(*args, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert f"{db}: not an arbiter results database (it holds tables of its own ('people') and no Arbiter " \
           "schema version)" in run.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert not (tmp_path / "theirs.db-wal").exists()


# --------------------------------------------------------------------------
# The game specs cite text, not files or issues that are not here
# --------------------------------------------------------------------------


@pytest.mark.parametrize("spec", sorted((ROOT / "specs" / "games").glob("*.md")), ids=lambda p: p.name)
def test_game_specs_cite_no_missing_file_or_issue(spec):
    text = spec.read_text()
    assert not re.search(r"\bissue \d+", text, re.I), "cite the text, not an issue number"
    for path in re.findall(r"`([\w./-]+/[\w.-]+\.\w+)`", text):
        assert (ROOT / path).exists(), f"{spec.name} cites {path}, which is not in the repository"


def test_the_examples_engines_file_defines_new_and_old():
    """The README's `match troll new old --engines examples/engines.toml`:
    two settings of mcts's Iterations option (declared: engine info above)."""
    engines = load_engines_file(str(ROOT / "examples" / "engines.toml"))
    assert set(engines) == {"new", "old"}
    assert all("Iterations" in e.options for e in engines.values())
