"""Engine specifications: cutechess-style ``key=value`` strings and TOML files.

A SPEC on the command line is either cutechess-cli style::

    cmd="python3 -m sample_engines.mcts" name=mcts option.iterations=400 tc=10+0.1

or the name of an engine defined in a TOML file (``--engines FILE``, default
``engines.toml`` when present), optionally followed by overrides::

    mcts tc=st=1 option.iterations=100

The TOML file holds one table per engine::

    [engines.mcts]
    cmd = "python3 -m sample_engines.mcts"
    args = []                     # appended to cmd
    dir = "."                     # working directory (relative to this file)
    env = { MCTS_DEBUG = "1" }    # added to the environment
    options = { iterations = 400, seed = 7 }
    tc = "10+0.1"                 # this engine's time control
    timemargin = 50               # ms

Other top-level tables are ignored (a tournament file may hold engines too).
Every error is a :class:`EngineSpecError` whose message names the spec or
the file and table at fault (``specs/match.md`` §Engine specs).
"""

from __future__ import annotations

import copy
import os
import shlex
import sys
import tomllib
from collections.abc import Callable
from typing import Any

from arbiter.clock import MAX_TIME_MS, TimeControl, TimeControlError
from arbiter.engine import EngineConfig

__all__ = [
    "EngineSpecError", "parse_engine_spec", "load_engines_file", "read_toml", "DEFAULT_ENGINES_FILE",
    "SAMPLE_ENGINES", "sample_engines", "each_items", "with_each", "display_named",
]

#: the engines file looked for in the current folder when none is given
#: (which file applies is decided in one place: ``arbiter.config.engines_file_for``)
DEFAULT_ENGINES_FILE = "engines.toml"

#: Largest engines or tournament TOML file read, in bytes: a file defining a
#: few hundred engines is a few tens of KB; reading stops here, so a wrong
#: path (``/dev/zero``, a log) is refused instead of read into memory.
MAX_TOML_BYTES = 1 << 20

#: the sample engines of the package (``sample_engines/``), known by name
#: everywhere (:func:`sample_engines`)
SAMPLE_ENGINES = ("random", "greedy", "mcts")

SPEC_KEYS = "cmd, name, arg, dir, option.NAME, env.NAME, tc, timemargin, conf"
TOML_KEYS = ("cmd", "name", "args", "dir", "env", "options", "tc", "timemargin")


class EngineSpecError(ValueError):
    """A bad engine spec or engines file; the message says what and where."""


def _option_value(value: Any, where: str) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise EngineSpecError(f"{where}: option values must be strings, numbers or booleans, not {value!r}")


def _check_tc(text: str, where: str) -> str:
    try:
        return str(TimeControl.parse(text))
    except TimeControlError as exc:
        raise EngineSpecError(f"{where}: {exc}") from None


def _timemargin(value: Any, where: str) -> int:
    """A time margin in whole ms, 0 to :data:`~arbiter.clock.MAX_TIME_MS`."""
    try:
        number = int(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf)
        number = None
    if number is None or number < 0 or (isinstance(value, float) and value != number):
        raise EngineSpecError(f"{where}: timemargin must be a whole number of ms >= 0, not {value!r}")
    if number > MAX_TIME_MS:
        raise EngineSpecError(f"{where}: timemargin must be at most {MAX_TIME_MS} ms, not {value!r}")
    return number


def _no_nul(config: EngineConfig, where: str) -> EngineConfig:
    """``config`` unless a string of it holds a NUL, which no command line,
    path, environment or protocol line can carry (the process would fail to
    start, after the tournament had begun); an environment name must also
    be a name (not empty, no ``=``)."""
    texts = [config.cmd, config.name or "", config.dir or "", *config.args, *config.env.values(),
             *config.options, *(v for v in config.options.values() if v is not None)]
    if any("\0" in text for text in texts) or any("\0" in name for name in config.env):
        raise EngineSpecError(f"{where}: a NUL character in the engine's settings")
    for name in config.env:
        if not name or "=" in name:
            raise EngineSpecError(f"{where}: {name!r} is not an environment variable name")
    return config


#: a SPEC ``remote:NAME``: an engine that connects over the wire (``arbiter connect``)
REMOTE_PREFIX = "remote:"
#: seconds a run waits for its remote engines by default (``--wait-engines``):
#: time to start ``arbiter connect`` on another machine by hand
DEFAULT_WAIT_ENGINES = 120.0


def parse_engine_spec(spec: str, engines: dict[str, EngineConfig] | None = None,
                      engines_file: str | None = None, each: str | None = None) -> EngineConfig:
    """An :class:`EngineConfig` from a SPEC (see the module docstring).

    ``engines`` are the engines of the TOML file (``engines_file`` names it
    in messages).  ``each`` holds ``key=value`` words for every engine
    (``--each``, as cutechess-cli's ``-each``): they apply after the named
    engine's table and before the SPEC's own words, so the SPEC wins
    (``specs/match.md`` §Engine specs).  A key given twice in one SPEC (or
    in ``each``) is an error, except the repeatable ``arg=``."""
    where = f"engine spec {spec!r}"
    words = _split(spec, where)
    if not words:
        raise EngineSpecError("empty engine spec: give cmd=... or the name of an engine from an engines file")
    base: EngineConfig | None = None
    if words[0].startswith(REMOTE_PREFIX) and "=" not in words[0]:  # specs/wire.md §Remote participants
        name = words.pop(0)[len(REMOTE_PREFIX):]
        if not name:
            raise EngineSpecError(f"{where}: give remote:NAME, the name the engine connects with")
        base = EngineConfig(cmd=REMOTE_PREFIX + name, name=name)
    elif "=" not in words[0] and not words[0].startswith("option."):
        base = _named(words.pop(0), engines, engines_file, where)
    own = _items(words, where)
    if base is not None and remote_name_of(base) is not None:
        _check_remote_items(base, own, where)
    for key, value in own:
        if key == "conf":
            if base is not None:
                raise EngineSpecError(f"{where}: conf= given twice")
            base = _named(value or "", engines, engines_file, where)
    config = copy.deepcopy(base) if base else EngineConfig(cmd="")
    for key, value in each_items(each) + [item for item in own if item[0] != "conf"]:
        _apply(config, key, value, where)
    if not config.cmd.strip():
        raise EngineSpecError(f"{where}: no cmd= (the command that runs the engine)")
    try:
        shlex.split(config.cmd)
    except ValueError as exc:
        raise EngineSpecError(f"{where}: bad cmd {config.cmd!r}: {exc}") from None
    return _no_nul(config, where)


#: the keys of a SPEC that may be given more than once (each adds an argument)
REPEATABLE_KEYS = ("arg",)

#: the keys ``--each`` refuses: every engine needs its own name, and
#: ``conf=`` picks an engine rather than setting something for all of them
NOT_FOR_EACH = ("name", "conf")

#: one word of a SPEC: its key and its value (None: an ``option.NAME`` button)
Item = tuple[str, str | None]


def _split(text: str, where: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise EngineSpecError(f"{where}: {exc}") from None


def _items(words: list[str], where: str) -> list[Item]:
    """The ``key=value`` words of a SPEC, checked for shape and for a key
    given twice (``name=a name=b``: which one was meant?)."""
    items: list[Item] = []
    seen: set[str] = set()
    for word in words:
        key, eq, value = word.partition("=")
        if key.startswith("option."):
            if not key[len("option."):]:
                raise EngineSpecError(f"{where}: {word!r} has no option name after 'option.'")
        elif not eq:
            raise EngineSpecError(f"{where}: {word!r} is not key=value (keys: {SPEC_KEYS})")
        if key in seen and key not in REPEATABLE_KEYS:
            raise EngineSpecError(f"{where}: {key}= given twice; give each key once")
        seen.add(key)
        items.append((key, value if eq else None))
    return items


def each_items(each: str | None) -> list[Item]:
    """The checked words of ``--each`` (none when None): ``key=value`` words
    as in a SPEC, without :data:`NOT_FOR_EACH` keys; bad values are refused
    here, naming ``--each``."""
    if each is None:
        return []
    where = f"--each {each!r}"
    items = _items(_split(each, where), where)
    for key, value in items:
        if key in NOT_FOR_EACH:
            raise EngineSpecError(f"{where}: {key}= cannot be given for every engine")
        _apply(EngineConfig(cmd=""), key, value, where)
    return items


def with_each(config: EngineConfig, each: str | None) -> EngineConfig:
    """A copy of ``config`` (an engine already made, such as a config file's
    table) with the ``--each`` words applied over it."""
    config = copy.deepcopy(config)
    for key, value in each_items(each):
        _apply(config, key, value, f"--each {each!r}")
    return config


def _apply(config: EngineConfig, key: str, value: str | None, where: str) -> None:
    """One ``key=value`` of a SPEC (other than ``conf``) onto ``config``."""
    if key.startswith("option."):
        config.options[key[len("option."):]] = value  # None: a button
        return
    assert value is not None  # _items: only option.NAME may lack '='
    _set(config, key, value, where)


def _set(config: EngineConfig, key: str, value: str, where: str) -> None:
    """One ``key=value`` of a SPEC (other than ``conf`` and ``option.NAME``)."""
    if key.startswith("env."):
        name = key[len("env."):]
        if not name:
            raise EngineSpecError(f"{where}: {key + '=' + value!r} has no variable name after 'env.'")
        config.env[name] = value
    elif key == "cmd":
        config.cmd = value
    elif key == "name":
        config.name = value or None
    elif key == "arg":
        config.args.append(value)
    elif key == "dir":
        config.dir = value
    elif key == "tc":
        config.tc = _check_tc(value, where)
    elif key == "timemargin":
        config.timemargin_ms = _timemargin(value, where)
    else:
        raise EngineSpecError(f"{where}: unknown key {key!r} (keys: {SPEC_KEYS})")


def sample_engines() -> dict[str, EngineConfig]:
    """The sample engines by name (:data:`SAMPLE_ENGINES`), run by this
    interpreter: they are part of the package, so ``-e mcts`` works from any
    folder; an engines file's table of the same name wins
    (:func:`arbiter.config.engine_tables`)."""
    python = shlex.quote(sys.executable)
    return {name: EngineConfig(cmd=f"{python} -m sample_engines.{name}", name=name)
            for name in SAMPLE_ENGINES}


def _named(name: str, engines: dict[str, EngineConfig] | None, engines_file: str | None,
           where: str) -> EngineConfig:
    if engines_file is None and (engines is None or name not in engines):
        raise EngineSpecError(
            f"{where}: {name!r} is not key=value, not a sample engine ({', '.join(SAMPLE_ENGINES)}) "
            f"and there is no engines file (give cmd=..., or define [engines.{name}] in "
            f"{DEFAULT_ENGINES_FILE} or --engines FILE)")
    assert engines is not None
    if name not in engines:
        known = ", ".join(sorted(engines)) or "none"
        raise EngineSpecError(f"{where}: no engine {name!r} in {engines_file or 'the engines file'} "
                              f"(it defines: {known})")
    return engines[name]


def read_bounded_text(path: str, limit: int, error: Callable[[str], Exception], *,
                      cannot_read: str, too_big: str) -> str:
    """The UTF-8 text of the file ``path``, reading at most ``limit`` bytes
    (so ``/dev/zero`` costs ``limit``, not the machine), or
    ``error("<path>...: why")``: ``"<path>: <cannot_read>: <reason>"``,
    ``"<path>: <too_big>"``, or the line and byte of the first invalid UTF-8."""
    try:
        with open(path, "rb") as file:
            data = file.read(limit + 1)
    except OSError as exc:
        raise error(f"{path}: {cannot_read}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{path}: {too_big}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise error(f"{path}:{line}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_toml(path: str, error: type[Exception] = EngineSpecError) -> dict[str, Any]:
    """The data of a TOML file, or ``error("<path>: why")`` when it cannot be
    read, is larger than :data:`MAX_TOML_BYTES`, is not UTF-8 or is not TOML
    (engines files, tournament config files)."""
    text = read_bounded_text(path, MAX_TOML_BYTES, error, cannot_read="cannot read",
                             too_big=f"more than {MAX_TOML_BYTES} bytes (the limit of a TOML file "
                                     "here); is it the right file?")
    try:
        return tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an integer of thousands of digits
        raise error(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{path}: not valid TOML here: arrays or tables nested too deeply") from None


def load_engines_file(path: str) -> dict[str, EngineConfig]:
    """The ``[engines.NAME]`` tables of a TOML file, checked."""
    data = read_toml(path)
    tables = data.get("engines", {})
    if not isinstance(tables, dict):
        raise EngineSpecError(f"{path}: 'engines' must be a table of [engines.NAME] tables")
    base_dir = os.path.dirname(os.path.abspath(path))
    return {name: _engine_from_table(name, table, path, base_dir) for name, table in tables.items()}


def _engine_from_table(name: str, table: Any, path: str, base_dir: str) -> EngineConfig:
    where = f"{path}: [engines.{name}]"
    if not isinstance(table, dict):
        raise EngineSpecError(f"{where} must be a table")
    for key in table:
        if key not in TOML_KEYS:
            raise EngineSpecError(f"{where}: unknown key {key!r} (keys: {', '.join(TOML_KEYS)})")

    def text(key: str) -> str | None:
        value = table.get(key)
        if value is not None and not isinstance(value, str):
            raise EngineSpecError(f"{where}: {key} must be a string, not {value!r}")
        return value

    cmd = text("cmd")
    if not cmd or not cmd.strip():
        raise EngineSpecError(f"{where}: cmd is missing (the command that runs the engine)")
    try:
        shlex.split(cmd)
    except ValueError as exc:
        raise EngineSpecError(f"{where}: bad cmd {cmd!r}: {exc}") from None
    args = table.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise EngineSpecError(f"{where}: args must be a list of strings, not {args!r}")
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise EngineSpecError(f"{where}: env must be a table of strings, not {env!r}")
    options = table.get("options", {})
    if not isinstance(options, dict):
        raise EngineSpecError(f"{where}: options must be a table, not {options!r}")
    directory = text("dir")
    if directory is not None:
        directory = os.path.normpath(os.path.join(base_dir, directory))
    tc = text("tc")
    return _no_nul(EngineConfig(
        cmd=cmd,
        name=text("name") or name,
        args=list(args),
        dir=directory,
        env=dict(env),
        options={k: _option_value(v, f"{where}: option {k!r}") for k, v in options.items()},
        tc=_check_tc(tc, where) if tc is not None else None,
        timemargin_ms=_timemargin(table.get("timemargin", 0), where),
    ), where)


def display_named(config: EngineConfig) -> EngineConfig:
    """``config`` with its name fixed: the one rule for an engine's name in
    the live view, the database and the record (``specs/match.md`` §Engine
    names): ``name=`` (or an engines file's ``name``), else the engines
    file's table name, else what :attr:`EngineConfig.label` makes of the
    command; never the engine's own ``id name``, which is kept beside it
    (``white_id``/``black_id``), so a name is known before the engine starts
    and the same in every place."""
    if not config.name:
        config = copy.copy(config)
        config.name = config.label
    return config


# --------------------------------------------------------------------------
# Remote engines: remote:NAME (specs/tournament.md §Remote engines)
# --------------------------------------------------------------------------

#: what a ``remote:NAME`` SPEC may set besides its name: what the arbiter
#: applies (its clock); the command, arguments, directory, environment and
#: options are those of the client's ``arbiter connect -e SPEC`` (the run
#: sends a remote engine no ``setoption``)
REMOTE_KEYS = ("tc", "timemargin")


def remote_name_of(config: EngineConfig) -> str | None:
    """NAME of a ``remote:NAME`` config, None for an engine run here."""
    return config.cmd[len(REMOTE_PREFIX):] if config.cmd.startswith(REMOTE_PREFIX) else None


def _check_remote_items(base: EngineConfig, items: list[Item], where: str) -> None:
    """A remote engine's NAME is a name an engine connects with (1 to 64
    letters, digits, '_' or '-': the listener refuses any other), and its
    SPEC sets only :data:`REMOTE_KEYS`."""
    from arbiter.tokens import NAME_RULE, valid_name

    if not valid_name(base.name or ""):
        raise EngineSpecError(f"{where}: remote:{(base.name or '')[:80]}: NAME must be "
                              f"{NAME_RULE} (the name the engine connects with)")
    for key, _ in items:
        if key not in REMOTE_KEYS:
            raise EngineSpecError(f"{where}: {key}= is not for a remote engine: it takes only "
                                  f"{' and '.join(k + '=' for k in REMOTE_KEYS)} (its command, "
                                  "environment and options are those of its `arbiter connect "
                                  "-e SPEC`)")
