"""Bounded inputs (issue 16): a typo must never eat the machine nor print a traceback.

Each surface a user types or hands over -- tournament configs, engine specs,
time controls, the command line's numbers, record files -- has its limits
(named constants, each with its reason), and every input is either accepted or
refused with exit 2 (or a record file's documented exit 1) and one clear
message.  The targeted tests each failed before their fix; the fuzz tests
(hypothesis, modest example counts, in-process CLI) look for anything else.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli import invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arbiter.clock import MAX_TIME_MS, TimeControl, TimeControlError
from arbiter.config import ConfigError, from_file_and_flags, read_openings
from arbiter.engine import EngineConfig
from arbiter.enginespec import MAX_TOML_BYTES, EngineSpecError, load_engines_file, parse_engine_spec
from arbiter.pgn import (
    MAX_COMMENT_CHARS,
    MAX_RECORD_LINE_CHARS,
    MAX_RECORD_MOVES,
    MAX_TAGS,
    RecordSyntaxError,
    parse_games,
    read_games,
)
from arbiter.record_jsonl import MAX_JSONL_LINE_CHARS, read_jsonl
from arbiter.schedule import (
    MAX_OPENING_LINE_CHARS,
    MAX_OPENINGS_BYTES,
    MAX_SCHEDULE_GAMES,
    ScheduleError,
    build_schedule,
    check_size,
    schedule_size,
)
from protocol.limits import MAX_INT

#: three engines and an SPRT: a configuration that is always refused (an SPRT
#: needs two engines), *after* every number and time control has been checked,
#: so a CLI case never starts a tournament whatever the fuzzed value
NEVER_RUNS = ("--game", "troll", "-e", "cmd=a", "-e", "cmd=b", "-e", "cmd=c",
              "--sprt", "elo0=0 elo1=5 alpha=0.05 beta=0.05")

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def refused(run, db: Path | None = None, code: int = 2) -> str:
    """The run ended with ``code`` and one message (a traceback would have
    been raised by ``invoke``); nothing was created."""
    assert run.returncode == code, (run.stdout, run.stderr)
    assert "error" in run.stderr.lower(), run.stderr
    if db is not None:
        assert not db.exists()
    return run.stderr


# --- the schedule and the command line's numbers ---------------------------------------------


@pytest.mark.parametrize("extra, words", [
    (("--games", "1000000000"), "--games must be at most"),
    (("--rounds", "99999999999"), "--rounds must be at most"),
    (("--games", "1000", "--rounds", "1001"), "over the limit"),
    (("--tc", "depth=1e400"), "over the limit"),
    (("--tc", "st=1e308"), "over the limit"),
    (("--tc", "nodes=99999999999999999999999"), "over the limit"),
    (("--stall", "inf"), "--stall must be a finite number"),
    (("--stall", "nan"), "--stall must be a finite number"),
    (("--stall", "1e300"), "--stall must be at most"),
    (("--timemargin", "99999999999999999999999"), "--timemargin must be at most"),
    (("--seed", "99999999999999999999999"), "--seed must be at most"),
    (("--random-plies", "1000000"), "--random-plies must be at most"),
    (("--concurrency", "1000000"), "--concurrency must be at most"),
])
def test_numbers_out_of_range_are_refused_at_once(tmp_path, extra, words):
    """``--games 1000000000`` once reached 4 GB in 10 s; ``inf`` and ``1e400``
    were OverflowError tracebacks."""
    db = tmp_path / "t.db"
    assert words in refused(invoke("tournament", *NEVER_RUNS, *extra, "--db", db), db)


def test_engine_spec_numbers_out_of_range_are_refused(tmp_path):
    db = tmp_path / "t.db"
    for spec in ("cmd=a tc=depth=1e400", "cmd=a tc=st=1e308", "cmd=a timemargin=1e400"):
        assert "engine spec" in refused(invoke("tournament", "--game", "troll", "-e", spec, "-e",
                                               "cmd=b", "--db", db), db)


def test_play_refuses_an_infinite_stall():
    assert "--stall" in refused(invoke("play", "troll", "-e", "cmd=a", "-e", "cmd=b", "--stall", "inf"))


def test_the_schedule_size_is_checked_before_it_is_built():
    with pytest.raises(ScheduleError, match="over the limit"):
        build_schedule(["a", "b", "c"], games=MAX_SCHEDULE_GAMES, rounds=1)
    assert schedule_size(2, "round-robin", 1000, 1000) == MAX_SCHEDULE_GAMES
    check_size(2, "round-robin", 1000, 1000)  # the largest is accepted


def test_a_config_files_numbers_are_bounded(tmp_path):
    config = tmp_path / "t.toml"
    for line in ("games = 9223372036854775807", "stall = inf", "stall = nan", "timemargin = 10000000000000",
                 'tc = "depth=1e400"', "rounds = 2000000"):
        config.write_text(f'game = "troll"\nengine = ["cmd=a", "cmd=b"]\n{line}\n')
        with pytest.raises(ConfigError):
            from_file_and_flags(str(config), None, None, {})


# --- openings files --------------------------------------------------------------------------


def test_an_endless_openings_file_is_refused_unread():
    """``--openings /dev/zero`` ended in MemoryError."""
    with pytest.raises(ConfigError, match="more than .* bytes"):
        read_openings("troll", "/dev/zero")
    assert MAX_OPENINGS_BYTES < 1 << 30


def test_openings_files_are_bounded(tmp_path):
    big = tmp_path / "big.txt"
    with open(big, "wb") as file:
        file.truncate(MAX_OPENINGS_BYTES + 1)
    with pytest.raises(ConfigError, match="more than"):
        read_openings("troll", str(big))
    long = tmp_path / "long.txt"
    long.write_text("\n" + "a" * (MAX_OPENING_LINE_CHARS + 1) + "\n")
    with pytest.raises(ConfigError, match=r"long.txt:2: the line is \d+ characters long"):
        read_openings("troll", str(long))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\n\n\xff\n")
    with pytest.raises(ConfigError, match=r"bad.txt:3: not UTF-8"):
        read_openings("troll", str(bad))


# --- config and engines files: UTF-8, NUL, size ----------------------------------------------


@pytest.mark.parametrize("content, words", [
    (b'game = "troll"\nname = "\xff"\n', "not UTF-8"),
    (b"a = " + b"[" * 100_000, "nested too deeply"),
    (b"games = " + b"9" * 5000, "not valid TOML"),
    (b'game = "troll"\nengine = ["cmd=\'a\\u0000b\'", "cmd=c"]\n', "NUL"),
    (b'game = "troll"\nengine = ["cmd=a", "cmd=b"]\npgn = "x\\u0000"\n', "NUL"),
    (b'game = "troll"\n[engines.a]\ncmd = "a\\u0000"\n[engines.b]\ncmd = "b"\n', "NUL"),
    (b'game = "troll"\n[engines.a]\ncmd = "a"\nenv = { "X=Y" = "1" }\n[engines.b]\ncmd = "b"\n',
     "not an environment variable name"),
    (b"#" * (MAX_TOML_BYTES + 1), "the limit"),
], ids=lambda value: value[:20] if isinstance(value, bytes) else value)
def test_bad_config_files_are_refused_and_nothing_is_created(tmp_path, content, words):
    """A non-UTF-8 config was a traceback; a NUL in a command left the
    tournament ``running`` (the error came when the engine started)."""
    config, db = tmp_path / "t.toml", tmp_path / "t.db"
    config.write_bytes(content)
    assert words in refused(invoke("tournament", config, "--db", db), db)


def test_a_nul_in_an_engine_spec_or_engines_file_is_refused(tmp_path):
    with pytest.raises(EngineSpecError, match="NUL"):
        parse_engine_spec("cmd=a arg=b\0c")
    engines = tmp_path / "engines.toml"
    engines.write_bytes(b'[engines.a]\ncmd = "a"\nargs = ["\\u0000"]\n')
    with pytest.raises(EngineSpecError, match="NUL"):
        load_engines_file(str(engines))
    engines.write_bytes(b'[engines.a]\ncmd = "\xfe"\n')
    with pytest.raises(EngineSpecError, match=r"engines.toml:2: not UTF-8"):
        load_engines_file(str(engines))


# --- record files ----------------------------------------------------------------------------

GAME = '[Event "x"]\n[Result "*"]\n\n1. a1 *\n'


def test_a_record_line_over_the_limit_is_refused_naming_it():
    """A record file with one 50 MB line took 68-95 s and 4.7 GB to replay."""
    text = GAME + "\n" + GAME.replace("1. a1", "1. " + "a1 " * (MAX_RECORD_LINE_CHARS // 3 + 1))
    items = read_games(text, "r.pgn")
    assert not isinstance(items[0], RecordSyntaxError)
    error = items[-1]
    assert isinstance(error, RecordSyntaxError) and error.line == 9 and error.game_number == 2
    assert "line 9 is" in str(error) and "over the limit" in str(error)
    with pytest.raises(RecordSyntaxError, match="r.pgn:9: line 9 is"):
        parse_games(text, "r.pgn")


def test_record_tags_comments_and_moves_are_bounded():
    tags = "".join(f'[T{n} "v"]\n' for n in range(MAX_TAGS + 1))
    with pytest.raises(RecordSyntaxError, match=f"more than {MAX_TAGS} tags"):
        parse_games(tags + "\n*\n")
    comment = "{" + "word\n" * (MAX_COMMENT_CHARS // 5 + 1) + "}"
    with pytest.raises(RecordSyntaxError, match="a comment of"):
        parse_games(GAME.replace("1. a1", "1. a1 " + comment))
    moves = "\n".join(["a1 a2"] * (MAX_RECORD_MOVES // 2 + 1))
    with pytest.raises(RecordSyntaxError, match=f"more than {MAX_RECORD_MOVES} moves"):
        parse_games(GAME.replace("1. a1", moves))


def test_a_jsonl_line_over_the_limit_is_refused_unread():
    items = read_jsonl("\n" + " " * MAX_JSONL_LINE_CHARS + "{}\n", "r.jsonl")
    assert len(items) == 1 and isinstance(items[0], RecordSyntaxError)
    assert items[0].line == 2 and "over the limit" in str(items[0])


def test_replay_of_a_long_line_exits_1_naming_the_line(tmp_path):
    record = tmp_path / "r.pgn"
    record.write_text(GAME + "\n" + "a1 " * (MAX_RECORD_LINE_CHARS // 3 + 1) + "\n")
    run = invoke("replay", record)
    assert run.returncode == 1
    assert "r.pgn:6:" in run.stdout + run.stderr


# --- fuzz: every surface ---------------------------------------------------------------------

_numberish = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["inf", "-inf", "nan", "1e400", "1e308", "9" * 40, "0", "-1", "1e-400", "1_0"]),
)
_tc_text = st.one_of(
    st.text(alphabet="0123456789.:+/=,e-stdepthnodinf ", max_size=30),
    st.builds(lambda k, v: f"{k}={v}", st.sampled_from(["st", "depth", "nodes"]), _numberish),
    st.builds(lambda m, b, i: f"{m}/{b}+{i}", _numberish, _numberish, _numberish),
)


def _tc_is_bounded(tc: TimeControl) -> bool:
    times = (tc.base_ms, tc.inc_ms, tc.movetime_ms)
    counts = (tc.moves, tc.depth, tc.nodes)
    return (all(t is None or 0 <= t <= MAX_TIME_MS for t in times)
            and all(c is None or 1 <= c <= MAX_INT for c in counts))


@settings(max_examples=400, deadline=None)
@given(_tc_text)
def test_fuzz_time_controls(text):
    """Any text: a TimeControlError, or a bounded time control whose
    canonical spelling parses back to it."""
    try:
        tc = TimeControl.parse(text)
    except TimeControlError as exc:
        assert str(exc)
        return
    assert _tc_is_bounded(tc)
    assert TimeControl.parse(str(tc)) == tc


_spec_word = st.one_of(
    st.builds(lambda k, v: f"{k}={v}",
              st.sampled_from(["cmd", "name", "arg", "dir", "tc", "timemargin", "option.X", "env.X",
                               "env.", "conf", "bogus"]),
              st.one_of(_numberish, _tc_text, st.text(max_size=10))),
    st.text(max_size=10),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_spec_word, max_size=6).map(" ".join))
def test_fuzz_engine_specs(spec):
    try:
        config = parse_engine_spec(spec)
    except EngineSpecError as exc:
        assert str(exc)
        return
    assert isinstance(config, EngineConfig) and "\0" not in config.cmd
    assert config.tc is None or _tc_is_bounded(TimeControl.parse(config.tc))


_flag = st.sampled_from(["--games", "--rounds", "--seed", "--random-plies", "--concurrency",
                         "--timemargin", "--maxplies", "--stall", "--tc"])


@FUZZ
@given(st.lists(st.tuples(_flag, st.one_of(_numberish, _tc_text)), min_size=1, max_size=3))
def test_fuzz_cli_numbers(tmp_path, flags):
    """Any flag values on a configuration that is never run: exit 2 and a
    message, never a traceback, and no database."""
    db = tmp_path / "never.db"
    args = [a for pair in flags for a in pair]
    refused(invoke("tournament", *NEVER_RUNS, *args, "--db", db), db)


_toml_value = st.one_of(
    _numberish, st.text(max_size=8).map(json.dumps), st.sampled_from(["true", "[]", "{}", '"x\\u0000"']))
_config_line = st.builds(
    lambda k, v: f"{k} = {v}",
    st.sampled_from(["games", "rounds", "seed", "stall", "tc", "timemargin", "maxplies", "concurrency",
                     "random_plies", "name", "format", "order", "pgn", "openings", "sprt", "bogus"]),
    _toml_value)


@FUZZ
@given(st.lists(_config_line, max_size=5), st.binary(max_size=8), st.integers(0, 200))
def test_fuzz_config_files(tmp_path, lines, noise, at):
    """Config files, well-formed or cut with random bytes: a configuration
    or a ConfigError naming the file, nothing else."""
    text = '\n'.join(['game = "troll"', 'engine = ["cmd=a", "cmd=b", "cmd=c"]', *lines]).encode()
    config = tmp_path / "t.toml"
    config.write_bytes(text[:at] + noise + text[at:])
    try:
        from_file_and_flags(str(config), None, None, {})
    except ConfigError as exc:
        assert str(config) in str(exc)


_RECORD_SEED = (
    '[Event "x"]\n[Site "?"]\n[Game "troll"]\n[White "a"]\n[Black "b"]\n[Result "1-0"]\n\n'
    '1. d2 {+0.35/12 0.52s} d7 {book} (1... e7) 2. e2 $1 ; rest\n%escape\n1-0\n'
)


@FUZZ
@given(st.integers(0, len(_RECORD_SEED)), st.integers(0, 30), st.text(max_size=12),
       st.sampled_from(["r.pgn", "r.jsonl"]), st.sampled_from(["replay", "show", "import"]))
def test_fuzz_record_files(tmp_path, at, cut, noise, name, command):
    """Record files mangled at random, through ``replay``, ``show`` and
    ``import``: exit 0, 1 (a bad game) or 2, never a traceback."""
    text = _RECORD_SEED if name == "r.pgn" else json.dumps({"record": {"moves": [_RECORD_SEED]}})
    record = tmp_path / name
    record.write_text(text[:at] + noise + text[at + cut:])
    extra = ("--db", tmp_path / "i.db") if command == "import" else ()
    run = invoke(command, record, *extra)
    assert run.returncode in (0, 1, 2), run
