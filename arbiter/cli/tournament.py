"""Run commands: ``tournament``, ``match``, ``demo`` (specs/tournament.md).

Each command turns its options (and a config file, or ``--resume ID``) into a
checked :class:`~arbiter.config.TournamentConfig` (exit 2 when it cannot be),
then hands it to :func:`arbiter.cli.running.run_config`, which plays it.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from arbiter.cluster.address import ClusterAddressError, parse_target
from arbiter.config import (
    ConfigError,
    TournamentConfig,
    check_flags,
    check_resume_flags,
    config_from_settings,
    from_file_and_flags,
    resumed,
)
from arbiter.enginespec import DEFAULT_WAIT_ENGINES, REMOTE_PREFIX, parse_engine_spec
from arbiter.schedule import FORMATS
from arbiter.store import DEFAULT_DB, RunStatus

from .app import EACH_HELP, app, fail
from .running import run_config
from .server import Listening
from .standings import open_store

_WORKERS_HELP = ("worker processes that play the games: N, or auto (default: one process up to "
                 "8 games at once, then one per 8, at most one per core); 1 plays in this process")


def _build(config_file: str | None, engine_specs: list[str] | None,
           engines_file: str | None, flags: dict[str, Any]) -> tuple[TournamentConfig, str | None]:
    """File values, overridden by flags, into a checked configuration and
    the file's database (exit 2 if bad: :func:`arbiter.config.from_file_and_flags`)."""
    try:
        return from_file_and_flags(config_file, engine_specs, engines_file, flags)
    except ConfigError as exc:
        fail(str(exc))


def _resume_config(db: str, resume: int, flags: dict[str, Any]) -> TournamentConfig:
    """``--resume ID``: the stored configuration with this run's settings (exit 2 if bad)."""
    try:
        check_resume_flags(resume, flags)  # before the database is opened
    except ConfigError as exc:
        fail(str(exc))
    with open_store(db, readonly=True) as store:
        row = store.tournament(resume)
    if row is None:
        fail(f"{db}: no tournament {resume}")
    if row.get("format") not in FORMATS or "engines" not in row["config"]:
        fail(f"{db}: tournament {resume} ({row['name']}) was not made by `arbiter tournament` "
             "and cannot be resumed")
    return resumed(resume, row["config"], flags)


# --------------------------------------------------------------------------
# Options shared by `tournament` and `match`
# --------------------------------------------------------------------------

_RESIGN_HELP = ("'movecount=N score=S [twosided=true]': a side whose score is -S or worse for N "
                "moves loses (off by default)")
_DRAW_HELP = ("'movenumber=M movecount=N score=S': a draw when both scores stay within S of 0 "
              "for N moves each, from move M (off by default)")
_OPENING_PLIES_HELP = "play only the first N plies of each opening of --openings (default: all)"
_GAMES_HELP = "games per pairing per round (default 2; colours alternate, game pairs share an opening)"


@app.command()
def tournament(
    config_file: str | None = typer.Argument(None, metavar="CONFIG.toml",
                                                help="a tournament file; flags override it"),
    engine: list[str] | None = typer.Option(
        None, "--engine", "-e", help="engine SPEC, one per engine: cmd=... [name=... option.N=V "
        "tc=...] or a NAME from the engines file"),
    engines_file: str | None = typer.Option(None, "--engines", help="TOML file of [engines.NAME] tables"),
    each: str | None = typer.Option(None, "--each", metavar="SETTINGS", help=EACH_HELP),
    game: str | None = typer.Option(None, "--game", "-g", help="troll, atoll, morris or talisman"),
    format: str | None = typer.Option(None, "--format", help="round-robin (default), gauntlet, swiss or knockout"),
    games: int | None = typer.Option(None, "--games", help=_GAMES_HELP),
    rounds: int | None = typer.Option(None, "--rounds", help="rounds (default 1; swiss: log2 of the engines, rounded up)"),
    seeds: str | None = typer.Option(None, "--seeds", help="swiss/knockout: the engines' seed order, names separated by commas (default: the order given)"),
    pairs: int | None = typer.Option(None, "--pairs", help="knockout: game pairs per match (default 1)"),
    tiebreak_pairs: int | None = typer.Option(None, "--tiebreak-pairs", help="knockout: extra game pairs a level match gets, one at a time, before the better seed goes on (default 2)"),
    openings: str | None = typer.Option(None, "--openings", help="openings file: a position string or moves per line, or a PGN file of games"),
    opening_plies: int | None = typer.Option(None, "--opening-plies", help=_OPENING_PLIES_HELP),
    order: str | None = typer.Option(None, "--order", help="openings order: sequential (default) or random"),
    seed: int | None = typer.Option(None, "--seed", help="seed for --order random and --random-plies (default 0)"),
    random_plies: int | None = typer.Option(None, "--random-plies", help="open each game pair with N random legal plies"),
    concurrency: int | None = typer.Option(None, "--concurrency", "-c", help="games at once (default 1)"),
    workers: str | None = typer.Option(None, "--workers", help=_WORKERS_HELP),
    strict: bool | None = typer.Option(None, "--strict", help="warn of engines' impossible reports (an illegal pv, a mate the result contradicts, a search longer than measured); exit 4 if any"),
    restart: bool | None = typer.Option(None, "--restart/--reuse", help="start fresh engine processes for every game (default: reuse with uginewgame)"),
    tc: str | None = typer.Option(None, "--tc", help="time control: 40/60+0.5, 60+0.5, st=2, depth=N, nodes=N, inf"),
    timemargin: int | None = typer.Option(None, "--timemargin", help="ms an engine may overstep its time"),
    maxplies: int | None = typer.Option(None, "--maxplies", help="adjudicate after N plies"),
    resign: str | None = typer.Option(None, "--resign", help=_RESIGN_HELP),
    draw: str | None = typer.Option(None, "--draw", help=_DRAW_HELP),
    stall: float | None = typer.Option(None, "--stall", help="seconds a search without a clock may last"),
    sprt: str | None = typer.Option(None, "--sprt", help="'elo0=0 elo1=5 alpha=0.05 beta=0.05 [model=normalized|logistic|bayesian]' (two engines)"),
    name: str | None = typer.Option(None, "--name", help="the tournament's name"),
    db: str | None = typer.Option(None, "--db", help=f"results database (default ./{DEFAULT_DB})"),
    resume: int | None = typer.Option(None, "--resume", help="continue tournament ID of the database"),
    new: bool = typer.Option(False, "--new", help="start a new tournament even if one with this configuration exists"),
    pgn: str | None = typer.Option(None, "--pgn", help="append each finished game to this record file"),
    log: str | None = typer.Option(None, "--log", help="write each engine's I/O log into DIR"),
    plain: bool = typer.Option(False, "--plain", help="one line per game even on a terminal"),
    as_json: bool = typer.Option(False, "--json", help="print the final standings as JSON"),
    listen: str | None = typer.Option(None, "--listen", help="HOST:PORT where -e remote:NAME engines connect"),
    wait_engines: float | None = typer.Option(None, "--wait-engines", help=f"seconds to wait for the remote engines (default {DEFAULT_WAIT_ENGINES:g})"),
    cluster: str | None = typer.Option(None, "--cluster", help="play the games on a Dask cluster: "
                                       "tls://host:port, or local:N worker processes here"),
    tls_ca: str | None = typer.Option(None, "--tls-ca", help="--cluster tls://: the CA certificate (PEM)"),
    tls_cert: str | None = typer.Option(None, "--tls-cert", help="--cluster tls:// or --listen: this side's certificate (PEM)"),
    tls_key: str | None = typer.Option(None, "--tls-key", help="--cluster tls:// or --listen: this side's key (PEM)"),
    insecure: bool = typer.Option(False, "--insecure", help="allow --cluster tcp:// off this machine, or --listen off loopback without TLS"),
) -> None:
    """Run a tournament (round-robin or gauntlet), resumable, into the database."""
    flags = dict(game=game, format=format, games=games, rounds=rounds, openings=openings,
                 seeds=_names(seeds), pairs=pairs, tiebreak_pairs=tiebreak_pairs,
                 opening_plies=opening_plies, order=order, seed=seed, random_plies=random_plies,
                 concurrency=concurrency, workers=workers, strict=strict,
                 restart=restart, tc=tc, timemargin=timemargin, maxplies=maxplies, stall=stall,
                 resign=resign, draw=draw,
                 sprt=sprt, name=name, pgn=pgn, log=log, cluster=cluster, engine=engine or None, each=each)
    _check_numbers(flags)
    file_db = None
    if resume is not None:
        if config_file:
            fail("give either a config file or --resume ID, not both")
        if flags.pop("each") is not None:
            fail(f"--resume {resume} plays the stored engines of tournament {resume}; drop --each")
        config = _resume_config(db or DEFAULT_DB, resume, flags)
    else:
        flags.pop("engine")
        config, file_db = _build(config_file, engine, engines_file, flags)
    target = None
    if config.cluster is not None:
        try:
            target = parse_target(config.cluster, tls_ca=tls_ca, tls_cert=tls_cert,
                                  tls_key=tls_key, insecure=insecure)
        except ClusterAddressError as exc:
            fail(str(exc))
        if any(engine.cmd.startswith(REMOTE_PREFIX) for engine in config.engines):
            fail("--cluster: remote:NAME engines connect to this machine, not to the cluster's workers")
    run_config(config, db or file_db or DEFAULT_DB, new=new, plain=plain, as_json=as_json,
               resume_id=resume, cluster=target,
               remote=Listening(listen, wait_engines, tls_cert, tls_key, insecure))


def _names(text: str | None) -> list[str] | None:
    """``--seeds a,b,c``: the names, in order."""
    return None if text is None else [name.strip() for name in text.split(",") if name.strip()]


def _check_numbers(flags: dict[str, Any]) -> None:
    """The flags' numbers, first of all (exit 2: :func:`arbiter.config.check_flags`)."""
    try:
        check_flags(flags)
    except ConfigError as exc:
        fail(str(exc))


@app.command()
def match(
    game: str = typer.Argument(..., help="troll, atoll, morris or talisman"),
    first: str = typer.Argument(..., metavar="A", help="engine SPEC (or NAME from the engines file)"),
    second: str = typer.Argument(..., metavar="B", help="engine SPEC (or NAME from the engines file)"),
    engines_file: str | None = typer.Option(None, "--engines", help="TOML file of [engines.NAME] tables"),
    each: str | None = typer.Option(None, "--each", metavar="SETTINGS", help=EACH_HELP),
    games: int | None = typer.Option(None, "--games", help="games per round (default 2, or 10000 with --sprt)"),
    rounds: int | None = typer.Option(None, "--rounds", help="rounds (default 1)"),
    openings: str | None = typer.Option(None, "--openings", help="openings file (one a line, or PGN games)"),
    opening_plies: int | None = typer.Option(None, "--opening-plies", help=_OPENING_PLIES_HELP),
    order: str | None = typer.Option(None, "--order", help="sequential (default) or random"),
    seed: int | None = typer.Option(None, "--seed", help="seed (default 0)"),
    random_plies: int | None = typer.Option(None, "--random-plies", help="N random plies per game pair"),
    concurrency: int | None = typer.Option(None, "--concurrency", "-c", help="games at once (default 1)"),
    workers: str | None = typer.Option(None, "--workers", help=_WORKERS_HELP),
    strict: bool | None = typer.Option(None, "--strict", help="warn of engines' impossible reports (an illegal pv, a mate the result contradicts, a search longer than measured); exit 4 if any"),
    restart: bool | None = typer.Option(None, "--restart/--reuse", help="fresh processes for every game"),
    tc: str | None = typer.Option(None, "--tc", help="time control"),
    timemargin: int | None = typer.Option(None, "--timemargin", help="ms"),
    maxplies: int | None = typer.Option(None, "--maxplies", help="adjudicate after N plies"),
    resign: str | None = typer.Option(None, "--resign", help=_RESIGN_HELP),
    draw: str | None = typer.Option(None, "--draw", help=_DRAW_HELP),
    stall: float | None = typer.Option(None, "--stall", help="seconds"),
    sprt: str | None = typer.Option(None, "--sprt", help="'elo0=0 elo1=5 alpha=0.05 beta=0.05 [model=normalized|logistic|bayesian]'"),
    name: str | None = typer.Option(None, "--name", help="the match's name"),
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database"),
    new: bool = typer.Option(False, "--new", help="a new match even if this one exists"),
    pgn: str | None = typer.Option(None, "--pgn", help="append each game to this record file"),
    log: str | None = typer.Option(None, "--log", help="engine I/O logs into DIR"),
    plain: bool = typer.Option(False, "--plain", help="one line per game"),
    as_json: bool = typer.Option(False, "--json", help="final standings as JSON"),
    listen: str | None = typer.Option(None, "--listen", help="HOST:PORT where -e remote:NAME engines connect"),
    wait_engines: float | None = typer.Option(None, "--wait-engines", help=f"seconds to wait for the remote engines (default {DEFAULT_WAIT_ENGINES:g})"),
    tls_cert: str | None = typer.Option(None, "--tls-cert", help="--listen: TLS, this side's certificate (PEM)"),
    tls_key: str | None = typer.Option(None, "--tls-key", help="--listen: TLS, its key (PEM)"),
    insecure: bool = typer.Option(False, "--insecure", help="--listen off loopback without TLS (tokens in clear)"),
) -> None:
    """A match between two engines (a two-engine tournament; SPRT optional)."""
    if games is None and sprt is not None:
        games = 10000
    flags = dict(game=game, format="round-robin", games=games, rounds=rounds, openings=openings,
                 opening_plies=opening_plies, order=order, seed=seed, random_plies=random_plies,
                 concurrency=concurrency, workers=workers, strict=strict,
                 restart=restart, tc=tc, timemargin=timemargin, maxplies=maxplies, stall=stall,
                 resign=resign, draw=draw,
                 sprt=sprt, pgn=pgn, log=log, each=each,
                 name=name or f"{game.strip().lower()} match")
    _check_numbers(flags)
    config, _ = _build(None, [first, second], engines_file, flags)
    run_config(config, db, new=new, plain=plain, as_json=as_json,
               remote=Listening(listen, wait_engines, tls_cert, tls_key, insecure))


# --------------------------------------------------------------------------
# The demo: the README's main job
# --------------------------------------------------------------------------

#: the demo (specs/tournament.md §Demo): a round-robin of the three sample
#: engines on Troll, about a minute on two cores
DEMO_GAME = "troll"
DEMO_ENGINES = (
    "cmd='{py} -m sample_engines.mcts' name=mcts",
    "cmd='{py} -m sample_engines.greedy' name=greedy",
    "cmd='{py} -m sample_engines.random' name=random",
)
DEMO_SETTINGS = dict(games=6, rounds=1, random_plies=2, tc="20+0.2", concurrency=2,
                     name="demo")


@app.command()
def demo(
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database"),
    plain: bool = typer.Option(False, "--plain", help="one line per game"),
) -> None:
    """A short round-robin of the sample engines into ./arbiter.db, then the standings.

    Running it again resumes an unfinished demo, or plays a new one."""
    specs = [spec.format(py=sys.executable) for spec in DEMO_ENGINES]
    engines = [parse_engine_spec(spec) for spec in specs]
    try:
        config = config_from_settings({"game": DEMO_GAME, **DEMO_SETTINGS}, engines)
    except ConfigError as exc:  # pragma: no cover - a bug in the constants above
        fail(str(exc))
    with open_store(db) as store:
        existing = store.find_tournament(config.identity())
        new = existing is None or existing["status"] == RunStatus.FINISHED
    typer.echo(f"demo: a round-robin of the sample engines (mcts, greedy, random) on {DEMO_GAME}, "
               f"{len(config.schedule())} games, tc {config.tc}, into {db}")
    run_config(config, db, new=new, plain=plain, as_json=False)
