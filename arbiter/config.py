"""A tournament's configuration: a TOML file and command-line flags, checked.

The one home of "file + flags -> :class:`TournamentConfig`" (``specs/tournament.md``
§Config file, §Resume) and of the one rule for which engines file applies
(:func:`engines_file_for`), used by ``arbiter play``, ``match``, ``tournament``
and ``check`` alike.  Pure apart from reading the files named: nothing here
starts an engine or opens the database, so every mistake is found, with a
message naming the file and key at fault (:class:`ConfigError`), before
anything runs.

* :class:`TournamentConfig`: what to play (the fields that make its
  :meth:`~TournamentConfig.identity`) and how this run goes (its home is
  :mod:`arbiter.tournament_config`, re-exported here with :class:`ConfigError`);
* :func:`from_file_and_flags`: ``arbiter tournament [CONFIG.toml] [flags]``
  and ``arbiter match``: the file's values, overridden by the flags given;
* :func:`resumed`: a stored tournament's configuration with this run's
  settings (``--resume ID``);
* :func:`engine_configs`: engine SPECs against the engines file that applies.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arbiter.clock import DEFAULT_STALL_MS
from arbiter.engine import EngineConfig
from arbiter.enginespec import (
    DEFAULT_ENGINES_FILE,
    EngineSpecError,
    display_named,
    load_engines_file,
    parse_engine_spec,
    read_bounded_text,
    read_toml,
    sample_engines,
    with_each,
)
from arbiter.games import GameError, get_game
from arbiter.match import DEFAULT_TC
from arbiter.match.adjudication import Adjudication, AdjudicationError
from arbiter.rounds import (
    DEFAULT_PAIRS,
    DEFAULT_TIEBREAK_PAIRS,
    default_rounds,
)
from arbiter.schedule import (
    MAX_OPENINGS_BYTES,
    Opening,
    ScheduleError,
    is_pgn_openings,
    parse_openings,
    pgn_openings,
)
from arbiter.tournament_config import (
    MAX_CONCURRENCY,
    NUMBER_RANGES,
    ConfigError,
    TournamentConfig,
    check_number,
    stall_ms,
)

__all__ = [
    "ConfigError", "TournamentConfig", "CONFIG_KEYS", "DEFINING", "load_config_file",
    "read_openings", "config_from_settings", "from_file_and_flags", "resumed", "check_resume_flags",
    "check_flags",
    "engines_file_for", "engine_tables", "engine_configs",
    # re-exported from arbiter.tournament_config, their home
    "MAX_CONCURRENCY", "NUMBER_RANGES", "check_number", "stall_ms",
]


# --------------------------------------------------------------------------
# Which engines file applies
# --------------------------------------------------------------------------


def engines_file_for(given: str | None) -> str | None:
    """The engines file that applies: ``given`` (``--engines FILE``, else a
    config file's ``engines_file``), else ``./engines.toml`` when it exists,
    else None (``specs/match.md`` §Engine specs)."""
    if given is not None:
        return given
    return DEFAULT_ENGINES_FILE if os.path.exists(DEFAULT_ENGINES_FILE) else None


def engine_tables(engines_file: str | None, config_file: str | None = None
                  ) -> tuple[dict[str, EngineConfig], str | None]:
    """The engines defined by name: the sample engines
    (:func:`arbiter.enginespec.sample_engines`), then those of the engines
    file that applies (:func:`engines_file_for`), then a config file's own
    ``[engines.NAME]`` tables: a later one of the same name wins.  Returns
    (tables, the files they come from, for messages; None when no file
    applies).  :class:`EngineSpecError` on a bad file."""
    path = engines_file_for(engines_file)
    tables = sample_engines()
    where: str | None = None
    if path is not None:
        tables.update(load_engines_file(path))
        where = path
    if config_file is not None:
        tables.update(load_engines_file(config_file))
        where = config_file if where is None else f"{where} or {config_file}"
    return tables, where


def engine_configs(specs: Sequence[str], engines_file: str | None = None,
                   config_file: str | None = None, each: str | None = None) -> list[EngineConfig]:
    """Command-line SPECs, names looked up by :func:`engine_tables`, the
    ``--each`` words applied to every one, each named by the one rule
    (:func:`arbiter.enginespec.display_named`); :class:`EngineSpecError` on
    a bad one."""
    tables, where = engine_tables(engines_file, config_file)
    return [display_named(parse_engine_spec(spec, tables, where, each)) for spec in specs]


# --------------------------------------------------------------------------
# The keys: of a file, of a tournament's definition, of a run
# --------------------------------------------------------------------------

#: keys of a tournament TOML file (``specs/tournament.md`` §Config file)
CONFIG_KEYS = (
    "name", "game", "engine", "format", "games", "rounds", "openings", "opening_plies", "order", "seed",
    "random_plies", "tc", "timemargin", "maxplies", "resign", "draw", "stall", "sprt", "concurrency",
    "restart", "db", "pgn", "log", "engines_file", "cluster", "workers", "seeds", "pairs",
    "tiebreak_pairs", "strict",
)

#: the settings that define a tournament (not allowed with ``--resume``)
DEFINING = ("game", "engine", "format", "games", "rounds", "openings", "opening_plies", "order", "seed",
            "random_plies", "tc", "timemargin", "maxplies", "resign", "draw", "stall", "sprt", "name",
            "seeds", "pairs", "tiebreak_pairs")

#: the settings of how a run goes, which ``--resume`` takes: (flag, attribute)
RUN_SETTINGS = (("concurrency", "concurrency"), ("restart", "restart"), ("pgn", "pgn"),
                ("log", "log_dir"), ("cluster", "cluster"), ("workers", "workers"),
                ("strict", "strict"))


# --------------------------------------------------------------------------
# The config file
# --------------------------------------------------------------------------

_KEY_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "name": (str, "a string"), "game": (str, "a string"), "format": (str, "a string"),
    "games": (int, "a whole number"), "rounds": (int, "a whole number"),
    "openings": (str, "a file path"), "opening_plies": (int, "a whole number"),
    "order": (str, "a string"), "seed": (int, "a whole number"),
    "random_plies": (int, "a whole number"), "tc": (str, "a time-control string"),
    "timemargin": (int, "a whole number of ms"), "maxplies": (int, "a whole number"),
    "resign": ((str, dict), "a string or a table"), "draw": ((str, dict), "a string or a table"),
    "stall": ((int, float), "a number of seconds"), "sprt": ((str, dict), "a string or a table"),
    "concurrency": (int, "a whole number"), "restart": (bool, "true or false"),
    "db": (str, "a file path"), "pgn": (str, "a file path"), "log": (str, "a directory path"),
    "engines_file": (str, "a file path"), "engine": (list, "a list of engine SPEC strings"),
    "cluster": (str, "a cluster address (tls://host:port or local:N)"),
    "workers": ((int, str), "a number of worker processes or \"auto\""),
    "strict": (bool, "true or false"),
    "seeds": (list, "a list of engine names"), "pairs": (int, "a whole number"),
    "tiebreak_pairs": (int, "a whole number"),
}

#: keys whose value is a path, relative to the config file
_PATH_KEYS = ("openings", "db", "pgn", "log", "engines_file")


def load_config_file(path: str, engines_file: str | None = None, each: str | None = None
                     ) -> dict[str, Any]:
    """The settings of a tournament TOML file, checked and with paths made
    relative to the current directory (``specs/tournament.md`` §Config file).

    Returns a dict of :data:`CONFIG_KEYS`, ``engine`` already parsed into
    :class:`EngineConfig` objects: the file's ``engine = [...]`` SPECs, whose
    names are looked up in the file's own ``[engines.NAME]`` tables, then in
    the engines file that applies (``engines_file``, i.e. ``--engines``, else
    the file's ``engines_file``: :func:`engine_tables`); without that list,
    every table of the file and of its ``engines_file`` plays.  ``each``:
    ``--each`` words for every engine (:func:`arbiter.enginespec.parse_engine_spec`).
    :class:`ConfigError` names the file and key at fault."""
    data = read_toml(path, ConfigError)
    base = os.path.dirname(path)
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key == "engines":
            continue  # [engines.NAME] tables: read below
        if key not in CONFIG_KEYS:
            raise ConfigError(f"{path}: unknown key {key!r} (known: {', '.join(CONFIG_KEYS)}, "
                              "and [engines.NAME] tables)")
        values[key] = _check_key(path, key, value)
    for key in _PATH_KEYS:
        if key in values and not os.path.isabs(values[key]):
            values[key] = os.path.join(base, values[key])
    if "engines" in data and not isinstance(data["engines"], dict):
        raise ConfigError(f"{path}: 'engines' must hold [engines.NAME] tables")
    specs = values.pop("engine", None)
    try:
        if specs is None:
            listed = _listed_engines(path, "engines" in data, values.get("engines_file"))
            if listed:
                values["engine"] = [with_each(engine, each) for engine in listed]
            return values
        tables, where = engine_tables(engines_file or values.get("engines_file"), path)
    except EngineSpecError as exc:
        raise ConfigError(str(exc)) from None
    try:
        values["engine"] = [parse_engine_spec(spec, tables, where, each) for spec in specs]
    except EngineSpecError as exc:
        raise ConfigError(f"{path}: key 'engine': {exc}") from None
    return values


def _listed_engines(path: str, has_tables: bool, engines_file: str | None) -> list[EngineConfig]:
    """Without ``engine = [...]``: the file's ``engines_file`` tables, then its own."""
    tables = load_engines_file(engines_file) if engines_file is not None else {}
    if has_tables:
        tables.update(load_engines_file(path))
    return list(tables.values())


def _check_key(path: str, key: str, value: Any) -> Any:
    kind, what = _KEY_TYPES[key]
    if isinstance(value, bool) and kind is not bool:
        ok = False
    else:
        ok = isinstance(value, kind)
    if key in ("engine", "seeds") and ok:
        ok = all(isinstance(v, str) for v in value)
    if not ok:
        raise ConfigError(f"{path}: key {key!r} must be {what}, not {value!r}")
    texts = value if key in ("engine", "seeds") else [value] if isinstance(value, str) else []
    if any("\0" in text for text in texts):
        raise ConfigError(f"{path}: key {key!r} holds a NUL character (no path or name can)")
    if key == "stall":
        stall_ms(f"{path}: key 'stall'", value)
    elif key in NUMBER_RANGES:
        check_number(f"{path}: key {key!r}", key, value)
    if key in ("sprt", "resign", "draw") and isinstance(value, dict):
        value = " ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in value.items())
    return value


def read_openings(game: str, path: str, plies: int | None = None) -> list[Opening]:
    """An openings file, one opening a line or a PGN file of games
    (:func:`~arbiter.schedule.is_pgn_openings`), each opening checked by the
    referee (errors name file:line) and cut to ``plies`` plies when given.
    At most :data:`~arbiter.schedule.MAX_OPENINGS_BYTES` are read: a larger
    file (``/dev/zero``) is refused, not read into memory."""
    text = read_bounded_text(path, MAX_OPENINGS_BYTES, ConfigError, cannot_read="cannot read openings",
                             too_big=f"an openings file of more than {MAX_OPENINGS_BYTES} bytes (the "
                                     "limit); is it the right file?")
    read = pgn_openings if is_pgn_openings(path, text) else parse_openings
    try:
        return read(get_game(game), text, path, plies)
    except (ScheduleError, GameError) as exc:
        raise ConfigError(str(exc)) from None


# --------------------------------------------------------------------------
# File + flags
# --------------------------------------------------------------------------


def check_flags(flags: Mapping[str, Any]) -> None:
    """The numbers given as flags, in the flags' own words (``--games``)."""
    for key in NUMBER_RANGES:
        check_number(f"--{key.replace('_', '-')}", key, flags.get(key))
    if flags.get("stall") is not None:
        stall_ms("--stall", flags["stall"])
    if flags.get("workers") is not None:
        _workers(flags["workers"])


def merge_settings(file_values: Mapping[str, Any], flags: Mapping[str, Any]) -> dict[str, Any]:
    """Flags given on the command line (not None) override the file's values."""
    merged = dict(file_values)
    merged.update({k: v for k, v in flags.items() if v is not None})
    return merged


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def _canonical(text: str | None, key: str) -> str | None:
    """A ``resign``/``draw`` setting in its canonical spelling (so that the
    same rule in another order is the same tournament); ConfigError if bad."""
    if text is None:
        return None
    try:
        rules = Adjudication.parse(**{key: text})
    except AdjudicationError as exc:
        raise ConfigError(str(exc)) from None
    return str(rules.resign if key == "resign" else rules.draw)


def _seed_names(value: str | Sequence[str] | None) -> list[str]:
    """``--seeds a,b,c`` (names separated by commas) or a file's list."""
    if value is None:
        return []
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [name.strip() for name in names]
    if any(not name for name in names):
        raise ConfigError(f"--seeds {','.join(names)!r}: an empty name (names are separated by commas)")
    return names


def config_from_settings(settings: Mapping[str, Any], engines: Iterable[EngineConfig]
                         ) -> TournamentConfig:
    """A checked :class:`TournamentConfig` from merged file+flag settings."""
    engines = list(engines)
    game = settings.get("game")
    if not game:
        raise ConfigError("no game: give --game GAME (troll, atoll, morris, talisman) "
                          "or game = \"...\" in the config file")
    if len(engines) < 2:
        raise ConfigError(f"a tournament needs at least two engines (got {len(engines)}): "
                          "give --engine SPEC for each, or engine = [...] in the config file")
    plies = settings.get("opening_plies")
    if plies is not None and not settings.get("openings"):
        raise ConfigError("--opening-plies (opening_plies) cuts the openings of a file: give "
                          "--openings FILE too")
    openings = read_openings(game, settings["openings"], plies) if settings.get("openings") else []
    stall = settings.get("stall")
    format = settings.get("format") or "round-robin"
    config = TournamentConfig(
        game=str(game).strip().lower(), engines=engines, name=settings.get("name") or "",
        format=format, games=_or(settings.get("games"), 2),
        rounds=_or(settings.get("rounds"), default_rounds(format, len(engines))),
        seeds=_seed_names(settings.get("seeds")),
        pairs=_or(settings.get("pairs"), DEFAULT_PAIRS),
        tiebreak_pairs=_or(settings.get("tiebreak_pairs"), DEFAULT_TIEBREAK_PAIRS),
        openings=openings, openings_file=settings.get("openings"), opening_plies=plies,
        order=settings.get("order") or "sequential",
        seed=settings.get("seed") or 0,
        random_plies=settings.get("random_plies") or 0,
        tc=settings.get("tc") or DEFAULT_TC,
        timemargin_ms=settings.get("timemargin") or 0,
        maxplies=settings.get("maxplies"),
        stall_ms=DEFAULT_STALL_MS if stall is None else stall_ms("stall", float(stall)),
        sprt=settings.get("sprt"),
        resign=_canonical(settings.get("resign"), "resign"),
        draw=_canonical(settings.get("draw"), "draw"),
        concurrency=settings.get("concurrency") or 1,
        restart=bool(settings.get("restart")),
        pgn=settings.get("pgn"), log_dir=settings.get("log"), cluster=settings.get("cluster"),
        workers=_workers(settings.get("workers")), strict=bool(settings.get("strict")),
    )
    repeated = sorted(name for name, count in Counter(config.engine_names).items() if count > 1)
    if repeated:
        raise ConfigError(f"two engines are called {repeated[0]!r}: give each a distinct name=")
    config.validate()
    return config


def _workers(value: Any) -> int | str:
    """``--workers`` / ``workers =``: a positive number or ``auto`` (the default)."""
    from arbiter.run.workers import WorkersError, parse_workers

    try:
        return parse_workers(value)
    except WorkersError as exc:
        raise ConfigError(str(exc)) from None


def from_file_and_flags(config_file: str | None, engine_specs: Sequence[str] | None,
                        engines_file: str | None, flags: Mapping[str, Any]
                        ) -> tuple[TournamentConfig, str | None]:
    """``arbiter tournament [CONFIG.toml]`` / ``arbiter match``: the file's
    values overridden by ``flags`` (those not None), the engines from
    ``engine_specs`` if given, else from the file.  Returns the checked
    configuration and the database the file names (``db = ...``), if any.

    :class:`ConfigError` names the config file (a message about another file,
    such as its openings, is prefixed with it); a bad ``--engine`` SPEC's
    message is the SPEC's own."""
    check_flags(flags)
    each = flags.get("each")  # --each: settings for every engine
    try:
        file_values = load_config_file(config_file, engines_file, each) if config_file else {}
    except ConfigError as exc:
        raise _naming(config_file, exc) from None
    if engine_specs:
        try:
            engines = engine_configs(engine_specs, engines_file or file_values.get("engines_file"),
                                     config_file, each)
        except EngineSpecError as exc:
            raise ConfigError(str(exc)) from None
    else:
        engines = file_values.get("engine") or []
    try:
        config = config_from_settings(merge_settings(file_values, flags), engines)
    except ConfigError as exc:
        raise _naming(config_file, exc) from None
    return config, file_values.get("db")


def _naming(config_file: str | None, exc: ConfigError) -> ConfigError:
    """``exc``, its message prefixed with ``config_file`` unless it names it."""
    if not config_file or config_file in str(exc):
        return exc
    return ConfigError(f"{config_file}: {exc}")


def check_resume_flags(tournament_id: int, flags: Mapping[str, Any]) -> None:
    """``--resume ID`` takes this run's settings only: a flag that defines a
    tournament is refused (``specs/tournament.md`` §Resume)."""
    check_flags(flags)
    given = [key for key in DEFINING if flags.get(key) is not None]
    if given:
        raise ConfigError(f"--resume {tournament_id} plays the stored configuration of tournament "
                          f"{tournament_id}; drop --{given[0].replace('_', '-')}")


def resumed(tournament_id: int, stored: Mapping[str, Any], flags: Mapping[str, Any]
            ) -> TournamentConfig:
    """``--resume ID``: the stored configuration of the tournament, with this
    run's settings (concurrency, restart, pgn, log) where given
    (:func:`check_resume_flags` first)."""
    check_resume_flags(tournament_id, flags)
    config = TournamentConfig.from_dict(stored)
    for key, attribute in RUN_SETTINGS:
        if flags.get(key) is not None:
            setattr(config, attribute, _workers(flags[key]) if key == "workers" else flags[key])
    return config
