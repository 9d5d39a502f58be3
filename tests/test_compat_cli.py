"""cutechess-cli and fastchess command lines (specs/tournament.md §cutechess-cli
and fastchess options): each of their options is read as ours with a note on
stderr, or refused naming ours (or saying there is none), before typer
parses; the table is data (arbiter/cli/compat.py) and the spec holds it.

The rewriting is pure and tested in-process; the seam (the notes, a real
match of the sample engines played from a pasted command line, refusals
that start nothing) through the command line."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from cli import invoke

from arbiter.cli.compat import (
    ENGINE_KEYS,
    OPTIONS,
    CompatError,
    before_command,
    markdown_table,
    translate,
)

SPEC = Path(__file__).resolve().parent.parent / "specs" / "tournament.md"
PYTHON = sys.executable

#: every option of cutechess-cli (projects/cli/res/doc/help.txt and the
#: parser of projects/cli/src/main.cpp, cutechess/cutechess 5e84232b)
CUTECHESS_OPTIONS = (
    "help", "version", "engines", "engine", "each", "variant", "concurrency", "draw", "resign",
    "maxmoves", "tb", "tbpieces", "tbignore50", "tournament", "event", "games", "rounds", "sprt",
    "ratinginterval", "outcomeinterval", "debug", "openings", "bookmode", "pgnout", "epdout",
    "recover", "repeat", "noswap", "reverse", "seeds", "site", "srand", "wait", "resultformat")
#: every option of fastchess (man.md and OptionsParser::registerOptions of
#: app/src/cli/cli.cpp, Disservin/fastchess 74deac23)
FASTCHESS_OPTIONS = (
    "engine", "each", "pgnout", "epdout", "openings", "sprt", "draw", "resign", "maxmoves", "tb",
    "tbpieces", "tbignore50", "tbadjudicate", "autosaveinterval", "log", "config", "report",
    "output", "concurrency", "crc32", "force-concurrency", "event", "site", "games", "rounds",
    "wait", "noswap", "reverse", "ratinginterval", "scoreinterval", "srand", "seeds", "version",
    "help", "recover", "repeat", "variant", "tournament", "quick", "use-affinity",
    "check-mate-pvs", "show-latency", "debug", "testEnv", "strict", "startup-ms",
    "ucinewgame-ms", "ping-ms")
#: the engine words of both (cutechess-cli's "Engine options", fastchess's -engine keys)
ENGINE_WORDS = ("conf", "name", "cmd", "dir", "arg", "args", "initstr", "stderr", "restart",
                "trust", "proto", "tc", "st", "timemargin", "book", "bookdepth", "whitepov", "depth",
                "plies", "nodes", "ponder", "tscale", "debug", "option.NAME")

#: `arbiter tournament`'s options as the rewriting sees them (name: takes a value)
TOURNAMENT = {"-e": True, "--engine": True, "--each": True, "--game": True, "-g": True,
              "--format": True, "--games": True, "--rounds": True, "--openings": True,
              "--opening-plies": True, "--order": True, "--seed": True, "--concurrency": True,
              "-c": True, "--restart": False, "--reuse": False, "--tc": True, "--maxplies": True,
              "--resign": True, "--draw": True, "--sprt": True, "--name": True, "--db": True,
              "--pgn": True, "--plain": False, "--help": False, "--strict": False}


def test_every_option_of_both_tools_is_in_the_table_and_the_spec_shows_it():
    """Each option is understood or refused: none falls through to typer."""
    assert set(CUTECHESS_OPTIONS) | set(FASTCHESS_OPTIONS) == set(OPTIONS)
    for name, foreign in OPTIONS.items():
        assert ("cutechess-cli" in foreign.tools) == (name in CUTECHESS_OPTIONS), name
        assert ("fastchess" in foreign.tools) == (name in FASTCHESS_OPTIONS), name
        assert foreign.ours is not None or foreign.note, f"-{name} is refused without a reason"
    assert set(ENGINE_WORDS) == set(ENGINE_KEYS)
    assert markdown_table() in SPEC.read_text()


def test_the_pasted_line_of_the_issue():
    """`-concurrency 4 -rounds 10 -games 2 -each tc=10+0.1 -pgnout out.pgn
    -openings file=book.txt`: every option ours, a note naming each."""
    line = "-concurrency 4 -rounds 10 -games 2 -each tc=10+0.1 -pgnout out.pgn -openings file=book.txt"
    done = translate("tournament", line.split(), TOURNAMENT)
    assert done.args == ["--concurrency", "4", "--rounds", "10", "--games", "2", "--each",
                         "tc=10+0.1", "--pgn", "out.pgn", "--openings", "book.txt"]
    assert [note.split(" read as ")[1].split(" (")[0] for note in done.notes] == [
        "--concurrency 4", "--rounds 10", "--games 2", "--each tc=10+0.1", "--pgn out.pgn",
        "--openings book.txt"]


@pytest.mark.parametrize("words, spec, extra", [
    (["cmd=./engine", "name=A"], "cmd=./engine name=A", []),
    (["cmd=python3 -m my.engine", "option.Hash=64", "option.Ponder"],
     "cmd='python3 -m my.engine' option.Hash=64 option.Ponder", []),
    (['args=-x "two words"', "st=0.5", "depth=12"], "arg=-x arg='two words' tc=st=0.5,depth=12", []),
    (["tc=40/1:30+0.5", "plies=7", "nodes=1000", "restart=on", "proto=uci", "trust"],
     "tc=40/1:30+0.5,depth=7,nodes=1000", ["--restart"]),
    (["conf=mine", "timemargin=50", "dir=/tmp", "env.X=1"], "conf=mine timemargin=50 dir=/tmp env.X=1", []),
])
def test_engine_words_become_a_spec(words, spec, extra):
    """§cutechess-cli and fastchess options: the words of -engine as a SPEC
    (values with spaces quoted, the limits joined into one tc=)."""
    done = translate("tournament", ["-engine", *words, "--games", "2"], TOURNAMENT)
    assert done.args[:2] == ["-e", spec] and done.args[2:] == [*extra, "--games", "2"]
    assert shlex.split(spec)  # our SPEC parser reads it as shell words


@pytest.mark.parametrize("args, ours, note", [
    (["-maxmoves", "100"], ["--maxplies", "200"], "a move is two plies"),
    (["-maxmoves", "0"], [], "0 is no limit"),
    (["-tournament", "roundrobin"], ["--format", "round-robin"], ""),
    (["-variant", "Morris"], ["--game", "morris"], ""),
    (["-event", "my test"], ["--name", "my test"], "the Event tag"),
    (["-srand", "42"], ["--seed", "42"], ""),
    (["-sprt", "elo0=0", "elo1=5", "alpha=0.05", "beta=0.05"],
     ["--sprt", "elo0=0 elo1=5 alpha=0.05 beta=0.05"], "cutechess-cli's bounds are model=bayesian"),
    (["-draw", "movenumber=40", "movecount=8", "score=10"],
     ["--draw", "movenumber=40 movecount=8 score=10"], ""),
    (["-resign", "movecount=3", "score=600", "twosided=true"],
     ["--resign", "movecount=3 score=600 twosided=true"], ""),
    (["-openings", "file=b.pgn", "format=pgn", "order=random", "plies=8", "start=1", "policy=default"],
     ["--openings", "b.pgn", "--order", "random", "--opening-plies", "8"], "PGN file"),
    (["-pgnout", "o.pgn", "min", "fi"], ["--pgn", "o.pgn"], "min fi ignored"),
    (["-pgnout", "file=o.pgn", "notation=san", "nodes=true", "append=true"], ["--pgn", "o.pgn"],
     "notation=san nodes=true ignored"),
    (["-repeat"], [], "played twice"), (["-repeat", "2"], [], "played twice"),
    (["-recover"], [], "restarted"), (["-wait", "0"], [], "no pause"), (["-seeds", "1"], [], "first"),
    (["-ratinginterval", "10"], [], "live"), (["-report", "penta=true"], [], "pentanomial"),
    (["-strict"], ["--strict"], "strict"),
])
def test_understood_options_say_what_they_became(args, ours, note):
    done = translate("tournament", args, TOURNAMENT)
    assert done.args == ours
    [said] = done.notes
    assert said.startswith(args[0]) and note in said
    assert (" read as " + shlex.join(ours)) in said if ours else ": nothing to set" in said


REFUSED = [
    (["-noswap"], "colours alternate"), (["-reverse"], "colours alternate"),
    (["-debug"], "--log DIR"), (["-debug", "all"], "--log DIR"), (["-log", "file=x", "level=info"], "--log DIR"),
    (["-site", "Paris"], "Site tag"), (["-epdout", "x.epd"], "final_fen"), (["-tb", "/tb"], "tablebases"),
    (["-tbpieces", "6"], "tablebases"), (["-tbignore50"], "tablebases"),
    (["-tbadjudicate", "BOTH"], "tablebases"), (["-bookmode", "ram"], "--openings FILE"),
    (["-engines"], "--engines FILE"), (["-quick", "cmd=a", "cmd=b"], "arbiter match GAME A B"),
    (["-config", "file=c.json"], "arbiter tournament FILE.toml"), (["-crc32", "pgn=true"], "same bytes"),
    (["-show-latency"], "jsonl"), (["-check-mate-pvs"], "no counterpart"), (["-testEnv"], "no counterpart"),
    (["-use-affinity", "0-3"], "affinity"), (["-startup-ms", "5000"], "--stall"),
    (["-ucinewgame-ms", "5000"], "--stall"), (["-ping-ms", "5000"], "--stall"),
    (["-repeat", "4"], "twice"), (["-wait", "500"], "no pause"), (["-seeds", "2"], "one seed"),
    (["-tournament", "pyramid"], "--format round-robin, gauntlet or knockout"),
    (["-variant", "standard"], "--game GAME"), (["-maxmoves", "x"], "whole number"),
    (["-openings", "file=b.txt", "start=5"], "no start="), (["-openings", "file=b.txt", "policy=round"], "no policy="),
    (["-openings", "order=random"], "file=FILE"), (["-openings", "file=b", "depth=3"], "not one of"),
    (["-pgnout", "file=o.pgn", "append=false"], "always appends"), (["-pgnout", "min"], "--pgn FILE"),
    (["-pgnout", "o.pgn", "match_line=x"], "--pgn FILE"),
    (["-engine", "cmd=a", "ponder"], "ponder: arbiter has no pondering"),
    (["-engine", "cmd=a", "proto=xboard"], "UGI"), (["-each", "book=b.bin"], "Polyglot"),
    (["-each", "whitepov"], "mover's view"), (["-engine", "cmd=a", "initstr=x"], "protocol"),
    (["-engine", "cmd=a", "stderr=e.txt"], "--log DIR"), (["-engine", "cmd=a", "tscale=2"], "fixed"),
    (["-engine", "cmd=a", "debug"], "--log DIR"), (["-engine", "cmd=a", "bookdepth=3"], "--opening-plies"),
    (["-games"], "needs a value"), (["-engine", "--games", "2"], "needs its words"),
    (["-foo", "1"], "not an option of arbiter, cutechess-cli or fastchess"),
]


@pytest.mark.parametrize("args, why", REFUSED)
def test_refused_options_name_ours_or_say_there_is_none(args, why):
    with pytest.raises(CompatError) as exc:
        translate("tournament", args, TOURNAMENT)
    message = str(exc.value)
    assert message.startswith(args[0]) and why in message, message


def test_values_are_never_taken_for_options():
    """A value that looks like a foreign option stays a value; a short option
    with its value glued on stays ours; nothing after `--` is read."""
    args = ["--name", "-games", "-c4", "-gtroll", "-e", "-engine", "--tc=-concurrency", "--",
            "-noswap"]
    assert translate("tournament", args, TOURNAMENT).args == args


def test_options_a_command_lacks_are_refused_naming_it():
    match = {"--games": True, "--each": True, "--concurrency": True}
    with pytest.raises(CompatError, match=r"^-engine is -e here, which `arbiter match` does not have "
                                          r"\(`arbiter match GAME A B` takes the game and its two "
                                          r"engines as arguments"):
        translate("match", ["-engine", "cmd=a"], match)
    with pytest.raises(CompatError, match=r"^-version is --version here, which `arbiter match` does "
                                          r"not have \(`arbiter --version`\)"):
        translate("match", ["-version"], match)
    assert translate("match", ["-concurrency", "2"], match).args == ["--concurrency", "2"]


def test_without_a_command_their_options_run_a_tournament():
    assert before_command(["-engine", "cmd=a"]).args == ["tournament", "-engine", "cmd=a"]
    assert "running `arbiter tournament`" in before_command(["-concurrency", "2"]).notes[0]
    assert before_command(["-version"]).args == ["--version"]
    assert before_command(["-help"]).args == ["--help"]
    assert before_command(["games"]).args == ["games"] and not before_command(["games"]).notes


# --- the command line -----------------------------------------------------------------------------


def test_a_pasted_cutechess_line_plays_a_match(tmp_path):
    """The issue's example: `-concurrency 2` no longer becomes `-c oncurrency`;
    every option read, one note each on stderr, the games played."""
    run = invoke("match", "troll", "random", "greedy", "-concurrency", "2", "-rounds", "1",
                 "-games", "2", "-each", "depth=1", "-pgnout", "out.pgn", "-srand", "3",
                 "-recover", "--db", "m.db", "--plain", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "is not a valid int" not in run.stderr
    notes = [line for line in run.stderr.splitlines() if line.startswith("arbiter: note: -")]
    assert [note.split()[2].rstrip(":") for note in notes] == [
        "-concurrency", "-rounds", "-games", "-each", "-pgnout", "-srand", "-recover"]
    assert "-each depth=1 read as --each tc=depth=1" in run.stderr
    assert (tmp_path / "out.pgn").read_text().count('[Game "troll"]') == 2


def test_a_fastchess_line_without_a_command_runs_a_tournament(tmp_path):
    engine = f"cmd={PYTHON} -m sample_engines.random"
    run = invoke("-engine", engine, "name=one", "-engine", engine, "name=two", "-variant", "atoll",
                 "-games", "2", "-each", "tc=inf", "depth=1", "proto=uci", "-tournament", "roundrobin",
                 "-event", "pasted", "--db", "t.db", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "running `arbiter tournament`" in run.stderr
    assert '"name": "pasted"' in run.stdout and '"game": "atoll"' in run.stdout
    assert "-each tc=inf depth=1 proto=uci read as --each tc=inf,depth=1" in run.stderr


@pytest.mark.parametrize("args", [["-noswap"], ["-debug"], ["-tb", "x"], ["-wait", "100"],
                                  ["-engine", "cmd=a", "ponder"], ["-bogus"]])
def test_a_refused_option_starts_nothing(tmp_path, args):
    run = invoke("tournament", "-g", "troll", "-e", "random", "-e", "greedy", *args,
                 "--db", "t.db", cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.startswith(f"arbiter: error: {args[0]}")
    assert "nothing was started" in run.stderr or "not an option of arbiter" in run.stderr
    assert not (tmp_path / "t.db").exists()
