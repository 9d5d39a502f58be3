"""``arbiter connect``'s token and engine (``specs/wire.md`` §The server and
the client; issue 29, items 5 and 10), and ``arbiter token add --out``.

The token is read from ``--token-file FILE`` or ``ARBITER_TOKEN``, so that it
is on no command line (every local user reads those: ``/proc/PID/cmdline``);
``--token`` still works and says why not to use it.  The engine is named as
on every other command (the sample engines, ``--engines FILE``,
``./engines.toml``), and a name the server would refuse is refused before
any connection is made, with the server's own rule and a ``name=`` that
passes it.  Real ``arbiter serve`` and ``arbiter connect`` processes on
127.0.0.1 where a connection is made; the checks made before connecting run
in this process."""

from __future__ import annotations

import os
import signal
import socket
import uuid
from pathlib import Path

import pytest
from cli import ROOT, Watched, invoke, start
from server_peers import PY, Server, add_token, spec, wait_gone

from arbiter.procs import descendants, proc_table, with_environ
from arbiter.tokens import NAME_RULE

#: the warning of ``--token`` (the start of it)
TOKEN_WARNING = "arbiter connect: warning: --token puts the token on the command line"


def _token_file(db: Path, name: str, out: Path) -> str:
    run = invoke("token", "add", name, "--db", db, "--out", out)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "" and str(out) in run.stderr  # the token is in the file only
    return out.read_text(encoding="utf-8").strip()


def test_token_add_out_writes_a_new_file_only_its_owner_reads(tmp_path: Path) -> None:
    """§Authentication: ``--out FILE`` is made with mode 0600 and holds the
    token and a line end; an existing file is never overwritten, and then no
    token is added."""
    db, out = tmp_path / "t.db", tmp_path / "alice.token"
    secret = _token_file(db, "alice", out)
    assert secret.startswith("alice.") and out.read_text(encoding="utf-8") == secret + "\n"
    assert out.stat().st_mode & 0o777 == 0o600
    again = invoke("token", "add", "bob", "--db", db, "--out", out)
    assert again.returncode == 2 and f"--out {out}: the file exists" in again.stderr
    assert out.read_text(encoding="utf-8") == secret + "\n"
    assert "bob" not in invoke("token", "list", "--db", db).stdout
    wrong = invoke("token", "list", "--db", db, "--out", out)
    assert wrong.returncode == 2 and "--out is for token add" in wrong.stderr


def test_a_token_from_a_file_or_the_environment_connects_and_is_on_no_command_line(
        tmp_path: Path) -> None:
    """Three clients of one server: alice's token from ``--token-file``
    (engine ``new`` of ``--engines examples/engines.toml``), bob's from
    ``ARBITER_TOKEN`` (engine ``mine`` of the ``./engines.toml`` of its
    folder), carol's from ``--token``.  Each is welcomed under its engine's
    name; alice's and bob's secrets are on no command line of theirs or of
    their engines, bob's engine does not inherit ``ARBITER_TOKEN``, and only
    carol is warned (naming ``/proc/PID/cmdline``).  Ctrl-C ends each (130)
    and leaves no process."""
    db = tmp_path / "server.db"
    tag = f"arbiter-connect-test-{uuid.uuid4().hex}"
    alice = _token_file(db, "alice", tmp_path / "alice.token")
    bob, carol = add_token(db, "bob"), add_token(db, "carol")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "engines.toml").write_text(
        f'[engines.mine]\ncmd = "{PY} -m sample_engines.random"\n', encoding="utf-8")
    server = Server(db, tag, None)
    address = f"127.0.0.1:{server.port}"
    clients = []
    try:
        clients = [
            Watched(start("connect", address, "--token-file", tmp_path / "alice.token", "-e", "new",
                          "--engines", ROOT / "examples" / "engines.toml", env={"TAG": tag})),
            Watched(start("connect", address, "-e", "mine", cwd=tmp_path / "b",
                          env={"TAG": tag, "ARBITER_TOKEN": bob})),
            Watched(start("connect", address, "--token", carol, "-e", spec("rc", tag),
                          env={"TAG": tag})),
        ]
        server.wait_log("new (alice) connected", "mine (bob) connected", "rc (carol) connected")
        table = proc_table()
        for client, secret in zip(clients[:2], (alice, bob), strict=True):
            for pid in {client.proc.pid, *descendants(client.proc.pid, table)}:
                assert secret.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
        bob_engines = descendants(clients[1].proc.pid, table)
        assert bob_engines and with_environ(f"ARBITER_TOKEN={bob}".encode(), bob_engines) == []
        ends = [client.stop(signal.SIGINT) for client in clients]
    finally:
        for client in clients:
            client.kill()
        server.interrupt([])
    assert ends == [130, 130, 130], [client.text for client in clients]
    assert "warning" not in clients[0].text + clients[1].text
    assert TOKEN_WARNING in clients[2].text and "/proc/PID/cmdline" in clients[2].text
    assert wait_gone(tag) == []


def _no_one_listens() -> int:
    """A port on 127.0.0.1 where a connection is refused (bound, never listening)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("engine, hint", [
    (f"cmd='{PY} -m sample_engines.random'", "name=sample_engines_random"),  # named by the module
    ("random name=a.b", "name=a_b"),
    ("random name=" + "x" * 65, "name=" + "x" * 64),
], ids=["named-by-its-module", "a-dot", "too-long"])
def test_a_name_the_server_refuses_is_refused_before_connecting(engine: str, hint: str) -> None:
    """Item 10: the name an engine would have on the server (``name=``, else
    its label) that the server's rule (:func:`arbiter.tokens.valid_name`)
    refuses is refused here (exit 2), with the rule and a ``name=`` that
    passes it, and no connection is made (a listening socket is never
    connected to)."""
    with socket.create_server(("127.0.0.1", 0)) as listening:
        listening.setblocking(False)
        run = invoke("connect", f"127.0.0.1:{listening.getsockname()[1]}", "--token", "a.b",
                     "-e", engine)
        with pytest.raises(BlockingIOError):
            listening.accept()
    assert run.returncode == 2, run.stderr
    assert f"is one the server refuses (an engine name is {NAME_RULE})" in run.stderr
    assert f"give it one with name=..., e.g. {hint}" in run.stderr


def test_connect_knows_the_sample_engines_and_engines_files(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 10: ``-e mcts`` and a table of ``--engines FILE`` or of
    ``./engines.toml`` resolve as on every other command (checked up to the
    connection, which fails: nothing listens); an unknown name says what the
    file defines."""
    monkeypatch.setenv("ARBITER_TOKEN", "a.b")
    port = _no_one_listens()
    (tmp_path / "engines.toml").write_text(
        f'[engines.mine]\ncmd = "{PY} -m sample_engines.random"\n', encoding="utf-8")
    for args, cwd in ((("-e", "mcts"), None), (("-e", "mine"), tmp_path),
                      (("-e", "new", "--engines", ROOT / "examples" / "engines.toml"), None)):
        monkeypatch.setenv("ARBITER_TOKEN", "a.b")  # connect takes it out of the environment
        run = invoke("connect", f"127.0.0.1:{port}", *args, cwd=cwd)
        assert run.returncode == 1 and "cannot connect" in run.stderr, (args, run.stderr)
    run = invoke("connect", f"127.0.0.1:{port}", "-e", "nosuch", cwd=tmp_path)
    assert run.returncode == 2 and "no engine 'nosuch' in engines.toml (it defines: " in run.stderr


def test_a_token_file_that_holds_no_token_is_refused_without_showing_it(tmp_path: Path,
                                                                       monkeypatch) -> None:
    """§The server and the client: no token, two sources given, a missing
    file, an empty one, one of several words or over ``MAX_TOKEN_CHARS``:
    exit 2 before connecting, with a message naming the file and never its
    content; a file others may read is used, with a warning saying ``chmod
    600``."""
    monkeypatch.delenv("ARBITER_TOKEN", raising=False)
    port = _no_one_listens()

    def connect(*args: str | Path):
        return invoke("connect", f"127.0.0.1:{port}", "-e", "random", *args)

    run = connect()
    assert run.returncode == 2 and "give the token: --token-file FILE or the environment " \
        "variable ARBITER_TOKEN" in run.stderr
    run = connect("--token", "a.b", "--token-file", tmp_path / "x")
    assert run.returncode == 2 and "give one of them" in run.stderr
    cases = {"missing": None, "empty": "\n", "words": "alice.sEcReT1 sEcReT2\n",
             "big": "alice." + "sEcReT" * 30}
    for name, text in cases.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text, encoding="utf-8")
        run = connect("--token-file", path)
        assert run.returncode == 2 and f"--token-file {path}" in run.stderr, (name, run.stderr)
        assert "sEcReT" not in run.stderr
    shared = tmp_path / "shared.token"
    shared.write_text("alice.sEcReT\n", encoding="utf-8")
    os.chmod(shared, 0o644)
    run = connect("--token-file", shared)
    assert run.returncode == 1 and "cannot connect" in run.stderr  # used
    assert f"--token-file {shared}: other users may read it (mode 0644): chmod 600" in run.stderr
    assert "sEcReT" not in run.stderr
