"""``arbiter play``: one game between two engines, shown live."""

from __future__ import annotations

import json
import os

import typer

from arbiter import records
from arbiter.clock import DEFAULT_STALL_MS, TimeControl, TimeControlError
from arbiter.config import ConfigError, check_number, engine_configs, stall_ms
from arbiter.engine import EngineConfig, EngineStartError
from arbiter.enginespec import DEFAULT_ENGINES_FILE, EngineSpecError, remote_name_of
from arbiter.games import GameError, Position, get_game, split_moves
from arbiter.match import DEFAULT_TC, play_engines
from arbiter.record import GameRecord, Ply

from .app import (
    EACH_HELP,
    Interrupted,
    app,
    checked_log_dir,
    checked_record_file,
    exit_interrupted,
    fail,
    remove_if_empty,
    run_interruptible,
)

#: exit status when the game could not be played (an engine failed to start)
EXIT_NOT_PLAYED = 1


def load_engine_configs(specs: list[str], engines_file: str | None,
                        each: str | None = None, *, command: str) -> list[EngineConfig]:
    """The engines named by ``--engine`` SPECs (:func:`arbiter.config.engine_configs`,
    ``--each`` applied) for ``arbiter COMMAND``, which runs them here, or
    ``fail()`` on a bad one (a ``remote:NAME`` one too)."""
    try:
        configs = engine_configs(specs, engines_file, each=each)
    except EngineSpecError as exc:
        fail(str(exc))
    for config in configs:
        fail_if_remote(config, command)
    return configs


def fail_if_remote(config: EngineConfig, command: str) -> None:
    """``fail()`` when ``config`` is ``remote:NAME``: ``arbiter COMMAND`` runs
    its engine here, while a remote engine connects to a run that listens
    (``specs/wire.md`` §Remote participants)."""
    if remote_name_of(config) is not None:
        fail(f"-e {config.cmd}: arbiter {command} runs the engine here: give it as cmd=...; "
             "remote:NAME is an engine that connects to arbiter match/tournament --listen")


def _describe_move(ply: int, record: Ply) -> str:
    parts = [f"{ply:>4}. {record.color:<5} {record.move:<10} {record.time_ms / 1000:7.3f} s"]
    if record.clock_ms is not None:
        parts.append(f"clock {record.clock_ms / 1000:.3f} s")
    if record.score is not None:
        parts.append(str(record.score))
    if record.depth is not None:
        parts.append(f"depth {record.depth}")
    if record.nodes is not None:
        parts.append(f"nodes {record.nodes}")
    return "  ".join(parts)


@app.command()
def play(
    game: str = typer.Argument(..., help="troll, atoll, morris or talisman"),
    engine: list[str] = typer.Option(
        ..., "--engine", "-e",
        help="engine SPEC, twice (first plays White): cmd=... [name=... arg=... dir=... "
             "option.NAME=VALUE tc=... timemargin=...] or a NAME from the engines file"),
    engines_file: str | None = typer.Option(
        None, "--engines", help=f"TOML file of [engines.NAME] tables (default: ./{DEFAULT_ENGINES_FILE} if present)"),
    each: str | None = typer.Option(None, "--each", metavar="SETTINGS", help=EACH_HELP),
    tc: str = typer.Option(DEFAULT_TC, "--tc",
                           help="time control: 40/60+0.5, 60+0.5, st=2, depth=N, nodes=N, inf"),
    timemargin: int = typer.Option(0, "--timemargin", min=0, help="ms an engine may overstep its time"),
    fen: str | None = typer.Option(None, "--fen", help="start from this position string"),
    moves: str | None = typer.Option(None, "--moves", help='opening moves played before the engines take over'),
    maxplies: int | None = typer.Option(None, "--maxplies", min=1,
                                           help="adjudicate after N plies (scores decide, else a draw)"),
    stall: float = typer.Option(DEFAULT_STALL_MS / 1000, "--stall", min=0.001,
                                help="seconds a search without a clock may last before `stop`"),
    log: str | None = typer.Option(None, "--log", help="write each engine's full I/O log into DIR"),
    as_json: bool = typer.Option(False, "--json", help="print the full game record as JSON (nothing else)"),
    pgn: str | None = typer.Option(None, "--pgn", help="append the finished game to this record file"),
) -> None:
    """Play one game between two engines, each move shown as it is played."""
    if len(engine) != 2:
        fail(f"play needs exactly two --engine options (got {len(engine)})")
    try:
        the_game = get_game(game)
        opening = split_moves(moves)
        the_game.position(fen, opening)
        time_control = TimeControl.parse(tc)
        stall_limit_ms = stall_ms("--stall", stall)
        check_number("--timemargin", "timemargin", timemargin)
        check_number("--maxplies", "maxplies", maxplies)
    except (GameError, TimeControlError, ConfigError) as exc:
        fail(str(exc))
    white, black = load_engine_configs(engine, engines_file, each, command="play")
    log_existed = log is not None and os.path.isdir(log)
    log_dir = checked_log_dir(log)
    checked_record_file(pgn)

    def on_move(record: Ply, position: Position) -> None:
        if not as_json:
            typer.echo(_describe_move(position.ply, record))

    if not as_json:
        typer.echo(f"{the_game.name}: {white.label} (White) vs {black.label} (Black), tc {time_control}")
        if fen or opening:
            typer.echo(f"opening: {fen or 'startpos'}{' moves ' + ' '.join(opening) if opening else ''}")

    async def run() -> GameRecord:
        return await play_engines(
            the_game, white, black, log_dir=log_dir, fen=fen, opening_moves=opening, tc=time_control,
            timemargin_ms=timemargin, maxplies=maxplies, stall_ms=stall_limit_ms,
            on_move=on_move)

    try:
        record = run_interruptible(run)
    except EngineStartError as exc:
        remove_if_empty(log_dir, log_existed)
        fail(f"handshake-failure: {exc}; the game was not played", EXIT_NOT_PLAYED)
    except Interrupted as exc:
        exit_interrupted(exc, "engines stopped")
    _report(record, pgn, as_json)


def _report(record: GameRecord, pgn: str | None, as_json: bool) -> None:
    """The finished game: appended to ``--pgn``, then the result (or the JSON record)."""
    if pgn:
        try:
            records.append_game(pgn, record, {"Event": "arbiter play", "Site": "?", "Round": "1.1"})
        except OSError as exc:
            fail(f"--pgn {pgn}: cannot append the game ({exc.strerror}); it ended "
                 f"{record.result} ({record.termination})", 1)
    if as_json:
        typer.echo(json.dumps(record.to_dict(), indent=2))
        return
    typer.echo(f"result: {record.result} ({record.termination}): {record.termination_detail}")
