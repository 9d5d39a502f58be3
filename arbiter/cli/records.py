"""Record commands: ``export``, ``replay``, ``show``, ``import`` (``specs/records.md``).

The text format itself is :mod:`arbiter.records`, files on disk
:mod:`arbiter.recordfile`, the import's two passes :mod:`arbiter.record_import`;
this module adds the commands: which games a tournament holds, in which order,
streamed out of the database (``export``), and what each command says.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import typer

from arbiter import record_jsonl, records
from arbiter.games import Position
from arbiter.record import GameRecord
from arbiter.record_import import ImportedGame, Importer
from arbiter.recordfile import RecordFileError, check_file, file_games
from arbiter.records import ParsedGame, RecordSyntaxError, export_tags
from arbiter.replay import ReplayReport, position_at, syntax_report, to_record
from arbiter.replay import replay as replay_game
from arbiter.store import DEFAULT_DB, Store, StoreError, explain

from .app import app, fail

#: exit status of ``replay`` / ``import`` when a game in the file is bad
EXIT_BAD_GAME = 1

#: exit status of ``import`` when the database failed (nothing is imported then)
EXIT_NOT_STORED = 1




# --- reading files -------------------------------------------------------------------


def games_of(path: str, hasher: Any = None) -> Iterator[ParsedGame | RecordSyntaxError]:
    """Every game of a PGN-like or JSONL file, one at a time (a broken one
    as its error), or ``fail()`` saying why the file cannot be read."""
    try:
        yield from file_games(path, hasher=hasher)
    except RecordFileError as exc:
        fail(str(exc))


def check_games(path: str) -> Iterator[tuple[ReplayReport, ParsedGame | None]]:
    """The referee's verdict on every game of a file, one at a time."""
    for item in games_of(path):
        if isinstance(item, RecordSyntaxError):
            yield syntax_report(item), None
        else:
            yield replay_game(item), item


# --- export ----------------------------------------------------------------------------


def open_store(db: str, *, readonly: bool) -> Store:
    try:
        return Store(db, readonly=readonly)
    except StoreError as exc:
        fail(str(exc))


def stored_tournaments(store: Store, tournament_id: int | None) -> list[dict[str, Any]]:
    """The tournament asked for (``fail()`` if there is none), or every one, by id."""
    if tournament_id is None:
        return store.tournaments()
    one = store.tournament(tournament_id)
    if one is None:
        fail(f"{store.path}: no tournament {tournament_id}")
    return [one]


def stored_games(store: Store, tournaments: list[dict[str, Any]]
                 ) -> Iterator[tuple[GameRecord, dict[str, str], dict[str, Any]]]:
    """Every finished game of the tournaments, in schedule order, with its
    tags and its tournament, one at a time (:meth:`Store.iter_games`)."""
    for tournament in tournaments:
        for row in store.iter_games(tournament["id"]):
            yield GameRecord.from_dict(row["record"]), export_tags(tournament, row), tournament


def write_export(store: Store, tournaments: list[dict[str, Any]], format: str,
                 out: BinaryIO) -> int:
    """Write the games to ``out`` as they are read, one game in memory at a
    time; returns how many were written."""
    count = 0
    for record, tags, tournament in stored_games(store, tournaments):
        if format == "pgn":
            text = records.write_game(record, tags)
        else:
            text = record_jsonl.jsonl_line(record, tags, tournament)
        out.write(text.encode("utf-8"))  # the same bytes whatever the locale
        count += 1
    return count


#: the ``format`` of an arena's tournament (``arbiter.server.arena.ARENA_FORMAT``,
#: repeated so that ``export`` does not import the server)
ARENA_FORMAT = "arena"


def arena_id(store: Store, name: str) -> int:
    """The latest arena of ``store`` named ``name`` (``arbiter serve --arena
    "... name=NAME"``; an unnamed one is "GAME arena"), or exit 2 naming the
    arenas there are (``specs/records.md``)."""
    arenas = [row for row in store.tournaments() if row.get("format") == ARENA_FORMAT]
    found = [row["id"] for row in arenas if row["name"] == name]
    if not found:
        known = ", ".join(sorted({repr(row["name"]) for row in arenas})) or "none"
        fail(f"{store.path}: no arena {name!r} (arenas: {known})")
    return int(found[-1])


@app.command()
def export(
    db: str = typer.Option(DEFAULT_DB, "--db", help="the results database"),
    tournament: int | None = typer.Option(None, "--tournament", help="only this tournament"),
    format: str = typer.Option("pgn", "--format", help="pgn or jsonl"),
    out: str | None = typer.Option(None, "--out", help="write to FILE instead of stdout"),
    arena: str | None = typer.Option(None, "--arena", help="only this arena's games (its NAME)"),
) -> None:
    """Write every finished game as a record file, in schedule order."""
    if format not in ("pgn", "jsonl"):
        fail(f"--format must be pgn or jsonl, not {format!r}")
    if arena is not None and tournament is not None:
        fail("give either --tournament ID or --arena NAME, not both")
    with open_store(db, readonly=True) as store:
        if arena is not None:
            tournament = arena_id(store, arena)
        tournaments = stored_tournaments(store, tournament)
        if out is None:
            sys.stdout.flush()
            _export_to(store, tournaments, format, sys.stdout.buffer, db)
            sys.stdout.buffer.flush()
            return
        try:
            with open(out, "wb") as handle:
                count = _export_to(store, tournaments, format, handle, db, partial=out)
        except OSError as exc:
            fail(f"{out}: cannot write: {exc.strerror}")
    typer.echo(f"{count} games written to {out}", err=True)


def _export_to(store: Store, tournaments: list[dict[str, Any]], format: str, out: BinaryIO,
               db: str, partial: str | None = None) -> int:
    """:func:`write_export`, or ``fail()`` naming a damaged row (a file
    written in part is removed: an export is whole or absent)."""
    try:
        return write_export(store, tournaments, format, out)
    except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        if partial is not None:
            out.close()
            Path(partial).unlink(missing_ok=True)
        fail(f"{db}: a stored game cannot be written as a record: {exc!r}")


# --- replay ----------------------------------------------------------------------------


@app.command()
def replay(
    file: str = typer.Argument(..., help="a record file (PGN-like, or JSONL from export)"),
    as_json: bool = typer.Option(False, "--json", help="machine-readable output"),
) -> None:
    """Replay every game of a record file through the referee."""
    reports = [report for report, _ in check_games(file)]
    bad = sum(1 for report in reports if not report.ok)
    if as_json:
        typer.echo(json.dumps({"file": file, "games": len(reports), "bad": bad,
                               "reports": [r.to_dict() for r in reports]}))
    else:
        for report in reports:
            typer.echo(report.summary())
        if reports:
            typer.echo(f"{len(reports)} games: {len(reports) - bad} OK, {bad} bad")
    if not reports:
        fail(f"{file}: no games in the file", EXIT_BAD_GAME)
    if bad:
        raise typer.Exit(EXIT_BAD_GAME)


# --- show ------------------------------------------------------------------------------


def describe(parsed: ParsedGame, position: Position, ply: int) -> list[str]:
    tags = parsed.tags
    total = len(parsed.moves)
    head = (f"game {parsed.number}: {tags.get('White', '?')} (White) - "
            f"{tags.get('Black', '?')} (Black), {position.game.name}, {tags.get('Result', parsed.result)}")
    lines = [head, f"after ply {ply} of {total}" + (
        f": {parsed.moves[ply - 1].text}" if ply else " (where the game starts)")]
    lines += ["", position.diagram().rstrip("\n"), ""]
    lines.append(f"fen: {position.fen()}")
    outcome = position.outcome()
    if outcome is not None:
        lines.append(f"game over: {outcome.result} by {outcome.termination.value}")
    else:
        lines.append(f"to move: {position.to_move.value}")
    scores = position.scores()
    if scores is not None:
        lines.append(f"scores: white {scores[0]}, black {scores[1]}")
    return lines


@app.command()
def show(
    file: str = typer.Argument(..., help="a record file"),
    game: int = typer.Option(..., "--game", help="which game of the file (1-based)"),
    ply: int | None = typer.Option(None, "--ply", help="after this many plies (default: the end)"),
    svg: str | None = typer.Option(None, "--svg", help="also write the position as an SVG picture to this file"),
) -> None:
    """Show a game's position as a text diagram (and, with --svg, as a picture)."""
    count, item = 0, None
    for count, candidate in enumerate(games_of(file), start=1):  # noqa: B007 (count is used after)
        if count == game:
            item = candidate
            break
    if item is None:
        fail(f"{file}: no game {game}: the file has {count} game(s)")
    if isinstance(item, RecordSyntaxError):
        fail(str(item))
    if ply is not None and ply < 0:
        fail(f"--ply must be >= 0, not {ply}")
    try:
        position = position_at(item, ply)
    except ValueError as exc:
        fail(str(exc))
    shown = len(item.moves) if ply is None else ply
    if svg is not None:
        write_svg(svg, item, position, shown)
    for line in describe(item, position, shown):
        typer.echo(line)


def write_svg(path: str, parsed: ParsedGame, position: Position, ply: int) -> None:
    """``show --svg``: the picture of ``position`` (after ``ply`` plies, its
    last move marked) written to ``path``, or ``fail()`` saying why not."""
    from arbiter.svg import render_svg

    tags = parsed.tags
    title = f"{tags.get('White', '?')} - {tags.get('Black', '?')}, ply {ply} of {len(parsed.moves)}"
    last = parsed.moves[ply - 1].text if ply else None
    try:
        Path(path).write_text(render_svg(position, last_move=last, title=title), encoding="utf-8")
    except OSError as exc:
        fail(f"{path}: cannot write the SVG: {exc.strerror or exc}")


# --- import ----------------------------------------------------------------------------


def import_games(store: Store, path: str, text: str,
                 games: list[tuple[GameRecord, dict[str, str]]]) -> list[tuple[int, str, int]]:
    """Store validated games (of the file ``path`` holding ``text``) as new
    tournaments, leaving out those already in ``store``; returns (tournament
    id, name, games) for each.  All or nothing: one transaction."""
    importer = Importer(path)
    try:
        importer.learn(store)
        numbered = [(number, record, tags, None)
                    for number, (record, tags) in enumerate(games, start=1)]
        for game in numbered:
            importer.plan(*game)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return importer.write(store, numbered, digest)
    finally:
        importer.close()


def _good_games(path: str, hasher: Any, errors: list[int] | None) -> Iterator[ImportedGame]:
    """The file's games that replay OK and are finished, as records; each
    bad one is said on stderr and counted in ``errors[0]`` (``errors``
    None: a bad game means the file changed since it was checked)."""
    for item in games_of(path, hasher):
        if isinstance(item, RecordSyntaxError):
            problem = str(item)
        else:
            try:
                yield (item.number, to_record(item), records.context_tags(item),
                       item.source_tournament)
                continue
            except ValueError as exc:
                problem = str(exc)
        if errors is None:
            raise _FileChanged(f"{path} changed while it was imported ({problem})")
        print(f"arbiter: error: {problem}", file=sys.stderr)
        errors[0] += 1


class _FileChanged(Exception):
    """The file read by the second pass is not the one the first checked."""


def _plan(importer: Importer, file: str, db: str) -> str:
    """The first pass: every game checked (nothing imported if one is bad),
    the database's games learnt; returns the digest of the file."""
    try:
        check_file(file)
    except RecordFileError as exc:
        fail(str(exc))
    if Path(db).exists():
        with open_store(db, readonly=True) as store:
            importer.learn(store)
    hasher = hashlib.sha256()
    errors, total = [0], 0
    for game in _good_games(file, hasher, errors):
        total += 1
        importer.plan(*game)
    total += errors[0]
    if not total:
        fail(f"{file}: no games in the file", EXIT_BAD_GAME)
    if errors[0]:
        fail(f"{file}: nothing imported: {errors[0]} of {total} games are bad", EXIT_BAD_GAME)
    if not importer.new:
        where = f" (tournament {importer.duplicate_of})" if importer.duplicate_of else ""
        fail(f"{file}: already imported: its {total} game(s) are all in {db}{where}",
             EXIT_BAD_GAME)
    return hasher.hexdigest()


def _second_pass(file: str, digest: str) -> Iterator[ImportedGame]:
    hasher = hashlib.sha256()
    yield from _good_games(file, hasher, None)
    if hasher.hexdigest() != digest:
        raise _FileChanged(f"{file} changed while it was imported")


@app.command("import")
def import_command(
    file: str = typer.Argument(..., help="a record file (PGN-like, or JSONL from export)"),
    db: str = typer.Option(DEFAULT_DB, "--db", help="the results database"),
) -> None:
    """Import a record file's games into the database (all must replay OK)."""
    importer = Importer(file)
    try:
        digest = _plan(importer, file, db)
        with open_store(db, readonly=False) as store:
            try:
                created = importer.write(store, _second_pass(file, digest), digest)
            except _FileChanged as exc:
                fail(f"{exc}; nothing imported", EXIT_NOT_STORED)
            except StoreError as exc:
                fail(f"{exc}; nothing imported")
            except sqlite3.Error as exc:  # a full disk, a lock held too long ...: all rolled back
                fail(f"{db}: nothing imported: {explain(exc, store.busy_timeout)} ({exc})",
                     EXIT_NOT_STORED)
    finally:
        importer.close()
    for tournament_id, name, count in created:
        typer.echo(f"imported {count} games into {db} as tournament {tournament_id} ({name})")
    skipped = importer.duplicates + importer.added_meanwhile
    if skipped:
        typer.echo(f"{skipped} game(s) of {file} already in {db}: not imported again")
