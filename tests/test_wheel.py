"""The package as users install it: a wheel built from the tree
(``pip wheel . --no-deps``), installed into a fresh virtual environment
outside the checkout, runs the commands, ``arbiter web`` and ``arbiter serve
--http`` included, with every file the packages read at run time.

No network beyond what is installed: the environment sees the installed
dependencies (``--system-site-packages``) and the wheel is installed alone
(``--no-deps --no-index``); the wheel is built without build isolation where
the installed setuptools can make wheels by itself (``wheel`` installed, or
setuptools 70.1 and later), else in pip's isolated build, which takes
setuptools from the configured package index (CI's registry, or a local
one).  The arbiter run is the venv's own: no ``PYTHONPATH``, run from a
folder outside the checkout, and each package is checked to be imported from
the venv (an editable install elsewhere is not what a user gets)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest
from cli import PROCESS_TIMEOUT, ROOT

#: the packages the wheel holds (pyproject.toml [tool.setuptools.packages.find])
PACKAGES = ("arbiter", "protocol", "sample_engines")
#: seconds a build or an install may take: a guard against a hang
BUILD_TIMEOUT = 600.0


def _source_files() -> list[str]:
    """The files of the tree as a checkout has them: tracked, and new ones
    git does not ignore."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
                            capture_output=True, check=True)
    return [name for name in listed.stdout.decode().split("\0")
            if name and (ROOT / name).is_file()]


def _build_flags() -> list[str]:
    """``--no-build-isolation`` when the installed setuptools makes wheels by itself."""
    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    own = (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None
    return ["--no-build-isolation"] if own else []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the tree, with one planted file in a folder
    below ``arbiter/web/static/`` (the package data's recursive pattern)."""
    where = tmp_path_factory.mktemp("wheel")
    source = where / "source"
    for name in _source_files():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    planted = source / "arbiter" / "web" / "static" / "planted" / "by-test.css"
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text("/* tests/test_wheel.py */\n")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "-w", str(where / "dist"),
                            "--no-deps", "-q", *_build_flags()],
                           capture_output=True, text=True, timeout=BUILD_TIMEOUT, cwd=where)
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = (where / "dist").glob("arbiter-*.whl")
    return found


def test_the_wheel_holds_every_file_of_the_packages(wheel):
    """Every file of the packages' folders (Python or not: positions.json,
    the templates, live.js, static files at any depth) is in the wheel."""
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {name for name in _source_files() if name.split("/", 1)[0] in PACKAGES}
    wanted.add("arbiter/web/static/planted/by-test.css")
    assert {"arbiter/web/static/live.js", "arbiter/check/positions.json",
            "arbiter/web/templates/base.html"} <= wanted
    assert wanted - names == set()


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv outside the checkout with the wheel installed alone."""
    where = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(where)],
                   check=True, timeout=BUILD_TIMEOUT)
    installed = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--no-deps",
                                "--no-index", "-q", str(wheel)],
                               capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return where


def _env() -> dict[str, str]:
    """This environment without PYTHONPATH (which puts the checkout first)."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def run(venv: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(venv / "bin" / "arbiter"), *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=PROCESS_TIMEOUT)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def test_the_installed_commands_run_outside_the_checkout(venv, tmp_path):
    """The venv's packages are its own; the rules, the checker (its
    positions.json and the sample engines), a match, the records and the
    ratings work from any folder."""
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import arbiter, protocol, sample_engines, sys; "
                            "print('\\n'.join(m.__file__ for m in (arbiter, protocol, sample_engines)))"],
                           cwd=tmp_path, env=_env(), capture_output=True, text=True, check=True)
    for path in where.stdout.split():
        assert Path(path).resolve().is_relative_to(venv.resolve()), path
    assert run(venv, tmp_path, "--version").stdout.strip() == "arbiter 0.1.0"
    assert "troll" in run(venv, tmp_path, "games").stdout
    assert run(venv, tmp_path, "perft", "morris", "2").stdout.strip()
    run(venv, tmp_path, "check", "atoll", "-e", "greedy", "--quick")
    run(venv, tmp_path, "match", "troll", "random", "greedy", "--games", "2", "--tc", "depth=1",
        "--pgn", "g.pgn", "--plain")
    assert "random" in run(venv, tmp_path, "standings").stdout
    assert run(venv, tmp_path, "tournaments").stdout.splitlines()[0].split()[:2] == ["ID", "NAME"]
    assert run(venv, tmp_path, "replay", "g.pgn").stdout.endswith("2 games: 2 OK, 0 bad\n")
    lines = run(venv, tmp_path, "export", "--format", "jsonl").stdout.splitlines()
    assert [json.loads(line)["record"]["game"] for line in lines] == ["troll", "troll"]
    run(venv, tmp_path, "show", "g.pgn", "--game", "1", "--svg", "board.svg")
    assert (tmp_path / "board.svg").read_text().startswith("<svg")
    assert "random" in run(venv, tmp_path, "ratings", "--game", "troll").stdout


class _Process:
    """An installed ``arbiter`` process, its stdout and stderr read by
    threads (never a full pipe), stopped with Ctrl-C."""

    def __init__(self, venv: Path, cwd: Path, *args: str):
        self.proc = subprocess.Popen([str(venv / "bin" / "arbiter"), *args], cwd=cwd, env=_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        for stream in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.strip())

    def wait_for(self, pattern: str) -> re.Match[str]:
        deadline = time.monotonic() + PROCESS_TIMEOUT
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if match := re.search(pattern, line):
                    return match
            assert self.proc.poll() is None, self.lines
            time.sleep(0.05)
        raise AssertionError(f"no {pattern!r} in {self.lines}")

    def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=PROCESS_TIMEOUT)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=PROCESS_TIMEOUT) as response:
        return response.status, response.headers["content-type"], response.read().decode()


def test_the_installed_web_view_serves_its_pages_and_script(venv, tmp_path):
    """`arbiter web` and `arbiter serve --http` from the wheel (live.js was
    once left out of it, and `arbiter web` died with a traceback)."""
    run(venv, tmp_path, "match", "troll", "random", "greedy", "--games", "2", "--tc", "depth=1",
        "--plain")
    web = _Process(venv, tmp_path, "web", "--http", "127.0.0.1:0")
    try:
        url = web.wait_for(r"at (http://127\.0\.0\.1:\d+/)$")[1]
        status, _, page = get(url)
        assert status == 200 and "troll match" in page
        status, kind, script = get(url + "static/live.js")
        assert status == 200 and kind.startswith("text/javascript") and "EventSource" in script
        assert get(url + "tournament/1")[0] == 200 and get(url + "game/1")[0] == 200
        assert web.interrupt() == 130
    finally:
        web.close()
    server = _Process(venv, tmp_path, "serve", "--db", "server.db", "--listen", "127.0.0.1:0",
                      "--arena", "game=troll tc=10+0.1 name=arena", "--http", "127.0.0.1:0")
    try:
        url = server.wait_for(r"web view of .* at (http://127\.0\.0\.1:\d+/)$")[1]
        server.wait_for(r"listening on 127\.0\.0\.1:\d+$")
        status, _, page = get(url)
        assert status == 200 and "arena" in page
        assert get(url + "static/live.js")[0] == 200
        assert server.interrupt() == 130
    finally:
        server.close()
    assert not any("Traceback" in line for line in web.lines + server.lines)
