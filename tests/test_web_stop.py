"""``arbiter web`` stops whatever its viewers do, and an event stream of
nothing is not found (specs/web.md §Stopping, §Live updates; issue 29, 9).

The viewers are real sockets that ask for a tournament's event stream and
never read a byte: once the kernel's buffers are full, every write to them
waits.  A tournament whose page is large (an engine named with a million
characters, imported from a real record file: a peer's text of any length)
fills those buffers with its first update, so the writes wait from the
start, as they do after minutes of a busy tournament."""

from __future__ import annotations

import re
import signal
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cli import PROCESS_TIMEOUT, invoke, start

#: viewers that never read: each holds a write of the view that never ends
SILENT_VIEWERS = 5
#: the engine name's length: several megabytes of the page's first update,
#: more than a loopback connection's buffers take (about 3 MB here)
NAME_CHARS = 1_000_000


@pytest.fixture(scope="module")
def big_db(tmp_path_factory) -> Path:
    """A database with one imported game whose White is named with
    :data:`NAME_CHARS` characters (tournament 1)."""
    tmp = tmp_path_factory.mktemp("stop")
    small = tmp / "small.db"
    played = invoke("match", "troll", "random", "greedy", "--games", 1, "--tc", "10+0.1",
                    "--db", small, "--plain")
    assert played.returncode == 0, played.stderr
    exported = invoke("export", "--db", small)
    assert exported.returncode == 0, exported.stderr
    record = re.sub(r'\[White "[^"]*"\]', f'[White "{"W" * NAME_CHARS}"]', exported.stdout, count=1)
    (tmp / "big.pgn").write_text(record)
    path = tmp / "big.db"
    imported = invoke("import", tmp / "big.pgn", "--db", path)
    assert imported.returncode == 0, imported.stderr
    return path


def _serve(db: Path):
    """``arbiter web`` on a free port: the process and its port."""
    proc = start("web", "--db", db, "--http", "127.0.0.1:0")
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"at http://127\.0\.0\.1:(\d+)/$", line.strip())
    assert match, (line, proc.communicate() if proc.poll() is not None else "")
    return proc, int(match[1])


def _silent_viewers(port: int, path: str) -> list[socket.socket]:
    """:data:`SILENT_VIEWERS` requests of ``path`` whose answers are never read."""
    viewers = []
    for _ in range(SILENT_VIEWERS):
        viewer = socket.create_connection(("127.0.0.1", port))
        viewer.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        viewers.append(viewer)
    return viewers


def _wait_writing(port: int) -> None:
    """Until the view has started answering every silent viewer: the bytes
    it sent wait in the viewers' receive queues (``/proc/net/tcp``, the
    connections from the view's port; a guard against a hang, PROCESS_TIMEOUT)."""
    import time

    deadline = time.monotonic() + PROCESS_TIMEOUT
    while time.monotonic() < deadline:
        queued = 0
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            remote, queues = fields[2], fields[4]
            if int(remote.split(":")[1], 16) == port and int(queues.split(":")[1], 16) > 0:
                queued += 1  # a viewer's socket: what it received and did not read
        if queued >= SILENT_VIEWERS:
            return
        time.sleep(0.05)
    raise AssertionError("the view never answered its viewers")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_view_stops_whatever_its_viewers_do(big_db, sig):
    """Viewers of an event stream that never read: SIGTERM or Ctrl-C still
    ends ``arbiter web`` at once (exit 130, the one message; before, it ran
    on for as long as a viewer held its connection)."""
    proc, port = _serve(big_db)
    viewers = _silent_viewers(port, "/events/tournament/1")
    try:
        _wait_writing(port)
        proc.send_signal(sig)
        assert proc.wait(timeout=PROCESS_TIMEOUT) == 130
        _, err = proc.communicate()
        assert "arbiter: interrupted; the web view stopped" in err and "Traceback" not in err
    finally:
        for viewer in viewers:
            viewer.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize(("path", "message"), [
    ("/events/tournament/9", "not found: no tournament 9\n"),
    ("/events/tournament/1/live/r1-p1-g1", "not found: no game 'r1-p1-g1' in progress in tournament 1\n"),
    ("/events/tournament/x", "not found: bad tournament id\n"),
])
def test_an_event_stream_of_nothing_is_not_found(big_db, path, message):
    """specs/web.md §Live updates: an event stream for a tournament, or a
    game in progress, that the database does not have is a 404 with one
    line (before, a stream that never sent anything)."""
    proc, port = _serve(big_db)
    try:
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=PROCESS_TIMEOUT)
        assert caught.value.code == 404 and caught.value.read().decode() == message
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=PROCESS_TIMEOUT)
