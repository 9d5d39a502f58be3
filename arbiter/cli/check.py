"""``arbiter check``: run the conformance suite against one engine.

Prints a table (PASS / WARN / FAIL / SKIP per check) and, for every problem,
what was expected, what happened and the transcript lines that show it;
``--json`` prints the whole report instead.  Exit status 0 only when every
mandatory check passes (``specs/check.md``)."""

from __future__ import annotations

import enum
import json
import sys
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from arbiter.check import CheckReport, CheckResult, CheckSettings, Status, run_checks
from arbiter.check.positions import PositionDataError, positions
from arbiter.engine import EngineConfig, EngineStartError
from arbiter.enginespec import DEFAULT_ENGINES_FILE
from arbiter.games import Game, GameError, get_game
from protocol.messages import OptionDecl

from .app import Interrupted, app, checked_log_dir, exit_interrupted, fail, interrupted, run_interruptible
from .play import load_engine_configs

#: exit status when a mandatory check failed
EXIT_FAILED = 1

_STYLE = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "bold red", Status.SKIP: "dim"}


def _table(report: CheckReport) -> Table:
    table = Table(title=None, show_lines=False, expand=False)
    table.add_column("check", no_wrap=True)
    table.add_column("result", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("what happened")
    for result in report.results:
        table.add_row(result.name, Text(result.status.value, style=_STYLE[result.status]),
                      "required" if result.mandatory else "advice",
                      f"{result.seconds:.2f}s" if result.status is not Status.SKIP else "",
                      Text(_short(result.happened, 160)))
    return table


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _details(console: Console, result: CheckResult) -> None:
    header = Text()
    header.append(result.status.value, style=_STYLE[result.status])
    header.append(f" {result.name}: {result.title}", style="bold")
    console.print(header)
    console.print(Text("  expected: ", style="bold") + Text(result.expected))
    console.print(Text("  happened: ", style="bold") + Text(result.happened))
    if len(result.problems) > 1:
        for problem in result.problems:
            console.print(Text(f"    - {problem}"))
    if result.transcript:
        console.print(Text("  transcript:", style="bold"))
        for line in result.transcript:
            console.print(Text(f"    {line}", style="dim" if line.startswith("...") else ""),
                          overflow="fold")
    console.print()


def print_report(report: CheckReport, console: Console) -> None:
    """The human report: identity, table, details of each problem, verdict."""
    who = report.id_name or report.engine
    if report.id_author:
        who += f" by {report.id_author}"
    suite = "quick suite" if report.settings.quick else "full suite"
    console.print(Text(f"arbiter check {report.game}: {who} ({report.command}), {suite}", style="bold"))
    console.print(_table(report))
    console.print()
    for result in report.results:
        if result.status in (Status.FAIL, Status.WARN):
            _details(console, result)
    counts = report.counts()
    summary = (f"{len(report.results)} checks: {counts['PASS']} PASS, {counts['WARN']} WARN, "
               f"{counts['FAIL']} FAIL, {counts['SKIP']} SKIP in {report.seconds:.1f} s "
               f"({report.processes} engine processes)")
    console.print(summary)
    if report.passed:
        console.print(Text("the engine passes every mandatory check", style="bold green"))
    else:
        failed = [r.name for r in report.results if r.status is Status.FAIL]
        console.print(Text(f"the engine FAILS {len(failed)} mandatory check(s): {', '.join(failed)}",
                           style="bold red"))


@app.command()
def check(
    game: str = typer.Argument(..., help="troll, atoll, morris or talisman"),
    engine: str = typer.Option(
        ..., "--engine", "-e",
        help="engine SPEC: cmd=... [arg=... dir=... option.NAME=VALUE timemargin=...] or a NAME "
             "from the engines file"),
    engines_file: str | None = typer.Option(
        None, "--engines", help=f"TOML file of [engines.NAME] tables (default: ./{DEFAULT_ENGINES_FILE} if present)"),
    quick: bool = typer.Option(False, "--quick", help="fewer positions and shorter games"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON (nothing else)"),
    margin: int = typer.Option(100, "--margin", min=0,
                               help="ms a bestmove may arrive after a timed budget (movetime, clock)"),
    movetime: int = typer.Option(100, "--movetime", min=1, help="ms per search in the legality checks"),
    handshake_timeout: float = typer.Option(10.0, "--handshake-timeout", min=0.01, help="seconds for ugi -> ugiok"),
    ready_timeout: float = typer.Option(5.0, "--ready-timeout", min=0.01,
                                        help="seconds for isready -> readyok and query -> response"),
    stop_timeout: float = typer.Option(5.0, "--stop-timeout", min=0.01, help="seconds for stop -> bestmove"),
    quit_grace: float = typer.Option(1.0, "--quit-grace", min=0.01, help="seconds for quit -> exit"),
    stall: float = typer.Option(10.0, "--stall", min=0.01,
                                help="seconds a depth or nodes search may take"),
    log: str | None = typer.Option(None, "--log", help="write each engine process's full I/O log into DIR"),
) -> None:
    """Check that an engine speaks the protocol and plays only legal moves."""
    try:
        the_game = get_game(game)
        positions(the_game.name)
    except GameError as exc:
        fail(str(exc))
    except PositionDataError as exc:  # the referee changed under the stored positions
        fail(f"{exc}; regenerate them with `python3 -m arbiter.check.positions --regenerate`", 3)
    config = load_engine_configs([engine], engines_file, command="check")[0]
    settings = CheckSettings(quick=quick, handshake_timeout=handshake_timeout,
                             ready_timeout=ready_timeout, stop_timeout=stop_timeout,
                             quit_grace=quit_grace, stall_timeout=stall, margin_ms=margin,
                             movetime_ms=movetime)
    log_dir = checked_log_dir(log)
    console = Console(width=None if sys.stdout.isatty() else 120, highlight=False)
    report = _run(the_game, config, settings, log_dir, console, show_progress=not as_json)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
    else:
        print_report(report, console)
    if not report.passed:
        raise typer.Exit(EXIT_FAILED)


def _run(game: Game, config: EngineConfig, settings: CheckSettings, log_dir: str | None,
         console: Console, *, show_progress: bool) -> CheckReport:
    """The run, with the check under way shown on a terminal; an interrupt
    ends it (and the engine) with one line on stderr and exit status 130."""
    status = None
    if show_progress and console.is_terminal:
        status = console.status(f"checking {config.label} on {game.name} ...")
        status.start()

    def on_result(result: CheckResult) -> None:
        if status is not None:
            status.update(f"checking {config.label} on {game.name}: {result.name} "
                          f"{result.status.value}")

    try:
        return run_interruptible(lambda: run_checks(game, config, settings, log_dir=log_dir,
                                                    on_result=on_result))
    except BaseException as exc:
        if not interrupted(exc):
            raise
        print("arbiter: interrupted; engine stopped", file=sys.stderr)
        raise typer.Exit(130) from None
    finally:
        if status is not None:
            status.stop()


# --------------------------------------------------------------------------
# arbiter engine info
# --------------------------------------------------------------------------

class EngineAction(enum.StrEnum):
    """What ``arbiter engine ACTION`` does."""

    INFO = "info"


@app.command("engine")
def engine_info(
    action: EngineAction = typer.Argument(..., metavar="info",
                                          help="info: the engine's id lines and declared options"),
    engine: str = typer.Option(
        ..., "--engine", "-e",
        help="engine SPEC: cmd=... [arg=... dir=... option.NAME=VALUE] or a NAME from the engines file"),
    engines_file: str | None = typer.Option(
        None, "--engines", help=f"TOML file of [engines.NAME] tables (default: ./{DEFAULT_ENGINES_FILE} if present)"),
    as_json: bool = typer.Option(False, "--json", help="print it as JSON (nothing else)"),
) -> None:
    """What an engine says about itself: `engine info -e SPEC` shows its id lines and
    declared options (type, default, range, choices).

    The engine is started for its handshake and ended at once."""
    config = load_engine_configs([engine], engines_file, command="engine info")[0]

    async def handshake() -> dict[str, Any]:
        from arbiter.engine import open_engine

        async with open_engine(config) as running:
            return {"engine": config.label, "command": " ".join(config.argv()),
                    "id_name": running.id_name, "id_author": running.author,
                    "options": [_option_info(decl) for decl in running.options.values()]}

    try:
        info = run_interruptible(handshake)
    except EngineStartError as exc:
        fail(f"handshake-failure: {exc}", EXIT_FAILED)
    except Interrupted as exc:
        exit_interrupted(exc, "engine stopped")
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    typer.echo(f"engine: {info['engine']} ({info['command']})")
    typer.echo(f"id name: {info['id_name'] if info['id_name'] is not None else '(not given)'}")
    typer.echo(f"id author: {info['id_author'] if info['id_author'] is not None else '(not given)'}")
    typer.echo(f"options ({len(info['options'])}):")
    width = max((len(option["name"]) for option in info["options"]), default=0)
    for option in info["options"]:
        typer.echo(f"  {_option_line(option, width)}")


def _option_info(decl: OptionDecl) -> dict[str, Any]:
    return {"name": decl.name, "type": decl.type, "default": decl.default, "min": decl.min,
            "max": decl.max, "vars": list(decl.vars)}


def _option_line(option: dict[str, Any], width: int) -> str:
    """``Seed  spin    default 0  min 0 max 1000``: one declared option, its
    name padded to ``width``."""
    parts = [option["name"].ljust(width), option["type"].ljust(len("button"))]
    if option["default"] is not None:
        parts.append("default " + (option["default"] or "''"))
    if option["min"] is not None or option["max"] is not None:
        parts.append(f"min {option['min']} max {option['max']}")
    if option["vars"]:
        parts.append("choices " + " | ".join(option["vars"]))
    return "  ".join(parts)
