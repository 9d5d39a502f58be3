"""The README's examples run as written (issue 15, "Rough edges").

Every ``sh`` code block of README.md is read line by line (a line ending in
``\\`` goes on), comments dropped as a shell would.  Each ``arbiter ...`` line
must parse (its command exists, its options and arguments are accepted), and
each one that is not in :data:`PARSED_ONLY` is run in a fresh folder holding
a copy of ``examples/`` and no database yet -- what a new user on a fresh
clone has.  A line that reads what earlier lines wrote (the database, a
record file: :data:`READS_FROM`) runs after them, in their folder, in the
README's order; every other line is a test of its own, so that the
examples run on both xdist workers.  Nothing is changed for the test: a README
example that is too slow to run here must be made quicker in the README, or
be listed in :data:`PARSED_ONLY` with the reason.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
import typer
from cli import ROOT, invoke

from arbiter.cli import app

README = ROOT / "README.md"

#: README commands the test parses but does not run: each takes half a
#: minute or more on two cores, and what it does is run by other tests
PARSED_ONLY = {
    "arbiter demo": "18 games at 20+0.2 (specs/tournament.md §Demo)",
    "arbiter check atoll -e greedy": "the full suite, 28 checks, half a minute (tests/test_check.py "
                                     "runs the quick suite on every sample engine)",
    "arbiter web --http 127.0.0.1:8000": "serves until Ctrl-C (tests/test_web.py, tests/test_browser.py)",
    "arbiter serve --listen 127.0.0.1:7171 --arena game=troll tc=10+0.1": "serves until Ctrl-C (tests/test_server.py)",
    "arbiter connect 127.0.0.1:7171 --token TOKEN -e mcts": "needs a server and a real token (tests/test_server.py)",
    "arbiter match troll mcts remote:alice --listen 127.0.0.1:7171 --games 2 --tc 10+0.1":
        "waits for alice to connect (tests/test_server.py)",
    "arbiter tournament -g troll -e mcts -e greedy --games 2 --tc 2+0.05 --cluster local:2":
        "starts a Dask cluster (tests/test_cluster.py)",
    "arbiter worker tls://scheduler.example:8786 --engines examples/engines.toml --slots 2 --tls-ca ca.pem "
    "--tls-cert worker.pem --tls-key worker-key.pem": "needs a scheduler (tests/test_cluster.py)",
}

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
    listed = {" ".join(words) for words in arbiter_commands()}
    assert set(PARSED_ONLY) <= listed  # no stale entry


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
}


def example_runs() -> list[list[list[str]]]:
    """The README lines that run (not in :data:`PARSED_ONLY`), in groups: a
    line with the line it reads from (:data:`READS_FROM`, transitively), in
    the README's order; every group in the order of its first line."""
    lines = [words for words in arbiter_commands() if " ".join(words) not in PARSED_ONLY]
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
    every = [words for words in arbiter_commands() if " ".join(words) not in PARSED_ONLY]
    assert sorted(map(" ".join, ran)) == sorted(map(" ".join, every))
    for run in runs:  # each group in the README's order
        assert sorted(run, key=every.index) == run
    for start in READS_FROM:  # no stale entry
        assert any(" ".join(words).startswith(start) for words in every), start


@pytest.mark.parametrize("run", example_runs(), ids=lambda run: " ".join(run[0])[:60].rstrip())
def test_the_examples_run_on_a_fresh_clone(run, tmp_path):
    """A README line that runs (not in PARSED_ONLY), with the lines that read
    what it wrote, in the README's order, in a folder with examples/ and
    nothing else; each ends with exit status 0."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for words in run:
        line = " ".join(words)
        args, out = _redirect(words[1:])
        result = invoke(*args, cwd=tmp_path)
        assert result.returncode == 0, f"{line}\n{result.stdout[-2000:]}\n{result.stderr}"
        if out is not None:
            Path(tmp_path, out).write_text(result.stdout, encoding="utf-8")
        if line.startswith("arbiter import games.pgn --db other.db"):
            assert (tmp_path / "games.pgn").stat().st_size > 0 and (tmp_path / "other.db").exists()
    assert not (tmp_path / "engines.toml").exists()  # the names resolved without one


def test_the_engines_file_the_readme_shows_is_the_one_in_examples():
    text = README.read_text(encoding="utf-8")
    (shown,) = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    tables = "\n".join(line.strip() for line in shown.splitlines())
    assert tables.strip() in (ROOT / "examples" / "engines.toml").read_text(encoding="utf-8")
