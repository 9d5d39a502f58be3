"""Reading what runs stored: ``standings``, ``tournaments`` (and
``tournaments delete``) (specs/tournament.md §Standings, §Listing and deleting)."""

from __future__ import annotations

import enum
import json
import os
import sqlite3
import sys
from typing import Any

import typer

from arbiter.progress import make_console, print_standings
from arbiter.store import DEFAULT_DB, RunStatus, Store, StoreError, TournamentBusyError
from arbiter.tournament import delete_tournament, rounds_view, tournament_standings

from .app import EXIT_ABORTED, EXIT_BUSY, app, fail
from .records import ARENA_FORMAT


def open_store(db: str, readonly: bool = False) -> Store:
    try:
        return Store(db, readonly=readonly)
    except StoreError as exc:
        fail(str(exc))


def _status_shown(status: str, running_now: bool) -> str:
    """The stored status, said plainly when it is ``running`` but no run
    holds the tournament (a run killed with SIGKILL, or a crashed machine)."""
    if status == RunStatus.RUNNING and not running_now:
        return "running, but no run is alive (killed?): run it again to resume"
    return status


def _standings_json(tournament: dict[str, Any], standings, rounds: tuple[dict[str, Any], str] | None
                    ) -> dict[str, Any]:
    data = {"tournament": {key: tournament.get(key) for key in (
        "id", "name", "game", "format", "status", "note", "total_games", "created", "updated",
        "running_now")}}
    data["tournament"]["done"] = standings.games
    data.update(standings.to_json())
    if rounds is not None:
        data.update(rounds[0])
    return data


def show_standings(store: Store, tournament: dict[str, Any], standings, as_json: bool) -> None:
    """The standings on stdout: JSON, or the tables (and a Swiss or knockout
    tournament's own table or bracket)."""
    rounds = rounds_view(store, tournament)
    if as_json:
        typer.echo(json.dumps(_standings_json(tournament, standings, rounds), indent=2))
        return
    print_standings(make_console(), standings, tournament)
    if rounds is not None:
        print(rounds[1])


@app.command()
def standings(
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database"),
    tournament_id: int | None = typer.Option(None, "--tournament", "-t", help="tournament ID (default: the latest)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable"),
    list_all: bool = typer.Option(False, "--list", help="list the tournaments of the database"),
    arena: str | None = typer.Option(None, "--arena", help="the arena NAME of arbiter serve"),
) -> None:
    """Standings of a tournament, also while it is running."""
    with open_store(db, readonly=True) as store:
        if list_all:
            _list(store, as_json)
            return
        if arena is not None:  # specs/wire.md §The server and the client
            tournament_id = next((r["id"] for r in reversed(store.tournaments())
                                  if r["format"] == ARENA_FORMAT and r["name"] == arena), None)
            if tournament_id is None:
                fail(f"{db}: no arena named {arena!r}")
        tournament = (store.tournament(tournament_id) if tournament_id is not None
                      else store.latest_tournament())
        if tournament is None:
            fail(f"{db}: no tournament {tournament_id}" if tournament_id is not None
                 else f"{db}: no tournaments yet")
        table = tournament_standings(store, tournament)
        tournament = _with_total({**tournament, "running_now": store.run_active(tournament["id"])},
                                 table.games)
        shown = {**tournament, "status": _status_shown(tournament["status"], tournament["running_now"])}
        for warning in table.warnings:  # specs/tournament.md §Anomalies
            print(f"arbiter: warning: {warning}", file=sys.stderr)
        show_standings(store, tournament if as_json else shown, table, as_json)


def _with_total(tournament: dict[str, Any], done: int) -> dict[str, Any]:
    """``tournament`` with its total of games as shown: an arena has no
    schedule, so its total is the ``done`` games it played (not 0)."""
    if tournament.get("format") == ARENA_FORMAT:
        return {**tournament, "total_games": done}
    return tournament


def _list(store: Store, as_json: bool) -> None:
    """The tournaments of the database: a header row and one row each, in
    fixed columns (or JSON; specs/tournament.md §Listing and deleting)."""
    rows = [_with_total({**r, "done": done, "running_now": store.run_active(r["id"])}, done)
            for r in store.tournaments() for done in (store.count_games(r["id"]),)]
    if as_json:
        typer.echo(json.dumps([{k: r[k] for k in ("id", "name", "game", "format", "status",
                                                  "total_games", "created", "done", "running_now")}
                               for r in rows], indent=2))
        return
    if not rows:
        print(f"arbiter: no tournaments in {store.path}", file=sys.stderr)
        return
    for line in tournament_table(rows):
        typer.echo(line)


#: the widest a name is shown in ``arbiter tournaments`` (a longer one is cut, with ``…``)
LIST_NAME_WIDTH = 30


def tournament_table(rows: list[dict[str, Any]]) -> list[str]:
    """``arbiter tournaments``: the header and a line per tournament, each
    column as wide as its widest cell (the name at most
    :data:`LIST_NAME_WIDTH` terminal cells), the status last.  What a user
    named is shown printable (control characters as ``?``), measured in
    terminal cells."""
    from rich.cells import cell_len, set_cell_size

    def shown(text: Any) -> str:
        return "".join(ch if ch.isprintable() else "?" for ch in str(text or ""))

    def name(text: Any) -> str:
        text = shown(text)
        if cell_len(text) > LIST_NAME_WIDTH:
            text = set_cell_size(text, LIST_NAME_WIDTH - 1) + "…"
        return text

    header = ("ID", "NAME", "GAME", "FORMAT", "CREATED", "GAMES", "STATUS")
    table = [header] + [(str(r["id"]), name(r["name"]), shown(r["game"]), shown(r["format"]),
                         shown(r.get("created"))[:16].replace("T", " "),
                         f"{r['done']}/{r['total_games']} games",
                         _status_shown(r["status"], r["running_now"])) for r in rows]
    widths = [max(cell_len(row[column]) for row in table) for column in range(len(header) - 1)]
    lines = []
    for row in table:
        cells = [" " * (widths[0] - cell_len(row[0])) + row[0]]  # the ID right-aligned
        cells += [set_cell_size(cell, width) for cell, width in zip(row[1:-1], widths[1:], strict=True)]
        lines.append("  " + "  ".join(cells + [row[-1]]))
    return lines


class TournamentsAction(enum.StrEnum):
    """What ``arbiter tournaments ACTION`` does besides listing."""

    DELETE = "delete"


@app.command()
def tournaments(
    action: TournamentsAction | None = typer.Argument(
        None, metavar="ACTION", help="delete: remove tournament ID with its games and events"),
    tournament_id: int | None = typer.Argument(None, metavar="ID", help="the tournament to delete"),
    db: str = typer.Option(DEFAULT_DB, "--db", help="results database"),
    as_json: bool = typer.Option(False, "--json", help="list as JSON"),
    yes: bool = typer.Option(False, "--yes", "-y", help="delete without asking first"),
) -> None:
    """List the tournaments of the database; `tournaments delete ID` removes one."""
    if action is None:
        if tournament_id is not None:
            fail("give `tournaments` to list them, or `tournaments delete ID`")
        with open_store(db, readonly=True) as store:
            _list(store, as_json)
        return
    if tournament_id is None:
        fail("tournaments delete: give the ID of the tournament to delete (`arbiter tournaments` lists them)")
    _delete(db, tournament_id, yes)


def _delete(db: str, tournament_id: int, yes: bool) -> None:
    """``arbiter tournaments delete ID``: asked first unless ``yes``."""
    if not os.path.exists(db):
        fail(f"no database at {db}")
    with open_store(db) as store:
        row = store.tournament(tournament_id)
        if row is None:
            fail(f"{db}: no tournament {tournament_id}")
        games = store.count_games(tournament_id)
        what = f"tournament {tournament_id} ({row['name']}, {games} games) from {db}"
        if not yes and not typer.confirm(f"delete {what}?", default=False, err=True):
            print("arbiter: nothing deleted", file=sys.stderr)
            raise typer.Exit(EXIT_ABORTED)
        try:
            delete_tournament(store, tournament_id)
        except TournamentBusyError as exc:
            fail(f"{exc}; nothing deleted", EXIT_BUSY)
        except (sqlite3.Error, StoreError) as exc:
            fail(f"{db}: cannot delete tournament {tournament_id} ({exc}); nothing deleted", EXIT_ABORTED)
    typer.echo(f"deleted {what}")
