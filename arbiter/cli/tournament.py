"""Run commands: ``tournament``, ``match``, ``demo`` (specs/tournament.md)."""

from __future__ import annotations

import math
import os
import sqlite3
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import typer
from rich.console import Console

from arbiter.cluster.address import ClusterAddressError, ClusterTarget, parse_target
from arbiter.config import (
    ConfigError,
    TournamentConfig,
    check_flags,
    check_resume_flags,
    config_from_settings,
    from_file_and_flags,
    resumed,
)
from arbiter.engine import EngineStartError
from arbiter.enginespec import DEFAULT_WAIT_ENGINES, REMOTE_PREFIX, parse_engine_spec
from arbiter.progress import LineDisplay, RichDisplay, silence_stdout
from arbiter.run.coordinator import Coordinator
from arbiter.run.gameloop import EngineSource
from arbiter.run.observer import RunResult
from arbiter.run.player import Player
from arbiter.run.workers import choose_workers
from arbiter.schedule import FORMATS
from arbiter.store import DEFAULT_DB, RunStatus, Store, StoreError, TournamentBusyError
from arbiter.tournament import (
    check_engines,
    delete_tournament,
    open_tournament,
    tournament_standings,
)

from .app import (
    EACH_HELP,
    EXIT_ABORTED,
    EXIT_BUSY,
    EXIT_INTERRUPTED,
    EXIT_STRICT,
    Interrupted,
    app,
    checked_log_dir,
    checked_record_file,
    exit_interrupted,
    fail,
    remove_if_empty,
    run_interruptible,
)
from .server import Listening
from .standings import open_store, show_standings

_WORKERS_HELP = ("worker processes that play the games: N, or auto (default: one process up to "
                 "8 games at once, then one per 8, at most one per core); 1 plays in this process")

#: a run without remote engines
NO_REMOTE = Listening()
#: exit statuses of a run (specs/tournament.md §Exit status)


def _display(plain: bool, as_json: bool):
    """Live display: rich on a terminal, lines otherwise; on stderr with --json
    (stdout then holds only the JSON)."""
    if as_json:
        return LineDisplay(sys.stderr)
    if plain or not sys.stdout.isatty():
        return LineDisplay()
    return RichDisplay(Console())


def _run(store: Store, config: TournamentConfig, tournament_id: int, plain: bool,
         as_json: bool, remote: Listening = NO_REMOTE,
         cluster: ClusterTarget | None = None, *, created: bool = False) -> RunResult:
    """Play the tournament (its games on ``cluster`` if given, else in
    ``config.workers`` worker processes or in this one); the first signal
    stops it cleanly (:meth:`Coordinator.stop`).  ``remote``: ``--listen``,
    ``--wait-engines`` and TLS for ``remote:NAME`` engines, whose connections
    live in this process (so their games are played here); when they do not
    come, a tournament this run ``created`` is removed again."""
    from arbiter.server.remote_run import RemoteWaitError

    from .server import remote_runner

    observer = _display(plain, as_json)
    waiting = _Waiting()

    async def play_with(source: EngineSource) -> RunResult:
        from arbiter.run.inprocess import InProcessPlayer

        waiting.run = Coordinator(config, store, tournament_id, observer=observer,
                                  player=InProcessPlayer(config, source=source))
        return await waiting.run.run()

    try:
        remote_main = remote_runner(play_with, config, str(store.path), remote)
        if remote_main is None:
            run = Coordinator(config, store, tournament_id, observer=observer,
                              player=_player(config, cluster))
            return run_interruptible(run.run, stop=run.stop, drain=run.drain)
        waiting.main = remote_main
        result = run_interruptible(waiting.wait, stop=waiting.stop, drain=waiting.drain)
        if result is None:  # a signal while the run waited for its remote engines
            if created:
                delete_tournament(store, tournament_id)
            print(f"arbiter: interrupted ({waiting.reason}) while waiting for remote engines; "
                  "nothing was played", file=sys.stderr)
            raise typer.Exit(EXIT_INTERRUPTED)
        return result
    except RemoteWaitError as exc:
        if created:  # specs/tournament.md §Remote engines: no tournament left half-made
            delete_tournament(store, tournament_id)
        fail(f"{exc}; nothing was played", EXIT_ABORTED)
    except TournamentBusyError as exc:
        fail(f"{exc}; nothing was started", EXIT_BUSY)
    except (sqlite3.Error, StoreError) as exc:  # before the first game (a failure during the run aborts it)
        fail(f"{store.path}: the database failed ({exc}); nothing was played", EXIT_ABORTED)
    except Interrupted:  # a second signal during the clean stop
        print("arbiter: interrupted again; stopped", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _player(config: TournamentConfig, cluster: ClusterTarget | None) -> Player | None:
    """Where the games are played: on ``cluster``, in worker processes
    (``config.workers``, ``specs/tournament.md`` §Worker processes), or in
    this process (None: the coordinator's own)."""
    if cluster is not None:
        from arbiter.cluster.coordinator import ClusterPlayer  # Dask: only when asked for

        return ClusterPlayer(cluster, config)
    workers = choose_workers(config.workers, config.concurrency)
    if workers == 1:
        return None
    from arbiter.run.processes import ProcessPlayer

    return ProcessPlayer(config, workers)


class _Waiting:
    """A run with remote engines under the interrupt policy: the first signal
    ends the wait for the engines while the tournament has not started (exit
    130, nothing played: specs/tournament.md §Remote engines), and stops the
    tournament cleanly once it has."""

    def __init__(self) -> None:
        self.main: Callable[[], Awaitable[RunResult]] | None = None
        self.run: Coordinator | None = None  # once the engines are there
        self.reason: str | None = None  # the signal that ended the wait
        self._scope: Any = None  # the wait's trio.CancelScope, once main runs

    async def wait(self) -> RunResult | None:
        import trio

        assert self.main is not None
        with trio.CancelScope() as self._scope:
            if self.reason is None:  # else a signal came before the wait began
                return await self.main()
        return None

    def stop(self, reason: str) -> None:
        if self.run is not None and self.run.started_at:
            self.run.stop(reason)
            return
        self.reason = reason
        if self._scope is not None:
            self._scope.cancel()

    def drain(self, reason: str) -> None:
        """``arbiter stop``: the run's games in progress finish; while the
        engines are still awaited there are none, so the wait ends."""
        if self.run is not None and self.run.started_at:
            self.run.drain(reason)
        else:
            self.stop(reason)


def _summary(store: Store, tournament_id: int, as_json: bool) -> None:
    """The standings at the end of a run, on stdout (if anybody still reads it)."""
    try:
        tournament = store.tournament(tournament_id)
        assert tournament is not None
        tournament["running_now"] = store.run_active(tournament_id)
        standings = tournament_standings(store, tournament)
    except sqlite3.Error as exc:
        print(f"arbiter: error: {store.path}: cannot read the standings ({exc}); "
              "`arbiter standings` shows them once the database answers", file=sys.stderr)
        return
    try:
        show_standings(store, tournament, standings, as_json)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


def _strict_summary(result: RunResult) -> None:
    """``--strict``: the warnings' count on stderr; exit 4 when there were
    any (specs/tournament.md §Exit status)."""
    if not result.strict_warnings:
        print("arbiter: strict: no warnings", file=sys.stderr)
        return
    print(f"arbiter: strict: {result.strict_warnings} warning(s) in {result.strict_games} game(s) "
          "(stored as `strict` events with each game)", file=sys.stderr)
    raise typer.Exit(EXIT_STRICT)


def _exit_for(result: RunResult) -> None:
    if result.status == RunStatus.ABORTED:
        print(f"arbiter: error: tournament {result.tournament_id} aborted: {result.note}",
              file=sys.stderr)
        raise typer.Exit(EXIT_ABORTED)
    if result.status == RunStatus.STOPPED:
        print(f"arbiter: tournament {result.tournament_id} stopped after {result.done}/{result.total} "
              f"games (arbiter stop); run the same command (or --resume {result.tournament_id}) to "
              "continue", file=sys.stderr)
        return
    if result.status == RunStatus.INTERRUPTED:
        print(f"arbiter: tournament {result.tournament_id} interrupted after "
              f"{result.done}/{result.total} games; run the same command (or --resume "
              f"{result.tournament_id}) to continue", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED)


def run_config(config: TournamentConfig, db: str, *, new: bool, plain: bool, as_json: bool,
               resume_id: int | None = None,
               remote: Listening = NO_REMOTE,
               cluster: ClusterTarget | None = None) -> None:
    """Find or create the tournament, play what is left, print the standings.

    Before a tournament is created (or resumed) each engine is started once
    (:func:`_check_engines`), so a typo in a command or an option leaves
    no tournament behind; a tournament another run holds is refused before
    anything is said about resuming it.  ``remote``: ``--listen`` and
    ``--wait-engines`` for ``remote:NAME`` engines (they are waited for in the run);
    ``cluster``: play on a Dask cluster (its workers start their own engines:
    none is started here)."""
    log_existed = config.log_dir is not None and os.path.isdir(config.log_dir)
    checked_log_dir(config.log_dir)
    checked_record_file(config.pgn)
    _check_remote(config, db, remote)
    with open_store(db) as store:
        tournament_id, how = _find(store, config, new=new, resume_id=resume_id)
        if how == "finished" and tournament_id is not None:
            print(f"arbiter: tournament {tournament_id} ({config.name}) is already finished in "
                  f"{db}; nothing to play (add --new to play it again)", file=sys.stderr)
            _summary(store, tournament_id, as_json)
            return
        if tournament_id is not None:
            _not_busy(store, tournament_id)
        retried = [] if cluster is not None else _check_engines(config, log_existed,
                                                                created=tournament_id is None)
        created = tournament_id is None
        if tournament_id is None:
            tournament_id, how = open_tournament(store, config, new=True)
        for exc in retried:
            store.add_event(tournament_id, "handshake-failed",
                            f"before the first game: {exc}", engine=exc.engine)
        if how == "resume":
            print(f"arbiter: resuming tournament {tournament_id} ({config.name}) in {db}",
                  file=sys.stderr)
        result = _run(store, config, tournament_id, plain, as_json, remote, cluster,
                      created=created)
        if result.status in (RunStatus.ABORTED, RunStatus.INTERRUPTED, RunStatus.STOPPED):
            _summary(store, tournament_id, as_json)
            _exit_for(result)
            return
        _summary(store, tournament_id, as_json)
        if config.strict:
            _strict_summary(result)


#: the longest ``--wait-engines`` (seconds, a day): a run waiting longer for
#: its engines has been forgotten; a larger number is a typo
MAX_WAIT_ENGINES = 86400.0


def _check_remote(config: TournamentConfig, db: str, remote: Listening) -> None:
    """``--listen``, ``--wait-engines`` and TLS checked before anything is
    made (exit 2): :func:`~arbiter.cli.server.remote_runner` checks the
    options (and, given no tournament, does nothing else)."""
    wait = remote.wait
    if wait is not None and not (math.isfinite(wait) and 0 < wait <= MAX_WAIT_ENGINES):
        fail(f"--wait-engines must be a number of seconds more than 0 and at most "
             f"{MAX_WAIT_ENGINES:g}, not {wait}")
    from .server import remote_runner

    remote_runner(None, config, db, remote)


def _not_busy(store: Store, tournament_id: int) -> None:
    """Exit 3 at once when another run holds the tournament (the claim is
    taken and given back: the run takes it again for good)."""
    try:
        with store.claim_run(tournament_id):
            pass
    except TournamentBusyError as exc:
        fail(f"{exc}; nothing was started", EXIT_BUSY)
    except StoreError as exc:
        fail(str(exc))


def _find(store: Store, config: TournamentConfig, *, new: bool, resume_id: int | None
          ) -> tuple[int | None, str]:
    """The stored tournament this run plays and how (``resume`` or
    ``finished``), or (None, ``new``) when it is yet to be created."""
    if resume_id is not None:
        row = store.tournament(resume_id)
        assert row is not None
        return resume_id, "finished" if row["status"] == RunStatus.FINISHED else "resume"
    existing = None if new else store.find_tournament(config.identity())
    if existing is None:
        return None, "new"
    return existing["id"], "finished" if existing["status"] == RunStatus.FINISHED else "resume"


def _check_engines(config: TournamentConfig, log_existed: bool, *, created: bool
                   ) -> list[EngineStartError]:
    """Each engine started once (:func:`arbiter.tournament.check_engines`):
    the failures a second try overcame (said on stdout, as during a run),
    or exit 1 naming the engine that failed twice."""
    retried: list[EngineStartError] = []

    def on_retry(exc: EngineStartError) -> None:
        retried.append(exc)
        typer.echo(f"note: handshake-failure: {exc}; retrying with a fresh process")

    try:
        run_interruptible(lambda: check_engines(config, on_retry=on_retry))
    except EngineStartError as exc:
        remove_if_empty(config.log_dir, log_existed)
        what = "no tournament was created" if created else "nothing was played"
        fail(f"handshake-failure: {exc}; {what}", EXIT_ABORTED)
    except Interrupted as exc:
        exit_interrupted(exc, "engines stopped; nothing was played")
    return retried


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
